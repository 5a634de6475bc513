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
                              const char *type, int vmid, char *detail, size_t detaillen)
{
	enum target_type tt = strcmp(type, "vm") == 0    ? TARGET_VM
	                      : strcmp(type, "lxc") == 0 ? TARGET_LXC
	                                                 : TARGET_PROXMOX_HOST;
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

/* Probes one node's host and guests (rows [from, to) of res share the node). */
static int probe_node(struct store *db, struct transport *t, struct notifier *nt,
                      struct jail_memo *memo, int *jail_budget, struct store_res *res, int from,
                      int to, struct round_report *rep)
{
	int n = to - from;
	struct transport_probe *pr = xcalloc((size_t)n, sizeof(*pr));
	bool *done = xcalloc((size_t)n, sizeof(*done));
	struct transport_node node = {
	    .name = name_of(store_get(res, from, 1)),
	    .address = store_get(res, from, 4),
	    .port = atoi(store_get(res, from, 5)),
	    .user = store_isnull(res, from, 6) ? NULL : store_get(res, from, 6),
	    .host_key_sha256 = store_isnull(res, from, 7) ? NULL : store_get(res, from, 7),
	};
	char now[32];
	time_t tt = time(NULL);
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (int i = 0; i < n; i++) {
		const char *type = store_get(res, from + i, 2);
		pr[i].kind = strcmp(type, "vm") == 0    ? TRANSPORT_PROBE_AGENT
		             : strcmp(type, "lxc") == 0 ? TRANSPORT_PROBE_CT
		                                        : TRANSPORT_PROBE_HOST;
		pr[i].vmid = store_isnull(res, from + i, 3) ? 0 : atoi(store_get(res, from + i, 3));
	}
	/* Every container's state in one command (agentbatch.h); guest agents
	 * and the host one command each, through qm.  The batched agent probe
	 * (agentbatch_probe) opens the agents' sockets directly, and an agent
	 * serves one client at a time: it took the agent from commands airlock
	 * was running, so it stays off until it waits its turn as qm does. */
	agentbatch_cts(t, &node, pr, done, (size_t)n, PROBE_TIMEOUT_MS);
	{
		struct transport_probe *rest = xcalloc((size_t)n, sizeof(*rest));
		int *idx = xcalloc((size_t)n, sizeof(*idx));
		size_t k = 0;
		for (int i = 0; i < n; i++)
			if (!done[i]) {
				idx[k] = i;
				rest[k++] = pr[i];
			}
		if (k > 0)
			transport_probe(t, &node, rest, k, PROBE_TIMEOUT_MS);
		for (size_t j = 0; j < k; j++)
			pr[idx[j]] = rest[j];
		free(rest);
		free(idx);
	}
	for (int i = 0; i < n; i++) {
		char jail_detail[320] = "";
		const char *jail = NULL;
		const char *target = store_get(res, from + i, 0);
		if (pr[i].state != TRANSPORT_PROBE_OK && memo) {
			time_t *at = memo_slot(memo, target, false);
			if (at)
				*at = 0; /* failed in between: check again once it is back */
		}
		if (pr[i].state == TRANSPORT_PROBE_OK && *jail_budget > 0 &&
		    jail_due(memo, target, tt)) {
			(*jail_budget)--;
			jail = probe_jail(t, &node, store_get(res, from + i, 2), pr[i].vmid,
			                  jail_detail, sizeof(jail_detail));
			if (memo)
				*memo_slot(memo, target, true) =
				    jail ? tt : tt - JAIL_RECHECK_S + JAIL_RETRY_S;
		}
		const char *slug = store_get(res, from + i, 0);
		cJSON *attrs = cJSON_CreateObject(), *checks = cJSON_CreateArray();
		bool ok = pr[i].state == TRANSPORT_PROBE_OK;
		char detail[320];
		snprintf(detail, sizeof(detail), "%s%s%s", transport_probe_state_name(pr[i].state),
		         pr[i].detail[0] ? ": " : "", pr[i].detail);
		if (pr[i].state == TRANSPORT_PROBE_UNREACHABLE) {
			/* The node could not be asked: we know nothing new about the guest. */
			if (pr[i].kind == TRANSPORT_PROBE_HOST)
				cJSON_AddFalseToObject(attrs, "reachable");
			cJSON_AddItemToArray(checks, check_row("ssh", false, detail));
		} else if (pr[i].kind == TRANSPORT_PROBE_AGENT) {
			const char *attr = transport_agent_attr(pr[i].state);
			if (attr)
				cJSON_AddStringToObject(attrs, "qemu_guest_agent", attr);
			cJSON_AddItemToArray(checks, check_row("guest-agent", ok, detail));
		} else if (pr[i].kind == TRANSPORT_PROBE_CT) {
			if (pr[i].state == TRANSPORT_PROBE_OK ||
			    pr[i].state == TRANSPORT_PROBE_NOT_RUNNING)
				cJSON_AddStringToObject(attrs, "container_status",
				                        ok ? "running" : "stopped");
			cJSON_AddItemToArray(checks, check_row("container", ok, detail));
		} else {
			cJSON_AddBoolToObject(attrs, "reachable", ok);
			cJSON_AddItemToArray(checks, check_row("ssh", ok, detail));
			if (ok) /* what went around the gate on this node (bypass.h) */
				bypass_checks(db, t, &node, slug, nt, checks);
		}
		if (jail) {
			cJSON_AddStringToObject(attrs, "confinement", jail);
			cJSON_AddItemToArray(
			    checks,
			    check_row("confinement", strcmp(jail, "full") == 0, jail_detail));
		}
		cJSON_AddStringToObject(attrs, "health", ok ? "healthy" : "unhealthy");
		if (rep != NULL) {
			char q[400];
			rep->unhealthy += !ok;
			fprintf(rep->out, "%s health=%s confinement=%s detail=%s\n", slug,
			        ok ? "healthy" : "unhealthy", jail ? jail : "-",
			        log_quote(detail, q, sizeof(q)));
		}
		cJSON_AddStringToObject(attrs, "last_probe", now);
		write_probe(db, slug, attrs, checks);
		cJSON_Delete(attrs);
		cJSON_Delete(checks);
	}
	free(pr);
	free(done);
	return n;
}

static int round_with(const char *conninfo, struct transport *t, struct notifier *nt, bool discover,
                      struct jail_memo *memo, struct round_report *rep)
{
	int64_t t0 = deadline_now_ms();
	int jail_budget = JAIL_CHECKS_PER_ROUND;
	char lq[512];
	char err[1024];
	struct store *db = store_open(conninfo, "airlockd-probe", err, sizeof(err));
	struct store_res *res;
	int written = 0;

	if (db == NULL) {
		log_msg(LOG_WARN, "evt=probe.connect_failed error=%s",
		        log_quote(err, lq, sizeof(lq)));
		return -1;
	}
	/* The estate first: the probes below then ask each guest's node as
	 * discovery found it (a migrated VM is probed where it runs now), and
	 * a guest that is gone is not probed. */
	if (discover)
		discover_round(db, t, NULL);
	/* Every entity with its node's connection facts, grouped by node. */
	res = store_exec(
	    db,
	    "SELECT e.slug, h.slug, e.type, e.vmid, h.address, coalesce(h.port, 22), "
	    " h.ssh_user, h.host_key_fingerprint "
	    "FROM airlock.entities e JOIN airlock.entities h ON h.slug = coalesce(e.node, e.slug) "
	    "WHERE e.gone_at IS NULL "
	    "ORDER BY h.slug, e.type <> 'proxmox-host', e.slug",
	    0, NULL);
	if (res == NULL) {
		log_msg(LOG_WARN, "evt=probe.read_failed error=%s",
		        log_quote(store_errmsg(db), lq, sizeof(lq)));
		store_close(db);
		return -1;
	}
	for (int from = 0, i = 1; from < store_nrows(res); i++) {
		if (i < store_nrows(res) &&
		    strcmp(store_get(res, i, 1), store_get(res, from, 1)) == 0)
			continue;
		written += probe_node(db, t, nt, memo, &jail_budget, res, from, i, rep);
		from = i;
	}
	store_clear(res);
	store_close(db);
	log_msg(LOG_INFO, "evt=probe.round entities=%d jails=%d ms=%lld", written,
	        JAIL_CHECKS_PER_ROUND - jail_budget, (long long)(deadline_now_ms() - t0));
	return written;
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
