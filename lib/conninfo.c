/* conninfo.c -- libpq's own parser answers, not a substring search. */
#include "lib/conninfo.h"

#include <libpq-fe.h>
#include <string.h>

bool conninfo_has_password(const char *conninfo)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	bool found = false;

	if (opts == NULL)
		return strstr(conninfo, "password") != NULL;
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL && o->val[0] != '\0')
			found = true;
	PQconninfoFree(opts);
	return found;
}
