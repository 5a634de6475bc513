/* sidedoor.c -- `airlock side-door`: hook denials and asks and host checks
 * as agents' hosts reported them (never verified), and what airlockd's
 * probes observed on the nodes, kept apart so that nobody takes one for the
 * other. */
#include "cli/sidedoor.h"

#include "cli/cli.h"
#include "lib/visible.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One field for a terminal, hidden characters as escapes, cut to width
 * (0: the rest of the line). */
static void field(const char *s, int width)
{
	char *v = visible_str(s ? s : "", 0);

	if (width > 0)
		printf("%-*.*s ", width, width, v);
	else
		printf("%.600s", v);
	free(v);
}

static void section(struct store_res *r, bool verified, const char *title)
{
	int shown = 0;

	for (int i = 0; i < store_nrows(r); i++) {
		char host[300];

		if ((store_get(r, i, 7)[0] == 't') != verified)
			continue;
		if (shown++ == 0) {
			printf("%s\n", title);
			printf("%-19s %-10s %-28s %-12s %-22s %s\n", "AT (UTC)", "SOURCE", "HOST",
			       "AGENT", "FINDING", "DETAIL");
		}
		if (store_get(r, i, 4)[0] != '\0')
			snprintf(host, sizeof(host), "%s (%s)", store_get(r, i, 3),
			         store_get(r, i, 4));
		else
			snprintf(host, sizeof(host), "%s", store_get(r, i, 3));
		printf("%-19s %-10s ", store_get(r, i, 0), store_get(r, i, 1));
		field(host, 28);
		field(store_get(r, i, 2), 12);
		field(store_get(r, i, 5), 22);
		field(store_get(r, i, 6), 0);
		printf("\n");
	}
	if (shown > 0)
		printf("\n");
}

int cli_side_door(int argc, char **argv)
{
	static const struct option longs[] = {{"db", required_argument, NULL, 'd'},
	                                      {"json", no_argument, NULL, 'j'},
	                                      {"limit", required_argument, NULL, 'l'},
	                                      {"help", no_argument, NULL, 'h'},
	                                      {NULL, 0, NULL, 0}};
	const char *usage = "airlock side-door [--limit N] [--json] [--db CONNINFO]";
	const char *db = NULL, *limit = "100";
	bool json = false;
	struct store *s;
	struct store_res *r;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		if (c == 'd') {
			db = optarg;
		} else if (c == 'j') {
			json = true;
		} else if (c == 'l') {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v < 1 || v > 10000) {
				fprintf(stderr, "airlock side-door: --limit takes 1..10000\n");
				return CLI_USAGE;
			}
			limit = optarg;
		} else if (c == 'h') {
			printf(
			    "usage: %s\n"
			    "What went, or tried to go, around airlock, newest first (the latest "
			    "N,\n"
			    "default 100), in two parts that are never mixed:\n"
			    "  reported by agents' hosts, not verified: the hook's denials and "
			    "asks\n"
			    "    (airlock.hook_events) and the side-door checks of `airlock hook\n"
			    "    --check` (airlock.host_checks), with the host name the agent's "
			    "host\n"
			    "    gave and the address the database saw; nothing checks what they "
			    "say;\n"
			    "  observed by airlockd on the nodes: the probes' failing\n"
			    "    access_outside_airlock and change_outside_airlock checks.\n"
			    "Text from agents' hosts is shown with hidden characters as escapes;\n"
			    "--json keeps it exact (rows of airlock.side_door).  Operators only.\n",
			    usage);
			return CLI_OK;
		} else {
			fprintf(stderr, "usage: %s\n", usage);
			return CLI_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: %s\n", usage);
		return CLI_USAGE;
	}
	s = cli_connect(db);
	if (s == NULL)
		return CLI_ERROR;
	r = store_exec(s,
	               "WITH d AS (SELECT * FROM airlock.side_door ORDER BY at DESC, id DESC "
	               " LIMIT $1::integer) "
	               "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), source, "
	               " coalesce(agent, '-'), host, coalesce(host(client_addr), ''), "
	               " coalesce(finding, ''), coalesce(detail, ''), verified, "
	               " (SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.at DESC, x.id DESC), "
	               "  '[]')::text FROM d x) "
	               "FROM d ORDER BY at DESC, id DESC",
	               1, (const char *const[]){limit});
	if (r == NULL) {
		int rc = cli_fail(s, "side-door");
		store_close(s);
		return rc;
	}
	if (json) {
		printf("%s\n", store_nrows(r) > 0 ? store_get(r, 0, 8) : "[]");
	} else if (store_nrows(r) == 0) {
		printf("nothing reported: no hook denial or ask, no host check, no probe "
		       "finding\n");
	} else {
		section(r, false, "Reported by agents' hosts, not verified:");
		section(r, true, "Observed by airlockd on the nodes:");
	}
	store_clear(r);
	store_close(s);
	return CLI_OK;
}

void cli_side_door_line(struct store *s)
{
	struct store_res *r =
	    store_exec(s,
	               "SELECT denials, asks, hosts_open, coalesce(open_hosts, '') FROM "
	               "airlock.side_door_summary()",
	               0, NULL);

	if (r != NULL && store_nrows(r) == 1 &&
	    (atoi(store_get(r, 0, 0)) > 0 || atoi(store_get(r, 0, 1)) > 0 ||
	     atoi(store_get(r, 0, 2)) > 0)) {
		printf("!! side door: %s hook denial(s) and %s ask(s) in the last 24 h",
		       store_get(r, 0, 0), store_get(r, 0, 1));
		if (atoi(store_get(r, 0, 2)) > 0) {
			char *hosts = visible_str(store_get(r, 0, 3), 0);

			printf(", %s agent host(s) with an open door (%.200s)", store_get(r, 0, 2),
			       hosts);
			free(hosts);
		}
		printf(", reported by agents' hosts, not verified: airlock side-door\n\n");
	}
	store_clear(r);
}
