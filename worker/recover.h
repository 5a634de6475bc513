/* recover.h -- a "recover" request: restore guest files from a rewind point
 * with Zerto's journal file-level restore (FLR), after an operator's yes.
 *
 * received: plan it -- find the VPGs that hold the checkpoint, keep those
 *   whose recovery site is this ZVM's site (FLR runs only there: a VPG that
 *   recovers to a cloud or another site is refused, naming the site), check
 *   the point can be mounted now, and hold the row for approval with the
 *   plan (checkpoint, its time, VPG, site, paths, what happens to the current
 *   files) as what the operator sees.  Always held, whoever asked.
 * approved: refuse while an FLR session for the VM is up (naming it) or the
 *   ZVM says the point cannot be mounted (failover test, clone, ...); else
 *   mount, wait for the mount, find each path in the FLR namespace, download
 *   it (TLS verified, refused over recover.max_file_bytes), write it into the
 *   guest (guestfile.h), and ALWAYS unmount, reporting the unmount's outcome.
 *   Every step is an event on the row; every wait is bounded. */
#ifndef AIRLOCK_WORKER_RECOVER_H
#define AIRLOCK_WORKER_RECOVER_H

#include "store/queue.h"
#include "worker/pipeline.h"

#include <stdbool.h>

/* Moves a claimed recovery as far as it goes now (see above). */
void recover_process(const struct pipeline_env *env, struct store *db, struct queue_item *it);

#endif
