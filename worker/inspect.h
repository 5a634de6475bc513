/* inspect.h -- whole-VM inspection requests (operators only): a failover test
 * of the VM from a checkpoint, its stop, or an offsite clone, at the VPG's
 * recovery site.  Planned and held for approval like a file recovery
 * (recover.h), then one Zerto action whose task is followed to its end.
 * Live failover and move are never offered. */
#ifndef AIRLOCK_WORKER_INSPECT_H
#define AIRLOCK_WORKER_INSPECT_H

#include "worker/recreq.h"

/* received -> pending_approval with the plan (VPG, its site, checkpoint), or
 * refused (no such checkpoint; stop: no test running). */
void inspect_plan(struct rec *r);
/* approved -> running -> succeeded (the task Completed) | failed. */
void inspect_run(struct rec *r);

#endif
