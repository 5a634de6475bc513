/* form.h -- application/x-www-form-urlencoded bodies and query strings. */
#ifndef AIRLOCK_WEB_FORM_H
#define AIRLOCK_WEB_FORM_H

#include <stddef.h>

#define FORM_MAX_FIELDS 512 /* a bulk decision ticks many boxes */

struct form {
	size_t n;
	char *key[FORM_MAX_FIELDS];
	char *val[FORM_MAX_FIELDS];
};

/* Parses s[0..len) into f (which must be zeroed or freed).  -1 on a
 * malformed escape, an encoded NUL, or more than FORM_MAX_FIELDS fields;
 * f is then empty. */
int form_parse(struct form *f, const char *s, size_t len);
/* The first value of key, or NULL.  Borrowed until form_free(). */
const char *form_get(const struct form *f, const char *key);
void form_free(struct form *f);

#endif
