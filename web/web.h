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
 * one Set-Cookie; and, for a chat's callback, one JSON POST to make once the
 * answer is sent (Slack's response_url). */
struct reply {
	int status;
	struct buf body;
	const char *location; /* redirect target (static or borrowed for the request) */
	struct buf where;     /* a redirect target built for this reply (location points here) */
	struct buf cookie;    /* Set-Cookie value, empty for none */
	const char *content_type;
	char *after_url, *after_body; /* the POST to make after the answer; NULL: none */
};

/* POST /login: form fields login, password, code, and next (the console
 * path to return to; anything but a safe one returns to /). */
void signin_post(struct web *w, const char *addr, const struct form *f, struct reply *rp);
/* POST /logout (CSRF already checked). */
void signin_out(struct web *w, struct session *s, const char *addr, struct reply *rp);
/* Closes a session's database connection (the session table's release). */
void signin_release(void *db);
/* A statement on airlock-web's own connection, with svc_mu held; a lost
 * connection is made again once. */
struct store_res *web_svc_exec(struct web *w, const char *sql, int n, const char *const *params);
/* Records a failed sign-in on airlock-web's own connection (best effort, logged). */
void signin_record_failure(struct web *w, const char *login, const char *addr, const char *why);

/* POST /r/ID/approve and /r/ID/reject (CSRF already checked). */
void decide_post(struct web *w, struct session *s, const char *addr, long long id, bool approve,
                 const struct form *f, struct reply *rp);
/* POST /r/ID/release-output and /r/ID/discard-output (CSRF already checked). */
void decide_output_post(struct web *w, struct session *s, const char *addr, long long id,
                        bool release, const struct form *f, struct reply *rp);
/* POST /bulk: every "ID:HASH" field pick decided as decision (approve or
 * reject) with the note or reason, each in its own transaction, for the
 * payload the page showed (CSRF already checked). */
void decide_bulk_post(struct web *w, struct session *s, const char *addr, const struct form *f,
                      struct reply *rp);

/* The HTTP status a refusal's SQLSTATE means to a decision. */
int decide_status(const char *sqlstate);

/* GET /a/TOKEN (web/action.c): the confirmation page of an action link, for
 * the signed-in operator; it decides nothing. */
void action_get(struct web *w, struct session *s, const char *token, struct reply *rp);
/* POST /a/TOKEN (CSRF already checked): uses the link once, as the
 * operator's own login. */
void action_post(struct web *w, struct session *s, const char *addr, const char *token,
                 const struct form *f, struct reply *rp);

/* POST /chat/slack and /chat/mattermost (web/chat.c): a chat's button,
 * verified (Slack's signing secret; the HMAC Mattermost's context carries),
 * answered with a link to the confirmation page for the chat user's mapped
 * login.  Headers as the request carried them (NULL when absent). */
void chat_slack_post(struct web *w, const char *timestamp, const char *signature,
                     const struct buf *body, struct reply *rp);
void chat_mattermost_post(struct web *w, const struct buf *body, struct reply *rp);

/* A database failure on a session's connection, shown on rp; one without an
 * SQLSTATE means the connection itself is gone, and the session ends. */
void web_db_failed(struct web *w, struct session *s, struct reply *rp);
/* A small page with one message on rp. */
void web_message(struct reply *rp, int status, const char *title, const char *text);

#endif
