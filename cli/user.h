/* user.h -- `airlock user add`: a login for one person or program, in one
 * airlock role, with a SCRAM password or certificate authentication. */
#ifndef AIRLOCK_CLI_USER_H
#define AIRLOCK_CLI_USER_H

/* The subcommand: argv[0] is "user"; returns the exit code. */
int cli_user(int argc, char **argv);

#endif
