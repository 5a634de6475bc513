/* guardonly.c -- carrying out a guard request with the run's guard. */
#include "worker/guardonly.h"

#include "classifier/classes.h"
#include "lib/log.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void refuse(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                   const char *reason, const char *detail)
{
	char q[600];

	log_msg(LOG_INFO, "exec=%lld evt=guard_only.refused reason=%s", (long long)it->id,
	        log_quote(reason, q, sizeof(q)));
	if (queue_refuse(db, it->id, env->worker_id, reason, detail) < 0) {
		log_msg(LOG_ERROR, "exec=%lld evt=exec.refuse_failed error=%s", (long long)it->id,
		        log_quote(store_errmsg(db), q, sizeof(q)));
		pipeline_let_go_if_gone(db, it); /* the hook cancelled it when its budget ran out */
	}
}

static int exec_sql(struct store *db, const char *sql, int n, const char *const *params)
{
	struct store_res *res = store_exec(db, sql, n, params);

	store_clear(res);
	return res ? 0 : -1;
}

void guardonly_process(const struct pipeline_env *env, struct store *db, struct queue_item *it,
                       enum exec_state claimed)
{
	enum target_type tt;
	char id[24], reason[1024], q[600];
	char *rewind_json = NULL, *guard_json = NULL;

	snprintf(id, sizeof(id), "%lld", (long long)it->id);
	if (claimed == EXEC_RECEIVED && exec_sql(db, "SELECT airlock.worker_guard_begin($1, $2)", 2,
	                                         (const char *const[]){id, env->worker_id}) < 0) {
		log_msg(LOG_ERROR, "exec=%lld evt=guard_only.begin_failed error=%s",
		        (long long)it->id, log_quote(store_errmsg(db), q, sizeof(q)));
		queue_release(db, it->id, env->worker_id, 2000, NULL);
		return;
	}
	if (target_type_parse(it->target_type, &tt) < 0 || tt != TARGET_VM) {
		refuse(env, db, it,
		       "refused: Zerto protects VMs only, so no checkpoint can be made for this "
		       "target. Nothing was done. Ask your operator before changing it.",
		       NULL);
		return;
	}
	/* reversible_low: a VM Zerto does not protect is "no rewind point", not
	 * an approval question; a guard request without one is refused below */
	if (guard_before(env->guard, db, env->worker_id, it, RISK_REVERSIBLE_LOW, &rewind_json,
	                 &guard_json, reason, sizeof(reason)) < 0) {
		refuse(env, db, it, reason, guard_json); /* the guard's own words */
		goto out;
	}
	if (rewind_json == NULL || strcmp(rewind_json, "[]") == 0 ||
	    strcmp(rewind_json, "null") == 0) {
		cJSON *g = guard_json ? cJSON_Parse(guard_json) : NULL;
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(g, "why");
		char msg[1200];

		snprintf(msg, sizeof(msg),
		         "refused: no checkpoint could be made (%.900s). Nothing was done. Do not "
		         "make the change without a rewind point unless your operator says so.",
		         cJSON_IsString(why) ? why->valuestring : "the guard confirmed none");
		cJSON_Delete(g);
		refuse(env, db, it, msg, guard_json);
		goto out;
	}
	if (exec_sql(db, "SELECT airlock.worker_guard_done($1, $2, $3::jsonb, $4::jsonb)", 4,
	             (const char *const[]){id, env->worker_id, rewind_json,
	                                   guard_json ? guard_json : "{}"}) < 0) {
		log_msg(LOG_ERROR, "exec=%lld evt=guard_only.done_failed error=%s",
		        (long long)it->id, log_quote(store_errmsg(db), q, sizeof(q)));
		queue_release(db, it->id, env->worker_id, 2000,
		              "the guard's result could not be recorded");
		goto out;
	}
	log_msg(LOG_INFO, "exec=%lld evt=guard_only.done target=%s", (long long)it->id, it->target);
out:
	free(rewind_json);
	free(guard_json);
}
