/* durability.c -- can the database keep airlockd's exactly-once promise? */
#include "worker/durability.h"

#include "lib/log.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct durability {
	const struct config *cfg;
	pthread_mutex_t mu;
	bool checked;
	bool ok;
	char why[1024];
	const char *level; /* static string */
};

struct durability *durability_new(const struct config *cfg)
{
	struct durability *d = xcalloc(1, sizeof(*d));

	d->cfg = cfg;
	d->level = "on";
	pthread_mutex_init(&d->mu, NULL);
	return d;
}

void durability_free(struct durability *d)
{
	if (d == NULL)
		return;
	pthread_mutex_destroy(&d->mu);
	free(d);
}

static const char *str_or(const cJSON *o, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* How many standbys stream synchronously (sync or quorum), and a short
 * description of all of them for the reason. */
static int sync_standbys(const cJSON *standbys, char *desc, size_t desclen)
{
	const cJSON *s;
	size_t used = 0;
	int n = 0;

	desc[0] = '\0';
	cJSON_ArrayForEach(s, standbys)
	{
		const char *name = str_or(s, "name", "?");
		const char *state = str_or(s, "state", "?");
		const char *sync = str_or(s, "sync_state", "?");
		if (strcmp(state, "streaming") == 0 &&
		    (strcmp(sync, "sync") == 0 || strcmp(sync, "quorum") == 0))
			n++;
		if (used < desclen) {
			int w = snprintf(desc + used, desclen - used, "%s%s %s/%s",
			                 used ? ", " : "", name, state, sync);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	if (desc[0] == '\0')
		snprintf(desc, desclen, "none connected");
	return n;
}

bool durability_judge(const struct config *cfg, const char *settings_json, char *why, size_t whylen,
                      const char **level)
{
	cJSON *o = cJSON_Parse(settings_json);
	bool ok = false;

	*level = "on";
	if (o == NULL) {
		snprintf(why, whylen, "the database's durability settings could not be read");
		return false;
	}
	const char *fsync = str_or(o, "fsync", "?");
	const char *names = str_or(o, "synchronous_standby_names", "");
	char desc[512];
	int nsync =
	    sync_standbys(cJSON_GetObjectItemCaseSensitive(o, "standbys"), desc, sizeof(desc));

	if (names[0] != '\0')
		*level = "remote_apply";
	if (strcmp(fsync, "on") != 0 &&
	    !(strcmp(fsync, "off") == 0 && cfg->durability_allow_fsync_off)) {
		snprintf(why, whylen,
		         "the database runs with fsync = %s: a crash of its machine can lose the "
		         "commit that marked a command running, and the command would run again. "
		         "Set fsync = on in postgresql.conf and reload PostgreSQL (airlockd checks "
		         "again every %d s); only on a throwaway test cluster set "
		         "durability.allow_fsync_off: true",
		         fsync, DURABILITY_RECHECK_S);
		goto out;
	}
	if (cfg->durability_failover && (names[0] == '\0' || nsync == 0)) {
		snprintf(why, whylen,
		         "failover to a standby is declared (durability.failover: true) but no "
		         "standby is synchronous (synchronous_standby_names = '%s'; standbys: %s): "
		         "after a promotion, a command marked running on the old primary could run "
		         "again. Set synchronous_standby_names to the standby's application_name "
		         "and check that pg_stat_replication shows it streaming with sync_state "
		         "sync (airlockd checks again every %d s)",
		         names, desc, DURABILITY_RECHECK_S);
		goto out;
	}
	why[0] = '\0';
	ok = true;
out:
	cJSON_Delete(o);
	return ok;
}

int durability_refresh(struct durability *d, struct store *s)
{
	struct store_res *res = store_exec(s, "SELECT airlock.worker_durability()::text", 0, NULL);
	char why[1024], q[1200];
	const char *level;

	if (res == NULL) {
		log_msg(LOG_WARN, "evt=durability.check_failed error=%s",
		        log_quote(store_errmsg(s), q, sizeof(q)));
		return -1;
	}
	bool ok = durability_judge(d->cfg, store_get(res, 0, 0), why, sizeof(why), &level);
	store_clear(res);

	pthread_mutex_lock(&d->mu);
	bool changed = !d->checked || ok != d->ok || strcmp(why, d->why) != 0;
	d->checked = true;
	d->ok = ok;
	d->level = level;
	snprintf(d->why, sizeof(d->why), "%s", why);
	pthread_mutex_unlock(&d->mu);

	if (changed) {
		if (ok)
			log_msg(LOG_INFO, "evt=durability.ok synchronous_commit=%s", level);
		else
			log_msg(LOG_ERROR, "evt=durability.unsafe mutations=held why=%s",
			        log_quote(why, q, sizeof(q)));
	}
	return 0;
}

bool durability_ok(struct durability *d, char *why, size_t whylen)
{
	bool ok;

	pthread_mutex_lock(&d->mu);
	ok = d->checked && d->ok;
	if (!ok)
		snprintf(why, whylen, "%s",
		         d->checked ? d->why
		                    : "the database's durability has not been checked yet");
	pthread_mutex_unlock(&d->mu);
	return ok;
}

const char *durability_session_sql(struct durability *d)
{
	const char *level;

	pthread_mutex_lock(&d->mu);
	level = d->level;
	pthread_mutex_unlock(&d->mu);
	return strcmp(level, "remote_apply") == 0 ? "SET synchronous_commit = remote_apply"
	                                          : "SET synchronous_commit = on";
}
