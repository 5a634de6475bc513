/* probe.c -- probe the estate, node by node, and record what was seen. */
#include "worker/probe.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "transport/shell.h"
#include "worker/agentbatch.h"
#include "worker/bypass.h"
#include "worker/discover.h"
#include "worker/sidedoornote.h"

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
 * is left of ROUND_TARGET_MS, at most JAIL_ROUND_MS; a check starts only
 * when one as long as the longest of the round so far still fits.  The
 * target leaves room below 5 s for a check that takes longer than those
 * before it, on a loaded node.  A round already past its target checks none, except that
 * one check is made when JAIL_STARVED_ROUNDS rounds in a row checked none
 * while checks were due, so that targets whose rounds are always slow are
 * still checked. */
#define ROUND_TARGET_MS     3000
#define JAIL_ROUND_MS       1500
#define JAIL_STARVED_ROUNDS 3

/* When each target's jail was last checked, by slug. */
struct jail_memo {
	char **slug;
	time_t *at;
	size_t n, cap;
	int starved; /* rounds in a row that checked none while checks were due */
};

/* Agents of one node that a round's batch could not decide, handed to the
 * prober's qm lane: asked with qm there, recorded by the prober's thread
 * once qm has answered. */
struct qm_job {
	struct qm_job *next;
	char *name, *address, *user, *host_key; /* the node (transport_node) */
	int port;
	size_t n;
	struct transport_probe *pr;
	char **slug;
	bool running, done;
	int64_t ms; /* how long qm took */
};

struct prober {
	char *conninfo;
	struct transport *t;
	int interval_s;
	pthread_t thread;
	pthread_t lane;         /* runs the qm jobs */
	pthread_mutex_t mu;     /* stopping, jobs */
	pthread_cond_t cv;      /* the prober's thread: stop, or a job done */
	pthread_cond_t lane_cv; /* the lane: stop, or a job queued */
	bool stopping;
	struct qm_job *jobs;       /* queued, running, or done and not recorded yet */
	struct notifier *notifier; /* side-door alerts; NULL: none */
	bool discover;             /* ask the nodes for the cluster's guests first */
	struct jail_memo memo;     /* the prober thread's own */
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

/* Adds one entity's record to a round's list (takes attrs and checks). */
static void add_record(cJSON *records, const char *slug, cJSON *attrs, cJSON *checks)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "slug", slug);
	cJSON_AddItemToObject(r, "attributes", attrs);
	cJSON_AddItemToObject(r, "checks", checks);
	cJSON_AddItemToArray(records, r);
}

/* Writes the records with one statement (airlock.record_probes). */
static void write_records(struct store *db, const cJSON *records)
{
	char lq[512];
	int n = cJSON_GetArraySize(records);
	char *text;
	struct store_res *res;

	if (n == 0)
		return;
	text = cJSON_PrintUnformatted(records);
	res = store_exec(db, "SELECT unnest(airlock.record_probes($1::jsonb))", 1,
	                 (const char *const[]){text});
	if (res == NULL) {
		log_msg(LOG_WARN, "evt=probe.record_failed entities=%d error=%s", n,
		        log_quote(store_errmsg(db), lq, sizeof(lq)));
	} else {
		for (int i = 0; i < store_nrows(res); i++)
			log_msg(LOG_WARN,
			        "evt=probe.record_failed slug=%s error=\"unknown entity: it was "
			        "removed while the round ran\"",
			        log_quote(store_get(res, i, 0), lq, sizeof(lq)));
	}
	store_clear(res);
	free(text);
}

static cJSON *check_row(const char *name, bool ok, const char *detail)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "status", ok ? "ok" : "failing");
	cJSON_AddStringToObject(c, "detail", detail);
	return c;
}

/* The facts of a ready line a probe keeps: the network and the limits (the
 * uid differs at every run). */
static void probe_facts_text(char *out, size_t len, const char *facts)
{
	const char *net = strstr(facts, "net=");

	snprintf(out, len, "%.200s", net ? net : facts);
}

/* Builds the jail on the target, the user tier then the root tier (the
 * write tier is the root tier with paths made writable), around `true`:
 * "full" (both tiers), "user-tier" (the root tiers cannot be bounded there:
 * no cgroup), "none" (no jail: what nobody approved goes to a human).  NULL
 * when the target could not be asked (detail says why): nothing is recorded
 * then.  The first check installs the helper where it is missing. */
static const char *probe_jail(struct transport *t, const struct transport_node *node,
                              enum target_type tt, int vmid, char *detail, size_t detaillen)
{
	enum transport_jail tiers[] = {TRANSPORT_JAIL_USER, TRANSPORT_JAIL_ROOT};
	bool built[2] = {false, false};
	char why[2][260] = {"", ""}, facts[2][210] = {"", ""};

	for (int k = 0; k < 2; k++) {
		struct transport_limits lim = {.timeout_ms = PROBE_TIMEOUT_MS, .jail = tiers[k]};
		struct transport_result r;
		transport_exec(t, node, tt, vmid, "true", &lim, &r);
		if (r.status == TRANSPORT_EXITED && r.exit_code == 0) {
			built[k] = true;
			probe_facts_text(facts[k], sizeof(facts[k]), r.jail_facts);
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
		snprintf(detail, detaillen, "jail: user and root tiers (%s)", facts[1]);
		return "full";
	}
	if (built[0]) {
		snprintf(detail, detaillen, "jail: user tier only (%.120s); root tier: %.160s",
		         facts[0], why[1]);
		return "user-tier";
	}
	snprintf(detail, detaillen, "no jail: %.280s", why[0]);
	return "none";
}

/* The shell check's text into text: what the target's commands run under,
 * or why nothing runs there and what to do. */
static const char *sh_text(const struct transport_shell *sh, char *text, size_t len)
{
	if (sh->state == TRANSPORT_SHELL_BASH)
		snprintf(text, len, "%s", sh->detail);
	else
		snprintf(
		    text, len,
		    "no bash: %s. Nothing runs here: airlock runs every command under " SHELL_PATH
		    ", the shell its classifier judges. Install bash (apt-get install bash; "
		    "Alpine: apk add bash); the next probe, within %d minutes, lets commands "
		    "through",
		    sh->detail, JAIL_RETRY_S / 60);
	return text;
}

/* The scheduler-owned `shell` attribute: {"state", "path", "version", "sh"},
 * the facts the shell check row says in words (empty facts left out). */
static cJSON *shell_attr(const struct transport_shell *sh)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "state", transport_shell_state_name(sh->state));
	if (sh->state == TRANSPORT_SHELL_BASH && sh->bash_path[0])
		cJSON_AddStringToObject(o, "path", sh->bash_path);
	if (sh->state == TRANSPORT_SHELL_BASH && sh->bash_version[0])
		cJSON_AddStringToObject(o, "version", sh->bash_version);
	if (sh->sh[0])
		cJSON_AddStringToObject(o, "sh", sh->sh);
	return o;
}

/* What a probe saw, as its entity's attributes and checks (a host's
 * side-door checks are the caller's); detail: the check's text. */
static void probe_facts(const struct transport_probe *pr, const char *detail, const char *now,
                        cJSON *attrs, cJSON *checks)
{
	bool ok = pr->state == TRANSPORT_PROBE_OK;

	if (pr->state == TRANSPORT_PROBE_UNREACHABLE) {
		/* The node could not be asked: we know nothing new about the guest. */
		if (pr->kind == TRANSPORT_PROBE_HOST)
			cJSON_AddFalseToObject(attrs, "reachable");
		cJSON_AddItemToArray(checks, check_row("ssh", false, detail));
	} else if (pr->kind == TRANSPORT_PROBE_AGENT) {
		const char *attr = transport_agent_attr(pr->state);
		if (attr)
			cJSON_AddStringToObject(attrs, "qemu_guest_agent", attr);
		cJSON_AddItemToArray(checks, check_row("guest-agent", ok, detail));
	} else if (pr->kind == TRANSPORT_PROBE_CT) {
		if (pr->state == TRANSPORT_PROBE_OK || pr->state == TRANSPORT_PROBE_NOT_RUNNING)
			cJSON_AddStringToObject(attrs, "container_status",
			                        ok ? "running" : "stopped");
		cJSON_AddItemToArray(checks, check_row("container", ok, detail));
	} else {
		cJSON_AddBoolToObject(attrs, "reachable", ok);
		cJSON_AddItemToArray(checks, check_row("ssh", ok, detail));
	}
	cJSON_AddStringToObject(attrs, "health", ok ? "healthy" : "unhealthy");
	cJSON_AddStringToObject(attrs, "last_probe", now);
}

static void probe_detail(const struct transport_probe *pr, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s%s%s", transport_probe_state_name(pr->state),
	         pr->detail[0] ? ": " : "", pr->detail);
}

static void utc_now(char *now, size_t len)
{
	time_t tt = time(NULL);
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(now, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- the qm lane
 *
 * An agent the batch could not decide (its socket busy or silent, or no
 * socket at all) is asked with qm, which waits its turn on the agent's
 * socket and, for an agent that stays silent, gives up after its own 3 s.
 * Waiting for that inside the round made a round with one hung agent 3 s
 * longer.  With a prober thread, those agents are handed to its lane
 * instead: one thread that asks them with qm (transport_probe, bounded by
 * PROBE_TIMEOUT_MS) while the round goes on, after which the prober's
 * thread records what qm said as soon as it is idle (or at the start of the
 * next round).  Until then an agent handed to the lane is left out of every
 * round (not asked, not recorded: its last record stands), so it is never
 * asked twice at once and never recorded twice.  A round on the caller's
 * thread (prober_round, --probe-once) has no lane and waits for qm. */

static void job_free(struct qm_job *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->slug[i]);
	free(j->slug);
	free(j->pr);
	free(j->name);
	free(j->address);
	free(j->user);
	free(j->host_key);
	free(j);
}

static struct transport_node job_node(const struct qm_job *j)
{
	struct transport_node node = {.name = j->name,
	                              .address = j->address,
	                              .port = j->port,
	                              .user = j->user,
	                              .host_key_sha256 = j->host_key};
	return node;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* Queues a job for the lane (takes pr and slug). */
static void lane_add(struct prober *p, const struct transport_node *node,
                     struct transport_probe *pr, char **slug, size_t n)
{
	struct qm_job *j = xcalloc(1, sizeof(*j)), **tail;

	j->name = xstrdup(node->name);
	j->address = xstrdup(node->address);
	j->user = dup_or_null(node->user);
	j->host_key = dup_or_null(node->host_key_sha256);
	j->port = node->port;
	j->pr = pr;
	j->slug = slug;
	j->n = n;
	pthread_mutex_lock(&p->mu);
	for (tail = &p->jobs; *tail; tail = &(*tail)->next)
		;
	*tail = j;
	pthread_cond_signal(&p->lane_cv);
	pthread_mutex_unlock(&p->mu);
}

static void *lane_run(void *arg)
{
	struct prober *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping) {
		struct qm_job *j = p->jobs;
		while (j != NULL && (j->running || j->done))
			j = j->next;
		if (j == NULL) {
			deadline_cond_wait(&p->lane_cv, &p->mu, deadline_now_ms() + 60000);
			continue;
		}
		j->running = true;
		pthread_mutex_unlock(&p->mu);
		struct transport_node node = job_node(j);
		int64_t t0 = deadline_now_ms();
		transport_probe(p->t, &node, j->pr, j->n, PROBE_TIMEOUT_MS);
		j->ms = deadline_now_ms() - t0;
		pthread_mutex_lock(&p->mu);
		j->done = true;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static bool lane_has_done(struct prober *p)
{
	for (const struct qm_job *j = p->jobs; j; j = j->next)
		if (j->done)
			return true;
	return false;
}

/* Records the jobs the lane has finished, on db (NULL: a connection of its
 * own).  On the prober's thread. */
static void lane_record(struct prober *p, struct store *db)
{
	struct qm_job *done = NULL, **at, **tail = &done;
	struct store *own = NULL;
	char now[32], err[1024], lq[512];

	pthread_mutex_lock(&p->mu);
	for (at = &p->jobs; *at;) {
		struct qm_job *j = *at;
		if (!j->done) {
			at = &j->next;
			continue;
		}
		*at = j->next;
		j->next = NULL;
		*tail = j;
		tail = &j->next;
	}
	pthread_mutex_unlock(&p->mu);
	if (done == NULL)
		return;
	if (db == NULL) {
		own = db = store_open(p->conninfo, "airlockd-probe", err, sizeof(err));
		if (db == NULL)
			log_msg(LOG_WARN,
			        "evt=probe.connect_failed error=%s note=\"what qm said is dropped; "
			        "the next round asks again\"",
			        log_quote(err, lq, sizeof(lq)));
	}
	utc_now(now, sizeof(now));
	while (done != NULL) {
		struct qm_job *j = done;
		cJSON *records = cJSON_CreateArray();
		int running = 0, not_running = 0;
		done = j->next;
		for (size_t i = 0; i < j->n; i++) {
			char detail[320];
			cJSON *attrs = cJSON_CreateObject(), *checks = cJSON_CreateArray();
			bool ok = j->pr[i].state == TRANSPORT_PROBE_OK;
			time_t *memo = ok ? NULL : memo_slot(&p->memo, j->slug[i], false);
			if (memo)
				*memo = 0; /* failed in between: check again once it is back */
			running += ok;
			not_running += j->pr[i].state == TRANSPORT_PROBE_NOT_RUNNING;
			probe_detail(&j->pr[i], detail, sizeof(detail));
			probe_facts(&j->pr[i], detail, now, attrs, checks);
			add_record(records, j->slug[i], attrs, checks);
		}
		if (db != NULL)
			write_records(db, records);
		log_msg(LOG_INFO,
		        "evt=probe.qm_done node=%s agents=%zu running=%d not_running=%d ms=%lld "
		        "recorded=%s",
		        j->name, j->n, running, not_running, (long long)j->ms,
		        db != NULL ? "yes" : "no");
		cJSON_Delete(records);
		job_free(j);
	}
	store_close(own);
}

/* The slugs handed to the lane and not recorded yet, for a round. */
static char **lane_pending(struct prober *p, size_t *n)
{
	char **out = NULL;
	size_t k = 0, cap = 0;

	pthread_mutex_lock(&p->mu);
	for (const struct qm_job *j = p->jobs; j; j = j->next)
		for (size_t i = 0; i < j->n; i++) {
			if (k == cap) {
				cap = cap ? 2 * cap : 16;
				out = xrealloc(out, cap * sizeof(*out));
			}
			out[k++] = xstrdup(j->slug[i]);
		}
	pthread_mutex_unlock(&p->mu);
	*n = k;
	return out;
}

/* What one round saw, for `airlockd --probe-once`; out NULL: not reported. */
struct round_report {
	FILE *out;
	int unhealthy;
};

/* One entity's outcome in this round (a row of the round's query). */
struct seen {
	bool skip;        /* not asked or not decided this round: its last record stands */
	bool written;     /* its probe was recorded */
	bool ok;          /* healthy */
	char detail[320]; /* what the probe saw */
	const char *jail; /* the jail check's tier; NULL: not checked this round */
	char jail_detail[320];
	const char *shell; /* the shell check's state (transport_shell); NULL: not checked */
	char shell_detail[400];
	enum target_type type;
	int vmid;
};

/* What the round did, for its log line. */
struct round {
	struct store_res *res; /* the entities, grouped by node */
	struct seen *seen;     /* one per row of res */
	struct jail_memo *memo;
	struct notifier *nt;
	struct prober *lane; /* hands undecided agents to the qm lane; NULL: waits for qm */
	char **pending;      /* slugs the lane has, from an earlier round */
	size_t npending;
	cJSON *records; /* the round's records, written at once */
	struct agentbatch_stats agents;
	int written, busy, jails, qm_later, qm_waiting;
	int64_t probe_ms, jail_ms;
};

static bool is_pending(const struct round *rd, const char *slug)
{
	for (size_t i = 0; i < rd->npending; i++)
		if (strcmp(rd->pending[i], slug) == 0)
			return true;
	return false;
}

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
 * those cannot tell one qm/pct command each (agents in the lane, when the
 * round has one).  A guest airlock is running a command on right now (busy)
 * is not asked: its agent is the command's; nor is one the lane is still
 * asking. */
static void ask_node(struct transport *t, struct round *rd, const struct transport_node *node,
                     int from, int n, struct transport_probe *pr, bool *done)
{
	struct transport_probe *rest = xcalloc((size_t)n, sizeof(*rest));
	struct transport_probe *later = NULL;
	char **later_slug = NULL;
	int *idx = xcalloc((size_t)n, sizeof(*idx));
	bool *silent = xcalloc((size_t)n, sizeof(*silent));
	size_t k = 0, nl = 0;

	for (int i = 0; i < n; i++) {
		const char *type = store_get(rd->res, from + i, 2);
		pr[i].kind = strcmp(type, "vm") == 0    ? TRANSPORT_PROBE_AGENT
		             : strcmp(type, "lxc") == 0 ? TRANSPORT_PROBE_CT
		                                        : TRANSPORT_PROBE_HOST;
		pr[i].vmid =
		    store_isnull(rd->res, from + i, 3) ? 0 : atoi(store_get(rd->res, from + i, 3));
		done[i] = strcmp(store_get(rd->res, from + i, 8), "t") == 0;
		rd->busy += done[i];
		if (!done[i] && is_pending(rd, store_get(rd->res, from + i, 0))) {
			done[i] = true;
			rd->qm_waiting++;
		}
		rd->seen[from + i].skip = done[i];
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
		if (done[i])
			continue;
		if (rd->lane != NULL && pr[i].kind == TRANSPORT_PROBE_AGENT) {
			if (later == NULL) {
				later = xcalloc((size_t)n, sizeof(*later));
				later_slug = xcalloc((size_t)n, sizeof(*later_slug));
			}
			later_slug[nl] = xstrdup(store_get(rd->res, from + i, 0));
			later[nl++] = pr[i];
			done[i] = true;
			rd->seen[from + i].skip = true;
			continue;
		}
		idx[k] = i;
		rest[k++] = pr[i];
	}
	if (nl > 0) {
		rd->qm_later += (int)nl;
		lane_add(rd->lane, node, later, later_slug, nl);
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

/* Probes one node's host and guests and adds what was seen to the round's
 * records. */
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
		if (sn->skip)
			continue; /* nothing new is known (yet): the last record stands */
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
		probe_detail(&pr[i], sn->detail, sizeof(sn->detail));
		probe_facts(&pr[i], sn->detail, now, attrs, checks);
		if (ok && pr[i].kind == TRANSPORT_PROBE_HOST)
			/* what went around the gate on this node (bypass.h) */
			bypass_checks(db, t, &node, slug, rd->nt, checks);
		add_record(rd->records, slug, attrs, checks);
		sn->written = true;
		rd->written++;
	}
	free(pr);
	free(done);
}

/* The read-only jail checks due this round, after every probe is recorded,
 * within the budget above (the round began at round_t0), so that hundreds
 * of new targets are checked over the rounds that follow instead of holding
 * up the one that found them.  Their records are written together. */
static void check_jails(struct store *db, struct transport *t, struct round *rd, time_t tt,
                        int64_t round_t0)
{
	int64_t t0 = deadline_now_ms();
	int64_t left = ROUND_TARGET_MS - (t0 - round_t0);
	int64_t budget = left < 0 ? 0 : left > JAIL_ROUND_MS ? JAIL_ROUND_MS : left;
	cJSON *records = cJSON_CreateArray();
	bool due = false;    /* a check was due and not made */
	int64_t longest = 0; /* the longest check of this round so far */

	for (int row = 0; row < store_nrows(rd->res); row++) {
		struct seen *sn = &rd->seen[row];
		const char *slug = store_get(rd->res, row, 0);
		if (!sn->written || !sn->ok || !jail_due(rd->memo, slug, tt))
			continue;
		/* Without a memo (one round on demand) the first check is always
		 * made; with one, only within the budget or when starved. */
		bool first_anyway = rd->memo == NULL || rd->memo->starved >= JAIL_STARVED_ROUNDS;
		/* A check starts only if one as long as the longest so far still
		 * fits in the budget: a check is two commands in the target, which
		 * on a loaded node may take a second or more. */
		if (rd->jails >= JAIL_CHECKS_PER_ROUND ||
		    ((rd->jails > 0 || !first_anyway) &&
		     deadline_now_ms() - t0 + longest >= budget)) {
			due = true;
			break;
		}
		struct transport_node node = node_of(rd->res, row);
		rd->jails++;
		int64_t c0 = deadline_now_ms();
		/* The shell first: a target without bash runs nothing, the jail's
		 * `true` included (its commands are refused until it has one). */
		struct transport_shell sh;
		transport_shell_probe(t, &node, sn->type, sn->vmid, PROBE_TIMEOUT_MS, &sh);
		sn->shell = transport_shell_state_name(sh.state);
		snprintf(sn->shell_detail, sizeof(sn->shell_detail), "%s", sh.detail);
		sn->jail = sh.state != TRANSPORT_SHELL_BASH
		               ? NULL
		               : probe_jail(t, &node, sn->type, sn->vmid, sn->jail_detail,
		                            sizeof(sn->jail_detail));
		if (deadline_now_ms() - c0 > longest)
			longest = deadline_now_ms() - c0;
		/* No bash, or no answer: asked again sooner, so that a target that
		 * got bash runs commands within JAIL_RETRY_S. */
		if (rd->memo)
			*memo_slot(rd->memo, slug, true) =
			    sn->jail ? tt : tt - JAIL_RECHECK_S + JAIL_RETRY_S;
		if (sh.state == TRANSPORT_SHELL_UNKNOWN)
			continue;
		cJSON *attrs = cJSON_CreateObject(), *checks = cJSON_CreateArray();
		char text[700];
		cJSON_AddItemToArray(checks, check_row("shell", sh.state == TRANSPORT_SHELL_BASH,
		                                       sh_text(&sh, text, sizeof(text))));
		cJSON_AddItemToObject(attrs, "shell", shell_attr(&sh));
		if (sn->jail != NULL) {
			cJSON_AddStringToObject(attrs, "confinement", sn->jail);
			cJSON_AddItemToArray(checks,
			                     check_row("confinement", strcmp(sn->jail, "full") == 0,
			                               sn->jail_detail));
		}
		add_record(records, slug, attrs, checks);
	}
	if (rd->memo)
		rd->memo->starved = rd->jails == 0 && due ? rd->memo->starved + 1 : 0;
	write_records(db, records);
	cJSON_Delete(records);
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
		char sq[500];
		fprintf(rep->out,
		        "%s health=%s confinement=%s detail=%s shell=%s shell_detail=%s\n",
		        store_get(rd->res, row, 0), sn->ok ? "healthy" : "unhealthy",
		        sn->jail ? sn->jail : "-", log_quote(sn->detail, q, sizeof(q)),
		        sn->shell ? sn->shell : "-",
		        log_quote(sn->shell ? sn->shell_detail : "-", sq, sizeof(sq)));
	}
}

/* One round.  lane: the prober whose qm lane asks the agents the batch
 * could not decide, and whose memo of jail checks is used (NULL: qm is
 * waited for, no memo). */
static int round_with(const char *conninfo, struct transport *t, struct notifier *nt, bool discover,
                      struct prober *lane, struct round_report *rep)
{
	int64_t t0 = deadline_now_ms(), t1, t2;
	char lq[512];
	char err[1024];
	char now[32];
	time_t tt = time(NULL);
	struct store *db = store_open(conninfo, "airlockd-probe", err, sizeof(err));
	struct round rd = {.memo = lane ? &lane->memo : NULL, .nt = nt, .lane = lane};

	if (db == NULL) {
		log_msg(LOG_WARN, "evt=probe.connect_failed error=%s",
		        log_quote(err, lq, sizeof(lq)));
		return -1;
	}
	utc_now(now, sizeof(now));
	if (lane != NULL) {
		/* What the lane found since: recorded before the round reads the
		 * estate; what it is still asking is left out of this round. */
		lane_record(lane, db);
		rd.pending = lane_pending(lane, &rd.npending);
	}
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
		for (size_t i = 0; i < rd.npending; i++)
			free(rd.pending[i]);
		free(rd.pending);
		store_close(db);
		return -1;
	}
	rd.seen = xcalloc((size_t)store_nrows(rd.res) + 1, sizeof(*rd.seen));
	rd.records = cJSON_CreateArray();
	for (int from = 0, i = 1; from < store_nrows(rd.res); i++) {
		if (i < store_nrows(rd.res) &&
		    strcmp(store_get(rd.res, i, 1), store_get(rd.res, from, 1)) == 0)
			continue;
		probe_node(db, t, &rd, from, i, now);
		from = i;
	}
	t2 = deadline_now_ms();
	write_records(db, rd.records);
	rd.probe_ms = deadline_now_ms() - t1;
	if (lane != NULL)
		lane_record(lane, db); /* what qm said meanwhile, before the jail checks */
	check_jails(db, t, &rd, tt, t0);
	/* what agents' hosts reported since: one notice per host at most every
	 * notifications.side_door_interval_s */
	if (nt != NULL)
		sidedoor_notify(db, nt);
	if (rep != NULL)
		report(&rd, rep);
	log_msg(LOG_INFO,
	        "evt=probe.round entities=%d busy=%d agents=%d answered=%d agents_busy=%d "
	        "agents_silent=%d jails=%d ms=%lld discover_ms=%lld probe_ms=%lld jail_ms=%lld "
	        "record_ms=%lld qm_later=%d qm_waiting=%d",
	        rd.written, rd.busy, rd.agents.asked, rd.agents.answered, rd.agents.busy,
	        rd.agents.silent, rd.jails, (long long)(deadline_now_ms() - t0),
	        (long long)(t1 - t0), (long long)rd.probe_ms, (long long)rd.jail_ms,
	        (long long)(t1 + rd.probe_ms - t2), rd.qm_later, rd.qm_waiting);
	for (size_t i = 0; i < rd.npending; i++)
		free(rd.pending[i]);
	free(rd.pending);
	cJSON_Delete(rd.records);
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
		round_with(p->conninfo, p->t, p->notifier, p->discover, p, NULL);
		pthread_mutex_lock(&p->mu);
		int64_t until = deadline_now_ms() + (int64_t)p->interval_s * 1000;
		while (!p->stopping) {
			if (lane_has_done(p)) {
				/* qm answered for agents of an earlier round: recorded now,
				 * not at the next round. */
				pthread_mutex_unlock(&p->mu);
				lane_record(p, NULL);
				pthread_mutex_lock(&p->mu);
				continue;
			}
			if (deadline_cond_wait(&p->cv, &p->mu, until) != 0)
				break;
		}
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
	pthread_cond_init(&p->lane_cv, NULL);
	if (pthread_create(&p->lane, NULL, lane_run, p) != 0)
		fatal("evt=probe.thread_failed");
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
	pthread_cond_broadcast(&p->lane_cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	/* The lane ends its job in hand (bounded by PROBE_TIMEOUT_MS) and starts
	 * no other; what it found is not recorded. */
	pthread_join(p->lane, NULL);
	while (p->jobs != NULL) {
		struct qm_job *j = p->jobs;
		p->jobs = j->next;
		job_free(j);
	}
	pthread_cond_destroy(&p->lane_cv);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	memo_free(&p->memo);
	free(p->conninfo);
	free(p);
}
