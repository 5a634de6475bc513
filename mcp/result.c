/* result.c -- CallToolResult builders and argument accessors. */
#include "mcp/result.h"

#include "store/store.h"

#include "lib/sqlstate.h"
#include "lib/buf.h"
#include "lib/xalloc.h"

#include <stdlib.h>
#include <string.h>

static void add_text(cJSON *content, const char *text)
{
	cJSON *block = cJSON_CreateObject();

	cJSON_AddStringToObject(block, "type", "text");
	cJSON_AddStringToObject(block, "text", text);
	cJSON_AddItemToArray(content, block);
}

cJSON *mcp_result_error(const char *message, const char *guidance)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(r, "content");

	add_text(content, message);
	if (guidance != NULL)
		add_text(content, guidance);
	cJSON_AddTrueToObject(r, "isError");
	return r;
}

cJSON *mcp_result_ok(cJSON *structured, const char *summary)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(r, "content");
	char *json = cJSON_PrintUnformatted(structured);

	add_text(content, summary);
	add_text(content, json);
	free(json);
	cJSON_AddItemToObject(r, "structuredContent", structured);
	return r;
}

/* What an agent should do after each kind of database failure. */
static const char *advice_for(const char *sqlstate)
{
	static const struct {
		const char *sqlstate;
		const char *advice;
	} table[] = {
	    {SQLSTATE_UNKNOWN_ENTITY,
	     "Nothing was done. Check the name: get_health_summary lists the entities "
	     "airlock knows."},
	    {SQLSTATE_INVALID_ARGUMENT, "Nothing was done. Fix the argument and call again."},
	    {SQLSTATE_AGENT_NOT_RUNNING,
	     "Nothing was queued. Ask your operator to start the guest agent, or use a "
	     "different target. " MCP_NO_BYPASS},
	    {SQLSTATE_CT_NOT_RUNNING,
	     "Nothing was queued. Ask your operator to start the container, or use a "
	     "different target. " MCP_NO_BYPASS},
	    {SQLSTATE_TARGET_GONE,
	     "Nothing was queued: the guest is gone from the cluster (no node airlock manages "
	     "lists it; removed, or moved to a node the inventory does not list). Do not "
	     "retry on it: use a target that exists (get_health_summary lists them), or ask "
	     "your operator to add the guest or its node back. " MCP_NO_BYPASS},
	    {SQLSTATE_OUT_OF_SCOPE,
	     "Nothing was written: the target (or the class) is outside your scope in "
	     "airlock's gate policy (the message names the scope). Use a target inside it, or "
	     "ask your operator to widen it. " MCP_NO_BYPASS},
	    {SQLSTATE_ILLEGAL_TRANSITION,
	     "The execution's state does not allow this; get_execution shows where it "
	     "stands."},
	    {SQLSTATE_SELF_APPROVAL,
	     "An operator may not approve their own request; ask another operator."},
	    {SQLSTATE_NOT_FOUND, "Check the id: list_executions shows your executions."},
	    {SQLSTATE_APPROVAL_IMPOSSIBLE,
	     "The approval no longer applies; ask your operator. " MCP_NO_BYPASS},
	    {SQLSTATE_FLOOD_LIMIT,
	     "Nothing was written: this is over a flood limit of airlock's gate policy "
	     "(the message names it). Wait, or send fewer, larger requests. " MCP_NO_BYPASS},
	    {SQLSTATE_INSUFFICIENT_PRIVILEGE,
	     "Your database login may not do this; ask your operator. " MCP_NO_BYPASS},
	    {SQLSTATE_QUERY_CANCELED,
	     "The database did not answer in time; nothing is known to have changed. "
	     "Try again shortly; if it persists, tell your operator. " MCP_NO_BYPASS},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (sqlstate_is(sqlstate, table[i].sqlstate))
			return table[i].advice;
	if (sqlstate[0] == '\0' || sqlstate_in_class(sqlstate, SQLSTATE_CONNECTION_EXCEPTION_CLASS))
		return "airlock's database is unreachable; nothing was done. Try again shortly; if "
		       "it persists, tell your operator. " MCP_NO_BYPASS;
	return "airlock could not do this; tell your operator what you tried and this "
	       "message. " MCP_NO_BYPASS;
}

cJSON *mcp_result_db_error(const struct store *st, const char *what)
{
	const char *sqlstate = store_sqlstate(st);
	struct buf guidance = BUF_INIT;
	char *msg;
	cJSON *r;

	if (sqlstate[0] == '\0' || sqlstate_in_class(sqlstate, SQLSTATE_CONNECTION_EXCEPTION_CLASS))
		buf_printf(&guidance, "%s failed: airlock's database could not be reached. ", what);
	else
		buf_printf(&guidance, "%s %s (SQLSTATE %s). ", what,
		           sqlstate_in_class(sqlstate, SQLSTATE_AIRLOCK_CLASS) ||
		                   sqlstate_is(sqlstate, SQLSTATE_INSUFFICIENT_PRIVILEGE)
		               ? "refused"
		               : "failed",
		           sqlstate);
	if (store_errdetail(st)[0] != '\0')
		buf_printf(&guidance, "Detail: %s ", store_errdetail(st));
	if (store_errhint(st)[0] != '\0')
		buf_printf(&guidance, "Hint: %s ", store_errhint(st));
	buf_puts(&guidance, advice_for(sqlstate));
	if (strstr(buf_str(&guidance), "go around airlock") == NULL)
		buf_puts(&guidance, " " MCP_NO_BYPASS);
	/* libpq's reasons can run over several lines; the agent gets the first. */
	msg = xstrdup(store_errmsg(st)[0] ? store_errmsg(st) : "unknown error");
	msg[strcspn(msg, "\n")] = '\0';
	r = mcp_result_error(msg, buf_str(&guidance));
	buf_free(&guidance);
	free(msg);
	return r;
}

cJSON *mcp_result_parse_db_json(const char *text)
{
	return cJSON_ParseWithOpts(text, NULL, 1);
}

const char *mcp_arg_str(const cJSON *args, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int64_t mcp_arg_int(const cJSON *args, const char *name, int64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);

	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}
