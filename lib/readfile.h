/* readfile.h -- a whole file into memory, with a size cap. */
#ifndef AIRLOCK_READFILE_H
#define AIRLOCK_READFILE_H

#include <stddef.h>

/* Reads path (at most max bytes) into a NUL-terminated string the caller
 * frees; *len gets its length.  NULL on failure with the reason in err. */
char *readfile(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* A secret kept in a file (a key, a token): at most 4096 bytes, trailing
 * newlines dropped, refused when empty or readable by group or others.
 * NULL with the reason in err. */
char *readfile_secret(const char *path, size_t *len, char *err, size_t errlen);

#endif
