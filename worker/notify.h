/* notify.h -- tell operators what happens to requests: webhooks fed by the
 * database's outbox.
 *
 * The database writes one outbox row (airlock.notifications) for every
 * decision point and outcome of a request, in the transaction that changes
 * the request, and reminders and escalations for requests left waiting.  A
 * thread of its own, on its own connection, expands each outbox row into one
 * delivery per webhook that wants it (airlock.notification_deliveries) and
 * delivers them with retries and exponential backoff, recording every
 * attempt; several daemons share the work without sending a delivery twice at
 * once.  The daemon's workers never wait on a chat service.
 *
 * Detections that have no request (changes and logins outside airlock, from
 * the prober) are posted with notifier_post and delivered from memory with the
 * same formats, signatures and retries.
 *
 * A webhook that names an operator is never used for that operator's own
 * requests: nobody is asked to review themselves. */
#ifndef AIRLOCK_WORKER_NOTIFY_H
#define AIRLOCK_WORKER_NOTIFY_H

#include "worker/config.h"

#include <cjson/cJSON.h>

struct notifier;

/* Copies what it needs from cfg and starts the delivery thread, which
 * connects to cfg->database (retrying while it cannot).  Never NULL. */
struct notifier *notifier_new(const struct config *cfg);
/* Queues msg (taken over; needs "event" and "text") for every webhook that
 * wants its event, except those of `requester`.  Never blocks on the network;
 * drops the oldest message when 256 wait. */
void notifier_post(struct notifier *n, const char *requester, cJSON *msg);

/* notifications.side_door_interval_s: at most one side_door notice per
 * agent host in this many seconds (sidedoornote.h). */
int notifier_side_door_interval_s(const struct notifier *n);

/* Counters since start, for the metrics endpoint. */
struct notifier_stats {
	long long sent;         /* deliveries answered 2xx */
	long long failed;       /* attempts that failed (each retry counts) */
	long long gave_up;      /* deliveries that failed for good */
	long long outbox_error; /* database errors while reading the outbox */
};
void notifier_stats(struct notifier *n, struct notifier_stats *out);

/* Delivers what is due for up to grace_ms, then stops the thread. */
void notifier_free(struct notifier *n, int grace_ms);

#endif
