/* sidedoor.h -- `airlock side-door`: what operators see of the side door,
 * and its one line at the head of `airlock pending`. */
#ifndef AIRLOCK_CLI_SIDEDOOR_H
#define AIRLOCK_CLI_SIDEDOOR_H

#include "store/store.h"

int cli_side_door(int argc, char **argv);
/* "!! side door: ..." and a blank line when agents' hosts reported denials,
 * asks or open doors in the last 24 hours; nothing otherwise (nor when the
 * login may not read it). */
void cli_side_door_line(struct store *s);

#endif
