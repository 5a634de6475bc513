/* output.c -- `airlock output show|release|discard ID` and `airlock output list`:
 * output airlockd held because it carries secret material.  Reading it needs
 * SELECT on airlock.output_holds (operators); each decision is one SQL
 * function call, so the rules live in the database. */
#include "cli/cli.h"

#include "lib/visible.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: airlock output list [--json] [--db CONNINFO]\n"
    "       airlock output show [--json] [--db CONNINFO] ID\n"
    "       airlock output release --reason TEXT [--json] [--db CONNINFO] ID\n"
    "       airlock output discard --reason TEXT [--json] [--db CONNINFO] ID\n";

static void help(void)
{
	printf("%s\n"
	       "airlockd scans the output of every command nobody approved, and of every\n"
	       "preview, before it records it.  Output that carries secret material (a private\n"
	       "key, a password hash, a token, a password setting: docs/operators.md lists\n"
	       "what is recognised) is held: the request is final as it ran, and only\n"
	       "operators read its stdout, stderr and, when it matched too, its error.\n\n"
	       "  list     the held output waiting for a decision, oldest first\n"
	       "  show     the held output of request ID, hidden characters as escapes\n"
	       "           (--json: exact); a decided one says who decided and why\n"
	       "  release  gives it to the request: the agent reads it with get_execution\n"
	       "  discard  erases it; the agent is told it was discarded and why\n\n"
	       "release and discard need --reason (recorded in the request's history, and the\n"
	       "agent reads it); both are chained events.  Only an operator's own login may\n"
	       "decide (not a superuser, not an agent: permission denied or AL009, exit 3).\n"
	       "Exit codes: 0 done; 1 error; 2 usage; 3 refused (already decided, not allowed);\n"
	       "4 no held output for ID.\n",
	       usage_text);
}

struct oopts {
	const char *db, *reason, *id;
	bool json;
};

static int parse(int argc, char **argv, struct oopts *o, bool *want_help)
{
	static const struct option longs[] = {{"db", required_argument, NULL, 'd'},
	                                      {"json", no_argument, NULL, 'j'},
	                                      {"reason", required_argument, NULL, 'r'},
	                                      {"help", no_argument, NULL, 'h'},
	                                      {NULL, 0, NULL, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	*want_help = false;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		if (c == 'd')
			o->db = optarg;
		else if (c == 'j')
			o->json = true;
		else if (c == 'r')
			o->reason = optarg;
		else if (c == 'h')
			*want_help = true;
		else
			return -1;
	}
	if (optind < argc)
		o->id = argv[optind++];
	if (optind != argc)
		return -1;
	if (o->id) {
		char *end;
		errno = 0;
		long long v = strtoll(o->id, &end, 10);
		if (errno || *end || v <= 0) {
			fprintf(stderr, "airlock output: '%s' is not an execution id\n", o->id);
			return -1;
		}
	}
	return 0;
}

static void put(const char *label, const char *s)
{
	char *v = visible_str(s, 0);

	printf("  %-12s %s\n", label, v);
	free(v);
}

static int list(struct store *s, bool json)
{
	struct store_res *r = store_exec(
	    s,
	    "SELECT id, to_char(justify_interval(date_trunc('second', age)), 'HH24:MI:SS'), "
	    " target, requested_by, label, line, stream, state, command, "
	    " (SELECT coalesce(jsonb_agg(to_jsonb(h) - 'age' ORDER BY h.held_at), '[]')::text "
	    "  FROM airlock.held_output h) "
	    "FROM airlock.held_output",
	    0, NULL);

	if (r == NULL)
		return cli_fail(s, "output list");
	if (json)
		printf("%s\n", store_nrows(r) > 0 ? store_get(r, 0, 9) : "[]");
	else if (store_nrows(r) == 0)
		printf("no output is held\n");
	for (int i = 0; !json && i < store_nrows(r); i++) {
		char *tgt = visible_str(store_get(r, i, 2), 0),
		     *who = visible_str(store_get(r, i, 3), 0);
		char *cmd = visible_str(store_get(r, i, 8), 0);
		printf("%-6s %-9s %-24s %-16s %s at line %s of %s (%s)\n       $ %.200s\n",
		       store_get(r, i, 0), store_get(r, i, 1), tgt, who, store_get(r, i, 4),
		       store_get(r, i, 5), store_get(r, i, 6), store_get(r, i, 7), cmd);
		free(tgt);
		free(who);
		free(cmd);
	}
	store_clear(r);
	return CLI_OK;
}

/* bytea's text form ("\\x4142...") back into bytes; the caller frees. */
static char *unhex(const char *s, size_t *len)
{
	size_t n = 0;
	char *out;

	*len = 0;
	if (s[0] != '\\' || s[1] != 'x')
		return NULL;
	s += 2;
	out = malloc(strlen(s) / 2 + 1);
	if (out == NULL)
		return NULL;
	for (; s[0] && s[1]; s += 2) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (char)v;
	}
	out[n] = '\0';
	*len = n;
	return out;
}

/* A held stream as a block, line by line, every byte that is not plain text
 * (control characters, invalid UTF-8, NUL) shown as an escape. */
static void block(const char *name, const char *hex, bool is_null)
{
	struct visible_info vi;
	size_t n;
	char *data, *v;

	if (is_null || (data = unhex(hex, &n)) == NULL)
		return;
	v = visible_text(data, n, VISIBLE_LINES, 0, &vi);
	printf("--- %s\n%s%s", name, v, v[0] && v[strlen(v) - 1] != '\n' ? "\n" : "");
	free(v);
	free(data);
}

static int show(struct store *s, const char *id, bool json)
{
	struct store_res *r = store_exec(
	    s,
	    "SELECT h.state, h.kind, h.label, h.stream, h.line, e.target, e.requested_by, "
	    " e.command, e.state, coalesce(e.exit_code::text, '-'), "
	    " h.stdout, h.stderr, convert_to(h.error, 'UTF8'), "
	    " coalesce(h.decided_by, ''), coalesce(h.reason, ''), "
	    " coalesce(to_char(h.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), "
	    "''), "
	    " (to_jsonb(h) - 'stdout' - 'stderr' || jsonb_build_object("
	    "  'stdout_base64', encode(h.stdout, 'base64'), "
	    "  'stderr_base64', encode(h.stderr, 'base64')))::text "
	    "FROM airlock.output_holds h JOIN airlock.executions e ON e.id = h.execution_id "
	    "WHERE h.execution_id = $1::bigint",
	    1, (const char *const[]){id});

	if (r == NULL)
		return cli_fail(s, "output show");
	if (store_nrows(r) == 0) {
		fprintf(stderr, "airlock output show: execution %s has no held output\n", id);
		store_clear(r);
		return CLI_NOT_FOUND;
	}
	if (json) {
		printf("%s\n", store_get(r, 0, 16));
		store_clear(r);
		return CLI_OK;
	}
	printf("execution %s: output %s: it contains %s at line %s of %s\n", id, store_get(r, 0, 0),
	       store_get(r, 0, 2), store_get(r, 0, 4), store_get(r, 0, 3));
	put("target", store_get(r, 0, 5));
	put("requested_by", store_get(r, 0, 6));
	put("command", store_get(r, 0, 7));
	printf("  %-12s %s, exit code %s\n", "state", store_get(r, 0, 8), store_get(r, 0, 9));
	if (strcmp(store_get(r, 0, 0), "held") != 0) {
		printf("  %-12s %s by ", store_get(r, 0, 0), store_get(r, 0, 15));
		char *who = visible_str(store_get(r, 0, 13), 0),
		     *why = visible_str(store_get(r, 0, 14), 0);
		printf("%s: %s\n", who, why);
		free(who);
		free(why);
		if (strcmp(store_get(r, 0, 0), "released") == 0)
			printf("  (released output is the request's own: airlock show %s)\n", id);
	} else {
		block("stdout", store_get(r, 0, 10), store_isnull(r, 0, 10));
		block("stderr", store_get(r, 0, 11), store_isnull(r, 0, 11));
		block("error", store_get(r, 0, 12), store_isnull(r, 0, 12));
		printf(
		    "--- release it to the agent with `airlock output release %s --reason ...`, or "
		    "erase it with `airlock output discard %s --reason ...`\n",
		    id, id);
	}
	store_clear(r);
	return CLI_OK;
}

static int decide(struct store *s, const char *verb, const char *id, const char *reason, bool json)
{
	char what[32];
	struct store_res *r = store_exec(s,
	                                 strcmp(verb, "release") == 0
	                                     ? "SELECT airlock.output_release($1::bigint, $2)"
	                                     : "SELECT airlock.output_discard($1::bigint, $2)",
	                                 2, (const char *const[]){id, reason});

	snprintf(what, sizeof(what), "output %s", verb);
	if (r == NULL)
		return cli_fail(s, what);
	if (json)
		printf("{\"id\":%s,\"output\":\"%s\"}\n", id, store_get(r, 0, 0));
	else
		printf("execution %s: output %s\n", id, store_get(r, 0, 0));
	store_clear(r);
	return CLI_OK;
}

int cli_output(int argc, char **argv)
{
	struct oopts o;
	struct store *s;
	bool want_help;
	const char *verb = argc > 1 ? argv[1] : NULL;
	int rc;

	if (verb == NULL || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		if (verb == NULL) {
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
		help();
		return CLI_OK;
	}
	if (strcmp(verb, "list") != 0 && strcmp(verb, "show") != 0 &&
	    strcmp(verb, "release") != 0 && strcmp(verb, "discard") != 0) {
		fprintf(stderr, "airlock output: unknown subcommand '%s'\n%s", verb, usage_text);
		return CLI_USAGE;
	}
	if (parse(argc - 1, argv + 1, &o, &want_help) < 0) {
		fputs(usage_text, stderr);
		return CLI_USAGE;
	}
	if (want_help) {
		help();
		return CLI_OK;
	}
	if ((strcmp(verb, "list") == 0) != (o.id == NULL)) {
		fputs(usage_text, stderr);
		return CLI_USAGE;
	}
	bool deciding = strcmp(verb, "release") == 0 || strcmp(verb, "discard") == 0;
	if (deciding && (o.reason == NULL || o.reason[0] == '\0')) {
		fprintf(
		    stderr,
		    "airlock output %s: --reason is required; it is recorded and the agent reads "
		    "it\n",
		    verb);
		return CLI_USAGE;
	}
	if (!deciding && o.reason) {
		fprintf(stderr, "airlock output %s: --reason is for release and discard\n", verb);
		return CLI_USAGE;
	}
	s = deciding ? cli_connect_write(o.db) : cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	if (strcmp(verb, "list") == 0)
		rc = list(s, o.json);
	else if (strcmp(verb, "show") == 0)
		rc = show(s, o.id, o.json);
	else
		rc = decide(s, verb, o.id, o.reason, o.json);
	store_close(s);
	return rc;
}
