/* sdnotify_test.c -- the sd_notify datagrams airlockd sends, received on a
 * socket the test binds (path and abstract), and the watchdog's interval. */
#include "worker/sdnotify.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

/* Binds a datagram socket at name ("/path" or "@abstract"). */
static int bind_sink(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	else
		len++;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	return fd;
}

/* The next datagram, NUL-terminated in buf. */
static void recv_one(int fd, char *buf, size_t len)
{
	struct timeval tv = {.tv_sec = 5};
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, len - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
}

static void test_path_socket(void **state)
{
	char dir[] = "/tmp/sdnotify-test.XXXXXX", path[128], got[256];
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = bind_sink(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(sdnotify_send("READY=1\nSTATUS=claiming"), 0);
	recv_one(fd, got, sizeof(got));
	assert_string_equal(got, "READY=1\nSTATUS=claiming");
	assert_int_equal(sdnotify_send("STOPPING=1"), 0);
	recv_one(fd, got, sizeof(got));
	assert_string_equal(got, "STOPPING=1");
	close(fd);
	unlink(path);
	rmdir(dir);
	unsetenv("NOTIFY_SOCKET");
}

static void test_abstract_socket(void **state)
{
	char name[64], got[64];
	int fd;
	(void)state;

	snprintf(name, sizeof(name), "@airlock-sdnotify-test-%d", (int)getpid());
	fd = bind_sink(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(sdnotify_send("READY=1"), 0);
	recv_one(fd, got, sizeof(got));
	assert_string_equal(got, "READY=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

static void test_no_socket_is_a_no_op(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sdnotify_send("READY=1"), 0);
}

static void test_bad_socket_fails(void **state)
{
	(void)state;
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(sdnotify_send("READY=1"), -1);
	setenv("NOTIFY_SOCKET", "/nonexistent/airlock/notify", 1);
	assert_int_equal(sdnotify_send("READY=1"), -1);
	unsetenv("NOTIFY_SOCKET");
}

static void test_watchdog_interval(void **state)
{
	char pid[32];
	(void)state;

	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	assert_int_equal(sdnotify_watchdog_ms(), 0);
	setenv("WATCHDOG_USEC", "30000000", 1);
	assert_int_equal(sdnotify_watchdog_ms(), 30000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(sdnotify_watchdog_ms(), 30000);
	setenv("WATCHDOG_PID", "1", 1); /* meant for another process */
	assert_int_equal(sdnotify_watchdog_ms(), 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "12abc", 1);
	assert_int_equal(sdnotify_watchdog_ms(), 0);
	setenv("WATCHDOG_USEC", "-5", 1);
	assert_int_equal(sdnotify_watchdog_ms(), 0);
	unsetenv("WATCHDOG_USEC");
}

static void test_watchdog_pings_at_half_interval(void **state)
{
	char dir[] = "/tmp/sdnotify-test.XXXXXX", path[128], got[64];
	int64_t next = 0;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = bind_sink(path);
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "600000000", 1); /* 10 minutes: the second call is early */
	sdnotify_watchdog(&next);
	recv_one(fd, got, sizeof(got));
	assert_string_equal(got, "WATCHDOG=1");
	assert_true(next > 0);
	int64_t first = next;
	sdnotify_watchdog(&next); /* before half the interval: nothing sent */
	assert_int_equal(next, first);
	assert_int_equal(recv(fd, got, sizeof(got), MSG_DONTWAIT), -1);
	close(fd);
	unlink(path);
	rmdir(dir);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_socket),
	    cmocka_unit_test(test_abstract_socket),
	    cmocka_unit_test(test_no_socket_is_a_no_op),
	    cmocka_unit_test(test_bad_socket_fails),
	    cmocka_unit_test(test_watchdog_interval),
	    cmocka_unit_test(test_watchdog_pings_at_half_interval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
