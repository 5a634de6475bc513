/* flrwatch.c -- stale FLR sessions, logged and recorded as checks. */
#include "worker/flrwatch.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "worker/guard.h"
#include "zerto/api.h"
#include "zerto/flr.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct flrwatch {
	/* The daemon's config: it outlives this thread, and the fields read here
	 * (zerto, recover) are never changed by a reload. */
	const struct config *orig;
	struct zerto_client *zc; /* one client for the thread's life (one token) */
	char *conninfo;
	int interval_s;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping;
};

static void record(struct store *db, const char *slug, const char *status, const char *detail)
{
	char lq2[512];
	char lq[512];
	cJSON *checks = cJSON_CreateArray(), *c = cJSON_CreateObject();
	char *cj;
	struct store_res *res;

	cJSON_AddStringToObject(c, "name", "flr_session");
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddStringToObject(c, "detail", detail);
	cJSON_AddItemToArray(checks, c);
	cj = cJSON_PrintUnformatted(checks);
	res = store_exec(db, "SELECT airlock.record_probe($1, '{}'::jsonb, $2::jsonb)", 2,
	                 (const char *const[]){slug, cj});
	if (res == NULL)
		log_msg(LOG_WARN, "evt=flr.check_unrecorded entity=%s error=%s",
		        log_quote(slug, lq, sizeof(lq)),
		        log_quote(store_errmsg(db), lq2, sizeof(lq2)));
	store_clear(res);
	cJSON_free(cj);
	cJSON_Delete(checks);
}

/* The inventory's slug for a Zerto VM: by zerto_vm_identifier, else by its
 * name as Zerto lists it.  NULL when the inventory does not know it. */
static char *slug_of(struct store *db, struct zerto_client *z, const char *vm_id)
{
	struct zerto_vm_row *rows = NULL;
	size_t n = 0;
	struct zerto_err e = {0};
	const char *name = "";
	char *slug = NULL;

	if (zerto_list_vms(z, vm_id, NULL, &rows, &n, &e) == 0 && n > 0)
		name = rows[0].vm_name;
	struct store_res *res = store_exec(
	    db,
	    "SELECT slug FROM airlock.entities WHERE type = 'vm' AND (zerto_vm_identifier = $1 "
	    "OR slug = 'vm:' || $2) ORDER BY zerto_vm_identifier = $1 DESC LIMIT 1",
	    2, (const char *const[]){vm_id, name});
	if (res != NULL && store_nrows(res) == 1)
		slug = xstrdup(store_get(res, 0, 0));
	store_clear(res);
	zerto_vm_rows_free(rows, n);
	return slug;
}

static int round_with(const struct config *cfg, struct zerto_client *z, const char *conninfo)
{
	char lq[512];
	struct store *db = NULL;
	struct zerto_flr_session *ss = NULL;
	size_t n = 0;
	struct zerto_err e = {0};
	int64_t now_ms;
	char err[600];
	cJSON *stale_slugs = cJSON_CreateArray();
	int stale = -1;

	db = store_open(conninfo, "airlockd-flrwatch", err, sizeof(err));
	if (db == NULL) {
		log_msg(LOG_WARN, "evt=flr.watch_failed error=%s", log_quote(err, lq, sizeof(lq)));
		goto out;
	}
	if (zerto_flr_list(z, NULL, &ss, &n, &e) < 0 || zerto_server_time(z, &now_ms, &e) < 0) {
		log_msg(LOG_WARN, "evt=flr.watch_failed error=%s",
		        log_quote(e.msg, lq, sizeof(lq)));
		goto out;
	}
	stale = 0;
	for (size_t i = 0; i < n; i++) {
		long age = ss[i].mount_ms ? (long)((now_ms - ss[i].mount_ms) / 1000) : -1;
		char detail[800];
		char *slug;

		if (age < cfg->recover_flr_session_warn_s)
			continue;
		stale++;
		log_msg(LOG_WARN, "evt=flr.stale session=%s vm_id=%s vpg_id=%s status=%s age_s=%ld",
		        ss[i].id, ss[i].vm_id, ss[i].vpg_id, ss[i].status, age);
		slug = slug_of(db, z, ss[i].vm_id);
		if (slug == NULL)
			continue;
		snprintf(detail, sizeof(detail),
		         "file-level restore session %s has been mounted for %ld s; it blocks the "
		         "next recovery of this VM. End it with `airlock flr end %s` once nobody "
		         "uses it.",
		         ss[i].id, age, ss[i].id);
		record(db, slug, "warning", detail);
		cJSON_AddItemToArray(stale_slugs, cJSON_CreateString(slug));
		free(slug);
	}
	/* A warning whose session is gone goes back to ok. */
	char *sj = cJSON_PrintUnformatted(stale_slugs);
	struct store_res *res = store_exec(
	    db,
	    "SELECT entity FROM airlock.checks WHERE name = 'flr_session' AND status <> 'ok' "
	    "AND NOT entity = ANY (ARRAY(SELECT jsonb_array_elements_text($1::jsonb)))",
	    1, (const char *const[]){sj});
	for (int i = 0; res != NULL && i < store_nrows(res); i++)
		record(db, store_get(res, i, 0), "ok",
		       "no file-level restore session is left mounted");
	store_clear(res);
	cJSON_free(sj);
out:
	cJSON_Delete(stale_slugs);
	zerto_flr_sessions_free(ss, n);
	store_close(db);
	return stale;
}

static struct zerto_client *client_for(const struct config *cfg)
{
	char lq[512];
	struct zerto_config zc;
	char err[600];
	struct zerto_client *z;

	guard_zerto_config(cfg, &zc);
	z = zerto_client_new(&zc, err, sizeof(err));
	if (z == NULL)
		log_msg(LOG_WARN, "evt=flr.watch_failed error=%s", log_quote(err, lq, sizeof(lq)));
	return z;
}

int flrwatch_round(const struct config *cfg)
{
	struct zerto_client *z;
	int n;

	if (cfg->zerto_url == NULL || cfg->scheduler_database == NULL)
		return 0;
	z = client_for(cfg);
	if (z == NULL)
		return -1;
	n = round_with(cfg, z, cfg->scheduler_database);
	zerto_client_free(z);
	return n;
}

static void *run(void *arg)
{
	struct flrwatch *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->stopping) {
		pthread_mutex_unlock(&w->mu);
		if (w->zc == NULL)
			w->zc = client_for(w->orig); /* retried next round if it failed */
		if (w->zc != NULL)
			round_with(w->orig, w->zc, w->conninfo);
		pthread_mutex_lock(&w->mu);
		int64_t until = deadline_now_ms() + (int64_t)w->interval_s * 1000;
		while (!w->stopping)
			if (deadline_cond_wait(&w->cv, &w->mu, until) != 0)
				break;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct flrwatch *flrwatch_new(const struct config *cfg)
{
	struct flrwatch *w;

	if (cfg->zerto_url == NULL || cfg->scheduler_database == NULL)
		return NULL;
	w = xcalloc(1, sizeof(*w));
	w->orig = cfg;
	w->conninfo = xstrdup(cfg->scheduler_database);
	w->interval_s = cfg->probe_interval_s;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->thread, NULL, run, w) != 0)
		fatal("evt=flr.watch_thread_failed");
	return w;
}

void flrwatch_free(struct flrwatch *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	zerto_client_free(w->zc);
	free(w->conninfo);
	free(w);
}
