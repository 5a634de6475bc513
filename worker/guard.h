/* guard.h -- the guard step: what must hold before a mutating class runs,
 * and the rewind-point status operators see with a request.
 *
 * With a ZVM configured the guard is zerto/guard.h: a confirmed tagged
 * checkpoint on every VPG protecting the VM.  Without one, or for a target
 * Zerto cannot protect (a Proxmox host, a container), there is no rewind
 * point, and policy decides: reversible_low runs and records "no rewind
 * point" (configurable); an approved config_mutation or destructive runs only
 * if the request showed, when it was approved, that no rewind point was
 * possible. */
#ifndef AIRLOCK_WORKER_GUARD_H
#define AIRLOCK_WORKER_GUARD_H

#include "classifier/classes.h"
#include "store/queue.h"
#include "worker/config.h"
#include "zerto/client.h"

#include <stddef.h>

struct guard;

/* The config's zerto section as the ZVM client takes it (strings borrowed
 * from cfg): one place for airlockd's guard and `airlock doctor`. */
void guard_zerto_config(const struct config *cfg, struct zerto_config *zc);

/* NULL with the reason in err when the Zerto settings are unusable. */
struct guard *guard_new(const struct config *cfg, char *err, size_t errlen);
void guard_free(struct guard *g); /* NULL is a no-op */

/* The rewind-point status to show with the request; *possible is 1 when a
 * checkpoint can be made, 0 when it cannot, -1 when unknown (ZVM unreachable). */
void guard_status(struct guard *g, const struct queue_item *it, char *out, size_t outlen,
                  int *possible);

/* Runs the guard for a claimed row about to execute with class cls.  Returns
 * 0 to proceed, with *rewind_json (rewind points or NULL) and *guard_json
 * (what the guard did) for the caller to free; -1 to refuse, with the reason
 * (what happened, that nothing ran, what to do) in reason, and in
 * *rewind_json the checkpoints it made anyway (NULL when none), which the
 * refusal records on the row.  Steps are recorded as events through db. */
int guard_before(struct guard *g, struct store *db, const char *worker, const struct queue_item *it,
                 enum risk_class cls, char **rewind_json, char **guard_json, char *reason,
                 size_t reasonlen);

/* The longest guard_before can take, in ms, for sizing deadlines. */
long guard_worst_case_ms(const struct guard *g);

#endif
