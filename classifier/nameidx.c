/* nameidx.c -- constant-time lookup of a static table by name. */
#include "classifier/nameidx.h"

#include <stdint.h>
#include <string.h>

static size_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h & (NAMEIDX_SLOTS - 1);
}

static const char *name_at(const void *base, size_t size, size_t i)
{
	return *(const char *const *)((const char *)base + i * size);
}

int nameidx_build(struct nameidx *x, const void *base, size_t n, size_t size)
{
	memset(x, 0, sizeof(*x));
	if (n * 2 > NAMEIDX_SLOTS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t h = hash(name_at(base, size, i));

		while (x->slot[h] != 0)
			h = (h + 1) & (NAMEIDX_SLOTS - 1);
		x->slot[h] = (unsigned short)(i + 1);
	}
	return 0;
}

const void *nameidx_find(const struct nameidx *x, const void *base, size_t size, const char *name)
{
	for (size_t h = hash(name); x->slot[h] != 0; h = (h + 1) & (NAMEIDX_SLOTS - 1)) {
		size_t i = x->slot[h] - 1u;

		if (strcmp(name_at(base, size, i), name) == 0)
			return (const char *)base + i * size;
	}
	return NULL;
}
