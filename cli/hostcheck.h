/* hostcheck.h -- the side-door check of an agent's host, as `airlock hook
 * --check` and `airlock doctor --agent-host` run it: the managed nodes from
 * the database (airlock.side_door_targets, an operator's login) or named on
 * the command line, every finding shown as it comes, and the result
 * reported to the database (airlock.report_host_check) for operators, who
 * see it as reported by this host and not verified. */
#ifndef AIRLOCK_CLI_HOSTCHECK_H
#define AIRLOCK_CLI_HOSTCHECK_H

#include "hook/sidedoor.h"

#include <stddef.h>

struct hostcheck_opts {
	const char *db;           /* conninfo, or NULL for $AIRLOCK_DB / PG* */
	const char *const *nodes; /* HOST[:PORT] to check instead of the database's nodes */
	size_t nnodes;
	sidedoor_fn show; /* each finding, as it comes */
	void *ctx;
};

/* Runs the check.  Returns the number of open (or undecidable) ways in,
 * 0 when the side door is proven closed, or -1 when the check could not
 * run (no node list: the reason was shown through show as unknown). */
int hostcheck_run(const struct hostcheck_opts *o);

#endif
