/* pages.c -- the console's pages.  Queries run as the operator's login. */
#include "web/pages.h"

#include "lib/xalloc.h"
#include "web/html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTPUT_SHOW_MAX  (64 * 1024) /* bytes of one output shown on a page */
#define COMMAND_LIST_MAX 240         /* bytes of a command shown in a list */

/* A column's value, NULL for SQL NULL. */
static const char *col(const struct store_res *r, int row, int c)
{
	return store_isnull(r, row, c) ? NULL : store_get(r, row, c);
}

static void text_or(struct buf *out, const char *s, const char *dflt)
{
	if (s == NULL || *s == '\0')
		html_esc(out, dflt);
	else
		html_text(out, s);
}

/* "42 s", "5 min", "3 h 10 min", "2 d 4 h"; negative as "overdue". */
static void duration(struct buf *out, const char *secs)
{
	if (secs == NULL) {
		buf_puts(out, "&ndash;");
		return;
	}
	long long s = atoll(secs);
	if (s < 0) {
		buf_puts(out, "overdue");
		return;
	}
	if (s < 60)
		buf_printf(out, "%lld s", s);
	else if (s < 3600)
		buf_printf(out, "%lld min", s / 60);
	else if (s < 86400)
		buf_printf(out, "%lld h %lld min", s / 3600, s % 3600 / 60);
	else
		buf_printf(out, "%lld d %lld h", s / 86400, s % 86400 / 3600);
}

/* bytea's text form ("\x4142...") back into bytes; the caller frees. */
static char *unhex(const char *s, size_t *len)
{
	size_t n = 0;
	char *out;

	*len = 0;
	if (s == NULL || s[0] != '\\' || s[1] != 'x')
		return NULL;
	s += 2;
	out = xmalloc(strlen(s) / 2 + 1);
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

void page_output_block(struct buf *out, const char *label, const char *hex, const char *truncated)
{
	size_t len;
	char *data = unhex(hex, &len);

	if (data == NULL)
		return;
	buf_printf(out, "<h4>%s</h4><pre class=\"output\">", label);
	if (len == 0)
		buf_puts(out, "<em>(empty)</em>");
	else
		html_block(out, data, len, OUTPUT_SHOW_MAX);
	buf_puts(out, "</pre>");
	if (truncated && truncated[0] == 't')
		buf_puts(out, "<p class=\"note\">The output was longer than the capture limit; "
		              "the rest was not kept.</p>");
	free(data);
}

static const char *const nav[][2] = {
    {"/", "Pending"}, {"/history", "History"}, {"/audit", "Audit"}, {"/side-door", "Side door"}};

void page_begin(struct buf *out, const struct page_ctx *pc, const char *title)
{
	buf_puts(out, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	              "<title>");
	html_esc(out, title);
	buf_puts(out, " &middot; airlock</title>"
	              "<link rel=\"stylesheet\" href=\"/static/app.css\">"
	              "<script src=\"/static/app.js\" defer></script></head><body>"
	              "<header><span class=\"brand\">airlock</span><nav>");
	for (size_t i = 0; i < sizeof(nav) / sizeof(nav[0]); i++)
		buf_printf(out, "<a href=\"%s\">%s</a>", nav[i][0], nav[i][1]);
	buf_puts(out, "</nav>");
	if (pc && pc->login) {
		buf_puts(out, "<form class=\"signout\" method=\"post\" action=\"/logout\">"
		              "<input type=\"hidden\" name=\"csrf\" value=\"");
		html_esc(out, pc->csrf);
		buf_puts(out, "\"><span class=\"who\" id=\"who\">");
		html_text(out, pc->login);
		buf_puts(out, "</span> <button type=\"submit\">Sign out</button></form>");
	}
	buf_puts(out, "</header><main>");
}

void page_end(struct buf *out)
{
	buf_puts(out, "</main></body></html>\n");
}

void page_message(struct buf *out, const char *title, const char *message)
{
	page_begin(out, NULL, title);
	buf_puts(out, "<h1>");
	html_esc(out, title);
	buf_puts(out, "</h1><p class=\"error\">");
	html_text(out, message);
	buf_puts(out, "</p><p><a href=\"/login\">Sign in</a></p>");
	page_end(out);
}

void page_signin(struct buf *out, const char *message)
{
	page_begin(out, NULL, "Sign in");
	buf_puts(out, "<h1>Sign in</h1>");
	if (message) {
		buf_puts(out, "<p class=\"error\" id=\"signin-error\">");
		html_text(out, message);
		buf_puts(out, "</p>");
	}
	buf_puts(out,
	         "<form class=\"signin\" method=\"post\" action=\"/login\">"
	         "<label>Database login <input name=\"login\" autocomplete=\"username\" required "
	         "autocapitalize=\"none\" maxlength=\"63\"></label>"
	         "<label>Password <input name=\"password\" type=\"password\" "
	         "autocomplete=\"current-password\" required></label>"
	         "<label>One-time code (if enrolled) <input name=\"code\" inputmode=\"numeric\" "
	         "autocomplete=\"one-time-code\" maxlength=\"8\"></label>"
	         "<button type=\"submit\">Sign in</button></form>"
	         "<p class=\"note\">You sign in with your own PostgreSQL login; every action "
	         "here runs as that login, under the same rules as the command line.</p>");
	page_end(out);
}

/* ---------------------------------------------------------------- pending */

int page_pending_list(struct buf *out, struct store *db)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT p.id, p.target, p.class, p.requested_by, p.command,"
	    " extract(epoch FROM p.age)::bigint, extract(epoch FROM p.expires_in)::bigint,"
	    " p.approvals, greatest(p.approvals_required, 1), p.rewind_status, p.action"
	    " FROM airlock.pending p ORDER BY p.created_at, p.id LIMIT 500",
	    0, NULL);

	if (r == NULL)
		return -1;
	int n = store_nrows(r);
	buf_printf(out, "<p class=\"count\" data-count=\"%d\">%d pending</p>", n, n);
	if (n == 0)
		buf_puts(out, "<p class=\"calm\">Nothing waits for a decision.</p>");
	buf_puts(out, "<ul class=\"pending\">");
	for (int i = 0; i < n; i++) {
		const char *cls = col(r, i, 2);
		buf_printf(out, "<li class=\"req\" data-id=\"%s\"><a href=\"/r/%s\">",
		           store_get(r, i, 0), store_get(r, i, 0));
		buf_printf(out, "<span class=\"id\">#%s</span> <span class=\"class ",
		           store_get(r, i, 0));
		html_esc(out, cls ? cls : "unclassified");
		buf_puts(out, "\">");
		text_or(out, cls, "unclassified");
		buf_puts(out, "</span> <span class=\"target\">");
		html_text(out, col(r, i, 1));
		buf_puts(out, "</span><code class=\"command\">");
		html_text_cut(out, col(r, i, 4), COMMAND_LIST_MAX);
		buf_puts(out, "</code><span class=\"meta\">by ");
		html_text(out, col(r, i, 3));
		buf_puts(out, " &middot; waiting ");
		duration(out, col(r, i, 5));
		buf_puts(out, " &middot; expires in ");
		duration(out, col(r, i, 6));
		buf_printf(out, " &middot; votes <span class=\"votes\">%s/%s</span>",
		           store_get(r, i, 7), store_get(r, i, 8));
		if (col(r, i, 9)) {
			buf_puts(out, " &middot; ");
			html_text(out, col(r, i, 9));
		}
		buf_puts(out, "</span></a></li>");
	}
	buf_puts(out, "</ul>");
	store_clear(r);
	return page_held_list(out, db); /* it waits for an operator too */
}

int page_pending(struct buf *out, struct store *db, const struct page_ctx *pc)
{
	page_begin(out, pc, "Pending");
	buf_puts(out, "<h1>Pending requests</h1>");
	if (page_side_door_line(out, db) < 0)
		return -1;
	buf_puts(out, "<p class=\"live\" id=\"live\" data-state=\"connecting\">live updates: "
	              "connecting</p>"
	              "<section id=\"pending\" data-frag=\"/pending.frag\">");
	if (page_pending_list(out, db) < 0)
		return -1;
	buf_puts(out, "</section>");
	page_end(out);
	return 0;
}

/* ---------------------------------------------------------------- one request */

static int reasons(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT x->>'class', x->>'rule', x->>'text', x->>'words', x->>'target',"
	    " CASE jsonb_typeof(x) WHEN 'string' THEN x #>> '{}' ELSE x::text END"
	    " FROM airlock.executions e, jsonb_array_elements(CASE jsonb_typeof(e.reasons)"
	    " WHEN 'array' THEN e.reasons ELSE '[]' END) x WHERE e.id = $1::bigint",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	buf_puts(out, "<h2>Why this class</h2>");
	if (store_nrows(r) == 0)
		buf_puts(out, "<p class=\"note\">No reasons recorded (not classified yet).</p>");
	buf_puts(out, "<ul class=\"reasons\">");
	for (int i = 0; i < store_nrows(r); i++) {
		buf_puts(out, "<li>");
		if (col(r, i, 1) == NULL) {
			html_text(out, col(r, i, 5));
		} else {
			buf_puts(out, "<span class=\"class\">");
			html_text(out, col(r, i, 0));
			buf_puts(out, "</span> <span class=\"rule\">rule ");
			html_text(out, col(r, i, 1));
			buf_puts(out, "</span>: ");
			html_text(out, col(r, i, 2));
			if (col(r, i, 3)) {
				buf_puts(out, " <code>");
				html_text(out, col(r, i, 3));
				buf_puts(out, "</code>");
			}
		}
		buf_puts(out, "</li>");
	}
	buf_puts(out, "</ul>");
	store_clear(r);
	return 0;
}

static int blast_radius(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT kind, entity, relation, via, zerto_vm, rewind_status,"
	    " to_char(rewind_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI \"UTC\"'), note"
	    " FROM airlock.blast_radius($1::bigint)",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	buf_puts(out, "<h2>Blast radius</h2><table class=\"blast\" id=\"blast\"><thead><tr>"
	              "<th>What</th><th>Entity</th><th>Relation</th><th>Protection</th>"
	              "</tr></thead><tbody>");
	if (store_nrows(r) == 0)
		buf_puts(out, "<tr><td colspan=\"4\">The knowledge graph records nothing that "
		              "depends on this target.</td></tr>");
	for (int i = 0; i < store_nrows(r); i++) {
		const char *kind = col(r, i, 0);
		bool named = kind && strcmp(kind, "named_guest") == 0;
		buf_printf(out, "<tr class=\"%s\"><td>", named ? "named" : "rel");
		html_esc(out, named                        ? "touched by the command"
		              : strcmp(kind, "node") == 0  ? "its node"
		              : strcmp(kind, "guest") == 0 ? "guest on this host"
		                                           : "related");
		buf_puts(out, "</td><td class=\"entity\">");
		html_text(out, col(r, i, 1));
		if (col(r, i, 3)) {
			buf_puts(out, " <span class=\"note\">(");
			html_text(out, col(r, i, 3));
			buf_puts(out, ")</span>");
		}
		buf_puts(out, "</td><td>");
		html_text(out, col(r, i, 2));
		buf_puts(out, "</td><td class=\"protection\">");
		if (col(r, i, 7)) {
			buf_puts(out, "<strong>");
			html_text(out, col(r, i, 7));
			buf_puts(out, "</strong>");
		} else {
			if (col(r, i, 4)) {
				buf_puts(out, "VM known to Zerto as ");
				html_text(out, col(r, i, 4));
			} else {
				buf_puts(out, "not a VM: Zerto cannot make a rewind point for it");
			}
			if (col(r, i, 5)) {
				buf_puts(out, "; last recorded: ");
				html_text(out, col(r, i, 5));
				buf_puts(out, " (");
				html_text(out, col(r, i, 6));
				buf_puts(out, ")");
			}
		}
		buf_puts(out, "</td></tr>");
	}
	buf_puts(out, "</tbody></table>");
	store_clear(r);
	return 0;
}

static int rewind_points(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT p->>'vpg_name', p->>'checkpoint_id', p->>'checkpoint_time',"
	    " p->>'task_state_name', p->>'tag'"
	    " FROM airlock.executions e, jsonb_array_elements(CASE jsonb_typeof(e.rewind_points)"
	    " WHEN 'array' THEN e.rewind_points ELSE '[]' END) p WHERE e.id = $1::bigint",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	if (store_nrows(r) > 0) {
		buf_puts(out, "<table class=\"vpgs\"><thead><tr><th>VPG</th><th>Checkpoint</th>"
		              "<th>Time</th><th>Task</th></tr></thead><tbody>");
		for (int i = 0; i < store_nrows(r); i++) {
			buf_puts(out, "<tr>");
			for (int c = 0; c < 4; c++) {
				buf_puts(out, "<td>");
				text_or(out, col(r, i, c), "none");
				buf_puts(out, "</td>");
			}
			buf_puts(out, "</tr>");
		}
		buf_puts(out, "</tbody></table>");
	}
	store_clear(r);
	return 0;
}

/* The read-only preview, when the previews table exists. */
static int preview(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a"
	               " WHERE a.attrelid = to_regclass('airlock.execution_previews')"
	               " AND a.attname IN ('stdout', 'stderr') AND NOT a.attisdropped",
	               0, NULL);
	bool bytea_out = false;

	if (r == NULL)
		return -1;
	buf_puts(out, "<h2>Preview</h2><div id=\"preview\">");
	if (store_nrows(r) == 0) {
		buf_puts(out, "<p class=\"note\">no preview</p></div>");
		store_clear(r);
		return 0;
	}
	for (int i = 0; i < store_nrows(r); i++)
		bytea_out |= strcmp(store_get(r, i, 1), "bytea") == 0;
	store_clear(r);
	r = store_exec(db,
	               bytea_out
	                   ? "SELECT ord, command, exit_code, stdout, stderr, truncated, error"
	                     " FROM airlock.execution_previews WHERE execution_id = $1::bigint"
	                     " ORDER BY ord"
	                   : "SELECT ord, command, exit_code, convert_to(stdout, 'UTF8'),"
	                     " convert_to(stderr, 'UTF8'), truncated, error"
	                     " FROM airlock.execution_previews WHERE execution_id = $1::bigint"
	                     " ORDER BY ord",
	               1, (const char *const[]){id});
	if (r == NULL)
		return -1;
	if (store_nrows(r) == 0)
		buf_puts(out, "<p class=\"note\">no preview</p>");
	for (int i = 0; i < store_nrows(r); i++) {
		if (col(r, i, 1) == NULL || col(r, i, 1)[0] == '\0') {
			/* None could be made; the reason is in error. */
			buf_puts(out, "<p class=\"note\">");
			text_or(out, col(r, i, 6), "no preview");
			buf_puts(out, "</p>");
			continue;
		}
		buf_puts(out, "<div class=\"preview\"><p>read-only preview: <code>");
		html_text(out, col(r, i, 1));
		buf_puts(out, "</code> &middot; exit ");
		text_or(out, col(r, i, 2), "none");
		buf_puts(out, "</p>");
		if (col(r, i, 6)) {
			buf_puts(out, "<p class=\"error\">");
			html_text(out, col(r, i, 6));
			buf_puts(out, "</p>");
		}
		page_output_block(out, "stdout", col(r, i, 3), col(r, i, 5));
		page_output_block(out, "stderr", col(r, i, 4), NULL);
		buf_puts(out, "</div>");
	}
	buf_puts(out, "</div>");
	store_clear(r);
	return 0;
}

static int recent_on_target(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT x.id, x.state, x.class, x.requested_by, x.command,"
	               " to_char(x.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI \"UTC\"')"
	               " FROM airlock.executions e JOIN airlock.executions x ON x.target = e.target"
	               " AND x.id <> e.id WHERE e.id = $1::bigint ORDER BY x.id DESC LIMIT 10",
	               1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	buf_puts(out, "<h2>Recent on this target</h2>");
	if (store_nrows(r) == 0)
		buf_puts(out, "<p class=\"note\">No other requests on this target.</p>");
	buf_puts(out, "<ul class=\"recent\">");
	for (int i = 0; i < store_nrows(r); i++) {
		buf_printf(out, "<li><a href=\"/r/%s\">#%s</a> <span class=\"state\">",
		           store_get(r, i, 0), store_get(r, i, 0));
		html_text(out, col(r, i, 1));
		buf_puts(out, "</span> ");
		html_text(out, col(r, i, 5));
		buf_puts(out, " by ");
		html_text(out, col(r, i, 3));
		buf_puts(out, " <code>");
		html_text_cut(out, col(r, i, 4), COMMAND_LIST_MAX);
		buf_puts(out, "</code></li>");
	}
	buf_puts(out, "</ul>");
	store_clear(r);
	return 0;
}

int page_request_state(struct buf *out, struct store *db, long long id)
{
	char ids[24];
	struct store_res *r = NULL, *ev = NULL;
	int rc = -1;

	snprintf(ids, sizeof(ids), "%lld", id);
	r = store_exec(db,
	               "SELECT e.state, airlock._votes(e), greatest(e.approvals_required, 1),"
	               " e.exit_code, e.duration_ms, e.error, e.stdout, e.stderr,"
	               " e.stdout_truncated, e.stderr_truncated,"
	               " extract(epoch FROM e.expires_at - now())::bigint"
	               " FROM airlock.executions e WHERE e.id = $1::bigint",
	               1, (const char *const[]){ids});
	if (r == NULL)
		goto out;
	if (store_nrows(r) == 0) {
		buf_puts(out, "<p class=\"error\">No such request.</p>");
		rc = 0;
		goto out;
	}
	buf_printf(out, "<p class=\"status\">state <strong class=\"state\" id=\"state\">");
	html_text(out, col(r, 0, 0));
	buf_printf(out, "</strong> &middot; votes <span id=\"votes\">%s/%s</span>",
	           store_get(r, 0, 1), store_get(r, 0, 2));
	if (strcmp(col(r, 0, 0), "pending_approval") == 0) {
		buf_puts(out, " &middot; expires in ");
		duration(out, col(r, 0, 10));
	}
	if (col(r, 0, 3)) {
		buf_printf(out, " &middot; exit <span id=\"exit\">%s</span>", store_get(r, 0, 3));
		if (col(r, 0, 4))
			buf_printf(out, " in %s ms", store_get(r, 0, 4));
	}
	buf_puts(out, "</p>");
	if (col(r, 0, 5)) {
		buf_puts(out, "<p class=\"error\">");
		html_text(out, col(r, 0, 5));
		buf_puts(out, "</p>");
	}
	if (page_held_status(out, db, ids) < 0)
		goto out;
	page_output_block(out, "stdout", col(r, 0, 6), col(r, 0, 8));
	if (col(r, 0, 7) && strcmp(col(r, 0, 7), "\\x") != 0)
		page_output_block(out, "stderr", col(r, 0, 7), col(r, 0, 9));
	ev = store_exec(
	    db,
	    "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
	    " actor, from_state, to_state, detail::text FROM airlock.history"
	    " WHERE execution_id = $1::bigint AND to_state <> 'record' ORDER BY event_id",
	    1, (const char *const[]){ids});
	if (ev == NULL)
		goto out;
	buf_puts(out, "<h2>Events</h2><ol class=\"events\">");
	for (int i = 0; i < store_nrows(ev); i++) {
		buf_puts(out, "<li><span class=\"at\">");
		html_text(out, col(ev, i, 0));
		buf_puts(out, "</span> <span class=\"actor\">");
		html_text(out, col(ev, i, 1));
		buf_puts(out, "</span> ");
		text_or(out, col(ev, i, 2), "(new)");
		buf_puts(out, " &rarr; <strong>");
		html_text(out, col(ev, i, 3));
		buf_puts(out, "</strong> <code class=\"detail\">");
		html_text_cut(out, col(ev, i, 4), 600);
		buf_puts(out, "</code></li>");
	}
	buf_puts(out, "</ol>");
	rc = 0;
out:
	store_clear(r);
	store_clear(ev);
	return rc;
}

static void decision_forms(struct buf *out, const struct page_ctx *pc, const char *id,
                           const char *hash, bool own)
{
	if (own)
		buf_puts(out, "<p class=\"warn\" id=\"own\">You asked for this request. The "
		              "database refuses an approval by its requester: another operator "
		              "must decide it.</p>");
	buf_printf(out,
	           "<section class=\"decide\"><form method=\"post\" action=\"/r/%s/approve\" "
	           "id=\"approve-form\"><input type=\"hidden\" name=\"csrf\" value=\"",
	           id);
	html_esc(out, pc->csrf);
	buf_puts(out, "\"><input type=\"hidden\" name=\"hash\" value=\"");
	html_esc(out, hash ? hash : "");
	buf_puts(out, "\"><label>Note (optional) <input name=\"note\" maxlength=\"1000\"></label>"
	              "<button type=\"submit\" class=\"approve\">Approve</button></form>");
	buf_printf(out,
	           "<form method=\"post\" action=\"/r/%s/reject\" id=\"reject-form\">"
	           "<input type=\"hidden\" name=\"csrf\" value=\"",
	           id);
	html_esc(out, pc->csrf);
	buf_puts(out, "\"><label>Reason (required) <input name=\"reason\" required "
	              "maxlength=\"1000\"></label>"
	              "<button type=\"submit\" class=\"reject\">Reject</button></form></section>");
}

int page_request(struct buf *out, struct store *db, const struct page_ctx *pc, long long id,
                 const char *notice, bool is_error)
{
	char ids[24], title[48];
	struct store_res *r = NULL;
	int rc = -1;

	snprintf(ids, sizeof(ids), "%lld", id);
	r = store_exec(db,
	               "SELECT e.state, e.kind, e.target, e.target_type, e.command, e.class,"
	               " e.requested_by, e.action, e.change_id,"
	               " to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
	               " to_char(e.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
	               " e.rewind_status, e.rewind_possible, e.payload_hash, e.declared_risk,"
	               " e.confinement, e.requested_by = session_user"
	               " FROM airlock.executions e WHERE e.id = $1::bigint",
	               1, (const char *const[]){ids});
	if (r == NULL)
		goto out;
	if (store_nrows(r) == 0) {
		rc = 1;
		goto out;
	}
	snprintf(title, sizeof(title), "Request #%lld", id);
	page_begin(out, pc, title);
	buf_printf(out, "<h1>Request #%lld</h1>", id);
	if (notice) {
		buf_printf(out, "<p class=\"%s\" id=\"notice\">", is_error ? "error" : "ok");
		html_text(out, notice);
		buf_puts(out, "</p>");
	}
	buf_printf(out,
	           "<p class=\"live\" id=\"live\" data-state=\"connecting\">live updates: "
	           "connecting</p><section id=\"state-frag\" data-frag=\"/r/%lld/state.frag\">",
	           id);
	if (page_request_state(out, db, id) < 0)
		goto out;
	buf_puts(out, "</section><h2>Command</h2><pre class=\"command\" id=\"command\">");
	if (html_text(out, col(r, 0, 4)) > 0)
		buf_puts(out, "</pre><p class=\"warn\" id=\"hidden-warning\">This command contains "
		              "control, invisible or direction-changing characters. They are shown "
		              "as escapes (\\x1b, \\u202e, ...): what you read is every byte that "
		              "would run.</p>");
	else
		buf_puts(out, "</pre>");
	buf_puts(out, "<dl class=\"facts\"><dt>Class</dt><dd class=\"class\" id=\"class\">");
	text_or(out, col(r, 0, 5), "not classified yet");
	if (col(r, 0, 14)) {
		buf_puts(out, " (the agent declared ");
		html_text(out, col(r, 0, 14));
		buf_puts(out, ")");
	}
	buf_puts(out, "</dd><dt>Requested by</dt><dd id=\"requester\">");
	html_text(out, col(r, 0, 6));
	buf_puts(out, "</dd><dt>Target</dt><dd id=\"target\">");
	html_text(out, col(r, 0, 2));
	buf_puts(out, "</dd><dt>Kind</dt><dd>");
	html_text(out, col(r, 0, 1));
	buf_puts(out, "</dd><dt>Action</dt><dd>");
	text_or(out, col(r, 0, 7), "none given");
	buf_puts(out, "</dd><dt>Change id</dt><dd>");
	text_or(out, col(r, 0, 8), "none given");
	buf_puts(out, "</dd><dt>Asked at</dt><dd>");
	html_text(out, col(r, 0, 9));
	buf_puts(out, "</dd><dt>Expires at</dt><dd>");
	text_or(out, col(r, 0, 10), "no expiry");
	buf_puts(out, "</dd><dt>Confinement</dt><dd>");
	text_or(out, col(r, 0, 15), "none recorded");
	buf_puts(out, "</dd></dl>");
	if (reasons(out, db, ids) < 0)
		goto out;
	buf_puts(out, "<h2>Rewind</h2><p id=\"rewind\">");
	text_or(out, col(r, 0, 11), "not assessed yet");
	if (col(r, 0, 12) && col(r, 0, 12)[0] == 'f')
		buf_puts(out, " <strong class=\"warn\">No rewind point is possible: approving "
		              "means approving without one.</strong>");
	buf_puts(out, "</p>");
	if (rewind_points(out, db, ids) < 0 || blast_radius(out, db, ids) < 0 ||
	    preview(out, db, ids) < 0 || page_held_section(out, db, pc, ids) < 0)
		goto out;
	if (strcmp(col(r, 0, 0), "pending_approval") == 0)
		decision_forms(out, pc, ids, col(r, 0, 13), col(r, 0, 16)[0] == 't');
	if (recent_on_target(out, db, ids) < 0)
		goto out;
	page_end(out);
	rc = 0;
out:
	store_clear(r);
	return rc;
}

/* ---------------------------------------------------------------- history, audit */

int page_history(struct buf *out, struct store *db, const struct page_ctx *pc, const char *q,
                 const char *state)
{
	static const char *const states[] = {
	    "",          "received", "queued",    "pending_approval", "approved",
	    "rejected",  "expired",  "cancelled", "refused",          "running",
	    "succeeded", "failed",   "timed_out", "outcome_unknown"};
	struct store_res *r = store_exec(
	    db,
	    "SELECT e.id, e.state, e.class, e.target, e.requested_by, e.command,"
	    " to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI \"UTC\"'), e.exit_code"
	    " FROM airlock.executions e"
	    " WHERE ($1 = '' OR strpos(lower(e.target || ' ' || e.command || ' ' || e.requested_by"
	    " || ' ' || coalesce(e.change_id, '') || ' ' || coalesce(e.action, '')), lower($1)) > 0"
	    " OR e.id::text = $1)"
	    " AND ($2 = '' OR e.state = $2) ORDER BY e.id DESC LIMIT 200",
	    2, (const char *const[]){q ? q : "", state ? state : ""});

	if (r == NULL)
		return -1;
	page_begin(out, pc, "History");
	buf_puts(out, "<h1>History</h1><form class=\"search\" method=\"get\" action=\"/history\">"
	              "<input name=\"q\" placeholder=\"target, command, requester, change id\" "
	              "value=\"");
	html_text(out, q ? q : "");
	buf_puts(out, "\"><select name=\"state\">");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		buf_printf(out, "<option value=\"%s\"%s>%s</option>", states[i],
		           state && strcmp(state, states[i]) == 0 ? " selected" : "",
		           states[i][0] ? states[i] : "any state");
	buf_printf(out,
	           "</select><button type=\"submit\">Search</button></form>"
	           "<p class=\"count\">%d shown (newest first, at most 200)</p>"
	           "<table class=\"history\"><thead><tr><th>#</th><th>State</th><th>Class</th>"
	           "<th>Target</th><th>By</th><th>When</th><th>Command</th></tr></thead><tbody>",
	           store_nrows(r));
	for (int i = 0; i < store_nrows(r); i++) {
		buf_printf(out, "<tr><td><a href=\"/r/%s\">%s</a></td>", store_get(r, i, 0),
		           store_get(r, i, 0));
		for (int c = 1; c <= 4; c++) {
			buf_puts(out, "<td>");
			text_or(out, col(r, i, c), "");
			buf_puts(out, "</td>");
		}
		buf_puts(out, "<td>");
		html_text(out, col(r, i, 6));
		buf_puts(out, "</td><td><code>");
		html_text_cut(out, col(r, i, 5), COMMAND_LIST_MAX);
		buf_puts(out, "</code></td></tr>");
	}
	buf_puts(out, "</tbody></table>");
	page_end(out);
	store_clear(r);
	return 0;
}

int page_audit(struct buf *out, struct store *db, const struct page_ctx *pc)
{
	struct store_res *r = store_exec(db,
	                                 "SELECT checked, first_broken, detail, unsealed, "
	                                 "round(oldest_unsealed_s::numeric, 1) "
	                                 "FROM airlock.audit_verify()",
	                                 0, NULL);
	struct store_res *h = NULL;
	int rc = -1;

	if (r == NULL)
		goto out;
	h = store_exec(
	    db,
	    "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'), kind,"
	    " login, address, execution_id, detail FROM airlock.web_history"
	    " ORDER BY id DESC LIMIT 100",
	    0, NULL);
	if (h == NULL)
		goto out;
	page_begin(out, pc, "Audit");
	buf_puts(out, "<h1>Audit</h1><h2>The event chain</h2>");
	if (col(r, 0, 1) == NULL)
		buf_printf(out,
		           "<p class=\"ok\" id=\"audit\">Intact: %s events checked, every hash "
		           "matches its content and links to the one before.</p>",
		           store_get(r, 0, 0));
	else {
		buf_printf(out, "<p class=\"error\" id=\"audit\">BROKEN at event %s (%s checked): ",
		           store_get(r, 0, 1), store_get(r, 0, 0));
		html_text(out, col(r, 0, 2));
		buf_puts(out, "</p>");
	}
	/* Events written moments ago wait for the sealer: not yet in the chain, not a fault. */
	if (strcmp(store_get(r, 0, 3), "0") != 0)
		buf_printf(out,
		           "<p id=\"unsealed\">%s events not sealed into the chain yet (the oldest "
		           "written %s s ago).</p>",
		           store_get(r, 0, 3), store_get(r, 0, 4));
	buf_puts(out, "<h2>Console sign-ins and decisions</h2><table class=\"signins\"><thead><tr>"
	              "<th>When</th><th>What</th><th>Login</th><th>From</th><th>Request</th>"
	              "<th>Detail</th></tr></thead><tbody>");
	for (int i = 0; i < store_nrows(h); i++) {
		buf_puts(out, "<tr>");
		for (int c = 0; c < 6; c++) {
			buf_puts(out, "<td>");
			if (c == 4 && col(h, i, 4))
				buf_printf(out, "<a href=\"/r/%s\">#%s</a>", store_get(h, i, 4),
				           store_get(h, i, 4));
			else
				text_or(out, col(h, i, c), "");
			buf_puts(out, "</td>");
		}
		buf_puts(out, "</tr>");
	}
	buf_puts(out, "</tbody></table>");
	page_end(out);
	rc = 0;
out:
	store_clear(r);
	store_clear(h);
	return rc;
}
