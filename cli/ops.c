/* ops.c -- the queue from the command line: run, show, pending, approve,
 * reject, cancel, history, audit verify.  Every action is one SQL function
 * call, so the rules live in the database and hold for every client. */
#include "cli/cli.h"

#include "lib/buf.h"
#include "lib/deadline.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
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
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct opts {
	const char *db, *reason, *target, *risk, *change_id, *action;
	bool json, help, wait;
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

/* One line per reason: the classifier's {segment, text, rule, words, class,
 * target} objects, or plain strings. */
static void print_reasons(const cJSON *reasons, const char *indent)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, reasons)
	{
		if (cJSON_IsString(r)) {
			printf("%s%s\n", indent, r->valuestring);
			continue;
		}
		const char *text = jstr(r, "text"), *rule = jstr(r, "rule"),
		           *words = jstr(r, "words");
		const char *cls = jstr(r, "class"), *target = jstr(r, "target");
		int seg = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "segment"));
		if (rule == NULL || cls == NULL) {
			char *s = cJSON_PrintUnformatted(r);
			printf("%s%s\n", indent, s);
			free(s);
			continue;
		}
		printf("%ssegment %d: %s (rule %s%s%s)%s%s => %s\n", indent, seg, text ? text : "",
		       rule, words && words[0] ? ": " : "", words ? words : "",
		       target ? " on " : "", target ? target : "", cls);
	}
}

/* Prints an execution's JSON (from airlock.get_execution) for people. */
static void print_execution(const cJSON *e)
{
	static const char *const fields[] = {
	    "state",      "target",        "class",          "requested_by", "change_id",
	    "action",     "declared_risk", "policy_version", "created_at",   "classified_at",
	    "expires_at", "decided_at",    "started_at",     "finished_at",  "rewind_status",
	    "exit_code",  "signal",        "duration_ms",    "error",
	};
	const cJSON *v;

	printf("execution %.0f\n", cJSON_GetNumberValue(cJSON_GetObjectItem(e, "id")));
	printf("  %-15s %s\n", "command", jstr(e, "command") ? jstr(e, "command") : "");
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		v = cJSON_GetObjectItemCaseSensitive(e, fields[i]);
		if (v == NULL)
			continue;
		if (cJSON_IsString(v))
			printf("  %-15s %s\n", fields[i], v->valuestring);
		else if (cJSON_IsNumber(v))
			printf("  %-15s %.0f\n", fields[i], v->valuedouble);
	}
	if (jstr(e, "confinement")) /* how it ran: the read-only jail's tier, or none */
		printf("  %-15s %s\n", "confinement",
		       strcmp(jstr(e, "confinement"), "user") == 0
		           ? "read-only jail, unprivileged (user tier)"
		       : strcmp(jstr(e, "confinement"), "root") == 0
		           ? "read-only jail, uid 0 without capabilities (root tier)"
		           : "none (ran unconfined)");
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
			printf("    %s %s at %s%s%s\n", jstr(a, "decision"), jstr(a, "by"),
			       jstr(a, "at"), jstr(a, "reason") ? ": " : "",
			       jstr(a, "reason") ? jstr(a, "reason") : "");
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(e, "rewind_points");
	if (v && !cJSON_IsNull(v)) {
		char *s = cJSON_PrintUnformatted(v);
		printf("  rewind_points   %s\n", s);
		free(s);
	}
	if (jstr(e, "stdout")) {
		const cJSON *t = cJSON_GetObjectItem(e, "stdout_truncated");
		printf("  stdout%s\n%s", cJSON_IsTrue(t) ? " (truncated)" : "", jstr(e, "stdout"));
		if (jstr(e, "stdout")[0] &&
		    jstr(e, "stdout")[strlen(jstr(e, "stdout")) - 1] != '\n')
			printf("\n");
	}
	if (jstr(e, "stderr") && jstr(e, "stderr")[0]) {
		const cJSON *t = cJSON_GetObjectItem(e, "stderr_truncated");
		printf("  stderr%s\n%s", cJSON_IsTrue(t) ? " (truncated)" : "", jstr(e, "stderr"));
		if (jstr(e, "stderr")[strlen(jstr(e, "stderr")) - 1] != '\n')
			printf("\n");
	}
	printf("  next step: %s\n", jstr(e, "next_step") ? jstr(e, "next_step") : "");
}

/* Fetches get_execution(id) as text; NULL with the error on s. */
static char *fetch_execution(struct store *s, const char *id)
{
	PGresult *res = store_exec(s, "SELECT airlock.get_execution($1::bigint)::text", 1,
	                           (const char *const[]){id});
	char *out;

	if (res == NULL)
		return NULL;
	out = xstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
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

static bool is_final(const char *state)
{
	static const char *const finals[] = {"rejected",  "expired",        "cancelled",
	                                     "refused",   "succeeded",      "failed",
	                                     "timed_out", "outcome_unknown"};
	for (size_t i = 0; i < sizeof(finals) / sizeof(finals[0]); i++)
		if (strcmp(state, finals[i]) == 0)
			return true;
	return false;
}

/* The row's state now, or NULL (error on s); caller frees. */
static char *current_state(struct store *s, const char *id)
{
	PGresult *res = store_exec(s, "SELECT airlock.get_execution($1::bigint) ->> 'state'", 1,
	                           (const char *const[]){id});
	char *st;

	if (res == NULL)
		return NULL;
	st = xstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return st;
}

/* Waits (LISTEN airlock_state, no polling) until the row is final or the
 * time is up.  0 when final, 1 when still in flight, -1 on error. */
static int wait_final(struct store *s, const char *id, long seconds)
{
	PGconn *conn = store_conn(s);
	int64_t start = deadline_now_ms();
	PGresult *res;
	int rc = -1;

	res = store_exec(s, "LISTEN airlock_state", 0, NULL);
	if (res == NULL)
		return -1;
	PQclear(res);
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
		struct pollfd pfd = {.fd = PQsocket(conn), .events = POLLIN};
		if (poll(&pfd, 1, (int)(left_ms > 60000 ? 60000 : left_ms)) < 0 && errno != EINTR) {
			store_set_error(s, "poll: %s", strerror(errno));
			break;
		}
		if (!PQconsumeInput(conn)) {
			store_set_error(s, "%s", PQerrorMessage(conn));
			break;
		}
		PGnotify *n;
		while ((n = PQnotifies(conn)) != NULL)
			PQfreemem(n);
	}
	PQclear(PQexec(conn, "UNLISTEN airlock_state"));
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
	PGresult *res;
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
	s = cli_connect(o.db);
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
	snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
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
	rc = st && strcmp(st, "succeeded") == 0 ? CLI_OK : CLI_ERROR;
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

int cli_pending(int argc, char **argv)
{
	const char *usage = "airlock pending [--json] [--db CONNINFO]";
	struct opts o;
	struct store *s;
	PGresult *res;

	if (parse_opts(argc, argv, "dj", &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf("usage: %s\nLists requests waiting for approval, oldest first.\n", usage);
		return CLI_OK;
	}
	if (optind != argc) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	res = store_exec(
	    s,
	    "SELECT id, target, class, requested_by, "
	    " to_char(justify_interval(date_trunc('second', age)), 'HH24:MI:SS'), "
	    " CASE WHEN expires_in IS NULL THEN '-' WHEN expires_in < interval '0' THEN 'expired' "
	    "  ELSE to_char(justify_interval(date_trunc('second', expires_in)), 'HH24:MI:SS') END, "
	    " approvals || '/' || approvals_required, coalesce(rewind_status, '-'), command, "
	    " coalesce(reasons, '[]')::text, "
	    " (SELECT coalesce(jsonb_agg(to_jsonb(p) - 'age' - 'expires_in'), '[]')::text "
	    "  FROM airlock.pending p) "
	    "FROM airlock.pending",
	    0, NULL);
	if (res == NULL) {
		int rc = cli_fail(s, "pending");
		store_close(s);
		return rc;
	}
	if (o.json) {
		if (PQntuples(res) > 0)
			printf("%s\n", PQgetvalue(res, 0, 10));
		else
			printf("[]\n");
	} else if (PQntuples(res) == 0) {
		printf("nothing is waiting for approval\n");
	} else {
		printf("%-6s %-9s %-9s %-16s %-24s %-16s %-5s %s\n", "ID", "AGE", "EXPIRES",
		       "CLASS", "TARGET", "REQUESTER", "VOTES", "REWIND");
		for (int r = 0; r < PQntuples(res); r++) {
			printf("%-6s %-9s %-9s %-16s %-24s %-16s %-5s %s\n", PQgetvalue(res, r, 0),
			       PQgetvalue(res, r, 4), PQgetvalue(res, r, 5), PQgetvalue(res, r, 2),
			       PQgetvalue(res, r, 1), PQgetvalue(res, r, 3), PQgetvalue(res, r, 6),
			       PQgetvalue(res, r, 7));
			printf("       $ %.200s\n", PQgetvalue(res, r, 8));
			cJSON *reasons = cJSON_Parse(PQgetvalue(res, r, 9));
			print_reasons(reasons, "       ");
			cJSON_Delete(reasons);
		}
	}
	PQclear(res);
	store_close(s);
	return CLI_OK;
}

/* approve / reject / cancel: one function call on one id. */
static int decide(int argc, char **argv, const char *usage, const char *allowed, const char *sql,
                  bool reason_required)
{
	struct opts o;
	struct store *s;
	PGresult *res;
	char id[32];
	int rc = CLI_OK;

	if (parse_opts(argc, argv, allowed, &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf("usage: %s\n", usage);
		return CLI_OK;
	}
	if (parse_id(argc, argv, usage, id, sizeof(id)) < 0)
		return CLI_USAGE;
	if (reason_required && (o.reason == NULL || o.reason[0] == '\0')) {
		fprintf(stderr,
		        "airlock %s: --reason is required; it is sent back to the requester\n",
		        argv[0]);
		return CLI_USAGE;
	}
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	res = store_exec(s, sql, strchr(allowed, 'r') ? 2 : 1, (const char *const[]){id, o.reason});
	if (res == NULL) {
		rc = cli_fail(s, argv[0]);
		store_close(s);
		return rc;
	}
	const char *state = PQgetvalue(res, 0, 0);
	if (o.json)
		printf("{\"id\":%s,\"state\":\"%s\"}\n", id, state);
	else if (strcmp(argv[0], "approve") == 0 && strcmp(state, "pending_approval") == 0)
		printf("execution %s: your approval is recorded; it needs more approvers\n", id);
	else if (strcmp(argv[0], "approve") == 0 && strcmp(state, "expired") == 0)
		printf("execution %s: expired before your approval; nothing will run\n", id);
	else
		printf("execution %s: %s\n", id, state);
	if (strcmp(argv[0], "approve") == 0 && strcmp(state, "expired") == 0)
		rc = CLI_REFUSED;
	PQclear(res);
	store_close(s);
	return rc;
}

int cli_approve(int argc, char **argv)
{
	return decide(argc, argv, "airlock approve [--reason TEXT] [--json] [--db CONNINFO] ID",
	              "djr", "SELECT airlock.approve($1::bigint, $2)", false);
}

int cli_reject(int argc, char **argv)
{
	return decide(argc, argv, "airlock reject --reason TEXT [--json] [--db CONNINFO] ID", "djr",
	              "SELECT airlock.reject($1::bigint, $2)", true);
}

int cli_cancel(int argc, char **argv)
{
	return decide(argc, argv, "airlock cancel [--json] [--db CONNINFO] ID", "dj",
	              "SELECT airlock.cancel($1::bigint)", false);
}

int cli_history(int argc, char **argv)
{
	const char *usage = "airlock history [--json] [--db CONNINFO] ID";
	struct opts o;
	struct store *s;
	PGresult *res;
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
	    " (SELECT coalesce(jsonb_agg(to_jsonb(h) ORDER BY h.event_id), '[]')::text "
	    "  FROM airlock.history h WHERE h.execution_id = $1::bigint) "
	    "FROM airlock.history WHERE execution_id = $1::bigint ORDER BY event_id",
	    1, (const char *const[]){id});
	if (res == NULL) {
		int rc = cli_fail(s, "history");
		store_close(s);
		return rc;
	}
	if (PQntuples(res) == 0) {
		fprintf(stderr, "airlock history: execution %s has no events (no such execution)\n",
		        id);
		PQclear(res);
		store_close(s);
		return CLI_NOT_FOUND;
	}
	if (o.json) {
		printf("%s\n", PQgetvalue(res, 0, 6));
	} else {
		for (int r = 0; r < PQntuples(res); r++)
			printf("%s  %-16s %-16s -> %-16s %s\n", PQgetvalue(res, r, 1),
			       PQgetvalue(res, r, 2), PQgetvalue(res, r, 3), PQgetvalue(res, r, 4),
			       PQgetvalue(res, r, 5));
	}
	PQclear(res);
	store_close(s);
	return CLI_OK;
}

int cli_audit(int argc, char **argv)
{
	const char *usage = "airlock audit verify [--json] [--db CONNINFO]";
	struct opts o;
	struct store *s;
	PGresult *res;
	int rc;

	if (parse_opts(argc, argv, "dj", &o) < 0)
		return CLI_USAGE;
	if (o.help) {
		printf(
		    "usage: %s\nWalks the hash chain of every event; names the first broken link.\n"
		    "Exit 0 when intact, 3 when broken.\n",
		    usage);
		return CLI_OK;
	}
	if (optind != argc - 1 || strcmp(argv[optind], "verify") != 0) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	res = store_exec(s, "SELECT checked, first_broken, detail FROM airlock.audit_verify()", 0,
	                 NULL);
	if (res == NULL) {
		rc = cli_fail(s, "audit verify");
		store_close(s);
		return rc;
	}
	bool broken = !PQgetisnull(res, 0, 1);
	if (o.json)
		printf("{\"checked\":%s,\"intact\":%s,\"first_broken\":%s}\n",
		       PQgetvalue(res, 0, 0), broken ? "false" : "true",
		       broken ? PQgetvalue(res, 0, 1) : "null");
	else if (broken)
		printf("audit: BROKEN at %s (%s events verified before it)\n",
		       PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 0));
	else
		printf("audit: intact, %s events verified\n", PQgetvalue(res, 0, 0));
	rc = broken ? CLI_REFUSED : CLI_OK;
	PQclear(res);
	store_close(s);
	return rc;
}
