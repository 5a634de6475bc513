/* store_seam_test.c -- the store's sessions against a real PostgreSQL (the
 * PG* environment of scripts/pgtmp): notifications and their bounded waits,
 * a session the server ends, reads sent again and writes not, the connect
 * and notice hooks. */
#include "store/store.h"

#include "lib/deadline.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct store *open_store(const char *app)
{
	char err[512];
	struct store *s = store_open(NULL, app, err, sizeof(err));

	if (s == NULL)
		fail_msg("%s", err);
	return s;
}

static void exec_ok(struct store *s, const char *sql)
{
	struct store_res *r = store_exec(s, sql, 0, NULL);

	if (r == NULL)
		fail_msg("%s: %s", sql, store_errmsg(s));
	store_clear(r);
}

static long backend_pid(struct store *s)
{
	struct store_res *r = store_exec(s, "SELECT pg_backend_pid()", 0, NULL);
	long pid;

	if (r == NULL)
		fail_msg("pg_backend_pid: %s", store_errmsg(s));
	pid = strtol(store_get(r, 0, 0), NULL, 10);
	store_clear(r);
	return pid;
}

/* Ends s's backend from killer and waits (bounded) until its process is
 * gone, so its end of the socket is closed. */
static void terminate(struct store *killer, struct store *s)
{
	long pid = backend_pid(s);
	char text[24];
	const char *p[1] = {text};
	struct store_res *r;
	int64_t until = deadline_now_ms() + 10000;

	snprintf(text, sizeof(text), "%ld", pid);
	r = store_exec(killer, "SELECT pg_terminate_backend($1::int)", 1, p);
	assert_non_null(r);
	assert_string_equal(store_get(r, 0, 0), "t");
	store_clear(r);
	while (kill((pid_t)pid, 0) == 0 || errno != ESRCH) {
		assert_true(deadline_now_ms() < until);
		usleep(10 * 1000);
	}
}

static void test_notifications(void **state)
{
	struct store *a = open_store("seam-a"), *b = open_store("seam-b");
	char ch[64], payload[64];
	int fds[2];

	(void)state;
	assert_int_equal(store_listen(a, "seam"), 0);
	assert_int_equal(store_wait_notify(a, 0), 0);
	assert_int_equal(store_wait_notify(a, 30), 0); /* none came in time */
	exec_ok(b, "SELECT pg_notify('seam', 'one'), pg_notify('other', 'x')");
	exec_ok(b, "NOTIFY seam, 'two'");
	assert_int_equal(store_wait_notify(a, 10000), 1);
	assert_int_equal(store_notification(a, ch, sizeof(ch), payload, sizeof(payload)), 1);
	assert_string_equal(ch, "seam");
	assert_string_equal(payload, "one");
	/* The second may still be on its way: wait for it, bounded. */
	assert_int_equal(store_wait_notify(a, 10000), 1);
	assert_int_equal(store_notification(a, ch, sizeof(ch), payload, sizeof(payload)), 1);
	assert_string_equal(payload, "two");
	assert_int_equal(store_notification(a, ch, sizeof(ch), NULL, 0), 0);

	/* The caller's wake-up fd ends a wait too; a notification wins over it. */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_int_equal(store_wait_notify_or(a, fds[0], 10000), 2);
	assert_int_equal(read(fds[0], ch, 1), 1);
	exec_ok(b, "NOTIFY seam, 'three'");
	assert_int_equal(store_wait_notify_or(a, fds[0], 10000), 1);
	assert_int_equal(store_drain_notifications(a), 1);
	close(fds[0]);
	close(fds[1]);

	/* UNLISTEN: nothing more arrives. */
	assert_int_equal(store_unlisten(a, "seam"), 0);
	exec_ok(b, "NOTIFY seam, 'four'");
	exec_ok(a, "SELECT 1");
	assert_int_equal(store_wait_notify(a, 50), 0);
	store_close(a);
	store_close(b);
}

static void test_lost_session(void **state)
{
	struct store *a = open_store("seam-a"), *b = open_store("seam-b");
	char ch[64];
	long before;

	(void)state;
	assert_int_equal(store_listen(a, "seam"), 0);
	before = backend_pid(a);
	terminate(b, a);
	assert_int_equal(store_wait_notify(a, 10000), -1);
	assert_false(store_connected(a));
	/* A new session, listening again where the old one did. */
	assert_int_equal(store_ensure(a), 0);
	assert_true(backend_pid(a) != before);
	exec_ok(b, "NOTIFY seam, 'again'");
	assert_int_equal(store_wait_notify(a, 10000), 1);
	assert_int_equal(store_notification(a, ch, sizeof(ch), NULL, 0), 1);
	assert_string_equal(ch, "seam");
	store_close(a);
	store_close(b);
}

static void test_read_retried_write_not(void **state)
{
	struct store *a = open_store("seam-a"), *b = open_store("seam-b");
	struct store_res *r;
	long before;

	(void)state;
	/* A session that died while idle is found before anything is sent. */
	before = backend_pid(a);
	terminate(b, a);
	assert_int_equal(store_ensure(a), 0);
	assert_true(backend_pid(a) != before);

	/* A read on a dead session is sent again on a new one. */
	before = backend_pid(a);
	terminate(b, a);
	r = store_exec_read(a, "SELECT pg_backend_pid()", 0, NULL);
	assert_non_null(r);
	assert_true(strtol(store_get(r, 0, 0), NULL, 10) != before);
	store_clear(r);

	/* A write is not: it fails, and the next store_ensure() starts anew. */
	exec_ok(a, "CREATE TEMP TABLE t (x int)");
	terminate(b, a);
	assert_null(store_exec(a, "SELECT 1", 0, NULL));
	assert_false(store_connected(a));
	assert_int_equal(store_ensure(a), 0);
	exec_ok(a, "SELECT 1");
	store_close(a);
	store_close(b);
}

struct hooks {
	int connects;
	bool refuse;
	char notice[128];
	char severity[16];
};

static int on_connect(struct store *s, void *arg)
{
	struct hooks *h = arg;

	h->connects++;
	if (h->refuse) {
		store_set_error_state(s, "42501", "refused by the test");
		return -1;
	}
	return 0;
}

static void on_notice(void *arg, const char *severity, const char *message)
{
	struct hooks *h = arg;

	snprintf(h->notice, sizeof(h->notice), "%s", message);
	snprintf(h->severity, sizeof(h->severity), "%s", severity);
}

static void test_hooks(void **state)
{
	struct store *a = store_new(NULL, "seam-lazy", "-c lock_timeout=1234ms");
	struct hooks h = {0};
	struct store_res *r;

	(void)state;
	store_on_connect(a, on_connect, &h);
	store_on_notice(a, on_notice, &h);
	assert_null(store_exec(a, "SELECT 1", 0, NULL)); /* not started yet */
	assert_int_equal(h.connects, 0);
	assert_int_equal(store_ensure(a), 0);
	assert_int_equal(h.connects, 1);
	assert_int_equal(store_ensure(a), 0); /* up: no new session */
	assert_int_equal(h.connects, 1);
	r = store_exec(a, "SELECT current_setting('lock_timeout'), current_setting("
	                  "'statement_timeout'), current_setting('application_name')",
	               0, NULL);
	assert_non_null(r);
	assert_string_equal(store_get(r, 0, 0), "1234ms");
	assert_string_equal(store_get(r, 0, 1), STORE_STATEMENT_TIMEOUT);
	assert_string_equal(store_get(r, 0, 2), "seam-lazy");
	store_clear(r);
	exec_ok(a, "DO $$BEGIN RAISE NOTICE 'hello from the server'; END$$");
	assert_string_equal(h.notice, "hello from the server");
	assert_string_equal(h.severity, "NOTICE");

	/* A refused new session is ended; the call says why. */
	h.refuse = true;
	assert_int_equal(store_reset(a), -1);
	assert_string_equal(store_errmsg(a), "refused by the test");
	assert_string_equal(store_sqlstate(a), "42501");
	assert_false(store_connected(a));
	assert_null(store_exec(a, "SELECT 1", 0, NULL));
	assert_int_equal(store_ensure(a), -1);
	assert_string_equal(store_sqlstate(a), "42501");
	assert_int_equal(h.connects, 3);
	store_close(a);
}

/* How many statements this session of s has prepared with sql's text. */
static int prepared_count(struct store *s, const char *sql)
{
	struct store_res *r =
	    store_exec(s, "SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", 1,
	               (const char *const[]){sql});
	int n;

	if (r == NULL)
		fail_msg("pg_prepared_statements: %s", store_errmsg(s));
	n = atoi(store_get(r, 0, 0));
	store_clear(r);
	return n;
}

static const char *execp_value(struct store *s, const char *sql, const char *arg, char *out,
                               size_t outlen)
{
	struct store_res *r = store_execp(s, sql, arg ? 1 : 0, (const char *const[]){arg});

	if (r == NULL)
		fail_msg("%s: %s", sql, store_errmsg(s));
	snprintf(out, outlen, "%s", store_get(r, 0, 0));
	store_clear(r);
	return out;
}

/* store_execp: prepared once per session, again after a new session, again
 * after the server lost it or its result type changed (outside a
 * transaction block only), and errors like store_exec's. */
static void test_prepared(void **state)
{
	static const char sql[] = "SELECT $1::int + 1";
	struct store *s = open_store("seam-prepared");
	struct store *killer = open_store("seam-killer");
	char v[64];
	long pid;

	(void)state;
	for (int i = 0; i < 5; i++) {
		char arg[16], want[16];
		snprintf(arg, sizeof(arg), "%d", i);
		snprintf(want, sizeof(want), "%d", i + 1);
		assert_string_equal(execp_value(s, sql, arg, v, sizeof(v)), want);
	}
	assert_int_equal(prepared_count(s, sql), 1);
	/* The same text from another buffer is the same statement. */
	char copy[sizeof(sql)];
	memcpy(copy, sql, sizeof(sql));
	assert_string_equal(execp_value(s, copy, "41", v, sizeof(v)), "42");
	assert_int_equal(prepared_count(s, sql), 1);

	/* A new session has none: prepared again on first use. */
	pid = backend_pid(s);
	assert_int_equal(store_reset(s), 0);
	assert_true(backend_pid(s) != pid);
	assert_int_equal(prepared_count(s, sql), 0);
	assert_string_equal(execp_value(s, sql, "1", v, sizeof(v)), "2");
	assert_int_equal(prepared_count(s, sql), 1);

	/* A session the server ended: the call fails as a lost connection,
	 * and after store_ensure() the statement is prepared again. */
	terminate(killer, s);
	assert_null(store_execp(s, sql, 1, (const char *const[]){"1"}));
	assert_int_equal(store_ensure(s), 0);
	assert_string_equal(execp_value(s, sql, "2", v, sizeof(v)), "3");

	/* The server forgot it (DEALLOCATE ALL): prepared again, sent once. */
	exec_ok(s, "DEALLOCATE ALL");
	assert_int_equal(prepared_count(s, sql), 0);
	assert_string_equal(execp_value(s, sql, "3", v, sizeof(v)), "4");
	assert_int_equal(prepared_count(s, sql), 1);

	/* Its result type changed under it (a migration replaced a function). */
	exec_ok(killer, "DROP FUNCTION IF EXISTS public.seam_f()");
	exec_ok(killer, "CREATE FUNCTION public.seam_f() RETURNS int LANGUAGE sql AS 'SELECT 7'");
	assert_string_equal(execp_value(s, "SELECT * FROM public.seam_f()", NULL, v, sizeof(v)), "7");
	exec_ok(killer, "DROP FUNCTION public.seam_f()");
	exec_ok(killer, "CREATE FUNCTION public.seam_f() RETURNS TABLE (a text, b text) "
	                "LANGUAGE sql AS $$SELECT 'x', 'y'$$");
	assert_string_equal(execp_value(s, "SELECT * FROM public.seam_f()", NULL, v, sizeof(v)), "x");

	/* In a transaction block nothing is sent again: the error stands. */
	assert_string_equal(execp_value(s, sql, "0", v, sizeof(v)), "1");
	exec_ok(s, "BEGIN");
	exec_ok(s, "DEALLOCATE ALL");
	assert_null(store_execp(s, sql, 1, (const char *const[]){"1"}));
	assert_string_equal(store_sqlstate(s), "26000");
	exec_ok(s, "ROLLBACK");
	assert_string_equal(execp_value(s, sql, "5", v, sizeof(v)), "6");

	/* Errors are store_exec's: message and SQLSTATE; preparing fails too. */
	assert_null(store_execp(s, "SELECT 1/$1::int", 1, (const char *const[]){"0"}));
	assert_string_equal(store_sqlstate(s), "22012");
	assert_null(store_execp(s, "SELECT no_such_column", 0, NULL));
	assert_string_equal(store_sqlstate(s), "42703");
	exec_ok(killer, "DROP FUNCTION public.seam_f()");
	store_close(killer);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_notifications),
	    cmocka_unit_test(test_lost_session),
	    cmocka_unit_test(test_read_retried_write_not),
	    cmocka_unit_test(test_hooks),
	    cmocka_unit_test(test_prepared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
