/* discover.h -- the estate follows the cluster.
 *
 * The scheduler's first step of every probe round: each node of the
 * inventory is asked, over its SSH session, for the cluster's resources
 * (`pvesh get /cluster/resources --output-format json`: its guests and its
 * nodes), and the answers are recorded with airlock.record_discovery(): new
 * guests appear, a guest's node follows a migration, a guest missing from
 * its node's answer is marked gone (never deleted).  A node that cannot be
 * asked changes nothing about its guests, and neither does a node whose
 * answer does not name it among the cluster's nodes (its pve_node in the
 * inventory is wrong: marking all its guests gone would be a lie).
 *
 * Without --type the answer lists the nodes as well as the guests (and
 * storage, which is ignored); that is how a node is known to be the one its
 * host entity says. */
#ifndef AIRLOCK_WORKER_DISCOVER_H
#define AIRLOCK_WORKER_DISCOVER_H

#include "store/store.h"
#include "transport/transport.h"

#include <stddef.h>

/* The command every node is asked. */
#define DISCOVER_COMMAND "pvesh get /cluster/resources --output-format json"

struct discover_stats {
	int nodes;    /* host entities asked */
	int answered; /* nodes whose answer names them: it decides what is gone from them */
	int listed;   /* guest listings received (a cluster lists each guest once per node) */
	int appeared, moved, gone, returned;
	int conflicts; /* answers disagreed on the guest's node: left as it was */
};

/* One round on db (the scheduler's login) over t.  Fills *st (may be NULL).
 * 0 when the answers (possibly none) were recorded; -1 when the database
 * failed (reason on db).  Each node's failure is logged and only keeps that
 * node's guests as they were. */
int discover_round(struct store *db, struct transport *t, struct discover_stats *st);

struct cJSON;

/* Parses one node's answer (pvesh's JSON): appends a {type, vmid, node,
 * name, from} object to guests for each VM and container, and the name of
 * each node entry to nodes (strings).  0, or -1 with the reason in err when
 * the answer is not the expected list (nothing is appended then). */
int discover_parse(const char *json, size_t len, const char *from, struct cJSON *guests,
                   struct cJSON *nodes, char *err, size_t errlen);

#endif
