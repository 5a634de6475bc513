/* classify.h -- `airlock classify`: how risky is a command, and why. */
#ifndef AIRLOCK_CLI_CLASSIFY_H
#define AIRLOCK_CLI_CLASSIFY_H

/* argv[0] is "classify".  Returns the exit code: 0 done, 1 error (the
 * policy or database could not be read), 2 usage. */
int cli_classify(int argc, char **argv);

#endif
