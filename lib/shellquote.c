/* shellquote.c -- POSIX single-quote escaping (see shellquote.h). */
#include "lib/shellquote.h"

#include <string.h>

#include "lib/buf.h"

void shellquote_append(struct buf *b, const char *s, size_t n)
{
	const char *end = s + n;

	buf_putc(b, '\'');
	while (s < end) {
		const char *q = memchr(s, '\'', (size_t)(end - s));
		size_t run = q ? (size_t)(q - s) : (size_t)(end - s);

		buf_append(b, s, run);
		s += run;
		if (q) {
			buf_append(b, "'\\''", 4);
			s++;
		}
	}
	buf_putc(b, '\'');
}

char *shellquote(const char *s)
{
	struct buf b = BUF_INIT;

	shellquote_append(&b, s, strlen(s));
	return buf_steal(&b);
}
