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
