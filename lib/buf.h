/* buf.h -- a growable byte buffer, always NUL-terminated, with an optional cap. */
#ifndef AIRLOCK_BUF_H
#define AIRLOCK_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct buf {
	char *data;     /* NUL-terminated; NULL until the first append */
	size_t len;     /* bytes used, not counting the NUL */
	size_t cap;     /* bytes allocated */
	size_t limit;   /* 0 = unbounded; else appends past it are dropped */
	bool truncated; /* set once an append was cut at limit */
};

#define BUF_INIT                                                                                   \
	{                                                                                          \
		NULL, 0, 0, 0, false                                                               \
	}

void buf_init(struct buf *b, size_t limit);
/* Appends n bytes, or as many as fit under the limit (then sets truncated). */
void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the buffer, keeping its memory. */
void buf_reset(struct buf *b);
/* Returns the contents ("" when empty) as a string the caller owns; b is emptied. */
char *buf_steal(struct buf *b);
/* Borrowed view of the contents, "" when empty; valid until the next append. */
const char *buf_str(const struct buf *b);
void buf_free(struct buf *b);

#endif
