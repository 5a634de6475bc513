/* arena.h -- a bump allocator with a hard cap, reused across classifications.
 *
 * The classifier allocates everything for one command from an arena and
 * resets it afterwards, so classifying a typical command touches the heap
 * only the first time.  The cap bounds memory for hostile input: past it,
 * arena_alloc() returns NULL and the caller fails closed. */
#ifndef AIRLOCK_ARENA_H
#define AIRLOCK_ARENA_H

#include <stddef.h>

struct arena;

/* limit: the most bytes the arena hands out between two resets. */
struct arena *arena_new(size_t limit);
/* n bytes aligned for any type, or NULL once limit would be passed. */
void *arena_alloc(struct arena *a, size_t n);
/* A NUL-terminated copy of s[0..n), or NULL past the limit. */
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* Forgets every allocation; keeps the first block for the next use. */
void arena_reset(struct arena *a);
/* Bytes handed out since the last reset. */
size_t arena_used(const struct arena *a);
void arena_free(struct arena *a); /* NULL is a no-op */

#endif
