/* identity.c -- say, before a write, which database login it acts as. */
#include "cli/cli.h"

#include "lib/visible.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the connection settings came from, in store_open()'s order. */
static const char *settings_source(const char *db)
{
	if (db != NULL && db[0] != '\0')
		return "--db";
	if (getenv("AIRLOCK_DB") != NULL && getenv("AIRLOCK_DB")[0] != '\0')
		return "AIRLOCK_DB";
	return "the PG* environment";
}

void cli_acting_as(struct store *s, const char *db)
{
	struct store_res *res = store_exec(s, "SELECT session_user::text", 0, NULL);
	const char *pguser = getenv("PGUSER");
	char *who, *other = NULL;

	if (res == NULL) {
		fprintf(stderr, "airlock: could not tell which database user this is: %s\n",
		        store_errmsg(s));
		return;
	}
	who = visible_str(store_get(res, 0, 0), 0);
	if (pguser != NULL && pguser[0] != '\0' && strcmp(pguser, store_get(res, 0, 0)) != 0)
		other = visible_str(pguser, 0);
	fprintf(stderr, "airlock: acting as database user \"%s\" (login from %s%s%s%s)\n", who,
	        settings_source(db), other ? "; PGUSER=" : "", other ? other : "",
	        other ? " is not used" : "");
	free(who);
	free(other);
	store_clear(res);
}

struct store *cli_connect_write(const char *db)
{
	struct store *s = cli_connect(db);

	if (s != NULL)
		cli_acting_as(s, db);
	return s;
}
