/* classify.c -- `airlock classify`: one command, or a batch from stdin.
 *
 * The policy comes from --policy FILE (no database needed) or from the
 * database (the version `airlock seed` ingested last). */
#include "cli/classify.h"

#include "classifier/classifier.h"
#include "cli/cli.h"
#include "cli/seedgate.h"
#include "lib/buf.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "lib/yamltree.h"
#include "store/store.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLICY_FILE_MAX ((size_t)4 << 20)
#define BATCH_LINE_MAX  ((size_t)8 << 20)

struct opts {
	const char *target;
	const char *declared;
	const char *policy_file;
	const char *gate_file;
	const char *db;
	bool json, batch;
	char *command; /* the words after --, joined with spaces */
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: airlock classify --target-type T [--declared-risk R] [--policy FILE]\n"
	        "                        [--gate FILE] [--db CONNINFO] [--json] -- COMMAND\n"
	        "       airlock classify --batch [--policy FILE] [--gate FILE] [--db CONNINFO]\n"
	        "                        [--json] < LINES\n"
	        "\n"
	        "Prints the risk class of COMMAND on a target of type T (proxmox-host, vm,\n"
	        "lxc) and the reasons: which rule of the policy matched which words.  The\n"
	        "words after -- are joined with spaces into one shell command.  R (read_only,\n"
	        "reversible_low, config_mutation, destructive) can raise the class, never\n"
	        "lower it.  A class below config_mutation is given only when every word of\n"
	        "every program is accounted for by the policy's grammar for that program;\n"
	        "the first word that is not is named in a reason (rule `unproven`).  --json\n"
	        "also says how the jail would run it: needs_root (the root tier), net_view\n"
	        "(the target's network), writes (the paths it may write, \"dir/\" below dir),\n"
	        "writes_unknown and action_rule.\n"
	        "\n"
	        "--batch reads lines `target_type<TAB>command` from stdin; inside the command\n"
	        "\\\\ is a backslash, \\n a newline and \\t a tab.  It prints\n"
	        "`class<TAB>reasons` per line, in order (with --json one JSON object per\n"
	        "line instead); a malformed line prints `error<TAB>why` and the batch goes on.\n"
	        "\n"
	        "Policy: --policy FILE (no database needed), else the policy in the database\n"
	        "(--db CONNINFO, else $AIRLOCK_DB, else the PG* environment).  Network reads\n"
	        "the operator allowed (gate.yaml network.allow): --gate FILE, else the gate\n"
	        "policy in the database when the policy comes from there, else none.\n"
	        "\n"
	        "exit codes: 0 classified (batch: every line answered); 1 error (policy or\n"
	        "            database unreadable, policy invalid); 2 usage or invalid argument.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 1;
		}
		if (strcmp(a, "--json") == 0) {
			o->json = true;
			continue;
		}
		if (strcmp(a, "--batch") == 0) {
			o->batch = true;
			continue;
		}
		if (strcmp(a, "--target-type") == 0)
			slot = &o->target;
		else if (strcmp(a, "--declared-risk") == 0)
			slot = &o->declared;
		else if (strcmp(a, "--policy") == 0)
			slot = &o->policy_file;
		else if (strcmp(a, "--gate") == 0)
			slot = &o->gate_file;
		else if (strcmp(a, "--db") == 0)
			slot = &o->db;
		if (slot == NULL || i + 1 >= argc) {
			fprintf(stderr, "airlock classify: %s '%s'\n",
			        slot ? "missing value for" : "unknown option", a);
			return -1;
		}
		*slot = argv[++i];
	}
	if (o->batch) {
		if (i < argc || o->target || o->declared) {
			fprintf(stderr,
			        "airlock classify: --batch takes no command, --target-type or "
			        "--declared-risk\n");
			return -1;
		}
		return 0;
	}
	if (o->target == NULL || i >= argc) {
		fprintf(stderr, "airlock classify: need --target-type T and -- COMMAND\n");
		return -1;
	}
	{
		struct buf b = BUF_INIT;

		for (int k = i; k < argc; k++) {
			if (k > i)
				buf_putc(&b, ' ');
			buf_puts(&b, argv[k]);
		}
		o->command = buf_steal(&b);
	}
	return 0;
}

/* The policy from --policy FILE or the database; NULL after printing why. */
static struct policy *load_policy(const struct opts *o, char *source, size_t srclen,
                                  long long *version)
{
	char *yaml = NULL;
	size_t len = 0;
	struct policy *p = NULL;
	char err[1024];

	*version = -1;
	if (o->policy_file != NULL) {
		yaml = readfile(o->policy_file, POLICY_FILE_MAX, &len, err, sizeof(err));
		if (yaml == NULL)
			fprintf(stderr, "airlock classify: %s\n", err);
		snprintf(source, srclen, "%s", o->policy_file);
	} else {
		struct store *s = cli_connect(o->db);

		if (s == NULL)
			return NULL;
		if (store_policy_current(s, &yaml, version) != 0) {
			fprintf(stderr, "airlock classify: no policy in the database: %s\n",
			        store_errmsg(s));
			yaml = NULL;
		}
		store_close(s);
		if (yaml != NULL)
			len = strlen(yaml);
		snprintf(source, srclen, "database policy version %lld", *version);
	}
	if (yaml == NULL)
		return NULL;
	p = policy_parse(yaml, len, o->policy_file ? o->policy_file : "database policy", err,
	                 sizeof(err));
	if (p == NULL)
		fprintf(stderr, "airlock classify: policy refused: %s\n", err);
	free(yaml);
	return p;
}

/* network.allow from --gate FILE (checked as `airlock seed` checks it), else
 * from the gate policy in the database when the policy came from there.
 * -1 after printing why. */
static int load_gate(const struct opts *o, char ***globs, size_t *n)
{
	*globs = NULL;
	*n = 0;
	if (o->gate_file != NULL) {
		char err[512];
		size_t len;
		char *text = readfile(o->gate_file, POLICY_FILE_MAX, &len, err, sizeof(err));
		struct yt_node *doc;
		cJSON *gj, *allow, *it;

		if (text == NULL) {
			fprintf(stderr, "airlock classify: %s\n", err);
			return -1;
		}
		doc = yt_parse(text, len, o->gate_file, err, sizeof(err));
		free(text);
		if (doc == NULL) {
			fprintf(stderr, "airlock classify: %s\n", err);
			return -1;
		}
		gj = seedgate_check(o->gate_file, doc); /* prints what is wrong */
		yt_free(doc);
		if (gj == NULL)
			return -1;
		allow = cJSON_GetObjectItem(cJSON_GetObjectItem(gj, "network"), "allow");
		*globs = xcalloc((size_t)cJSON_GetArraySize(allow) + 1, sizeof(char *));
		cJSON_ArrayForEach(it, allow)(*globs)[(*n)++] = xstrdup(it->valuestring);
		cJSON_Delete(gj);
		return 0;
	}
	if (o->policy_file == NULL) {
		struct store *s = cli_connect(o->db);
		long long gv;

		if (s == NULL)
			return -1;
		if (store_gate_network(s, &gv, globs, n) != 0) {
			fprintf(stderr, "airlock classify: the gate policy in the database: %s\n",
			        store_errmsg(s));
			store_close(s);
			return -1;
		}
		store_close(s);
	}
	return 0;
}

/* How the jail would run it: the verdict's fields for the jail. */
static void add_jail_fields(cJSON *root, const struct verdict *v)
{
	cJSON *w = cJSON_CreateArray();

	cJSON_AddBoolToObject(root, "needs_root", v->needs_root);
	cJSON_AddBoolToObject(root, "net_view", v->net_view);
	for (size_t i = 0; i < v->nwrites; i++) {
		cJSON *x = cJSON_CreateObject();

		verdict_json_add_string(x, "p", v->writes[i]);
		cJSON_AddItemToArray(w, cJSON_DetachItemFromObject(x, "p"));
		cJSON_Delete(x);
	}
	cJSON_AddItemToObject(root, "writes", w);
	cJSON_AddBoolToObject(root, "writes_unknown", v->writes_unknown);
	if (v->action_rule != NULL)
		cJSON_AddStringToObject(root, "action_rule", v->action_rule);
	else
		cJSON_AddNullToObject(root, "action_rule");
}

static int classify_one(const struct classifier *c, const struct opts *o, const char *source,
                        long long version)
{
	enum target_type t;
	enum risk_class declared = RISK_READ_ONLY;
	struct verdict v = VERDICT_INIT;

	if (target_type_parse(o->target, &t) != 0) {
		fprintf(stderr,
		        "airlock classify: unknown target type '%s' (proxmox-host, vm, lxc)\n",
		        o->target);
		return CLI_USAGE;
	}
	if (o->declared != NULL && risk_class_parse(o->declared, &declared) != 0) {
		fprintf(stderr,
		        "airlock classify: unknown risk '%s' (read_only, reversible_low, "
		        "config_mutation, destructive)\n",
		        o->declared);
		return CLI_USAGE;
	}
	classifier_classify(c, t, o->command, strlen(o->command), declared, &v);
	if (o->json) {
		cJSON *root = cJSON_CreateObject();
		char *out;

		cJSON_AddStringToObject(root, "class", risk_class_name(v.cls));
		cJSON_AddStringToObject(root, "target_type", target_type_name(t));
		verdict_json_add_string(root, "command", o->command);
		cJSON_AddItemToObject(root, "reasons", verdict_reasons_json(&v));
		add_jail_fields(root, &v);
		cJSON_AddStringToObject(root, "classifier_version", v.classifier_version);
		if (version >= 0)
			cJSON_AddNumberToObject(root, "policy_version", (double)version);
		else
			cJSON_AddNullToObject(root, "policy_version");
		cJSON_AddStringToObject(root, "policy_source", source);
		out = cJSON_PrintUnformatted(root);
		printf("%s\n", out);
		free(out);
		cJSON_Delete(root);
	} else {
		printf("%s\n", risk_class_name(v.cls));
		for (size_t i = 0; i < v.nreasons; i++) {
			const struct verdict_reason *r = &v.reasons[i];

			if (r->segment > 0)
				printf("  segment %d: %s (rule %s) on %s => %s\n", r->segment,
				       r->words, r->rule_id, target_type_name(r->target),
				       risk_class_name(r->cls));
			else
				printf("  %s (rule %s) on %s => %s\n", r->words, r->rule_id,
				       target_type_name(r->target), risk_class_name(r->cls));
		}
		if (v.nomitted > 0)
			printf("  ... %zu more reasons omitted\n", v.nomitted);
		printf("classifier %s, policy %s\n", v.classifier_version, source);
	}
	verdict_free(&v);
	return CLI_OK;
}

/* Undoes the batch escapes in place; -1 on a lone or unknown escape. */
static int unescape(char *s, size_t *len)
{
	size_t o = 0;

	for (size_t i = 0; i < *len; i++) {
		if (s[i] != '\\') {
			s[o++] = s[i];
			continue;
		}
		if (++i >= *len)
			return -1;
		switch (s[i]) {
		case '\\':
			s[o++] = '\\';
			break;
		case 'n':
			s[o++] = '\n';
			break;
		case 't':
			s[o++] = '\t';
			break;
		default:
			return -1;
		}
	}
	*len = o;
	return 0;
}

static int classify_batch(const struct classifier *c, bool json)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	struct verdict v = VERDICT_INIT;
	long lineno = 0;

	while ((n = getline(&line, &cap, stdin)) >= 0) {
		size_t len = (size_t)n;
		char *tab, *text;
		enum target_type t;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > BATCH_LINE_MAX) {
			printf("error\tline %ld: longer than 8 MiB\n", lineno);
			continue;
		}
		tab = memchr(line, '\t', len);
		if (tab == NULL) {
			printf("error\tline %ld: expected target_type<TAB>command\n", lineno);
			continue;
		}
		*tab = '\0';
		if (target_type_parse(line, &t) != 0) {
			printf("error\tline %ld: unknown target type (proxmox-host, vm, lxc)\n",
			       lineno);
			continue;
		}
		text = tab + 1;
		len -= (size_t)(text - line);
		if (unescape(text, &len) != 0) {
			printf("error\tline %ld: bad escape (only \\\\, \\n and \\t)\n", lineno);
			continue;
		}
		classifier_classify(c, t, text, len, RISK_READ_ONLY, &v);
		if (json) {
			cJSON *root = cJSON_CreateObject();
			char *out, *why = verdict_reasons_text(&v);

			cJSON_AddStringToObject(root, "class", risk_class_name(v.cls));
			verdict_json_add_string(root, "reasons", why);
			add_jail_fields(root, &v);
			out = cJSON_PrintUnformatted(root);
			printf("%s\n", out);
			free(out);
			free(why);
			cJSON_Delete(root);
		} else {
			char *why = verdict_reasons_text(&v);

			printf("%s\t%s\n", risk_class_name(v.cls), why);
			free(why);
		}
	}
	free(line);
	verdict_free(&v);
	if (fflush(stdout) != 0 || ferror(stdin)) {
		fprintf(stderr, "airlock classify: I/O error\n");
		return CLI_ERROR;
	}
	return CLI_OK;
}

int cli_classify(int argc, char **argv)
{
	struct opts o;
	struct policy *p = NULL;
	struct classifier *c = NULL;
	char source[512], err[512];
	long long version = -1;
	char **allow = NULL;
	size_t nallow = 0;
	int rc;

	rc = parse_opts(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	rc = CLI_ERROR;
	p = load_policy(&o, source, sizeof(source), &version);
	if (p == NULL)
		goto out;
	if (load_gate(&o, &allow, &nallow) != 0)
		goto out;
	c = classifier_new_opts(p, &(struct classifier_options){(const char *const *)allow, nallow},
	                        err, sizeof(err));
	if (c == NULL) {
		fprintf(stderr, "airlock classify: %s\n", err);
		goto out;
	}
	rc = o.batch ? classify_batch(c, o.json) : classify_one(c, &o, source, version);
out:
	classifier_free(c);
	policy_free(p);
	for (size_t i = 0; i < nallow; i++)
		free(allow[i]);
	free(allow);
	free(o.command);
	return rc;
}
