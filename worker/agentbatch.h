/* agentbatch.h -- every guest agent of one node asked with one command, and
 * every container's state with another.
 *
 * `qm agent <vmid> ping` costs a process on the node per VM (PVE's qm is a
 * Perl program: hundreds of milliseconds each), so a node with hundreds of
 * VMs cannot be probed that way every minute.  Instead one short Perl
 * program -- Perl is on every Proxmox VE node -- is sent over the node's
 * session: it opens each VM's agent socket (/var/run/qemu-server/<vmid>.qga,
 * where QEMU serves the agent while the VM runs with an agent configured),
 * all at once, and asks guest-sync-delimited then guest-info, as qm does,
 * with qm's 3-second ping bound for all of them together.  Its answers are
 * read here: an agent that answers is running (and guest-exec enabled or
 * not).  Everything else is left for qm to tell, with its exact words: a
 * socket that refuses, closes or stays silent (an agent serves one client at
 * a time, and may be busy with a command airlock is running), and a VM
 * without a socket (stopped, no agent configured, not on this node).
 *
 * Containers likewise: one `pct list` gives every container's state on the
 * node instead of a `pct status` each; one it does not list is left for
 * `pct status` to tell. */
#ifndef AIRLOCK_WORKER_AGENTBATCH_H
#define AIRLOCK_WORKER_AGENTBATCH_H

#include "transport/transport.h"

#include <stdbool.h>
#include <stddef.h>

/* Probes the TRANSPORT_PROBE_AGENT entries of probes (others are left
 * alone).  Sets done[i] for each entry it decided (state, detail); the rest
 * need qm (transport_probe).  -1 when the batch could not run at all (then
 * nothing is decided: no perl, the node unreachable, ...), else 0. */
int agentbatch_probe(struct transport *t, const struct transport_node *node,
                     struct transport_probe *probes, bool *done, size_t n, int timeout_ms);

/* The same for the TRANSPORT_PROBE_CT entries, with one `pct list`. */
int agentbatch_cts(struct transport *t, const struct transport_node *node,
                   struct transport_probe *probes, bool *done, size_t n, int timeout_ms);

/* Applies one line of `pct list` to the container probe with its id.
 * Returns true when the line decided it.  (For tests.) */
bool agentbatch_ct_line(const char *line, struct transport_probe *probes, bool *done, size_t n);

/* Applies one output line of the node program to the probe with its vmid.
 * Returns true when the line decided it.  (For tests.) */
bool agentbatch_line(const char *line, struct transport_probe *probes, bool *done, size_t n);

#endif
