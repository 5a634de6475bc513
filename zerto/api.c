/* api.c -- GET/POST the guard's endpoints and pick out the fields it uses. */
#include "zerto/api.h"

#include "zerto/policy.h"

#include "lib/buf.h"
#include "lib/xalloc.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A required string member; NULL (and e set) when missing or not a string. */
static const char *need_str(const cJSON *obj, const char *field, const char *endpoint,
                            struct zerto_err *e)
{
	const cJSON *v = cJSON_GetObjectItem(obj, field);

	if (cJSON_IsString(v) && v->valuestring != NULL)
		return v->valuestring;
	zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: field %s %s", endpoint, field,
	              v == NULL ? "missing" : "is not a string");
	return NULL;
}

/* A required integer member. */
static int need_int(const cJSON *obj, const char *field, const char *endpoint, int *out,
                    struct zerto_err *e)
{
	const cJSON *v = cJSON_GetObjectItem(obj, field);

	if (cJSON_IsNumber(v)) {
		*out = v->valueint;
		return 0;
	}
	zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: field %s %s", endpoint, field,
	              v == NULL ? "missing" : "is not a number");
	return -1;
}

static char *escape(const char *s)
{
	char *esc = curl_easy_escape(NULL, s, 0);
	char *copy = xstrdup(esc ? esc : "");

	curl_free(esc);
	return copy;
}

int zerto_local_site(struct zerto_client *c, char **site_id, struct zerto_err *e)
{
	cJSON *j = NULL;
	const char *id;
	int rc = -1;

	if (zerto_client_get(c, "/v1/localsite", &j, e) < 0)
		goto out;
	id = need_str(j, "SiteIdentifier", "GET /v1/localsite", e);
	if (id == NULL)
		goto out;
	*site_id = xstrdup(id);
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

static int parse_vm_row(const cJSON *o, const char *ep, const char *site, struct zerto_vm_row *r,
                        struct zerto_err *e)
{
	const char *vm_id = need_str(o, "VmIdentifier", ep, e);
	const char *vm_name = vm_id ? need_str(o, "VmName", ep, e) : NULL;
	const char *vpg_id = vm_name ? need_str(o, "VpgIdentifier", ep, e) : NULL;
	const char *vpg_name = vpg_id ? need_str(o, "VpgName", ep, e) : NULL;
	const cJSON *rs = cJSON_GetObjectItem(o, "RecoverySiteName");

	if (vpg_name == NULL)
		return -1;
	if (need_int(o, "Status", ep, &r->status, e) < 0 ||
	    need_int(o, "SubStatus", ep, &r->substatus, e) < 0)
		return -1;
	r->vm_id = xstrdup(vm_id);
	r->vm_name = xstrdup(vm_name);
	r->vpg_id = xstrdup(vpg_id);
	r->vpg_name = xstrdup(vpg_name);
	r->recovery_site = xstrdup(cJSON_IsString(rs) ? rs->valuestring : "");
	const cJSON *rsid =
	    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "RecoverySite"), "identifier");
	r->recovery_site_id = xstrdup(cJSON_IsString(rsid) ? rsid->valuestring : "");
	r->recovers_here = cJSON_IsString(rsid) && strcasecmp(rsid->valuestring, site) == 0;
	const cJSON *flr =
	    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "EnabledActions"), "IsFlrEnabled");
	r->flr_enabled = !cJSON_IsFalse(flr);
	return 0;
}

int zerto_list_vms(struct zerto_client *c, const char *vm_id, const char *vm_name,
                   struct zerto_vm_row **rows, size_t *n, struct zerto_err *e)
{
	char *site = NULL, *q = NULL, *path = NULL;
	cJSON *j = NULL;
	const cJSON *o;
	const char *ep = "GET /v1/vms";
	int rc = -1;

	*rows = NULL;
	*n = 0;
	if (zerto_local_site(c, &site, e) < 0)
		goto out;
	q = escape(vm_id ? vm_id : vm_name ? vm_name : "");
	path = xasprintf("/v1/vms?%s=%s", vm_id ? "vmIdentifier" : "vmName", q);
	if (zerto_client_get(c, path, &j, e) < 0)
		goto out;
	if (!cJSON_IsArray(j)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: answer is not an array", ep);
		goto out;
	}
	*rows = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof(**rows));
	cJSON_ArrayForEach(o, j)
	{
		const cJSON *ps = cJSON_GetObjectItem(o, "ProtectedSite");
		const cJSON *psid = cJSON_GetObjectItem(ps, "identifier");

		if (!cJSON_IsObject(o)) {
			zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: element is not an object", ep);
			goto out;
		}
		if (!cJSON_IsString(psid)) {
			zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
			              "%s: field ProtectedSite.identifier missing or not a string",
			              ep);
			goto out;
		}
		/* VMs protected TO this site are listed too; only ours can be tagged here. */
		if (strcasecmp(psid->valuestring, site) != 0)
			continue;
		if (parse_vm_row(o, ep, site, &(*rows)[*n], e) < 0)
			goto out;
		(*n)++;
	}
	rc = 0;
out:
	if (rc < 0) {
		zerto_vm_rows_free(*rows, *n);
		*rows = NULL;
		*n = 0;
	}
	cJSON_Delete(j);
	free(site);
	free(q);
	free(path);
	return rc;
}

void zerto_vm_rows_free(struct zerto_vm_row *rows, size_t n)
{
	for (size_t i = 0; rows != NULL && i < n; i++) {
		free(rows[i].vm_id);
		free(rows[i].vm_name);
		free(rows[i].vpg_id);
		free(rows[i].vpg_name);
		free(rows[i].recovery_site);
		free(rows[i].recovery_site_id);
	}
	free(rows);
}

/* Distinct VM identifiers among rows, as ", "-joined text; returns the count. */
size_t zerto_vm_rows_distinct(const struct zerto_vm_row *rows, size_t n, struct buf *ids)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(rows[i].vm_id, rows[j].vm_id) == 0;
		if (seen)
			continue;
		if (k++)
			buf_puts(ids, ", ");
		buf_puts(ids, rows[i].vm_id);
	}
	return k;
}

int zerto_server_time(struct zerto_client *c, int64_t *ms, struct zerto_err *e)
{
	cJSON *j = NULL;
	const char *ep = "GET /v1/serverDateTime/serverDateTimeUtc";
	int rc = -1;

	if (zerto_client_get(c, "/v1/serverDateTime/serverDateTimeUtc", &j, e) < 0)
		goto out;
	if (!cJSON_IsString(j) || zerto_time_parse(j->valuestring, ms) < 0) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: answer is not a date-time string", ep);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

int zerto_list_checkpoints(struct zerto_client *c, const char *vpg_id, int64_t start_ms,
                           int64_t end_ms, struct zerto_checkpoint **cps, size_t *n,
                           struct zerto_err *e)
{
	char sbuf[40], ebuf[40];
	char *id = escape(vpg_id), *path = NULL;
	cJSON *j = NULL;
	const cJSON *o;
	const char *ep = "GET /v1/vpgs/{id}/checkpoints";
	int rc = -1;

	*cps = NULL;
	*n = 0;
	zerto_time_format(start_ms, sbuf, sizeof(sbuf));
	if (end_ms > 0)
		path = xasprintf("/v1/vpgs/%s/checkpoints?startDate=%s&endDate=%s", id, sbuf,
		                 zerto_time_format(end_ms, ebuf, sizeof(ebuf)));
	else
		path = xasprintf("/v1/vpgs/%s/checkpoints?startDate=%s", id, sbuf);
	if (zerto_client_get(c, path, &j, e) < 0)
		goto out;
	if (!cJSON_IsArray(j)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: answer is not an array", ep);
		goto out;
	}
	*cps = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof(**cps));
	cJSON_ArrayForEach(o, j)
	{
		const char *cid = need_str(o, "CheckpointIdentifier", ep, e);
		const char *ts = cid ? need_str(o, "TimeStamp", ep, e) : NULL;
		const cJSON *tag = cJSON_GetObjectItem(o, "Tag");
		struct zerto_checkpoint *cp = &(*cps)[*n];

		if (ts == NULL)
			goto out;
		if (zerto_time_parse(ts, &cp->ts_ms) < 0) {
			zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
			              "%s: field TimeStamp is not a date-time", ep);
			goto out;
		}
		if (tag != NULL && !cJSON_IsNull(tag) && !cJSON_IsString(tag)) {
			zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
			              "%s: field Tag is not a string or null", ep);
			goto out;
		}
		cp->id = xstrdup(cid);
		cp->tag = cJSON_IsString(tag) ? xstrdup(tag->valuestring) : NULL;
		(*n)++;
	}
	rc = 0;
out:
	if (rc < 0) {
		zerto_checkpoints_free(*cps, *n);
		*cps = NULL;
		*n = 0;
	}
	cJSON_Delete(j);
	free(id);
	free(path);
	return rc;
}

void zerto_checkpoints_free(struct zerto_checkpoint *cps, size_t n)
{
	for (size_t i = 0; cps != NULL && i < n; i++) {
		free(cps[i].id);
		free(cps[i].tag);
	}
	free(cps);
}

int zerto_insert_checkpoint(struct zerto_client *c, const char *vpg_id, const char *name,
                            char **task_id, struct zerto_err *e)
{
	char *id = escape(vpg_id);
	char *path = xasprintf("/v1/vpgs/%s/checkpoints", id);
	cJSON *body = cJSON_CreateObject();
	cJSON *j = NULL;
	int rc = -1;

	cJSON_AddStringToObject(body, "CheckpointName", name);
	if (zerto_client_post(c, path, body, &j, e) < 0)
		goto out;
	if (!cJSON_IsString(j) || j->valuestring[0] == '\0') {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
		              "POST /v1/vpgs/{id}/checkpoints: answer is not a task id string");
		goto out;
	}
	*task_id = xstrdup(j->valuestring);
	rc = 0;
out:
	cJSON_Delete(body);
	cJSON_Delete(j);
	free(id);
	free(path);
	return rc;
}

/* Does task t (an element of GET /v1/tasks) name vpg_id in RelatedEntities.Vpgs? */
static bool task_names_vpg(const cJSON *t, const char *vpg_id)
{
	const cJSON *vpgs = cJSON_GetObjectItem(cJSON_GetObjectItem(t, "RelatedEntities"), "Vpgs");
	const cJSON *v;

	cJSON_ArrayForEach(v, vpgs)
	{
		const cJSON *id = cJSON_GetObjectItem(v, "identifier");

		if (cJSON_IsString(id) && strcasecmp(id->valuestring, vpg_id) == 0)
			return true;
	}
	return false;
}

int zerto_count_running_inserts(struct zerto_client *c, const char *vpg_id, int *count,
                                struct zerto_err *e)
{
	const char *ep = "GET /v1/tasks";
	cJSON *j = NULL;
	const cJSON *t;
	int rc = -1;

	*count = 0;
	if (zerto_client_get(c, "/v1/tasks?type=InsertTaggedCP&status=InProgress", &j, e) < 0)
		goto out;
	if (!cJSON_IsArray(j)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: answer is not an array", ep);
		goto out;
	}
	cJSON_ArrayForEach(t, j)
	{
		const cJSON *st = cJSON_GetObjectItem(t, "Status");
		int state;

		if (!task_names_vpg(t, vpg_id))
			continue;
		if (need_int(st, "State", "GET /v1/tasks Status", &state, e) < 0)
			goto out;
		if (!zerto_task_terminal(state))
			(*count)++;
	}
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

int zerto_get_task(struct zerto_client *c, const char *task_id, struct zerto_task *t,
                   struct zerto_err *e)
{
	char *id = escape(task_id);
	char *path = xasprintf("/v1/tasks/%s", id);
	const char *ep = "GET /v1/tasks/{id}";
	cJSON *j = NULL;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (zerto_client_get(c, path, &j, e) < 0)
		goto out;
	const cJSON *st = cJSON_GetObjectItem(j, "Status");
	if (!cJSON_IsObject(st)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: field Status missing or not an object",
		              ep);
		goto out;
	}
	if (need_int(st, "State", "GET /v1/tasks/{id} Status", &t->state, e) < 0)
		goto out;
	const cJSON *pr = cJSON_GetObjectItem(st, "Progress");
	const cJSON *why = cJSON_GetObjectItem(j, "CompleteReason");
	t->progress = cJSON_IsNumber(pr) ? pr->valueint : -1;
	t->reason = xstrdup(cJSON_IsString(why) ? why->valuestring : "");
	rc = 0;
out:
	cJSON_Delete(j);
	free(id);
	free(path);
	return rc;
}

void zerto_task_clear(struct zerto_task *t)
{
	free(t->reason);
	t->reason = NULL;
}
