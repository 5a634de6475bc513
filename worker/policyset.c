/* policyset.c -- reference-counted policy snapshots. */
#include "worker/policyset.h"

#include "lib/xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct snap {
	struct policy *policy;
	struct classifier *classifier;
	long long version;
	long long gate_version; /* the gate policy whose network.allow it was built with */
	int refs;               /* the set's own reference counts as one while current */
	struct snap *next_retired;
};

struct policyset {
	pthread_mutex_t mu;
	struct snap *current;
	struct snap *retired; /* replaced snapshots still referenced */
};

static void snap_free(struct snap *s)
{
	classifier_free(s->classifier);
	policy_free(s->policy);
	free(s);
}

struct policyset *policyset_new(void)
{
	struct policyset *ps = xcalloc(1, sizeof(*ps));

	pthread_mutex_init(&ps->mu, NULL);
	return ps;
}

int policyset_reload(struct policyset *ps, struct store *s, char *err, size_t errlen)
{
	char *yaml = NULL;
	long long version = 0, gate = 0;
	char origin[64];
	char **allow = NULL;
	size_t nallow = 0;
	struct snap *n;
	bool same;

	if (store_policy_current(s, &yaml, &version) < 0) {
		snprintf(err, errlen, "%s", store_errmsg(s));
		return -1;
	}
	if (store_gate_network(s, &gate, &allow, &nallow) < 0) {
		snprintf(err, errlen, "gate policy: %s", store_errmsg(s));
		free(yaml);
		return -1;
	}
	pthread_mutex_lock(&ps->mu);
	same = ps->current && ps->current->version == version && ps->current->gate_version == gate;
	pthread_mutex_unlock(&ps->mu);
	n = same ? NULL : xcalloc(1, sizeof(*n));
	if (n != NULL) {
		snprintf(origin, sizeof(origin), "policy version %lld", version);
		n->policy = policy_parse(yaml, strlen(yaml), origin, err, errlen);
	}
	free(yaml);
	if (n != NULL && n->policy != NULL) {
		struct classifier_options o = {(const char *const *)allow, nallow};

		n->classifier = classifier_new_opts(n->policy, &o, err, errlen);
	}
	for (size_t i = 0; i < nallow; i++)
		free(allow[i]);
	free(allow);
	if (same)
		return 0;
	if (n->policy == NULL) {
		free(n);
		return -1;
	}
	if (n->classifier == NULL) {
		char why[512];

		snprintf(why, sizeof(why), "gate policy version %lld: %s", gate, err);
		snprintf(err, errlen, "%s", why);
		snap_free(n);
		return -1;
	}
	n->version = version;
	n->gate_version = gate;
	n->refs = 1;
	pthread_mutex_lock(&ps->mu);
	struct snap *old = ps->current;
	ps->current = n;
	if (old && --old->refs > 0) {
		old->next_retired = ps->retired;
		ps->retired = old;
		old = NULL;
	}
	pthread_mutex_unlock(&ps->mu);
	if (old)
		snap_free(old);
	return 0;
}

long long policyset_version(struct policyset *ps)
{
	long long v;

	pthread_mutex_lock(&ps->mu);
	v = ps->current ? ps->current->version : 0;
	pthread_mutex_unlock(&ps->mu);
	return v;
}

long long policyset_gate_version(struct policyset *ps)
{
	long long v;

	pthread_mutex_lock(&ps->mu);
	v = ps->current ? ps->current->gate_version : 0;
	pthread_mutex_unlock(&ps->mu);
	return v;
}

int policyset_acquire(struct policyset *ps, struct policy_snap *out)
{
	int rc = -1;

	pthread_mutex_lock(&ps->mu);
	if (ps->current) {
		ps->current->refs++;
		out->classifier = ps->current->classifier;
		out->version = ps->current->version;
		rc = 0;
	}
	pthread_mutex_unlock(&ps->mu);
	return rc;
}

void policyset_release(struct policyset *ps, const struct policy_snap *snap)
{
	struct snap *gone = NULL;

	pthread_mutex_lock(&ps->mu);
	if (ps->current && ps->current->classifier == snap->classifier) {
		ps->current->refs--;
	} else {
		for (struct snap **pp = &ps->retired; *pp; pp = &(*pp)->next_retired) {
			if ((*pp)->classifier == snap->classifier) {
				if (--(*pp)->refs == 0) {
					gone = *pp;
					*pp = gone->next_retired;
				}
				break;
			}
		}
	}
	pthread_mutex_unlock(&ps->mu);
	if (gone)
		snap_free(gone);
}

void policyset_free(struct policyset *ps)
{
	if (ps == NULL)
		return;
	if (ps->current)
		snap_free(ps->current);
	while (ps->retired) {
		struct snap *n = ps->retired->next_retired;
		snap_free(ps->retired);
		ps->retired = n;
	}
	pthread_mutex_destroy(&ps->mu);
	free(ps);
}
