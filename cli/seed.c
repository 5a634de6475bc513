/* seed.c -- `airlock seed DIR`: ingest the policy, the tool catalog and the
 * inventory in one transaction.  Every file is parsed and checked before the
 * database is touched, so a malformed file changes nothing; errors name file,
 * line and column. */
#include "cli/cli.h"

#include "cli/seedgate.h"
#include "classifier/classes.h"
#include "classifier/policy.h"
#include "lib/paths.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "lib/yamltree.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEED_MAX_BYTES (4u << 20)

struct seed_file {
	char path[4096];
	char *text;
	size_t len;
	struct yt_node *doc;
};

static int fail_at(const char *path, const struct yt_node *n, const char *fmt, const char *arg)
{
	fprintf(stderr, "airlock seed: %s:%d:%d: ", path, n ? n->line : 1, n ? n->col : 1);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return -1;
}

/* Loads and parses DIR/name; a missing file is an error (every seed is required). */
static int load(const char *dir, const char *name, struct seed_file *f)
{
	char err[1024];

	snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
	f->text = readfile(f->path, SEED_MAX_BYTES, &f->len, err, sizeof(err));
	if (f->text == NULL) {
		fprintf(stderr, "airlock seed: %s\n", err);
		return -1;
	}
	f->doc = yt_parse(f->text, f->len, f->path, err, sizeof(err));
	if (f->doc == NULL) {
		fprintf(stderr, "airlock seed: %s\n", err);
		return -1;
	}
	if (f->doc->kind != YT_MAP)
		return fail_at(f->path, f->doc, "the document must be a mapping, not a %s",
		               yt_kind_name(f->doc->kind));
	return 0;
}

static void unload(struct seed_file *f)
{
	yt_free(f->doc);
	free(f->text);
}

static const struct yt_node *want(const char *path, const struct yt_node *map, const char *key,
                                  enum yt_kind kind, bool required)
{
	const struct yt_node *v = yt_get(map, key);

	if (v == NULL) {
		if (required)
			fail_at(path, map, "missing required key \"%s\"", key);
		return NULL;
	}
	if (v->kind != kind) {
		char msg[128];
		snprintf(msg, sizeof(msg), "\"%%s\" must be a %s, not a %s", yt_kind_name(kind),
		         yt_kind_name(v->kind));
		fail_at(path, v, msg, key);
		return NULL;
	}
	return v;
}

/* Checks a mapping has only the given keys. */
static int only_keys(const char *path, const struct yt_node *map, const char *const *keys)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct yt_node *k = map->items[2 * i];
		bool ok = false;
		for (const char *const *p = keys; *p; p++)
			if (strcmp(k->scalar, *p) == 0)
				ok = true;
		if (!ok)
			return fail_at(path, k, "unknown key \"%s\"", k->scalar);
	}
	return 0;
}

/* A scalar as JSON: unquoted true/false/null and integers keep their type. */
static cJSON *scalar_json(const struct yt_node *n)
{
	char *end;

	if (!n->quoted) {
		if (strcmp(n->scalar, "true") == 0)
			return cJSON_CreateTrue();
		if (strcmp(n->scalar, "false") == 0)
			return cJSON_CreateFalse();
		if (strcmp(n->scalar, "null") == 0 || strcmp(n->scalar, "~") == 0)
			return cJSON_CreateNull();
		errno = 0;
		long long v = strtoll(n->scalar, &end, 10);
		if (n->scalar[0] && *end == '\0' && errno == 0 && v > -(1LL << 53) &&
		    v < (1LL << 53))
			return cJSON_CreateNumber((double)v);
	}
	return cJSON_CreateString(n->scalar);
}

static cJSON *tree_json(const struct yt_node *n)
{
	cJSON *out;

	switch (n->kind) {
	case YT_SCALAR:
		return scalar_json(n);
	case YT_SEQ:
		out = cJSON_CreateArray();
		for (size_t i = 0; i < n->n; i++)
			cJSON_AddItemToArray(out, tree_json(n->items[i]));
		return out;
	case YT_MAP:
		out = cJSON_CreateObject();
		for (size_t i = 0; i < n->n; i++)
			cJSON_AddItemToObject(out, n->items[2 * i]->scalar,
			                      tree_json(n->items[2 * i + 1]));
		return out;
	}
	return cJSON_CreateNull();
}

/* tools.yaml: {tools: [{server, tool, verdict: read_only|mutating|exec, vm_arg?}]} */
static cJSON *check_tools(const struct seed_file *f)
{
	static const char *const top[] = {"tools", NULL};
	static const char *const keys[] = {"server", "tool", "verdict", "vm_arg", NULL};
	const struct yt_node *list;
	cJSON *out;

	if (only_keys(f->path, f->doc, top) < 0)
		return NULL;
	list = want(f->path, f->doc, "tools", YT_SEQ, true);
	if (list == NULL)
		return NULL;
	out = cJSON_CreateArray();
	for (size_t i = 0; i < list->n; i++) {
		const struct yt_node *t = list->items[i], *v;
		if (t->kind != YT_MAP) {
			fail_at(f->path, t, "each tool must be a mapping%s", "");
			goto bad;
		}
		if (only_keys(f->path, t, keys) < 0 ||
		    !want(f->path, t, "server", YT_SCALAR, true) ||
		    !want(f->path, t, "tool", YT_SCALAR, true) ||
		    !(v = want(f->path, t, "verdict", YT_SCALAR, true)))
			goto bad;
		if (strcmp(v->scalar, "read_only") != 0 && strcmp(v->scalar, "mutating") != 0 &&
		    strcmp(v->scalar, "exec") != 0) {
			fail_at(f->path, v, "verdict \"%s\" must be read_only, mutating or exec",
			        v->scalar);
			goto bad;
		}
		if (yt_get(t, "vm_arg") && !want(f->path, t, "vm_arg", YT_SCALAR, false))
			goto bad;
		for (size_t j = 0; j < i; j++) {
			const struct yt_node *o = list->items[j];
			if (strcmp(yt_get(o, "server")->scalar, yt_get(t, "server")->scalar) == 0 &&
			    strcmp(yt_get(o, "tool")->scalar, yt_get(t, "tool")->scalar) == 0) {
				fail_at(f->path, t, "tool \"%s\" is listed twice for its server",
				        yt_get(t, "tool")->scalar);
				goto bad;
			}
		}
		cJSON_AddItemToArray(out, tree_json(t));
	}
	return out;
bad:
	cJSON_Delete(out);
	return NULL;
}

/* A node name as Proxmox VE allows it: a DNS label or dotted name. */
static bool pve_node_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

static int check_entity(const char *path, const struct yt_node *e)
{
	static const char *const keys[] = {"slug",
	                                   "type",
	                                   "node",
	                                   "vmid",
	                                   "address",
	                                   "port",
	                                   "ssh_user",
	                                   "host_key_fingerprint",
	                                   "zerto_vm_identifier",
	                                   "attributes",
	                                   "pve_node",
	                                   NULL};
	const struct yt_node *slug, *type;
	enum target_type tt;

	if (e->kind != YT_MAP)
		return fail_at(path, e, "each entity must be a mapping%s", "");
	if (only_keys(path, e, keys) < 0)
		return -1;
	/* Every key but attributes holds a single value. */
	for (const char *const *k = keys; *k; k++)
		if (strcmp(*k, "attributes") != 0 && yt_get(e, *k) &&
		    !want(path, e, *k, YT_SCALAR, false))
			return -1;
	if (yt_get(e, "attributes") && !want(path, e, "attributes", YT_MAP, false))
		return -1;
	slug = want(path, e, "slug", YT_SCALAR, true);
	type = want(path, e, "type", YT_SCALAR, true);
	if (slug == NULL || type == NULL)
		return -1;
	if (target_type_parse(type->scalar, &tt) < 0)
		return fail_at(path, type, "type \"%s\" must be proxmox-host, vm or lxc",
		               type->scalar);
	size_t tl = strlen(type->scalar);
	if (strncmp(slug->scalar, type->scalar, tl) != 0 || slug->scalar[tl] != ':' ||
	    slug->scalar[tl + 1] == '\0')
		return fail_at(path, slug, "slug \"%s\" must be TYPE:NAME with its type's prefix",
		               slug->scalar);
	if (tt == TARGET_PROXMOX_HOST) {
		if (!want(path, e, "address", YT_SCALAR, true))
			return -1;
		if (yt_get(e, "node"))
			return fail_at(path, yt_get(e, "node"), "a proxmox-host has no node%s", "");
		const struct yt_node *pn = yt_get(e, "pve_node");
		if (pn && !pve_node_ok(pn->scalar))
			return fail_at(path, pn,
			               "pve_node \"%s\" must be the node's name in the cluster "
			               "(letters, digits, '.', '-'; at most 63)",
			               pn->scalar);
	} else if (yt_get(e, "pve_node")) {
		return fail_at(
		    path, yt_get(e, "pve_node"),
		    "only a proxmox-host has a pve_node (a guest's node is discovered)%s", "");
	} else if (!want(path, e, "node", YT_SCALAR, true) ||
	           !want(path, e, "vmid", YT_SCALAR, true)) {
		/* node is where the guest starts: once discovery lists the guest,
		 * the scheduler owns it and a seed does not move it back */
		return -1;
	} else if (strncmp(yt_get(e, "node")->scalar, "proxmox-host:", 13) != 0 ||
	           yt_get(e, "node")->scalar[13] == '\0') {
		return fail_at(path, yt_get(e, "node"),
		               "node \"%s\" must be the slug of a proxmox-host (proxmox-host:NAME)",
		               yt_get(e, "node")->scalar);
	}
	const char *ints[] = {"vmid", "port"};
	for (size_t i = 0; i < 2; i++) {
		const struct yt_node *v = yt_get(e, ints[i]);
		char *end;
		if (v == NULL)
			continue;
		errno = 0;
		long x = strtol(v->scalar, &end, 10);
		if (errno || *end || v->scalar[0] == '\0' || x < 1 || x > 999999999)
			return fail_at(path, v, "\"%s\" must be a positive integer", ints[i]);
	}
	return 0;
}

/* Two guests of one node with one VMID (Proxmox gives each guest of a node,
 * VM or container, its own); -1 after naming the second. */
static int check_vmids(const char *path, const struct yt_node *ents)
{
	for (size_t i = 0; i < ents->n; i++) {
		const struct yt_node *a = ents->items[i], *av = yt_get(a, "vmid"),
		                     *an = yt_get(a, "node");
		if (av == NULL || an == NULL)
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct yt_node *b = ents->items[j], *bv = yt_get(b, "vmid");
			const struct yt_node *bn = yt_get(b, "node");
			if (bv == NULL || bn == NULL ||
			    strtol(av->scalar, NULL, 10) != strtol(bv->scalar, NULL, 10) ||
			    strcmp(an->scalar, bn->scalar) != 0)
				continue;
			fprintf(
			    stderr,
			    "airlock seed: %s:%d:%d: %s has vmid %s, which %s (line %d) already "
			    "has on %s: a node gives each guest, VM or container, its own VMID\n",
			    path, av->line, av->col, yt_get(a, "slug")->scalar, av->scalar,
			    yt_get(b, "slug")->scalar, b->line, an->scalar);
			return -1;
		}
	}
	return 0;
}

/* inventory.yaml: {entities: [...], relationships: [{source, target, type}]} */
static cJSON *check_inventory(const struct seed_file *f)
{
	static const char *const top[] = {"entities", "relationships", NULL};
	static const char *const rkeys[] = {"source", "target", "type", NULL};
	const struct yt_node *ents, *rels;

	if (only_keys(f->path, f->doc, top) < 0)
		return NULL;
	ents = want(f->path, f->doc, "entities", YT_SEQ, true);
	if (ents == NULL)
		return NULL;
	for (size_t i = 0; i < ents->n; i++) {
		if (check_entity(f->path, ents->items[i]) < 0)
			return NULL;
		for (size_t j = 0; j < i; j++)
			if (strcmp(yt_get(ents->items[j], "slug")->scalar,
			           yt_get(ents->items[i], "slug")->scalar) == 0) {
				fail_at(f->path, ents->items[i], "entity \"%s\" is listed twice",
				        yt_get(ents->items[i], "slug")->scalar);
				return NULL;
			}
	}
	if (check_vmids(f->path, ents) < 0)
		return NULL;
	rels = yt_get(f->doc, "relationships");
	if (rels && !(rels = want(f->path, f->doc, "relationships", YT_SEQ, false)))
		return NULL;
	for (size_t i = 0; rels && i < rels->n; i++) {
		const struct yt_node *r = rels->items[i];
		if (r->kind != YT_MAP) {
			fail_at(f->path, r, "each relationship must be a mapping%s", "");
			return NULL;
		}
		if (only_keys(f->path, r, rkeys) < 0 ||
		    !want(f->path, r, "source", YT_SCALAR, true) ||
		    !want(f->path, r, "target", YT_SCALAR, true) ||
		    !want(f->path, r, "type", YT_SCALAR, true))
			return NULL;
	}
	return tree_json(f->doc);
}

/* The policy's rules as [{id, class, description}] for airlock.policy_rules. */
static cJSON *check_policy(const struct seed_file *f)
{
	char err[1024];
	struct policy *p = policy_parse(f->text, f->len, f->path, err, sizeof(err));
	cJSON *rules;

	if (p == NULL) {
		fprintf(stderr, "airlock seed: %s\n", err);
		return NULL;
	}
	rules = cJSON_CreateArray();
	for (size_t i = 0; i < policy_rule_count(p); i++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "id", policy_rule_id(p, i));
		cJSON_AddStringToObject(r, "class", risk_class_name(policy_rule_class(p, i)));
		cJSON_AddStringToObject(r, "description", policy_rule_description(p, i));
		cJSON_AddItemToArray(rules, r);
	}
	policy_free(p);
	return rules;
}

static struct store_res *exec_json(struct store *s, const char *sql, const char *a, const cJSON *j,
                                   const char *b)
{
	char *text = j ? cJSON_PrintUnformatted(j) : NULL;
	struct store_res *res;

	if (b)
		res = store_exec(s, sql, 3, (const char *const[]){a, b, text});
	else
		res = store_exec(s, sql, 1, (const char *const[]){text});
	free(text);
	return res;
}

/* The gate policy: gate.yaml when the directory has one, else the version in
 * force stays.  msg gets the line to print. */
static int ingest_gate(struct store *s, const struct seed_file *gate, const cJSON *doc, char *msg,
                       size_t msglen)
{
	struct store_res *res;
	long long before;

	res = store_exec(s, "SELECT coalesce(max(version), 0) FROM airlock.gate_policies", 0, NULL);
	if (res == NULL)
		return -1;
	before = strtoll(store_get(res, 0, 0), NULL, 10);
	store_clear(res);
	if (doc == NULL) {
		snprintf(msg, msglen, "gate: no gate.yaml; version %lld stays in force", before);
		return 0;
	}
	res = exec_json(s, "SELECT airlock.seed_gate($1, $2, $3::jsonb)", gate->text, doc,
	                gate->path);
	if (res == NULL)
		return -1;
	long long after = strtoll(store_get(res, 0, 0), NULL, 10);
	snprintf(msg, msglen, "gate: version %lld%s", after,
	         after == before ? " unchanged" : " ingested");
	store_clear(res);
	return 0;
}

/* The database's refusal of the inventory at the place it names in its
 * DETAIL (entities[N] or relationships[N], and .KEY): printed with
 * file:line:col.  False when it names no place of the file. */
static bool report_at(struct store *s, const struct seed_file *inv)
{
	const char *detail = store_errdetail(s);
	char list[16] = "", key[40] = "";
	unsigned idx;
	const struct yt_node *items, *n;
	int got;

	if (detail == NULL ||
	    (got = sscanf(detail, "%15[a-z][%u].%39[a-z_]", list, &idx, key)) < 2 ||
	    (strcmp(list, "entities") != 0 && strcmp(list, "relationships") != 0))
		return false;
	items = yt_get(inv->doc, list);
	if (items == NULL || items->kind != YT_SEQ || idx >= items->n)
		return false;
	n = items->items[idx];
	if (got == 3 && n->kind == YT_MAP && yt_get(n, key))
		n = yt_get(n, key);
	fprintf(stderr, "airlock seed: %s:%d:%d: %s\n", inv->path, n->line, n->col,
	        store_errmsg(s));
	return true;
}

static int ingest(struct store *s, const struct seed_file *pol, const cJSON *rules,
                  const cJSON *tools, const struct seed_file *inv_file, const cJSON *inv,
                  const struct seed_file *gate, const cJSON *gate_doc, bool *positioned_out)
{
	bool positioned = false;
	struct store_res *res = NULL;
	char policy_msg[128], tools_msg[64], inv_msg[64], gate_msg[96];

	res = store_exec(s, "BEGIN", 0, NULL);
	if (res == NULL)
		return -1;
	store_clear(res);
	res = store_exec(s, "SELECT coalesce(max(version), 0) FROM airlock.policies", 0, NULL);
	if (res == NULL)
		goto fail;
	long long before = strtoll(store_get(res, 0, 0), NULL, 10);
	store_clear(res);
	res = exec_json(s, "SELECT airlock.seed_policy($1, $2, $3::jsonb)", pol->text, rules,
	                pol->path);
	if (res == NULL)
		goto fail;
	long long after = strtoll(store_get(res, 0, 0), NULL, 10);
	snprintf(policy_msg, sizeof(policy_msg), "policy: version %lld%s (%d rules)", after,
	         after == before ? " unchanged" : " ingested", cJSON_GetArraySize(rules));
	store_clear(res);
	res = exec_json(s, "SELECT airlock.seed_tools($1::jsonb)", NULL, tools, NULL);
	if (res == NULL)
		goto fail;
	snprintf(tools_msg, sizeof(tools_msg), "tools: %d entries, %s changed",
	         cJSON_GetArraySize(tools), store_get(res, 0, 0));
	store_clear(res);
	res = exec_json(s, "SELECT airlock.seed_inventory($1::jsonb)", NULL, inv, NULL);
	if (res == NULL) {
		if (inv_file && report_at(s, inv_file))
			positioned = true;
		goto fail;
	}
	snprintf(inv_msg, sizeof(inv_msg), "inventory: %d entities, %s rows changed",
	         cJSON_GetArraySize(cJSON_GetObjectItem(inv, "entities")), store_get(res, 0, 0));
	store_clear(res);
	res = NULL;
	if (ingest_gate(s, gate, gate_doc, gate_msg, sizeof(gate_msg)) < 0)
		goto fail;
	res = store_exec(s, "COMMIT", 0, NULL);
	if (res == NULL)
		return -1;
	store_clear(res);
	printf("%s\n%s\n%s\n%s\n", policy_msg, tools_msg, inv_msg, gate_msg);
	return 0;
fail:;
	char why[1024], state[8];
	snprintf(why, sizeof(why), "%s", store_errmsg(s));
	snprintf(state, sizeof(state), "%s", store_sqlstate(s));
	store_exec_quiet(s, "ROLLBACK");
	store_set_error_state(s, state, "%s (nothing was ingested)", why);
	*positioned_out = positioned;
	return -1;
}

int cli_seed(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"db", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct seed_file pol = {0}, tools = {0}, inv = {0}, gate = {0};
	cJSON *rules = NULL, *tj = NULL, *ij = NULL, *gj = NULL;
	char gate_path[4096];
	char *dir = NULL;
	const char *db = NULL;
	struct store *s = NULL;
	int c, rc = CLI_USAGE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd') {
			db = optarg;
		} else if (c == 'h') {
			printf(
			    "usage: airlock seed [--db CONNINFO] [DIR]\n"
			    "Ingests DIR/policy.yaml (classifier rules), DIR/tools.yaml (tool "
			    "catalog),\n"
			    "DIR/inventory.yaml (entities, relationships) and, when present,\n"
			    "DIR/gate.yaml (quorum, TTL and approval validity per class, rules "
			    "per\n"
			    "target or agent, flood limits) in one transaction.\n"
			    "Files are checked first; an error names file, line and column and\n"
			    "nothing is ingested.  A second run changes nothing; a changed policy\n"
			    "becomes a new version and running workers reload it.\n"
			    "DIR defaults to $AIRLOCK_SEEDS, else the seeds this airlock ships\n"
			    "(SHARE/seeds; their inventory.yaml is an example: seed your own).\n");
			return CLI_OK;
		} else {
			return CLI_USAGE;
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr, "usage: airlock seed [--db CONNINFO] [DIR]\n");
		return CLI_USAGE;
	}
	const char *env = getenv("AIRLOCK_SEEDS");
	if (optind == argc - 1)
		dir = xstrdup(argv[optind]);
	else if (env && env[0])
		dir = xstrdup(env);
	else
		dir = paths_share_sub("seeds");
	if (optind == argc)
		fprintf(stderr, "seed: from %s\n", dir);
	if (load(dir, "policy.yaml", &pol) < 0 || load(dir, "tools.yaml", &tools) < 0 ||
	    load(dir, "inventory.yaml", &inv) < 0)
		goto out;
	snprintf(gate_path, sizeof(gate_path), "%s/gate.yaml", dir);
	if (access(gate_path, F_OK) == 0 && load(dir, "gate.yaml", &gate) < 0)
		goto out;
	rules = check_policy(&pol);
	tj = rules ? check_tools(&tools) : NULL;
	ij = tj ? check_inventory(&inv) : NULL;
	if (ij == NULL)
		goto out;
	if (gate.doc && (gj = seedgate_check(gate.path, gate.doc)) == NULL)
		goto out;
	rc = CLI_ERROR;
	s = cli_connect_write(db);
	if (s == NULL)
		goto out;
	bool positioned = false;
	if (ingest(s, &pol, rules, tj, &inv, ij, &gate, gj, &positioned) < 0) {
		if (positioned) {
			fprintf(stderr, "airlock seed: nothing was ingested\n");
			rc = cli_exit_for_sqlstate(store_sqlstate(s));
		} else {
			rc = cli_fail(s, "seed");
		}
		goto out;
	}
	rc = CLI_OK;
out:
	store_close(s);
	cJSON_Delete(rules);
	cJSON_Delete(tj);
	cJSON_Delete(ij);
	cJSON_Delete(gj);
	unload(&gate);
	unload(&pol);
	unload(&tools);
	unload(&inv);
	free(dir);
	return rc;
}
