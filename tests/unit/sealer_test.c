/* sealer_test.c -- airlockd's sealer at the store/ seam.
 *
 * The store is a fake defined here (the linker takes it instead of the real
 * module): each call of airlock.seal_events answers the next scripted count,
 * or fails.  The properties: full batches are followed by another batch and
 * a short one ends the tick; a tick never runs more batches than it is
 * given; a failure ends the tick with -1, is logged once however many ticks
 * fail in a row, and its recovery is logged once. */
#include "lib/log.h"
#include "store/store.h"
#include "worker/sealer.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------ fake store */

struct store_res {
	char value[32];
};

static struct {
	long long answers[16]; /* -1: the call fails */
	int nanswers, next, calls;
	char last_sql[128];
	char last_param[16];
} fake;

static void script(int n, const long long *answers)
{
	memset(&fake, 0, sizeof(fake));
	memcpy(fake.answers, answers, (size_t)n * sizeof(*answers));
	fake.nanswers = n;
}

struct store_res *store_execp(struct store *s, const char *sql, int nparams,
                              const char *const *params)
{
	struct store_res *r;
	long long a;

	(void)s;
	fake.calls++;
	snprintf(fake.last_sql, sizeof(fake.last_sql), "%s", sql);
	snprintf(fake.last_param, sizeof(fake.last_param), "%s", nparams > 0 ? params[0] : "");
	a = fake.next < fake.nanswers ? fake.answers[fake.next] : 0;
	fake.next++;
	if (a < 0)
		return NULL;
	r = calloc(1, sizeof(*r));
	snprintf(r->value, sizeof(r->value), "%lld", a);
	return r;
}

const char *store_get(const struct store_res *r, int row, int col)
{
	(void)row;
	(void)col;
	return r->value;
}

void store_clear(struct store_res *r)
{
	free(r);
}

const char *store_errmsg(const struct store *s)
{
	(void)s;
	return "server closed the connection unexpectedly";
}

/* ------------------------------------------------------------ stderr capture */

static char captured[8192];

/* Runs one tick with stderr (the log) sent to a file, kept in `captured`. */
static long long tick_logged(struct sealer *s, int max_batches)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	long long n;
	size_t got;

	assert_non_null(f);
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	n = sealer_tick(s, NULL, max_batches);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	got = fread(captured, 1, sizeof(captured) - 1, f);
	captured[got] = '\0';
	fclose(f);
	return n;
}

static int count(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* ------------------------------------------------------------ tests */

static void full_batches_continue_until_a_short_one(void **state)
{
	struct sealer *s = sealer_new();
	long long a[] = {SEALER_BATCH, SEALER_BATCH, 5, 999};

	(void)state;
	script(4, a);
	assert_int_equal(sealer_tick(s, NULL, 8), 2 * SEALER_BATCH + 5);
	assert_int_equal(fake.calls, 3);
	assert_string_equal(fake.last_sql, "SELECT airlock.seal_events($1::integer)");
	char want[16];
	snprintf(want, sizeof(want), "%d", SEALER_BATCH);
	assert_string_equal(fake.last_param, want);
	sealer_free(s);
}

static void nothing_to_seal_is_one_call(void **state)
{
	struct sealer *s = sealer_new();
	long long a[] = {0};

	(void)state;
	script(1, a);
	assert_int_equal(sealer_tick(s, NULL, 8), 0);
	assert_int_equal(fake.calls, 1);
	sealer_free(s);
}

static void a_tick_is_bounded(void **state)
{
	struct sealer *s = sealer_new();
	long long a[16];

	(void)state;
	for (int i = 0; i < 16; i++)
		a[i] = SEALER_BATCH;
	script(16, a);
	assert_int_equal(sealer_tick(s, NULL, 3), 3LL * SEALER_BATCH);
	assert_int_equal(fake.calls, 3);
	sealer_free(s);
}

static void a_failure_is_logged_once_and_its_recovery_too(void **state)
{
	struct sealer *s = sealer_new();
	long long a[] = {SEALER_BATCH, -1, -1, -1, 7, 0};

	(void)state;
	log_set_level(LOG_INFO);
	script(6, a);
	assert_int_equal(tick_logged(s, 8), -1); /* a batch, then the failure */
	assert_int_equal(fake.calls, 2);
	assert_int_equal(count(captured, "evt=audit.seal_failed"), 1);
	assert_non_null(strstr(captured, "server closed the connection unexpectedly"));
	assert_int_equal(tick_logged(s, 8), -1);
	assert_int_equal(tick_logged(s, 8), -1);
	assert_int_equal(count(captured, "evt=audit.seal_failed"), 0);
	assert_int_equal(tick_logged(s, 8), 7);
	assert_int_equal(count(captured, "evt=audit.seal_recovered"), 1);
	assert_int_equal(tick_logged(s, 8), 0);
	assert_int_equal(count(captured, "evt=audit.seal_recovered"), 0);
	sealer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(full_batches_continue_until_a_short_one),
	    cmocka_unit_test(nothing_to_seal_is_one_call),
	    cmocka_unit_test(a_tick_is_bounded),
	    cmocka_unit_test(a_failure_is_logged_once_and_its_recovery_too),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
