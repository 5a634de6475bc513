/* guard.h -- before a mutation runs on a Zerto-protected VM: a confirmed,
 * tagged checkpoint on every VPG that protects it.  The daemon's guard step
 * calls zerto_guard_run(); the approval screen calls zerto_protection().
 *
 * The guard never talks to PostgreSQL.  The daemon passes hooks: a lock per
 * VPG shared by every worker (an advisory lock), and an event recorder.
 *
 * Steps (docs/zerto.md):
 *   1 find protection: by Zerto VM identifier if known, else by name ->
 *     none | ambiguous | the protecting VPGs (up to three);
 *   2 every protecting VPG must be taggable (protecting, not syncing), else
 *     refused; measure each VPG's checkpoint cadence (median gap);
 *   3 lock each VPG (sorted by id, so two guards never deadlock), insert the
 *     same tag into every one;
 *   4 read each insert's task until it is terminal; anything but Completed
 *     is refused;
 *   5 wait until each tag is listed, with a budget of 2 x cadence + headroom
 *     clamped to 45..300 s and a poll interval scaled to the cadence, looking
 *     once before sleeping; a VPG's lock is released once its tag is listed;
 *   6 return the rewind points (one per VPG) for the daemon to store.
 *
 * Time: budgets are ZVM seconds.  Real waits are ZVM seconds divided by the
 * client's time_scale (1 in production, so production waits are exactly the
 * budgets above); a test simulator running its journal N times faster sets
 * N.  HTTP timeouts are never scaled. */
#ifndef AIRLOCK_ZERTO_GUARD_H
#define AIRLOCK_ZERTO_GUARD_H

#include "zerto/client.h"
#include "zerto/protection.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum zerto_outcome {
	ZERTO_GUARD_NONE,      /* not protected by Zerto (or unknown to it): no rewind point */
	ZERTO_GUARD_AMBIGUOUS, /* the name matches several Zerto VMs: refused, ask for the id */
	ZERTO_GUARD_REFUSED,   /* protected, but no confirmed checkpoint: nothing may run */
	ZERTO_GUARD_OK,        /* every protecting VPG tagged and the tag listed */
};

/* "none", "ambiguous", "refused", "ok". */
const char *zerto_outcome_str(enum zerto_outcome o);

struct zerto_guard_hooks {
	void *ctx;
	/* Takes the all-workers lock for one VPG, waiting at most timeout_ms (real
	 * milliseconds).  0 = held, -1 = not (timeout or error).  The guard holds
	 * it until the VPG's tag is listed or the guard gives up on that VPG. */
	int (*lock_vpg)(void *ctx, const char *vpg_id, long timeout_ms);
	void (*unlock_vpg)(void *ctx, const char *vpg_id);
	/* Records one step; name like "guard.tagged", detail borrowed for the call.
	 * May be NULL. */
	void (*event)(void *ctx, const char *name, const cJSON *detail);
	/* Whether the request was withdrawn (cancelled) meanwhile: the guard then
	 * stops at its next step or poll, refusing, and waits for nothing more.
	 * May be NULL. */
	bool (*withdrawn)(void *ctx);
};

struct zerto_guard_request {
	const char *vm_id;     /* the VM's Zerto VmIdentifier, or NULL */
	const char *vm_name;   /* used to find the VM when vm_id is NULL; in the tag */
	const char *agent;     /* the requester */
	const char *action;    /* the request's action text */
	const char *change_id; /* change id, or the execution id as text */
	time_t now;            /* UTC, for the tag */
	const char *log_id;    /* log prefix, e.g. "exec=4121"; NULL: none */
	/* The outer deadline of the whole guard, a deadline_now_ms() instant;
	 * 0: zerto_guard_worst_case_ms() from the start.  Past it the guard
	 * refuses at its next step or poll (a request in flight finishes within
	 * its own timeout first). */
	int64_t deadline_ms;
};

/* One VPG's rewind point (or how far it got before the guard gave up). */
struct zerto_rewind_point {
	char *vpg_id;
	char *vpg_name;
	char *task_id;         /* NULL if the insert was not accepted */
	int task_state;        /* last seen Status.State; -1 if never read */
	char *checkpoint_id;   /* NULL until the tag is listed */
	char *checkpoint_time; /* the checkpoint's ZVM TimeStamp, NULL until listed */
	double cadence_s;      /* measured; -1 when it could not be measured */
	double budget_s;       /* tag-wait budget derived from it (ZVM seconds) */
	long lock_ms;          /* real ms from guard start: lock held */
	long insert_ms;        /* ... insert accepted */
	long task_ms;          /* ... task seen terminal */
	long listed_ms;        /* ... tag seen listed; -1 when not */
	bool unanswered;       /* the insert's answer never came; its tag was looked for */
};

struct zerto_guard_result {
	enum zerto_outcome outcome;
	char *message; /* for the operator/agent: what happened, whether anything ran
	                * (it did not, unless ok/none), what to do */
	char *tag;     /* NULL when no insert was attempted */
	char *vm_id;   /* the Zerto VM identifier found, or NULL */
	struct zerto_rewind_point *points;
	size_t npoints;
	long elapsed_ms;
	double time_scale; /* ZVM seconds per real second (1 but in simulations) */
};

/* Runs steps 1-6.  Always fills out (clear it with zerto_guard_result_clear)
 * and returns out->outcome; errors of any kind become REFUSED with a message.
 * An insert whose answer did not come (a timeout, a 5xx) is not taken for a
 * no: its tag is looked for as after a Completed task, and a listed tag
 * confirms the point.  A guard that refuses after inserting looks for the
 * tags it inserted once more (within each VPG's tag budget) before it
 * returns, so every checkpoint it caused has its point, with checkpoint_id,
 * in out->points, and the message says so. */
enum zerto_outcome zerto_guard_run(struct zerto_client *c, const struct zerto_guard_request *req,
                                   const struct zerto_guard_hooks *hooks,
                                   struct zerto_guard_result *out);
void zerto_guard_result_clear(struct zerto_guard_result *r);
/* The result as JSON for the execution row: {"outcome","message","tag",
 * "vm_id","elapsed_ms","rewind_points":[{"vpg_id","vpg_name","task_id",
 * "task_state","task_state_name","checkpoint_id","checkpoint_time","tag",
 * "cadence_s","cadence_real_s","budget_s","lock_ms","insert_ms","task_ms","listed_ms"}]}:
 * cadence_real_s is the cadence in real seconds (the database reuses a
 * checkpoint younger than that).
 * Caller deletes. */
cJSON *zerto_guard_result_json(const struct zerto_guard_result *r);

/* The longest a guard can take on this client, in real milliseconds, for any
 * cadence: waiting for another guard's lock plus its own lock time (each
 * zerto_guard_budget_ms at the 300 s ceiling) plus the requests outside the
 * waits.  The daemon sizes its guard-step deadline with it. */
long zerto_guard_worst_case_ms(const struct zerto_client *c);
/* The longest one guard holds a VPG's lock, for one measured cadence (seconds;
 * < 0 = unknown): another tool's insert, our task and our tag each get the
 * cadence's budget, plus a request timeout each. */
long zerto_guard_budget_ms(const struct zerto_client *c, double cadence_s);

#endif
