/* buf.c -- a growable byte buffer. */
#include "lib/buf.h"

#include "lib/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

static void grow(struct buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 64;

	if (need + 1 <= b->cap)
		return;
	while (cap < need + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
	if (b->limit && b->len + n > b->limit) {
		n = b->limit > b->len ? b->limit - b->len : 0;
		b->truncated = true;
	}
	grow(b, b->len + n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_append(b, &c, 1);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		buf_append(b, small, (size_t)n);
		return;
	}
	char *big = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf_append(b, big, (size_t)n);
	free(big);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->truncated = false;
	if (b->data)
		b->data[0] = '\0';
}

char *buf_steal(struct buf *b)
{
	char *s = b->data ? b->data : xstrdup("");
	size_t limit = b->limit;

	buf_init(b, limit);
	return s;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b, b->limit);
}
