/* web.h -- airlock-web's server, shared by its request handlers
 * (server.c routes, signin.c signs in and out, decide.c approves and
 * rejects).  Internal to web/. */
#ifndef AIRLOCK_WEB_WEB_H
#define AIRLOCK_WEB_WEB_H

#include "lib/buf.h"
#include "web/config.h"
#include "web/form.h"
#include "web/hub.h"
#include "web/ratelimit.h"
#include "web/session.h"

#include <pthread.h>
#include <stdbool.h>

struct store;

struct web {
	const struct web_config *cfg;
	bool tls;
	const char *cookie; /* the session cookie's name */
	struct session_table *sessions;
	struct ratelimit *failures;
	struct hub *hub;
	struct store *svc;      /* airlock-web's own login: failed sign-ins, TOTP secrets */
	pthread_mutex_t svc_mu; /* one statement at a time on svc */
};

/* What a handler answers: a status, an HTML body or a redirect, and at most
 * one Set-Cookie. */
struct reply {
	int status;
	struct buf body;
	const char *location; /* redirect target (static or borrowed for the request) */
	struct buf cookie;    /* Set-Cookie value, empty for none */
	const char *content_type;
};

/* POST /login: form fields login, password, code. */
void signin_post(struct web *w, const char *addr, const struct form *f, struct reply *rp);
/* POST /logout (CSRF already checked). */
void signin_out(struct web *w, struct session *s, const char *addr, struct reply *rp);
/* Closes a session's database connection (the session table's release). */
void signin_release(void *db);
/* Records a failed sign-in on airlock-web's own connection (best effort, logged). */
void signin_record_failure(struct web *w, const char *login, const char *addr, const char *why);

/* POST /r/ID/approve and /r/ID/reject (CSRF already checked). */
void decide_post(struct web *w, struct session *s, const char *addr, long long id, bool approve,
                 const struct form *f, struct reply *rp);
/* POST /r/ID/release-output and /r/ID/discard-output (CSRF already checked). */
void decide_output_post(struct web *w, struct session *s, const char *addr, long long id,
                        bool release, const struct form *f, struct reply *rp);

#endif
