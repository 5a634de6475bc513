/* guard.c -- the guard step over zerto/guard.h, or "no provider". */
#include "worker/guard.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/lockkeys.h"
#include "zerto/client.h"
#include "zerto/guard.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct guard {
	struct zerto_client *zerto; /* NULL: no checkpoint provider configured */
	bool reversible_low_without_rewind;
};

struct hook_ctx {
	struct store *db;
	const char *worker;
	int64_t id;
	bool gone;          /* the row is no longer this worker's (cancelled) */
	int64_t checked_ms; /* when that was last asked */
};

/* Whether the row was withdrawn while its guard runs: asked at most every
 * 2 s (a cancel clears claimed_by); a failed look says nothing. */
static bool withdrawn(void *ctx)
{
	struct hook_ctx *h = ctx;
	char id[24];
	int64_t now = deadline_now_ms();

	if (h->gone || now - h->checked_ms < 2000)
		return h->gone;
	h->checked_ms = now;
	snprintf(id, sizeof(id), "%lld", (long long)h->id);
	struct store_res *res = store_exec(
	    h->db, "SELECT claimed_by IS DISTINCT FROM $2 FROM airlock.executions WHERE id = $1", 2,
	    (const char *const[]){id, h->worker});
	if (res != NULL && store_nrows(res) == 1 && store_get(res, 0, 0)[0] == 't')
		h->gone = true;
	store_clear(res);
	return h->gone;
}

static int lock_vpg(void *ctx, const char *vpg_id, long timeout_ms)
{
	struct hook_ctx *h = ctx;
	int64_t start = deadline_now_ms();

	for (;;) {
		struct store_res *res = store_exec(
		    h->db, "SELECT pg_try_advisory_lock(" LOCK_KIND_VPG ", hashtext($1))", 1,
		    (const char *const[]){vpg_id});
		if (res == NULL)
			return -1;
		bool got = store_get(res, 0, 0)[0] == 't';
		store_clear(res);
		if (got)
			return 0;
		if (deadline_now_ms() - start >= timeout_ms)
			return -1;
		usleep(50 * 1000);
	}
}

static void unlock_vpg(void *ctx, const char *vpg_id)
{
	struct hook_ctx *h = ctx;

	store_clear(store_exec(h->db, "SELECT pg_advisory_unlock(" LOCK_KIND_VPG ", hashtext($1))",
	                       1, (const char *const[]){vpg_id}));
}

static void record(void *ctx, const char *name, const cJSON *detail)
{
	char lq[512];
	struct hook_ctx *h = ctx;
	cJSON *d = detail ? cJSON_Duplicate(detail, 1) : cJSON_CreateObject();

	if (!cJSON_IsObject(d)) {
		cJSON *wrap = cJSON_CreateObject();
		cJSON_AddItemToObject(wrap, "detail", d);
		d = wrap;
	}
	cJSON_AddStringToObject(d, "step", name);
	char *text = cJSON_PrintUnformatted(d);
	if (queue_note(h->db, h->id, h->worker, text) < 0)
		log_msg(LOG_WARN, "exec=%lld evt=guard.note_failed error=%s", (long long)h->id,
		        log_quote(store_errmsg(h->db), lq, sizeof(lq)));
	free(text);
	cJSON_Delete(d);
}

void guard_zerto_config(const struct config *cfg, struct zerto_config *zc)
{
	*zc = (struct zerto_config){
	    .base_url = cfg->zerto_url,
	    .token_url = cfg->zerto_token_url,
	    .realm = cfg->zerto_realm,
	    .grant =
	        cfg->zerto_password_grant ? ZERTO_GRANT_PASSWORD : ZERTO_GRANT_CLIENT_CREDENTIALS,
	    .client_id = cfg->zerto_client_id,
	    .username = cfg->zerto_username,
	    .secret_file = cfg->zerto_secret_file,
	    .secret_env = cfg->zerto_secret_env,
	    .ca_file = cfg->zerto_ca_file,
	    .insecure_skip_verify = !cfg->zerto_verify_tls,
	    .connect_timeout_ms = cfg->zerto_connect_timeout_ms,
	    .request_timeout_ms = cfg->zerto_request_timeout_ms,
	    .time_scale = cfg->zerto_time_scale,
	};
}

struct guard *guard_new(const struct config *cfg, char *err, size_t errlen)
{
	struct guard *g = xcalloc(1, sizeof(*g));

	g->reversible_low_without_rewind = cfg->reversible_low_without_rewind;
	if (cfg->zerto_url) {
		struct zerto_config zc;
		guard_zerto_config(cfg, &zc);
		g->zerto = zerto_client_new(&zc, err, errlen);
		if (g->zerto == NULL) {
			free(g);
			return NULL;
		}
	}
	return g;
}

void guard_free(struct guard *g)
{
	if (g == NULL)
		return;
	zerto_client_free(g->zerto);
	free(g);
}

/* The VM's name in Zerto: the slug without its "vm:" prefix. */
static const char *vm_name(const struct queue_item *it)
{
	const char *colon = strchr(it->target, ':');

	return colon ? colon + 1 : it->target;
}

void guard_status(struct guard *g, const struct queue_item *it, char *out, size_t outlen,
                  int *possible)
{
	struct zerto_protection p;
	enum target_type tt;

	if (target_type_parse(it->target_type, &tt) < 0 || tt != TARGET_VM) {
		snprintf(out, outlen, "no rewind point possible: Zerto protects VMs, not a %s",
		         it->target_type);
		*possible = 0;
		return;
	}
	if (g->zerto == NULL) {
		snprintf(out, outlen,
		         "no checkpoint provider configured: no rewind point possible");
		*possible = 0;
		return;
	}
	zerto_protection(g->zerto, it->zerto_vm_identifier, vm_name(it), &p);
	snprintf(out, outlen, "%s", p.summary);
	switch (p.state) {
	case ZERTO_PROT_PROTECTED:
		*possible = p.ntaggable == p.nvpgs && p.nvpgs > 0;
		break;
	case ZERTO_PROT_NOT_PROTECTED:
		*possible = 0;
		break;
	default:
		*possible = -1;
		break;
	}
}

/* No rewind point can be made: policy decides. */
static int no_rewind(const struct guard *g, const struct queue_item *it, enum risk_class cls,
                     const char *why, char **guard_json, char *reason, size_t reasonlen)
{
	cJSON *j = cJSON_CreateObject();
	int rc = 0;

	cJSON_AddStringToObject(j, "outcome", "no_rewind_point");
	cJSON_AddStringToObject(j, "why", why);
	if (cls == RISK_REVERSIBLE_LOW) {
		if (!g->reversible_low_without_rewind) {
			snprintf(
			    reason, reasonlen,
			    "refused: no rewind point can be made (%s) and policy refuses "
			    "reversible_low changes without one. Nothing ran. Ask your operator.",
			    why);
			rc = -1;
		}
	} else if (it->rewind_possible != 0) {
		snprintf(
		    reason, reasonlen,
		    "refused: the request was approved while it said a rewind point would be "
		    "possible, but none can be made now (%s). Nothing ran. Submit it again so an "
		    "operator can approve it knowing there is no rewind point.",
		    why);
		rc = -1;
	}
	cJSON_AddBoolToObject(j, "proceed", rc == 0);
	*guard_json = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return rc;
}

int guard_before(struct guard *g, struct store *db, const char *worker, const struct queue_item *it,
                 enum risk_class cls, char **rewind_json, char **guard_json, char *reason,
                 size_t reasonlen)
{
	struct hook_ctx h = {
	    .db = db, .worker = worker, .id = it->id, .checked_ms = deadline_now_ms()};
	struct zerto_guard_hooks hooks = {.ctx = &h,
	                                  .lock_vpg = lock_vpg,
	                                  .unlock_vpg = unlock_vpg,
	                                  .event = record,
	                                  .withdrawn = withdrawn};
	struct zerto_guard_result r = {0};
	char change[32], logid[40];
	enum target_type tt;
	int rc;

	*rewind_json = NULL;
	*guard_json = NULL;
	if (cls == RISK_READ_ONLY)
		return 0;
	if (target_type_parse(it->target_type, &tt) < 0 || tt != TARGET_VM)
		return no_rewind(g, it, cls, "Zerto protects VMs only", guard_json, reason,
		                 reasonlen);
	if (g->zerto == NULL)
		return no_rewind(g, it, cls, "no checkpoint provider configured", guard_json,
		                 reason, reasonlen);

	snprintf(change, sizeof(change), "%lld", (long long)it->id);
	snprintf(logid, sizeof(logid), "exec=%lld", (long long)it->id);
	struct zerto_guard_request req = {
	    .vm_id = it->zerto_vm_identifier,
	    .vm_name = vm_name(it),
	    .agent = it->requested_by,
	    .action = it->action ? it->action : it->command,
	    .change_id = it->change_id ? it->change_id : change,
	    .now = time(NULL),
	    .log_id = logid,
	    /* The whole step, however the ZVM behaves: the bound the daemon's
	     * other deadlines (the target lock, the grace) are sized with. */
	    .deadline_ms = deadline_now_ms() + zerto_guard_worst_case_ms(g->zerto),
	};
	enum zerto_outcome o = zerto_guard_run(g->zerto, &req, &hooks, &r);
	cJSON *j = zerto_guard_result_json(&r);
	switch (o) {
	case ZERTO_GUARD_OK:
		*rewind_json = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "rewind_points"));
		*guard_json = cJSON_PrintUnformatted(j);
		rc = 0;
		break;
	case ZERTO_GUARD_NONE:
		rc = no_rewind(g, it, cls, r.message ? r.message : "Zerto does not protect this VM",
		               guard_json, reason, reasonlen);
		break;
	default: {
		snprintf(reason, reasonlen, "%s",
		         r.message ? r.message : "the guard refused; nothing ran");
		*guard_json = cJSON_PrintUnformatted(j);
		/* Checkpoints the refused request made anyway go on its row. */
		cJSON *made = cJSON_CreateArray(), *p;
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(j, "rewind_points"))
		{
			if (cJSON_IsString(cJSON_GetObjectItem(p, "checkpoint_id")))
				cJSON_AddItemToArray(made, cJSON_Duplicate(p, true));
		}
		if (cJSON_GetArraySize(made) > 0)
			*rewind_json = cJSON_PrintUnformatted(made);
		cJSON_Delete(made);
		rc = -1;
		break;
	}
	}
	cJSON_Delete(j);
	zerto_guard_result_clear(&r);
	return rc;
}

long guard_worst_case_ms(const struct guard *g)
{
	return g->zerto ? zerto_guard_worst_case_ms(g->zerto) : 0;
}
