/* request.c -- one request, decision first.
 *
 * The first screen, on a 390 px phone as on a desk, answers what an approver
 * asks before deciding: what will run (every hidden character marked and
 * counted), where, who asked and what for, the class in the rule's own
 * words, the votes so far and whose, whether it can be rewound (per VPG),
 * the preview's first line, and the two buttons.  Everything else (every
 * reason, the blast radius, the preview's output, held output, events, the
 * raw record, the other requests on the target) follows, folded.  Queries
 * run as the operator's login. */
#include "web/pages.h"

#include "lib/xalloc.h"
#include "web/html.h"
#include "web/links.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTPUT_SHOW_MAX  (64 * 1024) /* bytes of one output shown on a page */
#define COMMAND_LIST_MAX 240         /* bytes of a command shown in a list */
#define HEADLINE_MAX     160         /* bytes of a preview's first line */

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

void request_view_clear(struct request_view *rv)
{
	free(rv->state);
	free(rv->hash);
	free(rv->hard_why);
	memset(rv, 0, sizeof(*rv));
}

/* ---------------------------------------------------------------- first screen */

/* The class in words: the descriptions of the rules that decided it (the
 * reasons of the request's own class), each once, in their order. */
static int class_words(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT coalesce(pr.description, x->>'words', x->>'text', x #>> '{}')"
	    " FROM airlock.executions e, jsonb_array_elements(CASE jsonb_typeof(e.reasons)"
	    " WHEN 'array' THEN e.reasons ELSE '[]' END) WITH ORDINALITY AS t(x, n)"
	    " LEFT JOIN airlock.policy_rules pr ON pr.rule_id = t.x->>'rule'"
	    " WHERE e.id = $1::bigint AND (jsonb_typeof(t.x) <> 'object' OR t.x->>'class' = "
	    "e.class)"
	    " ORDER BY t.n",
	    1, (const char *const[]){id});
	int shown = 0;

	if (r == NULL)
		return -1;
	buf_puts(out, "<span id=\"class-words\">");
	for (int i = 0; i < store_nrows(r); i++) {
		bool seen = false;
		for (int j = 0; j < i && !seen; j++)
			seen = strcmp(store_get(r, j, 0), store_get(r, i, 0)) == 0;
		if (seen || shown >= 4)
			continue;
		buf_puts(out, shown++ ? "; " : "");
		html_text_cut(out, store_get(r, i, 0), 240);
	}
	if (shown == 0)
		buf_puts(out, "no rule named yet (not classified)");
	buf_puts(out, "</span>");
	store_clear(r);
	return 0;
}

/* The first preview's command, exit code and the first line of its output
 * that holds a number (a summary such as "0 upgraded, 3 newly installed"),
 * else its first line; a held one says what it carries and shows none of
 * it. */
static int preview_headline(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT command, exit_code, error, hold IS NOT NULL, hold->>'label',"
	    " (SELECT l FROM regexp_split_to_table(coalesce(stdout, ''), E'\\n') WITH ORDINALITY"
	    "  t(l, n) WHERE btrim(l) <> '' ORDER BY l ~ '[0-9]' DESC, n LIMIT 1), count(*) OVER ()"
	    " FROM airlock.execution_previews WHERE execution_id = $1::bigint ORDER BY ord LIMIT 1",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	buf_puts(out, "<dd id=\"preview-headline\">");
	if (store_nrows(r) == 0) {
		buf_puts(out, "none made");
	} else if (col(r, 0, 0) == NULL || col(r, 0, 0)[0] == '\0') {
		text_or(out, col(r, 0, 2), "none could be made");
	} else {
		buf_puts(out, "<code>");
		html_text_cut(out, col(r, 0, 0), 120);
		buf_puts(out, "</code> &rarr; exit ");
		text_or(out, col(r, 0, 1), "none");
		if (col(r, 0, 2)) {
			buf_puts(out, ", ");
			html_text_cut(out, col(r, 0, 2), 200);
		} else if (store_get(r, 0, 3)[0] == 't') {
			buf_puts(out, ": its output contains ");
			text_or(out, col(r, 0, 4), "secret material");
			buf_puts(out, " (shown below only when you ask)");
		} else if (col(r, 0, 5)) {
			buf_puts(out, ": <q>");
			html_text_cut(out, col(r, 0, 5), HEADLINE_MAX);
			buf_puts(out, "</q>");
		}
		if (atoi(store_get(r, 0, 6)) > 1)
			buf_printf(out, " (and %d more below)", atoi(store_get(r, 0, 6)) - 1);
	}
	buf_puts(out, "</dd>");
	store_clear(r);
	return 0;
}

void page_confirm_read(struct buf *out, const char *why)
{
	buf_puts(out,
	         "<label class=\"confirm-read\"><input type=\"checkbox\" name=\"confirm_read\" "
	         "value=\"1\" required id=\"confirm-read\"> I read all of it: ");
	html_text(out, why);
	buf_puts(out, "</label>");
}

static void decision_forms(struct buf *out, const struct page_ctx *pc, const char *id,
                           const struct request_view *rv)
{
	buf_puts(out, "<div class=\"decide\" id=\"decide\">");
	if (rv->own)
		buf_puts(out, "<p class=\"warn\" id=\"own\">You asked for this request. The "
		              "database refuses an approval by its requester: another operator "
		              "must decide it.</p>");
	buf_printf(out,
	           "<form method=\"post\" action=\"/r/%s/approve\" id=\"approve-form\">"
	           "<input type=\"hidden\" name=\"csrf\" value=\"",
	           id);
	html_esc(out, pc->csrf);
	buf_puts(out, "\"><input type=\"hidden\" name=\"hash\" value=\"");
	html_esc(out, rv->hash ? rv->hash : "");
	buf_puts(out, "\">");
	if (rv->hard_why && rv->hard_confirm)
		page_confirm_read(out, rv->hard_why);
	buf_puts(out, "<div class=\"row\"><input name=\"note\" maxlength=\"1000\" "
	              "placeholder=\"note (optional)\" aria-label=\"Note (optional)\">"
	              "<button type=\"submit\" class=\"approve\" id=\"approve-button\">Approve"
	              "</button></div></form>");
	buf_printf(out,
	           "<form method=\"post\" action=\"/r/%s/reject\" id=\"reject-form\">"
	           "<input type=\"hidden\" name=\"csrf\" value=\"",
	           id);
	html_esc(out, pc->csrf);
	buf_puts(out, "\"><div class=\"row\"><input name=\"reason\" required maxlength=\"1000\" "
	              "placeholder=\"reason (required)\" aria-label=\"Reason (required)\">"
	              "<button type=\"submit\" class=\"reject\" id=\"reject-button\">Reject"
	              "</button></div></form></div>");
}

int page_request_summary(struct buf *out, struct store *db, const struct page_ctx *pc, long long id,
                         struct request_view *rv)
{
	char ids[24];
	struct store_res *r = NULL;
	int rc = -1;

	(void)pc;
	memset(rv, 0, sizeof(*rv));
	snprintf(ids, sizeof(ids), "%lld", id);
	r = store_exec(db,
	               "SELECT e.state, e.kind, e.target, e.target_type, e.command, e.class,"
	               " e.requested_by, e.action, e.change_id, e.rewind_status,"
	               " e.rewind_possible, coalesce(e.payload_hash, ''),"
	               " e.requested_by = session_user, t.node, t.vmid,"
	               " l.hidden, l.bidi, l.lines, l.bytes, l.hard, l.why,"
	               " coalesce(g.action, 'confirm'), e.declared_risk"
	               " FROM airlock.executions e"
	               " LEFT JOIN airlock.entities t ON t.slug = e.target"
	               " CROSS JOIN LATERAL airlock.command_legibility(e.command) l"
	               " LEFT JOIN airlock.gate_legibility g ON true"
	               " WHERE e.id = $1::bigint",
	               1, (const char *const[]){ids});
	if (r == NULL)
		goto out;
	if (store_nrows(r) == 0) {
		rc = 1;
		goto out;
	}
	rv->state = xstrdup(store_get(r, 0, 0));
	rv->hash = xstrdup(store_get(r, 0, 11));
	rv->own = store_get(r, 0, 12)[0] == 't';
	if (store_get(r, 0, 19)[0] == 't')
		rv->hard_why = xstrdup(store_get(r, 0, 20));
	rv->hard_confirm = strcmp(store_get(r, 0, 21), "confirm") == 0;

	/* What will run. */
	size_t bidi = 0, hidden;
	buf_puts(out, "<section class=\"summary\" id=\"summary\"><div class=\"what\">");
	struct buf cmd = BUF_INIT;
	hidden = html_command(&cmd, col(r, 0, 4), &bidi);
	buf_puts(out, "<p class=\"label\">What will run");
	if (hidden > 0)
		buf_printf(out,
		           " &middot; <span class=\"warn\" id=\"hidden-count\" data-hidden=\"%zu\" "
		           "data-bidi=\"%zu\">%zu hidden character%s marked",
		           hidden, bidi, hidden, hidden == 1 ? "" : "s");
	if (bidi > 0)
		buf_printf(out, ", %zu changing the text's direction", bidi);
	if (hidden > 0)
		buf_puts(out, "</span>");
	if (atoi(store_get(r, 0, 17)) > 1)
		buf_printf(out, " <span class=\"note\" id=\"line-count\">%s lines</span>",
		           store_get(r, 0, 17));
	buf_puts(out, "</p><pre class=\"command\" id=\"command\">");
	buf_append(out, cmd.data ? cmd.data : "", cmd.len);
	buf_free(&cmd);
	buf_puts(out, "</pre>");
	if (hidden > 0)
		buf_puts(out,
		         "<p class=\"warn small\" id=\"hidden-warning\">Marked: control, "
		         "invisible or direction-changing characters, shown as escapes (\\x1b, "
		         "\\u202e): every byte that would run is on the screen.</p>");
	/* While it waits, the box to tick says it for confirm; else a line does. */
	if (rv->hard_why && (!rv->hard_confirm || strcmp(rv->state, "pending_approval") != 0)) {
		buf_puts(out, "<p class=\"warn small\" id=\"hard-to-read\">Hard to read (");
		html_text(out, rv->hard_why);
		buf_puts(out, rv->hard_confirm
		                  ? "): each approver confirms reading all of it.</p>"
		                  : "): it needs one more approver than its class.</p>");
	}
	buf_puts(out, "</div><dl class=\"facts first\">");

	/* Where, who and why. */
	buf_puts(out, "<dt>Where</dt><dd><span id=\"target\">");
	html_text(out, col(r, 0, 2));
	buf_puts(out, "</span>");
	if (col(r, 0, 13)) {
		buf_puts(out, " <span class=\"note\" id=\"node\">on ");
		html_text(out, col(r, 0, 13));
		if (col(r, 0, 14))
			buf_printf(out, ", vmid %s", store_get(r, 0, 14));
		buf_puts(out, "</span>");
	}
	buf_puts(out, "</dd><dt>Asked by</dt><dd><a id=\"agent\" href=\"/agents/");
	links_encode(out, col(r, 0, 6));
	buf_puts(out, "\">");
	html_text(out, col(r, 0, 6));
	buf_puts(out, "</a>: <span id=\"purpose\">");
	text_or(out, col(r, 0, 7), "no purpose given");
	buf_puts(out, "</span>");
	if (col(r, 0, 8)) {
		buf_puts(out, " <span class=\"note\">(change ");
		html_text(out, col(r, 0, 8));
		buf_puts(out, ")</span>");
	}

	/* The class in words. */
	buf_puts(out, "</dd><dt>Class</dt><dd id=\"class\"><strong class=\"class ");
	html_esc(out, col(r, 0, 5) ? col(r, 0, 5) : "unclassified");
	buf_puts(out, "\">");
	text_or(out, col(r, 0, 5), "not classified yet");
	buf_puts(out, "</strong>");
	if (col(r, 0, 22)) {
		buf_puts(out, " (declared ");
		html_text(out, col(r, 0, 22));
		buf_puts(out, ")");
	}
	buf_puts(out, ": ");
	if (class_words(out, db, ids) < 0)
		goto out;

	/* Whether it can be rewound. */
	buf_puts(out, "</dd><dt>Rewind</dt><dd id=\"rewind\">");
	text_or(out, col(r, 0, 9), "not assessed yet");
	if (col(r, 0, 10) && col(r, 0, 10)[0] == 'f')
		buf_puts(out, " <strong class=\"warn\" id=\"no-rewind\">Approving means approving "
		              "without one.</strong>");
	buf_puts(out, "</dd><dt>Preview</dt>");
	if (preview_headline(out, db, ids) < 0)
		goto out;
	buf_puts(out, "</dl></section>");
	rc = 0;
out:
	store_clear(r);
	return rc;
}

/* ---------------------------------------------------------------- live parts */

/* Each vote cast: who, when, and whether it still counts (for this payload). */
static int voters(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT a.approver, a.decision, to_char(a.at AT TIME ZONE 'UTC', 'HH24:MI \"UTC\"'),"
	    " a.reason, a.payload_hash = e.payload_hash"
	    " FROM airlock.approvals a JOIN airlock.executions e ON e.id = a.execution_id"
	    " WHERE a.execution_id = $1::bigint ORDER BY a.at, a.id",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	if (store_nrows(r) > 0)
		buf_puts(out, " <span id=\"voters\">(");
	for (int i = 0; i < store_nrows(r); i++) {
		buf_puts(out, i ? "; " : "");
		buf_puts(out, "<span class=\"voter\">");
		html_text(out, col(r, i, 0));
		buf_puts(out, " ");
		html_text(out, col(r, i, 1));
		buf_puts(out, "d at ");
		html_text(out, col(r, i, 2));
		if (col(r, i, 3)) {
			buf_puts(out, ": <q>");
			html_text_cut(out, col(r, i, 3), 120);
			buf_puts(out, "</q>");
		}
		if (col(r, i, 4) && col(r, i, 4)[0] == 'f')
			buf_puts(out, " <em>for an earlier payload: it no longer counts</em>");
		buf_puts(out, "</span>");
	}
	if (store_nrows(r) > 0)
		buf_puts(out, ")</span>");
	store_clear(r);
	return 0;
}

int page_request_state(struct buf *out, struct store *db, long long id)
{
	char ids[24];
	struct store_res *r = NULL;
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
	buf_printf(out,
	           "</strong> &middot; <span id=\"votes-line\">votes <span id=\"votes\">%s/%s"
	           "</span>",
	           store_get(r, 0, 1), store_get(r, 0, 2));
	if (voters(out, db, ids) < 0)
		goto out;
	buf_puts(out, "</span>");
	if (strcmp(col(r, 0, 0), "pending_approval") == 0) {
		buf_puts(out, " &middot; expires in ");
		html_duration(out, col(r, 0, 10));
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
	rc = 0;
out:
	store_clear(r);
	return rc;
}

int page_request_events(struct buf *out, struct store *db, long long id)
{
	char ids[24];
	struct store_res *ev;

	snprintf(ids, sizeof(ids), "%lld", id);
	ev = store_exec(
	    db,
	    "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
	    " actor, from_state, to_state, detail::text FROM airlock.history"
	    " WHERE execution_id = $1::bigint AND to_state <> 'record' ORDER BY event_id",
	    1, (const char *const[]){ids});
	if (ev == NULL)
		return -1;
	buf_puts(out, "<ol class=\"events\">");
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
	store_clear(ev);
	return 0;
}

/* ---------------------------------------------------------------- below, folded */

static int reasons(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT x->>'class', x->>'rule', x->>'text', x->>'words', x->>'target',"
	    " CASE jsonb_typeof(x) WHEN 'string' THEN x #>> '{}' ELSE x::text END, pr.description"
	    " FROM airlock.executions e, jsonb_array_elements(CASE jsonb_typeof(e.reasons)"
	    " WHEN 'array' THEN e.reasons ELSE '[]' END) x"
	    " LEFT JOIN airlock.policy_rules pr ON pr.rule_id = x->>'rule'"
	    " WHERE e.id = $1::bigint",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	buf_printf(out, "<details id=\"why\"><summary>Why this class (%d reason%s)</summary>",
	           store_nrows(r), store_nrows(r) == 1 ? "" : "s");
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
			buf_puts(out, "</span>");
			if (col(r, i, 6)) {
				buf_puts(out, " (<span class=\"rule-text\">");
				html_text(out, col(r, i, 6));
				buf_puts(out, "</span>)");
			}
			buf_puts(out, ": ");
			html_text(out, col(r, i, 2));
			if (col(r, i, 3)) {
				buf_puts(out, " <code>");
				html_text(out, col(r, i, 3));
				buf_puts(out, "</code>");
			}
		}
		buf_puts(out, "</li>");
	}
	buf_puts(out, "</ul></details>");
	store_clear(r);
	return 0;
}

/* What the estate knows of each thing the request can reach.  A VM's
 * protection is what airlock last recorded for a request on it (which names
 * its VPGs or says none protects it), never a guess from its name. */
static int blast_radius(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT b.kind, b.entity, b.relation, b.via, b.zerto_vm, b.rewind_status,"
	    " to_char(b.rewind_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI \"UTC\"'), b.note,"
	    " en.type, count(*) OVER ()"
	    " FROM airlock.blast_radius($1::bigint) b"
	    " LEFT JOIN airlock.entities en ON en.slug = b.entity",
	    1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	buf_printf(out,
	           "<details id=\"blast-radius\"><summary>Blast radius (%d)</summary>"
	           "<table class=\"blast\" id=\"blast\"><thead><tr>"
	           "<th>What</th><th>Entity</th><th>Relation</th><th>Protection</th>"
	           "</tr></thead><tbody>",
	           store_nrows(r));
	if (store_nrows(r) == 0)
		buf_puts(out, "<tr><td colspan=\"4\">The knowledge graph records nothing that "
		              "depends on this target.</td></tr>");
	for (int i = 0; i < store_nrows(r); i++) {
		const char *kind = col(r, i, 0), *type = col(r, i, 8);
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
		} else if (type && strcmp(type, "vm") == 0 && col(r, i, 5)) {
			buf_puts(out, "last recorded ");
			html_text(out, col(r, i, 6));
			buf_puts(out, ": ");
			html_text(out, col(r, i, 5));
		} else if (type && strcmp(type, "vm") == 0) {
			buf_puts(out,
			         "not checked against Zerto yet: no request on it was assessed "
			         "(airlock would look it up as ");
			html_text(out, col(r, i, 4));
			buf_puts(out, ")");
		} else if (type) {
			buf_puts(out, "not a VM: Zerto cannot make a rewind point for it");
		} else {
			buf_puts(out, "not in the inventory");
		}
		buf_puts(out, "</td></tr>");
	}
	buf_puts(out, "</tbody></table></details>");
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
		buf_puts(out, "<details id=\"rewind-points\" open><summary>Rewind points taken"
		              "</summary><table class=\"vpgs\"><thead><tr><th>VPG</th>"
		              "<th>Checkpoint</th><th>Time</th><th>Task</th></tr></thead><tbody>");
		for (int i = 0; i < store_nrows(r); i++) {
			buf_puts(out, "<tr>");
			for (int c = 0; c < 4; c++) {
				buf_puts(out, "<td>");
				text_or(out, col(r, i, c), "none");
				buf_puts(out, "</td>");
			}
			buf_puts(out, "</tr>");
		}
		buf_puts(out, "</tbody></table></details>");
	}
	store_clear(r);
	return 0;
}

/* Every read-only preview airlockd ran for the request; a held one's output
 * behind its own click. */
static int preview(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT ord, command, exit_code, convert_to(stdout, 'UTF8'),"
	               " convert_to(stderr, 'UTF8'), truncated, error, hold->>'label',"
	               " hold->>'stream', hold->>'line'"
	               " FROM airlock.execution_previews WHERE execution_id = $1::bigint"
	               " ORDER BY ord",
	               1, (const char *const[]){id});

	if (r == NULL)
		return -1;
	buf_printf(out,
	           "<details id=\"previews\"><summary>Preview (%d)</summary><div id=\"preview\">",
	           store_nrows(r));
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
		if (col(r, i, 7)) {
			buf_puts(out,
			         "<details class=\"held-preview\"><summary>Its output contains ");
			html_text(out, col(r, i, 7));
			buf_puts(out, " (line ");
			html_text(out, col(r, i, 9));
			buf_puts(out, " of ");
			html_text(out, col(r, i, 8));
			buf_puts(out, "): show it</summary>");
		}
		page_output_block(out, "stdout", col(r, i, 3), col(r, i, 5));
		page_output_block(out, "stderr", col(r, i, 4), NULL);
		if (col(r, i, 7))
			buf_puts(out, "</details>");
		buf_puts(out, "</div>");
	}
	buf_puts(out, "</div></details>");
	store_clear(r);
	return 0;
}

static int details(struct buf *out, struct store *db, const char *id)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT e.kind, e.action, e.change_id,"
	               " to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
	               " to_char(e.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
	               " e.confinement, e.payload_hash, jsonb_pretty(airlock.get_execution(e.id))"
	               " FROM airlock.executions e WHERE e.id = $1::bigint",
	               1, (const char *const[]){id});
	static const char *const labels[] = {"Kind",       "Action",      "Change id",   "Asked at",
	                                     "Expires at", "Confinement", "Payload hash"};

	if (r == NULL)
		return -1;
	if (store_nrows(r) == 1) {
		buf_puts(out,
		         "<details id=\"facts\"><summary>Details</summary><dl class=\"facts\">");
		for (int c = 0; c < 7; c++) {
			buf_printf(out, "<dt>%s</dt><dd>", labels[c]);
			text_or(out, col(r, 0, c), "none");
			buf_puts(out, "</dd>");
		}
		buf_puts(out, "</dl></details><details id=\"raw\"><summary>Raw record (JSON)"
		              "</summary><pre class=\"output\">");
		html_block(out, store_get(r, 0, 7), strlen(store_get(r, 0, 7)), OUTPUT_SHOW_MAX);
		buf_puts(out, "</pre></details>");
	}
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
	buf_printf(out, "<details id=\"recent\"><summary>Recent on this target (%d)</summary>",
	           store_nrows(r));
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
	buf_puts(out, "</ul></details>");
	store_clear(r);
	return 0;
}

int page_request(struct buf *out, struct store *db, const struct page_ctx *pc, long long id,
                 const char *notice, bool is_error)
{
	char ids[24], title[48];
	struct request_view rv;
	struct buf body = BUF_INIT;
	int rc;

	snprintf(ids, sizeof(ids), "%lld", id);
	rc = page_request_summary(&body, db, pc, id, &rv);
	if (rc != 0)
		goto out;
	rc = -1;
	snprintf(title, sizeof(title), "Request #%lld", id);
	page_begin(out, pc, title);
	buf_printf(out, "<h1 class=\"req\">Request #%lld</h1>", id);
	if (notice) {
		buf_printf(out, "<p class=\"%s\" id=\"notice\">", is_error ? "error" : "ok");
		html_text(out, notice);
		buf_puts(out, "</p>");
	}
	buf_printf(out, "<section id=\"state-frag\" data-frag=\"/r/%lld/state.frag\">", id);
	if (page_request_state(out, db, id) < 0)
		goto out;
	buf_puts(out, "</section>");
	buf_append(out, body.data ? body.data : "", body.len);
	if (strcmp(rv.state, "pending_approval") == 0)
		decision_forms(out, pc, ids, &rv);
	if (page_held_section(out, db, pc, ids) < 0)
		goto out;
	buf_puts(out, "<p class=\"live\" id=\"live\" data-state=\"connecting\">live updates: "
	              "connecting</p><div class=\"more\" id=\"more\">");
	if (reasons(out, db, ids) < 0 || rewind_points(out, db, ids) < 0 ||
	    blast_radius(out, db, ids) < 0 || preview(out, db, ids) < 0)
		goto out;
	buf_printf(out,
	           "<details id=\"events-fold\"><summary>Events</summary><div id=\"events\" "
	           "data-frag=\"/r/%lld/events.frag\">",
	           id);
	if (page_request_events(out, db, id) < 0)
		goto out;
	buf_puts(out, "</div></details>");
	if (details(out, db, ids) < 0 || recent_on_target(out, db, ids) < 0)
		goto out;
	buf_puts(out, "</div>");
	page_end(out);
	rc = 0;
out:
	buf_free(&body);
	request_view_clear(&rv);
	return rc;
}
