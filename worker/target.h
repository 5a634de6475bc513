/* target.h -- the daemon's view of a target: is its transport alive right
 * now, and run one command on it (over transport/). */
#ifndef AIRLOCK_WORKER_TARGET_H
#define AIRLOCK_WORKER_TARGET_H

#include "lib/buf.h"
#include "lib/execstate.h"
#include "store/queue.h"
#include "classifier/policy.h"
#include "transport/jail.h"
#include "worker/config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct targets; /* the transport, one pooled SSH session per node */

struct targets *targets_new(const struct config *cfg, char *err, size_t errlen);
void targets_free(struct targets *t); /* NULL is a no-op */
/* The transport underneath, for the probes; borrowed. */
struct transport *targets_transport(struct targets *t);

/* Checks the command can be carried at all (transport_check_command), then
 * whether the transport is alive right now.  full: on channels of its own,
 * as the scheduler probes -- guest agent ping (and guest-exec enabled) for a
 * VM, container status for a container, a login for a host -- for a row
 * whose guard step comes next (a checkpoint is not made for a target that
 * cannot run the command).  Otherwise only whether the node can be reached
 * (its pooled session, no channel): the rest of the check rides on the
 * command's own channel (targets_run reports it as not_sent).
 * 0 = usable; -1 = not, with the same actionable sentence as the pre-flight
 * in reason; -2 = could not tell (the node is unreachable), reason says why. */
int targets_check(struct targets *t, const struct queue_item *it, bool full, char *reason,
                  size_t reasonlen);

/* Whether the transport already holds a live session to its node with
 * exactly the facts `it` names (address, port, user, host key): no
 * connection is opened and nothing is added to the pool. */
bool targets_pooled_up(struct targets *t, const struct queue_item *it);

/* A command that was never sent although the row was marked running. */
enum target_not_sent {
	TARGET_SENT,             /* sent (or the run failed in some other way) */
	TARGET_NOT_SENT_RETRY,   /* the node could not be reached: retry until the deadline */
	TARGET_NOT_SENT_REFUSED, /* the check on its channel refused it (CT stopped, agent
	                            dead, guest-exec disabled): refuse the row */
};

struct target_result {
	enum exec_state state; /* succeeded, failed, timed_out, outcome_unknown */
	bool started;          /* false: nothing was sent (safe to retry) */
	int exit_code;         /* -1 when none */
	int signal;            /* 0 when none */
	struct buf out, err;   /* capped; .truncated set */
	long long duration_ms;
	char error[1024];     /* "" or a sentence */
	bool unconfinable;    /* the jail could not be built: nothing ran; error says why */
	char jail_facts[256]; /* jailed: the jail's own account (uid, network, limits) */
	enum target_not_sent not_sent; /* nothing was sent; error has the check's sentence */
};

/* How a command nobody approved is jailed (docs/transport.md, "The jail"). */
struct target_jail {
	enum transport_jail tier;  /* TRANSPORT_JAIL_NONE: unconfined */
	bool net_view;             /* keep the target's network namespace */
	const char *const *writes; /* TRANSPORT_JAIL_WRITE: the verdict's write set */
	size_t nwrites;
	const struct policy *policy; /* its secret_stores are covered; NULL: none */
};

/* Runs it->command on the target with airlock's deadline, jailed as j says
 * (NULL or tier NONE: unconfined), with the configured limits; cancel
 * (optional) stops it early.  Always fills out (release with
 * target_result_clear). */
void targets_run_jailed(struct targets *t, const struct queue_item *it, const struct target_jail *j,
                        atomic_bool *cancel, struct target_result *out);
/* targets_run_jailed with only a tier (no secret stores, no write set). */
void targets_run(struct targets *t, const struct queue_item *it, enum transport_jail j,
                 atomic_bool *cancel, struct target_result *out);
void target_result_clear(struct target_result *r);

#endif
