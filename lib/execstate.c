/* execstate.c -- names of execution states, one table each way. */
#include "lib/execstate.h"

#include <stddef.h>
#include <string.h>

const char *const exec_state_names[EXEC_STATE_COUNT + 1] = {
    [EXEC_RECEIVED] = "received",
    [EXEC_QUEUED] = "queued",
    [EXEC_PENDING_APPROVAL] = "pending_approval",
    [EXEC_APPROVED] = "approved",
    [EXEC_REJECTED] = "rejected",
    [EXEC_EXPIRED] = "expired",
    [EXEC_CANCELLED] = "cancelled",
    [EXEC_REFUSED] = "refused",
    [EXEC_RUNNING] = "running",
    [EXEC_SUCCEEDED] = "succeeded",
    [EXEC_FAILED] = "failed",
    [EXEC_TIMED_OUT] = "timed_out",
    [EXEC_OUTCOME_UNKNOWN] = "outcome_unknown",
    [EXEC_STATE_COUNT] = NULL,
};

const char *exec_state_name(enum exec_state s)
{
	if ((unsigned)s >= EXEC_STATE_COUNT)
		return "invalid";
	return exec_state_names[s];
}

int exec_state_parse(const char *s, enum exec_state *out)
{
	for (int i = 0; s != NULL && i < EXEC_STATE_COUNT; i++) {
		if (strcmp(s, exec_state_names[i]) == 0) {
			*out = (enum exec_state)i;
			return 0;
		}
	}
	return -1;
}

bool exec_state_is_final(enum exec_state s)
{
	switch (s) {
	case EXEC_REJECTED:
	case EXEC_EXPIRED:
	case EXEC_CANCELLED:
	case EXEC_REFUSED:
	case EXEC_SUCCEEDED:
	case EXEC_FAILED:
	case EXEC_TIMED_OUT:
	case EXEC_OUTCOME_UNKNOWN:
		return true;
	case EXEC_RECEIVED:
	case EXEC_QUEUED:
	case EXEC_PENDING_APPROVAL:
	case EXEC_APPROVED:
	case EXEC_RUNNING:
		break;
	}
	return false;
}
