/* execstate.h -- the states of an execution row, spelled as in SQL.
 *
 * The schema's CHECK on executions.state lists the same thirteen names; the
 * unit test reads the migration and fails when the two lists drift apart. */
#ifndef AIRLOCK_EXECSTATE_H
#define AIRLOCK_EXECSTATE_H

#include <stdbool.h>

enum exec_state {
	EXEC_RECEIVED,
	EXEC_QUEUED,
	EXEC_PENDING_APPROVAL,
	EXEC_APPROVED,
	EXEC_REJECTED,
	EXEC_EXPIRED,
	EXEC_CANCELLED,
	EXEC_REFUSED,
	EXEC_RUNNING,
	EXEC_SUCCEEDED,
	EXEC_FAILED,
	EXEC_TIMED_OUT,
	EXEC_OUTCOME_UNKNOWN,
};
#define EXEC_STATE_COUNT 13

/* Every name in enum order, then NULL (for schemas that list the choices). */
extern const char *const exec_state_names[EXEC_STATE_COUNT + 1];
/* The SQL spelling ("pending_approval"); "invalid" for a value out of range. */
const char *exec_state_name(enum exec_state s);
/* 0 and *out set when s is one of the names; -1 otherwise (NULL included). */
int exec_state_parse(const char *s, enum exec_state *out);
/* True for the states no transition leaves: the row's story has ended. */
bool exec_state_is_final(enum exec_state s);

#endif
