/* agent.c -- one agent's page: what it asked for, what it did around airlock
 * (when the database records side-door events), and what binds it (flood
 * limits and how much of them it uses now, the gate rules that name it, its
 * scope).  Parts of the schema that a database may not have yet (side-door
 * events, scopes, the limits of the other agent functions) are looked up
 * first and left out when absent.  Queries run as the operator's login. */
#include "web/pages.h"

#include "web/html.h"
#include "web/links.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_ROWS 50

static const char *col(const struct store_res *r, int row, int c)
{
	return store_isnull(r, row, c) ? NULL : store_get(r, row, c);
}

/* 1 when relation name exists and the login may read it, 0 when not, -1 on
 * a database error. */
static int relation_exists(struct store *db, const char *name)
{
	struct store_res *r = store_exec(db,
	                                 "SELECT to_regclass($1) IS NOT NULL AND "
	                                 "has_table_privilege(to_regclass($1), 'SELECT')",
	                                 1, (const char *const[]){name});
	int yes;

	if (r == NULL)
		return -1;
	yes = store_get(r, 0, 0)[0] == 't';
	store_clear(r);
	return yes;
}

static int requests(struct buf *out, struct store *db, const char *login)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT e.id, e.state, e.class, e.target, e.action, e.command,"
	    " to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI \"UTC\"')"
	    " FROM airlock.executions e WHERE e.requested_by = $1 ORDER BY e.id DESC LIMIT 50",
	    1, (const char *const[]){login});

	if (r == NULL)
		return -1;
	buf_printf(out,
	           "<h2>Requests</h2><p class=\"count\" id=\"agent-requests\" data-count=\"%d\">"
	           "%d shown (newest first, at most %d)</p>"
	           "<table class=\"history\"><thead><tr><th>#</th><th>State</th><th>Class</th>"
	           "<th>Target</th><th>For</th><th>When</th><th>Command</th></tr></thead><tbody>",
	           store_nrows(r), store_nrows(r), AGENT_ROWS);
	for (int i = 0; i < store_nrows(r); i++) {
		buf_printf(out, "<tr><td><a href=\"/r/%s\">%s</a></td>", store_get(r, i, 0),
		           store_get(r, i, 0));
		for (int c = 1; c <= 4; c++) {
			buf_puts(out, "<td>");
			html_text_cut(out, col(r, i, c) ? col(r, i, c) : "", 200);
			buf_puts(out, "</td>");
		}
		buf_puts(out, "<td>");
		html_text(out, col(r, i, 6));
		buf_puts(out, "</td><td><code>");
		html_text_cut(out, col(r, i, 5), 160);
		buf_puts(out, "</code></td></tr>");
	}
	buf_puts(out, "</tbody></table>");
	store_clear(r);
	return 0;
}

/* The flood limits and what the agent uses of them now. */
static int limits(struct buf *out, struct store *db, const char *login)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT l.requests_per_minute, l.pending_per_agent,"
	               " (SELECT count(*) FROM airlock.executions e WHERE e.requested_by = $1"
	               "  AND e.created_at > now() - interval '1 minute'),"
	               " (SELECT count(*) FROM airlock.executions e WHERE e.requested_by = $1"
	               "  AND e.state IN ('received', 'queued', 'pending_approval', 'approved'))"
	               " FROM (SELECT * FROM airlock.gate_limits LIMIT 1) l",
	               1, (const char *const[]){login});

	if (r == NULL)
		return -1;
	buf_puts(out, "<h2>Limits</h2><dl class=\"facts\" id=\"agent-limits\">");
	if (store_nrows(r) == 1)
		buf_printf(out,
		           "<dt>Requests per minute</dt><dd>%s in the last minute, of %s</dd>"
		           "<dt>Not yet started or decided</dt><dd>%s, of %s</dd>",
		           store_get(r, 0, 2), store_get(r, 0, 0), store_get(r, 0, 3),
		           store_get(r, 0, 1));
	else
		buf_puts(out, "<dt>Flood limits</dt><dd>the defaults (no gate policy seeded)</dd>");
	buf_puts(out, "</dl>");
	store_clear(r);
	return 0;
}

/* The gate's rules whose agent glob matches this login. */
static int rules(struct buf *out, struct store *db, const char *login)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT r.position, r.agent, r.target, r.class, r.approvals_required, r.ttl::text,"
	    " r.approval_valid_for::text FROM airlock.gate_rules r"
	    " WHERE r.agent IS NOT NULL AND $1 LIKE replace(replace(replace(replace(replace("
	    " r.agent, '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_')"
	    " ORDER BY r.position",
	    1, (const char *const[]){login});

	if (r == NULL)
		return -1;
	buf_puts(out, "<h2>Gate rules that name it</h2>");
	if (store_nrows(r) == 0)
		buf_puts(out, "<p class=\"note\" id=\"agent-rules\">None: its requests get their "
		              "class's quorum and times.</p>");
	else
		buf_puts(out, "<ul id=\"agent-rules\">");
	for (int i = 0; i < store_nrows(r); i++) {
		buf_printf(out, "<li>rule %s: agent ", store_get(r, i, 0));
		html_text(out, col(r, i, 1));
		if (col(r, i, 2)) {
			buf_puts(out, ", target ");
			html_text(out, col(r, i, 2));
		}
		if (col(r, i, 3)) {
			buf_puts(out, ", class ");
			html_text(out, col(r, i, 3));
		}
		if (col(r, i, 4))
			buf_printf(out, ": quorum %s", store_get(r, i, 4));
		if (col(r, i, 5))
			buf_printf(out, ", expires after %s", store_get(r, i, 5));
		if (col(r, i, 6))
			buf_printf(out, ", an approval holds %s", store_get(r, i, 6));
		buf_puts(out, "</li>");
	}
	if (store_nrows(r) > 0)
		buf_puts(out, "</ul>");
	store_clear(r);
	return 0;
}

/* Prints the keys of a JSON object as a definition list, in the given order
 * where present; others are left out. */
static void json_facts(struct buf *out, const char *json, const char *const *keys)
{
	cJSON *o = cJSON_Parse(json);

	for (const char *const *k = keys; o && *k; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *k);
		char *text;
		if (v == NULL || cJSON_IsNull(v))
			continue;
		text = cJSON_IsString(v) ? NULL : cJSON_PrintUnformatted(v);
		buf_puts(out, "<dt>");
		html_esc(out, *k);
		buf_puts(out, "</dt><dd>");
		html_text_cut(out, text ? text : v->valuestring, 600);
		buf_puts(out, "</dd>");
		free(text);
	}
	cJSON_Delete(o);
}

/* Its scope and the other functions' limits, where the schema has them. */
static int scope(struct buf *out, struct store *db, const char *login)
{
	static const char *const scope_keys[] = {"position",     "agent",     "targets",
	                                         "target_types", "max_class", NULL};
	static const char *const door_keys[] = {
	    "hook_match_per_minute",    "hook_events_per_minute",
	    "host_checks_per_minute",   "tool_requests_per_minute",
	    "guards_per_minute",        "attribute_updates_per_minute",
	    "relationships_per_minute", NULL};
	struct store_res *r;
	int have = relation_exists(db, "airlock.gate_scopes");

	if (have < 0)
		return -1;
	if (have) {
		r = store_exec(
		    db,
		    "SELECT to_jsonb(s)::text FROM airlock.gate_scopes s"
		    " WHERE $1 LIKE replace(replace(replace(replace(replace(to_jsonb(s)->>'agent',"
		    " '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_')"
		    " ORDER BY (to_jsonb(s)->>'position')::integer LIMIT 1",
		    1, (const char *const[]){login});
		if (r == NULL)
			return -1;
		buf_puts(out, "<h2>Scope</h2>");
		if (store_nrows(r) == 0) {
			buf_puts(out,
			         "<p class=\"note\" id=\"agent-scope\">No scope names it: it may "
			         "act on every target.</p>");
		} else {
			buf_puts(out, "<dl class=\"facts\" id=\"agent-scope\">");
			json_facts(out, store_get(r, 0, 0), scope_keys);
			buf_puts(out, "</dl>");
		}
		store_clear(r);
	}
	have = relation_exists(db, "airlock.gate_door_limits");
	if (have < 0)
		return -1;
	if (have) {
		r = store_exec(db,
		               "SELECT to_jsonb(d)::text FROM airlock.gate_door_limits d LIMIT 1",
		               0, NULL);
		if (r == NULL)
			return -1;
		if (store_nrows(r) == 1) {
			buf_puts(out, "<h2>Its other functions' limits</h2><dl class=\"facts\" "
			              "id=\"agent-door-limits\">");
			json_facts(out, store_get(r, 0, 0), door_keys);
			buf_puts(out, "</dl>");
		}
		store_clear(r);
	}
	return 0;
}

/* What was seen of it around airlock, when the database records it. */
static int side_door(struct buf *out, struct store *db, const char *login)
{
	int have = relation_exists(db, "airlock.side_door");
	struct store_res *r;

	if (have <= 0)
		return have;
	r = store_exec(db,
	               "SELECT to_jsonb(s)->>'at', to_jsonb(s)->>'source', to_jsonb(s)->>'host',"
	               " to_jsonb(s)->>'finding', to_jsonb(s)->>'detail',"
	               " coalesce((to_jsonb(s)->>'verified')::boolean, false)"
	               " FROM airlock.side_door s WHERE to_jsonb(s)->>'agent' = $1"
	               " ORDER BY to_jsonb(s)->>'at' DESC LIMIT 50",
	               1, (const char *const[]){login});
	if (r == NULL)
		return -1;
	buf_printf(out,
	           "<h2>Side door</h2><p class=\"count\" id=\"agent-side-door\" data-count=\"%d\">"
	           "%d event(s) (newest first; what its host reports is not verified)</p>",
	           store_nrows(r), store_nrows(r));
	if (store_nrows(r) > 0)
		buf_puts(out, "<table class=\"sidedoor\"><thead><tr><th>When</th><th>Source</th>"
		              "<th>Host</th><th>Finding</th><th>Detail</th><th>Verified</th></tr>"
		              "</thead><tbody>");
	for (int i = 0; i < store_nrows(r); i++) {
		buf_puts(out, "<tr>");
		for (int c = 0; c < 5; c++) {
			buf_puts(out, "<td>");
			html_text_cut(out, col(r, i, c) ? col(r, i, c) : "", 400);
			buf_puts(out, "</td>");
		}
		buf_printf(out, "<td>%s</td></tr>",
		           store_get(r, i, 5)[0] == 't' ? "observed on a node" : "reported");
	}
	if (store_nrows(r) > 0)
		buf_puts(out, "</tbody></table>");
	store_clear(r);
	return 0;
}

int page_agent(struct buf *out, struct store *db, const struct page_ctx *pc, const char *login)
{
	struct buf title = BUF_INIT;

	buf_puts(&title, "Agent ");
	buf_puts(&title, login);
	page_begin(out, pc, buf_str(&title));
	buf_free(&title);
	buf_puts(out, "<h1>Agent <span id=\"agent-name\">");
	html_text(out, login);
	buf_puts(out, "</span></h1><p><a href=\"/?agent=");
	links_encode(out, login);
	buf_puts(out, "&amp;state=open\">Its open requests in the queue</a></p>");
	if (requests(out, db, login) < 0 || side_door(out, db, login) < 0 ||
	    limits(out, db, login) < 0 || rules(out, db, login) < 0 || scope(out, db, login) < 0)
		return -1;
	page_end(out);
	return 0;
}
