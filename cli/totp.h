/* totp.h -- `airlock operator totp enroll`: an operator's second factor for
 * the console (airlock-web). */
#ifndef AIRLOCK_CLI_TOTP_H
#define AIRLOCK_CLI_TOTP_H

/* argv[0] is "operator"; returns the exit code (cli.h). */
int cli_operator(int argc, char **argv);

#endif
