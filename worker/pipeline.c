/* pipeline.c -- one claimed row from where it stands to as far as it can go. */
#include "worker/pipeline.h"

#include "classifier/classifier.h"
#include "lib/deadline.h"
#include "lib/execstate.h"
#include "lib/log.h"
#include "lib/sqlstate.h"
#include "lib/visible.h"
#include "lib/xalloc.h"
#include "store/lockkeys.h"
#include "worker/guardonly.h"
#include "worker/outscan.h"
#include "worker/preview.h"
#include "worker/recover.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long a row waits when its target is busy with another mutation. */
#define TARGET_BUSY_RETRY_MS 500

struct classification {
	struct policy_snap snap;
	enum risk_class cls;
	char *reasons_json;
	char *reasons_text;
};

static void classification_clear(const struct pipeline_env *env, struct classification *c)
{
	if (c->snap.classifier)
		policyset_release(env->policies, &c->snap);
	free(c->reasons_json);
	free(c->reasons_text);
	memset(c, 0, sizeof(*c));
}

/* Classifies the row under the policy in force.  -1 when no policy is loaded. */
static int classify(const struct pipeline_env *env, struct verdict *v, const struct queue_item *it,
                    struct classification *c)
{
	enum target_type tt = TARGET_PROXMOX_HOST;
	enum risk_class declared = RISK_READ_ONLY;

	memset(c, 0, sizeof(*c));
	if (policyset_acquire(env->policies, &c->snap) < 0)
		return -1;
	target_type_parse(it->target_type, &tt);
	if (it->declared_risk)
		risk_class_parse(it->declared_risk, &declared);
	classifier_classify(c->snap.classifier, tt, it->command, strlen(it->command), declared, v);
	if (env->cfg->test_classify_all_read_only) {
		/* Test rigs only (config.h): every command is an observation, so
		 * the jail alone stands between it and the target. */
		verdict_add(v, 0, "", "test-only-classify-all-read-only",
		            "testing.classify_all_read_only", RISK_READ_ONLY, tt);
		v->cls = RISK_READ_ONLY;
	}
	if (env->cfg->test_classify_all_reversible_low) {
		/* Test rigs only (config.h): every command is a reversible_low
		 * change claiming the configured write set, so the jail's write
		 * tier alone stands between it and the rest of the target. */
		verdict_add(v, 0, "", "test-only-classify-all-reversible-low",
		            "testing.classify_all_reversible_low", RISK_REVERSIBLE_LOW, tt);
		v->cls = RISK_REVERSIBLE_LOW;
		v->writes = (const char *const *)env->cfg->test_writes;
		v->nwrites = (size_t)env->cfg->ntest_writes;
		v->writes_unknown = false;
		v->action_rule = NULL;
		v->needs_root = false;
		v->net_view = false;
	}
	c->cls = v->cls;
	cJSON *r = verdict_reasons_json(v);
	c->reasons_json = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	c->reasons_text = verdict_reasons_text(v);
	return 0;
}

/* True when the last failure on db was the connection, not a refusal. */
static bool connection_lost(struct store *db)
{
	return !store_connected(db) || store_sqlstate(db)[0] == '\0' ||
	       sqlstate_in_class(store_sqlstate(db), SQLSTATE_CONNECTION_EXCEPTION_CLASS) ||
	       sqlstate_in_class(store_sqlstate(db), SQLSTATE_OPERATOR_INTERVENTION_CLASS);
}

/* True when a new session may help: the connection is gone, or the server
 * went read-only (a standby, or a primary demoted by a failover: with a
 * multi-host conninfo and target_session_attrs=read-write a new session
 * finds the new primary). */
static bool needs_new_session(struct store *db)
{
	return connection_lost(db) ||
	       sqlstate_is(store_sqlstate(db), SQLSTATE_READ_ONLY_TRANSACTION);
}

static void log_db_error(const struct queue_item *it, const char *what, struct store *db)
{
	char q[600];

	log_msg(LOG_ERROR, "exec=%lld evt=exec.%s sqlstate=%s error=%s", (long long)it->id, what,
	        store_sqlstate(db)[0] ? store_sqlstate(db) : "-",
	        log_quote(store_errmsg(db), q, sizeof(q)));
}

static bool target_lock(struct store *db, const char *target)
{
	struct store_res *res =
	    store_exec(db, "SELECT pg_try_advisory_lock(" LOCK_KIND_TARGET ", hashtext($1))", 1,
	               (const char *const[]){target});
	bool got = res && store_get(res, 0, 0)[0] == 't';

	store_clear(res);
	return got;
}

static void target_unlock(struct store *db, const char *target)
{
	store_clear(store_exec(db, "SELECT pg_advisory_unlock(" LOCK_KIND_TARGET ", hashtext($1))",
	                       1, (const char *const[]){target}));
}

void pipeline_let_go_if_gone(struct store *db, const struct queue_item *it)
{
	char id[24];

	if (!sqlstate_is(store_sqlstate(db), SQLSTATE_ILLEGAL_TRANSITION))
		return;
	snprintf(id, sizeof(id), "%lld", (long long)it->id);
	log_msg(LOG_INFO,
	        "exec=%lld evt=exec.gone why=\"no longer held by this worker (cancelled?)\"",
	        (long long)it->id);
	store_clear(
	    store_exec(db, "SELECT pg_advisory_unlock($1::bigint)", 1, (const char *const[]){id}));
}

/* A new session for a row this worker holds: the session's durability
 * settings again, and the row's liveness lock taken again, so that a reaper
 * does not settle the row while its next step is on the way. */
static void reconnect_holding(const struct pipeline_env *env, struct store *db,
                              const struct queue_item *it)
{
	if (store_reset(db) != 0)
		return;
	store_clear(store_exec(db, durability_session_sql(env->durability), 0, NULL));
	if (queue_rehold(db, it->id) == 1)
		log_msg(LOG_INFO, "exec=%lld evt=exec.rehold", (long long)it->id);
}

/* Output of a command nobody approved is scanned before it is recorded: what
 * carries secret material is held for an operator (worker/outscan.h), in the
 * same call that records the result.  Approved rows are not scanned: a human
 * read the command, its class and reasons ("reads secret material") and let
 * it run as asked. */
static char *hold_for(const struct queue_item *it, const struct target_result *r, bool scan)
{
	struct outscan_hold h;

	if (!scan)
		return NULL;
	outscan_result(r->out.data, r->out.len, r->out.truncated, r->err.data, r->err.len,
	               r->err.truncated, r->error[0] ? r->error : NULL, &h);
	if (!h.held)
		return NULL;
	log_msg(LOG_INFO, "exec=%lld evt=exec.output_held kind=%s stream=%s line=%zu error_held=%d",
	        (long long)it->id, secretscan_kind_name(h.kind), h.stream, h.line, h.error_held);
	return outscan_hold_json(&h);
}

/* The wait before the next try of a write that failed: 200 ms, doubling up
 * to 5 s; on a new session when the old one cannot help. */
static int retry_wait(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                      int wait_ms)
{
	if (needs_new_session(db))
		reconnect_holding(env, db, it);
	usleep((useconds_t)wait_ms * 1000);
	return wait_ms < 5000 ? wait_ms * 2 : wait_ms;
}

/* Gives the row back, nothing of it sent (queue_settle): to be claimed
 * again after delay_ms, with reason recorded when given.  A write that
 * fails is retried, whatever the error, until the database answers, so a
 * row is never left claimed by a worker that has moved on; only when the
 * daemon's grace is over does it stop (the session's end then lets a
 * reaper settle the row). */
static void give_back(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                      int delay_ms, const char *reason)
{
	char done[16];

	for (int wait_ms = 200;;) {
		if (!store_connected(db))
			reconnect_holding(env, db, it); /* a session known lost is not tried */
		if (queue_settle(db, it->id, env->worker_id, delay_ms, reason, done) == 0)
			break;
		log_db_error(it, "release_failed", db);
		if (atomic_load(env->cancel))
			return;
		wait_ms = retry_wait(env, db, it, wait_ms);
	}
	if (strcmp(done, "not_held") == 0)
		log_msg(
		    LOG_INFO,
		    "exec=%lld evt=exec.gone why=\"no longer held by this worker (cancelled?)\"",
		    (long long)it->id);
	else if (strcmp(done, "not_sent") == 0)
		log_msg(LOG_INFO,
		        "exec=%lld evt=exec.not_sent retry=1 reason=\"the start could not be "
		        "confirmed\"",
		        (long long)it->id);
}

static void release(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                    int delay_ms, const char *reason)
{
	give_back(env, db, it, delay_ms, reason);
}

/* A write about the row failed before anything was sent (classify, re-validate,
 * start, ...): the row is given back to be tried again, the failure named.  A
 * row that is no longer ours is let go. */
static void give_back_after(const struct pipeline_env *env, struct store *db,
                            const struct queue_item *it, const char *what)
{
	char why[900];

	if (sqlstate_is(store_sqlstate(db), SQLSTATE_ILLEGAL_TRANSITION)) {
		pipeline_let_go_if_gone(db, it);
		return;
	}
	snprintf(why, sizeof(why), "%s could not be written (%.600s); nothing was sent, retried",
	         what, store_sqlstate(db)[0] ? store_sqlstate(db) : "no answer");
	give_back(env, db, it, 1000, why);
}

/* Refuses the row.  Retried through transient failures until it lands; a
 * row no longer ours is let go; a refusal the database will not take is
 * logged and the row given back, never left claimed. */
static void refuse_points(const struct pipeline_env *env, struct store *db,
                          const struct queue_item *it, const char *reason, const char *detail,
                          const char *points)
{
	char q[600];

	log_msg(LOG_INFO, "exec=%lld evt=exec.refused reason=%s", (long long)it->id,
	        log_quote(reason, q, sizeof(q)));
	for (int wait_ms = 200;;) {
		if (!store_connected(db))
			reconnect_holding(env, db, it);
		if (queue_refuse_points(db, it->id, env->worker_id, reason, detail, points) == 0)
			return;
		log_db_error(it, "refuse_failed", db);
		if (sqlstate_is(store_sqlstate(db), SQLSTATE_ILLEGAL_TRANSITION)) {
			pipeline_let_go_if_gone(db, it);
			return;
		}
		if (!sqlstate_transient(store_sqlstate(db))) {
			give_back(env, db, it, 5000, NULL);
			return;
		}
		if (atomic_load(env->cancel))
			return;
		wait_ms = retry_wait(env, db, it, wait_ms);
	}
}

/* Writes the result.  A known result is never dropped while the daemon runs:
 * whatever the error (connection lost, database read-only, statement timeout,
 * a lock, disk full), the write is retried with backoff, on a new session
 * when the old one cannot help, until it lands.  After a reconnect the row's
 * liveness lock is taken again, so a reaper does not settle it as
 * outcome_unknown while its result is on the way. */
static void record_result(const struct pipeline_env *env, struct store *db,
                          const struct queue_item *it, const struct target_result *r, bool scan)
{
	char *hold = hold_for(it, r, scan);
	struct queue_result qr = {
	    .state = exec_state_name(r->state),
	    .exit_code = r->exit_code,
	    .signal = r->signal,
	    .out = r->out.data,
	    .outlen = r->out.len,
	    .err = r->err.data,
	    .errlen = r->err.len,
	    .out_truncated = r->out.truncated,
	    .err_truncated = r->err.truncated,
	    .duration_ms = r->duration_ms,
	    .error = r->error[0] ? r->error : NULL,
	    .hold_json = hold,
	    .jail = r->jail_facts[0] ? r->jail_facts : NULL,
	};
	bool recorded = false;
	int delay_ms = 200, tries = 0;

	for (;;) {
		if (queue_finish(db, it->id, env->worker_id, &qr, &recorded) == 0)
			break;
		tries++;
		log_db_error(it, "finish_failed", db);
		if (atomic_load(env->cancel)) {
			log_msg(LOG_ERROR,
			        "exec=%lld evt=exec.result_lost state=%s exit=%d tries=%d",
			        (long long)it->id, exec_state_name(r->state), r->exit_code, tries);
			free(hold);
			return;
		}
		if (needs_new_session(db))
			reconnect_holding(env, db, it);
		usleep((useconds_t)delay_ms * 1000);
		if (delay_ms < 5000)
			delay_ms *= 2;
	}
	log_msg(
	    LOG_INFO, "exec=%lld evt=exec.finished state=%s exit=%d signal=%d ms=%lld out=%zu%s%s",
	    (long long)it->id, exec_state_name(r->state), r->exit_code, r->signal, r->duration_ms,
	    r->out.len, r->out.truncated ? " truncated=1" : "", recorded ? "" : " late=1");
	free(hold);
}

/* A refusal's reason may quote what a check in front of the command printed
 * (the first line of its stderr): it never carries secret material into a
 * column an agent reads. */
static char *clean_reason(const struct queue_item *it, const char *reason)
{
	enum secretscan_kind k;
	char *clean = outscan_clean_reason(reason, &k);

	if (k != SECRET_NONE)
		log_msg(LOG_WARN, "exec=%lld evt=exec.message_withheld kind=%s", (long long)it->id,
		        secretscan_kind_name(k));
	return clean;
}

static void refuse(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                   const char *reason, const char *detail)
{
	refuse_points(env, db, it, reason, detail, NULL);
}

/* The database refused to record the class because it is above the
 * requester's scope (AL020): the row is refused with the database's words,
 * the class and its reasons in the event; nothing ran.  True when that was
 * the error. */
static bool refuse_out_of_scope(const struct pipeline_env *env, struct store *db,
                                const struct queue_item *it, const struct classification *c)
{
	char *reason, *detail;

	if (!sqlstate_is(store_sqlstate(db), SQLSTATE_OUT_OF_SCOPE))
		return false;
	reason = xstrdup(store_errmsg(db));
	detail = xasprintf("{\"class\": \"%s\", \"reasons\": %s, \"scope\": \"exceeded\"}",
	                   risk_class_name(c->cls), c->reasons_json ? c->reasons_json : "[]");
	refuse(env, db, it, reason, detail);
	free(detail);
	free(reason);
	return true;
}

/* The jail for this row: what nobody approved runs in a jail on its target
 * that makes its verdict true.  An observation runs read-only, in the root
 * tier only when the policy says its program needs uid 0; a reversible_low
 * change runs in the write tier, with only the paths its verdict names
 * writable.  Approved rows run as approved (a human looked); higher classes
 * never run without approval. */
static bool runs_as_action(enum exec_state state, enum risk_class cls, const struct verdict *v);

static enum transport_jail jail_for(enum exec_state state, enum risk_class cls,
                                    const struct verdict *v)
{
	if (state == EXEC_APPROVED || runs_as_action(state, cls, v))
		return TRANSPORT_JAIL_NONE;
	if (cls == RISK_READ_ONLY)
		return v->needs_root ? TRANSPORT_JAIL_ROOT : TRANSPORT_JAIL_USER;
	if (cls == RISK_REVERSIBLE_LOW)
		return TRANSPORT_JAIL_WRITE;
	return TRANSPORT_JAIL_NONE;
}

/* Why a reversible_low verdict cannot be confined to its claim (it then
 * goes to a human, never runs with less), or NULL when it can. */
static const char *write_unconfinable(const struct verdict *v, char *buf, size_t len)
{
	if (v->writes_unknown)
		return "the paths it writes are known only when it runs";
	if (v->action_rule && v->nwrites > 0) {
		snprintf(buf, len,
		         "it is an action the jail cannot confine to paths (rule %s) together with "
		         "writes: the jail cannot let the one through and confine the others",
		         v->action_rule);
		return buf;
	}
	return NULL;
}

/* A reversible_low verdict that is one action of its rule (a service
 * restart through the service manager, qm start): the kernel cannot confine
 * what the daemon does on its behalf, so it runs unconfined, only in the form
 * the rule proves (docs/transport.md, "Action rules"); recorded as
 * confinement "action". */
static bool runs_as_action(enum exec_state state, enum risk_class cls, const struct verdict *v)
{
	return state != EXEC_APPROVED && cls == RISK_REVERSIBLE_LOW && v->action_rule != NULL &&
	       v->nwrites == 0 && !v->writes_unknown;
}

/* The whole jail for a row: its tier, network view, write set, and the
 * policy's secret stores. */
static struct target_jail target_jail_for(enum transport_jail tier, const struct verdict *v,
                                          const struct classification *c)
{
	struct target_jail tj = {.tier = tier};

	if (tier == TRANSPORT_JAIL_NONE)
		return tj;
	tj.net_view = v->net_view;
	if (tier == TRANSPORT_JAIL_WRITE) {
		tj.writes = v->writes;
		tj.nwrites = v->nwrites;
	}
	tj.policy = c->snap.classifier ? classifier_policy(c->snap.classifier) : NULL;
	return tj;
}

/* A queued change that cannot be confined: to a human, nothing done for it. */
static void needs_human(const struct pipeline_env *env, struct store *db,
                        const struct queue_item *it, const char *why)
{
	char id[24], q[600],
	    *reason =
	        xasprintf("cannot confine a reversible_low change on %s: %s", it->target, why);
	struct store_res *res;

	snprintf(id, sizeof(id), "%lld", (long long)it->id);
	log_msg(LOG_WARN, "exec=%lld evt=exec.unconfinable target=%s reason=%s", (long long)it->id,
	        it->target, log_quote(reason, q, sizeof(q)));
	res = store_exec(db, "SELECT airlock.worker_needs_human($1, $2, $3)", 3,
	                 (const char *const[]){id, env->worker_id, reason});
	if (res == NULL) {
		log_db_error(it, "needs_human_failed", db);
		pipeline_let_go_if_gone(db, it);
	}
	store_clear(res);
	free(reason);
}

/* The jail could not be built: nothing ran; the row goes back to a human. */
static void unconfinable(const struct pipeline_env *env, struct store *db,
                         const struct queue_item *it, const struct target_result *r,
                         const struct classification *c)
{
	char id[24], q[600];
	struct store_res *res;
	char *reason = clean_reason(it, r->error);

	snprintf(id, sizeof(id), "%lld", (long long)it->id);
	log_msg(LOG_WARN, "exec=%lld evt=exec.unconfinable target=%s reason=%s", (long long)it->id,
	        it->target, log_quote(reason, q, sizeof(q)));
	/* Retried through a lost connection, with backoff, while the daemon
	 * runs, on a new session that holds the row again (no reaper settles
	 * it meanwhile); any other refusal (the row is no longer ours) ends it. */
	for (int delay_ms = 200;; delay_ms = delay_ms < 5000 ? delay_ms * 2 : delay_ms) {
		res = store_exec(db, "SELECT airlock.worker_unconfinable($1, $2, $3)", 3,
		                 (const char *const[]){id, env->worker_id, reason});
		if (res != NULL)
			break;
		log_db_error(it, "unconfinable_failed", db);
		if (!sqlstate_transient(store_sqlstate(db)) || atomic_load(env->cancel)) {
			free(reason);
			return;
		}
		usleep((useconds_t)delay_ms * 1000);
		if (needs_new_session(db))
			reconnect_holding(env, db, it);
	}
	store_clear(res);
	free(reason);
	(void)c; /* the operators are told by the database's outbox */
}

/* The row was marked running but nothing was sent (the node could not be
 * reached before the exec request went out, or the check in front of the
 * command on its channel refused it): it goes back to be retried, or is
 * refused, never failed (airlock.worker_not_sent).  Retried through a lost
 * connection while the daemon runs; when the database refuses the step, the
 * result is recorded as it is (failed, nothing ran), so that the row does
 * not stay running. */
static void not_sent(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                     const struct target_result *r, bool scan)
{
	char id[24], ms[16], q[600];
	struct store_res *res;
	bool retry = r->not_sent == TARGET_NOT_SENT_RETRY;
	char *reason = clean_reason(it, r->error);

	snprintf(id, sizeof(id), "%lld", (long long)it->id);
	/* 1, 2, 4, then every 8 s until the request's own deadline. */
	snprintf(ms, sizeof(ms), "%d", 1000 << (it->attempts < 3 ? it->attempts : 3));
	log_msg(LOG_INFO, "exec=%lld evt=exec.not_sent retry=%d reason=%s", (long long)it->id,
	        retry, log_quote(reason, q, sizeof(q)));
	for (int delay_ms = 200;; delay_ms = delay_ms < 5000 ? delay_ms * 2 : delay_ms) {
		res = store_exec(
		    db, "SELECT airlock.worker_not_sent($1, $2, $3, $4)", 4,
		    (const char *const[]){id, env->worker_id, reason, retry ? ms : NULL});
		if (res != NULL)
			break;
		log_db_error(it, "not_sent_failed", db);
		if (!sqlstate_transient(store_sqlstate(db))) {
			record_result(env, db, it, r, scan);
			free(reason);
			return;
		}
		if (atomic_load(env->cancel)) {
			free(reason);
			return; /* left running: the reaper settles it */
		}
		usleep((useconds_t)delay_ms * 1000);
		if (needs_new_session(db))
			reconnect_holding(env, db, it); /* no reaper settles it meanwhile */
	}
	if (strcmp(store_get(res, 0, 0), "refused") == 0)
		log_msg(LOG_INFO, "exec=%lld evt=exec.refused reason=%s", (long long)it->id,
		        log_quote(reason, q, sizeof(q)));
	store_clear(res);
	free(reason);
}

/* What the live check said before the row was claimed (pipeline_wake). */
struct live {
	int rc; /* as targets_check */
	char reason[1024];
};

/* The live check right before a row starts, for both paths: the usual one
 * (execute) and the one-call claim (pipeline_wake), which checks before it
 * claims.  As targets_check (full: on channels of its own, before a guard
 * step): 0 usable, -1 refuse, -2 retry later. */
static int check_live(const struct pipeline_env *env, const struct queue_item *it, bool full,
                      char *reason, size_t reasonlen)
{
	return targets_check(env->targets, it, full, reason, reasonlen);
}

/* The row is running, committed: the command is sent and its result
 * recorded (scanned first when nobody approved it). */
static void run_started(const struct pipeline_env *env, struct store *db,
                        const struct queue_item *it, enum risk_class cls,
                        const struct target_jail *tj, const struct classification *c, bool scan)
{
	struct target_result r;

	log_msg(LOG_INFO, "exec=%lld evt=exec.started target=%s class=%s confinement=%s",
	        (long long)it->id, it->target, risk_class_name(cls), jail_name(tj->tier));
	targets_run_jailed(env->targets, it, tj, env->cancel, &r);
	if (r.unconfinable) {
		unconfinable(env, db, it, &r, c);
	} else if (r.not_sent != TARGET_SENT) {
		not_sent(env, db, it, &r, scan);
	} else {
		record_result(env, db, it, &r, scan);
	}
	target_result_clear(&r);
}

/* queued/approved, re-validated: live check (unless pre says what it
 * found), guard, run, record. */
static void execute(const struct pipeline_env *env, struct store *db, struct queue_item *it,
                    enum exec_state state, enum risk_class cls, const struct verdict *v,
                    const struct classification *c, const struct live *pre)
{
	enum transport_jail jail = jail_for(state, cls, v);
	struct target_jail tj = target_jail_for(jail, v, c);
	char reason[1024];
	char *rewind_json = NULL, *guard_json = NULL;
	bool mutating = cls != RISK_READ_ONLY;
	bool slot = false;
	const char *nojail;

	if (jail == TRANSPORT_JAIL_WRITE &&
	    (nojail = write_unconfinable(v, reason, sizeof(reason))) != NULL) {
		needs_human(env, db, it, nojail);
		return;
	}

	if (mutating && !durability_ok(env->durability, reason, sizeof(reason))) {
		char why[1200];
		snprintf(why, sizeof(why), "held, nothing sent: %s", reason);
		release(env, db, it, durability_retry_ms(env->durability), why);
		return;
	}
	if (mutating && !target_lock(db, it->target)) {
		log_msg(LOG_DEBUG, "exec=%lld evt=exec.target_busy target=%s", (long long)it->id,
		        it->target);
		release(env, db, it, TARGET_BUSY_RETRY_MS, NULL);
		return;
	}
	/* Never a wait: a node with no free slot gets its row back, and the
	 * claim skips that node's rows until one of its slots is free. */
	if (!slots_try_take(env->node_slots, it->node)) {
		log_msg(LOG_DEBUG, "exec=%lld evt=exec.node_busy node=%s", (long long)it->id,
		        it->node);
		release(env, db, it, 0, NULL);
		goto out;
	}
	slot = true;
	/* In full on channels of its own before a guard step (no checkpoint for
	 * a target that cannot run the command); else on the command's channel. */
	int live = pre ? pre->rc : check_live(env, it, mutating, reason, sizeof(reason));
	if (pre)
		snprintf(reason, sizeof(reason), "%s", pre->reason);
	if (live == -1) {
		refuse(env, db, it, reason, NULL);
		goto out;
	}
	if (live == -2) {
		/* 1, 2, 4, then every 8 s until the request's own deadline. */
		int delay = 1000 << (it->attempts < 3 ? it->attempts : 3);
		char now[24] = "";
		enum exec_state now_state = EXEC_QUEUED;
		if (queue_unreachable(db, it->id, env->worker_id, delay, reason, now) < 0) {
			log_db_error(it, "unreachable_failed", db);
			give_back_after(env, db, it, "the failed attempt");
		} else if (exec_state_parse(now, &now_state) == 0 && now_state == EXEC_REFUSED) {
			char q[600];
			log_msg(LOG_INFO, "exec=%lld evt=exec.refused reason=%s", (long long)it->id,
			        log_quote(reason, q, sizeof(q)));
		}
		goto out;
	}
	int64_t guard_t0 = deadline_now_ms();
	int guarded = guard_before(env->guard, db, env->worker_id, it, cls, &rewind_json,
	                           &guard_json, reason, sizeof(reason));
	if (mutating)
		metrics_guard(env->metrics, deadline_now_ms() - guard_t0, guarded < 0);
	if (guarded < 0) {
		/* With the checkpoints the guard made anyway, if any. */
		refuse_points(env, db, it, reason, guard_json, rewind_json);
		goto out;
	}
	if (atomic_load(env->stopping)) {
		release(env, db, it, 0, "airlockd is stopping; released before it ran");
		goto out;
	}
	if (queue_start(db, it->id, env->worker_id, rewind_json, guard_json,
	                runs_as_action(state, cls, v) ? "action" : jail_name(jail)) < 0) {
		log_db_error(it, "start_failed", db);
		if (sqlstate_transient(store_sqlstate(db)) ||
		    sqlstate_is(store_sqlstate(db), SQLSTATE_ILLEGAL_TRANSITION)) {
			/* The database was slow or away, not the request wrong:
			 * nothing was sent, so the row goes back (from running, if
			 * the start landed after all) and is tried again. */
			give_back_after(env, db, it, "the start");
		} else {
			char why[1200];
			snprintf(why, sizeof(why), "refused at start: %s. Nothing ran.",
			         store_errmsg(db));
			refuse(env, db, it, why, NULL);
		}
		goto out;
	}
	run_started(env, db, it, cls, &tj, c, state != EXEC_APPROVED);
out:
	if (slot)
		slots_give(env->node_slots, it->node);
	if (mutating)
		target_unlock(db, it->target);
	free(rewind_json);
	free(guard_json);
}

/* Parses a state the database just returned; false (logged) for a name this
 * daemon does not know, which it then leaves alone. */
static bool state_known(const struct queue_item *it, const char *name, enum exec_state *out)
{
	char q[64];

	if (exec_state_parse(name, out) == 0)
		return true;
	log_msg(LOG_ERROR, "exec=%lld evt=exec.state_unknown state=%s", (long long)it->id,
	        log_quote(name, q, sizeof(q)));
	return false;
}

void pipeline_process(const struct pipeline_env *env, struct store *db, struct verdict *v,
                      struct queue_item *it)
{
	struct classification c;
	char now[24] = "";
	enum exec_state claimed, state = EXEC_RECEIVED;

	if (!state_known(it, it->state, &claimed)) {
		/* The schema allows no other name: a newer schema than this
		 * daemon knows is for an administrator to settle. */
		release(env, db, it, 5000, NULL);
		return;
	}
	if (strcmp(it->kind, "guard") == 0) {
		guardonly_process(env, db, it,
		                  claimed); /* a checkpoint only: nothing to classify or run */
		return;
	}
	if (strcmp(it->kind, "recover") == 0) {
		recover_process(env, db,
		                it); /* a file-level restore: planned, approved, carried out */
		return;
	}
	if (classify(env, v, it, &c) < 0) {
		log_msg(LOG_WARN, "exec=%lld evt=exec.no_policy", (long long)it->id);
		/* worker_release records a reason once, not at every retry. */
		release(env, db, it, 5000,
		        "no classifier policy is loaded; an administrator must run `airlock seed`");
		return;
	}
	if (claimed == EXEC_RECEIVED) {
		char rewind[512];
		int possible = 0;
		guard_status(env->guard, it, rewind, sizeof(rewind), &possible);
		if (queue_classified(db, it->id, env->worker_id, risk_class_name(c.cls),
		                     c.reasons_json, c.snap.version, CLASSIFIER_VERSION, rewind,
		                     possible, now) < 0) {
			if (refuse_out_of_scope(env, db, it, &c))
				goto out;
			log_db_error(it, "classify_failed", db);
			give_back_after(env, db, it, "the classification");
			goto out;
		}
		if (!state_known(it, now, &state))
			goto out;
		log_msg(LOG_INFO, "exec=%lld evt=exec.classified class=%s state=%s policy=%lld",
		        (long long)it->id, risk_class_name(c.cls), now, c.snap.version);
		if (state == EXEC_PENDING_APPROVAL) {
			preview_run(env, db, it, v, c.snap.classifier); /* for the approver */
			goto out;
		}
		it->rewind_possible = possible;
	} else {
		if (queue_revalidate(db, it->id, env->worker_id, risk_class_name(c.cls),
		                     c.reasons_json, c.snap.version, CLASSIFIER_VERSION, now) < 0) {
			if (refuse_out_of_scope(env, db, it, &c))
				goto out;
			log_db_error(it, "revalidate_failed", db);
			give_back_after(env, db, it, "the re-validation");
			goto out;
		}
		if (!state_known(it, now, &state))
			goto out;
		if (state == EXEC_PENDING_APPROVAL) {
			log_msg(LOG_INFO, "exec=%lld evt=exec.approval_void class=%s policy=%lld",
			        (long long)it->id, risk_class_name(c.cls), c.snap.version);
			goto out;
		}
		if (state != EXEC_QUEUED && state != EXEC_APPROVED) {
			/* expired (the approval lapsed) or refused (the target, as
			 * probed, changed since the approval): recorded on the row,
			 * which is no longer ours. */
			log_msg(LOG_INFO, "exec=%lld evt=exec.revalidate_ended state=%s",
			        (long long)it->id, now);
			goto out;
		}
	}
	/* The class to run under: never below what was recorded. */
	enum risk_class cls = c.cls, then_cls;
	if (it->cls && risk_class_parse(it->cls, &then_cls) == 0 && then_cls > cls)
		cls = then_cls;
	execute(env, db, it, claimed, cls, v, &c, NULL);
out:
	classification_clear(env, &c);
}

/* The rest of a row that worker_claim_classified claimed in state `now`. */
static void after_claim_classified(const struct pipeline_env *env, struct store *db,
                                   struct verdict *v, struct queue_item *it,
                                   const struct classification *c, enum transport_jail jail,
                                   const struct live *pre, int rewind_possible, bool *slot)
{
	enum exec_state now;
	enum risk_class cls = c->cls, recorded;

	/* The class to run under: never below what was recorded. */
	if (it->cls && risk_class_parse(it->cls, &recorded) == 0 && recorded > cls)
		cls = recorded;
	log_msg(LOG_INFO, "exec=%lld evt=exec.classified class=%s state=%s policy=%lld one_call=1",
	        (long long)it->id, risk_class_name(cls), it->state, c->snap.version);
	if (!state_known(it, it->state, &now))
		return;
	if (now == EXEC_RUNNING) {
		struct target_jail tj = target_jail_for(jail, v, c);
		run_started(env, db, it, cls, &tj, c, true); /* nobody approved it */
		return;
	}
	if (*slot) {
		slots_give(env->node_slots, it->node);
		*slot = false;
	}
	if (now == EXEC_PENDING_APPROVAL) {
		preview_run(env, db, it, v, c->snap.classifier); /* for the approver */
		return;
	}
	if (now != EXEC_QUEUED)
		return;
	it->rewind_possible = rewind_possible;
	execute(env, db, it, EXEC_RECEIVED, cls, v, c, pre);
}

int pipeline_wake(const struct pipeline_env *env, struct store *db, struct verdict *v,
                  const char *payload)
{
	struct queue_item seen, it;
	struct classification c;
	struct live pre = {0};
	bool checked = false, slot = false;
	const char *confinement = NULL;
	enum transport_jail jail = TRANSPORT_JAIL_NONE;
	char rewind[512];
	int possible = 0, got;
	int64_t id;

	memset(&it, 0, sizeof(it));
	if (queue_wake_parse(payload, &id, &seen) != 1)
		return 0;
	if (classify(env, v, &seen, &c) < 0) {
		/* The usual path says why, on the row. */
		queue_item_clear(&seen);
		return 0;
	}
	guard_status(env->guard, &seen, rewind, sizeof(rewind), &possible);
	/* An observation needs no approval and no guard: when its target
	 * answers now, it starts in the claim's own transaction, confined.
	 * The document is only checked against the row by the claim itself,
	 * so before it only a session the pool already holds for exactly the
	 * node it names may answer: a forged document opens no connection and
	 * takes no slot.  A node with no such session takes the usual start,
	 * checked with the row's own facts once it is claimed. */
	if (c.cls == RISK_READ_ONLY && !atomic_load(env->stopping) &&
	    targets_pooled_up(env->targets, &seen)) {
		jail = jail_for(EXEC_RECEIVED, c.cls, v);
		/* A node with no free slot: claimed and classified only; the
		 * usual path gives it back until a slot is free. */
		slot = slots_try_take(env->node_slots, seen.node);
		if (slot) {
			pre.rc = check_live(env, &seen, false, pre.reason, sizeof(pre.reason));
			checked = true;
			if (pre.rc == 0 && !atomic_load(env->stopping))
				confinement = jail_name(jail);
		}
	}
	got = queue_claim_classified(db, env->worker_id, &seen, risk_class_name(c.cls),
	                             c.reasons_json, c.snap.version, CLASSIFIER_VERSION, rewind,
	                             possible, confinement, &it);
	if (got < 0) {
		log_db_error(&seen, "claim_classified_failed", db);
		/* Lost on the way back, the claim may have landed (and started
		 * the row): if the row is ours, it goes back; nothing was sent. */
		if (sqlstate_transient(store_sqlstate(db)))
			give_back(env, db, &seen, 0, NULL);
	}
	if (got == 1)
		after_claim_classified(env, db, v, &it, &c, jail, checked ? &pre : NULL, possible,
		                       &slot);
	if (slot)
		slots_give(env->node_slots, seen.node);
	queue_item_clear(&it);
	queue_item_clear(&seen);
	classification_clear(env, &c);
	return got == 1;
}
