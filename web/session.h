/* session.h -- signed-in operators: random ids, CSRF tokens, expiry.
 *
 * A session is created only after the database accepted the operator's own
 * login; it holds that login's connection (opaque here, closed with the
 * release function given to the table).  Ids and CSRF tokens are 256 random
 * bits from the kernel, hex-encoded.  A session ends when idle longer than
 * idle_s, older than max_s, on sign-out, or when the table must make room.
 * Pure apart from the random source: the caller passes the time. */
#ifndef AIRLOCK_WEB_SESSION_H
#define AIRLOCK_WEB_SESSION_H

#include "lib/buf.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define SESSION_TOKEN_LEN 64 /* hex characters of 32 random bytes */

struct session {
	char id[SESSION_TOKEN_LEN + 1];
	char csrf[SESSION_TOKEN_LEN + 1];
	char login[64];
	time_t created, last_seen;
	void *db;             /* the login's connection; use it under lock */
	pthread_mutex_t lock; /* one statement at a time on db */
	/* owned by the table */
	int refs;
	bool ended;
};

struct session_table;

/* cap sessions at most; release(db) closes a session's connection. */
struct session_table *session_table_new(int cap, int idle_s, int max_s, void (*release)(void *db));
void session_table_free(struct session_table *t); /* ends every session; NULL is a no-op */

/* A new session for login holding db, with one reference for the caller
 * (drop it with session_put).  Expired sessions are swept first; when the
 * table is still full the least recently used one ends.  NULL only when the
 * random source failed (db is then not taken). */
struct session *session_create(struct session_table *t, const char *login, void *db, time_t now);
/* The live session with this id, with a reference, its last_seen moved to
 * now; NULL when unknown, malformed or expired (an expired one ends). */
struct session *session_find(struct session_table *t, const char *id, time_t now);
void session_put(struct session_table *t, struct session *s);
/* Ends s now (sign-out); the caller still drops its reference. */
void session_end(struct session_table *t, struct session *s);
/* Whether s is still live at now (not ended, not idle or too old). */
bool session_live(struct session_table *t, const struct session *s, time_t now);
int session_count(struct session_table *t);

/* Whether token equals s's CSRF token, compared in constant time. */
bool session_csrf_ok(const struct session *s, const char *token);

/* Fills out (SESSION_TOKEN_LEN + 1 bytes) with a new random token; -1 when
 * the kernel's random source failed. */
int session_token(char *out);

/* The value of cookie `name` in a Cookie header, copied into out (outlen
 * bytes); false when absent or too long. */
bool session_cookie_get(const char *header, const char *name, char *out, size_t outlen);
/* Appends a Set-Cookie value: HttpOnly, SameSite=Strict, Path=/, Secure when
 * secure.  An empty value with max_age 0 deletes the cookie. */
void session_cookie_set(struct buf *b, const char *name, const char *value, bool secure,
                        int max_age);

#endif
