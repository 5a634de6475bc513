/* nameidx.h -- a fixed table of entries whose first field is a name, looked
 * up by name in constant time (internal to the classifier).
 *
 * The index is built once (nameidx_find builds it on first use, thread-safe
 * through the caller's pthread_once) over a static array; lookups are one
 * hash and, usually, one comparison. */
#ifndef AIRLOCK_NAMEIDX_H
#define AIRLOCK_NAMEIDX_H

#include <stddef.h>

#define NAMEIDX_SLOTS 1024 /* a power of two, more than twice any table */

struct nameidx {
	unsigned short slot[NAMEIDX_SLOTS]; /* index + 1 into the table; 0: empty */
};

/* Fills x for the n entries of size bytes at base (each starts with a
 * `const char *name`).  Returns -1 when the table is too large. */
int nameidx_build(struct nameidx *x, const void *base, size_t n, size_t size);
/* The entry named name, or NULL. */
const void *nameidx_find(const struct nameidx *x, const void *base, size_t size, const char *name);

#endif
