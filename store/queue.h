/* queue.h -- the worker's side of the queue: claim, classify, re-validate,
 * start, finish, release, reap (migrations/0002_worker.sql and successors).
 *
 * Every call is one short autocommit statement; no transaction is ever held
 * across an SSH command.  A claimed row stays locked (session advisory lock)
 * on the claiming connection until it is released, refused, held for
 * approval or finished, so a dead worker is noticed at once. */
#ifndef AIRLOCK_STORE_QUEUE_H
#define AIRLOCK_STORE_QUEUE_H

#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct queue_item {
	int64_t id;
	char state[24];
	char *target, *target_type, *command, *declared_risk, *change_id, *action, *requested_by;
	char *cls;                /* NULL until classified */
	long long policy_version; /* 0 until classified */
	int rewind_possible;      /* -1 unknown, 0, 1 */
	int attempts;
	int vmid;   /* 0 for a host */
	char *node; /* the proxmox-host slug that runs it */
	char *address, *ssh_user, *host_key_fingerprint, *zerto_vm_identifier;
	int port;
	char kind[16]; /* run, guard (a checkpoint only), recover, ... */
};

struct queue_result {
	const char *state; /* succeeded, failed, timed_out, outcome_unknown */
	int exit_code;     /* -1: none */
	int signal;        /* 0: none */
	const char *out, *err;
	size_t outlen, errlen;
	bool out_truncated, err_truncated;
	long long duration_ms;
	const char *error; /* NULL or a sentence */
	/* NULL, or the hold the worker's scan found (worker_finish's hold:
	 * out, err and a held error then go to the operators only) */
	const char *hold_json;
	/* NULL, or the jail's own account of the run (executions.jail), written
	 * in the same statement (airlock.worker_jail) */
	const char *jail;
};

/* 1 with *it filled (free with queue_item_clear), 0 when there is no work,
 * -1 on error (reason on s).  hint (0: none) is the row a wake-up named:
 * claimed when it can be, else the oldest claimable row is, in one call.
 * full_nodes (nfull node slugs) are the nodes with no free slot in this
 * daemon: their queued and approved rows are skipped (a row waiting to be
 * classified is claimed whatever its node).  Any row this worker still
 * holds unsettled is given back first (migrations/0032). */
int queue_claim(struct store *s, const char *worker, int64_t hint, const char *const *full_nodes,
                size_t nfull, struct queue_item *it);
/* Registers a new secret wake-up channel for this session (the caller then
 * LISTENs on it): wake-ups on it carry a row id.  channel gets the name
 * (42 bytes and the NUL); -1 with the reason on s. */
int queue_channel(struct store *s, const char *worker, char *channel, size_t len);

/* Reads a wake-up's payload (migration 0019): "<id>", or "<id> <document>"
 * for a run row waiting to be classified, whose document says what its
 * classification and live check need.  0 with *id set for a bare id; 1
 * with *id and *it filled as far as the document goes (state "received",
 * kind "run"; free with queue_item_clear) for a document; -1 when the
 * payload is neither (nothing to free). */
int queue_wake_parse(const char *payload, int64_t *id, struct queue_item *it);
/* Claims the row of the wake-up document *seen (as queue_wake_parse filled
 * it) if it is still exactly that, and records its classification in the
 * same call (as queue_classified).  With confinement (user or root) and a
 * read_only class the row is also started (as queue_start), committed
 * before the call returns; NULL leaves it queued or held for approval.
 * 1 with *it filled (its state is the row's new state: running, queued or
 * pending_approval; free with queue_item_clear), 0 when the row was not
 * there to claim as seen (claim it as usual), -1 on error (reason on s;
 * nothing was claimed unless the connection was lost on the way back). */
int queue_claim_classified(struct store *s, const char *worker, const struct queue_item *seen,
                           const char *cls, const char *reasons_json, long long policy_version,
                           const char *classifier_version, const char *rewind_status,
                           int rewind_possible, const char *confinement, struct queue_item *it);
void queue_item_clear(struct queue_item *it);

int queue_release(struct store *s, int64_t id, const char *worker, int delay_ms,
                  const char *reason);
/* Gives back a row this worker holds and of which nothing was sent, from
 * wherever it stands (airlock.worker_settle): released to be claimed again
 * after delay_ms, or, when it was marked running, back to the state it
 * started from.  done gets "released", "not_sent", or "not_held" when the
 * row was no longer this worker's (its lock is let go then).  Safe to call
 * again after a lost answer. */
int queue_settle(struct store *s, int64_t id, const char *worker, int delay_ms, const char *reason,
                 char done[16]);
/* new_state gets "queued" or "pending_approval". */
int queue_classified(struct store *s, int64_t id, const char *worker, const char *cls,
                     const char *reasons_json, long long policy_version,
                     const char *classifier_version, const char *rewind_status, int rewind_possible,
                     char new_state[24]);
/* state gets the row's state: unchanged, or "pending_approval" (approval void). */
int queue_revalidate(struct store *s, int64_t id, const char *worker, const char *cls,
                     const char *reasons_json, long long policy_version,
                     const char *classifier_version, char state[24]);
int queue_refuse(struct store *s, int64_t id, const char *worker, const char *reason,
                 const char *detail_json);
/* The same, recording the rewind points (a JSON array) a refused guard made
 * anyway on the row (migrations/0032); NULL points is queue_refuse. */
int queue_refuse_points(struct store *s, int64_t id, const char *worker, const char *reason,
                        const char *detail_json, const char *rewind_points_json);
int queue_note(struct store *s, int64_t id, const char *worker, const char *detail_json);
/* Marks the row running, confined as `confinement` (none, user or root),
 * in one statement: committed before the command is sent. */
int queue_start(struct store *s, int64_t id, const char *worker, const char *rewind_points_json,
                const char *guard_json, const char *confinement);
/* *recorded is false when the row was no longer this worker's (the result
 * is then kept as an event only). */
int queue_finish(struct store *s, int64_t id, const char *worker, const struct queue_result *r,
                 bool *recorded);
/* The target could not be reached before anything was sent: counts one
 * attempt and releases the row for a retry after delay_ms, or refuses it
 * when the request's deadline has passed.  state gets the row's new state
 * ("refused" when it was given up). */
int queue_unreachable(struct store *s, int64_t id, const char *worker, int delay_ms,
                      const char *reason, char state[24]);
/* Pulls in rows scheduled further ahead than any retry delay (the database's
 * clock stepped back); *rows gets how many, *max_ahead_ms how far ahead the
 * furthest was. */
int queue_clock_check(struct store *s, int *rows, long long *max_ahead_ms);
/* The database's clock stepped forward by step_ms since `since` (its own
 * text, as it said it then): open deadlines move with it, and rows that
 * expired meanwhile say so (migrations/0032).  *rows gets how many rows it
 * changed (0 when another daemon acted on this step already). */
int queue_clock_forward(struct store *s, const char *worker, long long step_ms, const char *since,
                        int *rows);
/* After a reconnect: takes the row's liveness lock again on this session.
 * 1 taken, 0 someone holds it, -1 error. */
int queue_rehold(struct store *s, int64_t id);
/* Settles rows no worker works on any more, as daemon `daemon` (its
 * worker_id) sees it: working (nworking ids) are the rows its own workers
 * hold now; another daemon's rows only once it has not been seen for
 * grace_ms (migrations/0032).  *n gets how many.  Use a connection that
 * holds no execution locks. */
int queue_reap(struct store *s, const char *daemon, const int64_t *working, size_t nworking,
               int grace_ms, int *n);
/* Tells the database that daemon stopped: its rows need no grace. */
int queue_gone(struct store *s, const char *daemon);
int queue_expire(struct store *s, int *n);

#endif
