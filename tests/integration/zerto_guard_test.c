/* zerto_guard_test.c -- the Zerto guard against the ZVM simulator: every
 * outcome of steps 1-6, the token race, a VM in three VPGs, sync, the 630 s
 * cadence, an unreachable ZVM.  Run by tests/suites/60-zerto.sh under
 * tests/zvmsim/zvmsimctl run. */
#include "lib/deadline.h"
#include "zerto/api.h"
#include "zerto/guard.h"
#include "zerto/policy.h"

#include "tests/integration/zerto_sim.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define SCALE      20.0 /* ZVM seconds per real second in these tests */
#define NVPG_LOCKS 16
#define NTHREADS   32

/* The daemon's side, as a test double: a lock per VPG shared by the threads
 * of this process (the daemon uses a PostgreSQL advisory lock) and an event
 * list. */
struct hooks_ctx {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char held[NVPG_LOCKS][64];
	int locks, unlocks, lock_failures;
	bool refuse_locks;
	char events[64][32];
	int nevents;
};

static int h_lock(void *ctx, const char *vpg, long timeout_ms)
{
	struct hooks_ctx *h = ctx;
	struct timespec until;
	int rc = -1;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&h->mu);
	if (h->refuse_locks)
		goto out;
	for (;;) {
		int slot = -1;
		bool busy = false;

		for (int i = 0; i < NVPG_LOCKS; i++) {
			if (strcmp(h->held[i], vpg) == 0)
				busy = true;
			else if (h->held[i][0] == '\0' && slot < 0)
				slot = i;
		}
		if (!busy && slot >= 0) {
			snprintf(h->held[slot], sizeof(h->held[slot]), "%s", vpg);
			h->locks++;
			rc = 0;
			break;
		}
		if (pthread_cond_timedwait(&h->cv, &h->mu, &until) != 0)
			break;
	}
out:
	if (rc < 0)
		h->lock_failures++;
	pthread_mutex_unlock(&h->mu);
	return rc;
}

static void h_unlock(void *ctx, const char *vpg)
{
	struct hooks_ctx *h = ctx;

	pthread_mutex_lock(&h->mu);
	for (int i = 0; i < NVPG_LOCKS; i++)
		if (strcmp(h->held[i], vpg) == 0)
			h->held[i][0] = '\0';
	h->unlocks++;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

static void h_event(void *ctx, const char *name, const cJSON *detail)
{
	struct hooks_ctx *h = ctx;

	assert_non_null(detail);
	pthread_mutex_lock(&h->mu);
	if (h->nevents < 64)
		snprintf(h->events[h->nevents++], sizeof(h->events[0]), "%s", name);
	pthread_mutex_unlock(&h->mu);
}

static bool saw_event(struct hooks_ctx *h, const char *name)
{
	for (int i = 0; i < h->nevents; i++)
		if (strcmp(h->events[i], name) == 0)
			return true;
	return false;
}

struct fixture {
	struct zerto_client *c;
	struct hooks_ctx h;
	struct zerto_guard_hooks hooks;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct zerto_config cfg = sim_config(SCALE);
	char err[256];

	sim_reset(SCALE);
	f->c = zerto_client_new(&cfg, err, sizeof(err));
	if (f->c == NULL) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	pthread_mutex_init(&f->h.mu, NULL);
	pthread_cond_init(&f->h.cv, NULL);
	f->hooks = (struct zerto_guard_hooks){&f->h, h_lock, h_unlock, h_event};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	zerto_client_free(f->c);
	pthread_mutex_destroy(&f->h.mu);
	pthread_cond_destroy(&f->h.cv);
	free(f);
	return 0;
}

static enum zerto_outcome guard(struct fixture *f, const char *vm_id, const char *vm,
                                struct zerto_guard_result *r)
{
	struct zerto_guard_request req = {
	    .vm_id = vm_id,
	    .vm_name = vm,
	    .agent = "hermes",
	    .action = "apt-get install nfs-kernel-server",
	    .change_id = "chg-412",
	    .now = 1790003045, /* 2026-09-21T15:04:05Z */
	    .log_id = "exec=1",
	};

	return zerto_guard_run(f->c, &req, &f->hooks, r);
}

static void test_ok_one_vpg(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
	assert_string_equal(r.tag, "ai:hermes | apt-get install nfs-kernel-server | vm=zimaos | "
	                           "change=chg-412 | 20260921T150405Z");
	assert_int_equal(r.npoints, 1);
	assert_string_equal(r.points[0].vpg_name, "zimaos-local");
	assert_int_equal(r.points[0].task_state, ZERTO_TASK_COMPLETED);
	assert_non_null(r.points[0].checkpoint_id);
	assert_non_null(r.points[0].checkpoint_time);
	assert_true(r.points[0].cadence_s > 4.5 && r.points[0].cadence_s < 5.5);
	assert_true(r.points[0].budget_s == ZERTO_BUDGET_MIN_S);
	assert_true(r.points[0].listed_ms >= r.points[0].task_ms);
	assert_int_equal(f->h.locks, 1);
	assert_int_equal(f->h.unlocks, 1);
	const char *steps[] = {"guard.find", "guard.cadence", "guard.insert",
	                       "guard.task", "guard.tagged",  "guard.ok"};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		assert_true(saw_event(&f->h, steps[i]));
	/* The checkpoint the simulator made is the one the guard reports. */
	cJSON *tags = sim_call("GET", "/_sim/tags", NULL);
	assert_int_equal(cJSON_GetArraySize(tags), 1);
	const cJSON *t0 = cJSON_GetArrayItem(tags, 0);
	assert_string_equal(cJSON_GetObjectItem(t0, "checkpoint")->valuestring,
	                    r.points[0].checkpoint_id);
	assert_string_equal(cJSON_GetObjectItem(t0, "tag")->valuestring, r.tag);
	cJSON_Delete(tags);
	/* Budgets for the daemon: 3 x 45 ZVM s at 20x + 3 x (3 s + 15 s); worst
	 * case 2 x (3 x 300 ZVM s at 20x + 3 x 18 s) + 20 x 18 s. */
	assert_int_equal(zerto_guard_budget_ms(f->c, r.points[0].cadence_s), 6750 + 54000);
	assert_int_equal(zerto_guard_worst_case_ms(f->c), 2 * (45000 + 54000) + 360000);
	cJSON *j = zerto_guard_result_json(&r);
	assert_string_equal(cJSON_GetObjectItem(j, "outcome")->valuestring, "ok");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rewind_points")), 1);
	cJSON_Delete(j);
	zerto_guard_result_clear(&r);
}

/* web01 is in three VPGs (5 s, 60 s and 630 s cadences): one tag on all. */
static void test_three_vpgs_same_tag(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	assert_int_equal(guard(f, NULL, "web01", &r), ZERTO_GUARD_OK);
	assert_int_equal(r.npoints, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_non_null(r.points[i].checkpoint_id);
		assert_int_equal(r.points[i].task_state, ZERTO_TASK_COMPLETED);
	}
	cJSON *tags = sim_call("GET", "/_sim/tags", NULL);
	const cJSON *t;
	int n = 0;
	cJSON_ArrayForEach(t, tags)
	{
		assert_string_equal(cJSON_GetObjectItem(t, "tag")->valuestring, r.tag);
		n++;
	}
	assert_int_equal(n, 3);
	cJSON_Delete(tags);
	assert_int_equal(sim_count("POST", "/checkpoints", 200), 3);
	assert_int_equal(f->h.locks, 3);
	assert_int_equal(f->h.unlocks, 3);
	zerto_guard_result_clear(&r);
}

static void test_unprotected_is_none(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	assert_int_equal(guard(f, NULL, "db01", &r), ZERTO_GUARD_NONE);
	assert_int_equal(r.npoints, 0);
	assert_non_null(strstr(r.message, "does not protect db01"));
	assert_int_equal(sim_count("POST", "/checkpoints", 0), 0);
	zerto_guard_result_clear(&r);
}

static void test_ambiguous_then_by_id(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	assert_int_equal(guard(f, NULL, "dup", &r), ZERTO_GUARD_AMBIGUOUS);
	assert_non_null(strstr(r.message, "matches 2 different Zerto VMs"));
	assert_non_null(strstr(r.message, "did not run"));
	assert_int_equal(sim_count("POST", "/checkpoints", 0), 0);
	zerto_guard_result_clear(&r);

	/* The identifier settles it: the status query and then the guard. */
	struct zerto_protection p;
	assert_int_equal(zerto_protection(f->c, NULL, "dup", &p), 0);
	assert_int_equal(p.state, ZERTO_PROT_AMBIGUOUS);
	struct zerto_guard_result r2;
	assert_int_equal(guard(f, NULL, "dup", &r2), ZERTO_GUARD_AMBIGUOUS);
	char id[200];
	const char *ids = strchr(r2.message, '(');
	assert_non_null(ids);
	snprintf(id, sizeof(id), "%.*s", (int)strcspn(ids + 1, ","), ids + 1);
	zerto_guard_result_clear(&r2);
	assert_int_equal(guard(f, id, "dup", &r2), ZERTO_GUARD_OK);
	assert_string_equal(r2.vm_id, id);
	assert_int_equal(r2.npoints, 1);
	zerto_guard_result_clear(&r2);
}

static void test_syncing_vpg_refused(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	assert_int_equal(guard(f, NULL, "sync01", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "VPG 'sync01-vpg'"));
	assert_non_null(strstr(r.message, "Initializing/InitialSync"));
	assert_non_null(strstr(r.message, "did not run"));
	assert_int_equal(sim_count("POST", "/checkpoints", 0), 0);
	assert_true(saw_event(&f->h, "guard.not_taggable"));
	zerto_guard_result_clear(&r);

	/* One VPG of three entering a resync refuses the whole guard. */
	sim_postf("/_sim/fault", "{\"kind\":\"resync\",\"vpg\":\"web-azure\"}");
	assert_int_equal(guard(f, NULL, "web01", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "VPG 'web-azure'"));
	assert_non_null(strstr(r.message, "FullSync"));
	assert_int_equal(sim_count("POST", "/checkpoints", 0), 0);
	zerto_guard_result_clear(&r);
}

/* The VPG enters a sync as the insert arrives: the task fails. */
static void test_task_failed(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	sim_postf("/_sim/fault",
	          "{\"kind\":\"resync\",\"vpg\":\"zimaos-local\",\"on_insert\":true}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "ended Failed (4)"));
	assert_non_null(strstr(r.message, "was not created and the command did not run"));
	assert_non_null(strstr(r.message, r.points[0].task_id));
	assert_int_equal(r.points[0].task_state, ZERTO_TASK_FAILED);
	assert_null(r.points[0].checkpoint_id);
	assert_int_equal(f->h.unlocks, f->h.locks);
	zerto_guard_result_clear(&r);
}

static void test_task_stopped(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	sim_postf("/_sim/fault", "{\"kind\":\"insert_task_fails\",\"vpg\":\"zimaos-local\","
	                         "\"state\":5,\"count\":1}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "ended Stopped (5)"));
	zerto_guard_result_clear(&r);
}

static void test_task_stuck(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	sim_postf("/_sim/fault",
	          "{\"kind\":\"task_stuck_state\",\"vpg\":\"zimaos-local\",\"state\":3}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "still Paused (3) after 45 s"));
	assert_int_equal(r.points[0].task_state, ZERTO_TASK_PAUSED);
	zerto_guard_result_clear(&r);
}

static void test_insert_http_400(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	sim_postf("/_sim/fault", "{\"kind\":\"insert_http_400\",\"vpg\":\"CMH-AWS-1\"}");
	assert_int_equal(guard(f, NULL, "win2019-1", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "rejected the tagged checkpoint on VPG 'CMH-AWS-1'"));
	assert_non_null(strstr(r.message, "not supported"));
	assert_null(r.points[0].task_id);
	zerto_guard_result_clear(&r);
}

/* A completed task whose tag never shows: "the wait was short". */
static void test_tag_never_listed(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	sim_postf("/_sim/fault", "{\"kind\":\"tag_never_listed\",\"vpg\":\"zimaos-local\"}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "Completed, but the tagged checkpoint was not listed "
	                                  "within 45 s"));
	assert_non_null(strstr(r.message, "cadence is 5 s"));
	assert_non_null(strstr(r.message, "The wait was short"));
	assert_int_equal(r.points[0].task_state, ZERTO_TASK_COMPLETED);
	assert_null(r.points[0].checkpoint_id);
	zerto_guard_result_clear(&r);
}

/* CMH-AWS-1 checkpoints every 630 s and lists a tag after 128 s: a fixed
 * 45 s wait refused it; the derived budget (300 s) does not. */
static void test_slow_cadence_within_budget(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;
	int64_t ins, vis;

	assert_int_equal(guard(f, NULL, "win2019-1", &r), ZERTO_GUARD_OK);
	assert_true(r.points[0].cadence_s > 600 && r.points[0].cadence_s < 660);
	assert_true(r.points[0].budget_s == ZERTO_BUDGET_MAX_S);
	cJSON *tags = sim_call("GET", "/_sim/tags", NULL);
	const cJSON *t0 = cJSON_GetArrayItem(tags, 0);
	assert_int_equal(
	    zerto_time_parse(cJSON_GetObjectItem(t0, "inserted_virtual")->valuestring, &ins), 0);
	assert_int_equal(
	    zerto_time_parse(cJSON_GetObjectItem(t0, "visible_virtual")->valuestring, &vis), 0);
	/* Listed after more ZVM time than a fixed 45 s wait allowed. */
	assert_true(vis - ins > 45000);
	assert_true(vis - ins < (int64_t)(ZERTO_BUDGET_MAX_S * 1000));
	cJSON_Delete(tags);
	zerto_guard_result_clear(&r);
}

static void test_unreachable(void **state)
{
	struct fixture *f = *state;
	struct zerto_config cfg = sim_config(SCALE);
	struct zerto_client *c;
	struct zerto_guard_result r;
	struct zerto_protection p;
	char err[256];

	(void)f;
	cfg.base_url = "https://127.0.0.1:1";
	cfg.token_url = "https://127.0.0.1:1/auth/realms/zerto/protocol/openid-connect/token";
	cfg.connect_timeout_ms = 1000;
	c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(c);
	struct zerto_guard_request req = {
	    .vm_name = "zimaos", .agent = "hermes", .action = "x", .change_id = "1", .now = 0};
	assert_int_equal(zerto_guard_run(c, &req, NULL, &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "did not answer"));
	assert_non_null(strstr(r.message, "the command did not run"));
	assert_int_equal(zerto_protection(c, NULL, "zimaos", &p), -1);
	assert_int_equal(p.state, ZERTO_PROT_UNREACHABLE);
	zerto_guard_result_clear(&r);
	zerto_client_free(c);
}

/* TLS is verified by default: without the test CA the simulator is not trusted. */
static void test_tls_verified(void **state)
{
	struct zerto_config cfg = sim_config(SCALE);
	struct zerto_client *c;
	struct zerto_guard_result r;
	char err[256];

	(void)state;
	cfg.ca_file = NULL;
	c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(c);
	struct zerto_guard_request req = {.vm_name = "zimaos", .agent = "a", .action = "b"};
	assert_int_equal(zerto_guard_run(c, &req, NULL, &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "did not answer"));
	assert_int_equal(sim_count(NULL, NULL, 0), 0); /* no request got through */
	zerto_guard_result_clear(&r);
	zerto_client_free(c);
}

static void test_http_errors(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	/* A 500 finding the VM: refused with the ZVM's words. */
	sim_postf("/_sim/fault",
	          "{\"kind\":\"http_status\",\"status\":500,\"path\":\"/v1/vms\",\"count\":1,"
	          "\"message\":\"database is locked\"}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "HTTP 500: database is locked"));
	assert_int_equal(sim_count("POST", "/checkpoints", 0), 0);
	zerto_guard_result_clear(&r);

	/* A 500 while polling the task is transient: the next poll succeeds. */
	sim_postf("/_sim/fault",
	          "{\"kind\":\"http_status\",\"status\":503,\"path\":\"/v1/tasks\",\"count\":1}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
	assert_int_equal(sim_count("GET", "/v1/tasks", 503), 1);
	zerto_guard_result_clear(&r);
}

/* Lenient about case and unknown fields, strict about the ones it uses. */
static void test_parsing(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	/* The schema's camelCase spelling, every key: still understood. */
	sim_postf("/_sim/fault", "{\"kind\":\"mangle\",\"case\":\"camel\"}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
	zerto_guard_result_clear(&r);
	sim_postf("/_sim/fault", "{\"kind\":\"clear\"}");

	/* A field it uses is missing: refused, naming endpoint and field. */
	sim_postf("/_sim/fault",
	          "{\"kind\":\"mangle\",\"path\":\"/v1/vms\",\"drop\":\"VpgIdentifier\"}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "GET /v1/vms: field VpgIdentifier missing"));
	assert_non_null(strstr(r.message, "did not run"));
	zerto_guard_result_clear(&r);
	sim_postf("/_sim/fault", "{\"kind\":\"clear\"}");

	sim_postf("/_sim/fault",
	          "{\"kind\":\"mangle\",\"path\":\"/v1/tasks\",\"drop\":\"Status\"}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "GET /v1/tasks/{id}: field Status missing"));
	zerto_guard_result_clear(&r);
}

/* Verification off is explicit (and logged); then the test CA is not needed. */
static void test_insecure_explicit(void **state)
{
	struct zerto_config cfg = sim_config(SCALE);
	struct zerto_protection p;
	char err[256];

	(void)state;
	cfg.ca_file = NULL;
	cfg.insecure_skip_verify = true;
	struct zerto_client *c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(zerto_protection(c, NULL, "zimaos", &p), 0);
	assert_int_equal(p.state, ZERTO_PROT_PROTECTED);
	zerto_client_free(c);
}

/* A secret that cannot be read is a config error at start-up, naming the
 * file or variable and never the secret. */
static void test_secret_sources(void **state)
{
	struct zerto_config cfg = sim_config(SCALE);
	char err[256];

	(void)state;
	cfg.secret_file = "/nonexistent/zvm.secret";
	assert_null(zerto_client_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/zvm.secret"));
	cfg.secret_file = NULL;
	cfg.secret_env = "AIRLOCK_TEST_UNSET_SECRET";
	unsetenv("AIRLOCK_TEST_UNSET_SECRET");
	assert_null(zerto_client_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "AIRLOCK_TEST_UNSET_SECRET"));
	cfg.secret_env = NULL;
	assert_null(zerto_client_new(&cfg, err, sizeof(err)));
	cfg.secret_file = sim_env("ZVMSIM_SECRET_FILE");
	cfg.base_url = "http://127.0.0.1:1";
	assert_null(zerto_client_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "https"));
}

/* Slow answers: every request has a total timeout.  Slow while finding the
 * VM refuses; slow once while polling the task is retried at the next poll. */
static void test_slow_responses(void **state)
{
	struct fixture *f = *state;
	struct zerto_config cfg = sim_config(SCALE);
	struct zerto_guard_result r;
	char err[256];

	cfg.request_timeout_ms = 400;
	zerto_client_free(f->c);
	f->c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(f->c);
	sim_postf("/_sim/fault",
	          "{\"kind\":\"latency_ms\",\"ms\":1500,\"path\":\"/v1/vms\",\"count\":1}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "did not answer while looking up the VM's protection"));
	assert_non_null(strstr(r.message, "imed out"));
	zerto_guard_result_clear(&r);

	sim_postf("/_sim/fault",
	          "{\"kind\":\"latency_ms\",\"ms\":1500,\"path\":\"/v1/tasks/\",\"count\":1}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
	zerto_guard_result_clear(&r);
}

/* The outer deadline holds whatever the step: a task stuck Paused would be
 * polled for its whole 45 ZVM s budget (2.25 s here); a 600 ms outer
 * deadline ends the guard first, and says an insert was started.  (The
 * stuck insert stays in the simulator, so the success case runs first.) */
static void test_outer_deadline(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;
	struct zerto_guard_request req = {
	    .vm_name = "zimaos",
	    .agent = "hermes",
	    .action = "apt-get install nfs-kernel-server",
	    .change_id = "chg-413",
	    .now = 1790003045,
	    .log_id = "exec=2",
	};

	/* Without a fault a generous deadline is not reached: the guard succeeds. */
	req.deadline_ms = deadline_now_ms() + 60000;
	assert_int_equal(zerto_guard_run(f->c, &req, &f->hooks, &r), ZERTO_GUARD_OK);
	zerto_guard_result_clear(&r);

	sim_postf("/_sim/fault",
	          "{\"kind\":\"task_stuck_state\",\"vpg\":\"zimaos-local\",\"state\":3}");
	req.deadline_ms = deadline_now_ms() + 600;
	assert_int_equal(zerto_guard_run(f->c, &req, &f->hooks, &r), ZERTO_GUARD_REFUSED);
	/* The fault happened: the task was seen Paused, then the outer deadline
	 * (not the task budget) ended the wait. */
	assert_int_equal(r.points[0].task_state, ZERTO_TASK_PAUSED);
	assert_non_null(strstr(r.message, "ran past its outer deadline"));
	assert_non_null(strstr(r.message, "waiting for the checkpoint insert's task"));
	assert_non_null(strstr(r.message, "A checkpoint insert was started"));
	assert_null(strstr(r.message, "after 45 s"));
	assert_true(saw_event(&f->h, "guard.deadline"));
	assert_int_equal(f->h.unlocks, f->h.locks); /* the VPG's lock was let go */
	zerto_guard_result_clear(&r);

	/* Already past before the first insert: nothing is inserted. */
	req.deadline_ms = deadline_now_ms() - 1;
	int before = f->h.locks;
	assert_int_equal(zerto_guard_run(f->c, &req, &f->hooks, &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "No checkpoint was inserted"));
	assert_null(r.points[0].task_id);
	assert_int_equal(f->h.locks, before); /* refused before any lock */
	zerto_guard_result_clear(&r);
}

/* The lock hook says no: refused before any insert. */
static void test_lock_refused(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;

	f->h.refuse_locks = true;
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_REFUSED);
	assert_non_null(strstr(r.message, "another checkpoint insert on VPG 'zimaos-local'"));
	assert_int_equal(sim_count("POST", "/checkpoints", 0), 0);
	zerto_guard_result_clear(&r);
}

/* Without serialization, two back-to-back inserts: the second task fails.
 * That is why the daemon's lock exists. */
static void test_back_to_back_without_lock(void **state)
{
	struct fixture *f = *state;
	struct zerto_err e = {0};
	struct zerto_vm_row *rows = NULL;
	size_t n = 0;
	char *t1 = NULL, *t2 = NULL;
	struct zerto_task a = {0}, b = {0};

	assert_int_equal(zerto_list_vms(f->c, NULL, "zimaos", &rows, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(zerto_insert_checkpoint(f->c, rows[0].vpg_id, "one", &t1, &e), 0);
	assert_int_equal(zerto_insert_checkpoint(f->c, rows[0].vpg_id, "two", &t2, &e), 0);
	sim_postf("/_sim/clock", "{\"advance_s\": 5}");
	assert_int_equal(zerto_get_task(f->c, t1, &a, &e), 0);
	assert_int_equal(zerto_get_task(f->c, t2, &b, &e), 0);
	assert_int_equal(a.state, ZERTO_TASK_COMPLETED);
	assert_int_equal(b.state, ZERTO_TASK_FAILED);
	assert_non_null(strstr(b.reason, "in progress"));
	zerto_task_clear(&a);
	zerto_task_clear(&b);
	free(t1);
	free(t2);
	zerto_vm_rows_free(rows, n);
}

/* An insert somebody else started (a worker killed mid-guard, the Zerto UI)
 * is still running: the guard waits for it instead of failing back to back. */
static void test_waits_for_foreign_insert(void **state)
{
	struct fixture *f = *state;
	struct zerto_err e = {0};
	struct zerto_vm_row *rows = NULL;
	struct zerto_guard_result r;
	size_t n = 0;
	char *tid = NULL;

	sim_postf("/_sim/config", "{\"task_s\": 20}"); /* a slow insert: 1 s real */
	assert_int_equal(zerto_list_vms(f->c, NULL, "zimaos", &rows, &n, &e), 0);
	assert_int_equal(zerto_insert_checkpoint(f->c, rows[0].vpg_id, "foreign", &tid, &e), 0);
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
	assert_true(saw_event(&f->h, "guard.waited_for_other_insert"));
	assert_int_equal(sim_count("POST", "/checkpoints", 200), 2);
	zerto_guard_result_clear(&r);
	free(tid);
	zerto_vm_rows_free(rows, n);
}

static void test_protection_status(void **state)
{
	struct fixture *f = *state;
	struct zerto_protection p;

	assert_int_equal(zerto_protection(f->c, NULL, "web01", &p), 0);
	assert_int_equal(p.state, ZERTO_PROT_PROTECTED);
	assert_int_equal(p.nvpgs, 3);
	assert_int_equal(p.ntaggable, 3);
	assert_int_equal(zerto_protection(f->c, NULL, "sync01", &p), 0);
	assert_int_equal(p.state, ZERTO_PROT_PROTECTED);
	assert_int_equal(p.ntaggable, 0);
	assert_non_null(strstr(p.summary, "will refuse"));
	assert_int_equal(zerto_protection(f->c, NULL, "db01", &p), 0);
	assert_int_equal(p.state, ZERTO_PROT_NOT_PROTECTED);
	assert_int_equal(zerto_protection(f->c, NULL, "DUP", &p), 0);
	assert_int_equal(p.state, ZERTO_PROT_AMBIGUOUS);
}

/* A 401 (all tokens revoked) refreshes once and retries once. */
static void test_401_refresh_once(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;
	struct zerto_client_stats s0, s1;

	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
	zerto_guard_result_clear(&r);
	zerto_client_get_stats(f->c, &s0);
	sim_postf("/_sim/fault", "{\"kind\":\"revoke_tokens\"}");
	assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
	zerto_client_get_stats(f->c, &s1);
	assert_int_equal(s1.token_fetches - s0.token_fetches, 1);
	assert_int_equal(s1.unauthorized - s0.unauthorized, 1);
	zerto_guard_result_clear(&r);
}

static void test_password_grant(void **state)
{
	struct zerto_config cfg = sim_config(SCALE);
	struct zerto_protection p;
	char err[256];

	(void)state;
	cfg.grant = ZERTO_GRANT_PASSWORD;
	cfg.client_id = NULL; /* zerto-client */
	cfg.username = sim_env("ZVMSIM_USERNAME");
	cfg.secret_file = NULL;
	setenv("AIRLOCK_TEST_ZVM_PASSWORD", "wrong", 1);
	cfg.secret_env = "AIRLOCK_TEST_ZVM_PASSWORD";
	struct zerto_client *c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(zerto_protection(c, NULL, "zimaos", &p), -1);
	assert_non_null(strstr(p.summary, "Invalid user credentials"));
	zerto_client_free(c);

	FILE *fp = fopen(sim_env("ZVMSIM_PASSWORD_FILE"), "r");
	char pw[128] = "";
	assert_non_null(fgets(pw, sizeof(pw), fp));
	fclose(fp);
	pw[strcspn(pw, "\n")] = '\0';
	setenv("AIRLOCK_TEST_ZVM_PASSWORD", pw, 1);
	c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(zerto_protection(c, NULL, "zimaos", &p), 0);
	assert_int_equal(p.state, ZERTO_PROT_PROTECTED);
	zerto_client_free(c);
	unsetenv("AIRLOCK_TEST_ZVM_PASSWORD");
}

struct race_arg {
	struct fixture *f;
	const char *vm;
	enum zerto_outcome outcome;
};

static void *race_thread(void *p)
{
	struct race_arg *a = p;
	struct zerto_guard_result r;

	a->outcome = guard(a->f, NULL, a->vm, &r);
	if (a->outcome != ZERTO_GUARD_OK)
		fprintf(stderr, "race %s: %s\n", a->vm, r.message);
	zerto_guard_result_clear(&r);
	return NULL;
}

static void run_race(struct fixture *f)
{
	const char *vms[] = {"zimaos", "bench-vs", "web01", "win2019-1"};
	pthread_t th[NTHREADS];
	struct race_arg args[NTHREADS];

	for (int i = 0; i < NTHREADS; i++) {
		args[i] = (struct race_arg){f, vms[i % 4], ZERTO_GUARD_REFUSED};
		assert_int_equal(pthread_create(&th[i], NULL, race_thread, &args[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(args[i].outcome, ZERTO_GUARD_OK);
}

/* 32 guards at once on a fresh client: one token fetch, no 401 anywhere;
 * then every token revoked under them: still one fetch, every guard ok. */
static void test_token_race(void **state)
{
	struct fixture *f = *state;
	struct zerto_client_stats s;

	/* Fast journal so 32 serialized inserts per VPG finish quickly. */
	sim_postf("/_sim/clock", "{\"scale\": 100}");
	struct zerto_config cfg = sim_config(100);
	char err[256];
	zerto_client_free(f->c);
	f->c = zerto_client_new(&cfg, err, sizeof(err));
	assert_non_null(f->c);

	run_race(f);
	zerto_client_get_stats(f->c, &s);
	assert_int_equal(s.token_fetches, 1);
	assert_int_equal(s.unauthorized, 0);
	assert_int_equal(sim_count(NULL, NULL, 401), 0);
	assert_int_equal(sim_count("POST", "openid-connect/token", 200), 1);
	/* Every insert was serialized: no task failed as back-to-back. */
	assert_int_equal(sim_count("POST", "/checkpoints", 200), NTHREADS / 4 * 6);

	sim_postf("/_sim/fault", "{\"kind\":\"revoke_tokens\"}");
	run_race(f);
	zerto_client_get_stats(f->c, &s);
	assert_int_equal(s.token_fetches, 2);
	assert_true(s.unauthorized >= 1 && s.unauthorized <= NTHREADS);
	assert_int_equal(sim_count("POST", "openid-connect/token", 200), 2);
}

/* Tokens that expire every 2 s under a stream of guards: refreshed ahead of
 * expiry (80 % of expires_in), so the ZVM never says 401. */
static void test_token_expiry_refresh(void **state)
{
	struct fixture *f = *state;
	struct zerto_guard_result r;
	struct zerto_client_stats s;

	sim_postf("/_sim/config", "{\"token_lifetime_s\": 2}");
	/* Guards back to back for over 5 s of real time: at least three 2 s
	 * tokens are needed, whatever the speed of one guard. */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		assert_int_equal(guard(f, NULL, "zimaos", &r), ZERTO_GUARD_OK);
		zerto_guard_result_clear(&r);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 6);
	zerto_client_get_stats(f->c, &s);
	assert_true(s.token_fetches >= 3);
	assert_int_equal(s.unauthorized, 0);
	assert_int_equal(sim_count(NULL, NULL, 401), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_ok_one_vpg, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_three_vpgs_same_tag, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unprotected_is_none, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ambiguous_then_by_id, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_syncing_vpg_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_task_failed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_task_stopped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_task_stuck, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_insert_http_400, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tag_never_listed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_slow_cadence_within_budget, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tls_verified, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_parsing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_insecure_explicit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_secret_sources, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_slow_responses, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_outer_deadline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lock_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_back_to_back_without_lock, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_waits_for_foreign_insert, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_protection_status, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_401_refresh_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_password_grant, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_token_race, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_token_expiry_refresh, setup, teardown),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
