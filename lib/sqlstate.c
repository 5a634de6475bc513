/* sqlstate.c -- comparing SQLSTATEs. */
#include "lib/sqlstate.h"

#include <string.h>

bool sqlstate_is(const char *sqlstate, const char *code)
{
	return sqlstate != NULL && strcmp(sqlstate, code) == 0;
}

bool sqlstate_in_class(const char *sqlstate, const char *cls)
{
	return sqlstate != NULL && strncmp(sqlstate, cls, strlen(cls)) == 0;
}
