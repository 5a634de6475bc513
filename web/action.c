/* action.c -- an action link from a notification, on the console.
 *
 * Opening one (GET /a/TOKEN) decides nothing, whoever opens it: a link
 * preview, a forwarded message or a person who is not signed in gets at
 * most the sign-in form.  A signed-in operator sees what the link would
 * decide and the request's first screen, and decides only with the page's
 * form (POST, CSRF token, as their own login), once:
 * airlock.action_link_use() checks the link's signature, that it is unused,
 * sent to this operator (or to anyone), unexpired and for the payload the
 * request still has, then calls approve() or reject() with all their
 * rules. */
#include "lib/log.h"
#include "store/store.h"
#include "web/html.h"
#include "web/pages.h"
#include "web/web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTE_MAX 1000

struct link_info {
	long long id;       /* 0: not a link airlock sent */
	char decision[16];  /* approve or reject */
	char sent_to[64];   /* "" when sent to any operator */
	char problem[1024]; /* "" when it can decide */
};

/* What the database says of token, as the operator's login; -1 on a
 * database error. */
static int link_lookup(struct store *db, const char *token, struct link_info *li)
{
	struct store_res *r = store_exec(
	    db, "SELECT execution_id, decision, sent_to, problem FROM airlock.action_link($1)", 1,
	    (const char *const[]){token});

	memset(li, 0, sizeof(*li));
	if (r == NULL)
		return -1;
	if (!store_isnull(r, 0, 0))
		li->id = strtoll(store_get(r, 0, 0), NULL, 10);
	snprintf(li->decision, sizeof(li->decision), "%s", store_get(r, 0, 1));
	snprintf(li->sent_to, sizeof(li->sent_to), "%s", store_get(r, 0, 2));
	snprintf(li->problem, sizeof(li->problem), "%s", store_get(r, 0, 3));
	store_clear(r);
	return 0;
}

/* The confirmation page: what the link decides, the request's first
 * screen, and the form (none when the link cannot decide).  -1 on a
 * database error. */
static int render(struct buf *out, struct store *db, const struct page_ctx *pc, const char *token,
                  const struct link_info *li, const char *notice)
{
	bool approve = strcmp(li->decision, "approve") == 0;
	struct request_view rv;
	struct buf summary = BUF_INIT;
	char title[64];
	int rc = -1;

	snprintf(title, sizeof(title), "%s request #%lld", approve ? "Approve" : "Reject", li->id);
	if (page_request_summary(&summary, db, pc, li->id, &rv) < 0)
		goto out;
	page_begin(out, pc, title);
	buf_printf(out, "<h1 id=\"action-title\">%s request #%lld?</h1>",
	           approve ? "Approve" : "Reject", li->id);
	if (notice) {
		buf_puts(out, "<p class=\"error\" id=\"notice\">");
		html_text(out, notice);
		buf_puts(out, "</p>");
	}
	buf_puts(out, "<p class=\"note\" id=\"action-from\">From a notification's link");
	if (li->sent_to[0]) {
		buf_puts(out, ", sent to ");
		html_text(out, li->sent_to);
	}
	buf_printf(out, ". Nothing has been decided: %s it below as ",
	           approve ? "approve" : "reject");
	html_text(out, pc->login);
	buf_printf(out, ", or <a href=\"/r/%lld\">open the request</a>.</p>", li->id);
	if (page_request_state(out, db, li->id) < 0)
		goto out;
	if (li->problem[0]) {
		buf_puts(out, "<p class=\"error\" id=\"action-problem\">This link cannot decide: ");
		html_text(out, li->problem);
		buf_puts(out, ".</p>");
	}
	buf_append(out, summary.data ? summary.data : "", summary.len);
	if (li->problem[0] == '\0') {
		buf_puts(out, "<form method=\"post\" class=\"decide confirm\" id=\"action-form\" "
		              "action=\"/a/");
		html_esc(out, token);
		buf_puts(out, "\"><input type=\"hidden\" name=\"csrf\" value=\"");
		html_esc(out, pc->csrf);
		buf_puts(out, "\">");
		if (approve && rv.hard_why && rv.hard_confirm)
			page_confirm_read(out, rv.hard_why);
		buf_printf(out,
		           "<div class=\"row\"><input name=\"%s\" maxlength=\"1000\"%s "
		           "placeholder=\"%s\" aria-label=\"%s\"><button type=\"submit\" "
		           "class=\"%s\" id=\"action-confirm\">%s as ",
		           approve ? "note" : "reason", approve ? "" : " required",
		           approve ? "note (optional)" : "reason (required)",
		           approve ? "Note (optional)" : "Reason (required)",
		           approve ? "approve" : "reject", approve ? "Approve" : "Reject");
		html_text(out, pc->login);
		buf_puts(out, "</button></div></form>");
	}
	page_end(out);
	rc = 0;
out:
	buf_free(&summary);
	request_view_clear(&rv);
	return rc;
}

void action_get(struct web *w, struct session *s, const char *token, struct reply *rp)
{
	struct page_ctx pc = {.login = s->login, .csrf = s->csrf};
	struct link_info li;

	pthread_mutex_lock(&s->lock);
	if (link_lookup(s->db, token, &li) < 0) {
		web_db_failed(w, s, rp);
		goto out;
	}
	if (li.id == 0) {
		web_message(rp, 404, "Not an airlock link",
		            li.problem[0] ? li.problem : "this is not a link airlock sent");
		goto out;
	}
	if (li.problem[0])
		rp->status = 409;
	if (render(&rp->body, s->db, &pc, token, &li, NULL) < 0)
		web_db_failed(w, s, rp);
out:
	pthread_mutex_unlock(&s->lock);
}

void action_post(struct web *w, struct session *s, const char *addr, const char *token,
                 const struct form *f, struct reply *rp)
{
	struct page_ctx pc = {.login = s->login, .csrf = s->csrf};
	const char *note = form_get(f, "note"), *reason = form_get(f, "reason");
	const char *confirmed = form_get(f, "confirm_read");
	struct link_info li;
	struct store *db = s->db;
	struct store_res *r = NULL;
	char ids[24], detail[96], err[700], q[800];
	const char *text;

	pthread_mutex_lock(&s->lock);
	if (link_lookup(db, token, &li) < 0) {
		web_db_failed(w, s, rp);
		goto out;
	}
	if (li.id == 0) {
		web_message(rp, 404, "Not an airlock link",
		            li.problem[0] ? li.problem : "this is not a link airlock sent");
		goto out;
	}
	text = strcmp(li.decision, "approve") == 0 ? note : reason;
	if (text && *text == '\0')
		text = NULL;
	if (text && strlen(text) > NOTE_MAX) {
		rp->status = 400;
		if (render(&rp->body, db, &pc, token, &li,
		           "The note or reason is longer than 1000 bytes.") < 0)
			web_db_failed(w, s, rp);
		goto out;
	}
	snprintf(ids, sizeof(ids), "%lld", li.id);
	r = store_exec(db, "BEGIN", 0, NULL);
	if (r == NULL)
		goto failed;
	store_clear(r);
	r = store_exec(
	    db, "SELECT airlock.action_link_use($1, $2, $3::boolean)", 3,
	    (const char *const[]){token, text,
	                          confirmed && strcmp(confirmed, "1") == 0 ? "true" : "false"});
	if (r == NULL)
		goto failed;
	snprintf(detail, sizeof(detail), "%s via link: %s", li.decision, store_get(r, 0, 0));
	store_clear(r);
	r = store_exec(db, "SELECT airlock.web_decided($1::bigint, $2, $3)", 3,
	               (const char *const[]){ids, addr, detail});
	if (r == NULL)
		goto failed;
	store_clear(r);
	r = store_exec(db, "COMMIT", 0, NULL);
	if (r == NULL)
		goto failed;
	store_clear(r);
	r = NULL;
	log_msg(LOG_INFO, "exec=%lld evt=web.decided login=%s addr=%s via=link result=%s", li.id,
	        s->login, addr, log_quote(detail, q, sizeof(q)));
	buf_reset(&rp->body);
	if (page_request(&rp->body, db, &pc, li.id, detail, false) != 0) {
		buf_reset(&rp->body);
		page_message(&rp->body, "Decided", detail);
	}
	goto out;
failed:
	snprintf(err, sizeof(err), "%s", store_errmsg(db));
	rp->status = decide_status(store_sqlstate(db));
	log_msg(LOG_INFO,
	        "exec=%lld evt=web.decision_refused login=%s via=link sqlstate=%s error=%s", li.id,
	        s->login, store_sqlstate(db)[0] ? store_sqlstate(db) : "-",
	        log_quote(err, q, sizeof(q)));
	store_exec_quiet(db, "ROLLBACK");
	if (store_sqlstate(db)[0] == '\0' && !store_connected(db)) {
		session_end(w->sessions, s);
		web_message(rp, 503, "Database connection lost",
		            "The connection to the database for your login was lost; nothing was "
		            "decided. Sign in again.");
		goto out;
	}
	/* The page again, as the link stands now, with the refusal. */
	int status = rp->status;
	buf_reset(&rp->body);
	if (link_lookup(db, token, &li) < 0 || render(&rp->body, db, &pc, token, &li, err) < 0)
		web_db_failed(w, s, rp);
	else
		rp->status = status;
out:
	store_clear(r);
	pthread_mutex_unlock(&s->lock);
}
