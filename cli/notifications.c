/* notifications.c -- `airlock notifications` and `airlock previews`: what the
 * webhooks were sent, and the previews of a held request. */
#include "cli/cli.h"

#include "lib/visible.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nopts {
	const char *db;
	bool json, failed, help, show_held;
	const char *id;
};

/* with_failed: notifications' --failed; else previews' --show-held. */
static int parse(int argc, char **argv, bool with_failed, struct nopts *o)
{
	static const struct option longs[] = {
	    {"db", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
	    {"failed", no_argument, NULL, 'f'},   {"show-held", no_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		if (c == 'd')
			o->db = optarg;
		else if (c == 'j')
			o->json = true;
		else if (c == 'f' && with_failed)
			o->failed = true;
		else if (c == 'S' && !with_failed)
			o->show_held = true;
		else if (c == 'h')
			o->help = true;
		else
			return -1;
	}
	if (optind < argc)
		o->id = argv[optind++];
	if (optind != argc)
		return -1;
	if (o->id && strspn(o->id, "0123456789") != strlen(o->id)) {
		fprintf(stderr, "airlock %s: %s is not an execution id\n", argv[0], o->id);
		return -1;
	}
	return 0;
}

/* One field for a terminal: hidden characters as escapes. */
static void field(const char *s, int width)
{
	char *v = visible_str(s, 0);

	printf("%-*s ", width, v);
	free(v);
}

int cli_notifications(int argc, char **argv)
{
	const char *usage = "airlock notifications [ID] [--failed] [--json] [--db CONNINFO]";
	struct nopts o;
	struct store *s;
	struct store_res *r;

	if (parse(argc, argv, true, &o) < 0) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	if (o.help) {
		printf("usage: %s\n"
		       "Lists webhook deliveries, newest first (the latest 50, or every one of\n"
		       "execution ID): the event, the webhook, its state (pending, delivered,\n"
		       "failed), attempts and the last error.  --failed: only those that failed\n"
		       "for good.  Operators only (airlock.notification_status).\n",
		       usage);
		return CLI_OK;
	}
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	r = store_exec(s,
	               "SELECT id, execution_id, event, hook, state, attempts, "
	               " coalesce(last_status::text, '-'), coalesce(last_error, ''), "
	               " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "
	               " (SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.id DESC), '[]')::text "
	               "  FROM (SELECT * FROM airlock.notification_status n "
	               "        WHERE ($1::bigint IS NULL OR n.execution_id = $1::bigint) "
	               "          AND (NOT $2::boolean OR n.state = 'failed') "
	               "        ORDER BY n.id DESC LIMIT CASE WHEN $1 IS NULL THEN 50 END) x) "
	               "FROM airlock.notification_status "
	               "WHERE ($1::bigint IS NULL OR execution_id = $1::bigint) "
	               "  AND (NOT $2::boolean OR state = 'failed') "
	               "ORDER BY id DESC LIMIT CASE WHEN $1 IS NULL THEN 50 END",
	               2, (const char *const[]){o.id, o.failed ? "true" : "false"});
	if (r == NULL) {
		int rc = cli_fail(s, "notifications");
		store_close(s);
		return rc;
	}
	if (o.json) {
		printf("%s\n", store_nrows(r) > 0 ? store_get(r, 0, 9) : "[]");
	} else if (store_nrows(r) == 0) {
		printf("no webhook deliveries%s\n", o.failed ? " failed" : "");
	} else {
		printf("%-19s %-8s %-17s %-16s %-9s %-3s %-4s %s\n", "CREATED (UTC)", "EXEC",
		       "EVENT", "WEBHOOK", "STATE", "TRY", "HTTP", "LAST ERROR");
		for (int i = 0; i < store_nrows(r); i++) {
			printf("%-19s %-8s %-17s ", store_get(r, i, 8), store_get(r, i, 1),
			       store_get(r, i, 2));
			field(store_get(r, i, 3), 16);
			printf("%-9s %-3s %-4s ", store_get(r, i, 4), store_get(r, i, 5),
			       store_get(r, i, 6));
			char *e = visible_str(store_get(r, i, 7), 0);
			printf("%s\n", e);
			free(e);
		}
	}
	store_clear(r);
	store_close(s);
	return CLI_OK;
}

int cli_previews(int argc, char **argv)
{
	const char *usage = "airlock previews ID [--show-held] [--json] [--db CONNINFO]";
	struct nopts o;
	struct store *s;
	struct store_res *r;

	if (parse(argc, argv, false, &o) < 0 || (!o.help && o.id == NULL)) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	if (o.help) {
		printf("usage: %s\n"
		       "Shows the read-only previews airlockd ran when request ID was held\n"
		       "(apt-get -s for an install, qm config for a destroy, ...): each command,\n"
		       "its exit code and output, or why it did not run.  Output is shown with\n"
		       "hidden characters as escapes; --json keeps it exact.  Output that carries\n"
		       "secret material (a key, a password hash, a token) is held: its place says\n"
		       "what it contains and where, and --show-held (or --json) prints it.\n"
		       "Operators only.\n",
		       usage);
		return CLI_OK;
	}
	s = cli_connect(o.db);
	if (s == NULL)
		return CLI_ERROR;
	r = store_exec(
	    s,
	    "SELECT ord, command, coalesce(exit_code::text, '-'), coalesce(stdout, ''), "
	    " coalesce(stderr, ''), truncated, coalesce(error, ''), "
	    " (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.ord), '[]')::text "
	    "  FROM airlock.execution_previews p WHERE p.execution_id = $1::bigint), "
	    " CASE WHEN hold IS NOT NULL THEN format('output held: it contains %s at line %s of "
	    "  %s; --show-held prints it', hold->>'label', hold->>'line', hold->>'stream') END "
	    "FROM airlock.execution_previews WHERE execution_id = $1::bigint ORDER BY ord",
	    1, (const char *const[]){o.id});
	if (r == NULL) {
		int rc = cli_fail(s, "previews");
		store_close(s);
		return rc;
	}
	if (o.json) {
		printf("%s\n", store_nrows(r) > 0 ? store_get(r, 0, 7) : "[]");
	} else if (store_nrows(r) == 0) {
		printf("execution %s has no previews (not held, no preview named by its rule, or "
		       "not yet run)\n",
		       o.id);
	}
	for (int i = 0; !o.json && i < store_nrows(r); i++) {
		char *cmd = visible_str(store_get(r, i, 1), 0);
		char *out = visible_str(store_get(r, i, 3), VISIBLE_LINES);
		char *err = visible_str(store_get(r, i, 4), VISIBLE_LINES);
		char *why = visible_str(store_get(r, i, 6), 0);
		printf("preview %s: %s\n", store_get(r, i, 0), cmd[0] ? cmd : "(none)");
		if (why[0])
			printf("  %s\n", why);
		else
			printf("  exit %s%s\n", store_get(r, i, 2),
			       store_get(r, i, 5)[0] == 't' ? " (output truncated)" : "");
		bool held = !store_isnull(r, i, 8);
		if (held)
			printf("  %s\n", store_get(r, i, 8));
		if (out[0] && (!held || o.show_held))
			printf("--- stdout\n%s%s", out, out[strlen(out) - 1] == '\n' ? "" : "\n");
		if (err[0] && (!held || o.show_held))
			printf("--- stderr\n%s%s", err, err[strlen(err) - 1] == '\n' ? "" : "\n");
		free(cmd);
		free(out);
		free(err);
		free(why);
	}
	store_clear(r);
	store_close(s);
	return CLI_OK;
}
