/* notify.c -- webhook delivery from the outbox, in a thread of its own. */
#include "worker/notify.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/redact.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "worker/webhookfmt.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTIFY_QUEUE_MAX 256
#define NOTIFY_BATCH     32 /* deliveries per round, one statement each */
#define NOTIFY_SESSION   "-c statement_timeout=10s -c TimeZone=UTC"
/* A timestamptz column as RFC 3339 in UTC, as receivers parse times. */
#define RFC3339(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* A detection posted from memory (it has no request, so no outbox row). */
struct mitem {
	cJSON *msg;
	int hook; /* index into hooks */
	int attempt;
	int64_t due_ms;
	long long seq;
	struct mitem *next;
};

struct notifier {
	struct config_webhook hooks[CONFIG_MAX_WEBHOOKS];
	char *logurl[CONFIG_MAX_WEBHOOKS]; /* what the log may show of each url */
	int nhooks;
	char *database;
	char *base_url;
	char *hooks_json; /* the hooks as notify_expand takes them */
	char *hook_names; /* the same, as a text[] literal for notify_due */
	int remind_after_s, escalate_after_s;
	int max_attempts, backoff_ms, backoff_max_ms, poll_ms;
	int side_door_interval_s;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mitem *head;
	int queued;
	long long seq;
	bool stopping;
	int64_t stop_at_ms;
	pthread_t thread;
	bool started;

	atomic_llong sent, failed, gave_up, outbox_error;
};

static size_t discard(void *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* One request; 0 on a 2xx answer. */
static int send_request(const struct wh_request *r, int timeout_ms, long *status, char *err,
                        size_t errlen)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	CURLcode rc;

	*status = 0;
	if (h == NULL) {
		snprintf(err, errlen, "curl_easy_init failed");
		return -1;
	}
	for (int i = 0; i < r->nheaders; i++)
		hdr = curl_slist_append(hdr, r->headers[i]);
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, r->url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	else
		snprintf(err, errlen, "%s", curl_easy_strerror(rc));
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK)
		return -1;
	if (*status < 200 || *status > 299) {
		snprintf(err, errlen, "HTTP %ld", *status);
		return -1;
	}
	return 0;
}

/* The delay before attempt+1: backoff_ms doubled per attempt, capped. */
static int retry_ms(const struct notifier *n, int attempt)
{
	long long d = n->backoff_ms;

	for (int i = 1; i < attempt && d < n->backoff_max_ms; i++)
		d *= 2;
	return (int)(d < n->backoff_max_ms ? d : n->backoff_max_ms);
}

/* Builds, sends and logs one attempt; 0 when delivered. */
static int deliver(struct notifier *n, int hook, const struct wh_event *e, const char *delivery,
                   int attempt, long *status, char *err, size_t errlen)
{
	struct wh_request r;
	const struct config_webhook *h = &n->hooks[hook];
	int rc;

	webhookfmt_build(h, e, delivery, time(NULL), &r);
	rc = send_request(&r, h->timeout_ms, status, err, errlen);
	wh_request_clear(&r);
	if (rc == 0) {
		atomic_fetch_add(&n->sent, 1);
		log_msg(LOG_INFO,
		        "exec=%lld evt=webhook.sent hook=%d url=%s status=%ld name=%s event=%s "
		        "delivery=%s attempt=%d",
		        e->execution_id, hook + 1, n->logurl[hook], *status, h->name, e->event,
		        delivery, attempt);
		return 0;
	}
	atomic_fetch_add(&n->failed, 1);
	char q[600];
	log_msg(LOG_WARN,
	        "exec=%lld evt=webhook.failed hook=%d url=%s attempt=%d error=%s name=%s "
	        "event=%s delivery=%s",
	        e->execution_id, hook + 1, n->logurl[hook], attempt, log_quote(err, q, sizeof(q)),
	        h->name, e->event, delivery);
	return -1;
}

static int hook_index(const struct notifier *n, const char *name)
{
	for (int i = 0; i < n->nhooks; i++)
		if (strcmp(n->hooks[i].name, name) == 0)
			return i;
	return -1;
}

static const char *col(struct store_res *res, int c)
{
	return store_isnull(res, 0, c) ? NULL : store_get(res, 0, c);
}

/* Takes one due delivery and tries it.  1: one was tried; 0: none due; -1: database error. */
static int outbox_one(struct notifier *n, struct store *db)
{
	char lease[16];
	int maxt = 0;

	for (int i = 0; i < n->nhooks; i++)
		maxt = n->hooks[i].timeout_ms > maxt ? n->hooks[i].timeout_ms : maxt;
	snprintf(lease, sizeof(lease), "%d", maxt / 1000 + 30);
	struct store_res *res = store_exec(
	    db,
	    "SELECT delivery_id, hook, attempt, notification_id, event, " RFC3339(
	        "event_at") ","
	                    " execution_id, target, command, class, reasons, requested_by, state, "
	                    "rewind_status,"
	                    " error, exit_code, decided_by, decision_reason, " RFC3339(
	                        "pending_since") ", " RFC3339("expires_at") ", output_hold, "
	                                                                    "action, votes, "
	                                                                    "request_url, "
	                                                                    "approve_url,"
	                                                                    " reject_url, "
	                                                                    "mattermost_callback_"
	                                                                    "url"
	                                                                    " FROM "
	                                                                    "airlock.notify_due($1:"
	                                                                    ":text[], 1, $2::int, "
	                                                                    "$3)",
	    3, (const char *const[]){n->hook_names, lease, n->base_url});
	if (res == NULL)
		return -1;
	if (store_nrows(res) == 0) {
		store_clear(res);
		return 0;
	}
	struct wh_event e = {
	    .event = col(res, 4),
	    .at = col(res, 5),
	    .execution_id = strtoll(store_get(res, 0, 6), NULL, 10),
	    .target = col(res, 7),
	    .command = col(res, 8),
	    .cls = col(res, 9),
	    .reasons = col(res, 10),
	    .requested_by = col(res, 11),
	    .state = col(res, 12),
	    .rewind_status = col(res, 13),
	    .error = col(res, 14),
	    .has_exit_code = !store_isnull(res, 0, 15),
	    .exit_code = store_isnull(res, 0, 15) ? 0 : atoi(store_get(res, 0, 15)),
	    .decided_by = col(res, 16),
	    .decision_reason = col(res, 17),
	    .pending_since = col(res, 18),
	    .expires_at = col(res, 19),
	    .output_hold = col(res, 20),
	    .action = col(res, 21),
	    .votes = col(res, 22),
	    .request_url = col(res, 23),
	    .approve_url = col(res, 24),
	    .reject_url = col(res, 25),
	    .mattermost_callback_url = col(res, 26),
	};
	const char *delivery = store_get(res, 0, 0);
	int attempt = atoi(store_get(res, 0, 2));
	int hook = hook_index(n, store_get(res, 0, 1));
	char err[256] = "", st[16], retry[16];
	long status = 0;
	bool ok =
	    hook >= 0 && deliver(n, hook, &e, delivery, attempt, &status, err, sizeof(err)) == 0;
	bool last = !ok && attempt >= n->max_attempts;

	if (hook < 0)
		snprintf(err, sizeof(err), "no such webhook in this daemon's config");
	if (last) {
		atomic_fetch_add(&n->gave_up, 1);
		log_msg(LOG_ERROR,
		        "exec=%lld evt=webhook.gave_up hook=%d url=%s attempts=%d delivery=%s "
		        "event=%s",
		        e.execution_id, hook + 1, hook >= 0 ? n->logurl[hook] : "-", attempt,
		        delivery, e.event);
	}
	snprintf(st, sizeof(st), "%ld", status);
	snprintf(retry, sizeof(retry), "%d", retry_ms(n, attempt));
	struct store_res *r2 = store_exec(
	    db, "SELECT airlock.notify_result($1::bigint, $2::boolean, $3::int, $4, $5::int)", 5,
	    (const char *const[]){delivery, ok ? "true" : "false", status ? st : NULL,
	                          ok ? NULL : err, ok || last ? NULL : retry});
	store_clear(res);
	if (r2 == NULL)
		return -1;
	store_clear(r2);
	return 1;
}

/* Stopping, and the grace is over. */
static bool out_of_time(struct notifier *n)
{
	bool over;

	pthread_mutex_lock(&n->mu);
	over = n->stopping && deadline_now_ms() >= n->stop_at_ms;
	pthread_mutex_unlock(&n->mu);
	return over;
}

/* One round of the outbox: reminders, expansion, due deliveries.  The number
 * of deliveries tried (NOTIFY_BATCH: more may be due), or -1. */
static int outbox_round(struct notifier *n, struct store *db, int64_t *next_remind)
{
	struct store_res *res;

	if ((n->remind_after_s || n->escalate_after_s) && deadline_now_ms() >= *next_remind) {
		char ra[32], ea[32];
		snprintf(ra, sizeof(ra), "%d seconds", n->remind_after_s);
		snprintf(ea, sizeof(ea), "%d seconds", n->escalate_after_s);
		res =
		    store_exec(db, "SELECT airlock.notify_reminders($1::interval, $2::interval)", 2,
		               (const char *const[]){n->remind_after_s ? ra : NULL,
		                                     n->escalate_after_s ? ea : NULL});
		if (res == NULL)
			return -1;
		if (atoi(store_get(res, 0, 0)) > 0)
			log_msg(LOG_INFO, "evt=notify.reminders queued=%s", store_get(res, 0, 0));
		store_clear(res);
		*next_remind = deadline_now_ms() + 1000;
	}
	res = store_exec(db, "SELECT airlock.notify_expand($1::jsonb, 200)", 1,
	                 (const char *const[]){n->hooks_json});
	if (res == NULL)
		return -1;
	store_clear(res);
	int tried = 0;
	while (tried < NOTIFY_BATCH && n->nhooks > 0 && !out_of_time(n)) {
		int rc = outbox_one(n, db);
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
		tried++;
	}
	return tried;
}

static bool hook_wants(const struct config_webhook *h, const char *event)
{
	if (h->escalation)
		return strcmp(event, "escalation") == 0;
	if (h->nevents == 0)
		return strcmp(event, "escalation") != 0;
	for (int i = 0; i < h->nevents; i++)
		if (strcmp(h->events[i], event) == 0)
			return true;
	return false;
}

/* Delivers the in-memory items that are due (called without the lock held). */
static void memory_round(struct notifier *n)
{
	while (!out_of_time(n)) {
		struct mitem *it = NULL, **pp;
		int64_t now = deadline_now_ms();

		pthread_mutex_lock(&n->mu);
		for (pp = &n->head; *pp; pp = &(*pp)->next)
			if ((*pp)->due_ms <= now) {
				it = *pp;
				*pp = it->next;
				n->queued--;
				break;
			}
		pthread_mutex_unlock(&n->mu);
		if (it == NULL)
			return;
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(it->msg, "event");
		struct wh_event e = {.event = cJSON_IsString(ev) ? ev->valuestring : "detection",
		                     .raw = it->msg};
		char delivery[32], err[256] = "";
		long status = 0;
		snprintf(delivery, sizeof(delivery), "m%lld", it->seq);
		it->attempt++;
		if (deliver(n, it->hook, &e, delivery, it->attempt, &status, err, sizeof(err)) ==
		        0 ||
		    it->attempt >= n->max_attempts) {
			if (it->attempt >= n->max_attempts && status / 100 != 2)
				atomic_fetch_add(&n->gave_up, 1);
			cJSON_Delete(it->msg);
			free(it);
			continue;
		}
		it->due_ms = deadline_now_ms() + retry_ms(n, it->attempt);
		pthread_mutex_lock(&n->mu);
		it->next = n->head;
		n->head = it;
		n->queued++;
		pthread_mutex_unlock(&n->mu);
	}
}

static void *run(void *arg)
{
	char lq[512];
	struct notifier *n = arg;
	struct store *db = NULL;
	int64_t next_connect = 0, next_remind = 0;
	struct store_backoff backoff = STORE_BACKOFF_INIT;
	char err[512];

	for (;;) {
		pthread_mutex_lock(&n->mu);
		bool stopping = n->stopping;
		pthread_mutex_unlock(&n->mu);
		if (out_of_time(n))
			break;
		if (db == NULL && deadline_now_ms() >= next_connect) {
			db = store_open_with(n->database, "airlockd-notify", NOTIFY_SESSION, err,
			                     sizeof(err));
			if (db == NULL) {
				int delay = store_backoff_next(&backoff);
				log_msg(LOG_WARN, "evt=notify.connect_failed retry_ms=%d error=%s",
				        delay, log_quote(err, lq, sizeof(lq)));
				next_connect = deadline_now_ms() + delay;
			}
		}
		int round = db ? outbox_round(n, db, &next_remind) : 0;
		if (db && round >= 0)
			store_backoff_reset(&backoff); /* a round that worked ends the backoff */
		if (db && round < 0) {
			atomic_fetch_add(&n->outbox_error, 1);
			log_msg(LOG_WARN, "evt=notify.outbox_failed sqlstate=%s error=%s",
			        store_sqlstate(db)[0] ? store_sqlstate(db) : "-",
			        log_quote(store_errmsg(db), lq, sizeof(lq)));
			store_close(db); /* a fresh session next round, backing off */
			db = NULL;
			next_connect = deadline_now_ms() + store_backoff_next(&backoff);
		}
		memory_round(n);
		if (stopping)
			break; /* one last round after the stop, within the grace */
		if (round == NOTIFY_BATCH)
			continue; /* a full round: more may be due now */
		int64_t until = deadline_now_ms() + n->poll_ms;
		pthread_mutex_lock(&n->mu);
		if (!n->stopping)
			deadline_cond_wait(&n->cv, &n->mu, until);
		pthread_mutex_unlock(&n->mu);
	}
	store_close(db);
	return NULL;
}

/* The hooks as notify_expand and notify_due take them. */
static void describe_hooks(struct notifier *n)
{
	cJSON *arr = cJSON_CreateArray();

	for (int i = 0; i < n->nhooks; i++) {
		const struct config_webhook *h = &n->hooks[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", h->name);
		cJSON_AddStringToObject(o, "url", n->logurl[i]);
		if (h->operator_name)
			cJSON_AddStringToObject(o, "operator", h->operator_name);
		cJSON_AddBoolToObject(o, "escalation", h->escalation);
		if (h->nevents > 0) {
			cJSON *ev = cJSON_AddArrayToObject(o, "events");
			for (int k = 0; k < h->nevents; k++)
				cJSON_AddItemToArray(ev, cJSON_CreateString(h->events[k]));
		}
		cJSON_AddItemToArray(arr, o);
	}
	n->hooks_json = cJSON_PrintUnformatted(arr);
	/* The names as a text[] literal, each quoted. */
	size_t cap = 3;
	for (int i = 0; i < n->nhooks; i++)
		cap += 2 * strlen(n->hooks[i].name) + 3;
	char *lit = xmalloc(cap), *p = lit;
	*p++ = '{';
	for (int i = 0; i < n->nhooks; i++) {
		if (i)
			*p++ = ',';
		*p++ = '"';
		for (const char *s = n->hooks[i].name; *s; s++) {
			if (*s == '"' || *s == '\\')
				*p++ = '\\';
			*p++ = *s;
		}
		*p++ = '"';
	}
	*p++ = '}';
	*p = '\0';
	n->hook_names = lit;
	cJSON_Delete(arr);
}

struct notifier *notifier_new(const struct config *cfg)
{
	struct notifier *n = xcalloc(1, sizeof(*n));

	for (int i = 0; i < cfg->nwebhooks; i++) {
		config_webhook_copy(&n->hooks[i], &cfg->webhooks[i]);
		n->logurl[i] = redact_url(cfg->webhooks[i].url);
	}
	n->nhooks = cfg->nwebhooks;
	n->database = cfg->database ? xstrdup(cfg->database) : NULL;
	n->base_url = cfg->notify_base_url ? xstrdup(cfg->notify_base_url) : NULL;
	n->remind_after_s = cfg->notify_remind_after_s;
	n->escalate_after_s = cfg->notify_escalate_after_s;
	n->max_attempts = cfg->notify_max_attempts > 0 ? cfg->notify_max_attempts : 8;
	n->backoff_ms = cfg->notify_backoff_ms > 0 ? cfg->notify_backoff_ms : 2000;
	n->backoff_max_ms = cfg->notify_backoff_max_ms >= n->backoff_ms ? cfg->notify_backoff_max_ms
	                                                                : n->backoff_ms;
	n->poll_ms = cfg->notify_poll_ms > 0 ? cfg->notify_poll_ms : 1000;
	n->side_door_interval_s = cfg->notify_side_door_interval_s;
	describe_hooks(n);
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	n->started = pthread_create(&n->thread, NULL, run, n) == 0;
	if (!n->started)
		log_msg(LOG_ERROR,
		        "evt=notify.thread_failed note=\"no webhook will be delivered\"");
	return n;
}

void notifier_post(struct notifier *n, const char *requester, cJSON *msg)
{
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(msg, "event");
	const char *event = cJSON_IsString(ev) ? ev->valuestring : "detection";

	if (!n->started) {
		cJSON_Delete(msg);
		return;
	}
	pthread_mutex_lock(&n->mu);
	for (int i = 0; i < n->nhooks; i++) {
		const struct config_webhook *h = &n->hooks[i];
		if (h->operator_name && requester && strcmp(h->operator_name, requester) == 0)
			continue;
		if (!hook_wants(h, event))
			continue;
		if (n->queued >= NOTIFY_QUEUE_MAX) {
			/* the oldest goes: the list is newest first only for retries */
			struct mitem **pp = &n->head, *old;
			while ((*pp)->next)
				pp = &(*pp)->next;
			old = *pp;
			*pp = NULL;
			n->queued--;
			log_msg(LOG_WARN, "evt=webhook.dropped hook=%d url=%s why=queue_full",
			        old->hook + 1, n->logurl[old->hook]);
			cJSON_Delete(old->msg);
			free(old);
		}
		struct mitem *it = xcalloc(1, sizeof(*it));
		it->msg = cJSON_Duplicate(msg, 1);
		it->hook = i;
		it->seq = ++n->seq;
		it->due_ms = 0;
		it->next = n->head;
		n->head = it;
		n->queued++;
	}
	pthread_cond_signal(&n->cv);
	pthread_mutex_unlock(&n->mu);
	cJSON_Delete(msg);
}

int notifier_side_door_interval_s(const struct notifier *n)
{
	return n->side_door_interval_s;
}

void notifier_stats(struct notifier *n, struct notifier_stats *out)
{
	out->sent = atomic_load(&n->sent);
	out->failed = atomic_load(&n->failed);
	out->gave_up = atomic_load(&n->gave_up);
	out->outbox_error = atomic_load(&n->outbox_error);
}

void notifier_free(struct notifier *n, int grace_ms)
{
	if (n == NULL)
		return;
	if (n->started) {
		pthread_mutex_lock(&n->mu);
		n->stopping = true;
		n->stop_at_ms = deadline_now_ms() + grace_ms;
		pthread_cond_broadcast(&n->cv);
		pthread_mutex_unlock(&n->mu);
		pthread_join(n->thread, NULL);
	}
	while (n->head) {
		struct mitem *it = n->head;
		n->head = it->next;
		cJSON_Delete(it->msg);
		free(it);
	}
	for (int i = 0; i < n->nhooks; i++) {
		config_webhook_clear(&n->hooks[i]);
		free(n->logurl[i]);
	}
	free(n->database);
	free(n->base_url);
	free(n->hooks_json);
	free(n->hook_names);
	pthread_cond_destroy(&n->cv);
	pthread_mutex_destroy(&n->mu);
	free(n);
}
