/* signin.c -- signing in as one's own database login, and out.
 *
 * The order matters.  (1) The rate limit, per address and per login, before
 * anything reaches the database.  (2) A connection AS the login with the
 * password given (SCRAM where pg_hba asks for it); then a second attempt with
 * a random wrong password, which must fail: a server that lets a login in
 * without checking its password (a `trust` line in pg_hba) would let anyone
 * be anyone, so the console refuses it.  (3) The TOTP code when the login
 * enrolled one, checked against the secret only airlock-web's own login can
 * read, and never accepted twice.  (4) web_signed_in() on the login's own
 * connection: the database refuses superusers, agents and logins outside
 * airlock_operator, with the same reason approve() would give, and records
 * the sign-in.  Every failure is recorded too. */
#include "lib/log.h"
#include "lib/totp.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "web/links.h"
#include "web/pages.h"
#include "web/web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOGIN_MAX 63

void signin_release(void *db)
{
	store_close(db);
}

/* A statement on airlock-web's own connection (the caller holds svc_mu); a
 * connection lost since the last one (a database restart) is made again
 * once before the statement fails. */
struct store_res *web_svc_exec(struct web *w, const char *sql, int n, const char *const *params)
{
	struct store_res *r = store_exec(w->svc, sql, n, params);

	if (r == NULL && !store_connected(w->svc) && store_reset(w->svc) == 0)
		r = store_exec(w->svc, sql, n, params);
	return r;
}

void signin_record_failure(struct web *w, const char *login, const char *addr, const char *why)
{
	char q1[200], q2[600];
	struct store_res *r;

	log_msg(LOG_INFO, "evt=web.signin_failed login=%s addr=%s why=%s",
	        log_quote(login, q1, sizeof(q1)), addr, log_quote(why, q2, sizeof(q2)));
	pthread_mutex_lock(&w->svc_mu);
	r = web_svc_exec(w, "SELECT airlock.web_sign_in_failed($1, $2, $3)", 3,
	                 (const char *const[]){login, addr, why});
	if (r == NULL)
		log_msg(LOG_ERROR, "evt=web.record_failed error=%s",
		        log_quote(store_errmsg(w->svc), q2, sizeof(q2)));
	store_clear(r);
	pthread_mutex_unlock(&w->svc_mu);
}

/* Appends key='value' to a libpq connection string, quoted as libpq reads it. */
static void conn_kv(struct buf *b, const char *key, const char *value)
{
	buf_printf(b, " %s='", key);
	for (const char *p = value; *p; p++) {
		if (*p == '\'' || *p == '\\')
			buf_putc(b, '\\');
		buf_putc(b, *p);
	}
	buf_putc(b, '\'');
}

static struct store *connect_as(const struct web_config *cfg, const char *login,
                                const char *password, char *err, size_t errlen)
{
	struct buf ci = BUF_INIT;
	char opts[64];
	struct store *s;

	/* connect_timeout first, so that the operator_database's own wins. */
	buf_puts(&ci, "connect_timeout=10 ");
	buf_puts(&ci, cfg->operator_database);
	conn_kv(&ci, "user", login);
	conn_kv(&ci, "password", password);
	snprintf(opts, sizeof(opts), "-c statement_timeout=%d", cfg->statement_timeout_ms);
	s = store_open_with(buf_str(&ci), "airlock-web", opts, err, errlen);
	explicit_bzero(ci.data, ci.cap);
	buf_free(&ci);
	return s;
}

static bool login_shape_ok(const char *login)
{
	size_t n = strlen(login);

	if (n == 0 || n > LOGIN_MAX)
		return false;
	for (const char *p = login; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* Hex text of a bytea ("\x...") into bytes; -1 when malformed. */
static int unhex(const char *s, unsigned char *out, size_t cap)
{
	size_t n = 0;

	if (s == NULL || s[0] != '\\' || s[1] != 'x')
		return -1;
	for (s += 2; s[0] && s[1]; s += 2) {
		unsigned v;
		if (n >= cap || sscanf(s, "%2x", &v) != 1)
			return -1;
		out[n++] = (unsigned char)v;
	}
	return (int)n;
}

/* 0 when login has no second factor or code is right and unused; -1 with
 * the reason in why. */
static int second_factor(struct web *w, const char *login, const char *code, char *why,
                         size_t whylen)
{
	unsigned char key[64];
	int keylen = -1, rc = -1;
	struct store_res *r;
	char step[24];

	pthread_mutex_lock(&w->svc_mu);
	r = web_svc_exec(w, "SELECT enrolled, secret, last_step FROM airlock.web_totp_secret($1)",
	                 1, (const char *const[]){login});
	if (r == NULL || store_nrows(r) != 1) {
		snprintf(why, whylen, "could not read the second factor: %s", store_errmsg(w->svc));
		goto out;
	}
	if (store_get(r, 0, 0)[0] != 't') {
		rc = 0;
		goto out;
	}
	keylen = unhex(store_get(r, 0, 1), key, sizeof(key));
	uint64_t last = strtoull(store_get(r, 0, 2), NULL, 10);
	if (code == NULL || *code == '\0') {
		snprintf(why, whylen, "this login needs its one-time code");
		goto out;
	}
	uint64_t s = keylen > 0 ? totp_check(key, (size_t)keylen, code, time(NULL), last) : 0;
	if (s == 0) {
		snprintf(why, whylen, "wrong, expired or already used one-time code");
		goto out;
	}
	store_clear(r);
	snprintf(step, sizeof(step), "%llu", (unsigned long long)s);
	r = web_svc_exec(w, "SELECT airlock.web_totp_use($1, $2::bigint)", 2,
	                 (const char *const[]){login, step});
	if (r == NULL || store_get(r, 0, 0)[0] != 't') {
		snprintf(why, whylen, "wrong, expired or already used one-time code");
		goto out;
	}
	rc = 0;
out:
	store_clear(r);
	pthread_mutex_unlock(&w->svc_mu);
	explicit_bzero(key, sizeof(key));
	return rc;
}

static void refuse(struct web *w, struct reply *rp, int status, const char *login, const char *addr,
                   const char *recorded, const char *shown, const char *next)
{
	time_t now = time(NULL);
	char k[128];

	signin_record_failure(w, login, addr, recorded);
	snprintf(k, sizeof(k), "addr:%s", addr);
	ratelimit_failed(w->failures, k, now);
	snprintf(k, sizeof(k), "login:%.100s", login);
	ratelimit_failed(w->failures, k, now);
	rp->status = status;
	page_signin(&rp->body, shown, next);
}

void signin_post(struct web *w, const char *addr, const struct form *f, struct reply *rp)
{
	const char *login = form_get(f, "login"), *password = form_get(f, "password");
	const char *code = form_get(f, "code");
	const char *next = links_safe_next(form_get(f, "next")) ? form_get(f, "next") : NULL;
	char err[512], why[256], ka[96], kl[128], wrong[72];
	struct store *db = NULL, *probe = NULL;
	struct store_res *r = NULL;
	int retry = 0;
	time_t now = time(NULL);

	if (login == NULL || password == NULL || !login_shape_ok(login) || *password == '\0') {
		rp->status = 400;
		page_signin(&rp->body, "Give your database login and its password.", next);
		return;
	}
	snprintf(ka, sizeof(ka), "addr:%s", addr);
	snprintf(kl, sizeof(kl), "login:%.100s", login);
	if (!ratelimit_allowed(w->failures, ka, now, &retry) ||
	    !ratelimit_allowed(w->failures, kl, now, &retry)) {
		char shown[160];
		signin_record_failure(w, login, addr, "rate limited: too many failed sign-ins");
		snprintf(shown, sizeof(shown), "Too many failed sign-ins. Try again in %d seconds.",
		         retry > 0 ? retry : 1);
		rp->status = 429;
		page_signin(&rp->body, shown, next);
		return;
	}
	db = connect_as(w->cfg, login, password, err, sizeof(err));
	if (db == NULL) {
		log_msg(LOG_DEBUG, "evt=web.connect_failed addr=%s", addr);
		refuse(w, rp, 403, login, addr, "wrong password or unknown login",
		       "Sign-in failed: wrong login or password.", next);
		return;
	}
	/* The server must have checked the password: a random one must fail. */
	if (session_token(wrong) < 0) {
		refuse(w, rp, 500, login, addr, "no random source",
		       "Sign-in failed: internal error.", next);
		goto out;
	}
	probe = connect_as(w->cfg, login, wrong, err, sizeof(err));
	if (probe != NULL) {
		log_msg(LOG_ERROR, "evt=web.no_password_check login=%s addr=%s", login, addr);
		refuse(w, rp, 403, login, addr,
		       "the database let this login in without checking its password",
		       "Sign-in refused: the database does not check this login's password "
		       "(pg_hba.conf must ask for scram-sha-256 for connections from airlock-web).",
		       next);
		goto out;
	}
	if (second_factor(w, login, code, why, sizeof(why)) < 0) {
		refuse(w, rp, 403, login, addr, why,
		       "Sign-in failed: wrong or missing one-time code.", next);
		goto out;
	}
	r = store_exec(db, "SELECT airlock.web_signed_in($1)", 1, (const char *const[]){addr});
	if (r == NULL) {
		/* A login outside airlock_operator may not even call it. */
		if (strcmp(store_sqlstate(db), "42501") == 0)
			snprintf(
			    why, sizeof(why),
			    "sign in to the console: %s is not a member of airlock_operator; only "
			    "operators sign in here",
			    login);
		else
			snprintf(why, sizeof(why), "%s", store_errmsg(db));
		refuse(w, rp, 403, login, addr, why, why, next);
		goto out;
	}
	ratelimit_clear(w->failures, kl);
	struct session *s = session_create(w->sessions, login, db, now);
	if (s == NULL) {
		refuse(w, rp, 500, login, addr, "no random source",
		       "Sign-in failed: internal error.", next);
		goto out;
	}
	db = NULL; /* the session owns it */
	log_msg(LOG_INFO, "evt=web.signed_in login=%s addr=%s", login, addr);
	session_cookie_set(&rp->cookie, w->cookie, s->id, w->tls, w->cfg->session_max_s);
	session_put(w->sessions, s);
	rp->status = 303;
	if (next) {
		buf_puts(&rp->where, next);
		rp->location = buf_str(&rp->where);
	} else {
		rp->location = "/";
	}
out:
	store_clear(r);
	store_close(probe);
	store_close(db);
}

void signin_out(struct web *w, struct session *s, const char *addr, struct reply *rp)
{
	pthread_mutex_lock(&s->lock);
	store_clear(
	    store_exec(s->db, "SELECT airlock.web_signed_out($1)", 1, (const char *const[]){addr}));
	pthread_mutex_unlock(&s->lock);
	log_msg(LOG_INFO, "evt=web.signed_out login=%s addr=%s", s->login, addr);
	session_end(w->sessions, s);
	session_cookie_set(&rp->cookie, w->cookie, "", w->tls, 0);
	rp->status = 303;
	rp->location = "/login";
}
