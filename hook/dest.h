/* dest.h -- is a destination managed?  Every spelling a destination may
 * take before it is dialled (the name itself, what ssh's own configuration
 * turns it into, what the resolver answers) is asked of the database's
 * airlock.hook_match(), which says which of them reach a managed machine
 * without listing any address. */
#ifndef AIRLOCK_HOOK_DEST_H
#define AIRLOCK_HOOK_DEST_H

#include "hook/reach.h"

#include <stdbool.h>
#include <stddef.h>

struct store;

/* Bounds on the look-ups, in ms: a slow resolver or ssh config cannot hold
 * the hook (and the hook's own budget bounds everything anyway). */
#define DEST_RESOLVE_MS 1500
#define DEST_SSH_G_MS   2000

struct dest_match {
	char candidate[256];
	char slug[128];  /* the entity it reaches, "" for e.g. the ZVM */
	char label[128]; /* what it is when it is no entity */
	bool managed;    /* else allowed */
};

struct dest_set {
	struct dest_cand *c; /* candidate spellings, each tied to a reach */
	size_t n, cap;
	struct dest_match *m; /* matches from the database */
	size_t nm;
};

/* Adds every spelling of each reach's destination to ds: the name, ssh -G's
 * hostname and jump hosts (ssh family), and the addresses the resolver gives
 * (names only).  0, or -1 when nothing could be added (out of memory is
 * fatal, so in practice 0). */
int dest_resolve(const struct reach_list *rl, struct dest_set *ds);
/* Asks the database about every candidate.  0, or -1 with the reason. */
int dest_match(struct dest_set *ds, struct store *db, char *err, size_t errlen);
/* The managed match of reach i, or NULL. */
const struct dest_match *dest_managed(const struct dest_set *ds, size_t i);
/* True when reach i's own destination is on the allowlist. */
bool dest_allowed(const struct dest_set *ds, size_t i);
void dest_set_clear(struct dest_set *ds);

#endif
