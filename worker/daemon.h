/* daemon.h -- airlockd: claim, classify, hold, re-validate, guard, execute, record.
 *
 * One process, `workers` threads, each with its own database connection, each
 * claiming rows itself (so the claim and the row's liveness lock live on the
 * same session).  The main thread listens (LISTEN airlock_work,
 * airlock_policy), wakes idle workers, settles rows of dead workers, expires
 * pending rows past their TTL and approved rows whose approval lapsed, reloads the policy on NOTIFY
 * and the config on SIGHUP.  A failure in one execution is recorded on its row; it never ends the
 * daemon. */
#ifndef AIRLOCK_WORKER_DAEMON_H
#define AIRLOCK_WORKER_DAEMON_H

#include "worker/config.h"

#include <stdatomic.h>

struct daemon;

/* Takes over cfg.  NULL with the reason in err when a part cannot start
 * (the transport, the guard). */
struct daemon *daemon_new(struct config *cfg, char *err, size_t errlen);
/* Runs until *stop becomes non-zero; *reload asks for the config to be read
 * again (the old one stays if the new one is invalid).  On stop: no new
 * claims, in-flight executions get grace_s to finish, then are cancelled and
 * recorded.  Returns 0; 1 when the database's schema is older or newer than
 * this airlockd understands (logged as evt=schema.refused, nothing claimed).
 * Under systemd it sends READY=1 once claiming, STOPPING=1 on stop, and the
 * watchdog's pings (worker/sdnotify.h). */
int daemon_run(struct daemon *d, atomic_bool *stop, atomic_bool *reload, int grace_s);
void daemon_free(struct daemon *d); /* NULL is a no-op */

#endif
