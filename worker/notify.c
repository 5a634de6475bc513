/* notify.c -- webhook delivery in a thread of its own. */
#include "worker/notify.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/redact.h"
#include "lib/visible.h"
#include "lib/xalloc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTIFY_QUEUE_MAX 256
#define NOTIFY_ATTEMPTS  4

struct item {
	char *url;
	char *logurl; /* what the log may show of url (redact_url) */
	int hook;     /* its position in the config's webhooks list, from 1 */
	char *body;
	int timeout_ms;
	struct item *next;
};

struct notifier {
	struct config_webhook hooks[CONFIG_MAX_WEBHOOKS];
	int nhooks;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct item *head, *tail;
	int queued;
	bool stopping;
	int64_t stop_at_ms; /* for draining at stop: a deadline_now_ms() instant */
	pthread_t thread;
	bool started;
};

static void free_item(struct item *it)
{
	free(it->url);
	free(it->logurl);
	free(it->body);
	free(it);
}

static size_t discard(void *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* One POST; 0 on a 2xx answer. */
static int post(const struct item *it, long *status, char *err, size_t errlen)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	CURLcode rc;

	if (h == NULL) {
		snprintf(err, errlen, "curl_easy_init failed");
		return -1;
	}
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_URL, it->url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, it->body);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)it->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)it->timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = curl_easy_perform(h);
	*status = 0;
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

static void *run(void *arg)
{
	char lq[512];
	struct notifier *n = arg;

	pthread_mutex_lock(&n->mu);
	for (;;) {
		while (n->head == NULL && !n->stopping)
			pthread_cond_wait(&n->cv, &n->mu);
		if (n->head == NULL || (n->stopping && deadline_now_ms() >= n->stop_at_ms))
			break;
		struct item *it = n->head;
		n->head = it->next;
		if (n->head == NULL)
			n->tail = NULL;
		n->queued--;
		pthread_mutex_unlock(&n->mu);

		for (int attempt = 1; attempt <= NOTIFY_ATTEMPTS; attempt++) {
			char err[256] = "";
			long status = 0;
			if (post(it, &status, err, sizeof(err)) == 0) {
				log_msg(LOG_INFO, "evt=webhook.sent hook=%d url=%s status=%ld",
				        it->hook, it->logurl, status);
				break;
			}
			log_msg(LOG_WARN, "evt=webhook.failed hook=%d url=%s attempt=%d error=%s",
			        it->hook, it->logurl, attempt, log_quote(err, lq, sizeof(lq)));
			if (attempt == NOTIFY_ATTEMPTS)
				break;
			/* Back off 1, 2, 4 s, but not past a stop's grace. */
			int64_t until = deadline_now_ms() + (1000 << (attempt - 1));
			pthread_mutex_lock(&n->mu);
			if (n->stopping && deadline_now_ms() >= n->stop_at_ms) {
				pthread_mutex_unlock(&n->mu);
				break;
			}
			deadline_cond_wait(&n->cv, &n->mu, n->stopping ? n->stop_at_ms : until);
			pthread_mutex_unlock(&n->mu);
		}
		free_item(it);
		pthread_mutex_lock(&n->mu);
	}
	pthread_mutex_unlock(&n->mu);
	return NULL;
}

struct notifier *notifier_new(const struct config *cfg)
{
	struct notifier *n = xcalloc(1, sizeof(*n));

	for (int i = 0; i < cfg->nwebhooks; i++) {
		n->hooks[i].url = xstrdup(cfg->webhooks[i].url);
		n->hooks[i].operator_name =
		    cfg->webhooks[i].operator_name ? xstrdup(cfg->webhooks[i].operator_name) : NULL;
		n->hooks[i].timeout_ms = cfg->webhooks[i].timeout_ms;
	}
	n->nhooks = cfg->nwebhooks;
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	if (n->nhooks > 0)
		n->started = pthread_create(&n->thread, NULL, run, n) == 0;
	return n;
}

/* The message's "text" (and the flattened "reasons") is what a chat service
 * shows a person: the command and the words in it came from an agent, so
 * their hidden characters are made visible.  The other fields ("command",
 * "target", ...) keep the exact data for programs. */
static void visible_human_text(cJSON *msg)
{
	static const char *const human[] = {"text", "reasons"};

	for (size_t i = 0; i < sizeof(human) / sizeof(human[0]); i++) {
		cJSON *f = cJSON_GetObjectItemCaseSensitive(msg, human[i]);
		if (!cJSON_IsString(f))
			continue;
		char *v = visible_str(f->valuestring, 0);
		cJSON_ReplaceItemInObjectCaseSensitive(msg, human[i], cJSON_CreateString(v));
		free(v);
	}
}

void notifier_post(struct notifier *n, const char *requester, cJSON *msg)
{
	char *body = NULL;

	if (n->nhooks == 0 || !n->started) {
		cJSON_Delete(msg);
		return;
	}
	visible_human_text(msg);
	body = cJSON_PrintUnformatted(msg);
	cJSON_Delete(msg);
	pthread_mutex_lock(&n->mu);
	for (int i = 0; i < n->nhooks; i++) {
		const struct config_webhook *h = &n->hooks[i];
		if (h->operator_name && requester && strcmp(h->operator_name, requester) == 0)
			continue;
		if (n->queued >= NOTIFY_QUEUE_MAX) {
			struct item *old = n->head;
			n->head = old->next;
			if (n->head == NULL)
				n->tail = NULL;
			n->queued--;
			log_msg(LOG_WARN, "evt=webhook.dropped hook=%d url=%s why=queue_full",
			        old->hook, old->logurl);
			free_item(old);
		}
		struct item *it = xcalloc(1, sizeof(*it));
		it->url = xstrdup(h->url);
		it->logurl = redact_url(h->url);
		it->hook = i + 1;
		it->body = xstrdup(body);
		it->timeout_ms = h->timeout_ms;
		if (n->tail)
			n->tail->next = it;
		else
			n->head = it;
		n->tail = it;
		n->queued++;
	}
	pthread_cond_signal(&n->cv);
	pthread_mutex_unlock(&n->mu);
	free(body);
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
		struct item *it = n->head;
		n->head = it->next;
		free_item(it);
	}
	for (int i = 0; i < n->nhooks; i++) {
		free(n->hooks[i].url);
		free(n->hooks[i].operator_name);
	}
	pthread_cond_destroy(&n->cv);
	pthread_mutex_destroy(&n->mu);
	free(n);
}
