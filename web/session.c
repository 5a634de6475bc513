/* session.c -- the session table: a fixed array under one mutex. */
#include "web/session.h"

#include "lib/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct session_table {
	pthread_mutex_t mu;
	int cap, idle_s, max_s;
	void (*release)(void *db);
	struct session **slot; /* cap entries; NULL when free */
};

int session_token(char *out)
{
	unsigned char raw[SESSION_TOKEN_LEN / 2];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

struct session_table *session_table_new(int cap, int idle_s, int max_s, void (*release)(void *db))
{
	struct session_table *t = xcalloc(1, sizeof(*t));

	pthread_mutex_init(&t->mu, NULL);
	t->cap = cap;
	t->idle_s = idle_s;
	t->max_s = max_s;
	t->release = release;
	t->slot = xcalloc((size_t)cap, sizeof(*t->slot));
	return t;
}

static void destroy(struct session_table *t, struct session *s)
{
	if (t->release && s->db)
		t->release(s->db);
	pthread_mutex_destroy(&s->lock);
	explicit_bzero(s, sizeof(*s));
	free(s);
}

/* Takes slot i out of the table (under t->mu); frees it unless referenced. */
static void unlink_slot(struct session_table *t, int i)
{
	struct session *s = t->slot[i];

	t->slot[i] = NULL;
	s->ended = true;
	if (s->refs == 0)
		destroy(t, s);
}

static bool expired(const struct session_table *t, const struct session *s, time_t now)
{
	return s->ended || now - s->last_seen >= t->idle_s || now - s->created >= t->max_s ||
	       now < s->created;
}

bool session_live(struct session_table *t, const struct session *s, time_t now)
{
	pthread_mutex_lock(&t->mu);
	bool live = !expired(t, s, now);
	pthread_mutex_unlock(&t->mu);
	return live;
}

struct session *session_create(struct session_table *t, const char *login, void *db, time_t now)
{
	struct session *s = xcalloc(1, sizeof(*s));
	int free_i = -1, lru = -1;

	if (session_token(s->id) < 0 || session_token(s->csrf) < 0) {
		free(s);
		return NULL;
	}
	snprintf(s->login, sizeof(s->login), "%s", login);
	s->created = s->last_seen = now;
	s->db = db;
	s->refs = 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < t->cap; i++) {
		if (t->slot[i] && expired(t, t->slot[i], now))
			unlink_slot(t, i);
		if (t->slot[i] == NULL) {
			if (free_i < 0)
				free_i = i;
		} else if (lru < 0 || t->slot[i]->last_seen < t->slot[lru]->last_seen) {
			lru = i;
		}
	}
	if (free_i < 0) {
		unlink_slot(t, lru);
		free_i = lru;
	}
	t->slot[free_i] = s;
	pthread_mutex_unlock(&t->mu);
	return s;
}

static bool token_shape(const char *id)
{
	size_t n = 0;

	for (; id[n]; n++)
		if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
			return false;
	return n == SESSION_TOKEN_LEN;
}

/* Constant-time equality of two strings of SESSION_TOKEN_LEN characters. */
static bool token_eq(const char *a, const char *b)
{
	unsigned char d = 0;

	for (int i = 0; i < SESSION_TOKEN_LEN; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

struct session *session_find(struct session_table *t, const char *id, time_t now)
{
	struct session *found = NULL;

	if (id == NULL || !token_shape(id))
		return NULL;
	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < t->cap; i++) {
		struct session *s = t->slot[i];
		if (s == NULL || !token_eq(s->id, id))
			continue;
		if (expired(t, s, now)) {
			unlink_slot(t, i);
		} else {
			s->last_seen = now;
			s->refs++;
			found = s;
		}
		break;
	}
	pthread_mutex_unlock(&t->mu);
	return found;
}

void session_put(struct session_table *t, struct session *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	if (--s->refs == 0 && s->ended)
		destroy(t, s);
	pthread_mutex_unlock(&t->mu);
}

void session_end(struct session_table *t, struct session *s)
{
	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < t->cap; i++)
		if (t->slot[i] == s) {
			t->slot[i] = NULL;
			break;
		}
	s->ended = true;
	pthread_mutex_unlock(&t->mu);
}

int session_count(struct session_table *t)
{
	int n = 0;

	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < t->cap; i++)
		n += t->slot[i] != NULL;
	pthread_mutex_unlock(&t->mu);
	return n;
}

void session_table_free(struct session_table *t)
{
	if (t == NULL)
		return;
	for (int i = 0; i < t->cap; i++)
		if (t->slot[i])
			unlink_slot(t, i);
	free(t->slot);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

bool session_csrf_ok(const struct session *s, const char *token)
{
	return token != NULL && token_shape(token) && token_eq(s->csrf, token);
}

bool session_cookie_get(const char *header, const char *name, char *out, size_t outlen)
{
	size_t nlen = strlen(name);
	const char *p = header;

	while (p && *p) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
			size_t vlen = len - nlen - 1;
			if (vlen >= outlen)
				return false;
			memcpy(out, p + nlen + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
		p = end;
	}
	return false;
}

void session_cookie_set(struct buf *b, const char *name, const char *value, bool secure,
                        int max_age)
{
	buf_printf(b, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s", name, value,
	           secure ? "; Secure" : "");
	if (max_age >= 0)
		buf_printf(b, "; Max-Age=%d", max_age);
}
