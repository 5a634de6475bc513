/* ratelimit.c -- a sliding window of failure times per key. */
#include "web/ratelimit.h"

#include "lib/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *key; /* NULL when free */
	int n;     /* failures recorded in at[], oldest first */
	time_t at[RATELIMIT_MAX_FAILURES];
};

struct ratelimit {
	pthread_mutex_t mu;
	int max, window_s, cap;
	struct entry *e;
};

struct ratelimit *ratelimit_new(int max, int window_s, int cap)
{
	struct ratelimit *r = xcalloc(1, sizeof(*r));

	pthread_mutex_init(&r->mu, NULL);
	r->max = max < 1 ? 1 : max > RATELIMIT_MAX_FAILURES ? RATELIMIT_MAX_FAILURES : max;
	r->window_s = window_s;
	r->cap = cap;
	r->e = xcalloc((size_t)cap, sizeof(*r->e));
	return r;
}

void ratelimit_free(struct ratelimit *r)
{
	if (r == NULL)
		return;
	for (int i = 0; i < r->cap; i++)
		free(r->e[i].key);
	free(r->e);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/* Drops failures that left the window. */
static void age(const struct ratelimit *r, struct entry *e, time_t now)
{
	int k = 0;

	while (k < e->n && now - e->at[k] >= r->window_s)
		k++;
	memmove(e->at, e->at + k, (size_t)(e->n - k) * sizeof(e->at[0]));
	e->n -= k;
}

static struct entry *lookup(struct ratelimit *r, const char *key)
{
	for (int i = 0; i < r->cap; i++)
		if (r->e[i].key && strcmp(r->e[i].key, key) == 0)
			return &r->e[i];
	return NULL;
}

bool ratelimit_allowed(struct ratelimit *r, const char *key, time_t now, int *retry_s)
{
	bool ok = true;

	pthread_mutex_lock(&r->mu);
	struct entry *e = lookup(r, key);
	if (e) {
		age(r, e, now);
		if (e->n >= r->max) {
			ok = false;
			if (retry_s)
				*retry_s = (int)(e->at[0] + r->window_s - now);
		}
	}
	pthread_mutex_unlock(&r->mu);
	return ok;
}

void ratelimit_failed(struct ratelimit *r, const char *key, time_t now)
{
	pthread_mutex_lock(&r->mu);
	struct entry *e = lookup(r, key);
	if (e == NULL) {
		struct entry *oldest = NULL;
		for (int i = 0; i < r->cap && e == NULL; i++) {
			if (r->e[i].key == NULL)
				e = &r->e[i];
			else if (oldest == NULL || (r->e[i].n ? r->e[i].at[r->e[i].n - 1] : 0) <
			                               (oldest->n ? oldest->at[oldest->n - 1] : 0))
				oldest = &r->e[i];
		}
		if (e == NULL) {
			e = oldest;
			free(e->key);
		}
		e->key = xstrdup(key);
		e->n = 0;
	}
	age(r, e, now);
	if (e->n == r->max) { /* full: keep the newest max */
		memmove(e->at, e->at + 1, (size_t)(e->n - 1) * sizeof(e->at[0]));
		e->n--;
	}
	e->at[e->n++] = now;
	pthread_mutex_unlock(&r->mu);
}

void ratelimit_clear(struct ratelimit *r, const char *key)
{
	pthread_mutex_lock(&r->mu);
	struct entry *e = lookup(r, key);
	if (e) {
		free(e->key);
		memset(e, 0, sizeof(*e));
	}
	pthread_mutex_unlock(&r->mu);
}
