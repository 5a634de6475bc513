/* queue.c -- the Pending page: the queue filtered by target, agent, class,
 * state and age, a box to tick on each request that waits for a decision,
 * and one form that decides the ticked ones (each still its own approve()
 * or reject(), for the payload the page showed).  Queries run as the
 * operator's login. */
#include "web/pages.h"

#include "web/html.h"
#include "web/links.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_LIST_MAX 240 /* bytes of a command shown in a list */
#define QUEUE_ROWS       500

static const char *const open_states[] = {"pending_approval", "received", "queued",
                                          "approved",         "running",  "open"};
static const char *const classes[] = {"read_only", "reversible_low", "config_mutation",
                                      "destructive"};

static const char *col(const struct store_res *r, int row, int c)
{
	return store_isnull(r, row, c) ? NULL : store_get(r, row, c);
}

static bool set(const char *s)
{
	return s != NULL && *s != '\0';
}

static bool one_of(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* "90s", "15m", "2h", "1d" in seconds; -1 when it is none of those. */
static long long age_seconds(const char *s)
{
	char *end;
	long long n = strtoll(s, &end, 10);

	if (!isdigit((unsigned char)s[0]) || end[0] == '\0' || end[1] != '\0' || n < 0 ||
	    n > 100000)
		return -1;
	switch (end[0]) {
	case 's':
		return n;
	case 'm':
		return n * 60;
	case 'h':
		return n * 3600;
	case 'd':
		return n * 86400;
	}
	return -1;
}

/* A glob of what slugs and login names hold, plus * and ?. */
static bool glob_ok(const char *s)
{
	if (strlen(s) > 200)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("*?._-:@", *s) == NULL)
			return false;
	return true;
}

const char *queue_filter_problem(const struct queue_filter *f)
{
	if (set(f->target) && !glob_ok(f->target))
		return "The target filter is an entity slug or a glob of one, such as vm:* or "
		       "proxmox-host:hub?is (letters, digits, : . _ - and the wildcards * and ?).";
	if (set(f->agent) && !glob_ok(f->agent))
		return "The agent filter is a login name or a glob of one, such as hermes or "
		       "intern-*.";
	if (set(f->cls) && !one_of(f->cls, classes, 4))
		return "The class filter is read_only, reversible_low, config_mutation or "
		       "destructive.";
	if (set(f->state) && !one_of(f->state, open_states, 6))
		return "The state filter is pending_approval, received, queued, approved, running "
		       "or open (all of them).";
	if (set(f->older) && age_seconds(f->older) < 0)
		return "The age filter is a number and a unit, s, m, h or d: 90s, 15m, 2h, 1d.";
	return NULL;
}

void queue_filter_query(struct buf *out, const struct queue_filter *f)
{
	const char *const keys[] = {"target", "agent", "class", "state", "older"};
	const char *vals[] = {f->target, f->agent, f->cls, f->state, f->older};
	char sep = '?';

	for (size_t i = 0; i < 5; i++) {
		if (!set(vals[i]))
			continue;
		buf_printf(out, "%c%s=", sep, keys[i]);
		links_encode(out, vals[i]);
		sep = '&';
	}
}

int page_pending_list(struct buf *out, struct store *db, const struct queue_filter *f)
{
	char older[32] = "";
	const char *state = set(f->state) ? f->state : "pending_approval";
	struct store_res *r;
	int n;

	if (set(f->older))
		snprintf(older, sizeof(older), "%lld", age_seconds(f->older));
	r = store_exec(
	    db,
	    "SELECT e.id, e.target, e.class, e.requested_by, e.command,"
	    " extract(epoch FROM now() - e.created_at)::bigint,"
	    " extract(epoch FROM e.expires_at - now())::bigint,"
	    " airlock._votes(e), greatest(e.approvals_required, 1), e.rewind_status, e.action,"
	    " e.state, coalesce(e.payload_hash, ''), e.requested_by = session_user, l.hard,"
	    " coalesce(g.action, 'confirm')"
	    " FROM airlock.executions e"
	    " CROSS JOIN LATERAL airlock.command_legibility(e.command) l"
	    " LEFT JOIN airlock.gate_legibility g ON true"
	    " WHERE CASE WHEN $4 = 'open' THEN e.state IN ('received', 'queued',"
	    "   'pending_approval', 'approved', 'running') ELSE e.state = $4 END"
	    " AND ($1 = '' OR e.target LIKE replace(replace(replace(replace(replace($1, '\\', "
	    "'\\\\'),"
	    "   '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_'))"
	    " AND ($2 = '' OR e.requested_by LIKE replace(replace(replace(replace(replace($2, '\\',"
	    "   '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_'))"
	    " AND ($3 = '' OR e.class = $3)"
	    " AND ($5 = '' OR now() - e.created_at >= make_interval(secs => $5::bigint))"
	    " ORDER BY e.created_at, e.id LIMIT 500",
	    5,
	    (const char *const[]){set(f->target) ? f->target : "", set(f->agent) ? f->agent : "",
	                          set(f->cls) ? f->cls : "", state, older});

	if (r == NULL)
		return -1;
	n = store_nrows(r);
	buf_printf(out, "<p class=\"count\" data-count=\"%d\" id=\"count\">%d %s%s</p>", n, n,
	           strcmp(state, "pending_approval") == 0 ? "pending"
	           : strcmp(state, "open") == 0           ? "open"
	                                                  : state,
	           n >= QUEUE_ROWS ? " (the oldest 500; filter to see others)" : "");
	if (n == 0)
		buf_puts(out, "<p class=\"calm\">Nothing waits for a decision here.</p>");
	buf_puts(out, "<ul class=\"pending\">");
	for (int i = 0; i < n; i++) {
		const char *cls = col(r, i, 2), *id = store_get(r, i, 0);
		bool pending = strcmp(store_get(r, i, 11), "pending_approval") == 0;
		bool own = store_get(r, i, 13)[0] == 't';
		bool must_read =
		    store_get(r, i, 14)[0] == 't' && strcmp(store_get(r, i, 15), "confirm") == 0;
		buf_printf(out, "<li class=\"req\" data-id=\"%s\">", id);
		if (pending) {
			buf_printf(
			    out,
			    "<input type=\"checkbox\" class=\"pick\" name=\"pick\" form=\"bulk\" "
			    "aria-label=\"choose request %s\" value=\"%s:",
			    id, id);
			html_esc(out, store_get(r, i, 12));
			buf_puts(out, "\"");
			if (own)
				buf_puts(out,
				         " disabled title=\"your own request: another operator "
				         "decides it\"");
			else if (must_read)
				buf_puts(out,
				         " disabled title=\"hard to read: open it to confirm you "
				         "read it\"");
			buf_puts(out, ">");
		}
		buf_printf(out,
		           "<a href=\"/r/%s\"><span class=\"id\">#%s</span> <span class=\"class ",
		           id, id);
		html_esc(out, cls ? cls : "unclassified");
		buf_puts(out, "\">");
		html_text(out, cls ? cls : "unclassified");
		buf_puts(out, "</span> <span class=\"target\">");
		html_text(out, col(r, i, 1));
		buf_puts(out, "</span>");
		if (!pending) {
			buf_puts(out, " <span class=\"state\">");
			html_text(out, store_get(r, i, 11));
			buf_puts(out, "</span>");
		}
		buf_puts(out, "<span class=\"purpose\">");
		html_text_cut(out, col(r, i, 10) ? col(r, i, 10) : "no purpose given", 200);
		buf_puts(out, "</span><code class=\"command\">");
		html_text_cut(out, col(r, i, 4), COMMAND_LIST_MAX);
		buf_puts(out, "</code><span class=\"meta\">by ");
		html_text(out, col(r, i, 3));
		buf_puts(out, " &middot; waiting ");
		html_duration(out, col(r, i, 5));
		if (pending) {
			buf_puts(out, " &middot; expires in ");
			html_duration(out, col(r, i, 6));
		}
		buf_printf(out, " &middot; votes <span class=\"votes\">%s/%s</span>",
		           store_get(r, i, 7), store_get(r, i, 8));
		if (must_read)
			buf_puts(out,
			         " &middot; <span class=\"warn\">hard to read: open it</span>");
		if (col(r, i, 9)) {
			buf_puts(out, " &middot; ");
			html_text_cut(out, col(r, i, 9), 160);
		}
		buf_puts(out, "</span></a></li>");
	}
	buf_puts(out, "</ul>");
	store_clear(r);
	return page_held_list(out, db); /* it waits for an operator too */
}

static void select_of(struct buf *out, const char *name, const char *label, const char *const *opts,
                      size_t n, const char *cur, const char *any)
{
	buf_printf(out, "<label>%s <select name=\"%s\">", label, name);
	if (any)
		buf_printf(out, "<option value=\"\">%s</option>", any);
	for (size_t i = 0; i < n; i++)
		buf_printf(out, "<option value=\"%s\"%s>%s</option>", opts[i],
		           cur && strcmp(cur, opts[i]) == 0 ? " selected" : "", opts[i]);
	buf_puts(out, "</select></label>");
}

static void text_input(struct buf *out, const char *name, const char *label, const char *cur,
                       const char *placeholder)
{
	buf_printf(out, "<label>%s <input name=\"%s\" placeholder=\"%s\" value=\"", label, name,
	           placeholder);
	html_esc(out, cur ? cur : "");
	buf_puts(out, "\" maxlength=\"200\" autocapitalize=\"none\"></label>");
}

int page_pending(struct buf *out, struct store *db, const struct page_ctx *pc,
                 const struct queue_filter *f)
{
	const char *problem = queue_filter_problem(f);
	struct queue_filter none = {0};
	struct buf q = BUF_INIT;

	page_begin(out, pc, "Pending");
	buf_puts(out, "<h1>Pending requests</h1>");
	if (page_side_door_line(out, db) < 0)
		return -1;
	buf_puts(out, "<details class=\"filters\" id=\"filters\"");
	if (set(f->target) || set(f->agent) || set(f->cls) || set(f->state) || set(f->older))
		buf_puts(out, " open");
	buf_puts(out, "><summary>Filter</summary><form method=\"get\" action=\"/\" "
	              "class=\"search\" id=\"filter-form\">");
	text_input(out, "target", "Target", f->target, "vm:*");
	text_input(out, "agent", "Agent", f->agent, "hermes");
	select_of(out, "class", "Class", classes, 4, f->cls, "any class");
	select_of(out, "state", "State", open_states, 6, f->state, NULL);
	text_input(out, "older", "Waiting longer than", f->older, "15m");
	buf_puts(out, "<button type=\"submit\">Filter</button> <a href=\"/\">clear</a></form>"
	              "</details>");
	if (problem) {
		buf_puts(out, "<p class=\"error\" id=\"filter-error\">");
		html_esc(out, problem);
		buf_puts(out, " Showing everything pending instead.</p>");
		f = &none;
	}
	queue_filter_query(&q, f);
	buf_puts(out, "<form method=\"post\" action=\"/bulk\" id=\"bulk\" class=\"bulk\">"
	              "<input type=\"hidden\" name=\"csrf\" value=\"");
	html_esc(out, pc->csrf);
	buf_puts(out, "\"><div class=\"row\"><input name=\"reason\" maxlength=\"1000\" "
	              "placeholder=\"note, or the reason for a rejection\" "
	              "aria-label=\"Note or reason\"><button type=\"submit\" name=\"decision\" "
	              "value=\"approve\" class=\"approve\" id=\"bulk-approve\">Approve chosen"
	              "</button><button type=\"submit\" name=\"decision\" value=\"reject\" "
	              "class=\"reject\" id=\"bulk-reject\">Reject chosen</button></div>"
	              "<p class=\"note\">Each chosen request is decided on its own, for the "
	              "command this page shows, with every rule of the command line.</p></form>");
	buf_puts(out, "<p class=\"live\" id=\"live\" data-state=\"connecting\">live updates: "
	              "connecting</p><section id=\"pending\" data-frag=\"/pending.frag");
	html_esc(out, buf_str(&q));
	buf_puts(out, "\">");
	buf_free(&q);
	if (page_pending_list(out, db, f) < 0)
		return -1;
	buf_puts(out, "</section>");
	page_end(out);
	return 0;
}

void page_bulk_result(struct buf *out, const struct page_ctx *pc, const char *what,
                      const struct buf *lines, int decided, int refused)
{
	page_begin(out, pc, "Decided");
	buf_printf(out,
	           "<h1>%s</h1><p class=\"%s\" id=\"bulk-summary\" data-decided=\"%d\" "
	           "data-refused=\"%d\">%d decided, %d refused.</p><ul class=\"bulk-result\">",
	           what, refused ? "warn" : "ok", decided, refused, decided, refused);
	buf_append(out, lines->data ? lines->data : "", lines->len);
	buf_puts(out, "</ul><p><a href=\"/\">Back to the pending requests</a></p>");
	page_end(out);
}
