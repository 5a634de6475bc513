/* doctor.h -- `airlock doctor`: is this installation ready, and if not, what
 * to fix?  Checks run in order (configuration, database, nodes, guests,
 * Zerto, webhooks, the jail); each gives a status, what it saw, and the fix.  A check
 * whose premise failed is skipped, saying which.  The node and guest checks
 * run only fixed, read-only commands (command -v, qm agent ping, qm guest
 * cmd info, pct status) with airlockd's key. */
#ifndef AIRLOCK_CLI_DOCTOR_H
#define AIRLOCK_CLI_DOCTOR_H

#include "store/store.h"
#include "worker/config.h"

enum doctor_status { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL, DOCTOR_SKIP };

struct doctor_report; /* the checks' results, in order */

struct doctor_report *doctor_report_new(void);
void doctor_report_free(struct doctor_report *r); /* NULL is a no-op */

/* Records one result.  area: "config", "database", "node", "guest", "zerto",
 * "webhook"; subject: what was checked (an entity, a URL); fix: what to do,
 * NULL when nothing. */
void doctor_add(struct doctor_report *r, const char *area, const char *subject,
                enum doctor_status st, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* What the estate checks share.  cfg NULL: the configuration was invalid;
 * db NULL: the database was unreachable. */
struct doctor_ctx {
	const struct config *cfg;
	struct store *db;
	struct doctor_report *r;
	int timeout_ms; /* per check that waits on the network */
};

/* Nodes (reachable, host key pinned, qm and pct present) and each guest's
 * agent or container state. */
void doctor_nodes(struct doctor_ctx *c);
/* Every key each node in nodes[0..n) accepts for root (its authorized_keys
 * files, the Proxmox cluster file), judged airlockd's, a cluster node's own
 * root key, or neither (a failure: a way in airlock does not hold). */
struct transport;
struct transport_node;
void doctor_root_keys(struct doctor_ctx *c, struct transport *t, const struct transport_node *nodes,
                      const char *const *slugs, size_t n);
/* The side door of the host doctor runs on, when it is an agent's host
 * (--agent-host): its keys, tokens and the nodes' ports (hook/sidedoor.h). */
void doctor_agent_host(struct doctor_ctx *c, const char *db, const char *const *nodes,
                       size_t nnodes);
/* The ZVM: login, TLS, and each VM's protection (VM-to-VPG mapping). */
void doctor_zerto(struct doctor_ctx *c);
/* Each webhook: a connection (and TLS handshake) to its URL. */
void doctor_webhooks(struct doctor_ctx *c);
/* The jail: the helper airlockd copies to targets, and each target's
 * guarantees as the probes last recorded them (attribute confinement). */
void doctor_jail(struct doctor_ctx *c);

/* The subcommand: argv[0] is "doctor"; returns the exit code. */
int cli_doctor(int argc, char **argv);

#endif
