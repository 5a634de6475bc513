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

bool sqlstate_transient(const char *sqlstate)
{
	return sqlstate == NULL || sqlstate[0] == '\0' ||
	       sqlstate_in_class(sqlstate, SQLSTATE_CONNECTION_EXCEPTION_CLASS) ||
	       sqlstate_in_class(sqlstate, SQLSTATE_TRANSACTION_ROLLBACK_CLASS) ||
	       sqlstate_in_class(sqlstate, SQLSTATE_INSUFFICIENT_RESOURCES_CLASS) ||
	       sqlstate_in_class(sqlstate, "57") || /* 57014 and operator intervention */
	       sqlstate_in_class(sqlstate, SQLSTATE_SYSTEM_ERROR_CLASS) ||
	       sqlstate_is(sqlstate, SQLSTATE_LOCK_NOT_AVAILABLE) ||
	       sqlstate_is(sqlstate, SQLSTATE_READ_ONLY_TRANSACTION);
}
