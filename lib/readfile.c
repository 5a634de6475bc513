/* readfile.c -- a whole file into memory. */
#include "lib/readfile.h"

#include "lib/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

char *readfile_secret(const char *file, size_t *len, char *why, size_t whylen)
{
	struct stat st;
	char *text;

	if (stat(file, &st) != 0) {
		snprintf(why, whylen, "cannot read %.300s: %s", file, strerror(errno));
		return NULL;
	}
	if (st.st_mode & 077) {
		snprintf(why, whylen,
		         "%.300s is readable by group or others: chmod 600 it (it is a secret)",
		         file);
		return NULL;
	}
	text = readfile(file, 4096, len, why, whylen);
	if (text == NULL)
		return NULL;
	while (*len > 0 && (text[*len - 1] == '\n' || text[*len - 1] == '\r'))
		text[--*len] = '\0';
	if (*len == 0) {
		snprintf(why, whylen, "%.300s is empty", file);
		free(text);
		return NULL;
	}
	return text;
}
