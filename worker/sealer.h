/* sealer.h -- airlockd seals new audit events into the hash chain.
 *
 * Events are written unsealed (no lock, no read of the chain's head), so that
 * transactions which write them do not queue behind one another.  Every
 * `seal_interval_ms` the scheduler thread calls airlock.seal_events(), which
 * gives the oldest unsealed committed events their chain position, prev_hash
 * and hash in one transaction per batch.  Several daemons may all try: the
 * function takes the chain's lock without waiting, so one seals and the
 * others find nothing to do.  A failure is logged (once until it clears) and
 * retried at the next tick; it never stops the daemon. */
#ifndef AIRLOCK_WORKER_SEALER_H
#define AIRLOCK_WORKER_SEALER_H

#include "store/store.h"

#include <stdbool.h>

/* Events sealed per transaction. */
#define SEALER_BATCH 2000

struct sealer;

struct sealer *sealer_new(void);
/* Seals what is unsealed on db: up to `max_batches` batches, stopping at the
 * first that is not full.  Returns the number of events sealed, -1 when a
 * batch failed (logged). */
long long sealer_tick(struct sealer *s, struct store *db, int max_batches);
void sealer_free(struct sealer *s); /* NULL is a no-op */

#endif
