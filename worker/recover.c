/* recover.c -- planning and carrying out a file-level restore request. */
#include "worker/recover.h"

#include "lib/buf.h"
#include "lib/log.h"
#include "lib/sha256.h"
#include "lib/xalloc.h"
#include "worker/guard.h"
#include "worker/guestfile.h"
#include "zerto/api.h"
#include "zerto/flr.h"
#include "zerto/policy.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Budgets in ZVM seconds (divided by the client's time scale for real
 * waits): a mount takes 5-20 s on a real ZVM, an unmount a few. */
#define MOUNT_BUDGET_S   600.0
#define UNMOUNT_BUDGET_S 300.0
#define POLL_S           2.0
/* A checkpoint named by id (not tag) is looked for this far back. */
#define ID_LOOKBACK_S (24 * 3600)

struct rec {
	const struct pipeline_env *env;
	struct store *db;
	struct queue_item *it;
	char id[24];
	struct zerto_client *zc;
	/* the request */
	cJSON *paths;
	bool keep;
	char *checkpoint;
	cJSON *source_points;
	cJSON *plan;
	char *zvm_id;
};

static void rec_clear(struct rec *r)
{
	zerto_client_free(r->zc);
	cJSON_Delete(r->paths);
	cJSON_Delete(r->source_points);
	cJSON_Delete(r->plan);
	free(r->checkpoint);
	free(r->zvm_id);
}

bool recover_is(struct store *db, const struct queue_item *it)
{
	char id[24];
	struct store_res *res;
	bool yes;

	snprintf(id, sizeof(id), "%lld", (long long)it->id);
	res = store_exec(db, "SELECT kind = 'recover' FROM airlock.executions WHERE id = $1", 1,
	                 (const char *const[]){id});
	yes = res != NULL && store_nrows(res) == 1 && store_get(res, 0, 0)[0] == 't';
	store_clear(res);
	return yes;
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void refuse(struct rec *r, const char *reason, const cJSON *detail)
{
	char q[600];
	char *d = detail ? cJSON_PrintUnformatted(detail) : NULL;

	log_msg(LOG_INFO, "exec=%s evt=recover.refused reason=%s", r->id,
	        log_quote(reason, q, sizeof(q)));
	if (queue_refuse(r->db, r->it->id, r->env->worker_id, reason, d) < 0) {
		log_msg(LOG_ERROR, "exec=%s evt=refuse_failed error=%s", r->id,
		        log_quote(store_errmsg(r->db), q, sizeof(q)));
		pipeline_let_go_if_gone(r->db, r->it);
	}
	cJSON_free(d);
}

/* Records one step of a running recovery; detail is consumed. */
static void step(struct rec *r, const char *name, cJSON *detail)
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
	log_msg(LOG_INFO, "exec=%s evt=recover.%s", r->id, name);
	cJSON_free(d);
	cJSON_Delete(detail);
}

/* Reads what was asked (and the plan, once made). */
static int load_request(struct rec *r)
{
	struct store_res *res =
	    store_exec(r->db, "SELECT * FROM airlock.worker_recover_request($1, $2)", 2,
	               (const char *const[]){r->id, r->env->worker_id});
	int rc = -1;

	if (res == NULL || store_nrows(res) != 1)
		goto out;
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
	rc = cJSON_IsArray(r->paths) ? 0 : -1;
out:
	store_clear(res);
	return rc;
}

static int make_client(struct rec *r, char *why, size_t whylen)
{
	struct zerto_config zc;
	char err[300];

	if (r->env->cfg->zerto_url == NULL) {
		snprintf(why, whylen,
		         "refused: no Zerto ZVM is configured, so there is no checkpoint to "
		         "recover files from. Nothing was done.");
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
static void zvm_sleep(struct rec *r, double s)
{
	double real = s / zerto_client_time_scale(r->zc);
	long ms = real < 0.05 ? 50 : (long)(real * 1000);
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- planning */

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
static cJSON *candidates(struct rec *r, const struct zerto_vm_row *rows, size_t n,
                         struct zerto_err *e)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *p;

	if (r->source_points != NULL) {
		cJSON_ArrayForEach(p, r->source_points)
		{
			if (str_of(p, "checkpoint_id") == NULL || str_of(p, "vpg_id") == NULL)
				continue;
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "vpg_id", str_of(p, "vpg_id"));
			cJSON_AddStringToObject(c, "vpg_name",
			                        str_of(p, "vpg_name") ? str_of(p, "vpg_name") : "");
			cJSON_AddStringToObject(c, "checkpoint_id", str_of(p, "checkpoint_id"));
			cJSON_AddStringToObject(
			    c, "checkpoint_time",
			    str_of(p, "checkpoint_time") ? str_of(p, "checkpoint_time") : "");
			cJSON_AddStringToObject(c, "tag", str_of(p, "tag") ? str_of(p, "tag") : "");
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

static const struct zerto_vm_row *row_of(const struct zerto_vm_row *rows, size_t n,
                                         const char *vpg_id)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(rows[i].vpg_id, vpg_id) == 0)
			return &rows[i];
	return NULL;
}

static void paths_text(const cJSON *paths, struct buf *b)
{
	const cJSON *p;
	int i = 0;

	cJSON_ArrayForEach(p, paths) buf_printf(b, "%s%s", i++ ? ", " : "", p->valuestring);
}

/* received -> pending_approval with a plan, or refused. */
static void plan(struct rec *r)
{
	struct zerto_vm_row *rows = NULL;
	size_t n = 0;
	struct zerto_err e = {0};
	struct buf ids = BUF_INIT, why = BUF_INIT, sum = BUF_INIT;
	cJSON *cands = NULL, *chosen = NULL, *plan = NULL, *elsewhere = NULL;
	const cJSON *c, *p;
	char msg[1500], *reason = NULL, *pj = NULL;
	const char *slug =
	    strchr(r->it->target, ':') ? strchr(r->it->target, ':') + 1 : r->it->target;
	bool found = false, allowed = false;

	buf_init(&ids, 1024);
	buf_init(&why, 4096);
	buf_init(&sum, 8192);
	cJSON_ArrayForEach(p, r->paths)
	{
		char drive, *rel = NULL;

		if (!cJSON_IsString(p) ||
		    zerto_flr_split_guest_path(p->valuestring, &drive, &rel) < 0) {
			refuse(
			    r,
			    "refused: a path is not an absolute guest file path. Nothing was done.",
			    NULL);
			goto out;
		}
		free(rel);
		if (drive) {
			snprintf(
			    msg, sizeof(msg),
			    "refused: %s is a Windows path; airlock writes restored files into a "
			    "guest through /bin/sh, which a Windows guest does not have. Nothing "
			    "was done.",
			    p->valuestring);
			refuse(r, msg, NULL);
			goto out;
		}
	}
	if (make_client(r, msg, sizeof(msg)) < 0) {
		refuse(r, msg, NULL);
		goto out;
	}
	if (zerto_list_vms(r->zc, r->zvm_id, r->zvm_id ? NULL : slug, &rows, &n, &e) < 0) {
		snprintf(msg, sizeof(msg),
		         "refused: the ZVM could not be asked which VPGs protect %s (%s). Nothing "
		         "was done; ask again when the ZVM answers.",
		         r->it->target, e.msg);
		refuse(r, msg, NULL);
		goto out;
	}
	if (n == 0) {
		snprintf(
		    msg, sizeof(msg),
		    "refused: Zerto does not protect %s from this site, so it has no checkpoint "
		    "to recover files from. Nothing was done.",
		    r->it->target);
		refuse(r, msg, NULL);
		goto out;
	}
	if (zerto_vm_rows_distinct(rows, n, &ids) > 1) {
		snprintf(msg, sizeof(msg),
		         "refused: the name %s matches several Zerto VMs (%s); set the entity's "
		         "zerto_vm_identifier. Nothing was done.",
		         slug, buf_str(&ids));
		refuse(r, msg, NULL);
		goto out;
	}
	cands = candidates(r, rows, n, &e);
	if (cands == NULL) {
		snprintf(msg, sizeof(msg),
		         "refused: the ZVM could not list the checkpoints (%s). Nothing was done.",
		         e.msg);
		refuse(r, msg, NULL);
		goto out;
	}
	elsewhere = cJSON_CreateArray();
	cJSON_ArrayForEach(c, cands)
	{
		const struct zerto_vm_row *row = row_of(rows, n, str_of(c, "vpg_id"));
		cJSON *x;

		if (row == NULL) {
			buf_printf(&why, "%sVPG %s no longer protects the VM", why.len ? "; " : "",
			           str_of(c, "vpg_name"));
			continue;
		}
		if (row->recovers_here && row->flr_enabled && chosen == NULL) {
			chosen = cJSON_Duplicate(c, true);
			cJSON_AddStringToObject(chosen, "recovery_site", row->recovery_site);
			continue;
		}
		x = cJSON_Duplicate(c, true);
		cJSON_AddStringToObject(x, "recovery_site", row->recovery_site);
		cJSON_AddItemToArray(elsewhere, x);
		buf_printf(&why, "%sVPG %s recovers to site %s", why.len ? "; " : "", row->vpg_name,
		           row->recovery_site[0] ? row->recovery_site : row->recovery_site_id);
		if (row->recovers_here && !row->flr_enabled)
			buf_puts(&why,
			         " but the ZVM says file-level restore is not enabled for it");
	}
	if (cJSON_GetArraySize(cands) == 0) {
		snprintf(msg, sizeof(msg),
		         "refused: checkpoint %s is not in the journal of any VPG protecting %s "
		         "(it may have aged out). Nothing was done.",
		         r->checkpoint ? r->checkpoint : "(of the execution)", r->it->target);
		refuse(r, msg, NULL);
		goto out;
	}
	if (chosen == NULL) {
		snprintf(
		    msg, sizeof(msg),
		    "refused: file-level restore runs at a VPG's recovery site, and no VPG "
		    "holding this checkpoint recovers at this ZVM's site: %s. Recover it from "
		    "that site's ZVM (for a cloud site, its Zerto Cloud Appliance). Nothing was "
		    "done.",
		    buf_str(&why));
		refuse(r, msg, elsewhere);
		goto out;
	}
	int64_t at = 0;
	zerto_time_parse(str_of(chosen, "checkpoint_time"), &at);
	if (zerto_flr_can_mount(r->zc, rows[0].vm_id, str_of(chosen, "vpg_id"),
	                        str_of(chosen, "checkpoint_id"), at, &found, &allowed, &reason,
	                        &e) < 0 ||
	    !found || !allowed) {
		snprintf(msg, sizeof(msg),
		         "refused: checkpoint %s of VPG %s cannot be mounted now: %s. "
		         "Nothing was done.",
		         str_of(chosen, "checkpoint_id"), str_of(chosen, "vpg_name"),
		         e.kind != ZERTO_ERR_NONE ? e.msg
		         : !found                 ? "the ZVM no longer lists it as a point in time"
		         : reason && reason[0]    ? reason
		                                  : "the ZVM does not allow it");
		refuse(r, msg, chosen);
		goto out;
	}
	plan = cJSON_CreateObject();
	cJSON_AddStringToObject(plan, "vm_id", rows[0].vm_id);
	cJSON_AddItemToObject(plan, "point", cJSON_Duplicate(chosen, true));
	cJSON_AddItemToObject(plan, "paths", cJSON_Duplicate(r->paths, true));
	cJSON_AddBoolToObject(plan, "keep_replaced", r->keep);
	if (r->keep) {
		char suf[40];
		snprintf(suf, sizeof(suf), ".airlock-%s", r->id);
		cJSON_AddStringToObject(plan, "kept_suffix", suf);
	}
	cJSON_AddItemToObject(plan, "not_used", cJSON_Duplicate(elsewhere, true));
	buf_printf(&sum, "restore ");
	paths_text(r->paths, &sum);
	buf_printf(
	    &sum,
	    " on %s from checkpoint %s taken %s%s%s%s, VPG %s, recovering at this site (%s). ",
	    r->it->target, str_of(chosen, "checkpoint_id"), str_of(chosen, "checkpoint_time"),
	    str_of(chosen, "tag")[0] ? " (tag \"" : "", str_of(chosen, "tag"),
	    str_of(chosen, "tag")[0] ? "\")" : "", str_of(chosen, "vpg_name"),
	    str_of(chosen, "recovery_site"));
	if (r->keep)
		buf_printf(&sum, "Each current file is kept beside it as <path>.airlock-%s; ",
		           r->id);
	else
		buf_puts(&sum, "Current files are OVERWRITTEN and not kept; ");
	buf_puts(&sum, "the restored file gets the current file's mode and owner (a file that no "
	               "longer exists is recreated with mode 0600, owned like its directory). "
	               "The checkpoint is crash-consistent, not application-quiesced.");
	pj = cJSON_PrintUnformatted(plan);
	struct store_res *res =
	    store_exec(r->db, "SELECT airlock.worker_recover_hold($1, $2, $3::jsonb, $4)", 4,
	               (const char *const[]){r->id, r->env->worker_id, pj, buf_str(&sum)});
	if (res == NULL) {
		char q[600];
		log_msg(LOG_ERROR, "exec=%s evt=recover.hold_failed error=%s", r->id,
		        log_quote(store_errmsg(r->db), q, sizeof(q)));
		pipeline_let_go_if_gone(r->db, r->it);
		if (strcmp(store_sqlstate(r->db), "AL005") != 0)
			queue_release(r->db, r->it->id, r->env->worker_id, 2000,
			              "the recovery plan could not be recorded");
	} else {
		log_msg(LOG_INFO, "exec=%s evt=recover.held vpg=%s checkpoint=%s", r->id,
		        str_of(chosen, "vpg_name"), str_of(chosen, "checkpoint_id"));
	}
	store_clear(res);
out:
	zerto_vm_rows_free(rows, n);
	buf_free(&ids);
	buf_free(&why);
	buf_free(&sum);
	cJSON_Delete(cands);
	cJSON_Delete(chosen);
	cJSON_Delete(plan);
	cJSON_Delete(elsewhere);
	cJSON_free(pj);
	free(reason);
}

/* ---------------------------------------------------------------- running */

/* Waits for the mount: 0 mounted, -1 not (why says so). */
static int wait_mount(struct rec *r, const char *sid, char *why, size_t whylen)
{
	double until = mono_s() + MOUNT_BUDGET_S / zerto_client_time_scale(r->zc) +
	               (double)zerto_client_request_ms(r->zc) / 1000.0;
	char last[64] = "(never read)";

	for (;;) {
		struct zerto_flr_session s;
		struct zerto_err e = {0};

		if (zerto_flr_get(r->zc, sid, &s, &e) == 0) {
			snprintf(last, sizeof(last), "%s", s.status);
			bool ok = strcasecmp(s.status, "MountCompletedSuccessfully") == 0 ||
			          strcasecmp(s.status, "MountReady") == 0;
			bool failed = strcasecmp(s.status, "MountFailed") == 0;
			zerto_flr_session_clear(&s);
			if (ok)
				return 0;
			if (failed) {
				snprintf(why, whylen,
				         "the ZVM reports the mount failed (MountFailed)");
				return -1;
			}
		} else if (e.kind != ZERTO_ERR_UNREACHABLE) {
			snprintf(why, whylen, "reading the session: %s", e.msg);
			return -1;
		}
		if (mono_s() > until) {
			snprintf(
			    why, whylen,
			    "the mount did not complete within %.0f ZVM seconds (last status %s)",
			    MOUNT_BUDGET_S, last);
			return -1;
		}
		zvm_sleep(r, POLL_S);
	}
}

/* Unmounts and waits for the unmount task; fills the report's "unmount". */
static bool unmount(struct rec *r, const char *sid, cJSON *report)
{
	struct zerto_err e = {0};
	char *task = NULL;
	cJSON *u = cJSON_AddObjectToObject(report, "unmount");
	bool ok = false;
	char why[700] = "";

	cJSON_AddStringToObject(u, "session", sid);
	if (zerto_flr_unmount(r->zc, sid, &task, &e) < 0) {
		snprintf(why, sizeof(why), "the unmount was refused: %s", e.msg);
		goto out;
	}
	cJSON_AddStringToObject(u, "task_id", task);
	if (task[0] == '\0') {
		ok = true; /* the ZVM gave no task: the DELETE itself was the answer */
		goto out;
	}
	double until = mono_s() + UNMOUNT_BUDGET_S / zerto_client_time_scale(r->zc) +
	               (double)zerto_client_request_ms(r->zc) / 1000.0;
	for (;;) {
		struct zerto_task t;
		struct zerto_err te = {0};

		if (zerto_get_task(r->zc, task, &t, &te) == 0) {
			cJSON_DeleteItemFromObject(u, "task_state");
			cJSON_AddNumberToObject(u, "task_state", t.state);
			if (zerto_task_terminal(t.state)) {
				ok = t.state == ZERTO_TASK_COMPLETED;
				char sn[32];
				if (!ok)
					snprintf(why, sizeof(why), "the unmount task ended %s: %s",
					         zerto_task_state_name(t.state, sn, sizeof(sn)),
					         t.reason[0] ? t.reason : "no reason given");
				zerto_task_clear(&t);
				break;
			}
			zerto_task_clear(&t);
		} else if (te.kind != ZERTO_ERR_UNREACHABLE) {
			snprintf(why, sizeof(why), "reading the unmount task: %s", te.msg);
			break;
		}
		if (mono_s() > until) {
			snprintf(why, sizeof(why),
			         "the unmount task did not end within %.0f ZVM seconds",
			         UNMOUNT_BUDGET_S);
			break;
		}
		zvm_sleep(r, POLL_S);
	}
out:
	cJSON_AddBoolToObject(u, "ok", ok);
	if (!ok) {
		char msg[1000];
		snprintf(msg, sizeof(msg),
		         "%s; FLR session %s may still be mounted: list it with `airlock flr list` "
		         "and end it with `airlock flr end %s` before recovering this VM again",
		         why, sid, sid);
		cJSON_AddStringToObject(u, "error", msg);
	}
	step(r, "flr.unmount", cJSON_Duplicate(u, true));
	free(task);
	return ok;
}

/* Downloads one found item into a fresh unlinked temporary file and writes
 * it into the guest.  The file's report entry gets the outcome. */
static int restore_one(struct rec *r, const char *sid, const char *guest,
                       const struct zerto_flr_item *item, cJSON *f)
{
	struct zerto_err e = {0};
	char *url = NULL, tmpl[] = "/tmp/airlock-recover.XXXXXX", sha[SHA256_HEX_LEN + 1];
	long long cap = (long long)r->env->cfg->recover_max_file_bytes, size = 0;
	unsigned char *map = NULL;
	int fd = -1, rc = -1;
	char msg[800];

	if (item->size > cap) {
		snprintf(msg, sizeof(msg),
		         "the file is %lld bytes in the checkpoint, over the %lld-byte cap "
		         "(recover.max_file_bytes); not downloaded",
		         item->size, cap);
		goto fail;
	}
	if (!item->downloadable) {
		snprintf(msg, sizeof(msg), "the ZVM will not download it: %s",
		         item->why_not[0] ? item->why_not : "no reason given");
		goto fail;
	}
	if (zerto_flr_download_url(r->zc, sid, item->path, &url, &e) < 0) {
		snprintf(msg, sizeof(msg), "asking for the download: %s", e.msg);
		goto fail;
	}
	fd = mkstemp(tmpl);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "cannot make a temporary file: %s", strerror(errno));
		goto fail;
	}
	unlink(tmpl);
	if (zerto_client_download(r->zc, url, cap, fd, &size, &e) < 0) {
		snprintf(msg, sizeof(msg), "downloading: %s", e.msg);
		goto fail;
	}
	if (size > 0) {
		map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			map = NULL;
			snprintf(msg, sizeof(msg), "reading the download: %s", strerror(errno));
			goto fail;
		}
	}
	sha256_hex(map ? (const void *)map : "", (size_t)size, sha);
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "path", guest);
	cJSON_AddNumberToObject(d, "bytes", (double)size);
	cJSON_AddStringToObject(d, "sha256", sha);
	step(r, "flr.downloaded", d);
	cJSON_AddNumberToObject(f, "bytes", (double)size);
	cJSON_AddStringToObject(f, "sha256", sha);

	struct guestfile_target g = {
	    .transport = targets_transport(r->env->targets),
	    .node = {.name = strchr(r->it->node, ':') ? strchr(r->it->node, ':') + 1 : r->it->node,
	             .address = r->it->address,
	             .port = r->it->port,
	             .user = r->it->ssh_user,
	             .host_key_sha256 = r->it->host_key_fingerprint},
	    .vmid = r->it->vmid,
	    .cancel = r->env->cancel,
	    .timeout_ms = r->env->cfg->command_timeout_s * 1000};
	struct guestfile_result gr;
	char tmp_suffix[48], keep_suffix[40];
	snprintf(tmp_suffix, sizeof(tmp_suffix), ".airlock-%s.part", r->id);
	snprintf(keep_suffix, sizeof(keep_suffix), ".airlock-%s", r->id);
	if (guestfile_put(&g, guest, map, (size_t)size, sha, tmp_suffix,
	                  r->keep ? keep_suffix : NULL, &gr) < 0) {
		snprintf(msg, sizeof(msg), "writing it into the guest: %s", gr.error);
		goto fail;
	}
	cJSON_AddBoolToObject(f, "restored", true);
	cJSON_AddBoolToObject(f, "replaced_existing", gr.existed);
	if (gr.kept_as[0])
		cJSON_AddStringToObject(f, "kept_as", gr.kept_as);
	cJSON_AddStringToObject(f, "mode", gr.mode);
	cJSON_AddNumberToObject(f, "uid", (double)gr.uid);
	cJSON_AddNumberToObject(f, "gid", (double)gr.gid);
	step(r, "recover.written", cJSON_Duplicate(f, true));
	rc = 0;
	goto out;
fail:
	cJSON_AddBoolToObject(f, "restored", false);
	cJSON_AddStringToObject(f, "error", msg);
	step(r, "recover.file_failed", cJSON_Duplicate(f, true));
out:
	if (map != NULL)
		munmap(map, (size_t)size);
	if (fd >= 0)
		close(fd);
	free(url);
	return rc;
}

static void finish(struct rec *r, const char *state, cJSON *report, const char *error)
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
		if (strcmp(store_sqlstate(r->db), "AL005") == 0)
			break;
		sleep(1);
	}
	log_msg(LOG_INFO, "exec=%s evt=recover.done state=%s", r->id, state);
	cJSON_free(rj);
}

/* approved -> running -> succeeded | failed, or refused before it starts. */
static void run(struct rec *r)
{
	const cJSON *point = cJSON_GetObjectItemCaseSensitive(r->plan, "point");
	const char *vm_id = str_of(r->plan, "vm_id"), *vpg = str_of(point, "vpg_id"),
	           *cp = str_of(point, "checkpoint_id");
	struct zerto_flr_session *ss = NULL;
	size_t ns = 0;
	struct zerto_err e = {0};
	char msg[1500], *sid = NULL, *reason = NULL;
	cJSON *report = NULL;
	bool found = false, allowed = false, all_ok = true;
	int64_t at = 0;
	struct store_res *res = NULL;

	if (vm_id == NULL || vpg == NULL || cp == NULL) {
		refuse(r, "refused: the approved recovery has no plan. Nothing was done.", NULL);
		return;
	}
	if (make_client(r, msg, sizeof(msg)) < 0) {
		refuse(r, msg, NULL);
		return;
	}
	/* A session left mounted blocks the next one: say which, do not start. */
	if (zerto_flr_list(r->zc, vm_id, &ss, &ns, &e) < 0) {
		snprintf(msg, sizeof(msg),
		         "refused: the ZVM could not list FLR sessions (%s). Nothing was done.",
		         e.msg);
		refuse(r, msg, NULL);
		goto out;
	}
	if (ns > 0) {
		char mt[40];
		snprintf(
		    msg, sizeof(msg),
		    "refused: FLR session %s (%s, VPG %s, checkpoint %s, mounted %s) is still up "
		    "for this VM, and a stuck session blocks the next restore. End it first "
		    "(airlock flr end %s), then ask again. Nothing was done.",
		    ss[0].id, ss[0].status, ss[0].vpg_id, ss[0].checkpoint_id,
		    ss[0].mount_ms ? zerto_time_format(ss[0].mount_ms, mt, sizeof(mt)) : "?",
		    ss[0].id);
		refuse(r, msg, NULL);
		goto out;
	}
	zerto_time_parse(str_of(point, "checkpoint_time"), &at);
	if (zerto_flr_can_mount(r->zc, vm_id, vpg, cp, at, &found, &allowed, &reason, &e) < 0 ||
	    !found || !allowed) {
		snprintf(
		    msg, sizeof(msg),
		    "refused: checkpoint %s of VPG %s cannot be mounted now: %s. Nothing was done.",
		    cp, str_of(point, "vpg_name"),
		    e.kind != ZERTO_ERR_NONE ? e.msg
		    : !found                 ? "the ZVM no longer lists it as a point in time"
		    : reason && reason[0]    ? reason
		                             : "the ZVM does not allow it");
		refuse(r, msg, NULL);
		goto out;
	}
	res = store_exec(r->db, "SELECT airlock.worker_recover_start($1, $2)", 2,
	                 (const char *const[]){r->id, r->env->worker_id});
	if (res == NULL || strcmp(store_get(res, 0, 0), "running") != 0) {
		if (res == NULL) {
			log_msg(LOG_ERROR, "exec=%s evt=recover.start_failed error=%s", r->id,
			        store_errmsg(r->db));
			pipeline_let_go_if_gone(r->db, r->it);
		}
		goto out;
	}
	report = cJSON_CreateObject();
	cJSON_AddItemToObject(report, "point", cJSON_Duplicate(point, true));
	cJSON *files = cJSON_AddArrayToObject(report, "files");
	if (zerto_flr_mount(r->zc, vpg, vm_id, cp, &sid, &e) < 0) {
		snprintf(msg, sizeof(msg), "the ZVM refused the mount: %s; nothing was restored",
		         e.msg);
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "error", e.msg);
		step(r, "flr.mount_refused", d);
		finish(r, "failed", report, msg);
		goto out;
	}
	cJSON_AddStringToObject(report, "session", sid);
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "session", sid);
	cJSON_AddStringToObject(d, "vpg", str_of(point, "vpg_name"));
	cJSON_AddStringToObject(d, "checkpoint", cp);
	step(r, "flr.mount_requested", d);
	if (wait_mount(r, sid, msg, sizeof(msg)) < 0) {
		all_ok = false;
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "error", msg);
		step(r, "flr.mount_failed", f);
		cJSON_AddStringToObject(report, "mount_error", msg);
	} else {
		step(r, "flr.mounted", cJSON_CreateObject());
		const cJSON *p;
		cJSON_ArrayForEach(p, r->paths)
		{
			struct zerto_flr_item *item = NULL;
			cJSON *f = cJSON_CreateObject();

			cJSON_AddStringToObject(f, "path", p->valuestring);
			cJSON_AddItemToArray(files, f);
			if (zerto_flr_find(r->zc, sid, p->valuestring, &item, &e) < 0) {
				all_ok = false;
				cJSON_AddBoolToObject(f, "restored", false);
				cJSON_AddStringToObject(f, "error", e.msg);
				step(r, "recover.file_failed", cJSON_Duplicate(f, true));
				continue;
			}
			cJSON_AddStringToObject(f, "flr_path", item->path);
			cJSON *fd = cJSON_CreateObject();
			cJSON_AddStringToObject(fd, "path", p->valuestring);
			cJSON_AddStringToObject(fd, "flr_path", item->path);
			cJSON_AddNumberToObject(fd, "size", (double)item->size);
			step(r, "flr.found", fd);
			if (restore_one(r, sid, p->valuestring, item, f) < 0)
				all_ok = false;
			zerto_flr_items_free(item, 1);
		}
	}
	bool unmounted = unmount(r, sid, report);
	if (all_ok && unmounted) {
		finish(r, "succeeded", report, NULL);
	} else {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(report, "unmount");
		snprintf(msg, sizeof(msg), "%s%s%s",
		         all_ok ? "" : "not every file was restored (see the report)",
		         !all_ok && !unmounted ? "; " : "", unmounted ? "" : str_of(u, "error"));
		finish(r, "failed", report, msg);
	}
out:
	store_clear(res);
	zerto_flr_sessions_free(ss, ns);
	cJSON_Delete(report);
	free(sid);
	free(reason);
}

void recover_process(const struct pipeline_env *env, struct store *db, struct queue_item *it)
{
	struct rec r = {.env = env, .db = db, .it = it};

	snprintf(r.id, sizeof(r.id), "%lld", (long long)it->id);
	if (load_request(&r) < 0) {
		char q[600];
		log_msg(LOG_ERROR, "exec=%s evt=recover.unreadable error=%s", r.id,
		        log_quote(store_errmsg(db), q, sizeof(q)));
		pipeline_let_go_if_gone(db, it);
		if (strcmp(store_sqlstate(db), "AL005") != 0)
			queue_release(db, it->id, env->worker_id, 5000, NULL);
		goto out;
	}
	if (strcmp(it->state, "received") == 0)
		plan(&r);
	else if (strcmp(it->state, "approved") == 0)
		run(&r);
	else
		refuse(&r,
		       "refused: a recovery runs only after an operator approved it. Nothing "
		       "was done.",
		       NULL);
out:
	rec_clear(&r);
}
