/* slots.c -- per-key counting limit; few keys (one per node), so a list. */
#include "worker/slots.h"

#include "lib/deadline.h"
#include "lib/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct key {
	char *name;
	int used;
	struct key *next;
};

struct slots {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int per_key;
	struct key *keys;
	void (*on_free)(void *arg);
	void *on_free_arg;
};

struct slots *slots_new(int per_key)
{
	struct slots *s = xcalloc(1, sizeof(*s));

	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->per_key = per_key;
	return s;
}

static struct key *find(struct slots *s, const char *name)
{
	for (struct key *k = s->keys; k; k = k->next)
		if (strcmp(k->name, name) == 0)
			return k;
	struct key *k = xcalloc(1, sizeof(*k));
	k->name = xstrdup(name);
	k->next = s->keys;
	s->keys = k;
	return k;
}

void slots_on_free(struct slots *s, void (*fn)(void *arg), void *arg)
{
	s->on_free = fn;
	s->on_free_arg = arg;
}

bool slots_try_take(struct slots *s, const char *name)
{
	bool ok = false;

	pthread_mutex_lock(&s->mu);
	struct key *k = find(s, name);
	if (k->used < s->per_key) {
		k->used++;
		ok = true;
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

bool slots_take_within(struct slots *s, const char *name, int wait_ms, const atomic_bool *abort)
{
	int64_t until = deadline_now_ms() + wait_ms;
	bool ok = false;

	pthread_mutex_lock(&s->mu);
	struct key *k = find(s, name);
	while (!atomic_load(abort)) {
		if (k->used < s->per_key) {
			k->used++;
			ok = true;
			break;
		}
		int64_t now = deadline_now_ms();
		if (now >= until)
			break;
		/* Bounded: abort is set without this lock. */
		deadline_cond_wait(&s->cv, &s->mu, now + 200 < until ? now + 200 : until);
	}
	pthread_mutex_unlock(&s->mu);
	return ok;
}

void slots_give(struct slots *s, const char *name)
{
	bool was_full;

	pthread_mutex_lock(&s->mu);
	struct key *k = find(s, name);
	was_full = k->used >= s->per_key;
	if (k->used > 0)
		k->used--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (was_full && s->on_free)
		s->on_free(s->on_free_arg);
}

size_t slots_full(struct slots *s, char ***keys)
{
	size_t n = 0, cap = 0;

	*keys = NULL;
	pthread_mutex_lock(&s->mu);
	for (struct key *k = s->keys; k; k = k->next) {
		if (k->used < s->per_key)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			*keys = xrealloc(*keys, cap * sizeof(**keys));
		}
		(*keys)[n++] = xstrdup(k->name);
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

void slots_free(struct slots *s)
{
	if (s == NULL)
		return;
	while (s->keys) {
		struct key *n = s->keys->next;
		free(s->keys->name);
		free(s->keys);
		s->keys = n;
	}
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
