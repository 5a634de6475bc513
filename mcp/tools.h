/* tools.h -- the catalogue of airlock-mcp's tools: schemas, argument validation, dispatch.
 *
 * One table describes each tool's arguments; the inputSchema that tools/list
 * advertises and the validation tools/call applies are both generated from
 * it, so they cannot disagree.  Arguments that fail validation never reach
 * the database: the agent gets an isError result naming every problem. */
#ifndef AIRLOCK_MCP_TOOLS_H
#define AIRLOCK_MCP_TOOLS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

struct store;

/* Upper bound of a tool's wait_seconds argument. */
#define MCP_WAIT_MAX_SECONDS 300
/* The longest one call waits, whatever wait_seconds asks: below the 60 s
 * that MCP clients' requests time out after by default (the TypeScript
 * SDK's, for one).  A longer wait is answered at the bound, still pending,
 * with the call to make next. */
#define MCP_WAIT_BOUND_SECONDS 50

/* One tools/call in progress. */
struct mcp_call {
	cJSON *result;         /* the CallToolResult once known (caller frees) */
	int64_t wait_id;       /* nonzero: wait for this execution before answering */
	int wait_seconds;      /* budget of that wait (at most MCP_WAIT_BOUND_SECONDS) */
	int wait_requested;    /* what wait_seconds asked for */
	bool wait_until_final; /* false: pending_approval also ends the wait */
};

typedef void (*mcp_tool_fn)(struct store *st, const cJSON *args, struct mcp_call *call);

/* The tools/list result: a new object the caller owns. */
cJSON *mcp_tools_list(void);
bool mcp_tools_exists(const char *name);
/* Checks args (an object) for tool name (which must exist): NULL when they
 * fit, else the isError result that names every problem (caller frees). */
cJSON *mcp_tools_check(const char *name, const cJSON *args);
/* Runs tool name with args that passed mcp_tools_check(), on st (a session
 * whose login was checked).  On return call->result is set, or
 * call->wait_id asks the caller to wait (LISTEN is then active) and to
 * finish with mcp_exec_end_wait(). */
void mcp_tools_call(struct store *st, const char *name, const cJSON *args, struct mcp_call *call);
/* Validation alone: NULL when args fit the tool, else a message the caller
 * frees.  Exposed for tests. */
char *mcp_tools_validate(const char *name, const cJSON *args);

#endif
