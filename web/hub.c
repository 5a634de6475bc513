/* hub.c -- LISTEN on one connection, wake every stream on a notification. */
#include "web/hub.h"

#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HUB_WAIT_MS 1000 /* how long one wait for notifications lasts; bounds shutdown */

static const char *const channels[] = {"airlock_pending", "airlock_state"};

struct hub {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* CLOCK_MONOTONIC */
	uint64_t gen;
	bool stopping;
	pthread_t thread;
	bool started;
	struct store *db; /* the thread's */
};

static int listen_all(struct store *db)
{
	for (size_t i = 0; i < sizeof(channels) / sizeof(channels[0]); i++)
		if (store_listen(db, channels[i]) < 0)
			return -1;
	return 0;
}

static void bump(struct hub *h)
{
	pthread_mutex_lock(&h->mu);
	h->gen++;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

static bool stopping(struct hub *h)
{
	pthread_mutex_lock(&h->mu);
	bool s = h->stopping;
	pthread_mutex_unlock(&h->mu);
	return s;
}

/* Sleeps ms unless the hub stops first. */
static void nap(struct hub *h, int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&h->mu);
	while (!h->stopping && pthread_cond_timedwait(&h->cv, &h->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&h->mu);
}

static void *run(void *arg)
{
	struct hub *h = arg;
	struct store_backoff bo = STORE_BACKOFF_INIT;
	char q[600];

	while (!stopping(h)) {
		int r = store_wait_notify(h->db, HUB_WAIT_MS);
		if (r > 0) {
			store_drain_notifications(h->db);
			bump(h);
			continue;
		}
		if (r == 0)
			continue;
		log_msg(LOG_WARN, "evt=web.listen_lost error=%s",
		        log_quote(store_errmsg(h->db), q, sizeof(q)));
		while (!stopping(h)) {
			nap(h, store_backoff_next(&bo));
			if (store_reset(h->db) == 0 && listen_all(h->db) == 0) {
				store_backoff_reset(&bo);
				log_msg(LOG_INFO, "evt=web.listen_again");
				bump(h); /* what changed meanwhile was not notified */
				break;
			}
		}
	}
	return NULL;
}

struct hub *hub_start(const char *conninfo, char *err, size_t errlen)
{
	struct hub *h = xcalloc(1, sizeof(*h));
	pthread_condattr_t ca;

	pthread_mutex_init(&h->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	h->db = store_open(conninfo, "airlock-web listen", err, errlen);
	if (h->db == NULL)
		goto fail;
	if (listen_all(h->db) < 0) {
		snprintf(err, errlen, "%s", store_errmsg(h->db));
		goto fail;
	}
	if (pthread_create(&h->thread, NULL, run, h) != 0) {
		snprintf(err, errlen, "cannot start the LISTEN thread");
		goto fail;
	}
	h->started = true;
	return h;
fail:
	hub_free(h);
	return NULL;
}

void hub_stop(struct hub *h)
{
	if (h == NULL)
		return;
	pthread_mutex_lock(&h->mu);
	h->stopping = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	if (h->started) {
		pthread_join(h->thread, NULL);
		h->started = false;
	}
}

void hub_free(struct hub *h)
{
	if (h == NULL)
		return;
	hub_stop(h);
	store_close(h->db);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

uint64_t hub_generation(struct hub *h)
{
	pthread_mutex_lock(&h->mu);
	uint64_t g = h->gen;
	pthread_mutex_unlock(&h->mu);
	return g;
}

int hub_wait(struct hub *h, uint64_t *seen, int timeout_ms)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&h->mu);
	for (;;) {
		if (h->stopping) {
			rc = -1;
			break;
		}
		if (h->gen != *seen) {
			*seen = h->gen;
			rc = 1;
			break;
		}
		if (pthread_cond_timedwait(&h->cv, &h->mu, &until) == ETIMEDOUT) {
			rc = h->stopping ? -1 : h->gen != *seen ? (*seen = h->gen, 1) : 0;
			break;
		}
	}
	pthread_mutex_unlock(&h->mu);
	return rc;
}
