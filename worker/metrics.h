/* metrics.h -- airlockd's Prometheus endpoint (text exposition format 0.0.4).
 *
 * GET /metrics on the configured address (metrics.address, loopback by
 * default; metrics.port).  Most of it is computed from the database at
 * scrape time, on the endpoint's own read-only connection with a short
 * statement timeout: requests by state and class, pending count and oldest
 * age, approval latency and execution durations (histograms), probe age per
 * entity, transport failures per node, webhook deliveries.  The rest are
 * counters kept in the process: guard durations and refusals, transport
 * sessions per node, webhook attempts.  The endpoint has a thread of its own
 * and answers one client at a time with bounded reads and writes: a scrape,
 * slow or stalled, never waits on a worker and no worker waits on it.
 * docs/metrics.md lists every metric. */
#ifndef AIRLOCK_WORKER_METRICS_H
#define AIRLOCK_WORKER_METRICS_H

#include "worker/config.h"
#include "worker/notify.h"

#include <stdbool.h>
#include <stdint.h>

struct metrics;
struct transport;

/* Binds the listening socket (so a taken port fails the start) and starts the
 * thread.  transport and notifier are borrowed and must outlive it.  NULL
 * with the reason in err. */
struct metrics *metrics_new(const struct config *cfg, struct transport *t, struct notifier *n,
                            char *err, size_t errlen);
/* One guard step of a mutating request: how long it took, and whether it
 * refused (nothing ran).  Thread-safe, lock-free; m may be NULL. */
void metrics_guard(struct metrics *m, int64_t ms, bool refused);
/* Whether the audit anchor file can be written: a failed attempt counts
 * one failure and sets airlock_audit_anchor_failing; a written anchor
 * clears it.  Thread-safe, lock-free; m may be NULL. */
void metrics_anchor(struct metrics *m, bool failing);
/* Stops the thread and closes the socket.  NULL is a no-op. */
void metrics_free(struct metrics *m);

#endif
