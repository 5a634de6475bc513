/* inspect.c -- failover test, its stop, and offsite clone requests. */
#include "worker/inspect.h"

#include "lib/buf.h"
#include "lib/log.h"
#include "zerto/inspect.h"
#include "zerto/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failover test comes up in about 30 ZVM seconds, a clone in minutes. */
#define TASK_BUDGET_S 1800.0

static bool stop_mode(const struct rec *r)
{
	return strcmp(r->mode, "stop_failover_test") == 0;
}

/* stop: the VM's VPGs with a failover test running, as plan entries. */
static cJSON *running_tests(struct rec *r, const struct zerto_vm_row *rows, size_t n,
                            struct zerto_err *e)
{
	cJSON *out = cJSON_CreateArray();

	for (size_t i = 0; i < n; i++) {
		bool running = false;

		if (zerto_vpg_test_running(r->zc, rows[i].vpg_id, &running, e) < 0) {
			cJSON_Delete(out);
			return NULL;
		}
		if (!running)
			continue;
		cJSON *v = cJSON_CreateObject();
		cJSON_AddStringToObject(v, "vpg_id", rows[i].vpg_id);
		cJSON_AddStringToObject(v, "vpg_name", rows[i].vpg_name);
		cJSON_AddStringToObject(v, "recovery_site", rows[i].recovery_site);
		cJSON_AddItemToArray(out, v);
	}
	return out;
}

void inspect_plan(struct rec *r)
{
	struct zerto_vm_row *rows = NULL;
	size_t n = 0;
	struct zerto_err e = {0};
	struct buf sum = BUF_INIT;
	cJSON *found = NULL, *plan = cJSON_CreateObject();
	const cJSON *c;
	char msg[1500];

	buf_init(&sum, 4096);
	if (rec_client(r, msg, sizeof(msg)) < 0) {
		rec_refuse(r, msg, NULL);
		goto out;
	}
	if (rec_find_vm(r, &rows, &n) < 0)
		goto out;
	cJSON_AddStringToObject(plan, "mode", r->mode);
	cJSON_AddStringToObject(plan, "vm_id", rows[0].vm_id);
	found = stop_mode(r) ? running_tests(r, rows, n, &e) : rec_candidates(r, rows, n, &e);
	if (found == NULL) {
		snprintf(msg, sizeof(msg),
		         "refused: the ZVM could not be asked (%s). Nothing was done.", e.msg);
		rec_refuse(r, msg, NULL);
		goto out;
	}
	if (stop_mode(r)) {
		if (cJSON_GetArraySize(found) == 0) {
			snprintf(
			    msg, sizeof(msg),
			    "refused: no failover test is running on any VPG of %s. Nothing was "
			    "done.",
			    r->it->target);
			rec_refuse(r, msg, NULL);
			goto out;
		}
		cJSON_AddItemToObject(plan, "vpgs", cJSON_Duplicate(found, true));
		buf_printf(&sum, "stop the failover test of %s on VPG(s)", r->it->target);
		cJSON_ArrayForEach(c, found)
		    buf_printf(&sum, " %s (recovering at %s)", rec_str(c, "vpg_name"),
		               rec_str(c, "recovery_site"));
		buf_puts(&sum, ": the test copy is removed; the protected VM is not touched.");
		rec_hold(r, plan, buf_str(&sum));
		goto out;
	}
	cJSON *chosen = NULL;
	cJSON_ArrayForEach(c, found)
	{
		const struct zerto_vm_row *row = rec_row_of(rows, n, rec_str(c, "vpg_id"));
		if (row == NULL)
			continue;
		chosen = cJSON_Duplicate(c, true);
		cJSON_AddStringToObject(chosen, "recovery_site", row->recovery_site);
		break;
	}
	if (chosen == NULL) {
		snprintf(msg, sizeof(msg),
		         "refused: checkpoint %s is not in the journal of any VPG protecting %s. "
		         "Nothing was done.",
		         r->checkpoint ? r->checkpoint : "(of the execution)", r->it->target);
		rec_refuse(r, msg, NULL);
		goto out;
	}
	cJSON_AddItemToObject(plan, "point", chosen);
	buf_printf(&sum, "%s of %s from checkpoint %s taken %s, VPG %s, at its recovery site %s",
	           strcmp(r->mode, "clone") == 0 ? "an offsite clone" : "a failover test",
	           r->it->target, rec_str(chosen, "checkpoint_id"),
	           rec_str(chosen, "checkpoint_time"), rec_str(chosen, "vpg_name"),
	           rec_str(chosen, "recovery_site"));
	buf_puts(&sum, strcmp(r->mode, "clone") == 0
	                   ? ": a copy of the VM is made there for inspection; the protected VM is "
	                     "not touched."
	                   : ": a test copy of the VM comes up there for inspection until an "
	                     "operator stops it (airlock inspect --stop-test); the protected VM is "
	                     "not touched and replication goes on.");
	rec_hold(r, plan, buf_str(&sum));
out:
	zerto_vm_rows_free(rows, n);
	cJSON_Delete(found);
	cJSON_Delete(plan);
	buf_free(&sum);
}

/* Starts one action and follows its task; fills the report's entry. */
static bool act(struct rec *r, const char *vpg_id, const char *vpg_name, const cJSON *point,
                cJSON *entry)
{
	const char *vm_id = rec_str(r->plan, "vm_id"), *cp = rec_str(point, "checkpoint_id");
	struct zerto_err e = {0};
	char *task = NULL, *reason = NULL, why[700] = "", sn[32];
	int state = -1, rc;
	bool ok = false;

	cJSON_AddStringToObject(entry, "vpg", vpg_name);
	if (strcmp(r->mode, "failover_test") == 0)
		rc = zerto_failover_test_start(r->zc, vpg_id, cp, vm_id, &task, &e);
	else if (strcmp(r->mode, "clone") == 0)
		rc = zerto_clone_start(r->zc, vpg_id, cp, vm_id, &task, &e);
	else
		rc = zerto_failover_test_stop(r->zc, vpg_id, "airlock inspection ended", &task, &e);
	if (rc < 0) {
		snprintf(why, sizeof(why), "the ZVM refused it: %s", e.msg);
		goto out;
	}
	cJSON_AddStringToObject(entry, "task_id", task);
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "vpg", vpg_name);
	cJSON_AddStringToObject(d, "task_id", task);
	rec_step(r, "zerto.task_started", d);
	if (rec_wait_task(r, task, TASK_BUDGET_S, &state, &reason, why, sizeof(why)) < 0)
		goto out;
	ok = state == ZERTO_TASK_COMPLETED;
	if (!ok)
		snprintf(why, sizeof(why), "the task ended %s: %s",
		         zerto_task_state_name(state, sn, sizeof(sn)),
		         reason && reason[0] ? reason : "no reason given");
out:
	cJSON_AddNumberToObject(entry, "task_state", state);
	cJSON_AddBoolToObject(entry, "ok", ok);
	if (!ok)
		cJSON_AddStringToObject(entry, "error", why);
	rec_step(r, "zerto.task_ended", cJSON_Duplicate(entry, true));
	free(task);
	free(reason);
	return ok;
}

void inspect_run(struct rec *r)
{
	char lq[512];
	const cJSON *point = cJSON_GetObjectItemCaseSensitive(r->plan, "point");
	const cJSON *vpgs = cJSON_GetObjectItemCaseSensitive(r->plan, "vpgs"), *v;
	char msg[1500];
	cJSON *report = NULL, *tasks;
	bool ok = true;

	if (rec_str(r->plan, "vm_id") == NULL || (point == NULL && vpgs == NULL)) {
		rec_refuse(r, "refused: the approved inspection has no plan. Nothing was done.",
		           NULL);
		return;
	}
	if (rec_client(r, msg, sizeof(msg)) < 0) {
		rec_refuse(r, msg, NULL);
		return;
	}
	struct store_res *res = store_exec(r->db, "SELECT airlock.worker_recover_start($1, $2)", 2,
	                                   (const char *const[]){r->id, r->env->worker_id});
	bool running = res != NULL && strcmp(store_get(res, 0, 0), "running") == 0;
	if (res == NULL) {
		log_msg(LOG_ERROR, "exec=%s evt=inspect.start_failed error=%s", r->id,
		        log_quote(store_errmsg(r->db), lq, sizeof(lq)));
		pipeline_let_go_if_gone(r->db, r->it);
	}
	store_clear(res);
	if (!running)
		return;
	report = cJSON_CreateObject();
	cJSON_AddStringToObject(report, "mode", r->mode);
	tasks = cJSON_AddArrayToObject(report, "tasks");
	if (point != NULL) {
		cJSON_AddItemToObject(report, "point", cJSON_Duplicate(point, true));
		cJSON *entry = cJSON_CreateObject();
		cJSON_AddItemToArray(tasks, entry);
		ok = act(r, rec_str(point, "vpg_id"), rec_str(point, "vpg_name"), point, entry);
	} else {
		cJSON_ArrayForEach(v, vpgs)
		{
			cJSON *entry = cJSON_CreateObject();
			cJSON_AddItemToArray(tasks, entry);
			ok =
			    act(r, rec_str(v, "vpg_id"), rec_str(v, "vpg_name"), NULL, entry) && ok;
		}
	}
	rec_finish(r, ok ? "succeeded" : "failed", report,
	           ok ? NULL : "the Zerto task did not complete (see the report)");
	cJSON_Delete(report);
}
