/* policyset.h -- the classifier policy in force, shared by worker threads.
 *
 * The daemon loads the newest policy from the database at start and again on
 * NOTIFY airlock_policy; threads take a reference for one execution, so a
 * reload never pulls a policy out from under a classification in progress. */
#ifndef AIRLOCK_WORKER_POLICYSET_H
#define AIRLOCK_WORKER_POLICYSET_H

#include "classifier/classifier.h"
#include "store/store.h"

struct policy_snap {
	const struct classifier *classifier;
	long long version;
};

struct policyset;

struct policyset *policyset_new(void);
/* Loads the newest policy from s, with the network.allow list of the gate
 * policy in force (gate.yaml).  When both are the versions already in force,
 * nothing changes.  A policy that does not parse, or an allow list the
 * classifier refuses, is refused and the old one stays in force.  0 on
 * success (or unchanged), -1 with the reason in err. */
int policyset_reload(struct policyset *ps, struct store *s, char *err, size_t errlen);
/* The version in force, 0 when none is loaded yet. */
long long policyset_version(struct policyset *ps);
/* The gate policy version whose network.allow the classifier in force uses. */
long long policyset_gate_version(struct policyset *ps);
/* A reference to the policy in force; 0 on success, -1 when none is loaded.
 * Every successful acquire is paired with a release. */
int policyset_acquire(struct policyset *ps, struct policy_snap *out);
void policyset_release(struct policyset *ps, const struct policy_snap *snap);
void policyset_free(struct policyset *ps); /* NULL is a no-op; no references may be held */

#endif
