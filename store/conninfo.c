/* conninfo.c -- libpq's own parser answers, not a substring search. */
#include "store/conninfo.h"

#include "lib/xalloc.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

bool conninfo_has_password(const char *conninfo)
{
	char *pw;

	if (conninfo == NULL)
		return false;
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	if (opts == NULL)
		return strstr(conninfo, "password") != NULL;
	PQconninfoFree(opts);
	pw = conninfo_get(conninfo, "password");
	bool found = pw != NULL;
	free(pw);
	return found;
}

char *conninfo_get(const char *conninfo, const char *keyword)
{
	PQconninfoOption *opts;
	char *val = NULL;

	if (conninfo == NULL)
		return NULL;
	opts = PQconninfoParse(conninfo, NULL);
	if (opts == NULL)
		return NULL;
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, keyword) == 0 && o->val != NULL && o->val[0] != '\0')
			val = xstrdup(o->val);
	PQconninfoFree(opts);
	return val;
}
