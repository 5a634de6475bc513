/* init.h -- `airlock init`: migrations, seeds and airlockd's own logins for a
 * fresh database, then the next steps. */
#ifndef AIRLOCK_CLI_INIT_H
#define AIRLOCK_CLI_INIT_H

/* The subcommand: argv[0] is "init"; returns the exit code. */
int cli_init(int argc, char **argv);

#endif
