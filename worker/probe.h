/* probe.h -- the scheduler's probes: the only writer of health and of
 * probed attributes (qemu_guest_agent, container_status, reachable).
 *
 * A thread of its own, with its own database login (airlock_scheduler).
 * Every interval it reads the estate, asks each node about all its guests
 * over the node's one SSH session (guest agents in one batch and containers
 * with one pct list: agentbatch.h; what those cannot tell through
 * transport_probe), and writes what it saw with one airlock.record_probes()
 * call, so the pre-flight in airlock.run() works on fresh facts.  A VM
 * airlock is running a command or recovery on is left out of the round: its
 * agent serves that command.  Agents the batch could not decide are asked
 * with qm by a second thread, the qm lane, while the round goes on (qm waits
 * 3 s for a silent agent); the prober's thread records qm's answers when
 * idle, and leaves those agents out of its rounds until then.  Read-only
 * jail checks follow, within what is left of the round's time. */
#ifndef AIRLOCK_WORKER_PROBE_H
#define AIRLOCK_WORKER_PROBE_H

#include "transport/transport.h"
#include "worker/notify.h"

#include <stdbool.h>
#include <stdio.h>

struct prober;

/* conninfo: the scheduler's login.  Starts the thread; probes at once, then
 * every interval_s.  No discovery (discover.h). */
struct prober *prober_new(const char *conninfo, struct transport *t, int interval_s);
/* The same, posting side-door alerts (bypass.h) to n's webhooks (n must
 * outlive the prober), and, when discover is set, starting every round with
 * discovery of the cluster's guests (discover.h). */
struct prober *prober_new_alerting(const char *conninfo, struct transport *t, int interval_s,
                                   struct notifier *n, bool discover);
/* One round now, on the caller's thread (tests, benches), waiting for qm
 * (no lane).  Returns the number of entities written, -1 when the database
 * failed. */
int prober_round(const char *conninfo, struct transport *t, bool discover);
/* One round without discovery, printing one line per entity to out (slug,
 * health, confinement, what the probe saw); *unhealthy gets how many were
 * not healthy.  For `airlockd --probe-once`. */
int prober_round_report(const char *conninfo, struct transport *t, FILE *out, int *unhealthy);
/* Stops the threads (the lane ends the qm job in hand, bounded by the probe
 * timeout, and what it found is not recorded); NULL is a no-op. */
void prober_free(struct prober *p);

#endif
