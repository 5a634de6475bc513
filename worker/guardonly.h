/* guardonly.h -- a "guard" request: a tagged Zerto checkpoint for a change
 * another tool will make (asked by `airlock hook`), carried out with the
 * same guard as a run's, recorded like a run, with no command sent. */
#ifndef AIRLOCK_WORKER_GUARDONLY_H
#define AIRLOCK_WORKER_GUARDONLY_H

#include "lib/execstate.h"
#include "store/queue.h"
#include "worker/pipeline.h"

#include <stdbool.h>

/* A claimed row is a guard request when its kind (read by the claim) is
 * "guard". */
/* received|queued -> queued -> (guard) -> running -> succeeded with the
 * rewind points, or refused with the guard's words; a lost database is a
 * release, retried later.  claimed is the state the row was claimed in. */
void guardonly_process(const struct pipeline_env *env, struct store *db, struct queue_item *it,
                       enum exec_state claimed);

#endif
