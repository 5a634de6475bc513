/* flr.c -- journal file-level restore calls and the guest path mapping. */
#include "zerto/flr.h"

#include "zerto/policy.h"

#include "lib/buf.h"
#include "lib/xalloc.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *escape(const char *s)
{
	char *esc = curl_easy_escape(NULL, s, 0);
	char *copy = xstrdup(esc ? esc : "");

	curl_free(esc);
	return copy;
}

static char *opt_str(const cJSON *o, const char *field)
{
	const cJSON *v = cJSON_GetObjectItem(o, field);

	return xstrdup(cJSON_IsString(v) ? v->valuestring : "");
}

static int parse_session(const cJSON *o, const char *ep, struct zerto_flr_session *s,
                         struct zerto_err *e)
{
	const cJSON *id = cJSON_GetObjectItem(o, "FlrSessionIdentifier");
	const cJSON *mt = cJSON_GetObjectItem(o, "MountTime");

	memset(s, 0, sizeof(*s));
	if (!cJSON_IsObject(o) || !cJSON_IsString(id) || id->valuestring[0] == '\0') {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
		              "%s: field FlrSessionIdentifier missing or not a string", ep);
		return -1;
	}
	s->id = xstrdup(id->valuestring);
	s->status = opt_str(o, "FlrSessionStatus");
	s->vm_id = opt_str(o, "VmIdentifier");
	s->vpg_id = opt_str(o, "VpgIdentifier");
	s->checkpoint_id = opt_str(o, "CheckpointIdentifier");
	if (cJSON_IsString(mt) && zerto_time_parse(mt->valuestring, &s->mount_ms) < 0)
		s->mount_ms = 0;
	return 0;
}

void zerto_flr_session_clear(struct zerto_flr_session *s)
{
	free(s->id);
	free(s->status);
	free(s->vm_id);
	free(s->vpg_id);
	free(s->checkpoint_id);
	memset(s, 0, sizeof(*s));
}

void zerto_flr_sessions_free(struct zerto_flr_session *s, size_t n)
{
	for (size_t i = 0; s != NULL && i < n; i++)
		zerto_flr_session_clear(&s[i]);
	free(s);
}

int zerto_flr_list(struct zerto_client *c, const char *vm_id, struct zerto_flr_session **s,
                   size_t *n, struct zerto_err *e)
{
	const char *ep = "GET /v1/flrs";
	char *q = NULL, *path;
	cJSON *j = NULL;
	const cJSON *o;
	int rc = -1;

	*s = NULL;
	*n = 0;
	if (vm_id != NULL) {
		q = escape(vm_id);
		path = xasprintf("/v1/flrs?vmIdentifier=%s", q);
	} else {
		path = xstrdup("/v1/flrs");
	}
	if (zerto_client_get(c, path, &j, e) < 0)
		goto out;
	if (!cJSON_IsArray(j)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: answer is not an array", ep);
		goto out;
	}
	*s = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof(**s));
	cJSON_ArrayForEach(o, j)
	{
		if (parse_session(o, ep, &(*s)[*n], e) < 0)
			goto out;
		(*n)++;
	}
	rc = 0;
out:
	if (rc < 0) {
		zerto_flr_sessions_free(*s, *n);
		*s = NULL;
		*n = 0;
	}
	cJSON_Delete(j);
	free(q);
	free(path);
	return rc;
}

int zerto_flr_get(struct zerto_client *c, const char *id, struct zerto_flr_session *s,
                  struct zerto_err *e)
{
	const char *ep = "GET /v1/flrs/{id}";
	char *q = escape(id);
	char *path = xasprintf("/v1/flrs/%s", q);
	cJSON *j = NULL;
	const cJSON *o;
	int rc = -1;

	memset(s, 0, sizeof(*s));
	if (zerto_client_get(c, path, &j, e) < 0)
		goto out;
	/* The published schema says an array; the product's help shows an object. */
	o = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, 0) : j;
	if (o == NULL) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: empty answer for session %s", ep, id);
		goto out;
	}
	rc = parse_session(o, ep, s, e);
out:
	cJSON_Delete(j);
	free(q);
	free(path);
	return rc;
}

int zerto_flr_can_mount(struct zerto_client *c, const char *vm_id, const char *vpg_id,
                        const char *cp_id, int64_t at_ms, bool *found, bool *allowed, char **reason,
                        struct zerto_err *e)
{
	const char *ep = "GET /v1/vms/{id}/pointsInTime";
	char *vq = escape(vm_id), *pq = escape(vpg_id), *path;
	char sbuf[40], ebuf[40];
	cJSON *j = NULL;
	const cJSON *o;
	int rc = -1;

	*found = false;
	*allowed = false;
	*reason = NULL;
	if (at_ms > 0)
		path = xasprintf("/v1/vms/%s/pointsInTime?vpgIdentifier=%s&startDate=%s&endDate=%s",
		                 vq, pq, zerto_time_format(at_ms - 60000, sbuf, sizeof(sbuf)),
		                 zerto_time_format(at_ms + 60000, ebuf, sizeof(ebuf)));
	else
		path = xasprintf("/v1/vms/%s/pointsInTime?vpgIdentifier=%s", vq, pq);
	if (zerto_client_get(c, path, &j, e) < 0)
		goto out;
	if (!cJSON_IsArray(j)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: answer is not an array", ep);
		goto out;
	}
	cJSON_ArrayForEach(o, j)
	{
		const cJSON *cp = cJSON_GetObjectItem(o, "Checkpoint");
		const cJSON *cid = cJSON_GetObjectItem(cp, "CheckpointIdentifier");
		const cJSON *cm = cJSON_GetObjectItem(o, "CanMount");
		const cJSON *ok = cJSON_GetObjectItem(cm, "IsAllowed");

		if (!cJSON_IsString(cid) || strcmp(cid->valuestring, cp_id) != 0)
			continue;
		*found = true;
		*allowed = cJSON_IsTrue(ok) || (cm == NULL);
		*reason = opt_str(cm, "Reason");
		break;
	}
	rc = 0;
out:
	cJSON_Delete(j);
	free(vq);
	free(pq);
	free(path);
	return rc;
}

/* The answer of an action that returns an identifier as a JSON string. */
static int id_answer(cJSON *j, const char *ep, char **out, bool may_be_empty, struct zerto_err *e)
{
	if (cJSON_IsString(j) && (may_be_empty || j->valuestring[0] != '\0')) {
		*out = xstrdup(j->valuestring);
		return 0;
	}
	zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: answer is not an identifier string", ep);
	return -1;
}

int zerto_flr_mount(struct zerto_client *c, const char *vpg_id, const char *vm_id,
                    const char *cp_id, char **session_id, struct zerto_err *e)
{
	cJSON *body = cJSON_CreateObject(), *j = NULL;
	cJSON *jflr = cJSON_AddObjectToObject(body, "Jflr");
	int rc = -1;

	*session_id = NULL;
	cJSON_AddStringToObject(jflr, "VpgIdentifier", vpg_id);
	cJSON_AddStringToObject(jflr, "VmIdentifier", vm_id);
	cJSON_AddStringToObject(jflr, "CheckpointIdentifier", cp_id);
	cJSON_AddNullToObject(jflr, "InitialDownloadPath");
	cJSON_AddNullToObject(body, "Bflr");
	if (zerto_client_post(c, "/v1/flrs", body, &j, e) < 0)
		goto out;
	rc = id_answer(j, "POST /v1/flrs", session_id, false, e);
out:
	cJSON_Delete(body);
	cJSON_Delete(j);
	return rc;
}

int zerto_flr_unmount(struct zerto_client *c, const char *id, char **task_id, struct zerto_err *e)
{
	char *q = escape(id);
	char *path = xasprintf("/v1/flrs/%s", q);
	cJSON *j = NULL;
	int rc = -1;

	*task_id = NULL;
	if (zerto_client_delete(c, path, &j, e) < 0)
		goto out;
	rc = id_answer(j, "DELETE /v1/flrs/{id}", task_id, true, e);
out:
	cJSON_Delete(j);
	free(q);
	free(path);
	return rc;
}

static int parse_item(const cJSON *o, const char *ep, struct zerto_flr_item *it,
                      struct zerto_err *e)
{
	const cJSON *p = cJSON_GetObjectItem(o, "Path");
	const cJSON *dl = cJSON_GetObjectItem(o, "DownloadInformation");
	const cJSON *sz = cJSON_GetObjectItem(o, "SizeInBytes");

	memset(it, 0, sizeof(*it));
	if (!cJSON_IsString(p)) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 200, "%s: field Path missing or not a string",
		              ep);
		return -1;
	}
	it->path = xstrdup(p->valuestring);
	it->type = opt_str(o, "Type");
	it->browsable = cJSON_IsTrue(cJSON_GetObjectItem(o, "IsBrowsable"));
	it->downloadable = cJSON_IsTrue(cJSON_GetObjectItem(dl, "IsDownloadable"));
	it->why_not = opt_str(dl, "AdditionalInformation");
	it->size = cJSON_IsNumber(sz) && sz->valuedouble >= 0 ? (long long)sz->valuedouble : -1;
	return 0;
}

void zerto_flr_items_free(struct zerto_flr_item *items, size_t n)
{
	for (size_t i = 0; items != NULL && i < n; i++) {
		free(items[i].path);
		free(items[i].type);
		free(items[i].why_not);
	}
	free(items);
}

/* Browse pages asked for, and how many pages one folder may take. */
#define BROWSE_PAGE_SIZE 500
#define BROWSE_MAX_PAGES 400

int zerto_flr_browse(struct zerto_client *c, const char *id, const char *path,
                     struct zerto_flr_item **items, size_t *n, struct zerto_err *e)
{
	const char *ep = "POST /v1/flrs/{id}/browse";
	char *q = escape(id);
	char *url = xasprintf("/v1/flrs/%s/browse", q);
	size_t cap = 0;
	int rc = -1;

	*items = NULL;
	*n = 0;
	/* Pages until an empty one: the ZVM may cap PageSize below what is asked,
	 * so a short page does not prove it was the last. */
	for (int page = 1;; page++) {
		cJSON *body = cJSON_CreateObject(), *j = NULL;
		const cJSON *arr, *o;
		int got;

		if (page > BROWSE_MAX_PAGES) {
			zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
			              "%s: %s has more than %d pages of items; refused", ep, path,
			              BROWSE_MAX_PAGES);
			goto out;
		}
		cJSON_AddStringToObject(body, "Path", path);
		cJSON_AddNumberToObject(body, "PageNumber", page);
		cJSON_AddNumberToObject(body, "PageSize", BROWSE_PAGE_SIZE);
		int pr = zerto_client_post(c, url, body, &j, e);
		cJSON_Delete(body);
		if (pr < 0) {
			cJSON_Delete(j);
			goto out;
		}
		arr = cJSON_GetObjectItem(j, "PathItems");
		if (!cJSON_IsArray(arr)) {
			zerto_err_set(e, ZERTO_ERR_SHAPE, 200,
			              "%s: field PathItems missing or not an array", ep);
			cJSON_Delete(j);
			goto out;
		}
		got = cJSON_GetArraySize(arr);
		if (*n + (size_t)got + 1 > cap) {
			cap = (*n + (size_t)got + 1) * 2;
			*items = xrealloc(*items, cap * sizeof(**items));
		}
		cJSON_ArrayForEach(o, arr)
		{
			if (parse_item(o, ep, &(*items)[*n], e) < 0) {
				cJSON_Delete(j);
				goto out;
			}
			(*n)++;
		}
		cJSON_Delete(j);
		if (got == 0)
			break;
	}
	rc = 0;
out:
	if (rc < 0) {
		zerto_flr_items_free(*items, *n);
		*items = NULL;
		*n = 0;
	}
	free(q);
	free(url);
	return rc;
}

int zerto_flr_download_url(struct zerto_client *c, const char *id, const char *path, char **url,
                           struct zerto_err *e)
{
	char *q = escape(id);
	char *p = xasprintf("/v1/flrs/%s/download", q);
	cJSON *body = cJSON_CreateObject(), *j = NULL;
	cJSON *list = cJSON_AddArrayToObject(body, "PathList");
	int rc = -1;

	*url = NULL;
	cJSON_AddItemToArray(list, cJSON_CreateString(path));
	if (zerto_client_post(c, p, body, &j, e) < 0)
		goto out;
	rc = id_answer(j, "POST /v1/flrs/{id}/download", url, false, e);
out:
	cJSON_Delete(body);
	cJSON_Delete(j);
	free(q);
	free(p);
	return rc;
}

int zerto_flr_split_guest_path(const char *guest, char *drive, char **rel)
{
	struct buf b = BUF_INIT;
	const char *p;

	*drive = '\0';
	*rel = NULL;
	if (guest == NULL)
		return -1;
	if (guest[0] == '/') {
		p = guest + 1;
	} else if (isalpha((unsigned char)guest[0]) && guest[1] == ':' &&
	           (guest[2] == '\\' || guest[2] == '/')) {
		*drive = (char)toupper((unsigned char)guest[0]);
		p = guest + 3;
	} else {
		return -1;
	}
	buf_init(&b, 0);
	for (;;) {
		size_t len = strcspn(p, *drive ? "\\/" : "/");

		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			goto bad;
		if (b.len)
			buf_putc(&b, '/');
		buf_append(&b, p, len);
		p += len;
		if (*p == '\0')
			break;
		p++; /* the separator; a trailing one leaves an empty component: bad */
	}
	*rel = buf_steal(&b);
	return 0;
bad:
	buf_free(&b);
	*drive = '\0';
	return -1;
}

bool zerto_flr_partition_is_drive(const char *p, char d)
{
	for (const char *s = p; s != NULL && *s; s++) {
		if (toupper((unsigned char)s[0]) == toupper((unsigned char)d) && s[1] == ':' &&
		    (s == p || !isalpha((unsigned char)s[-1])))
			return true;
	}
	return false;
}

/* Looks for want among the items of dir (browsed in partition part). */
static int find_in(struct zerto_client *c, const char *id, const char *dir, const char *want,
                   struct zerto_flr_item **item, struct zerto_err *e)
{
	struct zerto_flr_item *items = NULL;
	size_t n = 0;

	if (zerto_flr_browse(c, id, dir, &items, &n, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(items[i].path, want) != 0)
			continue;
		*item = xcalloc(1, sizeof(**item));
		**item = items[i];
		memset(&items[i], 0, sizeof(items[i]));
		zerto_flr_items_free(items, n);
		return 1;
	}
	zerto_flr_items_free(items, n);
	return 0;
}

/* Whether partition name p names any drive letter. */
static bool names_a_drive(const char *p)
{
	for (char d = 'A'; d <= 'Z'; d++)
		if (zerto_flr_partition_is_drive(p, d))
			return true;
	return false;
}

int zerto_flr_find(struct zerto_client *c, const char *id, const char *guest,
                   struct zerto_flr_item **item, struct zerto_err *e)
{
	struct zerto_flr_item *parts = NULL;
	size_t nparts = 0;
	struct buf looked = BUF_INIT, hits = BUF_INIT;
	char drive, *rel = NULL;
	bool by_letter = false, any_letter = false;
	int nfound = 0, rc = -1;

	*item = NULL;
	buf_init(&looked, 2048);
	buf_init(&hits, 2048);
	if (zerto_flr_split_guest_path(guest, &drive, &rel) < 0) {
		zerto_err_set(e, ZERTO_ERR_CONFIG, 0, "%s is not an absolute guest file path",
		              guest);
		goto out;
	}
	if (zerto_flr_browse(c, id, "", &parts, &nparts, e) < 0)
		goto out;
	for (size_t i = 0; i < nparts; i++) {
		by_letter =
		    by_letter || (drive && zerto_flr_partition_is_drive(parts[i].path, drive));
		any_letter = any_letter || names_a_drive(parts[i].path);
	}
	/* Partitions that name drive letters settle which one a Windows path is
	 * on; when none does, every partition is looked in, and a path found in
	 * more than one is ambiguous (as it is for a Linux path). */
	if (drive && !by_letter && any_letter) {
		for (size_t i = 0; i < nparts; i++)
			buf_printf(&looked, "%s%s", i ? ", " : "", parts[i].path);
		zerto_err_set(
		    e, ZERTO_ERR_SHAPE, 0,
		    "%s is not in the checkpoint: no partition is drive %c: (partitions: %s)",
		    guest, drive, buf_str(&looked));
		goto out;
	}
	for (size_t i = 0; i < nparts; i++) {
		struct zerto_err be = {0};
		struct zerto_flr_item *hit = NULL;
		char *want, *dir, *slash;
		int found;

		if (!parts[i].browsable ||
		    (by_letter && !zerto_flr_partition_is_drive(parts[i].path, drive)))
			continue;
		want = xasprintf("%s/%s", parts[i].path, rel);
		dir = xstrdup(want);
		slash = strrchr(dir, '/');
		*slash = '\0';
		found = find_in(c, id, dir, want, &hit, &be);
		free(want);
		free(dir);
		if (found < 0 && be.http_status != 400 && be.http_status != 404) {
			*e = be; /* not "no such folder": a real failure */
			goto out;
		}
		buf_printf(&looked, "%s%s", looked.len ? ", " : "", parts[i].path);
		if (found == 1) {
			buf_printf(&hits, "%s%s", hits.len ? ", " : "", hit->path);
			if (nfound++ == 0)
				*item = hit;
			else
				zerto_flr_items_free(hit, 1);
		}
	}
	if (nfound == 1) {
		rc = 0;
		goto out;
	}
	zerto_flr_items_free(*item, *item ? 1 : 0);
	*item = NULL;
	if (nfound > 1)
		zerto_err_set(
		    e, ZERTO_ERR_SHAPE, 0,
		    "%s is ambiguous in the checkpoint: it is in several partitions (%s); "
		    "airlock does not guess which one",
		    guest, buf_str(&hits));
	else
		zerto_err_set(e, ZERTO_ERR_SHAPE, 0,
		              "%s is not in the checkpoint: looked for %s in partition(s) %s",
		              guest, rel, looked.len ? buf_str(&looked) : "(none listed)");
out:
	zerto_flr_items_free(parts, nparts);
	buf_free(&looked);
	buf_free(&hits);
	free(rel);
	return rc;
}
