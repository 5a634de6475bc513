/* probe.c -- probe the estate, node by node, and record what was seen. */
#include "worker/probe.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "worker/agentbatch.h"
#include "worker/bypass.h"
#include "worker/discover.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBE_TIMEOUT_MS 15000
/* A target's jail is built again to re-check it after this long, or at once
 * when its transport failed in between (a restarted guest may be another
 * system).  Every round would cost two commands per target. */
#define JAIL_RECHECK_S 3600
/* A jail that could not even be tried (the target refused to run `true`)
 * is tried again sooner. */
#define JAIL_RETRY_S 300
/* At most this many jail checks per round, so that a round stays short when
 * many targets are new (hundreds of guests found at once): the others are
 * checked in the rounds after.  A target whose jail is not known yet is
 * confined (or refused) at its execution as always. */
#define JAIL_CHECKS_PER_ROUND 24
/* The checks come after every probe of the round is recorded, and get what
 * is left of ROUND_TARGET_MS, at most JAIL_ROUND_MS; at least one check a
 * round, so that targets whose rounds are always slow are still checked. */
#define ROUND_TARGET_MS 4000
#define JAIL_ROUND_MS   1500

/* When each target's jail was last checked, by slug. */
struct jail_memo {
	char **slug;
	time_t *at;
	size_t n, cap;
};

struct prober {
	char *conninfo;
	struct transport *t;
	int interval_s;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping;
	struct notifier *notifier; /* side-door alerts; NULL: none */
	bool discover;             /* ask the nodes for the cluster's guests first */
	struct jail_memo memo;     /* the thread's own */
};

static time_t *memo_slot(struct jail_memo *m, const char *slug, bool add)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->slug[i], slug) == 0)
			return &m->at[i];
	if (!add)
		return NULL;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->slug = xrealloc(m->slug, m->cap * sizeof(*m->slug));
		m->at = xrealloc(m->at, m->cap * sizeof(*m->at));
	}
	m->slug[m->n] = xstrdup(slug);
	m->at[m->n] = 0;
	return &m->at[m->n++];
}

static void memo_free(struct jail_memo *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->slug[i]);
	free(m->slug);
	free(m->at);
}

/* Whether the target's jail is due a check (always without a memo). */
static bool jail_due(struct jail_memo *m, const char *slug, time_t now)
{
	time_t *at = m ? memo_slot(m, slug, false) : NULL;

	return at == NULL || *at == 0 || now - *at >= JAIL_RECHECK_S;
}

static const char *name_of(const char *slug)
{
	const char *c = strchr(slug, ':');

	return c ? c + 1 : slug;
}

static void write_probe(struct store *db, const char *slug, cJSON *attrs, cJSON *checks)
{
	char lq2[512];
	char lq[512];
	char *a = cJSON_PrintUnformatted(attrs);
	char *c = cJSON_PrintUnformatted(checks);
	struct store_res *res =
	    store_exec(db, "SELECT airlock.record_probe($1, $2::jsonb, $3::jsonb)", 3,
	               (const char *const[]){slug, a, c});

	if (res == NULL)
		log_msg(LOG_WARN, "evt=probe.record_failed slug=%s error=%s",
		        log_quote(slug, lq2, sizeof(lq2)),
		        log_quote(store_errmsg(db), lq, sizeof(lq)));
	store_clear(res);
	free(a);
	free(c);
}

static cJSON *check_row(const char *name, bool ok, const char *detail)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "status", ok ? "ok" : "failing");
	cJSON_AddStringToObject(c, "detail", detail);
	return c;
}

/* Builds the read-only jail on the target, one tier then the other, around
 * `true`: "full" (both tiers), "root-tier" (only uid 0 without capabilities:
 * e.g. a setpriv too old for ambient capabilities), "none" (no jail: its
 * observations go to a human).  NULL when the target could not be asked
 * (detail says why): nothing is recorded then. */
static const char *probe_jail(struct transport *t, const struct transport_node *node,
                              enum target_type tt, int vmid, char *detail, size_t detaillen)
{
	enum transport_jail tiers[] = {TRANSPORT_JAIL_USER, TRANSPORT_JAIL_ROOT};
	bool built[2] = {false, false};
	char why[2][260] = {"", ""};

	for (int k = 0; k < 2; k++) {
		struct transport_limits lim = {.timeout_ms = PROBE_TIMEOUT_MS, .jail = tiers[k]};
		struct transport_result r;
		transport_exec(t, node, tt, vmid, "true", &lim, &r);
		if (r.status == TRANSPORT_EXITED && r.exit_code == 0) {
			built[k] = true;
		} else if (r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_JAIL) {
			snprintf(why[k], sizeof(why[k]), "%.250s", r.errmsg);
		} else {
			snprintf(detail, detaillen, "the jail could not be tried: %s%s%.200s",
			         transport_status_name(r.status), r.errmsg[0] ? ": " : "",
			         r.errmsg);
			transport_result_free(&r);
			return NULL;
		}
		transport_result_free(&r);
	}
	if (built[0] && built[1]) {
		snprintf(detail, detaillen, "read-only jail: user and root tiers");
		return "full";
	}
	if (built[1]) {
		snprintf(detail, detaillen, "root tier only; user tier: %.250s", why[0]);
		return "root-tier";
	}
	snprintf(detail, detaillen, "no read-only jail: %.280s", why[built[0] ? 1 : 0]);
	return "none";
}

/* What one round saw, for `airlockd --probe-once`; out NULL: not reported. */
struct round_report {
	FILE *out;
	int unhealthy;
};

/* One entity's outcome in this round (a row of the round's query). */
struct seen {
	bool written;     /* its probe was recorded */
	bool ok;          /* healthy */
	char detail[320]; /* what the probe saw */
	const char *jail; /* the jail check's tier; NULL: not checked this round */
	char jail_detail[320];
	enum target_type type;
	int vmid;
};

/* What the round did, for its log line. */
struct round {
	struct store_res *res; /* the entities, grouped by node */
	struct seen *seen;     /* one per row of res */
	struct jail_memo *memo;
	struct notifier *nt;
	struct agentbatch_stats agents;
	int written, busy, jails;
	int64_t probe_ms, jail_ms;
};

/* The row's node, as the transport wants it (borrows from res). */
static struct transport_node node_of(struct store_res *res, int row)
{
	struct transport_node node = {
	    .name = name_of(store_get(res, row, 1)),
	    .address = store_get(res, row, 4),
	    .port = atoi(store_get(res, row, 5)),
	    .user = store_isnull(res, row, 6) ? NULL : store_get(res, row, 6),
	    .host_key_sha256 = store_isnull(res, row, 7) ? NULL : store_get(res, row, 7),
	};
	return node;
}

/* Asks the node about its host and guests (rows [from, to) of the round's
 * query): containers with one pct list, guest agents with one batch, what
 * those cannot tell one qm/pct command each.  A guest airlock is running a
 * command on right now (busy) is not asked: its agent is the command's. */
static void ask_node(struct transport *t, struct round *rd, const struct transport_node *node,
                     int from, int n, struct transport_probe *pr, bool *done)
{
	struct transport_probe *rest = xcalloc((size_t)n, sizeof(*rest));
	int *idx = xcalloc((size_t)n, sizeof(*idx));
	bool *silent = xcalloc((size_t)n, sizeof(*silent));
	size_t k = 0;

	for (int i = 0; i < n; i++) {
		const char *type = store_get(rd->res, from + i, 2);
		pr[i].kind = strcmp(type, "vm") == 0    ? TRANSPORT_PROBE_AGENT
		             : strcmp(type, "lxc") == 0 ? TRANSPORT_PROBE_CT
		                                        : TRANSPORT_PROBE_HOST;
		pr[i].vmid =
		    store_isnull(rd->res, from + i, 3) ? 0 : atoi(store_get(rd->res, from + i, 3));
		done[i] = strcmp(store_get(rd->res, from + i, 8), "t") == 0;
		rd->busy += done[i];
	}
	agentbatch_probe(t, node, pr, done, silent, (size_t)n, &rd->agents);
	agentbatch_cts(t, node, pr, done, (size_t)n, PROBE_TIMEOUT_MS);
	for (int i = 0; i < n; i++) {
		/* Still no answer from an agent qm already found not running: its
		 * verdict stands, and qm need not wait its 3 s for it again.  An
		 * answer to a later batch is what changes it. */
		if (silent[i] && !store_isnull(rd->res, from + i, 9) &&
		    strcmp(store_get(rd->res, from + i, 9), "not_running") == 0) {
			pr[i].state = TRANSPORT_PROBE_NOT_RUNNING;
			snprintf(pr[i].detail, sizeof(pr[i].detail),
			         "QEMU guest agent is not running: it still does not answer "
			         "(its socket is busy or silent)");
			done[i] = true;
		}
		if (!done[i]) {
			idx[k] = i;
			rest[k++] = pr[i];
		}
	}
	if (k > 0)
		transport_probe(t, node, rest, k, PROBE_TIMEOUT_MS);
	for (size_t j = 0; j < k; j++) {
		pr[idx[j]] = rest[j];
		done[idx[j]] = true;
	}
	free(rest);
	free(idx);
	free(silent);
}

/* Probes one node's host and guests and records what was seen. */
static void probe_node(struct store *db, struct transport *t, struct round *rd, int from, int to,
                       const char *now)
{
	int n = to - from;
	struct transport_probe *pr = xcalloc((size_t)n, sizeof(*pr));
	bool *done = xcalloc((size_t)n, sizeof(*done));
	struct transport_node node = node_of(rd->res, from);

	ask_node(t, rd, &node, from, n, pr, done);
	for (int i = 0; i < n; i++) {
		const char *slug = store_get(rd->res, from + i, 0);
		struct seen *sn = &rd->seen[from + i];
		bool busy = strcmp(store_get(rd->res, from + i, 8), "t") == 0;
		if (busy)
			continue; /* nothing new is known: the last record stands */
		cJSON *attrs = cJSON_CreateObject(), *checks = cJSON_CreateArray();
		bool ok = pr[i].state == TRANSPORT_PROBE_OK;
		if (!ok && rd->memo) {
			time_t *at = memo_slot(rd->memo, slug, false);
			if (at)
				*at = 0; /* failed in between: check again once it is back */
		}
		sn->ok = ok;
		sn->vmid = pr[i].vmid;
		sn->type = pr[i].kind == TRANSPORT_PROBE_AGENT ? TARGET_VM
		           : pr[i].kind == TRANSPORT_PROBE_CT  ? TARGET_LXC
		                                               : TARGET_PROXMOX_HOST;
		snprintf(sn->detail, sizeof(sn->detail), "%s%s%s",
		         transport_probe_state_name(pr[i].state), pr[i].detail[0] ? ": " : "",
		         pr[i].detail);
		if (pr[i].state == TRANSPORT_PROBE_UNREACHABLE) {
			/* The node could not be asked: we know nothing new about the guest. */
			if (pr[i].kind == TRANSPORT_PROBE_HOST)
				cJSON_AddFalseToObject(attrs, "reachable");
			cJSON_AddItemToArray(checks, check_row("ssh", false, sn->detail));
		} else if (pr[i].kind == TRANSPORT_PROBE_AGENT) {
			const char *attr = transport_agent_attr(pr[i].state);
			if (attr)
				cJSON_AddStringToObject(attrs, "qemu_guest_agent", attr);
			cJSON_AddItemToArray(checks, check_row("guest-agent", ok, sn->detail));
		} else if (pr[i].kind == TRANSPORT_PROBE_CT) {
			if (pr[i].state == TRANSPORT_PROBE_OK ||
			    pr[i].state == TRANSPORT_PROBE_NOT_RUNNING)
				cJSON_AddStringToObject(attrs, "container_status",
				                        ok ? "running" : "stopped");
			cJSON_AddItemToArray(checks, check_row("container", ok, sn->detail));
		} else {
			cJSON_AddBoolToObject(attrs, "reachable", ok);
			cJSON_AddItemToArray(checks, check_row("ssh", ok, sn->detail));
			if (ok) /* what went around the gate on this node (bypass.h) */
				bypass_checks(db, t, &node, slug, rd->nt, checks);
		}
		cJSON_AddStringToObject(attrs, "health", ok ? "healthy" : "unhealthy");
		cJSON_AddStringToObject(attrs, "last_probe", now);
		write_probe(db, slug, attrs, checks);
		sn->written = true;
		rd->written++;
		cJSON_Delete(attrs);
		cJSON_Delete(checks);
	}
	free(pr);
	free(done);
}

/* The read-only jail checks due this round, after every probe is recorded,
 * within the budget above (the round began at round_t0), so that hundreds
 * of new targets are checked over the rounds that follow instead of holding
 * up the one that found them. */
static void check_jails(struct store *db, struct transport *t, struct round *rd, time_t tt,
                        int64_t round_t0)
{
	int64_t t0 = deadline_now_ms();
	int64_t left = ROUND_TARGET_MS - (t0 - round_t0);
	int64_t budget = left < 0 ? 0 : left > JAIL_ROUND_MS ? JAIL_ROUND_MS : left;

	for (int row = 0; row < store_nrows(rd->res); row++) {
		struct seen *sn = &rd->seen[row];
		const char *slug = store_get(rd->res, row, 0);
		if (!sn->written || !sn->ok || !jail_due(rd->memo, slug, tt))
			continue;
		if (rd->jails >= JAIL_CHECKS_PER_ROUND ||
		    (rd->jails > 0 && deadline_now_ms() - t0 >= budget))
			break;
		struct transport_node node = node_of(rd->res, row);
		rd->jails++;
		sn->jail = probe_jail(t, &node, sn->type, sn->vmid, sn->jail_detail,
		                      sizeof(sn->jail_detail));
		if (rd->memo)
			*memo_slot(rd->memo, slug, true) =
			    sn->jail ? tt : tt - JAIL_RECHECK_S + JAIL_RETRY_S;
		if (sn->jail == NULL)
			continue;
		cJSON *attrs = cJSON_CreateObject(), *checks = cJSON_CreateArray();
		cJSON_AddStringToObject(attrs, "confinement", sn->jail);
		cJSON_AddItemToArray(checks, check_row("confinement", strcmp(sn->jail, "full") == 0,
		                                       sn->jail_detail));
		write_probe(db, slug, attrs, checks);
		cJSON_Delete(attrs);
		cJSON_Delete(checks);
	}
	rd->jail_ms = deadline_now_ms() - t0;
}

static void report(const struct round *rd, struct round_report *rep)
{
	for (int row = 0; row < store_nrows(rd->res); row++) {
		const struct seen *sn = &rd->seen[row];
		char q[400];
		if (!sn->written)
			continue;
		rep->unhealthy += !sn->ok;
		fprintf(rep->out, "%s health=%s confinement=%s detail=%s\n",
		        store_get(rd->res, row, 0), sn->ok ? "healthy" : "unhealthy",
		        sn->jail ? sn->jail : "-", log_quote(sn->detail, q, sizeof(q)));
	}
}

static int round_with(const char *conninfo, struct transport *t, struct notifier *nt, bool discover,
                      struct jail_memo *memo, struct round_report *rep)
{
	int64_t t0 = deadline_now_ms(), t1;
	char lq[512];
	char err[1024];
	char now[32];
	time_t tt = time(NULL);
	struct tm tm;
	struct store *db = store_open(conninfo, "airlockd-probe", err, sizeof(err));
	struct round rd = {.memo = memo, .nt = nt};

	if (db == NULL) {
		log_msg(LOG_WARN, "evt=probe.connect_failed error=%s",
		        log_quote(err, lq, sizeof(lq)));
		return -1;
	}
	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* The estate first: the probes below then ask each guest's node as
	 * discovery found it (a migrated VM is probed where it runs now), and
	 * a guest that is gone is not probed. */
	if (discover)
		discover_round(db, t, NULL);
	t1 = deadline_now_ms();
	/* Every entity with its node's connection facts, grouped by node, and
	 * whether airlock is running a command on it right now. */
	rd.res = store_exec(
	    db,
	    "SELECT e.slug, h.slug, e.type, e.vmid, h.address, coalesce(h.port, 22), "
	    " h.ssh_user, h.host_key_fingerprint, "
	    " e.slug IN (SELECT airlock.probe_busy_guests()), e.attributes ->> 'qemu_guest_agent' "
	    "FROM airlock.entities e JOIN airlock.entities h ON h.slug = coalesce(e.node, e.slug) "
	    "WHERE e.gone_at IS NULL "
	    "ORDER BY h.slug, e.type <> 'proxmox-host', e.slug",
	    0, NULL);
	if (rd.res == NULL) {
		log_msg(LOG_WARN, "evt=probe.read_failed error=%s",
		        log_quote(store_errmsg(db), lq, sizeof(lq)));
		store_close(db);
		return -1;
	}
	rd.seen = xcalloc((size_t)store_nrows(rd.res) + 1, sizeof(*rd.seen));
	for (int from = 0, i = 1; from < store_nrows(rd.res); i++) {
		if (i < store_nrows(rd.res) &&
		    strcmp(store_get(rd.res, i, 1), store_get(rd.res, from, 1)) == 0)
			continue;
		probe_node(db, t, &rd, from, i, now);
		from = i;
	}
	rd.probe_ms = deadline_now_ms() - t1;
	check_jails(db, t, &rd, tt, t0);
	if (rep != NULL)
		report(&rd, rep);
	log_msg(LOG_INFO,
	        "evt=probe.round entities=%d busy=%d agents=%d answered=%d agents_busy=%d "
	        "agents_silent=%d jails=%d ms=%lld discover_ms=%lld probe_ms=%lld jail_ms=%lld",
	        rd.written, rd.busy, rd.agents.asked, rd.agents.answered, rd.agents.busy,
	        rd.agents.silent, rd.jails, (long long)(deadline_now_ms() - t0),
	        (long long)(t1 - t0), (long long)rd.probe_ms, (long long)rd.jail_ms);
	free(rd.seen);
	store_clear(rd.res);
	store_close(db);
	return rd.written;
}

int prober_round(const char *conninfo, struct transport *t, bool discover)
{
	return round_with(conninfo, t, NULL, discover, NULL, NULL);
}

int prober_round_report(const char *conninfo, struct transport *t, FILE *out, int *unhealthy)
{
	struct round_report rep = {.out = out};
	int n = round_with(conninfo, t, NULL, false, NULL, &rep);

	*unhealthy = rep.unhealthy;
	return n;
}

static void *run(void *arg)
{
	struct prober *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping) {
		pthread_mutex_unlock(&p->mu);
		round_with(p->conninfo, p->t, p->notifier, p->discover, &p->memo, NULL);
		pthread_mutex_lock(&p->mu);
		int64_t until = deadline_now_ms() + (int64_t)p->interval_s * 1000;
		while (!p->stopping)
			if (deadline_cond_wait(&p->cv, &p->mu, until) != 0)
				break;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct prober *prober_new(const char *conninfo, struct transport *t, int interval_s)
{
	return prober_new_alerting(conninfo, t, interval_s, NULL, false);
}

struct prober *prober_new_alerting(const char *conninfo, struct transport *t, int interval_s,
                                   struct notifier *n, bool discover)
{
	struct prober *p = xcalloc(1, sizeof(*p));

	p->notifier = n;
	p->discover = discover;

	p->conninfo = xstrdup(conninfo);
	p->t = t;
	p->interval_s = interval_s;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, run, p) != 0)
		fatal("evt=probe.thread_failed");
	return p;
}

void prober_free(struct prober *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	memo_free(&p->memo);
	free(p->conninfo);
	free(p);
}
