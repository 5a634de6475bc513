/* recover.c -- recover_file: airlock.recover(), then the execution as
 * get_execution shows it. */
#include "mcp/recover.h"

#include "mcp/executions.h"
#include "mcp/result.h"

#include "lib/log.h"
#include "store/store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void mcp_recover_file(struct store *st, const cJSON *args, struct mcp_call *call)
{
	const cJSON *paths = cJSON_GetObjectItemCaseSensitive(args, "paths");
	int64_t from = mcp_arg_int(args, "execution_id", 0);
	const cJSON *keep = cJSON_GetObjectItemCaseSensitive(args, "keep_replaced");
	char fromtext[24], *pj = cJSON_PrintUnformatted(paths);
	const char *params[6] = {mcp_arg_str(args, "vm"),
	                         pj,
	                         from ? fromtext : NULL,
	                         mcp_arg_str(args, "checkpoint"),
	                         keep == NULL || cJSON_IsTrue(keep) ? "true" : "false",
	                         mcp_arg_str(args, "change_id")};
	struct store_res *res;
	cJSON *get;

	snprintf(fromtext, sizeof(fromtext), "%" PRId64, from);
	if (keep != NULL && !cJSON_IsBool(keep)) {
		call->result =
		    mcp_result_error("invalid arguments for recover_file: \"keep_replaced\" "
		                     "must be true or false",
		                     "Nothing was done. Fix the arguments and call again.");
		cJSON_free(pj);
		return;
	}
	res = store_exec(st,
	                 "SELECT airlock.recover($1::text, ARRAY(SELECT jsonb_array_elements_text("
	                 "$2::jsonb)), $3::bigint, $4::text, $5::boolean, $6::text)",
	                 6, params);
	cJSON_free(pj);
	if (res == NULL || store_nrows(res) != 1 || store_isnull(res, 0, 0)) {
		call->result = res == NULL ? mcp_result_db_error(st, "recover_file")
		                           : mcp_result_error("airlock.recover returned no id",
		                                              "Tell your operator.");
		store_clear(res);
		return;
	}
	get = cJSON_CreateObject();
	cJSON_AddNumberToObject(get, "id", (double)strtoll(store_get(res, 0, 0), NULL, 10));
	log_msg(LOG_INFO, "exec=%s evt=mcp.recover_requested", store_get(res, 0, 0));
	store_clear(res);
	mcp_exec_get(st, get, call); /* the row as it stands: held for an operator */
	cJSON_Delete(get);
}
