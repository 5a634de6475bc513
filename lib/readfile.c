/* readfile.c -- a whole file into memory. */
#include "lib/readfile.h"

#include "lib/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *readfile(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	struct buf b;
	char chunk[8192];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf_init(&b, max);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		buf_append(&b, chunk, n);
		if (b.truncated)
			break;
	}
	if (ferror(f) || b.truncated) {
		if (b.truncated)
			snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
		else
			snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
		fclose(f);
		buf_free(&b);
		return NULL;
	}
	fclose(f);
	if (len)
		*len = b.len;
	return buf_steal(&b);
}
