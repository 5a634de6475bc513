/* ratelimit.h -- failed sign-ins, counted per key ("addr:..." and
 * "login:..."): after max failures within window_s seconds a key is refused
 * until its oldest failure leaves the window.  A bounded table: when full,
 * the key whose last failure is oldest is forgotten.  Thread-safe; pure
 * apart from its mutex: the caller passes the time. */
#ifndef AIRLOCK_WEB_RATELIMIT_H
#define AIRLOCK_WEB_RATELIMIT_H

#include <stdbool.h>
#include <time.h>

#define RATELIMIT_MAX_FAILURES 64

struct ratelimit;

/* max in 1..RATELIMIT_MAX_FAILURES; cap keys at most. */
struct ratelimit *ratelimit_new(int max, int window_s, int cap);
void ratelimit_free(struct ratelimit *r); /* NULL is a no-op */

/* Whether key may try now; when not, *retry_s (if given) gets the seconds
 * until it may. */
bool ratelimit_allowed(struct ratelimit *r, const char *key, time_t now, int *retry_s);
void ratelimit_failed(struct ratelimit *r, const char *key, time_t now);
/* Forgets key's failures (a sign-in succeeded). */
void ratelimit_clear(struct ratelimit *r, const char *key);

#endif
