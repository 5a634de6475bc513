/* audit.c -- `airlock audit verify` and `airlock audit keygen`.
 *
 * Both first seal what is unsealed, when the caller may (airlock.seal_events),
 * so the chain reaches as far as it can; events still unsealed (another
 * sealer holds the chain's lock, or they were written meanwhile) are
 * reported as such, not as a fault: only sealed events are in the chain.
 *
 * Plain `verify` asks the database (airlock.audit_verify()).  With
 * `--anchors FILE --pubkey KEY` it trusts nothing airlock defined in the
 * database: it reads the events and recomputes every link of the chain here,
 * checks each signed anchor against the recomputed chain (an anchored event
 * that is gone: truncation; a hash that differs: a rewrite), and compares
 * the approvals and executions rows with their latest chained records with a
 * query of its own over the tables. */
#include "cli/cli.h"

#include "lib/anchor.h"
#include "lib/buf.h"
#include "lib/readfile.h"
#include "lib/sha256.h"
#include "lib/visible.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROBLEMS_SHOWN 50

struct verify {
	struct anchor *anchors;     /* sorted by chain position */
	size_t nanchors, next;      /* next: the first anchor not yet reached */
	long long checked, last_id; /* last_id: the last chain position read */
	long long unsealed;
	char unsealed_age[32];
	char prev[65];
	bool chain_broken;
	long long held_id; /* the newest anchored event that holds */
	char held_at[21];
	struct buf problems; /* one per line */
	int nproblems;
	/* Lines of the anchor file a write cut short (a full disk, a crash):
	 * pieces of anchor lines, which sign nothing; not an edit. */
	int torn;
	bool torn_tail; /* the file ends in one */
};

static void problem(struct verify *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct verify *v, const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	v->nproblems++;
	if (v->nproblems <= MAX_PROBLEMS_SHOWN) {
		buf_puts(&v->problems, line);
		buf_putc(&v->problems, '\n');
	}
}

static int cmp_anchor(const void *a, const void *b)
{
	long long x = ((const struct anchor *)a)->event_id,
	          y = ((const struct anchor *)b)->event_id;

	return x < y ? -1 : x > y;
}

/* Reads and checks every line of the anchor file.  -1 when it cannot be read. */
static int load_anchors(struct verify *v, const char *path, const struct anchor_key *k)
{
	char err[256];
	size_t len, cap = 0;
	char *text = readfile(path, 256u << 20, &len, err, sizeof(err));
	int lineno = 0;

	if (text == NULL) {
		fprintf(stderr, "airlock audit verify: %s\n", err);
		return -1;
	}
	for (char *line = text, *next; line < text + len; line = next) {
		struct anchor a;
		next = strchr(line, '\n');
		bool ended = next != NULL;
		next = next ? next + 1 : text + len;
		if (next[-1] == '\n')
			next[-1] = '\0';
		lineno++;
		if (line[0] == '\0')
			continue;
		/* A write cut short, and an anchor written after it onto the
		 * same line (airlockd before it repaired such tails): the piece
		 * is torn, the anchor after it is checked as any. */
		char *glued = strstr(line + 1, "airlock-anchor v1 ");
		if (glued != NULL) {
			char *last;
			while ((last = strstr(glued + 1, "airlock-anchor v1 ")) != NULL)
				glued = last;
			char save = *glued;
			*glued = '\0';
			bool piece = anchor_torn_prefix(line);
			*glued = save;
			if (piece && anchor_verify(k, glued, &a, err, sizeof(err)) == 0) {
				v->torn++;
				line = glued;
			}
		}
		if (anchor_verify(k, line, &a, err, sizeof(err)) < 0) {
			if (anchor_torn_prefix(line)) {
				v->torn++;
				v->torn_tail = v->torn_tail || !ended;
				continue;
			}
			problem(v, "anchor file line %d: %s", lineno, err);
			continue;
		}
		if (v->nanchors == cap) {
			cap = cap ? 2 * cap : 64;
			v->anchors = xrealloc(v->anchors, cap * sizeof(*v->anchors));
		}
		v->anchors[v->nanchors++] = a;
	}
	free(text);
	qsort(v->anchors, v->nanchors, sizeof(*v->anchors), cmp_anchor);
	return 0;
}

/* Checks the anchors whose position lies before `seq` and never appeared.
 * Events sealed before the chain had positions have their id as position, so
 * positions may skip numbers there. */
static void anchors_missing_before(struct verify *v, long long seq)
{
	while (v->next < v->nanchors && v->anchors[v->next].event_id < seq) {
		const struct anchor *a = &v->anchors[v->next++];
		problem(v,
		        "chain position %lld, signed at %s, is gone from the chain (removed, with "
		        "the chain around it re-linked)",
		        a->event_id, a->at);
	}
}

/* One sealed event, in chain order: its link, its hash recomputed from its
 * content, and the anchors that name its position.  cols: id, execution_id,
 * at, actor, from, to, detail, prev_hash, hash, seq. */
static void check_event(struct verify *v, const struct store_res *res, int r)
{
	const char *id = store_get(res, r, 0), *stored = store_get(res, r, 8);
	long long eid = strtoll(store_get(res, r, 9), NULL, 10);
	char hash[SHA256_HEX_LEN + 1];
	struct buf content = BUF_INIT;

	buf_printf(&content, "%s|%s|%s|%s|%s|%s|%s|%s", store_get(res, r, 7), id,
	           store_get(res, r, 1), store_get(res, r, 2), store_get(res, r, 3),
	           store_get(res, r, 4), store_get(res, r, 5), store_get(res, r, 6));
	sha256_hex(buf_str(&content), content.len, hash);
	buf_free(&content);
	if (!v->chain_broken && strcmp(store_get(res, r, 7), v->prev) != 0) {
		problem(v,
		        "event %s (chain position %lld): its link does not match the event before "
		        "it (an event was removed or reordered)",
		        id, eid);
		v->chain_broken = true;
	}
	if (!v->chain_broken && strcmp(hash, stored) != 0) {
		problem(v,
		        "event %s (chain position %lld): its content does not match its hash (the "
		        "event was altered)",
		        id, eid);
		v->chain_broken = true;
	}
	anchors_missing_before(v, eid);
	for (; v->next < v->nanchors && v->anchors[v->next].event_id == eid; v->next++) {
		const struct anchor *a = &v->anchors[v->next];
		if (strcmp(a->hash, hash) == 0) {
			v->held_id = eid;
			memcpy(v->held_at, a->at, sizeof(v->held_at));
			continue;
		}
		problem(v,
		        "chain position %lld (event %s) is not the event signed at %s: the chain "
		        "was rewritten at or before it, after position %lld (the last anchored "
		        "position that holds)",
		        eid, id, a->at, v->held_id);
	}
	memcpy(v->prev, stored, sizeof(v->prev));
	v->last_id = eid;
	v->checked++;
}

/* Seals what is unsealed first when this login may (airlock.seal_events), a
 * batch per transaction, so that the chain reaches as far as it can.  A
 * login that may not, or a sealer busy elsewhere, leaves an unsealed tail,
 * which the report shows.  -1 only when the database fails. */
#define SEAL_BATCH       5000
#define SEAL_BATCH_SQL   "SELECT airlock.seal_events(5000)"
#define SEAL_MAX_BATCHES 1000

static int seal_first(struct store *s)
{
	struct store_res *res = store_exec(
	    s, "SELECT has_function_privilege('airlock.seal_events(integer)', 'EXECUTE')", 0, NULL);
	bool may;

	if (res == NULL)
		return -1;
	may = strcmp(store_get(res, 0, 0), "t") == 0;
	store_clear(res);
	for (int i = 0; may && i < SEAL_MAX_BATCHES; i++) {
		res = store_exec(s, SEAL_BATCH_SQL, 0, NULL);
		if (res == NULL)
			return -1;
		long long n = strtoll(store_get(res, 0, 0), NULL, 10);
		store_clear(res);
		if (n < SEAL_BATCH)
			break;
	}
	return 0;
}

/* Reads every sealed event in chain order, in batches, in one snapshot. */
static int walk_events(struct store *s, struct verify *v)
{
	static const char *const setup[] = {
	    "SET client_encoding = 'UTF8'",
	    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	    "DECLARE audit_events NO SCROLL CURSOR FOR "
	    "SELECT id, execution_id, to_char(at AT TIME ZONE 'UTC', "
	    "'YYYY-MM-DD\"T\"HH24:MI:SS.US'), actor, coalesce(from_state, ''), to_state, "
	    "detail::text, prev_hash, hash, seq FROM airlock.execution_events "
	    "WHERE seq IS NOT NULL ORDER BY seq",
	};
	struct store_res *res;

	memset(v->prev, '0', 64);
	v->prev[64] = '\0';
	for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
		res = store_exec(s, setup[i], 0, NULL);
		if (res == NULL)
			return -1;
		store_clear(res);
	}
	for (;;) {
		res = store_exec(s, "FETCH 5000 FROM audit_events", 0, NULL);
		if (res == NULL)
			return -1;
		int n = store_nrows(res);
		for (int r = 0; r < n; r++)
			check_event(v, res, r);
		store_clear(res);
		if (n == 0)
			break;
	}
	res =
	    store_exec(s,
	               "SELECT count(*), coalesce(to_char(now() - min(at), 'FMHH24:MI:SS.MS'), '') "
	               "FROM airlock.execution_events WHERE seq IS NULL",
	               0, NULL);
	if (res == NULL)
		return -1;
	v->unsealed = strtoll(store_get(res, 0, 0), NULL, 10);
	snprintf(v->unsealed_age, sizeof(v->unsealed_age), "%s", store_get(res, 0, 1));
	store_clear(res);
	for (; v->next < v->nanchors; v->next++) {
		const struct anchor *a = &v->anchors[v->next];
		problem(
		    v,
		    "truncated: the anchor signed at %s names chain position %lld, but the chain "
		    "ends at position %lld: the newest events were removed",
		    a->at, a->event_id, v->last_id);
	}
	return 0;
}

/* The rows against their latest chained records, with nothing but the tables
 * and PostgreSQL's built-ins (the same rules as airlock._audit_records()). */
static const char records_sql[] =
    "WITH ar AS (SELECT DISTINCT ON ((ev.detail->'approval'->>'id')::bigint) "
    "  (ev.detail->'approval'->>'id')::bigint AS aid, ev.id, ev.detail->'approval' AS r, "
    "  ev.actor, coalesce((ev.detail->>'backfill')::boolean, false) AS backfill "
    "  FROM airlock.execution_events ev WHERE ev.from_state = 'record' "
    "  AND ev.detail->>'record' = 'approval' "
    "  ORDER BY (ev.detail->'approval'->>'id')::bigint, ev.id DESC), "
    "er AS (SELECT DISTINCT ON (ev.execution_id) ev.execution_id, ev.id, ev.detail->'execution' AS "
    "r "
    "  FROM airlock.execution_events ev WHERE ev.detail->>'record' = 'execution' "
    "  ORDER BY ev.execution_id, ev.id DESC), "
    "a AS (SELECT a.id, a.approver, jsonb_build_object('id', a.id, 'execution_id', a.execution_id, "
    "  'approver', a.approver, 'decision', a.decision, 'reason', a.reason, "
    "  'payload_hash', a.payload_hash, 'rewind_status', a.rewind_status, 'at', "
    "  to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
    "  'gate_version', a.gate_version) AS r "
    "  FROM airlock.approvals a), "
    "e AS (SELECT e.id, jsonb_build_object('state', e.state, 'target', e.target, "
    "  'target_type', e.target_type, 'requested_by', e.requested_by, 'command_sha256', "
    "  encode(sha256(convert_to(e.command, 'UTF8')), 'hex'), 'declared_risk', e.declared_risk, "
    "  'change_id', e.change_id, 'action', e.action, 'class', e.class, 'reasons_sha256', "
    "  encode(sha256(convert_to(e.reasons::text, 'UTF8')), 'hex'), 'policy_version', "
    "  e.policy_version, 'payload_hash', e.payload_hash, 'approvals_required', "
    "  e.approvals_required, 'rewind_status', e.rewind_status, 'rewind_possible', "
    "  e.rewind_possible, 'rewind_points', e.rewind_points, 'exit_code', e.exit_code, "
    "  'signal', e.signal, 'stdout_sha256', encode(sha256(e.stdout), 'hex'), 'stdout_bytes', "
    "  octet_length(e.stdout), 'stderr_sha256', encode(sha256(e.stderr), 'hex'), "
    "  'stderr_bytes', octet_length(e.stderr), 'stdout_truncated', e.stdout_truncated, "
    "  'stderr_truncated', e.stderr_truncated, 'duration_ms', e.duration_ms, 'error', e.error) "
    "  || jsonb_build_object('kind', e.kind, 'confinement', e.confinement, 'gate_version', "
    "  e.gate_version, 'approval_valid_until', to_char(e.approval_valid_until AT TIME ZONE "
    "  'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'approved_probe', e.approved_probe) "
    "  AS r FROM airlock.executions e), "
    "hr AS (SELECT DISTINCT ON (ev.execution_id) ev.execution_id, ev.id, "
    "  ev.detail->'output_hold' AS r FROM airlock.execution_events ev "
    "  WHERE jsonb_typeof(ev.detail->'output_hold') = 'object' "
    "  AND ev.detail->>'step' IS DISTINCT FROM 'preview' "
    "  ORDER BY ev.execution_id, ev.id DESC), "
    "h AS (SELECT h.execution_id AS id, jsonb_build_object('execution_id', h.execution_id, "
    "  'state', h.state, 'kind', h.kind, 'label', h.label, 'stream', h.stream, 'line', h.line, "
    "  'error_held', h.error_held, 'stdout_sha256', h.stdout_sha256, 'stdout_bytes', "
    "  h.stdout_bytes, 'stderr_sha256', h.stderr_sha256, 'stderr_bytes', h.stderr_bytes, "
    "  'error_sha256', h.error_sha256, 'decided_by', h.decided_by, 'reason', h.reason) AS r, "
    "  h.state = 'held' AND (encode(sha256(coalesce(h.stdout, '')), 'hex') <> h.stdout_sha256 "
    "  OR encode(sha256(coalesce(h.stderr, '')), 'hex') <> h.stderr_sha256) AS swapped "
    "  FROM airlock.output_holds h) "
    "SELECT 'approval', coalesce(a.id, ar.aid), ar.id, a.r::text, ar.r::text, "
    "  CASE WHEN a.r = ar.r THEN ar.actor END "
    "  FROM a FULL JOIN ar ON ar.aid = a.id "
    "  WHERE a.id IS NULL OR ar.id IS NULL OR a.r <> ar.r "
    "  OR (ar.actor <> a.approver AND NOT ar.backfill) "
    "UNION ALL SELECT 'execution', e.id, er.id, e.r::text, er.r::text, NULL "
    "  FROM e LEFT JOIN er ON er.execution_id = e.id WHERE er.id IS NULL OR e.r <> er.r "
    "UNION ALL SELECT 'the output hold of execution', coalesce(h.id, hr.execution_id), hr.id, "
    "  CASE WHEN h.swapped THEN h.r::text || ' (its held bytes no longer match those digests)' "
    "  ELSE h.r::text END, hr.r::text, NULL "
    "  FROM h FULL JOIN hr ON hr.execution_id = h.id "
    "  WHERE h.id IS NULL OR hr.id IS NULL OR h.r <> hr.r OR h.swapped "
    "ORDER BY 1, 2";

static int check_records(struct store *s, struct verify *v)
{
	struct store_res *res = store_exec(s, records_sql, 0, NULL);

	if (res == NULL)
		return -1;
	for (int r = 0; r < store_nrows(res); r++) {
		const char *what = store_get(res, r, 0), *id = store_get(res, r, 1);
		if (store_isnull(res, r, 2))
			problem(v,
			        "%s %s has no chained record: it was written around the triggers",
			        what, id);
		else if (store_isnull(res, r, 3))
			problem(v, "%s %s is gone, but event %s records it: %s", what, id,
			        store_get(res, r, 2), store_get(res, r, 4));
		else if (!store_isnull(res, r, 5))
			problem(v,
			        "%s %s names an approver whose own session did not write its "
			        "record: event %s was written by %s (%s)",
			        what, id, store_get(res, r, 2), store_get(res, r, 5),
			        store_get(res, r, 4));
		else
			problem(v,
			        "%s %s differs from its record (event %s): the row says %s, the "
			        "record says %s",
			        what, id, store_get(res, r, 2), store_get(res, r, 3),
			        store_get(res, r, 4));
	}
	store_clear(res);
	return 0;
}

/* The events written but not yet sealed: not in the chain yet, and not a
 * fault; the append-only trigger is what guards them until they are. */
static void print_unsealed(long long n, const char *oldest_age)
{
	if (n > 0)
		printf("audit: %lld event%s not sealed into the chain yet (the oldest written %s "
		       "ago); the records check covered them\n",
		       n, n == 1 ? "" : "s", oldest_age);
}

/* Pieces of anchor lines are not edits: said, not counted as problems. */
static void print_torn(const struct verify *v)
{
	if (v->torn > 0)
		printf(
		    "audit: %d line%s of the anchor file %s cut short by an interrupted write (a "
		    "full disk, a crash)%s: a piece of an anchor line signs nothing and is not an "
		    "edit; the anchor it was to hold is missing, and the next anchor covers the "
		    "chain up to its own position\n",
		    v->torn, v->torn == 1 ? "" : "s", v->torn == 1 ? "was" : "were",
		    v->torn_tail ? ", the last at the file's end" : "");
}

static void report(const struct verify *v, const char *anchors_path, bool json)
{
	bool intact = v->nproblems == 0;

	if (json) {
		cJSON *o = cJSON_CreateObject(), *p = cJSON_AddArrayToObject(o, "problems");
		cJSON_AddNumberToObject(o, "checked", (double)v->checked);
		cJSON_AddBoolToObject(o, "intact", intact);
		cJSON_AddNumberToObject(o, "anchors", (double)v->nanchors);
		cJSON_AddNumberToObject(o, "anchored_to", (double)v->held_id);
		cJSON_AddNumberToObject(o, "newest_event", (double)v->last_id);
		cJSON_AddNumberToObject(o, "unsealed", (double)v->unsealed);
		cJSON_AddNumberToObject(o, "torn_lines", v->torn);
		for (const char *l = buf_str(&v->problems); *l;) {
			const char *e = strchr(l, '\n');
			char *one = xstrndup(l, (size_t)(e - l));
			cJSON_AddItemToArray(p, cJSON_CreateString(one));
			free(one);
			l = e + 1;
		}
		char *out = cJSON_PrintUnformatted(o);
		printf("%s\n", out);
		free(out);
		cJSON_Delete(o);
		return;
	}
	if (!intact) {
		char *shown =
		    visible_text(buf_str(&v->problems), v->problems.len, VISIBLE_LINES, 0, NULL);
		printf("audit: BROKEN: %d problem%s (%lld events read, anchors from %s)\n%s",
		       v->nproblems, v->nproblems == 1 ? "" : "s", v->checked, anchors_path, shown);
		if (v->nproblems > MAX_PROBLEMS_SHOWN)
			printf("... and %d more\n", v->nproblems - MAX_PROBLEMS_SHOWN);
		free(shown);
		print_torn(v);
		print_unsealed(v->unsealed, v->unsealed_age);
		return;
	}
	printf("audit: intact, %lld events verified; %zu signed anchor%s hold, the newest for "
	       "chain position %lld (signed at %s)",
	       v->checked, v->nanchors, v->nanchors == 1 ? "" : "s", v->held_id,
	       v->held_id ? v->held_at : "-");
	if (v->last_id > v->held_id)
		printf("; positions after %lld are covered by the chain only, not yet by an anchor",
		       v->held_id);
	printf("\n");
	print_torn(v);
	print_unsealed(v->unsealed, v->unsealed_age);
}

static int verify_anchored(const char *db, const char *anchors_path, const char *pubkey, bool json)
{
	struct verify v = {.problems = BUF_INIT};
	struct anchor_key *k;
	struct store *s = NULL;
	char err[512];
	int rc = CLI_ERROR;

	k = anchor_key_load_public(pubkey, err, sizeof(err));
	if (k == NULL) {
		fprintf(stderr, "airlock audit verify: --pubkey %s\n", err);
		return CLI_USAGE;
	}
	if (load_anchors(&v, anchors_path, k) < 0) {
		rc = CLI_USAGE;
		goto out;
	}
	if (v.nanchors == 0)
		problem(&v, "the anchor file %s holds no anchor signed by key %s", anchors_path,
		        anchor_key_id(k));
	s = cli_connect(db);
	if (s == NULL)
		goto out;
	if (seal_first(s) < 0 || walk_events(s, &v) < 0 || check_records(s, &v) < 0) {
		rc = cli_fail(s, "audit verify");
		goto out;
	}
	report(&v, anchors_path, json);
	rc = v.nproblems == 0 ? CLI_OK : CLI_REFUSED;
out:
	store_close(s);
	anchor_key_free(k);
	free(v.anchors);
	buf_free(&v.problems);
	return rc;
}

/* The database's own check (airlock.audit_verify()). */
static int verify_in_database(const char *db, bool json)
{
	struct store *s = cli_connect(db);
	struct store_res *res;
	int rc;

	if (s == NULL)
		return CLI_ERROR;
	res = seal_first(s) < 0 ? NULL
	                        : store_exec(s,
	                                     "SELECT checked, first_broken, detail, unsealed, "
	                                     "to_char(make_interval(secs => oldest_unsealed_s), "
	                                     "'FMHH24:MI:SS.MS') FROM airlock.audit_verify()",
	                                     0, NULL);
	if (res == NULL) {
		rc = cli_fail(s, "audit verify");
		store_close(s);
		return rc;
	}
	bool broken = !store_isnull(res, 0, 1);
	if (json) {
		printf("{\"checked\":%s,\"intact\":%s,\"first_broken\":%s,\"unsealed\":%s}\n",
		       store_get(res, 0, 0), broken ? "false" : "true",
		       broken ? store_get(res, 0, 1) : "null", store_get(res, 0, 3));
	} else if (broken) {
		char *detail = visible_str(store_get(res, 0, 2), 0);
		printf("audit: BROKEN at %s (%s events verified before it)\n", detail,
		       store_get(res, 0, 0));
		free(detail);
	} else {
		printf("audit: intact, %s events verified\n", store_get(res, 0, 0));
	}
	if (!json)
		print_unsealed(strtoll(store_get(res, 0, 3), NULL, 10), store_get(res, 0, 4));
	rc = broken ? CLI_REFUSED : CLI_OK;
	store_clear(res);
	store_close(s);
	return rc;
}

static int keygen(const char *out, const char *pub)
{
	char err[512], *pubpath = pub ? xstrdup(pub) : xasprintf("%s.pub", out);
	int rc = CLI_OK;

	if (anchor_keygen(out, pubpath, err, sizeof(err)) < 0) {
		fprintf(stderr, "airlock audit keygen: %s\n", err);
		rc = CLI_ERROR;
	} else {
		printf("private key (for airlockd's audit.signing_key, mode 0600): %s\n"
		       "public key (for airlock audit verify --pubkey): %s\n",
		       out, pubpath);
	}
	free(pubpath);
	return rc;
}

static const char usage_text[] =
    "usage: airlock audit verify [--json] [--db CONNINFO]\n"
    "       airlock audit verify --anchors FILE --pubkey KEY [--json] [--db CONNINFO]\n"
    "       airlock audit keygen --out FILE [--pub FILE]\n";

int cli_audit(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"db", required_argument, NULL, 'd'},      {"json", no_argument, NULL, 'j'},
	    {"anchors", required_argument, NULL, 'a'}, {"pubkey", required_argument, NULL, 'p'},
	    {"out", required_argument, NULL, 'o'},     {"pub", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
	};
	const char *db = NULL, *anchors = NULL, *pubkey = NULL, *out = NULL, *pub = NULL;
	bool json = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'a':
			anchors = optarg;
			break;
		case 'p':
			pubkey = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'P':
			pub = optarg;
			break;
		case 'h':
			printf(
			    "%s\n"
			    "verify first seals what is unsealed (when the login may), walks\n"
			    "the event hash chain in chain order and checks the approvals and\n"
			    "executions rows against their chained records.  Events not yet\n"
			    "sealed are counted, with the age of the oldest, not judged.\n"
			    "With --anchors and --pubkey it trusts nothing airlock defined in\n"
			    "the database: it recomputes every hash itself and checks each\n"
			    "anchor airlockd signed (a chain position and its hash: one that is\n"
			    "gone is a truncation, one whose hash differs a rewrite).  Exit 0\n"
			    "when intact, 3 when not.\n"
			    "keygen writes a new Ed25519 key pair for airlockd's anchors: the\n"
			    "private key to --out (mode 0600, never overwritten), the public key\n"
			    "to --pub (default FILE.pub).\n",
			    usage_text);
			return CLI_OK;
		default:
			fprintf(stderr, "%s", usage_text);
			return CLI_USAGE;
		}
	}
	if (optind == argc - 1 && strcmp(argv[optind], "keygen") == 0 && out != NULL && !anchors &&
	    !pubkey && !db && !json)
		return keygen(out, pub);
	if (optind != argc - 1 || strcmp(argv[optind], "verify") != 0 || out || pub ||
	    (anchors == NULL) != (pubkey == NULL)) {
		fprintf(stderr, "%s", usage_text);
		return CLI_USAGE;
	}
	return anchors ? verify_anchored(db, anchors, pubkey, json) : verify_in_database(db, json);
}
