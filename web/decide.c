/* decide.c -- approve and reject, as the operator's own login.
 *
 * One transaction: the payload hash the page showed must still be the
 * request's (else the operator approved something they did not read), then
 * airlock.approve() or airlock.reject() with every rule of theirs, then the
 * decision in the console's history.  A refusal by the database (own request,
 * not an approver, not pending any more, ...) is shown on the request page
 * with the database's own words, and nothing is recorded. */
#include "lib/log.h"
#include "store/store.h"
#include "web/pages.h"
#include "web/web.h"

#include <stdio.h>
#include <string.h>

#define NOTE_MAX 1000

/* 403 for a refusal by a rule, 409 for a request that moved on, 500 else. */
static int status_for(const char *sqlstate)
{
	if (strcmp(sqlstate, "AL006") == 0 || strcmp(sqlstate, "AL009") == 0 ||
	    strcmp(sqlstate, "42501") == 0)
		return 403;
	if (strcmp(sqlstate, "AL005") == 0 || strcmp(sqlstate, "AL008") == 0)
		return 409;
	if (strcmp(sqlstate, "AL002") == 0)
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
	log_msg(LOG_INFO, "exec=%lld evt=web.decided login=%s addr=%s result=%s", id, s->login,
	        addr, log_quote(detail, q, sizeof(q)));
	show(s, rp, id, 200, detail, false);
	goto out;
failed:
	snprintf(err, sizeof(err), "%s", store_errmsg(db));
	status = status_for(store_sqlstate(db));
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
	int status = status_for(store_sqlstate(db));
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
