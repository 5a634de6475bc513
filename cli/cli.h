/* cli.h -- what the `airlock` subcommands share: connecting, errors, exit codes.
 *
 * Exit codes (documented in `airlock --help` and docs/operators.md):
 *   0 success; 1 error (database unreachable, unexpected failure);
 *   2 usage or invalid argument; 3 refused by airlock (pre-flight, permission
 *   denied, illegal state, self-approval, approval void); 4 not found. */
#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

#include "store/store.h"

enum cli_exit {
	CLI_OK = 0,
	CLI_ERROR = 1,
	CLI_USAGE = 2,
	CLI_REFUSED = 3,
	CLI_NOT_FOUND = 4,
};

/* Connects (db from --db, else AIRLOCK_DB, else PG*); prints the reason and
 * returns NULL on failure. */
struct store *cli_connect(const char *db);
/* Prints "airlock: <what>: <reason>" for the store's last error and returns
 * the exit code its SQLSTATE means. */
int cli_fail(const struct store *s, const char *what);
/* Prints on stderr the session user a write is about to act as, and where
 * the login came from (db is the --db value or NULL), so an exported
 * AIRLOCK_DB or PGUSER never acts as someone unnoticed. */
void cli_acting_as(struct store *s, const char *db);
/* cli_connect(), then cli_acting_as(): for every command that writes. */
struct store *cli_connect_write(const char *db);
/* The exit code a SQLSTATE means. */
int cli_exit_for_sqlstate(const char *sqlstate);

/* Subcommands: argv[0] is the subcommand's name; return the exit code. */
int cli_migrate(int argc, char **argv);
int cli_seed(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_show(int argc, char **argv);
int cli_pending(int argc, char **argv);
int cli_notifications(int argc, char **argv);
int cli_previews(int argc, char **argv);
int cli_approve(int argc, char **argv);
int cli_reject(int argc, char **argv);
int cli_cancel(int argc, char **argv);
int cli_history(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_policy(int argc, char **argv);
int cli_hook(int argc, char **argv);
int cli_output(int argc, char **argv);
int cli_chat(int argc, char **argv);

#endif
