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
 * --anchors`.
 *
 * An anchor is in the file whole or not at all: a write cut short (a full
 * disk) is cut back off at once, and before every write a tail that does not
 * end a line (a crash mid-write) is ended with a newline, so that no anchor is
 * glued to it (the piece stays, and `audit verify --anchors` reports it as
 * torn).  An anchor that could not be written is retried every
 * tick and raises an alarm once: the log (evt=audit.anchor_failed), the
 * metrics (airlock_audit_anchor_failing) and the webhooks (event
 * audit_anchor_failed); with audit.hold_mutations (the default) mutations
 * are held until an anchor lands again (evt=audit.anchor_recovered).  It
 * never stops the daemon. */
#ifndef AIRLOCK_WORKER_ANCHORER_H
#define AIRLOCK_WORKER_ANCHORER_H

#include "store/store.h"
#include "worker/config.h"

#include <stdbool.h>

struct anchorer;

/* Loads the key and reads the anchor file's last anchor (the file is created
 * when missing).  NULL with the reason in err. */
struct anchorer *anchorer_new(const struct config *cfg, char *err, size_t errlen);
struct metrics;
struct notifier;
struct durability;

/* Where a failing anchor file is told: metrics and notifier may be NULL;
 * durability gets the hold (audit.hold_mutations).  Borrowed; they must
 * outlive a. */
void anchorer_alarms(struct anchorer *a, struct metrics *m, struct notifier *n,
                     struct durability *d);
/* Anchors the head when it is due (always when `force`, or while the last
 * anchor could not be written, and there is a new event), on db. */
void anchorer_tick(struct anchorer *a, struct store *db, bool force);
void anchorer_free(struct anchorer *a); /* NULL is a no-op */

#endif
