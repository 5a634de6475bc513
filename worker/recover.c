/* recover.c -- planning and carrying out a file-level restore request. */
#include "worker/recover.h"

#include "lib/buf.h"
#include "lib/deadline.h"
#include "lib/execstate.h"
#include "lib/log.h"
#include "lib/sqlstate.h"
#include "lib/sha256.h"
#include "lib/xalloc.h"
#include "worker/guard.h"
#include "worker/guestfile.h"
#include "worker/inspect.h"
#include "worker/recreq.h"
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

/* ---------------------------------------------------------------- planning */

static void paths_text(const cJSON *paths, struct buf *b)
{
	const cJSON *p;
	int i = 0;

	cJSON_ArrayForEach(p, paths) buf_printf(b, "%s%s", i++ ? ", " : "", p->valuestring);
}

/* Every path must be an absolute Linux path: files go back into the guest
 * through bash (transport/shell.h).  0, or -1 after refusing the row. */
static int paths_usable(struct rec *r)
{
	const cJSON *p;
	char msg[1500];

	cJSON_ArrayForEach(p, r->paths)
	{
		char drive, *rel = NULL;

		if (!cJSON_IsString(p) ||
		    zerto_flr_split_guest_path(p->valuestring, &drive, &rel) < 0) {
			rec_refuse(
			    r,
			    "refused: a path is not an absolute guest file path. Nothing was done.",
			    NULL);
			return -1;
		}
		free(rel);
		if (drive) {
			snprintf(
			    msg, sizeof(msg),
			    "refused: %s is a Windows path; airlock writes restored files into a "
			    "guest through bash, which a Windows guest does not have. Nothing "
			    "was done.",
			    p->valuestring);
			rec_refuse(r, msg, NULL);
			return -1;
		}
	}
	return 0;
}

/* The first candidate whose VPG recovers at this site (FLR runs only there)
 * with its recovery_site added, the caller's; the others go to elsewhere.
 * NULL after refusing the row (no candidate, or none recovers here: the
 * refusal names each VPG and its site). */
static cJSON *pick_local(struct rec *r, const struct zerto_vm_row *rows, size_t n,
                         const cJSON *cands, cJSON *elsewhere)
{
	struct buf why = BUF_INIT;
	cJSON *chosen = NULL;
	const cJSON *c;
	char msg[1500];

	buf_init(&why, 4096);
	cJSON_ArrayForEach(c, cands)
	{
		const struct zerto_vm_row *row = rec_row_of(rows, n, rec_str(c, "vpg_id"));
		cJSON *x;

		if (row == NULL) {
			buf_printf(&why, "%sVPG %s no longer protects the VM", why.len ? "; " : "",
			           rec_str(c, "vpg_name"));
			continue;
		}
		x = cJSON_Duplicate(c, true);
		cJSON_AddStringToObject(x, "recovery_site", row->recovery_site);
		if (row->recovers_here && row->flr_enabled && chosen == NULL) {
			chosen = x;
			continue;
		}
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
		rec_refuse(r, msg, NULL);
	} else if (chosen == NULL) {
		snprintf(
		    msg, sizeof(msg),
		    "refused: file-level restore runs at a VPG's recovery site, and no VPG "
		    "holding this checkpoint recovers at this ZVM's site: %s. Recover it from "
		    "that site's ZVM (for a cloud site, its Zerto Cloud Appliance). Nothing was "
		    "done.",
		    buf_str(&why));
		rec_refuse(r, msg, elsewhere);
	}
	buf_free(&why);
	return chosen;
}

/* Whether the ZVM would mount point now (pointsInTime CanMount: no running
 * test, clone, live failover, EJC or other session).  0, or -1 after refusing
 * the row with the ZVM's reason. */
static int mountable(struct rec *r, const char *vm_id, const cJSON *point)
{
	struct zerto_err e = {0};
	bool found = false, allowed = false;
	char msg[1500], *reason = NULL;
	int64_t at = 0;
	int rc = 0;

	zerto_time_parse(rec_str(point, "checkpoint_time"), &at);
	if (zerto_flr_can_mount(r->zc, vm_id, rec_str(point, "vpg_id"),
	                        rec_str(point, "checkpoint_id"), at, &found, &allowed, &reason,
	                        &e) < 0 ||
	    !found || !allowed) {
		snprintf(msg, sizeof(msg),
		         "refused: checkpoint %s of VPG %s cannot be mounted now: %s. "
		         "Nothing was done.",
		         rec_str(point, "checkpoint_id"), rec_str(point, "vpg_name"),
		         e.kind != ZERTO_ERR_NONE ? e.msg
		         : !found                 ? "the ZVM no longer lists it as a point in time"
		         : reason && reason[0]    ? reason
		                                  : "the ZVM does not allow it");
		rec_refuse(r, msg, point);
		rc = -1;
	}
	free(reason);
	return rc;
}

/* Holds the row with the plan and what the operator reads. */
static void hold_plan(struct rec *r, const char *vm_id, const cJSON *chosen, const cJSON *elsewhere)
{
	cJSON *plan = cJSON_CreateObject();
	struct buf sum = BUF_INIT;
	const char *tag = rec_str(chosen, "tag") ? rec_str(chosen, "tag") : "";

	buf_init(&sum, 8192);
	cJSON_AddStringToObject(plan, "vm_id", vm_id);
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
	    r->it->target, rec_str(chosen, "checkpoint_id"), rec_str(chosen, "checkpoint_time"),
	    tag[0] ? " (tag \"" : "", tag, tag[0] ? "\")" : "", rec_str(chosen, "vpg_name"),
	    rec_str(chosen, "recovery_site"));
	if (r->keep)
		buf_printf(&sum, "Each current file is kept beside it as <path>.airlock-%s; ",
		           r->id);
	else
		buf_puts(&sum, "Current files are OVERWRITTEN and not kept; ");
	buf_puts(&sum, "the restored file gets the current file's mode and owner (a file that no "
	               "longer exists is recreated with mode 0600, owned like its directory). "
	               "The checkpoint is crash-consistent, not application-quiesced.");
	rec_hold(r, plan, buf_str(&sum));
	cJSON_Delete(plan);
	buf_free(&sum);
}

/* received -> pending_approval with a plan, or refused. */
static void plan(struct rec *r)
{
	struct zerto_vm_row *rows = NULL;
	size_t n = 0;
	struct zerto_err e = {0};
	cJSON *cands = NULL, *chosen = NULL, *elsewhere = cJSON_CreateArray();
	char msg[1500];

	if (paths_usable(r) < 0)
		goto out;
	if (rec_client(r, msg, sizeof(msg)) < 0) {
		rec_refuse(r, msg, NULL);
		goto out;
	}
	if (rec_find_vm(r, &rows, &n) < 0)
		goto out;
	cands = rec_candidates(r, rows, n, &e);
	if (cands == NULL) {
		snprintf(msg, sizeof(msg),
		         "refused: the ZVM could not list the checkpoints (%s). Nothing was done.",
		         e.msg);
		rec_refuse(r, msg, NULL);
		goto out;
	}
	chosen = pick_local(r, rows, n, cands, elsewhere);
	if (chosen == NULL || mountable(r, rows[0].vm_id, chosen) < 0)
		goto out;
	hold_plan(r, rows[0].vm_id, chosen, elsewhere);
out:
	zerto_vm_rows_free(rows, n);
	cJSON_Delete(cands);
	cJSON_Delete(chosen);
	cJSON_Delete(elsewhere);
}

/* ---------------------------------------------------------------- running */

/* Waits for the mount: 0 mounted, -1 not (why says so). */
static int wait_mount(struct rec *r, const char *sid, char *why, size_t whylen)
{
	double until = deadline_now_s() + MOUNT_BUDGET_S / zerto_client_time_scale(r->zc) +
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
		if (deadline_now_s() > until) {
			snprintf(
			    why, whylen,
			    "the mount did not complete within %.0f ZVM seconds (last status %s)",
			    MOUNT_BUDGET_S, last);
			return -1;
		}
		rec_sleep(r, REC_POLL_S);
	}
}

/* How many looks, one every REC_POLL_S ZVM seconds, for the session of a
 * mount request whose answer did not come. */
#define MOUNT_LOOKUPS 10

/* The mount request got no answer (a timeout, a 5xx): the ZVM may have
 * mounted all the same.  No session was up for the VM before the request
 * (run() refuses otherwise), so one for this VPG and checkpoint now is the
 * request's: its id (the caller's to free), or NULL when none is listed
 * after MOUNT_LOOKUPS looks (why says what was seen). */
static char *mount_answered_late(struct rec *r, const char *vm_id, const char *vpg, const char *cp,
                                 char *why, size_t whylen)
{
	snprintf(why, whylen, "no FLR session listed for the VM");
	for (int look = 0; look < MOUNT_LOOKUPS; look++) {
		struct zerto_flr_session *ss = NULL;
		size_t ns = 0;
		struct zerto_err e = {0};
		char *sid = NULL;

		if (look > 0)
			rec_sleep(r, REC_POLL_S);
		if (zerto_flr_list(r->zc, vm_id, &ss, &ns, &e) < 0) {
			snprintf(why, whylen, "listing the VM's FLR sessions failed: %s", e.msg);
			continue;
		}
		for (size_t i = 0; i < ns && sid == NULL; i++)
			if ((ss[i].vpg_id[0] == '\0' || strcmp(ss[i].vpg_id, vpg) == 0) &&
			    (ss[i].checkpoint_id[0] == '\0' ||
			     strcmp(ss[i].checkpoint_id, cp) == 0))
				sid = xstrdup(ss[i].id);
		zerto_flr_sessions_free(ss, ns);
		if (sid != NULL)
			return sid;
	}
	return NULL;
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
	int state = -1;
	char *reason = NULL, sn[32];
	if (rec_wait_task(r, task, UNMOUNT_BUDGET_S, &state, &reason, why, sizeof(why)) == 0) {
		ok = state == ZERTO_TASK_COMPLETED;
		if (!ok)
			snprintf(why, sizeof(why), "the unmount task ended %s: %s",
			         zerto_task_state_name(state, sn, sizeof(sn)),
			         reason && reason[0] ? reason : "no reason given");
	}
	cJSON_AddNumberToObject(u, "task_state", state);
	free(reason);
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
	rec_step(r, "flr.unmount", cJSON_Duplicate(u, true));
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

	if (item->browsable) {
		snprintf(msg, sizeof(msg),
		         "it is a %s in the checkpoint, not a file; name the files in it",
		         item->type[0] ? item->type : "folder");
		goto fail;
	}
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
	rec_step(r, "flr.downloaded", d);
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
	rec_step(r, "recover.written", cJSON_Duplicate(f, true));
	rc = 0;
	goto out;
fail:
	cJSON_AddBoolToObject(f, "restored", false);
	cJSON_AddStringToObject(f, "error", msg);
	rec_step(r, "recover.file_failed", cJSON_Duplicate(f, true));
out:
	if (map != NULL)
		munmap(map, (size_t)size);
	if (fd >= 0)
		close(fd);
	free(url);
	return rc;
}

/* approved -> running -> succeeded | failed, or refused before it starts. */
static void run(struct rec *r)
{
	const cJSON *point = cJSON_GetObjectItemCaseSensitive(r->plan, "point");
	const char *vm_id = rec_str(r->plan, "vm_id"), *vpg = rec_str(point, "vpg_id"),
	           *cp = rec_str(point, "checkpoint_id");
	struct zerto_flr_session *ss = NULL;
	size_t ns = 0;
	struct zerto_err e = {0};
	char msg[1500], *sid = NULL;
	cJSON *report = NULL;
	bool all_ok = true;
	struct store_res *res = NULL;

	if (vm_id == NULL || vpg == NULL || cp == NULL) {
		rec_refuse(r, "refused: the approved recovery has no plan. Nothing was done.",
		           NULL);
		return;
	}
	if (rec_client(r, msg, sizeof(msg)) < 0) {
		rec_refuse(r, msg, NULL);
		return;
	}
	/* A session left mounted blocks the next one: say which, do not start. */
	if (zerto_flr_list(r->zc, vm_id, &ss, &ns, &e) < 0) {
		snprintf(msg, sizeof(msg),
		         "refused: the ZVM could not list FLR sessions (%s). Nothing was done.",
		         e.msg);
		rec_refuse(r, msg, NULL);
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
		rec_refuse(r, msg, NULL);
		goto out;
	}
	if (mountable(r, vm_id, point) < 0)
		goto out;
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
	if (zerto_flr_mount(r->zc, vpg, vm_id, cp, &sid, &e) < 0 &&
	    (e.kind == ZERTO_ERR_UNREACHABLE ||
	     (e.kind == ZERTO_ERR_HTTP && (e.http_status >= 500 || e.http_status == 429)))) {
		/* No answer is not a refusal: what the ZVM did is looked up
		 * before the row says anything. */
		char seen[600];
		sid = mount_answered_late(r, vm_id, vpg, cp, seen, sizeof(seen));
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "error", e.msg);
		if (sid != NULL)
			cJSON_AddStringToObject(d, "session", sid);
		else
			cJSON_AddStringToObject(d, "looked_up", seen);
		rec_step(r, sid ? "flr.mount_found" : "flr.mount_unanswered", d);
		if (sid == NULL) {
			snprintf(
			    msg, sizeof(msg),
			    "the ZVM did not answer the mount request (%s), and after %d looks "
			    "it lists no session for this VM (%s); nothing was restored. If a "
			    "session appears later, end it (airlock flr list; airlock flr end "
			    "SESSION_ID) before recovering this VM again",
			    e.msg, MOUNT_LOOKUPS, seen);
			rec_finish(r, "failed", report, msg);
			goto out;
		}
	} else if (sid == NULL) {
		snprintf(msg, sizeof(msg), "the ZVM refused the mount: %s; nothing was restored",
		         e.msg);
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "error", e.msg);
		rec_step(r, "flr.mount_refused", d);
		rec_finish(r, "failed", report, msg);
		goto out;
	}
	cJSON_AddStringToObject(report, "session", sid);
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "session", sid);
	cJSON_AddStringToObject(d, "vpg", rec_str(point, "vpg_name"));
	cJSON_AddStringToObject(d, "checkpoint", cp);
	rec_step(r, "flr.mount_requested", d);
	if (wait_mount(r, sid, msg, sizeof(msg)) < 0) {
		all_ok = false;
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "error", msg);
		rec_step(r, "flr.mount_failed", f);
		cJSON_AddStringToObject(report, "mount_error", msg);
	} else {
		rec_step(r, "flr.mounted", cJSON_CreateObject());
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
				rec_step(r, "recover.file_failed", cJSON_Duplicate(f, true));
				continue;
			}
			cJSON_AddStringToObject(f, "flr_path", item->path);
			cJSON *fd = cJSON_CreateObject();
			cJSON_AddStringToObject(fd, "path", p->valuestring);
			cJSON_AddStringToObject(fd, "flr_path", item->path);
			cJSON_AddNumberToObject(fd, "size", (double)item->size);
			rec_step(r, "flr.found", fd);
			if (restore_one(r, sid, p->valuestring, item, f) < 0)
				all_ok = false;
			zerto_flr_items_free(item, 1);
		}
	}
	bool unmounted = unmount(r, sid, report);
	if (all_ok && unmounted) {
		rec_finish(r, "succeeded", report, NULL);
	} else {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(report, "unmount");
		snprintf(msg, sizeof(msg), "%s%s%s",
		         all_ok ? "" : "not every file was restored (see the report)",
		         !all_ok && !unmounted ? "; " : "", unmounted ? "" : rec_str(u, "error"));
		rec_finish(r, "failed", report, msg);
	}
out:
	store_clear(res);
	zerto_flr_sessions_free(ss, ns);
	cJSON_Delete(report);
	free(sid);
}

void recover_process(const struct pipeline_env *env, struct store *db, struct queue_item *it)
{
	struct rec r = {.env = env, .db = db, .it = it};

	snprintf(r.id, sizeof(r.id), "%lld", (long long)it->id);
	if (rec_load(&r) < 0) {
		char q[600];
		log_msg(LOG_ERROR, "exec=%s evt=recover.unreadable error=%s", r.id,
		        log_quote(store_errmsg(db), q, sizeof(q)));
		pipeline_let_go_if_gone(db, it);
		if (!sqlstate_is(store_sqlstate(db), SQLSTATE_ILLEGAL_TRANSITION))
			queue_release(db, it->id, env->worker_id, 5000, NULL);
		goto out;
	}
	bool files = strcmp(r.mode, "files") == 0;
	enum exec_state claimed = EXEC_REFUSED;
	exec_state_parse(it->state, &claimed);
	if (claimed == EXEC_RECEIVED)
		files ? plan(&r) : inspect_plan(&r);
	else if (claimed == EXEC_APPROVED)
		files ? run(&r) : inspect_run(&r);
	else
		rec_refuse(&r,
		           "refused: a recovery runs only after an operator approved it. Nothing "
		           "was done.",
		           NULL);
out:
	rec_clear(&r);
}
