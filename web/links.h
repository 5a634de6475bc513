/* links.h -- the console's own addresses and what comes back to it: the
 * page a sign-in returns to, action-link tokens, query strings.
 *
 * Absolute addresses that leave airlock (webhooks, next_step, the agents'
 * answers, the command line's hints) are built by the database alone
 * (airlock.console_url()); the console serves the same paths: /r/ID for a
 * request, /a/TOKEN for an action link, /agents/LOGIN for an agent.  Pure. */
#ifndef AIRLOCK_WEB_LINKS_H
#define AIRLOCK_WEB_LINKS_H

#include "lib/buf.h"

#include <stdbool.h>

#define LINKS_NEXT_MAX  512 /* bytes of a path a sign-in returns to */
#define LINKS_TOKEN_LEN 64  /* hex characters of an action link's token */

/* Whether next is a path on this console a sign-in may return to: it starts
 * with one "/" (not "//" or "/\", which browsers read as another host),
 * holds only printable ASCII without backslashes, and is at most
 * LINKS_NEXT_MAX bytes.  Anything else, and the sign-in form, sends to "/". */
bool links_safe_next(const char *next);

/* Appends s percent-encoded for a query value or a path segment: every byte
 * but letters, digits and - . _ ~ becomes %XX. */
void links_encode(struct buf *b, const char *s);

/* Whether t is an action link's token: LINKS_TOKEN_LEN lowercase hex. */
bool links_token_ok(const char *t);

#endif
