/* pipeline.h -- one claimed row, moved as far as it can go now:
 * received -> classified (queued, or pending_approval and released);
 * queued/approved -> re-validated -> live check -> guard -> running -> result. */
#ifndef AIRLOCK_WORKER_PIPELINE_H
#define AIRLOCK_WORKER_PIPELINE_H

#include "classifier/verdict.h"
#include "store/queue.h"
#include "worker/config.h"
#include "worker/durability.h"
#include "worker/guard.h"
#include "worker/metrics.h"
#include "worker/notify.h"
#include "worker/policyset.h"
#include "worker/slots.h"
#include "worker/target.h"

#include <stdatomic.h>
#include <stdbool.h>

struct pipeline_env {
	const char *worker_id;
	const struct config *cfg;
	struct policyset *policies;
	struct guard *guard;
	struct targets *targets;
	struct notifier *notifier;
	struct metrics *metrics; /* guard timings; may be NULL */
	struct slots *node_slots;
	struct durability *durability; /* may mutations be sent? */
	atomic_bool *stopping;         /* shutting down: give rows back rather than start them */
	atomic_bool *cancel;           /* grace is over: cancel commands in flight */
};

/* After a call failed with AL005 the row is no longer this worker's
 * (cancelled while it was checked or guarded): nothing ran, so its liveness
 * lock is let go.  Does nothing after any other failure. */
void pipeline_let_go_if_gone(struct store *db, const struct queue_item *it);

/* Processes one claimed row.  Every outcome is written to the row; a known
 * result is retried, whatever the database's error, until the write lands or
 * the grace of a stopping daemon is over (then logged with the result, and the
 * row is settled as outcome_unknown by a reaper). */
void pipeline_process(const struct pipeline_env *env, struct store *db, struct verdict *v,
                      struct queue_item *it);

/* Processes the new run row a wake-up's document describes (payload as
 * queue_wake_parse reads it): classifies it as described, checks its target
 * when it is an observation, then claims and classifies it in one call
 * (queue_claim_classified), which also starts an observation whose target
 * answered.  1 when the row was claimed and processed as pipeline_process
 * would; 0 when it was not claimed (the payload has no document, no policy
 * is loaded, the row is gone or no longer as described, or the call failed,
 * logged): the caller then claims as usual. */
int pipeline_wake(const struct pipeline_env *env, struct store *db, struct verdict *v,
                  const char *payload);

#endif
