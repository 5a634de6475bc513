/* arena.c -- chunked bump allocation; see arena.h. */
#include "classifier/arena.h"

#include "lib/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t size; /* usable bytes after the header */
	size_t used;
	max_align_t data[];
};

struct arena {
	struct arena_block *head; /* current block; the first block is last in the list */
	size_t used;              /* bytes handed out since reset */
	size_t limit;
};

static struct arena_block *block_new(size_t size)
{
	struct arena_block *b = xmalloc(sizeof(*b) + size);

	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

struct arena *arena_new(size_t limit)
{
	struct arena *a = xcalloc(1, sizeof(*a));

	a->limit = limit;
	a->head = block_new(ARENA_BLOCK);
	return a;
}

void *arena_alloc(struct arena *a, size_t n)
{
	size_t align = _Alignof(max_align_t);
	struct arena_block *b = a->head;
	void *p;

	n = (n + align - 1) & ~(align - 1);
	if (n == 0)
		n = align;
	if (n > a->limit || a->used > a->limit - n)
		return NULL;
	if (b->size - b->used < n) {
		b = block_new(n > ARENA_BLOCK ? n : ARENA_BLOCK);
		b->next = a->head;
		a->head = b;
	}
	p = (char *)b->data + b->used;
	b->used += n;
	a->used += n;
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void arena_reset(struct arena *a)
{
	while (a->head->next != NULL) {
		struct arena_block *b = a->head;

		a->head = b->next;
		free(b);
	}
	a->head->used = 0;
	a->used = 0;
}

size_t arena_used(const struct arena *a)
{
	return a->used;
}

void arena_free(struct arena *a)
{
	if (a == NULL)
		return;
	arena_reset(a);
	free(a->head);
	free(a);
}
