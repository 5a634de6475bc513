/* conninfo.h -- what a libpq connection string says, without connecting. */
#ifndef AIRLOCK_CONNINFO_H
#define AIRLOCK_CONNINFO_H

#include <stdbool.h>

/* Whether conninfo (key=value or postgresql:// URI) names a password, as
 * password=... or as the URI's user:password@.  A string libpq cannot parse
 * counts when it contains the word "password" at all. */
bool conninfo_has_password(const char *conninfo);

/* The value conninfo gives keyword (e.g. "user"), as libpq reads it;
 * caller frees.  NULL when it gives none or cannot be parsed. */
char *conninfo_get(const char *conninfo, const char *keyword);

#endif
