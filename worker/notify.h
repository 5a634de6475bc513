/* notify.h -- tell operators a request waits: POST JSON to configured webhooks.
 *
 * A background thread delivers, with retries, so the daemon never waits on a
 * chat service.  A webhook that names an operator is never used for that
 * operator's own requests: nobody is asked to review themselves. */
#ifndef AIRLOCK_WORKER_NOTIFY_H
#define AIRLOCK_WORKER_NOTIFY_H

#include "worker/config.h"

#include <cjson/cJSON.h>

struct notifier;

/* Copies the webhook list from cfg.  NULL-free: always returns a notifier
 * (one with no webhooks drops everything). */
struct notifier *notifier_new(const struct config *cfg);
/* Queues msg (taken over) for every webhook except those of `requester`.
 * Never blocks on the network; drops the oldest message when 256 wait. */
void notifier_post(struct notifier *n, const char *requester, cJSON *msg);
/* Delivers what is queued for up to grace_ms, then stops the thread. */
void notifier_free(struct notifier *n, int grace_ms);

#endif
