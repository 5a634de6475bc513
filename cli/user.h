/* user.h -- `airlock user add`: a login for one person or program, in one
 * airlock role, with a SCRAM password or certificate authentication. */
#ifndef AIRLOCK_CLI_USER_H
#define AIRLOCK_CLI_USER_H

#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>

/* The subcommand: argv[0] is "user"; returns the exit code. */
int cli_user(int argc, char **argv);

struct user_login {
	const char *name;     /* checked: lower-case letters, digits, _ */
	const char *role;     /* airlock_operator, airlock_agent, airlock_worker, ... */
	const char *password; /* NULL: no password (certificate authentication) */
	bool existed;         /* out: the login existed and was updated */
};

/* Creates or updates the logins in one transaction, all or none, with
 * SCRAM-SHA-256 verifiers made here.  One login, one airlock role: a login
 * that holds (or would hold) another airlock role, a superuser and a group
 * role are refused.  CLI_OK, or the exit code with the reason on stderr. */
int user_apply(struct store *s, struct user_login *logins, size_t n);

#endif
