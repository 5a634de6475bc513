/* inspect.c -- failover test, its stop, and offsite clone of one VM. */
#include "zerto/inspect.h"

#include "lib/xalloc.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

static char *escape(const char *s)
{
	char *esc = curl_easy_escape(NULL, s, 0);
	char *copy = xstrdup(esc ? esc : "");

	curl_free(esc);
	return copy;
}

int zerto_vpg_test_running(struct zerto_client *c, const char *vpg_id, bool *running,
                           struct zerto_err *e)
{
	char *q = escape(vpg_id), *path = xasprintf("/v1/vpgs/%s", q);
	cJSON *j = NULL;
	int rc = -1;

	*running = false;
	if (zerto_client_get(c, path, &j, e) < 0)
		goto out;
	if (!cJSON_IsObject(j)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
		              "GET /v1/vpgs/{id}: answer is not an object");
		goto out;
	}
	const cJSON *t = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "ActiveProcessesApi"),
	                                     "RunningFailOverTestApi");
	*running = t != NULL && !cJSON_IsNull(t);
	rc = 0;
out:
	cJSON_Delete(j);
	free(q);
	free(path);
	return rc;
}

/* POSTs body to /v1/vpgs/{id}/<action>; the answer must be a task id. */
static int action(struct zerto_client *c, const char *vpg_id, const char *act, cJSON *body,
                  char **task_id, struct zerto_err *e)
{
	char *q = escape(vpg_id), *path = xasprintf("/v1/vpgs/%s/%s", q, act);
	cJSON *j = NULL;
	int rc = -1;

	*task_id = NULL;
	if (zerto_client_post(c, path, body, &j, e) < 0)
		goto out;
	if (!cJSON_IsString(j) || j->valuestring[0] == '\0') {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
		              "POST /v1/vpgs/{id}/%s: answer is not a task id", act);
		goto out;
	}
	*task_id = xstrdup(j->valuestring);
	rc = 0;
out:
	cJSON_Delete(j);
	cJSON_Delete(body);
	free(q);
	free(path);
	return rc;
}

static cJSON *vm_list(const char *vm_id)
{
	cJSON *a = cJSON_CreateArray();

	cJSON_AddItemToArray(a, cJSON_CreateString(vm_id));
	return a;
}

int zerto_failover_test_start(struct zerto_client *c, const char *vpg_id, const char *cp_id,
                              const char *vm_id, char **task_id, struct zerto_err *e)
{
	cJSON *b = cJSON_CreateObject();

	cJSON_AddStringToObject(b, "CheckpointIdentifier", cp_id);
	cJSON_AddItemToObject(b, "VmIdentifiers", vm_list(vm_id));
	return action(c, vpg_id, "FailoverTest", b, task_id, e);
}

int zerto_failover_test_stop(struct zerto_client *c, const char *vpg_id, const char *summary,
                             char **task_id, struct zerto_err *e)
{
	cJSON *b = cJSON_CreateObject();

	cJSON_AddBoolToObject(b, "FailoverTestSuccess", true);
	cJSON_AddStringToObject(b, "FailoverTestSummary", summary);
	return action(c, vpg_id, "FailoverTestStop", b, task_id, e);
}

int zerto_clone_start(struct zerto_client *c, const char *vpg_id, const char *cp_id,
                      const char *vm_id, char **task_id, struct zerto_err *e)
{
	cJSON *b = cJSON_CreateObject();

	cJSON_AddStringToObject(b, "CheckpointId", cp_id);
	cJSON_AddItemToObject(b, "VmIdentifiers", vm_list(vm_id));
	return action(c, vpg_id, "CloneStart", b, task_id, e);
}
