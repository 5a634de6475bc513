/* held.c -- output airlockd held for carrying secret material, in the console:
 * what waits on the Pending page, a request's hold, its bytes (behind a
 * click, so that a secret is not on screen by default) and the release and
 * discard forms.  Queries run as the operator's login. */
#include "web/html.h"
#include "web/pages.h"

#include <stdio.h>
#include <string.h>

static const char *col(const struct store_res *r, int row, int c)
{
	return store_isnull(r, row, c) ? NULL : store_get(r, row, c);
}

int page_held_list(struct buf *out, struct store *db)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT id, target, requested_by, label, line, stream, command,"
	               " extract(epoch FROM age)::bigint FROM airlock.held_output LIMIT 500",
	               0, NULL);
	int n;

	if (r == NULL)
		return -1;
	n = store_nrows(r);
	buf_printf(out,
	           "<h2>Held output</h2><p class=\"meta\" id=\"held-count\" data-held=\"%d\">%d "
	           "held</p>",
	           n, n);
	if (n == 0)
		buf_puts(out, "<p class=\"calm\">No output is held.</p>");
	buf_puts(out, "<ul class=\"pending held\">");
	for (int i = 0; i < n; i++) {
		buf_printf(out, "<li class=\"req held\" data-id=\"%s\"><a href=\"/r/%s#held\">",
		           store_get(r, i, 0), store_get(r, i, 0));
		buf_printf(out,
		           "<span class=\"id\">#%s</span> <span class=\"class\">output held</span> "
		           "<span class=\"target\">",
		           store_get(r, i, 0));
		html_text(out, col(r, i, 1));
		buf_puts(out, "</span><code class=\"command\">");
		html_text_cut(out, col(r, i, 6), 240);
		buf_puts(out, "</code><span class=\"meta\">contains ");
		html_text(out, col(r, i, 3));
		buf_printf(out, " at line %s of %s &middot; by ", store_get(r, i, 4),
		           store_get(r, i, 5));
		html_text(out, col(r, i, 2));
		buf_printf(out, " &middot; held %s s</span></a></li>", store_get(r, i, 7));
	}
	buf_puts(out, "</ul>");
	store_clear(r);
	return 0;
}

int page_held_status(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT state, label, line, stream, decided_by, reason FROM airlock.output_holds"
	    " WHERE execution_id = $1::bigint",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	if (store_nrows(r) == 1) {
		buf_printf(out,
		           "<p class=\"%s\" id=\"hold-state\" data-state=\"%s\">Output %s: it "
		           "contains ",
		           strcmp(store_get(r, 0, 0), "held") == 0 ? "warn" : "note",
		           store_get(r, 0, 0), store_get(r, 0, 0));
		html_text(out, col(r, 0, 1));
		buf_printf(out, " at line %s of %s", store_get(r, 0, 2), store_get(r, 0, 3));
		if (col(r, 0, 4)) {
			buf_puts(out, " &middot; by ");
			html_text(out, col(r, 0, 4));
			buf_puts(out, ": ");
			html_text(out, col(r, 0, 5));
		}
		buf_puts(out, ".</p>");
	}
	store_clear(r);
	return 0;
}

static void form(struct buf *out, const struct page_ctx *pc, const char *id, const char *action,
                 const char *button, const char *cls)
{
	buf_printf(out, "<form method=\"post\" action=\"/r/%s/%s\" id=\"%s-form\">", id, action,
	           action);
	buf_puts(out, "<input type=\"hidden\" name=\"csrf\" value=\"");
	html_esc(out, pc->csrf);
	buf_printf(out,
	           "\"><label>Reason (required) <input name=\"reason\" required "
	           "maxlength=\"1000\"></label><button type=\"submit\" class=\"%s\">%s</button>"
	           "</form>",
	           cls, button);
}

int page_held_section(struct buf *out, struct store *db, const struct page_ctx *pc, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT state, label, line, stream, stdout, stderr, convert_to(error, 'UTF8'),"
	    " stdout_bytes, stderr_bytes FROM airlock.output_holds WHERE execution_id = $1::bigint",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	if (store_nrows(r) == 1 && strcmp(store_get(r, 0, 0), "held") == 0) {
		buf_puts(
		    out,
		    "<section class=\"held\" id=\"held\"><h2>Held output</h2><p class=\"warn\">"
		    "airlock held this output: it contains ");
		html_text(out, col(r, 0, 1));
		buf_printf(out,
		           " at line %s of %s. The agent sees none of it until you release it. "
		           "Releasing gives it to the agent as it is; discarding erases it.</p>"
		           "<details id=\"held-bytes\"><summary>Show the held output (%s bytes of "
		           "stdout, %s of stderr)</summary>",
		           store_get(r, 0, 2), store_get(r, 0, 3), store_get(r, 0, 7),
		           store_get(r, 0, 8));
		page_output_block(out, "stdout", col(r, 0, 4), NULL);
		page_output_block(out, "stderr", col(r, 0, 5), NULL);
		page_output_block(out, "error", col(r, 0, 6), NULL);
		buf_puts(out, "</details><div class=\"decide\">");
		form(out, pc, id, "release-output", "Release to the agent", "approve");
		form(out, pc, id, "discard-output", "Discard", "reject");
		buf_puts(out, "</div></section>");
	}
	store_clear(r);
	return 0;
}
