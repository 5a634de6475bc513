/* xalloc.c -- allocation that cannot fail. */
#include "lib/xalloc.h"

#include "lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void oom(size_t n)
{
	char msg[128], ts[32];
	int len = snprintf(msg, sizeof(msg), "ts=%s level=fatal evt=out_of_memory bytes=%zu\n",
	                   log_timestamp(ts, sizeof(ts)), n);

	if (len > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)len);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);

	if (p == NULL)
		oom(count * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = xmalloc(len + 1);

	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom(0);
	return s;
}
