/* result.h -- building MCP CallToolResults, and reading validated tool arguments.
 *
 * A tool answers with a result, never a protocol error: success carries
 * structuredContent (conforming to the tool's outputSchema) plus text for the
 * model; a refusal or failure carries isError and text an agent can act on,
 * ending with what to do now. */
#ifndef AIRLOCK_MCP_RESULT_H
#define AIRLOCK_MCP_RESULT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

struct store;

/* The one rule every non-final answer repeats. */
#define MCP_NO_BYPASS                                                                              \
	"Do not go around airlock: no raw SSH, no other tool or channel, not even to check. "      \
	"If it is urgent, ask your operator."

/* isError result: message first (exactly as given), then guidance if not NULL. */
cJSON *mcp_result_error(const char *message, const char *guidance);
/* Success: structured is taken over; summary is the text block before the JSON. */
cJSON *mcp_result_ok(cJSON *structured, const char *summary);
/* isError result for the failure kept on st (its exact message, then advice
 * chosen by SQLSTATE).  what names the operation, e.g. "run". */
cJSON *mcp_result_db_error(const struct store *st, const char *what);

/* Parses a JSON document the database returned (jsonb as text).  NULL if it
 * is not valid JSON (a server fault: the caller answers with an error). */
cJSON *mcp_result_parse_db_json(const char *text);

/* Arguments, after validation against the tool's table (mcp/tools.c). */
const char *mcp_arg_str(const cJSON *args, const char *name); /* NULL when absent */
int64_t mcp_arg_int(const cJSON *args, const char *name, int64_t dflt);

#endif
