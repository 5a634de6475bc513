/* agentbatch.h -- every guest agent of one node asked with one command, and
 * every container's state with another.
 *
 * `qm agent <vmid> ping` costs a process on the node per VM (PVE's qm is a
 * Perl program: hundreds of milliseconds each), so a node with hundreds of
 * VMs cannot be probed that way every minute.  Instead one short Perl
 * program -- Perl is on every Proxmox VE node -- is sent over the node's
 * session: it opens each VM's agent socket (/var/run/qemu-server/<vmid>.qga,
 * where QEMU serves the agent while the VM runs with an agent configured)
 * and asks guest-sync-delimited then guest-info, as qm does.
 *
 * Taking turns.  An agent's socket serves one client at a time: a client
 * that connects while another is served waits in the socket's queue (QEMU
 * listens with a backlog of one), and a connect to a full queue fails with
 * EAGAIN.  qm takes no lock of its own for agent commands; this queue is the
 * only turn-taking there is, and every qm call holds the agent for one short
 * exchange.  The batch keeps to the same rules and holds each agent for
 * less than anyone waiting behind it will wait:
 *   - connects never block: a full queue is a busy agent, skipped at once;
 *   - it sends both requests on connect and closes each socket as soon as
 *     its answer is in, so an agent that answers is held for one exchange;
 *   - it waits AGENTBATCH_WAIT_MS for all answers together, less than qm's
 *     own 3-second ping bound, so a qm call queued behind the batch (a
 *     command airlock runs) still gets its turn in time;
 *   - guests airlock is running a command or recovery on are not asked at
 *     all (the scheduler leaves them out: probe.c).
 * Only an answer decides anything: an agent that answers is running (with
 * guest-exec enabled or not).  A busy, silent, refusing or closing socket,
 * and a VM without one (stopped, no agent configured, not on this node),
 * is left for qm to tell, with its exact words, waiting its turn as qm does.
 *
 * Containers likewise: one `pct list` gives every container's state on the
 * node instead of a `pct status` each; one it does not list is left for
 * `pct status` to tell. */
#ifndef AIRLOCK_WORKER_AGENTBATCH_H
#define AIRLOCK_WORKER_AGENTBATCH_H

#include "transport/transport.h"

#include <stdbool.h>
#include <stddef.h>

/* How long the batch waits for every agent's answer, from its first
 * connect: well below qm's 3 s ping bound (see above).  An agent answers in
 * milliseconds; one slower than this is asked with qm. */
#define AGENTBATCH_WAIT_MS 1000

/* What one node's batch saw (for the round's log line). */
struct agentbatch_stats {
	int asked;    /* agents the batch was run for */
	int answered; /* decided by an answer */
	int busy;     /* the agent's queue was full: skipped, left for qm */
	int silent;   /* connected, no answer in time, or the socket refused or closed */
};

/* Probes the TRANSPORT_PROBE_AGENT entries of probes that are not done[]
 * (others are left alone).  Sets done[i] for each entry it decided (state,
 * detail); the rest need qm (transport_probe).  Sets silent[i] (may be
 * NULL) for an agent whose socket was busy or stayed silent: one the caller
 * knows qm already found not running need not wait for qm again.  Adds to
 * *st (may be NULL).  -1 when a batch could not run at all (then it decided
 * nothing: no perl, the node unreachable, ...), else 0. */
int agentbatch_probe(struct transport *t, const struct transport_node *node,
                     struct transport_probe *probes, bool *done, bool *silent, size_t n,
                     struct agentbatch_stats *st);

/* The same for the TRANSPORT_PROBE_CT entries, with one `pct list`. */
int agentbatch_cts(struct transport *t, const struct transport_node *node,
                   struct transport_probe *probes, bool *done, size_t n, int timeout_ms);

/* Applies one line of `pct list` to the container probe with its id.
 * Returns true when the line decided it.  (For tests.) */
bool agentbatch_ct_line(const char *line, struct transport_probe *probes, bool *done, size_t n);

/* Applies one output line of the node program to the probe with its vmid
 * (done, silent as for agentbatch_probe), counting it in *st (may be NULL).
 * Returns true when the line decided it.  (For tests.) */
bool agentbatch_line(const char *line, struct transport_probe *probes, bool *done, bool *silent,
                     size_t n, struct agentbatch_stats *st);

/* The node program itself, for tests that run it against real sockets:
 * `perl -e PROGRAM DIR WAIT_S VMID...`. */
extern const char agentbatch_program[];

#endif
