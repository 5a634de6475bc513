/* pipeline_test.c -- the worker's error paths at the store/ seam.
 *
 * The store (store/store.h) and the SSH transport (transport/transport.h)
 * are replaced by fakes defined here, so the linker takes them instead of
 * the real modules: the fake store answers airlock's worker functions by
 * name and fails the calls a test scripts (a lost connection, a statement
 * timeout, a serialization failure, a finish that reports recorded=false);
 * the fake transport counts the commands it was asked to run.  Everything
 * between them is the real worker: pipeline, queue, guard, targets,
 * policy set (the seeded policy), durability, slots.
 *
 * The properties: a result that cannot be written is retried until it
 * lands (on a new session when the old one is gone, taking the row's lock
 * again), is written once, and the command is never sent twice; a
 * failure before the command is sent sends nothing. */
#include "classifier/verdict.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/sqlstate.h"
#include "lib/xalloc.h"
#include "store/queue.h"
#include "store/store.h"
#include "transport/transport.h"
#include "worker/config.h"
#include "worker/durability.h"
#include "worker/guard.h"
#include "worker/pipeline.h"
#include "worker/policyset.h"
#include "worker/slots.h"
#include "worker/target.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ------------------------------------------------------------ fake store */

enum call {
	C_CLAIM,
	C_CLAIM_CLASSIFIED,
	C_CLASSIFIED,
	C_REVALIDATE,
	C_CONFINE,
	C_START,
	C_FINISH,
	C_REFUSE,
	C_RELEASE,
	C_SETTLE,
	C_NOT_SENT,
	C_UNREACHABLE,
	C_UNCONFINABLE,
	C_TARGET_LOCK,
	C_TARGET_UNLOCK,
	C_ROW_LOCK,
	C_ROW_UNLOCK,
	C_OTHER,
	NCALLS
};

/* What the next calls of one kind do: fail with a SQLSTATE (losing the
 * connection when lose is set), or answer with a value. */
struct fault {
	const char *sqlstate;
	bool lose;
};

static struct {
	int calls[NCALLS];
	struct fault script[NCALLS][4];
	int nscript[NCALLS];
	const char *answer[NCALLS];
	bool connected;
	int resets;
	char errmsg[256];
	char sqlstate[6];
	int sent;   /* commands the transport was asked to run */
	int probes; /* live checks the transport was asked for */
	enum transport_probe_state probe_state;
	bool not_pooled;   /* no pooled session is up for the node a wake-up names */
	int pooled_asked;  /* how often the pool was asked */
	char *confinement; /* what the last one-call claim asked for ("-": none) */
	char *policy;
	/* what the fake transport answers (EXITED 0 unless set) */
	enum transport_status tstatus;
	enum transport_error terror;
	const char *tmsg;
	bool not_sent_retry;   /* the last worker_not_sent asked for a retry */
	const char *no_bash;   /* the target's last shell probe found no bash: why */
	char reason[1024];     /* the last worker_refuse's or worker_not_sent's reason */
	char finish_state[24]; /* the last worker_finish's state */
	const char *tout;      /* the fake command's stdout ("ok\n" unless set) */
	char *finish_hold;     /* the last worker_finish's hold ("-": none) */
	char *finish_out;      /* and the stdout it was given */
} F;

struct store {
	int unused;
};
#define FAKE_COLUMNS 24
struct store_res {
	int nrows;
	char *v[FAKE_COLUMNS];
};
static struct store the_db;

static enum call classify_sql(const char *sql)
{
	static const struct {
		const char *needle;
		enum call c;
	} map[] = {
	    {"airlock.worker_claim_classified(", C_CLAIM_CLASSIFIED},
	    {"airlock.worker_claim(", C_CLAIM},
	    {"airlock.worker_classified(", C_CLASSIFIED},
	    {"airlock.worker_revalidate(", C_REVALIDATE},
	    {"airlock.worker_confine(", C_CONFINE},
	    {"airlock.worker_start(", C_START},
	    {"airlock.worker_finish(", C_FINISH},
	    {"airlock.worker_refuse(", C_REFUSE},
	    {"airlock.worker_release(", C_RELEASE},
	    {"airlock.worker_settle(", C_SETTLE},
	    {"airlock.worker_not_sent(", C_NOT_SENT},
	    {"airlock.worker_unreachable(", C_UNREACHABLE},
	    {"airlock.worker_unconfinable(", C_UNCONFINABLE},
	    {"pg_try_advisory_lock($1::bigint)", C_ROW_LOCK},
	    {"pg_advisory_unlock($1::bigint)", C_ROW_UNLOCK},
	    {"pg_try_advisory_lock(", C_TARGET_LOCK},
	    {"pg_advisory_unlock(", C_TARGET_UNLOCK},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strstr(sql, map[i].needle))
			return map[i].c;
	return C_OTHER;
}

static struct store_res *one_row(const char *const *vals, int n)
{
	struct store_res *r = xcalloc(1, sizeof(*r));

	r->nrows = vals ? 1 : 0;
	for (int i = 0; vals && i < n; i++)
		r->v[i] = vals[i] ? xstrdup(vals[i]) : NULL;
	return r;
}

static struct store_res *answer(const char *sql)
{
	if (strstr(sql, "worker_durability()"))
		return one_row((const char *const[]){"{\"fsync\": \"on\", \"synchronous_commit\": "
		                                     "\"on\", \"synchronous_standby_names\": \"\", "
		                                     "\"standbys\": []}"},
		               1);
	if (strstr(sql, "kind = 'guard'"))
		return one_row((const char *const[]){"f"}, 1);
	enum call c = classify_sql(sql);
	if (c == C_CLAIM_CLASSIFIED) {
		/* The claimed row in the state the test names; no row when none. */
		if (F.answer[c] == NULL)
			return one_row(NULL, 0);
		return one_row((const char *const[]){"42",
		                                     F.answer[c],
		                                     "proxmox-host:hubris",
		                                     "proxmox-host",
		                                     "uptime",
		                                     NULL,
		                                     NULL,
		                                     NULL,
		                                     "hermes",
		                                     "read_only",
		                                     "7",
		                                     "f",
		                                     "0",
		                                     NULL,
		                                     "proxmox-host:hubris",
		                                     "127.0.0.1",
		                                     "22",
		                                     NULL,
		                                     NULL,
		                                     NULL,
		                                     "run"},
		               21);
	}
	return one_row((const char *const[]){F.answer[c] ? F.answer[c] : ""}, 1);
}

struct store_res *store_exec(struct store *s, const char *sql, int nparams,
                             const char *const *params)
{
	enum call c = classify_sql(sql);

	assert_ptr_equal(s, &the_db);
	F.calls[c]++;
	if (c == C_CLAIM_CLASSIFIED) {
		assert_int_equal(nparams, 10);
		free(F.confinement);
		F.confinement = xstrdup(params[9] ? params[9] : "-");
	}
	F.errmsg[0] = F.sqlstate[0] = '\0';
	if (!F.connected) {
		snprintf(F.errmsg, sizeof(F.errmsg), "no connection to the server");
		return NULL;
	}
	int k = F.calls[c] - 1;
	if (c == C_NOT_SENT && nparams == 4)
		F.not_sent_retry = params[3] != NULL;
	if ((c == C_NOT_SENT || c == C_REFUSE) && nparams >= 3)
		snprintf(F.reason, sizeof(F.reason), "%s", params[2] ? params[2] : "");
	if (c == C_FINISH && nparams >= 3)
		snprintf(F.finish_state, sizeof(F.finish_state), "%s", params[2]);
	if (c == C_FINISH) {
		assert_int_equal(nparams, 12);
		free(F.finish_hold);
		free(F.finish_out);
		F.finish_hold = xstrdup(params[11] ? params[11] : "-");
		F.finish_out = xstrdup(params[5] ? params[5] : "");
	}
	if (k < F.nscript[c] && F.script[c][k].sqlstate != NULL) {
		const struct fault *f = &F.script[c][k];
		snprintf(F.sqlstate, sizeof(F.sqlstate), "%s", f->lose ? "" : f->sqlstate);
		snprintf(F.errmsg, sizeof(F.errmsg), "scripted failure %s", f->sqlstate);
		if (f->lose)
			F.connected = false;
		return NULL;
	}
	return answer(sql);
}

struct store_res *store_exec_bin(struct store *s, const char *sql, int nparams,
                                 const char *const *params, const int *lengths, const int *formats)
{
	(void)lengths;
	(void)formats;
	return store_exec(s, sql, nparams, params);
}

/* Prepared or not is the same to the worker. */
struct store_res *store_execp(struct store *s, const char *sql, int nparams,
                              const char *const *params)
{
	return store_exec(s, sql, nparams, params);
}

struct store_res *store_execp_bin(struct store *s, const char *sql, int nparams,
                                  const char *const *params, const int *lengths, const int *formats)
{
	(void)lengths;
	(void)formats;
	return store_exec(s, sql, nparams, params);
}

int store_nrows(const struct store_res *r)
{
	return r->nrows;
}
int store_nfields(const struct store_res *r)
{
	return r->nrows ? 1 : 0;
}
const char *store_get(const struct store_res *r, int row, int col)
{
	(void)row;
	return r->v[col] ? r->v[col] : "";
}
bool store_isnull(const struct store_res *r, int row, int col)
{
	(void)row;
	return r->v[col] == NULL;
}
int store_getlen(const struct store_res *r, int row, int col)
{
	return (int)strlen(store_get(r, row, col));
}
void store_clear(struct store_res *r)
{
	if (r == NULL)
		return;
	for (int i = 0; i < FAKE_COLUMNS; i++)
		free(r->v[i]);
	free(r);
}
void store_exec_quiet(struct store *s, const char *sql)
{
	store_clear(store_exec(s, sql, 0, NULL));
}
const char *store_errmsg(const struct store *s)
{
	(void)s;
	return F.errmsg;
}
const char *store_sqlstate(const struct store *s)
{
	(void)s;
	return F.sqlstate;
}
bool store_connected(const struct store *s)
{
	(void)s;
	return F.connected;
}
int store_reset(struct store *s)
{
	(void)s;
	F.resets++;
	F.connected = true;
	return 0;
}
int store_policy_current(struct store *s, char **yaml, long long *version)
{
	(void)s;
	*yaml = xstrdup(F.policy);
	*version = 7;
	return 0;
}
int store_gate_network(struct store *s, long long *version, char ***globs, size_t *n)
{
	(void)s;
	*version = 1;
	*globs = NULL;
	*n = 0;
	return 0;
}

/* The rest of store.h: never reached by the worker's row path. */
static void unreachable(const char *what)
{
	fail_msg("the fake store has no %s", what);
}
struct store *store_open(const char *c, const char *a, char *e, size_t l)
{
	(void)c, (void)a, (void)e, (void)l;
	unreachable("store_open");
	return NULL;
}
struct store *store_open_with(const char *c, const char *a, const char *o, char *e, size_t l)
{
	(void)c, (void)a, (void)o, (void)e, (void)l;
	unreachable("store_open_with");
	return NULL;
}
void store_close(struct store *s)
{
	(void)s;
}
void store_set_error(struct store *s, const char *fmt, ...)
{
	va_list ap;
	(void)s;
	va_start(ap, fmt);
	vsnprintf(F.errmsg, sizeof(F.errmsg), fmt, ap);
	va_end(ap);
}
const char *store_errdetail(const struct store *s)
{
	return (void)s, "";
}
const char *store_errhint(const struct store *s)
{
	return (void)s, "";
}
int store_backoff_next(struct store_backoff *b)
{
	return (void)b, 200;
}
void store_backoff_reset(struct store_backoff *b)
{
	(void)b;
}
int store_listen(struct store *s, const char *c)
{
	return (void)s, (void)c, unreachable("LISTEN"), -1;
}
int store_unlisten(struct store *s, const char *c)
{
	return (void)s, (void)c, -1;
}
int store_wait_notify(struct store *s, int t)
{
	return (void)s, (void)t, unreachable("wait"), -1;
}
int store_notification(struct store *s, char *c, size_t cl, char *p, size_t pl)
{
	(void)s, (void)c, (void)cl, (void)p, (void)pl;
	return 0;
}
int store_drain_notifications(struct store *s)
{
	return (void)s, 0;
}
char *store_quote_ident(struct store *s, const char *n)
{
	return (void)s, xstrdup(n);
}
char *store_quote_literal(struct store *s, const char *t)
{
	return (void)s, xstrdup(t);
}
char *store_scram_verifier(struct store *s, const char *u, const char *p)
{
	(void)s, (void)u, (void)p;
	return NULL;
}
const char *store_host(const struct store *s)
{
	return (void)s, "";
}
const char *store_port(const struct store *s)
{
	return (void)s, "";
}
const char *store_dbname(const struct store *s)
{
	return (void)s, "";
}
struct store *store_new(const char *c, const char *a, const char *o)
{
	(void)c, (void)a, (void)o;
	unreachable("store_new");
	return NULL;
}
void store_on_connect(struct store *s, store_hook_fn fn, void *arg)
{
	(void)s, (void)fn, (void)arg;
}
void store_on_notice(struct store *s, store_notice_fn fn, void *arg)
{
	(void)s, (void)fn, (void)arg;
}
int store_ensure(struct store *s)
{
	return store_reset(s);
}
void store_disconnect(struct store *s)
{
	(void)s, F.connected = false;
}
struct store_res *store_exec_read(struct store *s, const char *sql, int nparams,
                                  const char *const *params)
{
	return store_exec(s, sql, nparams, params);
}
void store_set_error_state(struct store *s, const char *sqlstate, const char *fmt, ...)
{
	va_list ap;
	(void)s;
	snprintf(F.sqlstate, sizeof(F.sqlstate), "%s", sqlstate ? sqlstate : "");
	va_start(ap, fmt);
	vsnprintf(F.errmsg, sizeof(F.errmsg), fmt, ap);
	va_end(ap);
}
int store_wait_notify_or(struct store *s, int fd, int t)
{
	return (void)s, (void)fd, (void)t, unreachable("wait"), -1;
}
int store_exec_script(struct store *s, const char *sql)
{
	return (void)s, (void)sql, unreachable("scripts"), -1;
}

/* -------------------------------------------------------- fake transport */

struct transport {
	int unused;
};
static struct transport the_transport;

struct transport *transport_new(const struct transport_config *cfg, char *err, size_t errlen)
{
	(void)cfg, (void)err, (void)errlen;
	return &the_transport;
}
void transport_free(struct transport *t)
{
	(void)t;
}
int transport_check_command(enum target_type type, int vmid, const char *command, char *err,
                            size_t errlen)
{
	(void)type, (void)vmid, (void)command, (void)err, (void)errlen;
	return 0;
}
int transport_probe(struct transport *t, const struct transport_node *node,
                    struct transport_probe *probes, size_t n, int timeout_ms)
{
	(void)t, (void)node, (void)timeout_ms;
	for (size_t i = 0; i < n; i++) {
		F.probes++;
		probes[i].state = F.probe_state;
		snprintf(probes[i].detail, sizeof(probes[i].detail), "scripted");
	}
	return 0;
}
int transport_exec(struct transport *t, const struct transport_node *node, enum target_type type,
                   int vmid, const char *command, const struct transport_limits *lim,
                   struct transport_result *out)
{
	(void)t, (void)node, (void)type, (void)vmid, (void)command, (void)lim;
	F.sent++;
	memset(out, 0, sizeof(*out));
	out->status = F.tstatus;
	out->error = F.terror;
	snprintf(out->errmsg, sizeof(out->errmsg), "%s", F.tmsg ? F.tmsg : "");
	if (F.tstatus != TRANSPORT_EXITED) {
		out->exit_code = -1;
		out->out = xstrdup("");
		out->err = xstrdup("");
		return -1;
	}
	out->out = xstrdup(F.tout ? F.tout : "ok\n");
	out->out_len = strlen(out->out);
	out->err = xstrdup("");
	return 0;
}
int transport_shell_refused(struct transport *t, const struct transport_node *node,
                            enum target_type type, int vmid, char *why, size_t whylen)
{
	(void)t, (void)node, (void)type, (void)vmid;
	if (F.no_bash == NULL)
		return 0;
	snprintf(why, whylen, "%s", F.no_bash);
	return -1;
}
bool transport_pooled_up(struct transport *t, const struct transport_node *node)
{
	(void)t, (void)node;
	F.pooled_asked++;
	return !F.not_pooled;
}
int transport_reachable(struct transport *t, const struct transport_node *node, int timeout_ms,
                        enum transport_error *err, char *msg, size_t msglen)
{
	(void)t, (void)node, (void)timeout_ms;
	F.probes++; /* the live check of a row with no guard step */
	if (F.probe_state == TRANSPORT_PROBE_UNREACHABLE) {
		*err = TRANSPORT_ERR_CONNECT;
		snprintf(msg, msglen, "%s", "scripted: connection refused");
		return -1;
	}
	*err = TRANSPORT_ERR_NONE;
	snprintf(msg, msglen, "%s", "");
	return 0;
}
void transport_result_free(struct transport_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}
const char *transport_probe_state_name(enum transport_probe_state s)
{
	return (void)s, "ok";
}
const char *transport_error_name(enum transport_error e)
{
	return (void)e, "none";
}

/* ------------------------------------------------------- fake metrics */

/* The guard's timings go to the metrics; the real endpoint is not wanted
 * here (it brings the transport's pool and the notifier with it). */
static int guard_timed;
void metrics_guard(struct metrics *m, int64_t ms, bool refused)
{
	(void)m, (void)ms, (void)refused;
	guard_timed++;
}

/* --------------------------------------------------------------- fixture */

struct fixture {
	struct config cfg;
	struct pipeline_env env;
	struct policyset *ps;
	struct guard *guard;
	struct targets *targets;
	struct slots *slots;
	struct durability *dur;
	atomic_bool stopping, cancel;
	struct verdict v;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	char err[512];

	memset(&F, 0, sizeof(F));
	F.connected = true;
	F.probe_state = TRANSPORT_PROBE_OK;
	F.answer[C_CLASSIFIED] = "queued";
	F.answer[C_REVALIDATE] = "approved";
	F.answer[C_FINISH] = "t";
	F.answer[C_NOT_SENT] = "queued";
	F.answer[C_SETTLE] = "released";
	F.answer[C_TARGET_LOCK] = "t";
	F.answer[C_ROW_LOCK] = "t";
	F.policy = readfile("seeds/policy.yaml", 1 << 24, NULL, err, sizeof(err));
	assert_non_null(F.policy);
	f->cfg.worker_id = "w-test";
	f->cfg.command_timeout_s = 60;
	f->cfg.qm_timeout_s = 30;
	f->cfg.output_cap = 1 << 20;
	f->cfg.per_node = 4;
	f->cfg.workers = 4;
	f->ps = policyset_new();
	assert_int_equal(policyset_reload(f->ps, &the_db, err, sizeof(err)), 0);
	f->guard = guard_new(&f->cfg, err, sizeof(err));
	assert_non_null(f->guard);
	f->targets = targets_new(&f->cfg, err, sizeof(err));
	assert_non_null(f->targets);
	f->slots = slots_new(4);
	f->dur = durability_new(&f->cfg);
	assert_int_equal(durability_refresh(f->dur, &the_db), 0);
	atomic_init(&f->stopping, false);
	atomic_init(&f->cancel, false);
	f->env = (struct pipeline_env){
	    .worker_id = f->cfg.worker_id,
	    .cfg = &f->cfg,
	    .policies = f->ps,
	    .guard = f->guard,
	    .targets = f->targets,
	    .notifier = NULL,
	    .node_slots = f->slots,
	    .durability = f->dur,
	    .stopping = &f->stopping,
	    .cancel = &f->cancel,
	};
	f->v = (struct verdict)VERDICT_INIT;
	memset(F.calls, 0, sizeof(F.calls)); /* count the row's calls only */
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	verdict_free(&f->v);
	durability_free(f->dur);
	slots_free(f->slots);
	targets_free(f->targets);
	guard_free(f->guard);
	policyset_free(f->ps);
	free(F.policy);
	free(F.confinement);
	free(F.finish_hold);
	free(F.finish_out);
	free(f);
	return 0;
}

/* A row as worker_claim hands it over; state "received" (an observation
 * to classify) or "approved" (a change an operator approved). */
static void item(struct queue_item *it, const char *state, const char *command, const char *cls)
{
	memset(it, 0, sizeof(*it));
	it->id = 42;
	snprintf(it->state, sizeof(it->state), "%s", state);
	it->target = xstrdup("proxmox-host:hubris");
	it->target_type = xstrdup("proxmox-host");
	it->command = xstrdup(command);
	it->requested_by = xstrdup("hermes");
	it->cls = cls ? xstrdup(cls) : NULL;
	it->node = xstrdup("proxmox-host:hubris");
	it->address = xstrdup("127.0.0.1");
	it->port = 22;
	it->rewind_possible = 0; /* approved knowing there is no rewind point */
}

static void script(enum call c, int k, const char *sqlstate, bool lose)
{
	F.script[c][k] = (struct fault){sqlstate, lose};
	if (F.nscript[c] < k + 1)
		F.nscript[c] = k + 1;
}

static void run_observation(struct fixture *f)
{
	struct queue_item it;

	item(&it, "received", "uptime", NULL);
	pipeline_process(&f->env, &the_db, &f->v, &it);
	queue_item_clear(&it);
}

static void run_change(struct fixture *f)
{
	struct queue_item it;

	item(&it, "approved", "apt-get install -y nfs-kernel-server", "config_mutation");
	pipeline_process(&f->env, &the_db, &f->v, &it);
	queue_item_clear(&it);
}

/* ------------------------------------------------------------------ tests */

static void test_clean_run(void **state)
{
	struct fixture *f = *state;

	run_observation(f);
	assert_int_equal(F.calls[C_CLASSIFIED], 1);
	assert_int_equal(F.calls[C_START], 1);
	assert_int_equal(F.sent, 1);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_int_equal(F.resets, 0);
}

/* The connection dies as the result is written: a new session, the row's
 * lock taken again, the same result written once it lands; sent once. */
static void test_finish_connection_lost(void **state)
{
	struct fixture *f = *state;

	script(C_FINISH, 0, SQLSTATE_CONNECTION_FAILURE, true);
	run_change(f);
	assert_int_equal(F.sent, 1);
	assert_int_equal(F.calls[C_FINISH], 2); /* the fault happened, then it landed */
	assert_int_equal(F.resets, 1);
	assert_int_equal(F.calls[C_ROW_LOCK], 1);      /* the rehold after the reset */
	assert_int_equal(F.calls[C_TARGET_UNLOCK], 1); /* the target is let go once */
}

/* A statement timeout: the session is fine, the write is retried on it. */
static void test_finish_statement_timeout(void **state)
{
	struct fixture *f = *state;

	script(C_FINISH, 0, SQLSTATE_QUERY_CANCELED, false);
	script(C_FINISH, 1, SQLSTATE_QUERY_CANCELED, false);
	run_change(f);
	assert_int_equal(F.calls[C_FINISH], 3);
	assert_int_equal(F.resets, 0);
	assert_int_equal(F.sent, 1);
}

/* A serialization failure is retried like any failure to write. */
static void test_finish_serialization_failure(void **state)
{
	struct fixture *f = *state;

	script(C_FINISH, 0, SQLSTATE_SERIALIZATION_FAILURE, false);
	run_observation(f);
	assert_int_equal(F.calls[C_FINISH], 2);
	assert_int_equal(F.resets, 0);
	assert_int_equal(F.sent, 1);
}

/* A read-only database (a demoted primary) needs a new session. */
static void test_finish_read_only(void **state)
{
	struct fixture *f = *state;

	script(C_FINISH, 0, SQLSTATE_READ_ONLY_TRANSACTION, false);
	run_change(f);
	assert_int_equal(F.calls[C_FINISH], 2);
	assert_int_equal(F.resets, 1);
	assert_int_equal(F.sent, 1);
}

/* recorded=false: the row was settled elsewhere (a reaper); the result is
 * kept as an event by worker_finish and is not written again. */
static void test_finish_not_recorded(void **state)
{
	struct fixture *f = *state;

	F.answer[C_FINISH] = "f";
	run_change(f);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_int_equal(F.sent, 1);
}

/* The daemon's grace is over while the write keeps failing: the result is
 * given up (logged), never re-sent. */
static void test_finish_given_up_at_cancel(void **state)
{
	struct fixture *f = *state;

	atomic_store(&f->cancel, true);
	script(C_FINISH, 0, SQLSTATE_CONNECTION_FAILURE, true);
	run_observation(f);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_int_equal(F.sent, 1);
}

/* The connection dies as the row is marked running: nothing is sent and
 * the row is not refused; on a new session it is given back (from running,
 * if the start landed after all), not left for a reaper. */
static void test_start_connection_lost(void **state)
{
	struct fixture *f = *state;

	script(C_START, 0, SQLSTATE_CONNECTION_FAILURE, true);
	run_change(f);
	assert_int_equal(F.calls[C_START], 1);
	assert_int_equal(F.sent, 0);
	assert_int_equal(F.calls[C_FINISH], 0);
	assert_int_equal(F.calls[C_REFUSE], 0);
	assert_int_equal(F.resets, 1);
	assert_int_equal(F.calls[C_SETTLE], 1);
}

/* The row was cancelled while it was checked: start says AL005; nothing is
 * sent and the row's lock is let go. */
static void test_start_no_longer_ours(void **state)
{
	struct fixture *f = *state;

	script(C_START, 0, SQLSTATE_ILLEGAL_TRANSITION, false);
	run_change(f);
	assert_int_equal(F.sent, 0);
	assert_int_equal(F.calls[C_ROW_UNLOCK], 1);
	assert_int_equal(F.calls[C_REFUSE], 0);
}

/* A passing database error at start (a statement timeout, a lock, a
 * serialization failure, a full disk) says nothing about the request: it
 * is never refused; nothing was sent, the row is given back and retried. */
static void test_start_transient_never_refuses(void **state)
{
	struct fixture *f = *state;
	static const char *const transient[] = {SQLSTATE_QUERY_CANCELED, "55P03",
	                                        SQLSTATE_SERIALIZATION_FAILURE, "53100", "57P01"};

	for (size_t i = 0; i < sizeof(transient) / sizeof(transient[0]); i++) {
		memset(F.calls, 0, sizeof(F.calls));
		memset(F.nscript, 0, sizeof(F.nscript));
		script(C_START, 0, transient[i], false);
		run_change(f);
		assert_int_equal(F.calls[C_START], 1);
		assert_int_equal(F.calls[C_REFUSE], 0);
		assert_int_equal(F.calls[C_SETTLE], 1);
	}
	assert_int_equal(F.sent, 0);
}

/* A refusal by the database's own rules at start (the approvals no longer
 * match the payload) is a refusal, as before. */
static void test_start_rule_refuses(void **state)
{
	struct fixture *f = *state;

	script(C_START, 0, SQLSTATE_APPROVAL_IMPOSSIBLE, false);
	run_change(f);
	assert_int_equal(F.sent, 0);
	assert_int_equal(F.calls[C_REFUSE], 1);
	assert_int_equal(F.calls[C_SETTLE], 0);
}

/* A row whose re-validation or release cannot be written (a table lock past
 * the statement timeout) is given back, and the give-back is retried until
 * it lands: the row never stays claimed by a worker that moved on. */
static void test_revalidate_and_release_retried(void **state)
{
	struct fixture *f = *state;

	script(C_REVALIDATE, 0, SQLSTATE_QUERY_CANCELED, false);
	script(C_SETTLE, 0, SQLSTATE_QUERY_CANCELED, false);
	script(C_SETTLE, 1, SQLSTATE_CONNECTION_FAILURE, true);
	run_change(f);
	assert_int_equal(F.calls[C_REVALIDATE], 1);
	assert_int_equal(F.calls[C_SETTLE], 3); /* two faults, then it landed */
	assert_int_equal(F.resets, 1);
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.sent, 0);
}

/* A node whose slots are all taken: the row is given back at once, not
 * waited with (the claim then skips that node until a slot frees). */
static void test_full_node_gives_back(void **state)
{
	struct fixture *f = *state;
	char **full = NULL;

	for (int i = 0; i < 4; i++)
		assert_true(slots_try_take(f->slots, "proxmox-host:hubris"));
	assert_int_equal(slots_full(f->slots, &full), 1);
	assert_string_equal(full[0], "proxmox-host:hubris");
	free(full[0]);
	free(full);
	run_change(f);
	assert_int_equal(F.calls[C_SETTLE], 1);
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.sent, 0);
	slots_give(f->slots, "proxmox-host:hubris");
	assert_int_equal(slots_full(f->slots, &full), 0);
	run_change(f);
	assert_int_equal(F.sent, 1);
}

/* Classification cannot be written (the connection is lost): nothing runs,
 * and the row is given back on a new session. */
static void test_classify_connection_lost(void **state)
{
	struct fixture *f = *state;

	script(C_CLASSIFIED, 0, SQLSTATE_CONNECTION_FAILURE, true);
	run_observation(f);
	assert_int_equal(F.calls[C_CLASSIFIED], 1);
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.sent, 0);
	assert_int_equal(F.calls[C_SETTLE], 1);
	assert_int_equal(F.resets, 1);
}

/* An observation on container 201, which the check in front of pct exec
 * may find stopped. */
static void run_ct_observation(struct fixture *f)
{
	struct queue_item it;

	item(&it, "received", "uptime", NULL);
	free(it.target);
	free(it.target_type);
	it.target = xstrdup("lxc:nfs-export");
	it.target_type = xstrdup("lxc");
	it.vmid = 201;
	pipeline_process(&f->env, &the_db, &f->v, &it);
	queue_item_clear(&it);
}

/* The node could not be reached before the exec request went out: the row
 * goes back for a retry (worker_not_sent with a delay), never failed. */
static void test_not_sent_unreachable(void **state)
{
	struct fixture *f = *state;
	static const enum transport_error errs[] = {TRANSPORT_ERR_CONNECT, TRANSPORT_ERR_HOSTKEY,
	                                            TRANSPORT_ERR_AUTH, TRANSPORT_ERR_SSH};

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		memset(F.calls, 0, sizeof(F.calls));
		F.not_sent_retry = false;
		F.tstatus = TRANSPORT_FAILED;
		F.terror = errs[i];
		F.tmsg = "cannot connect to 127.0.0.1 port 22: Connection refused";
		run_observation(f);
		assert_int_equal(F.calls[C_START], 1);
		assert_int_equal(F.calls[C_NOT_SENT], 1);
		assert_true(F.not_sent_retry);
		assert_int_equal(F.calls[C_FINISH], 0);
	}
	assert_int_equal(F.sent, 4); /* one per row: nothing is re-sent in the worker */
}

/* The check on the command's channel refused (the container is stopped):
 * the row is refused at once (no retry), never failed. */
static void test_not_sent_refused(void **state)
{
	struct fixture *f = *state;

	F.tstatus = TRANSPORT_FAILED;
	F.terror = TRANSPORT_ERR_PVE;
	F.tmsg = "container '201' not running (status: stopped); pct exec was not started";
	F.answer[C_NOT_SENT] = "refused";
	run_ct_observation(f);
	assert_int_equal(F.calls[C_NOT_SENT], 1);
	assert_false(F.not_sent_retry);
	assert_int_equal(F.calls[C_FINISH], 0);
	assert_int_equal(F.sent, 1);
}

/* A target whose shell probe found no bash: the row is refused at its live
 * check, with the reason, before it is marked running; nothing is sent. */
static void test_no_bash_refused_at_check(void **state)
{
	struct fixture *f = *state;

	F.no_bash = "container 201 on node pverig has no bash: no /bin/bash; /bin/sh is "
	            "/bin/busybox. ... Install bash there";
	run_ct_observation(f);
	assert_int_equal(F.calls[C_REFUSE], 1);
	assert_non_null(strstr(F.reason, "run on lxc:nfs-export refused: container 201"));
	assert_non_null(strstr(F.reason, "Install bash there"));
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.sent, 0);
	/* an approved change too, before any guard step */
	memset(F.calls, 0, sizeof(F.calls));
	run_change(f);
	assert_int_equal(F.calls[C_REFUSE], 1);
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.sent, 0);
}

/* The transport refused at run time (a probe found no bash meanwhile):
 * nothing was sent, so the row is refused (never failed, never retried). */
static void test_no_bash_refused_at_run(void **state)
{
	struct fixture *f = *state;

	F.tstatus = TRANSPORT_FAILED;
	F.terror = TRANSPORT_ERR_SHELL;
	F.tmsg = "container 201 on node pverig has no bash: no /bin/bash";
	F.answer[C_NOT_SENT] = "refused";
	run_ct_observation(f);
	assert_int_equal(F.calls[C_NOT_SENT], 1);
	assert_false(F.not_sent_retry);
	assert_non_null(strstr(F.reason, "run on lxc:nfs-export refused: container 201"));
	assert_int_equal(F.calls[C_FINISH], 0);
}

/* A command that MAY have been sent is never handed back for a retry:
 * the session lost after the exec request, or qm failing after it may
 * have started the command, end as outcome_unknown. */
static void test_maybe_sent_never_retried(void **state)
{
	struct fixture *f = *state;
	static const enum transport_error errs[] = {TRANSPORT_ERR_LOST, TRANSPORT_ERR_SSH,
	                                            TRANSPORT_ERR_PVE, TRANSPORT_ERR_CONNECT};

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		memset(F.calls, 0, sizeof(F.calls));
		F.tstatus = TRANSPORT_UNKNOWN;
		F.terror = errs[i];
		F.tmsg = "connection to the node was lost after the command was sent";
		run_observation(f);
		assert_int_equal(F.calls[C_NOT_SENT], 0);
		assert_int_equal(F.calls[C_FINISH], 1);
		assert_string_equal(F.finish_state, "outcome_unknown");
	}
}

/* A failure of the target that is not the check's (a parameter error) is
 * recorded as failed, as before: nothing ran, and it is not retried. */
static void test_other_failure_recorded(void **state)
{
	struct fixture *f = *state;

	F.tstatus = TRANSPORT_FAILED;
	F.terror = TRANSPORT_ERR_PVE;
	F.tmsg = "400 Parameter verification failed.";
	run_ct_observation(f);
	assert_int_equal(F.calls[C_NOT_SENT], 0);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_string_equal(F.finish_state, "failed");
}

/* worker_not_sent through a lost connection: a new session, the row held
 * again, sent once more; refused by the database (no longer ours): the
 * result is recorded as it is, so the row does not stay running. */
static void test_not_sent_db_faults(void **state)
{
	struct fixture *f = *state;

	F.tstatus = TRANSPORT_FAILED;
	F.terror = TRANSPORT_ERR_CONNECT;
	F.tmsg = "cannot connect";
	script(C_NOT_SENT, 0, SQLSTATE_CONNECTION_FAILURE, true);
	run_observation(f);
	assert_int_equal(F.calls[C_NOT_SENT], 2); /* the fault happened, then it landed */
	assert_int_equal(F.resets, 1);
	assert_int_equal(F.calls[C_FINISH], 0);

	memset(F.calls, 0, sizeof(F.calls));
	memset(F.nscript, 0, sizeof(F.nscript));
	script(C_NOT_SENT, 0, SQLSTATE_ILLEGAL_TRANSITION, false);
	run_observation(f);
	assert_int_equal(F.calls[C_NOT_SENT], 1);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_string_equal(F.finish_state, "failed");
	assert_int_equal(F.sent, 2);
}

/* The jail could not be built on the target: nothing ran, the row goes
 * back to a human (worker_unconfinable), never recorded as failed.  When
 * the connection is lost as that is written, the step is sent again on a
 * new session that first takes the row's liveness lock again, as the
 * result's and the not-sent paths do: else a reaper could settle the row
 * as outcome_unknown in between, although nothing ran. */
static void test_unconfinable_connection_lost(void **state)
{
	struct fixture *f = *state;

	F.tstatus = TRANSPORT_FAILED;
	F.terror = TRANSPORT_ERR_JAIL;
	F.tmsg = "the read-only jail could not be built: unshare: Operation not permitted";
	run_observation(f);
	assert_int_equal(F.sent, 1);
	assert_int_equal(F.calls[C_UNCONFINABLE], 1);
	assert_int_equal(F.calls[C_FINISH], 0);
	assert_int_equal(F.calls[C_NOT_SENT], 0);
	assert_int_equal(F.resets, 0);

	memset(F.calls, 0, sizeof(F.calls));
	script(C_UNCONFINABLE, 0, SQLSTATE_CONNECTION_FAILURE, true);
	run_observation(f);
	assert_int_equal(F.calls[C_UNCONFINABLE], 2); /* the fault happened, then it landed */
	assert_int_equal(F.resets, 1);
	assert_int_equal(F.calls[C_ROW_LOCK], 1); /* the rehold after the reset */
	assert_int_equal(F.calls[C_FINISH], 0);
	assert_int_equal(F.sent, 2); /* one per row: nothing is re-sent in the worker */
}

/* Lost mid-claim: an error, not an empty queue, so the daemon reconnects
 * instead of going idle; no row is handed out. */
static void test_claim_connection_lost(void **state)
{
	struct queue_item it;

	(void)state;
	script(C_CLAIM, 0, SQLSTATE_CONNECTION_FAILURE, true);
	memset(&it, 0, sizeof(it));
	assert_int_equal(queue_claim(&the_db, "w-test", 0, NULL, 0, &it), -1);
	assert_int_equal(it.id, 0);
	assert_false(store_connected(&the_db));
}

/* ------------------------------------------------- the one-call claim */

/* A wake-up's payload for row 42: an observation on the host, or `command`. */
static int wake(struct fixture *f, const char *command)
{
	char payload[1024];

	snprintf(payload, sizeof(payload),
	         "42 {\"id\": 42, \"vmid\": 0, \"node\": \"proxmox-host:hubris\", \"port\": 22, "
	         "\"target\": \"proxmox-host:hubris\", \"address\": \"127.0.0.1\", "
	         "\"command\": \"%s\", \"ssh_user\": null, \"target_type\": \"proxmox-host\", "
	         "\"declared_risk\": null, \"host_key_fingerprint\": null, "
	         "\"zerto_vm_identifier\": null}",
	         command);
	return pipeline_wake(&f->env, &the_db, &f->v, payload);
}

/* An observation nobody approved whose output carries a private key: the
 * result is recorded with a hold naming it; the bytes go with it (to the
 * operators' table), never into a log line. */
static void test_observation_output_held(void **state)
{
	struct fixture *f = *state;

	F.tout = "hello\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n";
	run_observation(f);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_non_null(strstr(F.finish_hold, "\"kind\":\"openssh_private_key\""));
	assert_non_null(strstr(F.finish_hold, "\"stream\":\"stdout\",\"line\":2"));
	assert_non_null(strstr(F.finish_hold, "\"error_held\":false"));
	assert_string_equal(F.finish_out, F.tout);
}

/* The same output of a change an operator approved is recorded as it is. */
static void test_approved_output_not_held(void **state)
{
	struct fixture *f = *state;

	F.tout = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n";
	run_change(f);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_string_equal(F.finish_hold, "-");
}

/* Harmless output: no hold. */
static void test_harmless_output_not_held(void **state)
{
	struct fixture *f = *state;

	run_observation(f);
	assert_string_equal(F.finish_hold, "-");
}

/* A failure whose error quotes the target's words: the error is held too. */
static void test_error_held(void **state)
{
	struct fixture *f = *state;

	F.tstatus = TRANSPORT_FAILED;
	F.terror = TRANSPORT_ERR_PVE;
	F.tmsg = "400 bad: aws_secret_access_key=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY1";
	run_observation(f);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_non_null(strstr(F.finish_hold, "\"stream\":\"error\""));
	assert_non_null(strstr(F.finish_hold, "\"error_held\":true"));
}

/* Checked, then claimed, classified and started in one call, confined: no
 * separate classification or start, the command sent once, the result
 * written once. */
static void test_wake_one_call(void **state)
{
	struct fixture *f = *state;

	F.answer[C_CLAIM_CLASSIFIED] = "running";
	assert_int_equal(wake(f, "uptime"), 1);
	assert_int_equal(F.probes, 1);
	assert_string_equal(F.confinement, "user");
	assert_int_equal(F.calls[C_CLAIM_CLASSIFIED], 1);
	assert_int_equal(F.calls[C_CLASSIFIED], 0);
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.sent, 1);
	assert_int_equal(F.calls[C_FINISH], 1);
	assert_string_equal(F.finish_hold, "-");
}

/* The one call's observation is scanned like any other. */
static void test_wake_output_held(void **state)
{
	struct fixture *f = *state;

	F.answer[C_CLAIM_CLASSIFIED] = "running";
	F.tout = "root:$y$j9T$abcdefghijklmnop$3dL1LkYnZM.OVXuVdnnaKVDlLYT92dRwOzDZ5XiVCe.:19700:::"
	         ":::\n";
	assert_int_equal(wake(f, "uptime"), 1);
	assert_non_null(strstr(F.finish_hold, "\"kind\":\"password_hash\""));
}

/* A row started by the one call keeps the result's retries: the connection
 * dies as the result is written, a new session takes the row's lock again,
 * the result lands once, the command was sent once. */
static void test_wake_finish_connection_lost(void **state)
{
	struct fixture *f = *state;

	F.answer[C_CLAIM_CLASSIFIED] = "running";
	script(C_FINISH, 0, SQLSTATE_CONNECTION_FAILURE, true);
	assert_int_equal(wake(f, "uptime"), 1);
	assert_int_equal(F.sent, 1);
	assert_int_equal(F.calls[C_FINISH], 2);
	assert_int_equal(F.resets, 1);
	assert_int_equal(F.calls[C_ROW_LOCK], 1);
}

/* The connection dies during the one call: nothing is sent; on a new
 * session the row is given back if the call committed after all (from
 * running, as nothing was sent), and the usual claim takes over. */
static void test_wake_connection_lost(void **state)
{
	struct fixture *f = *state;

	F.answer[C_CLAIM_CLASSIFIED] = "running";
	script(C_CLAIM_CLASSIFIED, 0, SQLSTATE_CONNECTION_FAILURE, true);
	assert_int_equal(wake(f, "uptime"), 0);
	assert_int_equal(F.sent, 0);
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.calls[C_FINISH], 0);
	assert_int_equal(F.calls[C_REFUSE], 0);
	assert_int_equal(F.calls[C_SETTLE], 1);
}

/* The database refuses the call (a rule such as the jail's, AL008, or a
 * statement timeout): nothing is sent, the usual claim takes over. */
static void test_wake_refused(void **state)
{
	struct fixture *f = *state;

	F.answer[C_CLAIM_CLASSIFIED] = "running";
	script(C_CLAIM_CLASSIFIED, 0, SQLSTATE_APPROVAL_IMPOSSIBLE, false);
	assert_int_equal(wake(f, "uptime"), 0);
	script(C_CLAIM_CLASSIFIED, 1, SQLSTATE_QUERY_CANCELED, false);
	assert_int_equal(wake(f, "uptime"), 0);
	assert_int_equal(F.calls[C_CLAIM_CLASSIFIED], 2);
	assert_int_equal(F.sent, 0);
	assert_int_equal(F.calls[C_FINISH], 0);
	assert_true(store_connected(&the_db));
}

/* The row is gone or no longer as the wake-up described it: no row comes
 * back, nothing is sent. */
static void test_wake_not_as_seen(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(wake(f, "uptime"), 0);
	assert_int_equal(F.calls[C_CLAIM_CLASSIFIED], 1);
	assert_int_equal(F.sent, 0);
}

/* Claimed and queued but not started by the call: the usual start follows,
 * without checking the target a second time. */
static void test_wake_queued_then_started(void **state)
{
	struct fixture *f = *state;

	F.answer[C_CLAIM_CLASSIFIED] = "queued";
	assert_int_equal(wake(f, "uptime"), 1);
	assert_int_equal(F.probes, 1);
	assert_int_equal(F.calls[C_START], 1);
	assert_int_equal(F.sent, 1);
	assert_int_equal(F.calls[C_FINISH], 1);
}

/* The target does not answer: the call does not start the row, which is
 * then released for a retry with what the check found; nothing is sent. */
static void test_wake_target_down(void **state)
{
	struct fixture *f = *state;

	F.probe_state = TRANSPORT_PROBE_UNREACHABLE;
	F.answer[C_CLAIM_CLASSIFIED] = "queued";
	assert_int_equal(wake(f, "uptime"), 1);
	assert_string_equal(F.confinement, "-");
	assert_int_equal(F.probes, 1);
	assert_int_equal(F.calls[C_UNREACHABLE], 1);
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.sent, 0);
}

/* The node the wake-up names has no live pooled session (a daemon just
 * started, or a document that names a node nobody connected to): nothing
 * is checked or started before the claim, which leaves the row queued; the
 * usual start then checks the claimed row's own facts and sends it. */
static void test_wake_unpooled_node_not_checked_first(void **state)
{
	struct fixture *f = *state;

	F.not_pooled = true;
	F.answer[C_CLAIM_CLASSIFIED] = "queued";
	assert_int_equal(wake(f, "uptime"), 1);
	assert_int_equal(F.pooled_asked, 1);
	assert_string_equal(F.confinement, "-");
	assert_int_equal(F.probes, 1); /* the usual start's, after the claim */
	assert_int_equal(F.calls[C_START], 1);
	assert_int_equal(F.sent, 1);
	assert_int_equal(F.calls[C_FINISH], 1);
}

/* A change is never started by the call, nor its target checked first. */
static void test_wake_change_not_started(void **state)
{
	struct fixture *f = *state;

	F.answer[C_CLAIM_CLASSIFIED] = "pending_approval";
	wake(f, "systemctl restart pveproxy");
	assert_int_equal(F.calls[C_CLAIM_CLASSIFIED], 1);
	assert_string_equal(F.confinement, "-");
	assert_int_equal(F.calls[C_START], 0);
	assert_int_equal(F.calls[C_FINISH], 0);
}

/* A payload that is a bare id, or not a document, asks nothing. */
static void test_wake_no_document(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
	    "42", "42 {", "42 []", "42 {\"id\": 43}", "x 42", "", "42 {\"id\": 42, \"target\": 7}"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pipeline_wake(&f->env, &the_db, &f->v, bad[i]), 0);
	for (int c = 0; c < NCALLS; c++)
		assert_int_equal(F.calls[c], 0);
	assert_int_equal(F.sent, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_clean_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_connection_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_statement_timeout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_serialization_failure, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_read_only, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_not_recorded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_given_up_at_cancel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_start_connection_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_start_no_longer_ours, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_start_transient_never_refuses, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_start_rule_refuses, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_revalidate_and_release_retried, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_full_node_gives_back, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_classify_connection_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_claim_connection_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_sent_unreachable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_sent_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_bash_refused_at_check, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_bash_refused_at_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_maybe_sent_never_retried, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_other_failure_recorded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_sent_db_faults, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unconfinable_connection_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_one_call, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_output_held, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_observation_output_held, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_approved_output_not_held, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_harmless_output_not_held, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_error_held, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_finish_connection_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_connection_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_not_as_seen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_queued_then_started, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_target_down, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_unpooled_node_not_checked_first, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_wake_change_not_started, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wake_no_document, setup, teardown),
	};

	log_set_level(LOG_FATAL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
