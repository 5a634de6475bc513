/* sidedoornote.h -- telling operators what agents' hosts reported: the
 * hook's denials and asks and `airlock hook --check` results with an open
 * door, as one `side_door` notice per agent host (by the address the
 * database saw its connections come from) at most every
 * notifications.side_door_interval_s, counting what came in meanwhile.
 * airlock.side_door_due() keeps the counts and the last notice per host, so
 * several daemons send one notice between them.  Every notice says the
 * reports are the agent's host's own and not verified. */
#ifndef AIRLOCK_WORKER_SIDEDOORNOTE_H
#define AIRLOCK_WORKER_SIDEDOORNOTE_H

#include "store/store.h"
#include "worker/notify.h"

#include <cjson/cJSON.h>

/* Posts the notices that are due to n's webhooks; returns how many, or -1
 * when the database failed (logged). */
int sidedoor_notify(struct store *db, struct notifier *n);

/* One notice from a row of airlock.side_door_due(): host_key (the address,
 * or "local"), hosts and agents as reported, the counts, the latest
 * report's time and detail.  For the above and its tests. */
cJSON *sidedoor_notice(const char *host_key, const char *hosts, const char *agents, int denials,
                       int asks, int open_reports, const char *last_at, const char *last_detail);

#endif
