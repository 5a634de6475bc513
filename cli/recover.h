/* recover.h -- `airlock recover`, `airlock inspect` and `airlock flr list|end`. */
#ifndef AIRLOCK_CLI_RECOVER_H
#define AIRLOCK_CLI_RECOVER_H

int cli_recover(int argc, char **argv);
int cli_flr(int argc, char **argv);
int cli_inspect(int argc, char **argv);

#endif
