/* pages.c -- the console's pages.  Queries run as the operator's login. */
#include "web/pages.h"

#include "lib/xalloc.h"
#include "web/html.h"
#include "web/links.h"

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

void page_signin(struct buf *out, const char *message, const char *next)
{
	page_begin(out, NULL, "Sign in");
	buf_puts(out, "<h1>Sign in</h1>");
	if (message) {
		buf_puts(out, "<p class=\"error\" id=\"signin-error\">");
		html_text(out, message);
		buf_puts(out, "</p>");
	}
	if (links_safe_next(next) && strncmp(next, "/a/", 3) == 0)
		buf_puts(out, "<p class=\"note\" id=\"signin-action\">Sign in to see what this "
		              "link asks you to decide. Nothing is decided until you confirm it on "
		              "the next page.</p>");
	else if (links_safe_next(next) && strcmp(next, "/") != 0)
		buf_puts(out, "<p class=\"note\" id=\"signin-next\">You will be taken back to the "
		              "page you asked for.</p>");
	buf_puts(out, "<form class=\"signin\" method=\"post\" action=\"/login\">");
	if (links_safe_next(next)) {
		buf_puts(out, "<input type=\"hidden\" name=\"next\" value=\"");
		html_esc(out, next);
		buf_puts(out, "\">");
	}
	buf_puts(out,
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
