/* queue.c -- the worker's calls into migrations/0002_worker.sql and their
 * successors (0009, 0012, 0019). */
#include "store/queue.h"

#include "lib/buf.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const struct store_res *res, int col)
{
	return store_isnull(res, 0, col) ? NULL : xstrdup(store_get(res, 0, col));
}

static int int_or(const struct store_res *res, int col, int dflt)
{
	return store_isnull(res, 0, col) ? dflt : atoi(store_get(res, 0, col));
}

/* The columns of worker_claim and worker_claim_classified, in order. */
#define CLAIM_COLUMNS                                                                              \
	"id, state, target, target_type, command, declared_risk, change_id, action, "              \
	"requested_by, "                                                                           \
	"class, policy_version, rewind_possible, attempts, vmid, node, address, port, ssh_user, "  \
	"host_key_fingerprint, zerto_vm_identifier, kind"

/* Fills *it from the first row of a claim's result. */
static void item_from_row(const struct store_res *res, struct queue_item *it)
{
	it->id = strtoll(store_get(res, 0, 0), NULL, 10);
	snprintf(it->state, sizeof(it->state), "%s", store_get(res, 0, 1));
	it->target = dup_or_null(res, 2);
	it->target_type = dup_or_null(res, 3);
	it->command = dup_or_null(res, 4);
	it->declared_risk = dup_or_null(res, 5);
	it->change_id = dup_or_null(res, 6);
	it->action = dup_or_null(res, 7);
	it->requested_by = dup_or_null(res, 8);
	it->cls = dup_or_null(res, 9);
	it->policy_version =
	    store_isnull(res, 0, 10) ? 0 : strtoll(store_get(res, 0, 10), NULL, 10);
	it->rewind_possible = store_isnull(res, 0, 11) ? -1 : store_get(res, 0, 11)[0] == 't';
	it->attempts = int_or(res, 12, 0);
	it->vmid = int_or(res, 13, 0);
	it->node = dup_or_null(res, 14);
	it->address = dup_or_null(res, 15);
	it->port = int_or(res, 16, 22);
	it->ssh_user = dup_or_null(res, 17);
	it->host_key_fingerprint = dup_or_null(res, 18);
	it->zerto_vm_identifier = dup_or_null(res, 19);
	snprintf(it->kind, sizeof(it->kind), "%s", store_get(res, 0, 20));
}

/* A claim's answer: -1 when the statement failed, 0 when it claimed nothing,
 * 1 with *it filled from its row.  Clears res. */
static int claim_result(struct store_res *res, struct queue_item *it)
{
	if (res == NULL)
		return -1;
	if (store_nrows(res) == 0) {
		store_clear(res);
		return 0;
	}
	item_from_row(res, it);
	store_clear(res);
	return 1;
}

/* A text[] literal of the given strings ("{}" when none), each quoted:
 * {"proxmox-host:a","proxmox-host:b"}.  Caller frees. */
static char *text_array(const char *const *v, size_t n)
{
	struct buf b = BUF_INIT;

	buf_init(&b, 0);
	buf_putc(&b, '{');
	for (size_t i = 0; i < n; i++) {
		buf_puts(&b, i ? ",\"" : "\"");
		for (const char *p = v[i]; *p; p++) {
			if (*p == '"' || *p == '\\')
				buf_putc(&b, '\\');
			buf_putc(&b, *p);
		}
		buf_putc(&b, '"');
	}
	buf_putc(&b, '}');
	return buf_steal(&b);
}

/* The same for ids. */
static char *id_array(const int64_t *v, size_t n)
{
	struct buf b = BUF_INIT;

	buf_init(&b, 0);
	buf_putc(&b, '{');
	for (size_t i = 0; i < n; i++)
		buf_printf(&b, "%s%lld", i ? "," : "", (long long)v[i]);
	buf_putc(&b, '}');
	return buf_steal(&b);
}

int queue_claim(struct store *s, const char *worker, int64_t hint, const char *const *full_nodes,
                size_t nfull, struct queue_item *it)
{
	struct store_res *res;
	char hints[24];
	char *full = text_array(full_nodes, nfull);

	memset(it, 0, sizeof(*it));
	snprintf(hints, sizeof(hints), "%lld", (long long)hint);
	res = store_execp(s, "SELECT " CLAIM_COLUMNS " FROM airlock.worker_claim($1, $2, $3)", 3,
	                  (const char *const[]){worker, hint > 0 ? hints : NULL, full});
	free(full);
	return claim_result(res, it);
}

/* A string member of the wake-up document: NULL when absent or JSON null,
 * -1 when it is there with another type. */
static int doc_string(const cJSON *doc, const char *key, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return -1;
	*out = xstrdup(v->valuestring);
	return 0;
}

/* An integer member that fits an int; 0 when absent or null (-1 for any
 * other type). */
static int doc_int(const cJSON *doc, const char *key, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);

	*out = 0;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int)v->valuedouble)
		return -1;
	*out = (int)v->valuedouble;
	return 0;
}

int queue_wake_parse(const char *payload, int64_t *id, struct queue_item *it)
{
	char *end;
	long long n;
	cJSON *doc = NULL;
	int rc = -1, port = 0;
	double docid;

	memset(it, 0, sizeof(*it));
	*id = 0;
	n = strtoll(payload, &end, 10);
	if (end == payload || n <= 0 || (*end != '\0' && *end != ' '))
		return -1;
	*id = n;
	if (*end == '\0')
		return 0;
	doc = cJSON_Parse(end + 1);
	if (doc == NULL || !cJSON_IsObject(doc))
		goto out;
	docid = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(doc, "id"));
	if (docid != (double)n)
		goto out;
	it->id = n;
	snprintf(it->state, sizeof(it->state), "received");
	snprintf(it->kind, sizeof(it->kind), "run");
	if (doc_string(doc, "target", &it->target) < 0 ||
	    doc_string(doc, "target_type", &it->target_type) < 0 ||
	    doc_string(doc, "declared_risk", &it->declared_risk) < 0 ||
	    doc_string(doc, "command", &it->command) < 0 ||
	    doc_string(doc, "node", &it->node) < 0 ||
	    doc_string(doc, "address", &it->address) < 0 ||
	    doc_string(doc, "ssh_user", &it->ssh_user) < 0 ||
	    doc_string(doc, "host_key_fingerprint", &it->host_key_fingerprint) < 0 ||
	    doc_string(doc, "zerto_vm_identifier", &it->zerto_vm_identifier) < 0 ||
	    doc_int(doc, "vmid", &it->vmid) < 0 || doc_int(doc, "port", &port) < 0)
		goto out;
	if (it->target == NULL || it->target_type == NULL || it->command == NULL ||
	    it->node == NULL || port <= 0)
		goto out;
	it->port = port;
	it->rewind_possible = -1;
	rc = 1;
out:
	cJSON_Delete(doc);
	if (rc < 0)
		queue_item_clear(it);
	return rc;
}

/* The wake-up document of what the worker holds in *seen, as the database
 * builds it (airlock._wake_doc): the claim compares the two as jsonb, so
 * the row is claimed only if every value the worker used is the row's. */
static char *seen_doc(const struct queue_item *seen)
{
	cJSON *d = cJSON_CreateObject();
	char *text;

#define PUT_STR(k, v) cJSON_AddItemToObject(d, k, (v) ? cJSON_CreateString(v) : cJSON_CreateNull())
	cJSON_AddNumberToObject(d, "id", (double)seen->id);
	PUT_STR("target", seen->target);
	PUT_STR("target_type", seen->target_type);
	PUT_STR("declared_risk", seen->declared_risk);
	PUT_STR("command", seen->command);
	PUT_STR("node", seen->node);
	PUT_STR("address", seen->address);
	PUT_STR("ssh_user", seen->ssh_user);
	PUT_STR("host_key_fingerprint", seen->host_key_fingerprint);
	PUT_STR("zerto_vm_identifier", seen->zerto_vm_identifier);
#undef PUT_STR
	cJSON_AddNumberToObject(d, "vmid", seen->vmid);
	cJSON_AddNumberToObject(d, "port", seen->port);
	text = cJSON_PrintUnformatted(d);
	cJSON_Delete(d);
	return text;
}

int queue_claim_classified(struct store *s, const char *worker, const struct queue_item *seen,
                           const char *cls, const char *reasons_json, long long policy_version,
                           const char *classifier_version, const char *rewind_status,
                           int rewind_possible, const char *confinement, struct queue_item *it)
{
	struct store_res *res;
	char ids[24], pv[24];
	char *doc = seen_doc(seen);

	memset(it, 0, sizeof(*it));
	if (doc == NULL) {
		store_set_error(s, "out of memory building the wake-up document");
		return -1;
	}
	snprintf(ids, sizeof(ids), "%lld", (long long)seen->id);
	snprintf(pv, sizeof(pv), "%lld", policy_version);
	res = store_execp(s,
	                  "SELECT " CLAIM_COLUMNS " FROM airlock.worker_claim_classified($1, $2, "
	                  "$3::jsonb, $4, $5::jsonb, $6, $7, $8, $9, $10)",
	                  10,
	                  (const char *const[]){worker, ids, doc, cls, reasons_json, pv,
	                                        classifier_version, rewind_status,
	                                        rewind_possible < 0 ? NULL
	                                        : rewind_possible   ? "t"
	                                                            : "f",
	                                        confinement});
	free(doc);
	return claim_result(res, it);
}

void queue_item_clear(struct queue_item *it)
{
	char **strs[] = {&it->target,
	                 &it->target_type,
	                 &it->command,
	                 &it->declared_risk,
	                 &it->change_id,
	                 &it->action,
	                 &it->requested_by,
	                 &it->cls,
	                 &it->node,
	                 &it->address,
	                 &it->ssh_user,
	                 &it->host_key_fingerprint,
	                 &it->zerto_vm_identifier};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		free(*strs[i]);
		*strs[i] = NULL;
	}
}

/* Runs sql with the given text params and copies the first value into out. */
static int call(struct store *s, const char *sql, int n, const char *const *params, char *out,
                size_t outlen)
{
	struct store_res *res = store_execp(s, sql, n, params);

	if (res == NULL)
		return -1;
	if (out && outlen) {
		if (store_nrows(res) > 0 && store_nfields(res) > 0)
			snprintf(out, outlen, "%s", store_get(res, 0, 0));
		else
			out[0] = '\0';
	}
	store_clear(res);
	return 0;
}

int queue_release(struct store *s, int64_t id, const char *worker, int delay_ms, const char *reason)
{
	char ids[24], ms[16];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	snprintf(ms, sizeof(ms), "%d", delay_ms);
	return call(s, "SELECT airlock.worker_release($1, $2, $3, $4)", 4,
	            (const char *const[]){ids, worker, ms, reason}, NULL, 0);
}

int queue_settle(struct store *s, int64_t id, const char *worker, int delay_ms, const char *reason,
                 char done[16])
{
	char ids[24], ms[16];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	snprintf(ms, sizeof(ms), "%d", delay_ms);
	return call(s, "SELECT airlock.worker_settle($1, $2, $3, $4)", 4,
	            (const char *const[]){ids, worker, ms, reason}, done, 16);
}

int queue_classified(struct store *s, int64_t id, const char *worker, const char *cls,
                     const char *reasons_json, long long policy_version,
                     const char *classifier_version, const char *rewind_status, int rewind_possible,
                     char new_state[24])
{
	char ids[24], pv[24];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	snprintf(pv, sizeof(pv), "%lld", policy_version);
	return call(s, "SELECT airlock.worker_classified($1, $2, $3, $4::jsonb, $5, $6, $7, $8)", 8,
	            (const char *const[]){ids, worker, cls, reasons_json, pv, classifier_version,
	                                  rewind_status,
	                                  rewind_possible < 0 ? NULL
	                                  : rewind_possible   ? "t"
	                                                      : "f"},
	            new_state, 24);
}

int queue_revalidate(struct store *s, int64_t id, const char *worker, const char *cls,
                     const char *reasons_json, long long policy_version,
                     const char *classifier_version, char state[24])
{
	char ids[24], pv[24];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	snprintf(pv, sizeof(pv), "%lld", policy_version);
	return call(s, "SELECT airlock.worker_revalidate($1, $2, $3, $4::jsonb, $5, $6)", 6,
	            (const char *const[]){ids, worker, cls, reasons_json, pv, classifier_version},
	            state, 24);
}

int queue_refuse(struct store *s, int64_t id, const char *worker, const char *reason,
                 const char *detail_json)
{
	char ids[24];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	return call(s, "SELECT airlock.worker_refuse($1, $2, $3, coalesce($4::jsonb, '{}'))", 4,
	            (const char *const[]){ids, worker, reason, detail_json}, NULL, 0);
}

int queue_refuse_points(struct store *s, int64_t id, const char *worker, const char *reason,
                        const char *detail_json, const char *rewind_points_json)
{
	char ids[24];

	if (rewind_points_json == NULL)
		return queue_refuse(s, id, worker, reason, detail_json);
	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	return call(
	    s, "SELECT airlock.worker_refuse($1, $2, $3, coalesce($4::jsonb, '{}'), $5::jsonb)", 5,
	    (const char *const[]){ids, worker, reason, detail_json, rewind_points_json}, NULL, 0);
}

int queue_note(struct store *s, int64_t id, const char *worker, const char *detail_json)
{
	char ids[24];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	return call(s, "SELECT airlock.worker_note($1, $2, $3::jsonb)", 3,
	            (const char *const[]){ids, worker, detail_json}, NULL, 0);
}

int queue_start(struct store *s, int64_t id, const char *worker, const char *rewind_points_json,
                const char *guard_json, const char *confinement)
{
	char ids[24];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	return call(s, "SELECT airlock.worker_start($1, $2, $3::jsonb, $4::jsonb, $5)", 5,
	            (const char *const[]){ids, worker, rewind_points_json, guard_json, confinement},
	            NULL, 0);
}

int queue_finish(struct store *s, int64_t id, const char *worker, const struct queue_result *r,
                 bool *recorded)
{
	char ids[24], code[16], sig[16], dur[24];
	const char *params[13];
	int lengths[13] = {0};
	int formats[13] = {0};
	struct store_res *res;

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	snprintf(code, sizeof(code), "%d", r->exit_code);
	snprintf(sig, sizeof(sig), "%d", r->signal);
	snprintf(dur, sizeof(dur), "%lld", r->duration_ms);
	params[0] = ids;
	params[1] = worker;
	params[2] = r->state;
	params[3] = r->exit_code >= 0 ? code : NULL;
	params[4] = r->signal > 0 ? sig : NULL;
	params[5] = r->out ? r->out : "";
	lengths[5] = (int)(r->out ? r->outlen : 0);
	formats[5] = 1;
	params[6] = r->err ? r->err : "";
	lengths[6] = (int)(r->err ? r->errlen : 0);
	formats[6] = 1;
	params[7] = r->out_truncated ? "t" : "f";
	params[8] = r->err_truncated ? "t" : "f";
	params[9] = dur;
	params[10] = r->error;
	params[11] = r->hold_json;
	params[12] = r->jail;
	/* The jail's account first (the row is still running), in the same
	 * statement: no round trip of its own. */
	res = r->jail
	          ? store_execp_bin(s,
	                            "SELECT airlock.worker_finish($1, $2, $3, $4, $5, $6, $7, $8, "
	                            "$9, $10, $11, $12::jsonb) FROM (SELECT "
	                            "airlock.worker_jail($1, $2, $13)) j",
	                            13, params, lengths, formats)
	          : store_execp_bin(s,
	                            "SELECT airlock.worker_finish($1, $2, $3, $4, $5, $6, $7, $8, "
	                            "$9, $10, $11, $12::jsonb)",
	                            12, params, lengths, formats);
	if (res == NULL)
		return -1;
	*recorded = store_get(res, 0, 0)[0] == 't';
	store_clear(res);
	return 0;
}

int queue_reap(struct store *s, const char *daemon, const int64_t *working, size_t nworking,
               int grace_ms, int *n)
{
	char out[16], grace[16];
	char *ids = id_array(working, nworking);
	int rc;

	snprintf(grace, sizeof(grace), "%d", grace_ms);
	rc = call(s, "SELECT airlock.worker_reap($1, $2::bigint[], $3)", 3,
	          (const char *const[]){daemon, ids, grace}, out, sizeof(out));
	free(ids);
	if (rc < 0)
		return -1;
	*n = atoi(out);
	return 0;
}

int queue_gone(struct store *s, const char *daemon)
{
	return call(s, "SELECT airlock.worker_gone($1)", 1, (const char *const[]){daemon}, NULL, 0);
}

int queue_expire(struct store *s, int *n)
{
	char out[16];

	if (call(s, "SELECT airlock.expire_pending()", 0, NULL, out, sizeof(out)) < 0)
		return -1;
	*n = atoi(out);
	return 0;
}

int queue_unreachable(struct store *s, int64_t id, const char *worker, int delay_ms,
                      const char *reason, char state[24])
{
	char ids[24], ms[16];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	snprintf(ms, sizeof(ms), "%d", delay_ms);
	return call(s, "SELECT airlock.worker_unreachable($1, $2, $3, $4)", 4,
	            (const char *const[]){ids, worker, ms, reason}, state, 24);
}

int queue_clock_check(struct store *s, int *rows, long long *max_ahead_ms)
{
	struct store_res *res =
	    store_exec(s, "SELECT rows, max_ahead_ms FROM airlock.worker_clock_check()", 0, NULL);

	if (res == NULL)
		return -1;
	*rows = atoi(store_get(res, 0, 0));
	*max_ahead_ms = strtoll(store_get(res, 0, 1), NULL, 10);
	store_clear(res);
	return 0;
}

int queue_clock_forward(struct store *s, const char *worker, long long step_ms, const char *since,
                        int *rows)
{
	char ms[24], out[16];

	snprintf(ms, sizeof(ms), "%lld", step_ms);
	if (call(s, "SELECT airlock.worker_clock_stepped_forward($1, $2, $3::timestamptz)", 3,
	         (const char *const[]){worker, ms, since}, out, sizeof(out)) < 0)
		return -1;
	*rows = atoi(out);
	return 0;
}

int queue_rehold(struct store *s, int64_t id)
{
	char ids[24], out[8];

	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	if (call(s, "SELECT pg_try_advisory_lock($1::bigint)", 1, (const char *const[]){ids}, out,
	         sizeof(out)) < 0)
		return -1;
	return out[0] == 't' ? 1 : 0;
}

int queue_channel(struct store *s, const char *worker, char *channel, size_t len)
{
	char ch[64];

	if (call(s, "SELECT airlock.worker_channel($1)", 1, (const char *const[]){worker}, ch,
	         sizeof(ch)) < 0)
		return -1;
	/* The store quotes it for LISTEN; checked here so that a surprise from
	 * the server is refused rather than listened on. */
	if (strncmp(ch, "airlock_w_", 10) != 0 || strlen(ch) != 42 ||
	    strspn(ch + 10, "0123456789abcdef") != 32) {
		store_set_error(s, "worker_channel returned an unexpected channel name");
		return -1;
	}
	snprintf(channel, len, "%s", ch);
	return 0;
}
