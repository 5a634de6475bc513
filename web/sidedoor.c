/* sidedoor.c -- the console's side-door page and its line on the pending
 * page: what agents' hosts reported (never verified) and what airlockd's
 * probes observed on the nodes, in two tables that are never mixed. */
#include "web/pages.h"

#include "web/html.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIDE_DOOR_ROWS   200 /* rows of each table */
#define DETAIL_SHOW_MAX  600 /* bytes of a detail shown */
#define SIDE_DOOR_WINDOW "24 hours"

static const char *cell(const struct store_res *r, int row, int c)
{
	return store_isnull(r, row, c) ? "" : store_get(r, row, c);
}

int page_side_door_line(struct buf *out, struct store *db)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT probe_findings, denials, asks, hosts_open, coalesce(open_hosts, '') FROM "
	    "airlock.side_door_summary()",
	    0, NULL);
	int probes, denials, asks, open;

	if (r == NULL)
		return -1;
	probes = atoi(store_get(r, 0, 0));
	denials = atoi(store_get(r, 0, 1));
	asks = atoi(store_get(r, 0, 2));
	open = atoi(store_get(r, 0, 3));
	if (probes + denials + asks + open > 0) {
		buf_puts(out,
		         "<p class=\"error sidedoor\" id=\"side-door-line\"><a href=\"/side-door\">"
		         "Side door: ");
		if (probes > 0)
			buf_printf(out, "%d finding(s) observed on the nodes; ", probes);
		buf_printf(out, "%d hook denial(s) and %d ask(s) in the last 24 h", denials, asks);
		if (open > 0) {
			buf_printf(out, ", %d agent host(s) with an open door (", open);
			html_text_cut(out, store_get(r, 0, 4), 200);
			buf_puts(out, ")");
		}
		if (denials + asks + open > 0)
			buf_puts(out, ", reported by agents' hosts, not verified");
		buf_puts(out, ".</a></p>");
	}
	store_clear(r);
	return 0;
}

static void table(struct buf *out, struct store_res *r, bool verified)
{
	int n = 0;

	buf_printf(out,
	           "<table class=\"sidedoor\" id=\"%s\"><thead><tr><th>When</th><th>Source</th>"
	           "<th>%s</th><th>Agent</th><th>Finding</th><th>Detail</th></tr></thead><tbody>",
	           verified ? "observed" : "reported", verified ? "Node" : "Host (address seen)");
	for (int i = 0; i < store_nrows(r); i++) {
		if ((cell(r, i, 7)[0] == 't') != verified)
			continue;
		n++;
		buf_puts(out, "<tr><td>");
		html_text(out, cell(r, i, 0));
		buf_puts(out, "</td><td>");
		html_text(out, cell(r, i, 1));
		buf_puts(out, "</td><td>");
		html_text(out, cell(r, i, 3));
		if (cell(r, i, 4)[0] != '\0') {
			buf_puts(out, " (");
			html_text(out, cell(r, i, 4));
			buf_puts(out, ")");
		}
		buf_puts(out, "</td><td>");
		html_text(out, cell(r, i, 2));
		buf_puts(out, "</td><td>");
		html_text(out, cell(r, i, 5));
		buf_puts(out, "</td><td>");
		html_text_cut(out, cell(r, i, 6), DETAIL_SHOW_MAX);
		buf_puts(out, "</td></tr>");
	}
	buf_puts(out, "</tbody></table>");
	if (n == 0)
		buf_puts(out, "<p class=\"calm\">None.</p>");
}

int page_side_door(struct buf *out, struct store *db, const struct page_ctx *pc)
{
	char limit[16];
	struct store_res *r;

	snprintf(limit, sizeof(limit), "%d", SIDE_DOOR_ROWS);
	r = store_exec(
	    db,
	    "(SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), "
	    "  source, agent, host, host(client_addr), finding, detail, verified, at, id "
	    "  FROM airlock.side_door WHERE NOT verified ORDER BY at DESC, id DESC "
	    "  LIMIT $1::integer) "
	    "UNION ALL "
	    "(SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), "
	    "  source, agent, host, host(client_addr), finding, detail, verified, at, id "
	    "  FROM airlock.side_door WHERE verified ORDER BY at DESC "
	    "  LIMIT $1::integer) "
	    "ORDER BY 9 DESC, 10 DESC",
	    1, (const char *const[]){limit});
	if (r == NULL)
		return -1;
	page_begin(out, pc, "Side door");
	buf_puts(out,
	         "<h1>Side door</h1>"
	         "<p class=\"note\">What went, or tried to go, around airlock. Both tables are "
	         "newest first.</p>");
	if (page_side_door_line(out, db) < 0) {
		store_clear(r);
		return -1;
	}
	buf_puts(out, "<h2>Observed by airlockd on the nodes</h2>"
	              "<p class=\"note\">The probes' failing checks: logins and changes on a node "
	              "that no airlock execution explains (each stays for " SIDE_DOOR_WINDOW
	              " after its evidence).</p>");
	table(out, r, true);
	buf_puts(out, "<h2>Reported by agents' hosts, not verified</h2>"
	              "<p class=\"note\">The hook's denials and asks, and the side-door checks of "
	              "<code>airlock hook --check</code>. Each host says this about itself and "
	              "nothing checks it: the name is the one it gave, the address the one the "
	              "database saw. A host that reports nothing proves nothing.</p>");
	table(out, r, false);
	page_end(out);
	store_clear(r);
	return 0;
}
