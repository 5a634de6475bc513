/* cli.c -- connecting and reporting errors for the subcommands. */
#include "cli/cli.h"

#include "lib/sqlstate.h"
#include "lib/visible.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store *cli_connect(const char *db)
{
	char err[1024];
	struct store *s = store_open(db, "airlock", err, sizeof(err));

	if (s == NULL)
		fprintf(stderr,
		        "airlock: %s\n(set --db CONNINFO, AIRLOCK_DB, or "
		        "PGHOST/PGPORT/PGUSER/PGDATABASE)\n",
		        err);
	return s;
}

int cli_exit_for_sqlstate(const char *st)
{
	if (st == NULL || st[0] == '\0')
		return CLI_ERROR;
	if (sqlstate_is(st, SQLSTATE_UNKNOWN_ENTITY) || sqlstate_is(st, SQLSTATE_NOT_FOUND))
		return CLI_NOT_FOUND;
	if (sqlstate_is(st, SQLSTATE_INVALID_ARGUMENT))
		return CLI_USAGE;
	if (sqlstate_in_class(st, SQLSTATE_AIRLOCK_CLASS) ||
	    sqlstate_is(st, SQLSTATE_INSUFFICIENT_PRIVILEGE))
		return CLI_REFUSED;
	return CLI_ERROR;
}

int cli_fail(const struct store *s, const char *what)
{
	const char *st = store_sqlstate(s);
	/* Messages quote what agents sent (a target, a key): shown, never obeyed. */
	char *msg = visible_str(store_errmsg(s), 0);

	if (sqlstate_is(st, SQLSTATE_INSUFFICIENT_PRIVILEGE))
		fprintf(stderr, "airlock: %s: %s (your database role is not allowed to do this)\n",
		        what, msg);
	else
		fprintf(stderr, "airlock: %s: %s\n", what, msg);
	free(msg);
	return cli_exit_for_sqlstate(st);
}
