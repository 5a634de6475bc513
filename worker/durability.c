/* durability.c -- can the database keep airlockd's exactly-once promise? */
#include "worker/durability.h"

#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/conninfo.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct durability {
	const struct config *cfg;
	int conninfo_hosts;
	pthread_mutex_t mu;
	bool checked;
	bool ok;
	char why[1024];
	const char *level; /* static string */
	/* The server checked last: "<system identifier>/<timeline>", "" before. */
	char server[64];
	/* A session reconnected and no check has passed since. */
	bool pending;
	/* durability_hold(): "" when none. */
	char hold[1024];
};

struct durability *durability_new(const struct config *cfg)
{
	struct durability *d = xcalloc(1, sizeof(*d));

	d->cfg = cfg;
	d->level = "on";
	d->conninfo_hosts = durability_conninfo_hosts(cfg->database);
	pthread_mutex_init(&d->mu, NULL);
	return d;
}

int durability_conninfo_hosts(const char *conninfo)
{
	char *hosts;
	int n = 1;

	if (conninfo == NULL && (conninfo = getenv("AIRLOCK_DB")) == NULL) {
		const char *h = getenv("PGHOST");
		if (h == NULL)
			return 1;
		for (const char *p = h; *p; p++)
			n += *p == ',';
		return n;
	}
	hosts = conninfo_get(conninfo, "host");
	if (hosts == NULL)
		hosts = conninfo_get(conninfo, "hostaddr");
	if (hosts == NULL)
		return 1; /* none named: libpq's default, one server */
	for (const char *p = hosts; *p; p++)
		n += *p == ',';
	free(hosts);
	return n;
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

bool durability_failover_undeclared(const struct config *cfg, const char *settings_json,
                                    int conninfo_hosts, char *why, size_t whylen)
{
	cJSON *o = cJSON_Parse(settings_json);
	const cJSON *s;
	char desc[512] = "";
	size_t used = 0;
	int async = 0;

	why[0] = '\0';
	if (cfg->durability_failover) {
		cJSON_Delete(o);
		return false;
	}
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(o, "standbys"))
	{
		const char *state = str_or(s, "state", "?"), *sync = str_or(s, "sync_state", "?");
		if (strcmp(state, "streaming") != 0 || strcmp(sync, "sync") == 0 ||
		    strcmp(sync, "quorum") == 0)
			continue;
		async++;
		if (used < sizeof(desc)) {
			int w = snprintf(desc + used, sizeof(desc) - used, "%s%s %s/%s",
			                 used ? ", " : "", str_or(s, "name", "?"), state, sync);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	cJSON_Delete(o);
	if (async == 0 && conninfo_hosts <= 1)
		return false;
	snprintf(why, whylen,
	         "%s%s%s, but durability.failover is not declared: airlockd does not hold "
	         "mutations for want of a synchronous standby. If an asynchronous standby is "
	         "promoted, the commits it had not received are lost, among them marks of "
	         "commands as running, and those commands run a second time. Set "
	         "durability.failover: true in airlockd's config (mutations are then held "
	         "unless a standby is synchronous) and make the standby synchronous "
	         "(synchronous_standby_names), or never promote a standby",
	         async ? "a standby streams asynchronously (" : "", async ? desc : "",
	         async ? ")" : "the connection string names several hosts");
	if (async && conninfo_hosts > 1) {
		size_t n = strlen(why);
		snprintf(why + n, whylen > n ? whylen - n : 0,
		         "; the connection string also names %d hosts", conninfo_hosts);
	}
	return true;
}

/* The server a settings document comes from: "<system id>/<timeline>". */
static void server_of(const char *settings_json, char *out, size_t outlen)
{
	cJSON *o = cJSON_Parse(settings_json);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "system_identifier");
	const cJSON *tl = cJSON_GetObjectItemCaseSensitive(o, "timeline");

	out[0] = '\0';
	if (cJSON_IsString(id) && cJSON_IsNumber(tl))
		snprintf(out, outlen, "%s/%d", id->valuestring, (int)tl->valuedouble);
	cJSON_Delete(o);
}

/* Reads and judges the settings; with announce, an undeclared failover is
 * logged (the periodic check); a server change always is. */
static int check(struct durability *d, struct store *s, bool announce)
{
	struct store_res *res = store_exec(s, "SELECT airlock.worker_durability()::text", 0, NULL);
	char why[1024], q[1200], server[64], before[64], undeclared[1400];
	const char *level;

	if (res == NULL) {
		log_msg(LOG_WARN, "evt=durability.check_failed error=%s",
		        log_quote(store_errmsg(s), q, sizeof(q)));
		return -1;
	}
	bool ok = durability_judge(d->cfg, store_get(res, 0, 0), why, sizeof(why), &level);
	bool warn = durability_failover_undeclared(d->cfg, store_get(res, 0, 0), d->conninfo_hosts,
	                                           undeclared, sizeof(undeclared));
	server_of(store_get(res, 0, 0), server, sizeof(server));
	store_clear(res);

	pthread_mutex_lock(&d->mu);
	snprintf(before, sizeof(before), "%s", d->server);
	bool moved = before[0] && server[0] && strcmp(before, server) != 0;
	bool changed = !d->checked || ok != d->ok || strcmp(why, d->why) != 0;
	d->checked = true;
	d->ok = ok;
	d->level = level;
	snprintf(d->why, sizeof(d->why), "%s", why);
	if (server[0])
		snprintf(d->server, sizeof(d->server), "%s", server);
	d->pending = false;
	pthread_mutex_unlock(&d->mu);

	if (moved)
		log_msg(LOG_WARN,
		        "evt=db.server_changed from=%s to=%s mutations=%s note=\"a reconnect "
		        "reached another server (system identifier/timeline): a failover or a "
		        "restore; its durability was checked before anything was claimed\"",
		        before, server, ok ? "allowed" : "held");
	if (changed || moved) {
		if (ok)
			log_msg(LOG_INFO, "evt=durability.ok synchronous_commit=%s", level);
		else
			log_msg(LOG_ERROR, "evt=durability.unsafe mutations=held why=%s",
			        log_quote(why, q, sizeof(q)));
	}
	if (warn && (announce || changed))
		log_msg(LOG_WARN, "evt=durability.failover_undeclared why=%s",
		        log_quote(undeclared, q, sizeof(q)));
	return 0;
}

int durability_refresh(struct durability *d, struct store *s)
{
	return check(d, s, true);
}

int durability_session_check(struct durability *d, struct store *s)
{
	pthread_mutex_lock(&d->mu);
	d->pending = true;
	pthread_mutex_unlock(&d->mu);
	/* When the check cannot be read, mutations stay held until one passes
	 * (the next session's, or the periodic one). */
	return check(d, s, false);
}

void durability_hold(struct durability *d, const char *why)
{
	pthread_mutex_lock(&d->mu);
	snprintf(d->hold, sizeof(d->hold), "%s", why ? why : "");
	pthread_mutex_unlock(&d->mu);
}

bool durability_ok(struct durability *d, char *why, size_t whylen)
{
	bool ok;

	pthread_mutex_lock(&d->mu);
	ok = d->checked && d->ok && !d->pending && d->hold[0] == '\0';
	if (ok || (d->checked && d->ok && !d->pending))
		snprintf(why, whylen, "%s", d->hold);
	else
		snprintf(why, whylen, "%s",
		         !d->checked ? "the database's durability has not been checked yet"
		         : !d->ok    ? d->why
		                     : "a session reconnected and the database's durability "
		                       "has not been checked on it yet");
	pthread_mutex_unlock(&d->mu);
	return ok;
}

int durability_retry_ms(struct durability *d)
{
	int ms;

	pthread_mutex_lock(&d->mu);
	ms = !d->checked || (d->ok && d->pending) ? 1000
	     : d->ok && d->hold[0]                ? 2000
	                                          : DURABILITY_RECHECK_S * 1000;
	pthread_mutex_unlock(&d->mu);
	return ms;
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
