/* anchorer.h -- airlockd signs the audit chain's head and appends it outside the database.
 *
 * Every `audit.every_events` new events, or every `audit.every_seconds` when
 * fewer arrived, the daemon reads the newest sealed event's chain position
 * (seq) and hash, signs them
 * with its Ed25519 key (lib/anchor.h) and appends the line to the anchor file
 * (fsync'd; optionally also to syslog).  Before each anchor it checks that the
 * event it anchored last is still there with the same hash, so a truncation
 * or a rewrite is logged (evt=audit.truncated / evt=audit.rewritten) as soon
 * as the daemon sees it, not only when someone runs `airlock audit verify
 * --anchors`.  A failure is logged and retried; it never stops the daemon. */
#ifndef AIRLOCK_WORKER_ANCHORER_H
#define AIRLOCK_WORKER_ANCHORER_H

#include "store/store.h"
#include "worker/config.h"

#include <stdbool.h>

struct anchorer;

/* Loads the key and reads the anchor file's last anchor (the file is created
 * when missing).  NULL with the reason in err. */
struct anchorer *anchorer_new(const struct config *cfg, char *err, size_t errlen);
/* Anchors the head when it is due (always when `force` and there is a new
 * event), on db. */
void anchorer_tick(struct anchorer *a, struct store *db, bool force);
void anchorer_free(struct anchorer *a); /* NULL is a no-op */

#endif
