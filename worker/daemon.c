/* daemon.c -- airlockd's threads and its main loop. */
#include "worker/daemon.h"

#include "lib/sqlstate.h"
#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/queue.h"
#include "store/schema.h"
#include "worker/anchorer.h"
#include "worker/sealer.h"
#include "worker/durability.h"
#include "worker/flrwatch.h"
#include "worker/metrics.h"
#include "worker/pipeline.h"
#include "worker/probe.h"
#include "worker/sdnotify.h"

#include <stdio.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every session of the daemon, also after a reconnect (store_reset): a
 * commit is durable before it returns (the commit that marks a row running
 * must survive a crash of the database).  The store bounds every statement
 * (STORE_STATEMENT_TIMEOUT). */
#define DAEMON_SESSION_OPTIONS "-c synchronous_commit=on"
/* Row ids a daemon keeps from wake-ups until a worker is free. */
#define DAEMON_HINTS_MAX 4096
/* Bytes of wake-up documents kept with them; past it only the ids are kept
 * (such a row is claimed the usual way). */
#define DAEMON_HINT_DOC_BYTES (4 << 20)
/* A notification's payload is shorter than 8000 bytes. */
#define DAEMON_PAYLOAD_MAX 8192

/* How long another daemon may go unseen (its reaper not run) before its
 * rows are taken for dead, and how long after the database server started
 * no other daemon's row is: time for a live daemon to reconnect after a
 * restart or a failover and take its rows back. */
#define DAEMON_REAP_GRACE_MS 15000
/* A gain of the database's clock over the daemon's monotonic one larger
 * than this is a forward step of that clock (NTP after a long drift, a
 * restore, an operator). */
#define DAEMON_CLOCK_STEP_MS 60000

struct wthread {
	struct daemon *d;
	int index;
	pthread_t thread;
	bool started;
	/* The row this thread works on now, 0 when none: the reaper leaves
	 * such a row to it, whatever happened to its session. */
	_Atomic int64_t working;
};

struct daemon {
	struct config *cfg;
	struct store *listen; /* LISTEN, reap, expire: never holds an execution lock */
	struct policyset *policies;
	struct guard *guard;
	struct targets *targets;
	struct notifier *notifier;
	struct metrics *metrics; /* NULL: no metrics section configured */
	struct slots *node_slots;
	struct prober *prober;     /* NULL: no scheduler_database configured */
	struct flrwatch *flrwatch; /* NULL: no scheduler_database or no zerto section */
	struct anchorer *anchorer; /* NULL: no audit section configured */
	struct sealer *sealer;     /* seals new events into the audit chain */
	struct durability *durability;
	struct pipeline_env env;

	pthread_mutex_t mu;
	pthread_cond_t wake;
	unsigned long wake_gen;
	/* Row ids named by wake-ups on this daemon's own channel, oldest first,
	 * waiting for a worker (under mu), each with the payload when it holds
	 * the row's wake-up document (else NULL).  A full ring drops the
	 * newest: its row is still claimed by the plain claim that every claim
	 * falls back to. */
	int64_t hints[DAEMON_HINTS_MAX];
	char *hint_docs[DAEMON_HINTS_MAX];
	size_t hint_doc_bytes;
	unsigned hint_head, hint_count;
	/* Claims of any row asked for by wake-ups that named none (under mu;
	 * at most nthreads).  With named wake-ups a worker claims only a named
	 * row, or any row when asked to, or after poll_interval_ms. */
	int plain_wanted;
	char channel[64]; /* the secret wake-up channel; "" when none (listen thread only) */
	atomic_bool named_wakeups; /* channel is set: read by the workers */
	atomic_bool stopping;      /* read by every worker thread */
	atomic_bool cancel;

	struct wthread *threads;
	int nthreads;

	/* The database's clock as last read on the listening session, with the
	 * daemon's monotonic clock then (listen thread only). */
	bool clock_set;
	int64_t clock_db_ms, clock_mono_ms;
	char clock_db_text[48];
};

/* Wakes up to n idle workers; called with d->mu held. */
static void signal_workers(struct daemon *d, int n)
{
	d->wake_gen++;
	if (n >= d->nthreads)
		pthread_cond_broadcast(&d->wake);
	else
		for (int i = 0; i < n; i++)
			pthread_cond_signal(&d->wake);
}

/* Wakes up to n idle workers for a claim of any row (one per new row is
 * enough: a worker that claims something keeps claiming until the queue is
 * empty). */
static void wake_workers(struct daemon *d, int n)
{
	pthread_mutex_lock(&d->mu);
	d->plain_wanted = d->plain_wanted + n < d->nthreads ? d->plain_wanted + n : d->nthreads;
	signal_workers(d, n);
	pthread_mutex_unlock(&d->mu);
}

/* Keeps the row ids of targeted wake-ups (with their payloads when they
 * hold a document, whose ownership passes to the ring) and wakes one idle
 * worker per id. */
static void wake_for_rows(struct daemon *d, const int64_t *ids, char **docs, int n)
{
	pthread_mutex_lock(&d->mu);
	for (int i = 0; i < n; i++) {
		if (d->hint_count == DAEMON_HINTS_MAX) {
			/* Its row is for a claim of any row to find. */
			free(docs[i]);
			if (d->plain_wanted < d->nthreads)
				d->plain_wanted++;
			continue;
		}
		unsigned at = (d->hint_head + d->hint_count) % DAEMON_HINTS_MAX;
		if (docs[i] && d->hint_doc_bytes + strlen(docs[i]) > DAEMON_HINT_DOC_BYTES) {
			free(docs[i]);
			docs[i] = NULL;
		}
		d->hints[at] = ids[i];
		d->hint_docs[at] = docs[i];
		if (docs[i])
			d->hint_doc_bytes += strlen(docs[i]);
		d->hint_count++;
	}
	signal_workers(d, n);
	pthread_mutex_unlock(&d->mu);
}

/* The oldest row id a wake-up named, 0 when none waits; *doc gets its
 * payload when it holds a document (the caller frees it), else NULL.
 * Under d->mu. */
static int64_t take_hint(struct daemon *d, char **doc)
{
	int64_t id;

	*doc = NULL;
	if (d->hint_count == 0)
		return 0;
	id = d->hints[d->hint_head];
	*doc = d->hint_docs[d->hint_head];
	d->hint_docs[d->hint_head] = NULL;
	if (*doc)
		d->hint_doc_bytes -= strlen(*doc);
	d->hint_head = (d->hint_head + 1) % DAEMON_HINTS_MAX;
	d->hint_count--;
	return id;
}

/* Waits for a wake-up or the backstop poll interval; true when the interval
 * passed without one. */
static bool idle_wait(struct daemon *d, unsigned long seen)
{
	int64_t until = deadline_now_ms() + d->cfg->poll_interval_ms;
	bool timed_out = false;

	pthread_mutex_lock(&d->mu);
	while (d->wake_gen == seen && !atomic_load(&d->stopping))
		if (deadline_cond_wait(&d->wake, &d->mu, until) == ETIMEDOUT) {
			timed_out = d->wake_gen == seen;
			break;
		}
	pthread_mutex_unlock(&d->mu);
	return timed_out;
}

/* Every new session of the daemon, before anything is claimed on it: the
 * server it reached is checked (durability_session_check: mutations are
 * held until that passes, and another server than before is logged), then
 * the session takes the commit level the check decided (remote_apply when
 * a synchronous standby is configured).  Also the store's on-connect hook,
 * so a session that a write's retry reset is checked the same way. */
static int session_start(struct store *s, void *arg)
{
	struct durability *dur = arg;

	durability_session_check(dur, s);
	store_clear(store_exec(s, durability_session_sql(dur), 0, NULL));
	return 0;
}

/* Opens the thread's connection, retrying with backoff until it works or the
 * daemon stops. */
static struct store *connect_retry(struct daemon *d, const char *who)
{
	char lq[512];
	char err[1024];
	struct store_backoff backoff = STORE_BACKOFF_INIT;

	while (!atomic_load(&d->stopping)) {
		struct store *s = store_open_with(d->cfg->database, "airlockd",
		                                  DAEMON_SESSION_OPTIONS, err, sizeof(err));
		if (s) {
			session_start(s, d->durability);
			store_on_connect(s, session_start, d->durability);
			return s;
		}
		int delay_ms = store_backoff_next(&backoff);
		log_msg(LOG_WARN, "worker=%s evt=db.connect_failed retry_ms=%d error=%s", who,
		        delay_ms, log_quote(err, lq, sizeof(lq)));
		usleep((useconds_t)delay_ms * 1000);
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	char lq[512];
	struct wthread *w = arg;
	struct daemon *d = w->d;
	struct verdict v = VERDICT_INIT;
	struct store *db = NULL;
	char who[256];

	snprintf(who, sizeof(who), "%s/%d", d->cfg->worker_id, w->index);
	struct pipeline_env env = d->env;
	env.worker_id = who;
	int claim_delay_ms = 200;
	/* Whether the next claim without a named row goes to the database: at
	 * start, after a claim of any row found one, when a wake-up asks for
	 * it, after the poll interval, and always without named wake-ups.
	 * Otherwise a worker that finished its row waits for the next wake-up
	 * instead of asking for a row that no wake-up announced. */
	bool plain = true;
	while (!atomic_load(&d->stopping)) {
		if (db == NULL || !store_connected(db)) {
			store_close(db);
			db = connect_retry(d, who);
			if (db == NULL)
				break;
		}
		pthread_mutex_lock(&d->mu);
		unsigned long seen = d->wake_gen;
		char *doc;
		int64_t hint = take_hint(d, &doc);
		if (hint == 0 && d->plain_wanted > 0) {
			d->plain_wanted--;
			plain = true;
		}
		pthread_mutex_unlock(&d->mu);

		/* A new run row described by its wake-up: classified, then claimed
		 * (and an observation started) in one call.  When that does not
		 * take it, it is claimed as usual below. */
		if (doc != NULL) {
			atomic_store(&w->working, hint);
			int done = pipeline_wake(&env, db, &v, doc);
			atomic_store(&w->working, 0);
			free(doc);
			if (done) {
				claim_delay_ms = 200;
				continue;
			}
		}
		if (hint == 0 && !plain && atomic_load(&d->named_wakeups)) {
			plain = idle_wait(d, seen);
			continue;
		}
		struct queue_item it;
		/* Rows of nodes whose slots are all busy are left to be claimed
		 * once a slot frees (slots_on_free wakes a worker then). */
		char **full = NULL;
		size_t nfull = slots_full(d->node_slots, &full);
		int got = queue_claim(db, who, hint, (const char *const *)full, nfull, &it);
		for (size_t i = 0; i < nfull; i++)
			free(full[i]);
		free(full);
		if (got < 0) {
			/* A read-only database (a standby, or a demoted primary) stops
			 * claims until a new session finds a primary. */
			bool read_only =
			    sqlstate_is(store_sqlstate(db), SQLSTATE_READ_ONLY_TRANSACTION);
			log_msg(
			    LOG_WARN,
			    "worker=%s evt=worker.claim_failed sqlstate=%s retry_ms=%d error=%s",
			    who, store_sqlstate(db)[0] ? store_sqlstate(db) : "-", claim_delay_ms,
			    log_quote(store_errmsg(db), lq, sizeof(lq)));
			if (read_only) {
				store_close(db);
				db = NULL;
			}
			usleep((useconds_t)claim_delay_ms * 1000);
			if (claim_delay_ms < 5000)
				claim_delay_ms *= 2;
			continue;
		}
		claim_delay_ms = 200;
		if (got == 0) {
			plain = idle_wait(d, seen);
			continue;
		}
		/* A claim that took another row than the one named was a claim of
		 * any row: more may wait. */
		plain = it.id != hint;
		log_msg(LOG_DEBUG,
		        "exec=%lld evt=exec.claimed state=%s worker=%s attempt=%d hinted=%d",
		        (long long)it.id, it.state, who, it.attempts, it.id == hint);
		/* A wake-up that named no row may stand for many: pass it on. */
		if (hint == 0 && atomic_load(&d->named_wakeups))
			wake_workers(d, 1);
		atomic_store(&w->working, it.id);
		pipeline_process(&env, db, &v, &it);
		atomic_store(&w->working, 0);
		queue_item_clear(&it);
	}
	verdict_free(&v);
	store_close(db);
	return NULL;
}

/* A node whose slots were all busy has a free one: its rows, which claims
 * skipped meanwhile, are for a worker to claim now. */
static void slot_freed(void *arg)
{
	wake_workers(arg, 1);
}

struct daemon *daemon_new(struct config *cfg, char *err, size_t errlen)
{
	struct daemon *d = xcalloc(1, sizeof(*d));

	d->cfg = cfg;
	log_set_level(cfg->log_level);
	d->guard = guard_new(cfg, err, errlen);
	if (d->guard == NULL)
		goto fail;
	d->targets = targets_new(cfg, err, errlen);
	if (d->targets == NULL)
		goto fail;
	d->sealer = sealer_new();
	if (cfg->audit_signing_key) {
		d->anchorer = anchorer_new(cfg, err, errlen);
		if (d->anchorer == NULL)
			goto fail;
	}
	d->notifier = notifier_new(cfg);
	if (cfg->metrics_port > 0) {
		d->metrics =
		    metrics_new(cfg, targets_transport(d->targets), d->notifier, err, errlen);
		if (d->metrics == NULL)
			goto fail;
	}
	d->policies = policyset_new();
	d->node_slots = slots_new(cfg->per_node);
	slots_on_free(d->node_slots, slot_freed, d);
	d->durability = durability_new(cfg);
	anchorer_alarms(d->anchorer, d->metrics, d->notifier, d->durability);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->wake, NULL);
	d->env = (struct pipeline_env){
	    .worker_id = cfg->worker_id,
	    .cfg = cfg,
	    .policies = d->policies,
	    .guard = d->guard,
	    .targets = d->targets,
	    .notifier = d->notifier,
	    .metrics = d->metrics,
	    .node_slots = d->node_slots,
	    .durability = d->durability,
	    .stopping = &d->stopping,
	    .cancel = &d->cancel,
	};
	return d;
fail:
	notifier_free(d->notifier, 0);
	guard_free(d->guard);
	targets_free(d->targets);
	anchorer_free(d->anchorer);
	sealer_free(d->sealer);
	free(d);
	return NULL;
}

/* LISTEN on a fresh connection, then settle what dead workers left. */
static int listen_connect(struct daemon *d)
{
	char lq[512];
	static const char *const channels[] = {"LISTEN airlock_work", "LISTEN airlock_policy"};
	char err[1024], channel[64];

	store_close(d->listen);
	d->listen = store_open_with(d->cfg->database, "airlockd-listen", DAEMON_SESSION_OPTIONS,
	                            err, sizeof(err));
	if (d->listen == NULL) {
		log_msg(LOG_WARN, "evt=db.connect_failed error=%s", log_quote(err, lq, sizeof(lq)));
		return -1;
	}
	session_start(d->listen, d->durability);
	for (size_t i = 0; i < 2; i++) {
		struct store_res *res = store_exec(d->listen, channels[i], 0, NULL);
		if (res == NULL) {
			log_msg(LOG_WARN, "evt=db.listen_failed error=%s",
			        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
			return -1;
		}
		store_clear(res);
	}
	/* The daemon's own channel: wake-ups on it name the row.  Without one
	 * (the registration failed) airlock_work still wakes the workers. */
	d->channel[0] = '\0';
	atomic_store(&d->named_wakeups, false);
	if (queue_channel(d->listen, d->cfg->worker_id, channel, sizeof(channel)) < 0 ||
	    store_listen(d->listen, channel) < 0)
		log_msg(LOG_WARN, "evt=db.channel_failed note=\"wake-ups name no row\" error=%s",
		        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
	else {
		snprintf(d->channel, sizeof(d->channel), "%s", channel);
		atomic_store(&d->named_wakeups, true);
	}
	return 0;
}

static void reload_policy(struct daemon *d)
{
	char lq[512];
	char err[1024];
	long long before = policyset_version(d->policies);
	long long gate_before = policyset_gate_version(d->policies);

	if (policyset_reload(d->policies, d->listen, err, sizeof(err)) < 0) {
		log_msg(LOG_ERROR, "evt=policy.reload_failed in_force=%lld error=%s", before,
		        log_quote(err, lq, sizeof(lq)));
		return;
	}
	if (policyset_version(d->policies) != before ||
	    policyset_gate_version(d->policies) != gate_before)
		log_msg(LOG_INFO,
		        "evt=policy.loaded version=%lld previous=%lld gate_version=%lld "
		        "gate_previous=%lld",
		        policyset_version(d->policies), before, policyset_gate_version(d->policies),
		        gate_before);
}

/* Rows scheduled further ahead than any retry delay mean the database's
 * clock stepped back: they are due now, and the operator is told. */
static void clock_check(struct daemon *d)
{
	char lq[512];
	int rows = 0;
	long long ahead = 0;

	if (queue_clock_check(d->listen, &rows, &ahead) < 0)
		log_msg(LOG_WARN, "evt=clock.check_failed error=%s",
		        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
	else if (rows > 0)
		log_msg(
		    LOG_WARN,
		    "evt=clock.stepped_back rows=%d ahead_ms=%lld note=\"rows were scheduled "
		    "further ahead than any retry delay; the database's clock must have stepped "
		    "back; they are due now\"",
		    rows, ahead);
}

/* Reads the database's clock and compares what it gained since the last
 * read with what the daemon's monotonic clock did: a gain larger than
 * DAEMON_CLOCK_STEP_MS is a forward step, and the requests' open deadlines
 * (TTLs, approvals' validity: elapsed time, which a step is not) move with
 * it, once, before anything expires them (airlock.worker_clock_stepped_forward). */
static void clock_forward_check(struct daemon *d)
{
	char lq[512];
	struct store_res *res = store_exec(d->listen,
	                                   "SELECT (extract(epoch FROM clock_timestamp()) * "
	                                   "1000)::bigint, clock_timestamp()::text",
	                                   0, NULL);
	int64_t mono = deadline_now_ms(), db_ms;
	int rows = 0;

	if (res == NULL) {
		log_msg(LOG_WARN, "evt=clock.check_failed error=%s",
		        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
		return;
	}
	db_ms = strtoll(store_get(res, 0, 0), NULL, 10);
	if (d->clock_set) {
		int64_t step = db_ms - (d->clock_db_ms + (mono - d->clock_mono_ms));
		if (step > DAEMON_CLOCK_STEP_MS) {
			if (queue_clock_forward(d->listen, d->cfg->worker_id, step,
			                        d->clock_db_text, &rows) < 0) {
				log_msg(LOG_WARN, "evt=clock.check_failed error=%s",
				        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
				store_clear(res);
				return; /* looked at again at the next tick, from the same reference
				         */
			}
			log_msg(
			    LOG_WARN,
			    "evt=clock.stepped_forward step_ms=%lld rows=%d note=\"the database's "
			    "clock gained that much over this daemon's; open TTLs and approvals' "
			    "validity moved with it, and rows that expired meanwhile say so\"",
			    (long long)step, rows);
		}
	}
	d->clock_set = true;
	d->clock_db_ms = db_ms;
	d->clock_mono_ms = mono;
	snprintf(d->clock_db_text, sizeof(d->clock_db_text), "%s", store_get(res, 0, 1));
	store_clear(res);
}

static void reap(struct daemon *d)
{
	char lq[512];
	int n = 0;
	int64_t *working = xcalloc((size_t)d->nthreads + 1, sizeof(*working));
	size_t nworking = 0;

	for (int i = 0; d->threads != NULL && i < d->nthreads; i++) {
		int64_t id = atomic_load(&d->threads[i].working);
		if (id > 0)
			working[nworking++] = id;
	}
	int rc =
	    queue_reap(d->listen, d->cfg->worker_id, working, nworking, DAEMON_REAP_GRACE_MS, &n);
	free(working);
	if (rc < 0)
		log_msg(LOG_WARN, "evt=queue.reap_failed error=%s",
		        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
	else if (n > 0)
		log_msg(LOG_INFO, "evt=queue.reaped rows=%d", n);
}

static void expire(struct daemon *d)
{
	char lq[512];
	int n = 0;

	if (queue_expire(d->listen, &n) < 0)
		log_msg(LOG_WARN, "evt=queue.expire_failed error=%s",
		        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
	else if (n > 0)
		log_msg(LOG_INFO, "evt=queue.expired rows=%d", n);
}

/* Reads the config file again.  What only this thread reads (the reap and
 * expire intervals) and the log level (atomic) take effect now; what worker
 * threads read takes effect on restart, so no thread ever sees a value change
 * under it.  A bad file leaves the old config in force. */
static void reload_config(struct daemon *d)
{
	char lq[512];
	char err[1024];
	struct config *n = config_load(d->cfg->path, err, sizeof(err));

	if (n == NULL) {
		log_msg(LOG_ERROR, "evt=config.reload_failed kept=old error=%s",
		        log_quote(err, lq, sizeof(lq)));
		return;
	}
	d->cfg->reap_interval_ms = n->reap_interval_ms;
	d->cfg->expire_interval_ms = n->expire_interval_ms;
	d->cfg->seal_interval_ms = n->seal_interval_ms;
	/* Said at the more talkative of the two levels, so that a reload that
	 * quiets the log still shows in it. */
	log_set_level(n->log_level < d->cfg->log_level ? n->log_level : d->cfg->log_level);
	log_msg(LOG_INFO,
	        "evt=config.reloaded path=%s note=\"log_level, reap_interval_ms, "
	        "expire_interval_ms and seal_interval_ms apply now; the rest on restart\"",
	        log_quote(d->cfg->path, lq, sizeof(lq)));
	log_set_level(n->log_level);
	d->cfg->log_level = n->log_level;
	config_free(n);
}

/* Drains notifications: wakes workers when there is work, reloads a changed
 * policy.  A wake-up on the daemon's own channel names one row (the secret
 * channel name keeps the id, and a new run row's command, from other
 * logins); one worker is woken per row and takes that row first: a new run
 * row with its wake-up document through pipeline_wake, any other by its id.  airlock_work carries
 * no payload (any login may LISTEN on it) and PostgreSQL folds identical notifications of one
 * transaction into one, so it may stand for many rows: without a channel of
 * our own every idle worker is woken; with one, it is the fallback for rows
 * whose wake-up went to another daemon (or was lost), and wakes one worker,
 * who wakes the next when it finds work. */
static void handle_notifies(struct daemon *d)
{
	char channel[64], payload[DAEMON_PAYLOAD_MAX];
	int64_t ids[64];
	char *docs[64];
	int n = 0, named = 0;
	bool policy = false, work = false;

	while (store_notification(d->listen, channel, sizeof(channel), payload, sizeof(payload)) ==
	       1) {
		if (strcmp(channel, "airlock_policy") == 0) {
			policy = true;
		} else if (d->channel[0] && strcmp(channel, d->channel) == 0) {
			/* "<id>", or "<id> <document>" (queue_wake_parse). */
			char *end;
			long long id = strtoll(payload, &end, 10);
			if (id <= 0 || (*end != '\0' && *end != ' '))
				continue;
			named++;
			ids[n] = id;
			docs[n] = *end == ' ' ? xstrdup(payload) : NULL;
			n++;
			if (n == (int)(sizeof(ids) / sizeof(ids[0]))) {
				wake_for_rows(d, ids, docs, n);
				n = 0;
			}
		} else {
			work = true;
		}
	}
	if (policy)
		reload_policy(d);
	if (n > 0)
		wake_for_rows(d, ids, docs, n);
	if (work && named == 0)
		wake_workers(d, d->channel[0] ? 1 : d->nthreads);
}

static void stop_threads(struct daemon *d, int grace_s)
{
	int64_t deadline = deadline_now_ms() + (int64_t)grace_s * 1000;

	pthread_mutex_lock(&d->mu);
	atomic_store(&d->stopping, true);
	pthread_cond_broadcast(&d->wake);
	pthread_mutex_unlock(&d->mu);
	log_msg(LOG_INFO, "evt=daemon.stopping grace_s=%d", grace_s);
	for (int i = 0; i < d->nthreads; i++) {
		if (!d->threads[i].started)
			continue;
		for (;;) {
			struct timespec t = deadline_abs_after_ms(1000);
			if (pthread_timedjoin_np(d->threads[i].thread, NULL, &t) == 0)
				break;
			if (deadline_now_ms() >= deadline && !atomic_load(&d->cancel)) {
				log_msg(LOG_WARN, "evt=daemon.grace_over cancelling=in_flight");
				atomic_store(&d->cancel, true);
			}
		}
	}
}

/* A binary that ran on a schema it does not know could write what the
 * schema no longer means: refuse at start, saying what to run. */
static bool schema_refused(struct daemon *d)
{
	char err[1200], q[1300];

	if (store_schema_require(d->listen, "airlockd", err, sizeof(err)) == 0)
		return false;
	log_msg(LOG_ERROR, "evt=schema.refused error=%s", log_quote(err, q, sizeof(q)));
	return true;
}

int daemon_run(struct daemon *d, atomic_bool *stop, atomic_bool *reload, int grace_s)
{
	char lq[512];
	int64_t next_reap = 0, next_expire = 0, next_connect = 0, next_anchor = 0, next_seal = 0;
	int64_t next_watchdog = 0;
	int64_t next_durability = deadline_now_ms() + DURABILITY_RECHECK_S * 1000;
	struct store_backoff backoff = STORE_BACKOFF_INIT;

	/* Settle what a previous crash left before claiming anything. */
	while (!atomic_load(stop) && listen_connect(d) < 0)
		usleep((useconds_t)store_backoff_next(&backoff) * 1000);
	store_backoff_reset(&backoff);
	if (atomic_load(stop))
		return 0;
	if (schema_refused(d))
		return 1;
	durability_refresh(d->durability, d->listen);
	reap(d);
	expire(d);
	reload_policy(d);

	d->nthreads = d->cfg->workers;
	d->threads = xcalloc((size_t)d->nthreads, sizeof(*d->threads));
	for (int i = 0; i < d->nthreads; i++) {
		d->threads[i].d = d;
		d->threads[i].index = i;
		d->threads[i].started =
		    pthread_create(&d->threads[i].thread, NULL, worker_main, &d->threads[i]) == 0;
	}
	if (d->cfg->scheduler_database)
		d->prober = prober_new_alerting(
		    d->cfg->scheduler_database, targets_transport(d->targets),
		    d->cfg->probe_interval_s, d->notifier, d->cfg->probe_discover);
	d->flrwatch = flrwatch_new(d->cfg);
	log_msg(LOG_INFO, "evt=daemon.started worker=%s workers=%d per_node=%d policy=%lld",
	        d->cfg->worker_id, d->nthreads, d->cfg->per_node, policyset_version(d->policies));
	if (sdnotify_send("READY=1\nSTATUS=claiming") < 0)
		log_msg(LOG_WARN, "evt=sdnotify.failed msg=READY errno=%d", errno);

	while (!atomic_load(stop)) {
		int64_t now = deadline_now_ms();
		sdnotify_watchdog(&next_watchdog);
		if (atomic_exchange(reload, false)) {
			reload_config(d);
			next_durability =
			    now; /* an operator who fixed the database need not wait */
		}
		if (d->listen == NULL || !store_connected(d->listen)) {
			if (now >= next_connect) {
				if (listen_connect(d) == 0) {
					store_backoff_reset(&backoff);
					d->clock_set = false; /* perhaps another server's clock */
					log_msg(LOG_INFO, "evt=db.reconnected");
					reload_policy(d);
					wake_workers(
					    d, d->nthreads); /* claim at once after reconnecting */
				} else {
					next_connect = now + store_backoff_next(&backoff);
				}
			}
			usleep(100 * 1000);
			continue;
		}
		if (now >= next_reap) {
			clock_forward_check(d);
			reap(d);
			next_reap = now + d->cfg->reap_interval_ms;
		}
		if (now >= next_expire) {
			/* Nothing expires on a clock step not looked for first. */
			clock_forward_check(d);
			expire(d);
			clock_check(d);
			next_expire = now + d->cfg->expire_interval_ms;
		}
		/* Seal first, so an anchor names the newest sealed event. */
		if (now >= next_seal) {
			sealer_tick(d->sealer, d->listen, 8);
			next_seal = now + d->cfg->seal_interval_ms;
		}
		if (d->anchorer && now >= next_anchor) {
			anchorer_tick(d->anchorer, d->listen, false);
			next_anchor = now + 1000;
		}
		if (now >= next_durability) {
			durability_refresh(d->durability, d->listen);
			next_durability = now + DURABILITY_RECHECK_S * 1000;
		}
		int64_t until = next_reap < next_expire ? next_reap : next_expire;
		if (next_seal < until)
			until = next_seal;
		int timeout = (int)(until - deadline_now_ms());
		if (timeout < 0)
			timeout = 0;
		if (timeout > 1000)
			timeout = 1000; /* re-check the signal flags */
		if (store_wait_notify(d->listen, timeout) == 1)
			handle_notifies(d);
	}
	sdnotify_send("STOPPING=1\nSTATUS=stopping: running commands get the grace period");
	prober_free(d->prober);
	flrwatch_free(d->flrwatch);
	d->prober = NULL;
	stop_threads(d, grace_s);
	/* The chain and the file cover everything this daemon did before it stopped. */
	if (d->listen != NULL && store_connected(d->listen)) {
		/* No worker works on anything now: what they still held (a
		 * result given up when the grace ended) is settled, and the
		 * daemon is no longer waited for. */
		reap(d);
		if (queue_gone(d->listen, d->cfg->worker_id) < 0)
			log_msg(LOG_WARN, "evt=queue.gone_failed error=%s",
			        log_quote(store_errmsg(d->listen), lq, sizeof(lq)));
		sealer_tick(d->sealer, d->listen, 1000);
		anchorer_tick(d->anchorer, d->listen, true);
	}
	log_msg(LOG_INFO, "evt=daemon.stopped worker=%s", d->cfg->worker_id);
	return 0;
}

void daemon_free(struct daemon *d)
{
	if (d == NULL)
		return;
	free(d->threads);
	for (unsigned i = 0; i < DAEMON_HINTS_MAX; i++)
		free(d->hint_docs[i]);
	store_close(d->listen);
	metrics_free(d->metrics); /* borrows the notifier and the transport */
	notifier_free(d->notifier, 2000);
	slots_free(d->node_slots);
	targets_free(d->targets);
	guard_free(d->guard);
	policyset_free(d->policies);
	anchorer_free(d->anchorer);
	sealer_free(d->sealer);
	durability_free(d->durability);
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->mu);
	config_free(d->cfg);
	free(d);
}
