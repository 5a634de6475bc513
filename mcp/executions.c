/* executions.c -- run, get_execution, list_executions, cancel_execution. */
#include "mcp/executions.h"

#include "store/store.h"
#include "mcp/result.h"

#include "lib/buf.h"
#include "lib/execstate.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool mcp_exec_is_final(const char *state)
{
	enum exec_state st;

	return exec_state_parse(state, &st) == 0 && exec_state_is_final(st);
}

bool mcp_exec_settled(const char *state, bool until_final)
{
	enum exec_state st;

	if (exec_state_parse(state, &st) < 0)
		return false;
	return exec_state_is_final(st) || (!until_final && st == EXEC_PENDING_APPROVAL);
}

static const char *str_field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The row of execution id as the agent may see it, or NULL with *err set to
 * an isError result. */
static cJSON *fetch(struct store *st, int64_t id, cJSON **err)
{
	char idtext[24];
	const char *params[1] = {idtext};
	struct store_res *res;
	cJSON *row = NULL;

	snprintf(idtext, sizeof(idtext), "%" PRId64, id);
	res = store_exec_read(st, "SELECT airlock.get_execution($1::bigint)::text", 1, params);
	if (res == NULL) {
		*err = mcp_result_db_error(st, "get_execution");
		return NULL;
	}
	if (store_nrows(res) != 1 || store_isnull(res, 0, 0)) {
		char *msg = xasprintf("execution %" PRId64 " not found, or not yours", id);
		*err =
		    mcp_result_error(msg, "Check the id: list_executions shows your executions.");
		free(msg);
		goto out;
	}
	row = mcp_result_parse_db_json(store_get(res, 0, 0));
	if (!cJSON_IsObject(row) || str_field(row, "state") == NULL) {
		cJSON_Delete(row);
		row = NULL;
		*err = mcp_result_error(
		    "airlock returned an execution without a state",
		    "Tell your operator; this is a fault in airlock. " MCP_NO_BYPASS);
	}
out:
	store_clear(res);
	return row;
}

int mcp_exec_state(struct store *st, int64_t id, char *state, size_t len)
{
	cJSON *err = NULL;
	cJSON *row = fetch(st, id, &err);

	cJSON_Delete(err);
	if (row == NULL)
		return -1;
	snprintf(state, len, "%s", str_field(row, "state"));
	cJSON_Delete(row);
	return 0;
}

/* What to do now: the database's own words (airlock._next_step), the one
 * source of that text.  A row without them (a state the database's text
 * does not cover) still gets an answer that keeps the agent inside. */
static char *next_step(const cJSON *row, const char *state)
{
	const char *db_next = str_field(row, "next_step");

	if (db_next != NULL && db_next[0] != '\0')
		return xstrdup(db_next);
	return xasprintf("airlock gave no next step for state %s: wait with get_execution and ask "
	                 "your operator. %s",
	                 state, MCP_NO_BYPASS);
}

/* Summary text and structured answer for one execution row (taken over). */
static const char *const wait_end_names[] = {"settled", "timeout", "input_closed", "stopped",
                                             "cancelled"};

const char *mcp_exec_wait_end_name(enum mcp_wait_end why)
{
	return wait_end_names[why];
}

/* The call to make next while an execution is not final: get_execution on
 * it, waiting as long as one call may. */
static cJSON *next_call(int64_t id)
{
	cJSON *c = cJSON_CreateObject(), *a;

	cJSON_AddStringToObject(c, "tool", "get_execution");
	a = cJSON_AddObjectToObject(c, "arguments");
	cJSON_AddNumberToObject(a, "id", (double)id);
	cJSON_AddNumberToObject(a, "wait_seconds", MCP_WAIT_BOUND_SECONDS);
	return c;
}

/* Summary and structured answer for one execution row (taken over); wait is
 * how a wait ended, or NULL when there was none; requested is the wait the
 * call asked for (more than wait_seconds when the bound cut it). */
static cJSON *execution_result(cJSON *row, int wait_seconds, int requested,
                               const enum mcp_wait_end *wait)
{
	const cJSON *idv = cJSON_GetObjectItemCaseSensitive(row, "id");
	int64_t id = cJSON_IsNumber(idv) ? (int64_t)idv->valuedouble : 0;
	const char *state = str_field(row, "state");
	const char *cls = str_field(row, "class");
	const char *target = str_field(row, "target");
	const cJSON *exit_code = cJSON_GetObjectItemCaseSensitive(row, "exit_code");
	const char *error = str_field(row, "error");
	const char *expires = str_field(row, "expires_at");
	cJSON *s = cJSON_CreateObject();
	char *next = next_step(row, state);
	struct buf text = BUF_INIT;
	cJSON *r;

	buf_printf(&text, "execution %" PRId64 " on %s: %s", id, target ? target : "?", state);
	if (cls != NULL)
		buf_printf(&text, ", class %s", cls);
	enum exec_state st;
	if (exec_state_parse(state, &st) == 0 && st == EXEC_PENDING_APPROVAL && expires != NULL)
		buf_printf(&text, ", expires %s", expires);
	if (cJSON_IsNumber(exit_code))
		buf_printf(&text, ", exit code %d", exit_code->valueint);
	if (error != NULL && error[0] != '\0')
		buf_printf(&text, ", error: %s", error);
	/* Output held for carrying secret material: what and where, never a byte of it. */
	const cJSON *hold = cJSON_GetObjectItemCaseSensitive(row, "output_hold");
	if (cJSON_IsObject(hold) && str_field(hold, "message") != NULL)
		buf_printf(&text, "; %s", str_field(hold, "message"));
	else if (cJSON_IsObject(hold) && str_field(hold, "state") != NULL)
		buf_printf(&text, "; output %s", str_field(hold, "state"));
	buf_puts(&text, ".");
	if (wait != NULL && *wait == MCP_WAIT_TIMEOUT)
		buf_printf(&text, " Still not settled after waiting %d s", wait_seconds);
	if (wait != NULL && *wait == MCP_WAIT_TIMEOUT && requested > wait_seconds)
		buf_printf(&text, " (one call waits at most %d s, below clients' request timeouts)",
		           MCP_WAIT_BOUND_SECONDS);
	if (wait != NULL && *wait == MCP_WAIT_TIMEOUT)
		buf_puts(&text, ".");
	else if (wait != NULL && *wait != MCP_WAIT_SETTLED)
		buf_puts(&text, " The wait ended early (the client closed its input or the server "
		                "is stopping).");
	buf_printf(&text, "\nWhat to do now: %s", next);
	bool final = mcp_exec_is_final(state);
	const char *url = str_field(row, "console_url");
	if (!final)
		buf_printf(&text,
		           "\nStill pending; call get_execution again: get_execution {\"id\": "
		           "%" PRId64 ", \"wait_seconds\": %d}.",
		           id, MCP_WAIT_BOUND_SECONDS);
	if (!final && url != NULL)
		buf_printf(&text, "\nFor your operator, the request on the console: %s", url);
	cJSON_AddItemToObject(s, "execution", row);
	cJSON_AddBoolToObject(s, "final", final);
	cJSON_AddStringToObject(s, "next_step", next);
	if (!final)
		cJSON_AddItemToObject(s, "next_call", next_call(id));
	if (url != NULL)
		cJSON_AddStringToObject(s, "console_url", url);
	if (wait != NULL) {
		cJSON *w = cJSON_AddObjectToObject(s, "wait");
		cJSON_AddNumberToObject(w, "seconds", wait_seconds);
		cJSON_AddBoolToObject(w, "settled", *wait == MCP_WAIT_SETTLED);
		cJSON_AddStringToObject(w, "ended", mcp_exec_wait_end_name(*wait));
		if (requested > wait_seconds)
			cJSON_AddNumberToObject(w, "requested", requested);
	}
	r = mcp_result_ok(s, buf_str(&text));
	buf_free(&text);
	free(next);
	return r;
}

/* Ends a wait's LISTEN and drops what it queued. */
static void stop_listening(struct store *st)
{
	store_unlisten(st, MCP_STATE_CHANNEL);
	store_drain_notifications(st);
}

/* Answers with execution id now, or arranges a wait (LISTEN already active
 * when wait_seconds > 0). */
static void respond(struct store *st, struct mcp_call *call, int64_t id, int requested,
                    bool until_final)
{
	int wait_seconds = requested > MCP_WAIT_BOUND_SECONDS ? MCP_WAIT_BOUND_SECONDS : requested;

	cJSON *err = NULL;
	cJSON *row = fetch(st, id, &err);

	if (row == NULL) {
		if (wait_seconds > 0)
			stop_listening(st);
		call->result = err;
		return;
	}
	if (wait_seconds > 0 && !mcp_exec_settled(str_field(row, "state"), until_final)) {
		call->wait_id = id;
		call->wait_seconds = wait_seconds;
		call->wait_requested = requested;
		call->wait_until_final = until_final;
		cJSON_Delete(row);
		return;
	}
	if (wait_seconds > 0) {
		enum mcp_wait_end settled = MCP_WAIT_SETTLED;
		stop_listening(st);
		call->result = execution_result(row, wait_seconds, requested, &settled);
		return;
	}
	call->result = execution_result(row, 0, 0, NULL);
}

void mcp_exec_end_wait(struct store *st, struct mcp_call *call, enum mcp_wait_end why)
{
	cJSON *err = NULL;
	cJSON *row;

	stop_listening(st);
	if (why == MCP_WAIT_CANCELLED)
		return;
	row = fetch(st, call->wait_id, &err);
	call->result = row != NULL
	                   ? execution_result(row, call->wait_seconds, call->wait_requested, &why)
	                   : err;
}

void mcp_exec_run(struct store *st, const cJSON *args, struct mcp_call *call)
{
	const char *params[5] = {
	    mcp_arg_str(args, "target"),        mcp_arg_str(args, "command"),
	    mcp_arg_str(args, "declared_risk"), mcp_arg_str(args, "change_id"),
	    mcp_arg_str(args, "action"),
	};
	int wait = (int)mcp_arg_int(args, "wait_seconds", 0);
	struct store_res *res;
	int64_t id;
	char q[256];

	/* LISTEN before the row exists, so no transition can slip between
	 * reading its state and starting to wait. */
	if (wait > 0 && store_listen(st, MCP_STATE_CHANNEL) < 0) {
		call->result = mcp_result_db_error(st, "run");
		return;
	}
	res = store_exec(st, "SELECT airlock.run($1::text, $2::text, $3::text, $4::text, $5::text)",
	                 5, params);
	if (res == NULL || store_nrows(res) != 1 || store_isnull(res, 0, 0)) {
		log_msg(LOG_INFO, "evt=mcp.run_refused target=%s sqlstate=%s",
		        log_quote(params[0], q, sizeof(q)), store_sqlstate(st));
		call->result = res == NULL ? mcp_result_db_error(st, "run")
		                           : mcp_result_error("airlock.run returned no id",
		                                              "Tell your operator. " MCP_NO_BYPASS);
		store_clear(res);
		if (wait > 0)
			stop_listening(st);
		return;
	}
	id = strtoll(store_get(res, 0, 0), NULL, 10);
	store_clear(res);
	log_msg(LOG_INFO, "exec=%" PRId64 " evt=mcp.run_enqueued target=%s", id,
	        log_quote(params[0], q, sizeof(q)));
	respond(st, call, id, wait, false);
}

void mcp_exec_get(struct store *st, const cJSON *args, struct mcp_call *call)
{
	int wait = (int)mcp_arg_int(args, "wait_seconds", 0);

	if (wait > 0 && store_listen(st, MCP_STATE_CHANNEL) < 0) {
		call->result = mcp_result_db_error(st, "get_execution");
		return;
	}
	respond(st, call, mcp_arg_int(args, "id", 0), wait, true);
}

void mcp_exec_cancel(struct store *st, const cJSON *args, struct mcp_call *call)
{
	int64_t id = mcp_arg_int(args, "id", 0);
	char idtext[24];
	const char *params[1] = {idtext};
	struct store_res *res;

	snprintf(idtext, sizeof(idtext), "%" PRId64, id);
	res = store_exec(st, "SELECT airlock.cancel($1::bigint)", 1, params);
	if (res == NULL) {
		call->result = mcp_result_db_error(st, "cancel_execution");
		return;
	}
	store_clear(res);
	log_msg(LOG_INFO, "exec=%" PRId64 " evt=mcp.cancelled", id);
	respond(st, call, id, 0, true);
}

/* A cursor is the id of the last row of the previous page, as decimal text. */
static bool parse_cursor(const char *cursor, int64_t *before)
{
	char *end = NULL;
	long long v;

	if (cursor[0] < '1' || cursor[0] > '9')
		return false;
	v = strtoll(cursor, &end, 10);
	if (*end != '\0' || v <= 0)
		return false;
	*before = v;
	return true;
}

static void list_summary(struct buf *text, const cJSON *list)
{
	const cJSON *row;

	buf_printf(text, "executions: %d, newest first.", cJSON_GetArraySize(list));
	cJSON_ArrayForEach(row, list)
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(row, "id");
		const char *cls = str_field(row, "class");
		buf_printf(text, "\n#%.0f %s %s%s%s", cJSON_IsNumber(id) ? id->valuedouble : 0.0,
		           str_field(row, "state") ? str_field(row, "state") : "?",
		           str_field(row, "target") ? str_field(row, "target") : "?",
		           cls ? " class=" : "", cls ? cls : "");
	}
}

void mcp_exec_list(struct store *st, const cJSON *args, struct mcp_call *call)
{
	int64_t limit = mcp_arg_int(args, "limit", 50), before = 0;
	const char *cursor = mcp_arg_str(args, "cursor");
	char lim[24], bid[24];
	const char *params[4] = {mcp_arg_str(args, "state"), mcp_arg_str(args, "target"), lim,
	                         NULL};
	struct buf text = BUF_INIT;
	cJSON *s = NULL, *list;
	struct store_res *res;
	int n;

	if (cursor != NULL && !parse_cursor(cursor, &before)) {
		call->result =
		    mcp_result_error("invalid cursor", "Pass nextCursor from the previous "
		                                       "list_executions answer unchanged, or "
		                                       "omit cursor for the first page.");
		return;
	}
	/* One row more than asked tells whether another page exists. */
	snprintf(lim, sizeof(lim), "%" PRId64, limit + 1);
	if (cursor != NULL) {
		snprintf(bid, sizeof(bid), "%" PRId64, before);
		params[3] = bid;
	}
	res = store_exec_read(st,
	                      "SELECT j::text FROM airlock.list_executions($1::text, $2::text, "
	                      "$3::int, $4::bigint) AS j",
	                      4, params);
	if (res == NULL) {
		call->result = mcp_result_db_error(st, "list_executions");
		return;
	}
	s = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(s, "executions");
	n = store_nrows(res);
	for (int i = 0; i < n && i < limit; i++) {
		cJSON *row = mcp_result_parse_db_json(store_get(res, i, 0));
		if (row != NULL)
			cJSON_AddItemToArray(list, row);
	}
	list_summary(&text, list);
	if (n > limit) {
		const cJSON *last = cJSON_GetArrayItem(list, (int)limit - 1);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(last, "id");
		char next[24];
		snprintf(next, sizeof(next), "%.0f", cJSON_IsNumber(id) ? id->valuedouble : 0.0);
		cJSON_AddStringToObject(s, "nextCursor", next);
		buf_printf(&text, "\nMore: call list_executions again with cursor \"%s\".", next);
	}
	call->result = mcp_result_ok(s, buf_str(&text));
	buf_free(&text);
	store_clear(res);
}
