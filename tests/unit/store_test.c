/* store_test.c -- the store's reconnect policy without a PostgreSQL: the backoff
 * sequence, and store_ensure() against a socket that counts the tries. */
#include "store/store.h"

#include "lib/deadline.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

static void test_backoff_sequence(void **state)
{
	static const int want[] = {200, 400, 800, 1600, 3200, 5000, 5000, 5000};
	struct store_backoff b = STORE_BACKOFF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(store_backoff_next(&b), want[i]);
	store_backoff_reset(&b);
	assert_int_equal(store_backoff_next(&b), 200);
	assert_int_equal(store_backoff_next(&b), 400);
}

static void test_never_connected(void **state)
{
	struct store *s = store_new("host=/nonexistent-airlock-store-test", "store_test", NULL);
	struct store_res *r;

	(void)state;
	r = store_exec(s, "SELECT 1", 0, NULL);
	assert_null(r);
	assert_string_equal(store_errmsg(s), "not connected to PostgreSQL");
	assert_string_equal(store_sqlstate(s), "08003");
	assert_false(store_connected(s));
	assert_int_equal(store_wait_notify(s, 0), -1);
	/* Forgetting channels works on a store that never had a session. */
	assert_int_equal(store_unlisten(s, "*"), -1);
	store_close(s);
}

/* A "server" on a unix socket that closes every connection it accepts and
 * counts them: each count is one real start of a session by the store. */
struct fake {
	char dir[64];
	int fd;
	atomic_int accepted;
	atomic_bool stop;
	pthread_t thread;
};

static void *fake_loop(void *arg)
{
	struct fake *f = arg;

	while (!atomic_load(&f->stop)) {
		struct pollfd p = {.fd = f->fd, .events = POLLIN};
		if (poll(&p, 1, 50) == 1) {
			int c = accept(f->fd, NULL, NULL);
			if (c >= 0) {
				atomic_fetch_add(&f->accepted, 1);
				close(c);
			}
		}
	}
	return NULL;
}

static void fake_start(struct fake *f)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(f->dir, sizeof(f->dir), "/tmp/airlock-store-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.5432", f->dir);
	f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(f->fd >= 0);
	assert_int_equal(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->fd, 8), 0);
	atomic_init(&f->accepted, 0);
	atomic_init(&f->stop, false);
	assert_int_equal(pthread_create(&f->thread, NULL, fake_loop, f), 0);
}

static void fake_stop(struct fake *f)
{
	char path[128];

	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	close(f->fd);
	snprintf(path, sizeof(path), "%s/.s.PGSQL.5432", f->dir);
	unlink(path);
	rmdir(f->dir);
}

static void test_ensure_backs_off(void **state)
{
	struct fake f;
	char conninfo[128], first[1024];
	struct store *s;
	int64_t t0;
	int tries;

	(void)state;
	fake_start(&f);
	snprintf(conninfo, sizeof(conninfo), "host=%s port=5432 user=x dbname=y", f.dir);
	s = store_new(conninfo, "store_test", NULL);
	assert_int_equal(store_ensure(s), -1);
	t0 = deadline_now_ms();
	assert_int_equal(atomic_load(&f.accepted), 1); /* the fault happened: one real try */
	assert_non_null(strstr(store_errmsg(s), "cannot connect to PostgreSQL"));
	snprintf(first, sizeof(first), "%s", store_errmsg(s));
	/* Within the backoff (200 ms from the end of the try): no new try, the
	 * same reason.  (Only provable when this machine got here in time.) */
	assert_int_equal(store_ensure(s), -1);
	assert_string_equal(store_errmsg(s), first);
	assert_null(store_exec(s, "SELECT 1", 0, NULL));
	assert_string_equal(store_errmsg(s), first);
	if (deadline_now_ms() - t0 < 150)
		assert_int_equal(atomic_load(&f.accepted), 1);
	/* After it: tried again, and then not again within the next wait (400 ms). */
	usleep(250 * 1000);
	tries = atomic_load(&f.accepted);
	assert_int_equal(store_ensure(s), -1);
	t0 = deadline_now_ms();
	assert_int_equal(atomic_load(&f.accepted), tries + 1);
	assert_int_equal(store_ensure(s), -1);
	if (deadline_now_ms() - t0 < 350)
		assert_int_equal(atomic_load(&f.accepted), tries + 1);
	tries = atomic_load(&f.accepted);
	usleep(450 * 1000);
	assert_int_equal(store_ensure(s), -1);
	assert_int_equal(atomic_load(&f.accepted), tries + 1);
	store_close(s);
	fake_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_backoff_sequence),
	    cmocka_unit_test(test_never_connected),
	    cmocka_unit_test(test_ensure_backs_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
