/* decide.c -- approve and reject, as the operator's own login.
 *
 * One transaction: the payload hash the page showed must still be the
 * request's (else the operator approved something they did not read), then
 * airlock.approve() or airlock.reject() with every rule of theirs, then the
 * decision in the console's history.  A refusal by the database (own request,
 * not an approver, not pending any more, ...) is shown on the request page
 * with the database's own words, and nothing is recorded. */
#include "lib/log.h"
#include "lib/sqlstate.h"
#include "store/store.h"
#include "web/pages.h"
#include "web/html.h"
#include "web/web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTE_MAX 1000

/* 403 for a refusal by a rule, 409 for a request (or a link) that moved on,
 * 400 for something the form must say, 500 else. */
int decide_status(const char *sqlstate)
{
	if (sqlstate_is(sqlstate, SQLSTATE_SELF_APPROVAL) ||
	    sqlstate_is(sqlstate, SQLSTATE_NOT_AN_APPROVER) ||
	    sqlstate_is(sqlstate, SQLSTATE_INSUFFICIENT_PRIVILEGE))
		return 403;
	if (sqlstate_is(sqlstate, SQLSTATE_ILLEGAL_TRANSITION) ||
	    sqlstate_is(sqlstate, SQLSTATE_APPROVAL_IMPOSSIBLE) ||
	    sqlstate_is(sqlstate, SQLSTATE_ACTION_LINK_INVALID))
		return 409;
	if (sqlstate_is(sqlstate, SQLSTATE_INVALID_ARGUMENT) ||
	    sqlstate_is(sqlstate, SQLSTATE_HARD_TO_READ))
		return 400;
	return 500;
}

static void show(struct session *s, struct reply *rp, long long id, int status, const char *notice,
                 bool is_error)
{
	struct page_ctx pc = {.login = s->login, .csrf = s->csrf};

	buf_reset(&rp->body);
	rp->status = status;
	if (page_request(&rp->body, s->db, &pc, id, notice, is_error) != 0) {
		buf_reset(&rp->body);
		page_message(&rp->body, "Decision", notice);
	}
}

void decide_post(struct web *w, struct session *s, const char *addr, long long id, bool approve,
                 const struct form *f, struct reply *rp)
{
	const char *text = form_get(f, approve ? "note" : "reason");
	const char *hash = form_get(f, "hash");
	char ids[24], detail[64], err[600], q[700];
	struct store_res *r = NULL;
	struct store *db = s->db;
	int status = 500;

	snprintf(ids, sizeof(ids), "%lld", id);
	if (text && *text == '\0')
		text = NULL;
	pthread_mutex_lock(&s->lock);
	if (text && strlen(text) > NOTE_MAX) {
		show(s, rp, id, 400, "The note or reason is longer than 1000 bytes.", true);
		goto out;
	}
	if (!approve && text == NULL) {
		show(s, rp, id, 400,
		     "A rejection needs a reason; it is sent back to the requester.", true);
		goto out;
	}
	r = store_exec(db, "BEGIN", 0, NULL);
	if (r == NULL)
		goto failed;
	store_clear(r);
	if (approve) {
		r = store_exec(db,
		               "SELECT coalesce(payload_hash, '') FROM airlock.executions"
		               " WHERE id = $1::bigint",
		               1, (const char *const[]){ids});
		if (r == NULL)
			goto failed;
		if (store_nrows(r) == 1 &&
		    (hash == NULL || strcmp(hash, store_get(r, 0, 0)) != 0)) {
			store_exec_quiet(db, "ROLLBACK");
			show(s, rp, id, 409,
			     "The request changed since this page was loaded (it was classified "
			     "again). Nothing was approved: read it again, then decide.",
			     true);
			goto out;
		}
		store_clear(r);
	}
	const char *confirmed = form_get(f, "confirm_read");
	r = store_exec(db,
	               approve ? "SELECT airlock.approve($1::bigint, $2, $3::boolean)"
	                       : "SELECT airlock.reject($1::bigint, $2)",
	               approve ? 3 : 2,
	               (const char *const[]){
	                   ids, text, confirmed && strcmp(confirmed, "1") == 0 ? "true" : "false"});
	if (r == NULL)
		goto failed;
	snprintf(detail, sizeof(detail), "%s: %s", approve ? "approve" : "reject",
	         store_get(r, 0, 0));
	store_clear(r);
	r = store_exec(db, "SELECT airlock.web_decided($1::bigint, $2, $3)", 3,
	               (const char *const[]){ids, addr, detail});
	if (r == NULL)
		goto failed;
	store_clear(r);
	r = store_exec(db, "COMMIT", 0, NULL);
	if (r == NULL)
		goto failed;
	log_msg(LOG_INFO, "exec=%lld evt=web.decided login=%s addr=%s result=%s", id, s->login,
	        addr, log_quote(detail, q, sizeof(q)));
	show(s, rp, id, 200, detail, false);
	goto out;
failed:
	snprintf(err, sizeof(err), "%s", store_errmsg(db));
	status = decide_status(store_sqlstate(db));
	log_msg(LOG_INFO, "exec=%lld evt=web.decision_refused login=%s sqlstate=%s error=%s", id,
	        s->login, store_sqlstate(db)[0] ? store_sqlstate(db) : "-",
	        log_quote(err, q, sizeof(q)));
	store_exec_quiet(db, "ROLLBACK");
	if (store_sqlstate(db)[0] == '\0' && !store_connected(db)) {
		/* The connection is gone, and the session with it. */
		session_end(w->sessions, s);
		buf_reset(&rp->body);
		rp->status = 503;
		page_message(&rp->body, "Database connection lost",
		             "The connection to the database for your login was lost; nothing was "
		             "decided. Sign in again.");
		goto out;
	}
	show(s, rp, id, status, err, true);
out:
	store_clear(r);
	pthread_mutex_unlock(&s->lock);
}

/* Release or discard held output: one function call with the operator's
 * reason, and the decision in the console's history, in one transaction. */
void decide_output_post(struct web *w, struct session *s, const char *addr, long long id,
                        bool release, const struct form *f, struct reply *rp)
{
	const char *reason = form_get(f, "reason");
	char ids[24], detail[64], err[600], q[700];
	struct store_res *r = NULL;
	struct store *db = s->db;

	snprintf(ids, sizeof(ids), "%lld", id);
	pthread_mutex_lock(&s->lock);
	if (reason == NULL || *reason == '\0' || strlen(reason) > NOTE_MAX) {
		show(s, rp, id, 400,
		     "Releasing or discarding held output needs a reason (at most 1000 bytes); it "
		     "is recorded and the requester reads it.",
		     true);
		goto out;
	}
	r = store_exec(db, "BEGIN", 0, NULL);
	if (r == NULL)
		goto failed;
	store_clear(r);
	r = store_exec(db,
	               release ? "SELECT airlock.output_release($1::bigint, $2)"
	                       : "SELECT airlock.output_discard($1::bigint, $2)",
	               2, (const char *const[]){ids, reason});
	if (r == NULL)
		goto failed;
	snprintf(detail, sizeof(detail), "output: %s", store_get(r, 0, 0));
	store_clear(r);
	r = store_exec(db, "SELECT airlock.web_decided($1::bigint, $2, $3)", 3,
	               (const char *const[]){ids, addr, detail});
	if (r == NULL)
		goto failed;
	store_clear(r);
	r = store_exec(db, "COMMIT", 0, NULL);
	if (r == NULL)
		goto failed;
	log_msg(LOG_INFO, "exec=%lld evt=web.output_decided login=%s addr=%s result=%s", id,
	        s->login, addr, log_quote(detail, q, sizeof(q)));
	show(s, rp, id, 200, detail, false);
	goto out;
failed:
	snprintf(err, sizeof(err), "%s", store_errmsg(db));
	log_msg(LOG_INFO, "exec=%lld evt=web.decision_refused login=%s sqlstate=%s error=%s", id,
	        s->login, store_sqlstate(db)[0] ? store_sqlstate(db) : "-",
	        log_quote(err, q, sizeof(q)));
	int status = decide_status(store_sqlstate(db));
	store_exec_quiet(db, "ROLLBACK");
	if (store_sqlstate(db)[0] == '\0' && !store_connected(db)) {
		session_end(w->sessions, s);
		buf_reset(&rp->body);
		rp->status = 503;
		page_message(&rp->body, "Database connection lost",
		             "The connection to the database for your login was lost; nothing was "
		             "decided. Sign in again.");
		goto out;
	}
	show(s, rp, id, status, err, true);
out:
	store_clear(r);
	pthread_mutex_unlock(&s->lock);
}

/* One request of a bulk decision, in its own transaction: 0 when decided
 * (result names the outcome), -1 when refused (why says so, from the
 * database), -2 when the connection is gone. */
static int decide_one(struct store *db, const char *addr, const char *ids, const char *hash,
                      bool approve, const char *text, char *result, size_t resultlen)
{
	struct store_res *r = store_exec(db, "BEGIN", 0, NULL);
	char detail[64];

	if (r == NULL)
		goto failed;
	store_clear(r);
	if (approve) {
		r = store_exec(db,
		               "SELECT coalesce(payload_hash, '') FROM airlock.executions"
		               " WHERE id = $1::bigint",
		               1, (const char *const[]){ids});
		if (r == NULL)
			goto failed;
		if (store_nrows(r) == 1 && strcmp(hash, store_get(r, 0, 0)) != 0) {
			store_clear(r);
			store_exec_quiet(db, "ROLLBACK");
			snprintf(result, resultlen,
			         "it changed since the page was loaded (it was classified again): "
			         "nothing was approved; read it again");
			return -1;
		}
		store_clear(r);
	}
	r = store_exec(db,
	               approve ? "SELECT airlock.approve($1::bigint, $2)"
	                       : "SELECT airlock.reject($1::bigint, $2)",
	               2, (const char *const[]){ids, text});
	if (r == NULL)
		goto failed;
	snprintf(detail, sizeof(detail), "%s: %s", approve ? "approve" : "reject",
	         store_get(r, 0, 0));
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
	snprintf(result, resultlen, "%s", detail);
	return 0;
failed:
	snprintf(result, resultlen, "%s", store_errmsg(db));
	store_exec_quiet(db, "ROLLBACK");
	return store_sqlstate(db)[0] == '\0' && !store_connected(db) ? -2 : -1;
}

void decide_bulk_post(struct web *w, struct session *s, const char *addr, const struct form *f,
                      struct reply *rp)
{
	const char *decision = form_get(f, "decision"), *text = form_get(f, "reason");
	struct page_ctx pc = {.login = s->login, .csrf = s->csrf};
	bool approve = decision && strcmp(decision, "approve") == 0;
	struct buf lines = BUF_INIT;
	int decided = 0, refused = 0, picked = 0;
	char result[700], q[800];

	if (text && *text == '\0')
		text = NULL;
	if (decision == NULL || (!approve && strcmp(decision, "reject") != 0)) {
		web_message(rp, 400, "Bad form", "A bulk decision is approve or reject.");
		return;
	}
	if ((!approve && text == NULL) || (text && strlen(text) > NOTE_MAX)) {
		web_message(
		    rp, 400, "Nothing was decided",
		    "Rejecting needs a reason (at most 1000 bytes); it is sent back to each "
		    "requester.");
		return;
	}
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < f->n; i++) {
		char ids[24], hash[80];
		char *end;
		if (strcmp(f->key[i], "pick") != 0)
			continue;
		picked++;
		long long id = strtoll(f->val[i], &end, 10);
		if (id <= 0 || *end != ':' || strlen(end + 1) >= sizeof(hash)) {
			buf_puts(&lines, "<li class=\"refused\">");
			html_text(&lines, f->val[i]);
			buf_puts(&lines, ": not a request of this page</li>");
			refused++;
			continue;
		}
		snprintf(ids, sizeof(ids), "%lld", id);
		snprintf(hash, sizeof(hash), "%s", end + 1);
		int rc = decide_one(s->db, addr, ids, hash, approve, text, result, sizeof(result));
		buf_printf(&lines, "<li class=\"%s\" data-id=\"%s\"><a href=\"/r/%s\">#%s</a>: ",
		           rc == 0 ? "decided" : "refused", ids, ids, ids);
		html_text(&lines, result);
		buf_puts(&lines, "</li>");
		log_msg(LOG_INFO, "exec=%s evt=%s login=%s addr=%s bulk=1 result=%s", ids,
		        rc == 0 ? "web.decided" : "web.decision_refused", s->login, addr,
		        log_quote(result, q, sizeof(q)));
		if (rc == 0)
			decided++;
		else
			refused++;
		if (rc == -2) {
			session_end(w->sessions, s);
			buf_puts(&lines, "<li class=\"refused\">The connection to the database for "
			                 "your login was lost: the rest was not decided. Sign in "
			                 "again.</li>");
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (picked == 0) {
		buf_free(&lines);
		web_message(
		    rp, 400, "Nothing was decided",
		    "No request was chosen: tick the ones to decide, then press the button.");
		return;
	}
	buf_reset(&rp->body);
	rp->status = refused ? (decided ? 200 : 409) : 200;
	page_bulk_result(&rp->body, &pc, approve ? "Approved" : "Rejected", &lines, decided,
	                 refused);
	buf_free(&lines);
}
