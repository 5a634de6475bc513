/* executions.h -- the execution tools: run, get_execution, list_executions, cancel_execution.
 *
 * Each answer carries the row as the agent may see it, whether it is final,
 * and in plain words what the agent should do now: the database's next_step
 * (airlock._next_step), which is the one source of that text. */
#ifndef AIRLOCK_MCP_EXECUTIONS_H
#define AIRLOCK_MCP_EXECUTIONS_H

#include "mcp/tools.h"

#include <stddef.h>

/* Where every state change is announced (no payload: any login may LISTEN
 * there, so it must not say whose row moved); a wait re-reads its row. */
#define MCP_STATE_CHANNEL "airlock_state"

void mcp_exec_run(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_exec_get(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_exec_list(struct store *st, const cJSON *args, struct mcp_call *call);
void mcp_exec_cancel(struct store *st, const cJSON *args, struct mcp_call *call);

/* Final states never change again. */
bool mcp_exec_is_final(const char *state);
/* Whether a wait should stop at state: final, or (unless until_final) a
 * state that needs a human (pending_approval). */
bool mcp_exec_settled(const char *state, bool until_final);
/* Reads execution id's current state into state.  0, or -1 when it cannot be
 * read (the wait then ends and the answer reports why). */
int mcp_exec_state(struct store *st, int64_t id, char *state, size_t len);
/* Why a wait ended. */
enum mcp_wait_end {
	MCP_WAIT_SETTLED,   /* the execution reached a state the wait was for */
	MCP_WAIT_TIMEOUT,   /* wait_seconds ran out */
	MCP_WAIT_INPUT_END, /* the client closed its input: answer now, then exit */
	MCP_WAIT_STOPPED,   /* the server was told to stop, or the database link broke */
	MCP_WAIT_CANCELLED, /* notifications/cancelled named the request: no answer */
};

/* "settled", "timeout", "input_closed", "stopped" or "cancelled". */
const char *mcp_exec_wait_end_name(enum mcp_wait_end why);
/* Ends call's wait: UNLISTEN, then (unless the client cancelled the request)
 * sets call->result from the row as it now stands. */
void mcp_exec_end_wait(struct store *st, struct mcp_call *call, enum mcp_wait_end why);

#endif
