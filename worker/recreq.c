/* recreq.c -- what file restores and whole-VM inspections share. */
#include "worker/recreq.h"

#include "lib/deadline.h"
#include "lib/execstate.h"
#include "lib/log.h"
#include "lib/sqlstate.h"
#include "lib/xalloc.h"
#include "worker/guard.h"
#include "zerto/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* A checkpoint named by id (not tag) is looked for this far back. */
#define ID_LOOKBACK_S (24 * 3600)

void rec_clear(struct rec *r)
{
	zerto_client_free(r->zc);
	cJSON_Delete(r->paths);
	cJSON_Delete(r->source_points);
	cJSON_Delete(r->plan);
	free(r->checkpoint);
	free(r->zvm_id);
}

const char *rec_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void rec_refuse(struct rec *r, const char *reason, const cJSON *detail)
{
	char q[600];
	char *d = detail ? cJSON_PrintUnformatted(detail) : NULL;

	log_msg(LOG_INFO, "exec=%s evt=recover.refused reason=%s", r->id,
	        log_quote(reason, q, sizeof(q)));
	if (queue_refuse(r->db, r->it->id, r->env->worker_id, reason, d) < 0) {
		log_msg(LOG_ERROR, "exec=%s evt=recover.refuse_failed error=%s", r->id,
		        log_quote(store_errmsg(r->db), q, sizeof(q)));
		pipeline_let_go_if_gone(r->db, r->it);
	}
	cJSON_free(d);
}

/* Records one step of a running recovery; detail is consumed. */
void rec_step(struct rec *r, const char *name, cJSON *detail)
{
	char *d;
	struct store_res *res;
	char q[300];

	cJSON_AddStringToObject(detail, "step", name);
	d = cJSON_PrintUnformatted(detail);
	res = store_exec(r->db, "SELECT airlock.worker_recover_step($1, $2, $3::jsonb)", 3,
	                 (const char *const[]){r->id, r->env->worker_id, d});
	if (res == NULL)
		log_msg(LOG_WARN, "exec=%s evt=recover.step_unrecorded step=%s error=%s", r->id,
		        name, log_quote(store_errmsg(r->db), q, sizeof(q)));
	store_clear(res);
	/* The step's name is its event's, in the log as on the row. */
	log_msg(LOG_INFO, "exec=%s evt=%s", r->id, name);
	cJSON_free(d);
	cJSON_Delete(detail);
}

/* Reads what was asked (and the plan, once made). */
int rec_load(struct rec *r)
{
	struct store_res *res =
	    store_exec(r->db, "SELECT * FROM airlock.worker_recover_request($1, $2)", 2,
	               (const char *const[]){r->id, r->env->worker_id});
	int rc = -1;

	if (res == NULL || store_nrows(res) != 1)
		goto out;
	if (!store_isnull(res, 0, 1))
		r->paths = cJSON_Parse(store_get(res, 0, 1));
	r->keep = store_get(res, 0, 2)[0] == 't';
	if (!store_isnull(res, 0, 3))
		r->checkpoint = xstrdup(store_get(res, 0, 3));
	if (!store_isnull(res, 0, 4))
		r->source_points = cJSON_Parse(store_get(res, 0, 4));
	if (!store_isnull(res, 0, 5))
		r->plan = cJSON_Parse(store_get(res, 0, 5));
	if (!store_isnull(res, 0, 6) && store_get(res, 0, 6)[0])
		r->zvm_id = xstrdup(store_get(res, 0, 6));
	snprintf(r->mode, sizeof(r->mode), "%s", store_get(res, 0, 7));
	rc = strcmp(r->mode, "files") != 0 || cJSON_IsArray(r->paths) ? 0 : -1;
out:
	store_clear(res);
	return rc;
}

int rec_client(struct rec *r, char *why, size_t whylen)
{
	struct zerto_config zc;
	char err[300];

	if (r->env->cfg->zerto_url == NULL) {
		snprintf(why, whylen,
		         "refused: no Zerto ZVM is configured, so there is no checkpoint to "
		         "recover from. Nothing was done.");
		return -1;
	}
	guard_zerto_config(r->env->cfg, &zc);
	r->zc = zerto_client_new(&zc, err, sizeof(err));
	if (r->zc == NULL) {
		snprintf(why, whylen,
		         "refused: the Zerto client could not be set up (%s). Nothing "
		         "was done.",
		         err);
		return -1;
	}
	return 0;
}

/* Sleeps s ZVM seconds in real time (at least 50 ms). */
void rec_sleep(struct rec *r, double s)
{
	double real = s / zerto_client_time_scale(r->zc);
	long ms = real < 0.05 ? 50 : (long)(real * 1000);
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The time a tag carries at its end ("... | 20260921T150405Z"), or 0. */
static int64_t tag_time_ms(const char *tag)
{
	const char *bar = strrchr(tag, '|');
	struct tm tm = {0};
	char *end;

	if (bar == NULL)
		return 0;
	bar++;
	while (*bar == ' ')
		bar++;
	end = strptime(bar, "%Y%m%dT%H%M%SZ", &tm);
	if (end == NULL || *end != '\0')
		return 0;
	return (int64_t)timegm(&tm) * 1000;
}

/* Candidate rewind points: {vpg_id, vpg_name, checkpoint_id, checkpoint_time,
 * tag}.  From the source execution's rewind points, or by looking the named
 * checkpoint (id or tag) up in each VPG's journal. */
cJSON *rec_candidates(struct rec *r, const struct zerto_vm_row *rows, size_t n, struct zerto_err *e)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *p;

	if (r->source_points != NULL) {
		cJSON_ArrayForEach(p, r->source_points)
		{
			if (rec_str(p, "checkpoint_id") == NULL || rec_str(p, "vpg_id") == NULL)
				continue;
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "vpg_id", rec_str(p, "vpg_id"));
			cJSON_AddStringToObject(
			    c, "vpg_name", rec_str(p, "vpg_name") ? rec_str(p, "vpg_name") : "");
			cJSON_AddStringToObject(c, "checkpoint_id", rec_str(p, "checkpoint_id"));
			cJSON_AddStringToObject(
			    c, "checkpoint_time",
			    rec_str(p, "checkpoint_time") ? rec_str(p, "checkpoint_time") : "");
			cJSON_AddStringToObject(c, "tag",
			                        rec_str(p, "tag") ? rec_str(p, "tag") : "");
			cJSON_AddItemToArray(out, c);
		}
		return out;
	}
	int64_t now_ms, start, end, at = tag_time_ms(r->checkpoint);
	if (zerto_server_time(r->zc, &now_ms, e) < 0)
		goto fail;
	start = at ? at - 600000 : now_ms - (int64_t)ID_LOOKBACK_S * 1000;
	end = at ? at + 1800000 : now_ms + 60000;
	for (size_t i = 0; i < n; i++) {
		struct zerto_checkpoint *cps = NULL;
		size_t ncp = 0;

		if (zerto_list_checkpoints(r->zc, rows[i].vpg_id, start, end, &cps, &ncp, e) < 0)
			goto fail;
		for (size_t k = 0; k < ncp; k++) {
			if (strcmp(cps[k].id, r->checkpoint) != 0 &&
			    (cps[k].tag == NULL || strcmp(cps[k].tag, r->checkpoint) != 0))
				continue;
			char ts[40];
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "vpg_id", rows[i].vpg_id);
			cJSON_AddStringToObject(c, "vpg_name", rows[i].vpg_name);
			cJSON_AddStringToObject(c, "checkpoint_id", cps[k].id);
			cJSON_AddStringToObject(c, "checkpoint_time",
			                        zerto_time_format(cps[k].ts_ms, ts, sizeof(ts)));
			cJSON_AddStringToObject(c, "tag", cps[k].tag ? cps[k].tag : "");
			cJSON_AddItemToArray(out, c);
			break;
		}
		zerto_checkpoints_free(cps, ncp);
	}
	return out;
fail:
	cJSON_Delete(out);
	return NULL;
}

const struct zerto_vm_row *rec_row_of(const struct zerto_vm_row *rows, size_t n, const char *vpg_id)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(rows[i].vpg_id, vpg_id) == 0)
			return &rows[i];
	return NULL;
}

void rec_finish(struct rec *r, const char *state, cJSON *report, const char *error)
{
	char *rj = cJSON_PrintUnformatted(report);
	char q[600];

	for (int attempt = 0; attempt < 30; attempt++) {
		struct store_res *res = store_exec(
		    r->db, "SELECT airlock.worker_recover_done($1, $2, $3, $4::jsonb, $5)", 5,
		    (const char *const[]){r->id, r->env->worker_id, state, rj, error});
		bool ok = res != NULL;

		store_clear(res);
		if (ok)
			break;
		log_msg(LOG_ERROR, "exec=%s evt=recover.done_unrecorded state=%s error=%s", r->id,
		        state, log_quote(store_errmsg(r->db), q, sizeof(q)));
		if (sqlstate_is(store_sqlstate(r->db), SQLSTATE_ILLEGAL_TRANSITION))
			break;
		sleep(1);
	}
	log_msg(LOG_INFO, "exec=%s evt=recover.done state=%s", r->id, state);
	cJSON_free(rj);
}

int rec_find_vm(struct rec *r, struct zerto_vm_row **rows, size_t *n)
{
	struct zerto_err e = {0};
	struct buf ids = BUF_INIT;
	char msg[1200];
	const char *slug =
	    strchr(r->it->target, ':') ? strchr(r->it->target, ':') + 1 : r->it->target;
	int rc = -1;

	buf_init(&ids, 1024);
	if (zerto_list_vms(r->zc, r->zvm_id, r->zvm_id ? NULL : slug, rows, n, &e) < 0) {
		snprintf(msg, sizeof(msg),
		         "refused: the ZVM could not be asked which VPGs protect %s (%s). Nothing "
		         "was done; ask again when the ZVM answers.",
		         r->it->target, e.msg);
		rec_refuse(r, msg, NULL);
		goto out;
	}
	if (*n == 0) {
		snprintf(
		    msg, sizeof(msg),
		    "refused: Zerto does not protect %s from this site, so it has no checkpoint "
		    "to recover from. Nothing was done.",
		    r->it->target);
		rec_refuse(r, msg, NULL);
		goto out;
	}
	if (zerto_vm_rows_distinct(*rows, *n, &ids) > 1) {
		snprintf(msg, sizeof(msg),
		         "refused: the name %s matches several Zerto VMs (%s); set the entity's "
		         "zerto_vm_identifier. Nothing was done.",
		         slug, buf_str(&ids));
		rec_refuse(r, msg, NULL);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0) {
		zerto_vm_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	buf_free(&ids);
	return rc;
}

int rec_wait_task(struct rec *r, const char *task_id, double budget_s, int *state, char **reason,
                  char *why, size_t whylen)
{
	double until = deadline_now_s() + budget_s / zerto_client_time_scale(r->zc) +
	               (double)zerto_client_request_ms(r->zc) / 1000.0;

	*reason = NULL;
	for (;;) {
		struct zerto_task t;
		struct zerto_err e = {0};

		if (zerto_get_task(r->zc, task_id, &t, &e) == 0) {
			*state = t.state;
			if (zerto_task_terminal(t.state)) {
				*reason = t.reason;
				return 0;
			}
			zerto_task_clear(&t);
		} else if (e.kind != ZERTO_ERR_UNREACHABLE) {
			snprintf(why, whylen, "reading task %s: %s", task_id, e.msg);
			return -1;
		}
		if (deadline_now_s() > until) {
			snprintf(why, whylen, "task %s did not end within %.0f ZVM seconds",
			         task_id, budget_s);
			return -1;
		}
		rec_sleep(r, REC_POLL_S);
	}
}

void rec_hold(struct rec *r, const cJSON *plan, const char *summary)
{
	char *pj = cJSON_PrintUnformatted(plan), q[600];
	struct store_res *res =
	    store_exec(r->db, "SELECT airlock.worker_recover_hold($1, $2, $3::jsonb, $4)", 4,
	               (const char *const[]){r->id, r->env->worker_id, pj, summary});

	if (res == NULL) {
		log_msg(LOG_ERROR, "exec=%s evt=recover.hold_failed error=%s", r->id,
		        log_quote(store_errmsg(r->db), q, sizeof(q)));
		pipeline_let_go_if_gone(r->db, r->it);
		if (!sqlstate_is(store_sqlstate(r->db), SQLSTATE_ILLEGAL_TRANSITION))
			queue_release(r->db, r->it->id, r->env->worker_id, 2000,
			              "the recovery plan could not be recorded");
	} else {
		log_msg(LOG_INFO, "exec=%s evt=recover.held mode=%s", r->id, r->mode);
	}
	store_clear(res);
	cJSON_free(pj);
}
