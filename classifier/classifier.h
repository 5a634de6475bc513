/* classifier.h -- how risky is a shell command?  No I/O after load.
 *
 * The classifier parses the command as the shell would (see shparse.h),
 * looks through wrappers (sudo, env, xargs, bash -c, pct exec, ...) to what
 * really runs, and gives every command, write target and piece of code the
 * class the policy assigns.  The verdict is the highest of them, never lower
 * than the declared risk.  What it cannot understand is at least
 * config_mutation. */
#ifndef AIRLOCK_CLASSIFIER_H
#define AIRLOCK_CLASSIFIER_H

#include "classifier/classes.h"
#include "classifier/policy.h"
#include "classifier/verdict.h"

#include <stdbool.h>
#include <stddef.h>

/* Recorded with each verdict; bump when the same policy could classify a
 * command differently. */
#define CLASSIFIER_VERSION "airlock-classifier/3"

/* Commands longer than this are not parsed: they get config_mutation. */
#define CLASSIFIER_MAX_COMMAND ((size_t)4 << 20)

struct classifier; /* opaque, immutable after classifier_new(); may be shared by threads */

/* What a classifier knows beside its policy: the operator's gate.yaml. */
struct classifier_options {
	/* network.allow: host globs (fnmatch, case-insensitive) that a proven
	 * harmless network read (HTTP GET/HEAD, ping, a DNS lookup, an SQL
	 * query) may reach and stay below config_mutation; none: every program
	 * that sends traffic is at least config_mutation */
	const char *const *network_allow;
	size_t nnetwork_allow;
};

/* p is borrowed and must outlive the classifier.  NULL on failure with the
 * reason in err. */
struct classifier *classifier_new(const struct policy *p, char *err, size_t errlen);
/* The same with options (copied; o may be NULL).  A network.allow entry
 * that is not a host glob is refused with the reason in err. */
struct classifier *classifier_new_opts(const struct policy *p, const struct classifier_options *o,
                                       char *err, size_t errlen);
/* NULL when glob may be a network.allow entry, else why not (static text). */
const char *classifier_network_glob_problem(const char *glob);
/* Classifies command[0..len) for a target of type t; declared is the agent's
 * declared risk (RISK_READ_ONLY when none: it can only raise the class).
 * Fills *out (initialise it with VERDICT_INIT once, reuse it, verdict_free()
 * it).  Always gives a verdict; returns 0, or -1 only for invalid arguments. */
int classifier_classify(const struct classifier *c, enum target_type t, const char *command,
                        size_t len, enum risk_class declared, struct verdict *out);
/* The policy c was made with (borrowed). */
const struct policy *classifier_policy(const struct classifier *c);
void classifier_free(struct classifier *c); /* NULL is a no-op */

struct sh_word;

/* What classifier_observe() reports while it reads a command the way
 * classifier_classify() does (wrappers, sh -c, substitutions, pipelines,
 * here-docs fed to shells, ssh's remote command...).  Either callback may be
 * NULL.  Pointers are valid only during the call. */
struct classifier_observer {
	/* A program the command may run: w[0] is the program word as spelled
	 * (possibly computed, see shparse.h), w[1..n) its arguments; extra: more
	 * arguments nobody can see are appended (xargs). */
	void (*program)(void *ctx, const struct sh_word *w, size_t n, bool extra);
	/* Code the reading could not follow (python3 -c, a parse failure, a
	 * shell reading what cannot be seen): what says which (the reason's
	 * words, e.g. "python3 -c (code in another language)"); text is the
	 * code when it is known, else NULL. */
	void (*opaque)(void *ctx, const char *what, const char *text, size_t len);
	/* The target word of every redirection (< > >> <> >& ...): bash opens
	 * /dev/tcp/HOST/PORT as a connection. */
	void (*redirect)(void *ctx, const struct sh_word *target);
	void *ctx;
};

/* Reads command[0..len) for a target of type t and reports to obs; the
 * classification itself lands in *scratch (as for classifier_classify).
 * Returns 0, or -1 for invalid arguments. */
int classifier_observe(const struct classifier *c, enum target_type t, const char *command,
                       size_t len, const struct classifier_observer *obs, struct verdict *scratch);

#endif
