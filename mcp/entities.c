/* entities.c -- inventory tools over the agent-callable SQL functions. */
#include "mcp/entities.h"

#include "store/store.h"
#include "mcp/result.h"

#include "lib/buf.h"
#include "lib/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *str_field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Runs a function returning one jsonb (a read when is_read: then it may be
 * retried on a fresh connection); the parsed object, or NULL with
 * call->result set to the error. */
static cJSON *call_one(struct store *st, bool is_read, const char *sql, int n,
                       const char *const *params, const char *what, struct mcp_call *call)
{
	struct store_res *res =
	    is_read ? store_exec_read(st, sql, n, params) : store_exec(st, sql, n, params);
	cJSON *obj = NULL;

	if (res == NULL) {
		call->result = mcp_result_db_error(st, what);
		return NULL;
	}
	if (store_nrows(res) == 1 && !store_isnull(res, 0, 0))
		obj = mcp_result_parse_db_json(store_get(res, 0, 0));
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		obj = NULL;
		call->result = mcp_result_error("airlock returned no answer",
		                                "Tell your operator; this is a fault in airlock.");
	}
	store_clear(res);
	return obj;
}

/* Runs a function returning SETOF jsonb; the rows as an array, or NULL with
 * call->result set to the error. */
static cJSON *call_set(struct store *st, const char *sql, int n, const char *const *params,
                       const char *what, struct mcp_call *call)
{
	struct store_res *res = store_exec_read(st, sql, n, params);
	cJSON *list;

	if (res == NULL) {
		call->result = mcp_result_db_error(st, what);
		return NULL;
	}
	list = cJSON_CreateArray();
	for (int i = 0; i < store_nrows(res); i++) {
		cJSON *row = mcp_result_parse_db_json(store_get(res, i, 0));
		if (row != NULL)
			cJSON_AddItemToArray(list, row);
	}
	store_clear(res);
	return list;
}

void mcp_entity_update_attributes(struct store *st, const cJSON *args, struct mcp_call *call)
{
	char *attrs = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(args, "attributes"));
	const char *params[2] = {mcp_arg_str(args, "slug"), attrs};
	struct buf text = BUF_INIT;
	const cJSON *k;
	cJSON *obj;

	obj = call_one(st, false,
	               "SELECT airlock.update_entity_attributes($1::text, $2::jsonb)::text", 2,
	               params, "update_entity_attributes", call);
	free(attrs);
	if (obj == NULL)
		return;
	buf_printf(&text, "%s: merged", str_field(obj, "slug"));
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(obj, "merged"))
	    buf_printf(&text, " %s", cJSON_IsString(k) ? k->valuestring : "?");
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(obj, "merged")) == 0)
		buf_puts(&text, " nothing");
	buf_puts(&text, ".");
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(obj, "dropped")) buf_printf(
	    &text, "\nWarning: dropped %s: %s", str_field(k, "key"), str_field(k, "reason"));
	call->result = mcp_result_ok(obj, buf_str(&text));
	buf_free(&text);
}

void mcp_entity_create_relationship(struct store *st, const cJSON *args, struct mcp_call *call)
{
	const char *params[3] = {mcp_arg_str(args, "source"), mcp_arg_str(args, "target"),
	                         mcp_arg_str(args, "type")};
	const cJSON *created;
	cJSON *obj;
	char *text;

	obj = call_one(st, false,
	               "SELECT airlock.create_relationship($1::text, $2::text, $3::text)::text", 3,
	               params, "create_relationship", call);
	if (obj == NULL)
		return;
	created = cJSON_GetObjectItemCaseSensitive(obj, "created");
	text = xasprintf("%s %s %s: %s", str_field(obj, "source"), str_field(obj, "type"),
	                 str_field(obj, "target"),
	                 cJSON_IsTrue(created) ? "recorded" : "already recorded; nothing changed");
	call->result = mcp_result_ok(obj, text);
	free(text);
}

/* Wraps rows under key and answers with one summary line per row. */
static void answer_rows(struct mcp_call *call, cJSON *rows, const char *key, const char *noun,
                        const char *const *fields)
{
	cJSON *s = cJSON_CreateObject();
	struct buf text = BUF_INIT;
	const cJSON *row;

	buf_printf(&text, "%s: %d.", noun, cJSON_GetArraySize(rows));
	cJSON_ArrayForEach(row, rows)
	{
		buf_puts(&text, "\n");
		for (const char *const *f = fields; *f != NULL; f++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, *f);
			char *val = cJSON_IsString(v) ? xstrdup(v->valuestring)
			            : v != NULL       ? cJSON_PrintUnformatted(v)
			                              : xstrdup("-");
			buf_printf(&text, "%s%s=%s", f == fields ? "" : " ", *f, val);
			free(val);
		}
	}
	cJSON_AddItemToObject(s, key, rows);
	call->result = mcp_result_ok(s, buf_str(&text));
	buf_free(&text);
}

void mcp_entity_get_relations(struct store *st, const cJSON *args, struct mcp_call *call)
{
	static const char *const fields[] = {"direction", "source", "type", "target", NULL};
	const char *params[1] = {mcp_arg_str(args, "slug")};
	cJSON *rows = call_set(st, "SELECT j::text FROM airlock.get_relations($1::text) AS j", 1,
	                       params, "get_relations", call);

	if (rows != NULL)
		answer_rows(call, rows, "relations", "relationships", fields);
}

void mcp_entity_health_summary(struct store *st, const cJSON *args, struct mcp_call *call)
{
	static const char *const fields[] = {"slug",
	                                     "type",
	                                     "health",
	                                     "qemu_guest_agent",
	                                     "container_status",
	                                     "reachable",
	                                     "checks_failing",
	                                     "last_probe",
	                                     NULL};
	const char *params[1] = {mcp_arg_str(args, "slug")};
	cJSON *rows = call_set(st, "SELECT j::text FROM airlock.get_health_summary($1::text) AS j",
	                       1, params, "get_health_summary", call);

	if (rows != NULL)
		answer_rows(call, rows, "entities", "entities", fields);
}

void mcp_entity_list_checks(struct store *st, const cJSON *args, struct mcp_call *call)
{
	static const char *const fields[] = {"slug", "name", "status", "probed_at", "detail", NULL};
	const char *params[1] = {mcp_arg_str(args, "slug")};
	cJSON *rows = call_set(st, "SELECT j::text FROM airlock.list_checks($1::text) AS j", 1,
	                       params, "list_checks", call);

	if (rows != NULL)
		answer_rows(call, rows, "checks", "checks", fields);
}

/* The rule for each verdict: a read-only tool runs; a mutating one gets a
 * rewind point first; an unknown one is a question for the human. */
static const char *verdict_rule(const char *verdict)
{
	if (strcmp(verdict, "read_only") == 0)
		return "Known read-only: call it; no rewind point is needed.";
	if (strcmp(verdict, "mutating") == 0)
		return "Known to change the target: guard first. A confirmed rewind point must "
		       "exist "
		       "before it runs; if it cannot be guarded, do not call it and ask your "
		       "operator.";
	if (strcmp(verdict, "exec") == 0)
		return "It runs commands on a machine outside airlock: do not call it. Send the "
		       "command through run with the target's slug instead.";
	return "Nobody has classified this tool, and unknown does not mean safe. Ask your operator "
	       "whether to take a rewind point first. If they say yes, guard, then call it; if "
	       "they say no, call it and tell them plainly that it cannot be rewound.";
}

void mcp_entity_check_tool(struct store *st, const cJSON *args, struct mcp_call *call)
{
	const char *params[3] = {mcp_arg_str(args, "server"), mcp_arg_str(args, "tool"),
	                         mcp_arg_str(args, "vm")};
	const char *verdict;
	cJSON *obj;
	char *text;

	obj = call_one(st, true, "SELECT airlock.check_tool($1::text, $2::text, $3::text)::text", 3,
	               params, "check_tool", call);
	if (obj == NULL)
		return;
	verdict = str_field(obj, "verdict");
	if (strcmp(verdict, "read_only") != 0 && strcmp(verdict, "mutating") != 0 &&
	    strcmp(verdict, "exec") != 0 && strcmp(verdict, "unknown") != 0) {
		/* Anything else is treated as the cautious answer. */
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "verdict");
		cJSON_AddStringToObject(obj, "verdict", "unknown");
		verdict = "unknown";
	}
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(obj, "advice"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "advice");
		cJSON_AddStringToObject(obj, "advice", "");
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "what_to_do");
	cJSON_AddStringToObject(obj, "what_to_do", verdict_rule(verdict));
	text = xasprintf("%s/%s: %s. %s %s", params[0], params[1], verdict,
	                 str_field(obj, "advice"), verdict_rule(verdict));
	call->result = mcp_result_ok(obj, text);
	free(text);
}
