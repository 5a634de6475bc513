/* hub.h -- one LISTEN for every open page.  A thread holds airlock-web's own
 * connection, LISTENs on the payload-free channels airlock_pending and
 * airlock_state, and counts notifications; server-sent-event streams wait on
 * that count.  Nothing polls: a stream wakes on a notification, or after its
 * keep-alive interval to send a comment line.  The thread reconnects with
 * backoff when the database goes away, and counts the reconnect as a change
 * (something may have happened meanwhile). */
#ifndef AIRLOCK_WEB_HUB_H
#define AIRLOCK_WEB_HUB_H

#include <stddef.h>
#include <stdint.h>

struct hub;

/* Starts the thread on conninfo; NULL with the reason in err when the first
 * connection or LISTEN fails. */
struct hub *hub_start(const char *conninfo, char *err, size_t errlen);
/* Stops the thread and wakes every waiter (they get -1 from then on).
 * The hub stays valid for waiters until hub_free().  NULL is a no-op. */
void hub_stop(struct hub *h);
void hub_free(struct hub *h); /* after hub_stop and once no one waits; NULL is a no-op */

/* The current count of changes. */
uint64_t hub_generation(struct hub *h);
/* Waits until the count differs from *seen (then updates it and returns 1),
 * timeout_ms passes (0), or the hub stops (-1). */
int hub_wait(struct hub *h, uint64_t *seen, int timeout_ms);

#endif
