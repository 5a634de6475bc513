/* flrwatch.h -- the scheduler's check on file-level restore sessions.
 *
 * A session left mounted on the ZVM (a failed unmount, a recovery whose
 * daemon died) blocks the next recovery of its VM.  Every interval this
 * thread lists the ZVM's FLR sessions; each one mounted longer than
 * recover.flr_session_warn_s is logged (evt=flr.stale, level warn) and
 * recorded as the VM entity's check "flr_session" (warning, with how to end
 * it); a VM whose stale session is gone gets the check back to ok.  Runs
 * with the scheduler's login, like the probes. */
#ifndef AIRLOCK_WORKER_FLRWATCH_H
#define AIRLOCK_WORKER_FLRWATCH_H

#include "worker/config.h"

struct flrwatch;

/* NULL (nothing started) when cfg has no zerto section or no
 * scheduler_database.  Checks at once, then every cfg->probe_interval_s.
 * cfg is copied from as needed; it need not outlive the call. */
struct flrwatch *flrwatch_new(const struct config *cfg);
/* One check now, on the caller's thread: how many stale sessions, -1 when the
 * ZVM or the database could not be asked. */
int flrwatch_round(const struct config *cfg);
void flrwatch_free(struct flrwatch *w); /* stops the thread; NULL is a no-op */

#endif
