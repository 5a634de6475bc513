/* ops.c -- the queue from the command line: run, show, pending, approve,
 * reject, cancel, history.  Every action is one SQL function
 * call, so the rules live in the database and hold for every client. */
#include "cli/cli.h"
#include "cli/sidedoor.h"
#include "cli/seedgate.h"

#include "lib/execstate.h"
#include "lib/buf.h"
#include "lib/deadline.h"
#include "lib/visible.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct option common_opts[] = {
    {"db", required_argument, NULL, 'd'},
    {"json", no_argument, NULL, 'j'},
    {"reason", required_argument, NULL, 'r'},
    {"target", required_argument, NULL, 't'},
    {"declared-risk", required_argument, NULL, 'R'},
    {"change-id", required_argument, NULL, 'c'},
    {"action", required_argument, NULL, 'a'},
    {"wait", optional_argument, NULL, 'w'},
    {"agent", required_argument, NULL, 'A'},
    {"class", required_argument, NULL, 'C'},
    {"state", required_argument, NULL, 'S'},
    {"older-than", required_argument, NULL, 'O'},
    {"confirm-unreadable", no_argument, NULL, 'U'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct opts {
	const char *db, *reason, *target, *risk, *change_id, *action;
	const char *agent, *cls, *state, *older; /* pending's filters */
	bool json, help, wait, confirm_unreadable;
	long wait_seconds;
};

/* Parses the options a subcommand allows (letters in `allowed`). */
static int parse_opts(int argc, char **argv, const char *allowed, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->wait_seconds = 600;
	optind = 1;
	/* run stops at its command's first word; the others take options anywhere. */
	while ((c = getopt_long(argc, argv, strcmp(argv[0], "run") == 0 ? "+h" : "h", common_opts,
	                        NULL)) != -1) {
		if (c == '?' || (c != 'h' && strchr(allowed, c) == NULL)) {
			if (c != '?')
				fprintf(stderr, "airlock %s: option not allowed here: %s\n",
				        argv[0], argv[optind - 1]);
			return -1;
		}
		switch (c) {
		case 'd':
			o->db = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'r':
			o->reason = optarg;
			break;
		case 't':
			o->target = optarg;
			break;
		case 'R':
			o->risk = optarg;
			break;
		case 'c':
			o->change_id = optarg;
			break;
		case 'a':
			o->action = optarg;
			break;
		case 'w':
			o->wait = true;
			if (optarg) {
				char *end;
				errno = 0;
				o->wait_seconds = strtol(optarg, &end, 10);
				if (errno || *end || o->wait_seconds < 1 ||
				    o->wait_seconds > 86400) {
					fprintf(stderr,
					        "airlock %s: --wait takes 1..86400 seconds\n",
					        argv[0]);
					return -1;
				}
			}
			break;
		case 'A':
			o->agent = optarg;
			break;
		case 'C':
			o->cls = optarg;
			break;
		case 'S':
			o->state = optarg;
			break;
		case 'O':
			o->older = optarg;
			break;
		case 'U':
			o->confirm_unreadable = true;
			break;
		case 'h':
			o->help = true;
			break;
		}
	}
	return 0;
}

/* The one positional execution id. */
static int parse_id(int argc, char **argv, const char *usage, char *out, size_t outlen)
{
	char *end;
	long long id;

	if (optind != argc - 1) {
		fprintf(stderr, "usage: %s\n", usage);
		return -1;
	}
	errno = 0;
	id = strtoll(argv[optind], &end, 10);
	if (errno || *end || id <= 0) {
		fprintf(stderr, "airlock %s: '%s' is not an execution id\n", argv[0], argv[optind]);
		return -1;
	}
	snprintf(out, outlen, "%lld", id);
	return 0;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Everything below prints text an agent or a target wrote (commands, words
 * of reasons, change ids, output, error messages): every such string goes
 * through visible_text(), so it is shown and never obeyed by the terminal.
 * --json prints the data exactly instead. */

/* Prints s made visible on one line (newlines and tabs escaped too). */
static void put_line(const char *s)
{
	char *v = visible_str(s, 0);

	fputs(v, stdout);
	free(v);
}

/* Prints a JSON value for people: its text form with raw hidden characters escaped. */
static void put_json(const cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);
	char *v = visible_str(s, VISIBLE_JSON);

	fputs(v, stdout);
	free(v);
	free(s);
}

/* The note printed under a text that needed escapes. */
static void note_hidden(const char *indent, const char *what, size_t hidden)
{
	printf("%s! %s holds %zu hidden or control character%s, shown as \\x/\\u escapes "
	       "(\\\\ is one backslash)\n",
	       indent, what, hidden, hidden == 1 ? "" : "s");
}

/* One line per reason: the classifier's {segment, text, rule, words, class,
 * target} objects, or plain strings. */
static void print_reasons(const cJSON *reasons, const char *indent)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, reasons)
	{
		if (cJSON_IsString(r)) {
			printf("%s", indent);
			put_line(r->valuestring);
			printf("\n");
			continue;
		}
		const char *text = jstr(r, "text"), *rule = jstr(r, "rule"),
		           *words = jstr(r, "words");
		const char *cls = jstr(r, "class"), *target = jstr(r, "target");
		int seg = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "segment"));
		if (rule == NULL || cls == NULL) {
			printf("%s", indent);
			put_json(r);
			printf("\n");
			continue;
		}
		printf("%ssegment %d: ", indent, seg);
		put_line(text ? text : "");
		printf(" (rule ");
		put_line(rule);
		if (words && words[0]) {
			printf(": ");
			put_line(words);
		}
		printf(")");
		if (target) {
			printf(" on ");
			put_line(target);
		}
		printf(" => ");
		put_line(cls);
		printf("\n");
	}
}

/* Prints a command's output stream as a block, made visible line by line. */
static void print_output(const cJSON *e, const char *name)
{
	char key[32];
	const char *text = jstr(e, name);
	struct visible_info info;
	char *v;

	snprintf(key, sizeof(key), "%s_truncated", name);
	v = visible_text(text, strlen(text), VISIBLE_LINES, 0, &info);
	printf("  %s%s\n", name, cJSON_IsTrue(cJSON_GetObjectItem(e, key)) ? " (truncated)" : "");
	if (info.hidden > 0)
		note_hidden("  ", name, info.hidden);
	fputs(v, stdout);
	if (v[0] && v[strlen(v) - 1] != '\n')
		printf("\n");
	free(v);
}

/* Prints an execution's JSON (from airlock.get_execution) for people. */
static void print_execution(const cJSON *e)
{
	static const char *const fields[] = {
	    "state",      "target",        "class",          "requested_by", "change_id",
	    "action",     "declared_risk", "policy_version", "created_at",   "classified_at",
	    "expires_at", "decided_at",    "started_at",     "finished_at",  "rewind_status",
	    "exit_code",  "signal",        "duration_ms",    "error",        "console_url",
	};
	const char *command = jstr(e, "command") ? jstr(e, "command") : "";
	struct visible_info info;
	const cJSON *v;
	char *cv;

	printf("execution %.0f\n", cJSON_GetNumberValue(cJSON_GetObjectItem(e, "id")));
	cv = visible_text(command, strlen(command), 0, 0, &info);
	printf("  %-15s %s\n", "command", cv);
	free(cv);
	if (info.hidden > 0)
		note_hidden("  ", "the command", info.hidden);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		v = cJSON_GetObjectItemCaseSensitive(e, fields[i]);
		if (v == NULL)
			continue;
		if (cJSON_IsString(v)) {
			printf("  %-15s ", fields[i]);
			put_line(v->valuestring);
			printf("\n");
		} else if (cJSON_IsNumber(v)) {
			printf("  %-15s %.0f\n", fields[i], v->valuedouble);
		}
	}
	if (jstr(e, "confinement")) { /* how it ran: the jail's tier, an action rule, or none */
		const char *c = jstr(e, "confinement");
		printf("  %-15s %s\n", "confinement",
		       strcmp(c, "user") == 0 ? "read-only jail, unprivileged (user tier)"
		       : strcmp(c, "root") == 0
		           ? "read-only jail, uid 0 without capabilities (root tier)"
		       : strcmp(c, "write") == 0
		           ? "jail with only the verdict's paths writable (write tier)"
		       : strcmp(c, "action") == 0 ? "an action of its policy rule, unconfined"
		                                  : "none (ran unconfined)");
	}
	v = cJSON_GetObjectItemCaseSensitive(e, "reasons");
	if (cJSON_GetArraySize(v) > 0) {
		printf("  reasons\n");
		print_reasons(v, "    ");
	}
	v = cJSON_GetObjectItemCaseSensitive(e, "approvals");
	if (cJSON_GetArraySize(v) > 0) {
		const cJSON *a;
		printf("  approvals (%d required)\n",
		       (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "approvals_required")));
		cJSON_ArrayForEach(a, v)
		{
			printf("    ");
			put_line(jstr(a, "decision"));
			printf(" ");
			put_line(jstr(a, "by"));
			printf(" at ");
			put_line(jstr(a, "at"));
			if (jstr(a, "reason")) {
				printf(": ");
				put_line(jstr(a, "reason"));
			}
			printf("\n");
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(e, "rewind_points");
	if (v && !cJSON_IsNull(v)) {
		printf("  rewind_points   ");
		put_json(v);
		printf("\n");
	}
	v = cJSON_GetObjectItemCaseSensitive(e, "output_hold");
	if (cJSON_IsObject(v)) {
		/* what was held and where; the bytes are in airlock output show */
		printf("  %-15s %s: it contains ", "output",
		       jstr(v, "state") ? jstr(v, "state") : "?");
		put_line(jstr(v, "label") ? jstr(v, "label") : "?");
		printf(" at line %.0f of %s", cJSON_GetNumberValue(cJSON_GetObjectItem(v, "line")),
		       jstr(v, "stream") ? jstr(v, "stream") : "?");
		if (jstr(v, "decided_by")) {
			printf(" (by ");
			put_line(jstr(v, "decided_by"));
			printf(": ");
			put_line(jstr(v, "reason") ? jstr(v, "reason") : "");
			printf(")");
		}
		printf("\n");
	}
	if (jstr(e, "stdout"))
		print_output(e, "stdout");
	if (jstr(e, "stderr") && jstr(e, "stderr")[0])
		print_output(e, "stderr");
	printf("  next step: ");
	put_line(jstr(e, "next_step") ? jstr(e, "next_step") : "");
	printf("\n");
}

/* One row of `airlock pending`: the table line, the command (cut at
 * PENDING_COMMAND_MAX bytes, saying so), its reasons. */
#define PENDING_COMMAND_MAX 200

static void print_pending_row(const struct store_res *res, int r)
{
	char *col[8];
	static const int idx[8] = {0, 4, 5, 2, 1, 3, 6, 7};
	const char *command = store_get(res, r, 8);
	struct visible_info info;
	char *cmd;

	for (int i = 0; i < 8; i++)
		col[i] = visible_str(store_get(res, r, idx[i]), 0);
	printf("%-6s %-9s %-9s %-16s %-24s %-16s %-5s %s\n", col[0], col[1], col[2], col[3], col[4],
	       col[5], col[6], col[7]);
	cmd = visible_text(command, strlen(command), 0, PENDING_COMMAND_MAX, &info);
	printf("       $ %s", cmd);
	if (info.cut > 0)
		printf(" ... (%zu more bytes: airlock show %s)", info.cut, col[0]);
	printf("\n");
	if (info.hidden > 0)
		note_hidden("       ", "the command", info.hidden);
	if (store_get(res, r, 11)[0]) {
		printf("       for: ");
		put_line(store_get(res, r, 11));
		printf("\n");
	}
	if (strcmp(store_get(res, r, 12), "pending_approval") != 0)
		printf("       state: %s\n", store_get(res, r, 12));
	cJSON *reasons = cJSON_Parse(store_get(res, r, 9));
	print_reasons(reasons, "       ");
	cJSON_Delete(reasons);
	if (!store_isnull(res, r, 13))
		printf("       console: %s\n", store_get(res, r, 13));
	free(cmd);
	for (int i = 0; i < 8; i++)
		free(col[i]);
}

/* Fetches get_execution(id) as text; NULL with the error on s. */
static char *fetch_execution(struct store *s, const char *id)
{
	struct store_res *res = store_exec(s, "SELECT airlock.get_execution($1::bigint)::text", 1,
	                                   (const char *const[]){id});
	char *out;

	if (res == NULL)
		return NULL;
	out = xstrdup(store_get(res, 0, 0));
	store_clear(res);
	return out;
}

static int show_execution(struct store *s, const char *id, bool json)
{
	char *text = fetch_execution(s, id);
	cJSON *e;

	if (text == NULL)
		return cli_fail(s, "show");
	if (json) {
		printf("%s\n", text);
		free(text);
		return CLI_OK;
	}
	e = cJSON_Parse(text);
	free(text);
	if (e == NULL) {
		fprintf(stderr, "airlock: show: the database returned malformed JSON\n");
		return CLI_ERROR;
	}
	print_execution(e);
	cJSON_Delete(e);
	return CLI_OK;
}

/* True when name is a state and that state is given; false for NULL. */
static bool state_is(const char *name, enum exec_state want)
{
	enum exec_state st;

	return exec_state_parse(name, &st) == 0 && st == want;
}

static bool is_final(const char *name)
{
	enum exec_state st;

	return exec_state_parse(name, &st) == 0 && exec_state_is_final(st);
}

/* The row's state now, or NULL (error on s); caller frees. */
static char *current_state(struct store *s, const char *id)
{
	struct store_res *res =
	    store_exec(s, "SELECT airlock.get_execution($1::bigint) ->> 'state'", 1,
	               (const char *const[]){id});
	char *st;

	if (res == NULL)
		return NULL;
	st = xstrdup(store_get(res, 0, 0));
	store_clear(res);
	return st;
}

/* Waits (LISTEN airlock_state, no polling) until the row is final or the
 * time is up.  0 when final, 1 when still in flight, -1 on error. */
static int wait_final(struct store *s, const char *id, long seconds)
{
	int64_t start = deadline_now_ms();
	int rc = -1;

	if (store_listen(s, "airlock_state") < 0)
		return -1;
	for (;;) {
		char *st = current_state(s, id);
		if (st == NULL)
			break;
		bool fin = is_final(st);
		free(st);
		if (fin) {
			rc = 0;
			break;
		}
		long left_ms = (long)(seconds * 1000 - (deadline_now_ms() - start));
		if (left_ms <= 0) {
			rc = 1;
			break;
		}
		if (store_wait_notify(s, (int)(left_ms > 60000 ? 60000 : left_ms)) < 0)
			break;
		store_drain_notifications(s);
	}
	store_exec_quiet(s, "UNLISTEN airlock_state");
	return rc;
}

int cli_run(int argc, char **argv)
{
	const char *usage =
	    "airlock run --target SLUG [--declared-risk CLASS] [--change-id ID] "
	    "[--action TEXT] [--wait[=SECONDS]] [--json] [--db CONNINFO] -- COMMAND...";
	struct opts o;
	struct buf cmd = BUF_INIT;
	struct store *s;
	struct store_res *res;
	char id[32];
	int rc;

	if (parse_opts(argc, argv, "djtRcaw", &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf(
		    "usage: %s\n"
		    "Enqueues COMMAND for SLUG through airlock.run() and prints the execution id.\n"
		    "Several words are joined with spaces into one shell command string.\n"
		    "--wait waits (default 600 s) until the row is final and shows it; exit 0\n"
		    "when it succeeded, 1 when it ended otherwise or is still in flight.\n"
		    "A pre-flight refusal exits 3 and inserts nothing.\n",
		    usage);
		return CLI_OK;
	}
	if (o.target == NULL || optind >= argc) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			buf_putc(&cmd, ' ');
		buf_puts(&cmd, argv[i]);
	}
	s = cli_connect_write(o.db);
	if (s == NULL) {
		buf_free(&cmd);
		return CLI_ERROR;
	}
	res = store_exec(
	    s, "SELECT airlock.run($1, $2, $3, $4, $5)", 5,
	    (const char *const[]){o.target, buf_str(&cmd), o.risk, o.change_id, o.action});
	buf_free(&cmd);
	if (res == NULL) {
		rc = cli_fail(s, "run");
		store_close(s);
		return rc;
	}
	snprintf(id, sizeof(id), "%s", store_get(res, 0, 0));
	store_clear(res);
	if (!o.wait) {
		if (o.json)
			printf("{\"id\":%s}\n", id);
		else
			printf("%s\n", id);
		store_close(s);
		return CLI_OK;
	}
	rc = wait_final(s, id, o.wait_seconds);
	if (rc < 0) {
		rc = cli_fail(s, "run --wait");
		store_close(s);
		return rc;
	}
	show_execution(s, id, o.json);
	char *st = current_state(s, id);
	rc = state_is(st, EXEC_SUCCEEDED) ? CLI_OK : CLI_ERROR;
	free(st);
	store_close(s);
	return rc;
}

int cli_show(int argc, char **argv)
{
	const char *usage = "airlock show [--json] [--db CONNINFO] ID";
	struct opts o;
	struct store *s;
	char id[32];
	int rc;

	if (parse_opts(argc, argv, "dj", &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf("usage: %s\nShows one execution: state, class and reasons, approvals, "
		       "result.\n",
		       usage);
		return CLI_OK;
	}
	if (parse_id(argc, argv, usage, id, sizeof(id)) < 0)
		return CLI_USAGE;
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	rc = show_execution(s, id, o.json);
	store_close(s);
	return rc;
}

/* The scheduler's side-door checks that are raised, as a header: an
 * operator reviewing requests must see that something went around them. */
static void print_side_doors(struct store *s)
{
	struct store_res *res =
	    store_exec(s,
	               "SELECT entity, name, coalesce(detail, '') FROM airlock.checks "
	               "WHERE name IN ('access_outside_airlock', 'change_outside_airlock') "
	               "AND status = 'failing' ORDER BY entity, name",
	               0, NULL);

	for (int r = 0; res != NULL && r < store_nrows(res); r++)
		printf("!! %s on %s: %.400s\n", store_get(res, r, 1), store_get(res, r, 0),
		       store_get(res, r, 2));
	if (res != NULL && store_nrows(res) > 0)
		printf("\n");
	store_clear(res);
}

/* Output held for carrying secret material: it waits for an operator too. */
static void print_held_output(struct store *s)
{
	struct store_res *res = store_exec(
	    s,
	    "SELECT id, to_char(justify_interval(date_trunc('second', age)), 'HH24:MI:SS'), "
	    " target, requested_by, label, line, stream, command "
	    "FROM airlock.held_output",
	    0, NULL);

	if (res == NULL) {
		fprintf(stderr, "airlock pending: held output: %s", store_errmsg(s));
		return;
	}
	if (store_nrows(res) > 0) {
		printf(
		    "\nheld output (airlock output show ID; release or discard ID --reason ...)\n"
		    "%-6s %-9s %-24s %-16s %s\n",
		    "ID", "AGE", "TARGET", "REQUESTER", "CONTAINS");
	}
	for (int r = 0; r < store_nrows(res); r++) {
		char *tgt = visible_str(store_get(res, r, 2), 0);
		char *who = visible_str(store_get(res, r, 3), 0);
		char *cmd = visible_str(store_get(res, r, 7), 0);
		printf("%-6s %-9s %-24s %-16s %s at line %s of %s\n       $ %.200s\n",
		       store_get(res, r, 0), store_get(res, r, 1), tgt, who, store_get(res, r, 4),
		       store_get(res, r, 5), store_get(res, r, 6), cmd);
		free(tgt);
		free(who);
		free(cmd);
	}
	store_clear(res);
}

/* A glob of what slugs and login names hold, plus * and ?. */
static bool glob_ok(const char *s)
{
	if (s[0] == '\0' || strlen(s) > 200)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("*?._-:@", *s) == NULL)
			return false;
	return true;
}

/* pending's filters checked; 0, or -1 after saying what is wrong. */
static int check_filters(const struct opts *o, long long *older_s)
{
	static const char *const classes[] = {"read_only", "reversible_low", "config_mutation",
	                                      "destructive", NULL};
	static const char *const states[] = {"pending_approval", "received", "queued", "approved",
	                                     "running",          "open",     NULL};
	bool ok = true;

	if (o->target && !glob_ok(o->target)) {
		fprintf(stderr,
		        "airlock pending: --target '%s' is an entity slug or a glob of one, "
		        "such as 'vm:*' (quote it from the shell)\n",
		        o->target);
		return -1;
	}
	if (o->agent && !glob_ok(o->agent)) {
		fprintf(stderr, "airlock pending: --agent '%s' is a login name or a glob of one\n",
		        o->agent);
		return -1;
	}
	if (o->cls) {
		ok = false;
		for (const char *const *c = classes; *c; c++)
			ok = ok || strcmp(*c, o->cls) == 0;
		if (!ok) {
			fprintf(stderr,
			        "airlock pending: --class is read_only, reversible_low, "
			        "config_mutation or destructive, not '%s'\n",
			        o->cls);
			return -1;
		}
	}
	if (o->state) {
		ok = false;
		for (const char *const *st = states; *st; st++)
			ok = ok || strcmp(*st, o->state) == 0;
		if (!ok) {
			fprintf(stderr,
			        "airlock pending: --state is pending_approval (the default), "
			        "received, queued, approved, running or open (all of them), "
			        "not '%s'\n",
			        o->state);
			return -1;
		}
	}
	*older_s = 0;
	if (o->older && seedgate_duration(o->older, older_s) < 0) {
		fprintf(stderr,
		        "airlock pending: --older-than is a duration such as 90s, 15m, 2h or "
		        "1d, not '%s'\n",
		        o->older);
		return -1;
	}
	return 0;
}

int cli_pending(int argc, char **argv)
{
	const char *usage = "airlock pending [--target GLOB] [--agent GLOB] [--class CLASS] "
	                    "[--state STATE] [--older-than DURATION] [--json] [--db CONNINFO]";
	struct opts o;
	struct store *s;
	struct store_res *res;
	long long older_s = 0;
	char older[32] = "";

	if (parse_opts(argc, argv, "djtACSO", &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf("usage: %s\nLists requests waiting for approval, oldest first, then the "
		       "output\n"
		       "held because it carries secret material (airlock output show ID).\n"
		       "  --target GLOB       only requests on targets matching an entity slug "
		       "glob ('vm:*')\n"
		       "  --agent GLOB        only requests from these agents' logins\n"
		       "  --class CLASS       only requests of this class\n"
		       "  --state STATE       pending_approval (default), received, queued, "
		       "approved,\n"
		       "                      running, or open (all of them)\n"
		       "  --older-than DUR    only requests waiting longer than 90s, 15m, 2h, 1d\n"
		       "Decide several at once with airlock approve ID... or airlock reject ID... "
		       "--reason.\n"
		       "--json prints the requests only; airlock output list --json prints the "
		       "held output.\n",
		       usage);
		return CLI_OK;
	}
	if (optind != argc) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	if (check_filters(&o, &older_s) < 0)
		return CLI_USAGE;
	if (o.older)
		snprintf(older, sizeof(older), "%lld", older_s);
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	res = store_exec(
	    s,
	    "WITH r AS (SELECT e.id, e.target, e.target_type, e.command, e.class, e.reasons,"
	    "  e.requested_by, e.change_id, e.action, e.created_at, e.classified_at, e.expires_at,"
	    "  now() - e.created_at AS age, e.expires_at - now() AS expires_in,"
	    "  e.approvals_required, airlock._votes(e)::bigint AS approvals, e.rewind_status,"
	    "  e.rewind_possible, e.gate_version, e.state,"
	    "  airlock.console_url(airlock.console_request_path(e.id)) AS console_url"
	    "  FROM airlock.executions e"
	    "  WHERE CASE WHEN $4 = 'open' THEN e.state IN ('received', 'queued',"
	    "    'pending_approval', 'approved', 'running') ELSE e.state = $4 END"
	    "  AND ($1 = '' OR e.target LIKE replace(replace(replace(replace(replace($1, '\\',"
	    "    '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_'))"
	    "  AND ($2 = '' OR e.requested_by LIKE replace(replace(replace(replace(replace($2,"
	    "    '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_'))"
	    "  AND ($3 = '' OR e.class = $3)"
	    "  AND ($5 = '' OR now() - e.created_at >= make_interval(secs => $5::bigint))"
	    "  ORDER BY e.created_at, e.id)"
	    "SELECT id, target, coalesce(class, '-'), requested_by, "
	    " to_char(justify_interval(date_trunc('second', age)), 'HH24:MI:SS'), "
	    " CASE WHEN expires_in IS NULL OR state <> 'pending_approval' THEN '-'"
	    "  WHEN expires_in < interval '0' THEN 'expired' "
	    "  ELSE to_char(justify_interval(date_trunc('second', expires_in)), 'HH24:MI:SS') END, "
	    " approvals || '/' || greatest(approvals_required, 1), coalesce(rewind_status, '-'),"
	    " command, coalesce(reasons, '[]')::text, "
	    " (SELECT coalesce(jsonb_agg(to_jsonb(x) - 'age' - 'expires_in' ORDER BY x.created_at,"
	    "  x.id), '[]')::text FROM r x), coalesce(action, ''), state, console_url "
	    "FROM r",
	    5,
	    (const char *const[]){o.target ? o.target : "", o.agent ? o.agent : "",
	                          o.cls ? o.cls : "", o.state ? o.state : "pending_approval",
	                          older});
	if (res == NULL) {
		int rc = cli_fail(s, "pending");
		store_close(s);
		return rc;
	}
	if (!o.json) {
		print_side_doors(s);
		cli_side_door_line(s);
	}
	if (o.json) {
		if (store_nrows(res) > 0)
			printf("%s\n", store_get(res, 0, 10));
		else
			printf("[]\n");
	} else if (store_nrows(res) == 0) {
		printf(o.target || o.agent || o.cls || o.state || o.older
		           ? "nothing matches these filters\n"
		           : "nothing is waiting for approval\n");
	} else {
		printf("%-6s %-9s %-9s %-16s %-24s %-16s %-5s %s\n", "ID", "AGE", "EXPIRES",
		       "CLASS", "TARGET", "REQUESTER", "VOTES", "REWIND");
		for (int r = 0; r < store_nrows(res); r++)
			print_pending_row(res, r);
	}
	if (!o.json)
		print_held_output(s);
	store_clear(res);
	store_close(s);
	return CLI_OK;
}

/* One id of approve / reject / cancel: the function call and its line.
 * The exit code it means. */
static int decide_one(struct store *s, const char *verb, const char *sql, const char *id,
                      const struct opts *o, bool many, cJSON *arr)
{
	struct store_res *res = store_exec(
	    s, sql,
	    strcmp(verb, "cancel") == 0    ? 1
	    : strcmp(verb, "approve") == 0 ? 3
	                                   : 2,
	    (const char *const[]){id, o->reason, o->confirm_unreadable ? "true" : "false"});
	int rc = CLI_OK;

	if (res == NULL) {
		if (arr) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "id", (double)strtoll(id, NULL, 10));
			cJSON_AddStringToObject(e, "error", store_errmsg(s));
			cJSON_AddStringToObject(e, "sqlstate", store_sqlstate(s));
			cJSON_AddItemToArray(arr, e);
			return cli_exit_for_sqlstate(store_sqlstate(s));
		}
		if (!many)
			return cli_fail(s, verb);
		char what[64];
		snprintf(what, sizeof(what), "%s %s", verb, id);
		return cli_fail(s, what);
	}
	const char *state = store_get(res, 0, 0);
	if (arr) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "id", (double)strtoll(id, NULL, 10));
		cJSON_AddStringToObject(e, "state", state);
		cJSON_AddItemToArray(arr, e);
	} else if (o->json)
		printf("{\"id\":%s,\"state\":\"%s\"}\n", id, state);
	else if (strcmp(verb, "approve") == 0 && state_is(state, EXEC_PENDING_APPROVAL))
		printf("execution %s: your approval is recorded; it needs more approvers\n", id);
	else if (strcmp(verb, "approve") == 0 && state_is(state, EXEC_EXPIRED))
		printf("execution %s: expired before your approval; nothing will run\n", id);
	else
		printf("execution %s: %s\n", id, state);
	if (strcmp(verb, "approve") == 0 && state_is(state, EXEC_EXPIRED))
		rc = CLI_REFUSED;
	store_clear(res);
	return rc;
}

/* approve / reject (one id or several, each its own call and transaction)
 * and cancel (one id). */
static int decide(int argc, char **argv, const char *usage, const char *allowed, const char *sql,
                  bool reason_required, bool several)
{
	struct opts o;
	struct store *s;
	char id[32];
	int rc = CLI_OK;
	cJSON *arr = NULL;

	if (parse_opts(argc, argv, allowed, &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf("usage: %s\n", usage);
		if (strcmp(argv[0], "approve") == 0)
			printf(
			    "--confirm-unreadable: the command is hard to read (hidden characters, "
			    "or longer\nthan a screen) and you read all of it (airlock show ID); "
			    "one ID only.\n");
		return CLI_OK;
	}
	int n = argc - optind;
	if (n < 1 || (n > 1 && !several)) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	if (o.confirm_unreadable && n > 1) {
		fprintf(stderr,
		        "airlock approve: --confirm-unreadable says you read one command: give "
		        "one ID, after airlock show ID\n");
		return CLI_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		char *end;
		errno = 0;
		long long v = strtoll(argv[i], &end, 10);
		if (errno || *end || v <= 0) {
			fprintf(stderr, "airlock %s: '%s' is not an execution id\n", argv[0],
			        argv[i]);
			return CLI_USAGE;
		}
	}
	if (reason_required && (o.reason == NULL || o.reason[0] == '\0')) {
		fprintf(stderr,
		        "airlock %s: --reason is required; it is sent back to the requester\n",
		        argv[0]);
		return CLI_USAGE;
	}
	s = cli_connect_write(o.db);
	if (s == NULL)
		return CLI_ERROR;
	if (o.json && n > 1)
		arr = cJSON_CreateArray();
	for (int i = optind; i < argc; i++) {
		snprintf(id, sizeof(id), "%lld", strtoll(argv[i], NULL, 10));
		int one = decide_one(s, argv[0], sql, id, &o, n > 1, arr);
		/* The worst outcome decides the exit code: an error, then not
		 * found, then a refusal. */
		if (one == CLI_ERROR || (one != CLI_OK && rc == CLI_OK) ||
		    (one == CLI_NOT_FOUND && rc == CLI_REFUSED))
			rc = one;
	}
	if (arr) {
		char *text = cJSON_PrintUnformatted(arr);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(arr);
	}
	store_close(s);
	return rc;
}

int cli_approve(int argc, char **argv)
{
	return decide(argc, argv,
	              "airlock approve [--reason TEXT] [--confirm-unreadable] [--json] "
	              "[--db CONNINFO] ID...",
	              "djrU", "SELECT airlock.approve($1::bigint, $2, $3::boolean)", false, true);
}

int cli_reject(int argc, char **argv)
{
	return decide(argc, argv, "airlock reject --reason TEXT [--json] [--db CONNINFO] ID...",
	              "djr", "SELECT airlock.reject($1::bigint, $2)", true, true);
}

int cli_cancel(int argc, char **argv)
{
	return decide(argc, argv, "airlock cancel [--json] [--db CONNINFO] ID", "dj",
	              "SELECT airlock.cancel($1::bigint)", false, false);
}

/* After a record of the same state as the one before it (the row changed
 * again without a transition: the gate's rules applied, a preview noted),
 * what changed, so the two lines do not read as one written twice. */
static void print_record_changes(const cJSON *e, const cJSON *prev)
{
	const cJSON *k;
	int n = 0;

	cJSON_ArrayForEach(k, e)
	{
		const cJSON *was = cJSON_GetObjectItemCaseSensitive(prev, k->string);
		if (was != NULL && cJSON_Compare(k, was, true))
			continue;
		if (n++ == 6) {
			printf(", ...");
			break;
		}
		printf("%s", n == 1 ? " (changed: " : ", ");
		put_line(k->string);
		printf(" ");
		put_json(k);
	}
	cJSON_ArrayForEach(k, prev)
	{
		if (n >= 7 || cJSON_GetObjectItemCaseSensitive(e, k->string) != NULL)
			continue;
		printf("%s", n++ == 0 ? " (changed: " : ", ");
		put_line(k->string);
		printf(" removed");
	}
	if (n > 0)
		printf(")");
}

/* A record event (from and to both "record") for people: what the row said,
 * in a few words; the full record is in --json.  *prev is the execution
 * record before it (or NULL), replaced by this one's when it has one. */
static bool print_record(const char *at, const char *actor, const char *detail, cJSON **prev)
{
	cJSON *d = cJSON_Parse(detail);
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(d, "approval");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(d, "execution");
	bool done = true;

	if (cJSON_IsObject(a)) {
		printf("%s  %-16s record: %s by ", at, actor,
		       jstr(a, "decision") ? jstr(a, "decision") : "?");
		put_line(jstr(a, "approver") ? jstr(a, "approver") : "?");
		printf(" for payload %.12s",
		       jstr(a, "payload_hash") ? jstr(a, "payload_hash") : "?");
		if (jstr(a, "reason")) {
			printf(": ");
			put_line(jstr(a, "reason"));
		}
		printf("\n");
	} else if (cJSON_IsObject(e)) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, "exit_code");
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "stdout_bytes");
		printf("%s  %-16s record: ", at, actor);
		put_line(jstr(e, "state") ? jstr(e, "state") : "?");
		if (jstr(e, "class")) {
			printf(" class ");
			put_line(jstr(e, "class"));
		}
		if (jstr(e, "payload_hash"))
			printf(" payload %.12s", jstr(e, "payload_hash"));
		if (cJSON_IsNumber(x))
			printf(" exit %d", (int)x->valuedouble);
		if (cJSON_IsNumber(o))
			printf(" stdout %.0f bytes (sha256 %.12s)", o->valuedouble,
			       jstr(e, "stdout_sha256") ? jstr(e, "stdout_sha256") : "?");
		printf(" command sha256 %.12s",
		       jstr(e, "command_sha256") ? jstr(e, "command_sha256") : "?");
		if (*prev != NULL && jstr(e, "state") && jstr(*prev, "state") &&
		    strcmp(jstr(e, "state"), jstr(*prev, "state")) == 0)
			print_record_changes(e, *prev);
		printf("\n");
		cJSON_Delete(*prev);
		*prev = cJSON_Duplicate(e, true);
	} else {
		done = false;
	}
	cJSON_Delete(d);
	return done;
}

/* One line of `airlock history`; *prev as for print_record. */
static void print_event(const struct store_res *res, int r, cJSON **prev)
{
	char *actor = visible_str(store_get(res, r, 2), 0);
	char *from = visible_str(store_get(res, r, 3), 0);
	char *to = visible_str(store_get(res, r, 4), 0);
	char *detail = visible_str(store_get(res, r, 5), VISIBLE_JSON);

	if (strcmp(store_get(res, r, 3), "record") != 0 ||
	    strcmp(store_get(res, r, 4), "record") != 0 ||
	    !print_record(store_get(res, r, 1), actor, store_get(res, r, 5), prev))
		printf("%s  %-16s %-16s -> %-16s %s\n", store_get(res, r, 1), actor, from, to,
		       detail);
	free(actor);
	free(from);
	free(to);
	free(detail);
}

int cli_history(int argc, char **argv)
{
	const char *usage = "airlock history [--json] [--db CONNINFO] ID";
	struct opts o;
	struct store *s;
	struct store_res *res;
	char id[32];

	if (parse_opts(argc, argv, "dj", &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf("usage: %s\nEvery recorded event of one execution, oldest first.\n", usage);
		return CLI_OK;
	}
	if (parse_id(argc, argv, usage, id, sizeof(id)) < 0)
		return CLI_USAGE;
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	res = store_exec(
	    s,
	    "SELECT event_id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS'), "
	    " actor, coalesce(from_state, '-'), to_state, detail::text, "
	    " (SELECT coalesce(jsonb_agg(to_jsonb(h) ORDER BY h.event_id, "
	    "   h.from_state IS NOT DISTINCT FROM 'record'), '[]')::text "
	    "  FROM airlock.history h WHERE h.execution_id = $1::bigint) "
	    "FROM airlock.history WHERE execution_id = $1::bigint "
	    "ORDER BY event_id, from_state IS NOT DISTINCT FROM 'record'",
	    1, (const char *const[]){id});
	if (res == NULL) {
		int rc = cli_fail(s, "history");
		store_close(s);
		return rc;
	}
	if (store_nrows(res) == 0) {
		fprintf(stderr, "airlock history: execution %s has no events (no such execution)\n",
		        id);
		store_clear(res);
		store_close(s);
		return CLI_NOT_FOUND;
	}
	if (o.json) {
		printf("%s\n", store_get(res, 0, 6));
	} else {
		cJSON *prev = NULL;
		for (int r = 0; r < store_nrows(res); r++)
			print_event(res, r, &prev);
		cJSON_Delete(prev);
	}
	store_clear(res);
	store_close(s);
	return CLI_OK;
}
