/* agentbatch_test.c -- reading the node program's answers about guest agents. */
#include "worker/agentbatch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define INFO_ON                                                                                    \
	"{\"return\": {\"version\": \"7.2.0\", \"supported_commands\": [{\"enabled\": true, "      \
	"\"name\": \"guest-exec-status\", \"success-response\": true}, {\"enabled\": true, "       \
	"\"name\": \"guest-exec\", \"success-response\": true}]}}"
#define INFO_OFF                                                                                   \
	"{\"return\": {\"version\": \"9.2\", \"supported_commands\": [{\"enabled\": false, "       \
	"\"name\": \"guest-exec\", \"success-response\": true}, {\"enabled\": true, "              \
	"\"name\": \"guest-exec-status\", \"success-response\": true}]}}"

static void setup(struct transport_probe *p, bool *done, size_t n)
{
	memset(p, 0, n * sizeof(*p));
	memset(done, 0, n * sizeof(*done));
	for (size_t i = 0; i < n; i++) {
		p[i].kind = TRANSPORT_PROBE_AGENT;
		p[i].vmid = 101 + (int)i;
		p[i].state = TRANSPORT_PROBE_ERROR;
	}
	p[n - 1].kind = TRANSPORT_PROBE_CT; /* never touched */
	p[n - 1].vmid = 101;
}

static void test_answers(void **state)
{
	struct transport_probe p[6];
	bool done[6];
	(void)state;

	setup(p, done, 6);
	assert_true(agentbatch_line("101 reply " INFO_ON, p, done, NULL, 6, NULL));
	assert_int_equal(p[0].state, TRANSPORT_PROBE_OK);
	assert_true(done[0]);
	assert_true(agentbatch_line("102 reply " INFO_OFF, p, done, NULL, 6, NULL));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_EXEC_DISABLED);
	/* An agent that does not answer may only be busy: qm decides. */
	assert_false(agentbatch_line("103 timeout", p, done, NULL, 6, NULL));
	assert_false(done[2]);
	assert_false(agentbatch_line("104 refused Connection refused", p, done, NULL, 6, NULL));
	assert_false(agentbatch_line("104 closed", p, done, NULL, 6, NULL));
	assert_false(done[3]);
	assert_true(agentbatch_line(
	    "105 reply {\"error\": {\"class\": \"GenericError\", \"desc\": \"boom\"}}", p, done,
	    NULL, 6, NULL));
	assert_int_equal(p[4].state, TRANSPORT_PROBE_ERROR);
	assert_non_null(strstr(p[4].detail, "boom"));
	assert_false(done[5]);
	assert_int_equal(p[5].kind, TRANSPORT_PROBE_CT);
}

/* A busy agent (its socket's queue was full) is not asked and decides
 * nothing; each kind of line is counted for the round's log line. */
static void test_busy_and_counts(void **state)
{
	struct transport_probe p[5];
	bool done[5], silent[5] = {false};
	struct agentbatch_stats st = {0};
	(void)state;

	setup(p, done, 5);
	assert_false(agentbatch_line("101 busy", p, done, silent, 5, &st));
	assert_false(done[0]);
	assert_int_equal(p[0].state, TRANSPORT_PROBE_ERROR); /* untouched */
	assert_false(agentbatch_line("102 timeout", p, done, silent, 5, &st));
	assert_false(agentbatch_line("103 nosocket", p, done, silent, 5, &st));
	assert_true(agentbatch_line("104 reply " INFO_ON, p, done, silent, 5, &st));
	assert_true(silent[0] && silent[1]);  /* busy, silent */
	assert_false(silent[2] || silent[3]); /* no socket: qm says why; answered */
	assert_int_equal(st.busy, 1);
	assert_int_equal(st.silent, 1);
	assert_int_equal(st.answered, 1);
	/* once decided, a later line for the same VM is not its answer */
	assert_false(agentbatch_line("104 busy", p, done, silent, 5, &st));
	assert_int_equal(p[3].state, TRANSPORT_PROBE_OK);
}

/* What the batch cannot tell is left for qm: nothing is decided. */
static void test_left_for_qm(void **state)
{
	struct transport_probe p[3];
	bool done[3];
	(void)state;

	setup(p, done, 3);
	assert_false(agentbatch_line("101 nosocket", p, done, NULL, 3, NULL));
	assert_false(agentbatch_line("999 reply " INFO_ON, p, done, NULL, 3, NULL)); /* not asked */
	assert_false(agentbatch_line("garbage", p, done, NULL, 3, NULL));
	assert_false(agentbatch_line("", p, done, NULL, 3, NULL));
	assert_false(agentbatch_line("102 whatever", p, done, NULL, 3, NULL));
	assert_false(done[0] || done[1] || done[2]);
	assert_true(agentbatch_line("102 reply not json", p, done, NULL, 3, NULL));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_ERROR);
	/* one answer per VM: a second line for it changes nothing */
	assert_false(agentbatch_line("102 reply " INFO_ON, p, done, NULL, 3, NULL));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_ERROR);
}

/* `pct list`: the header and unknown states decide nothing. */
static void test_ct_list(void **state)
{
	struct transport_probe p[4];
	bool done[4];
	(void)state;

	memset(p, 0, sizeof(p));
	memset(done, 0, sizeof(done));
	for (int i = 0; i < 4; i++) {
		p[i].kind = TRANSPORT_PROBE_CT;
		p[i].vmid = 201 + i;
		p[i].state = TRANSPORT_PROBE_ERROR;
	}
	p[3].kind = TRANSPORT_PROBE_AGENT; /* a VM with a CT's id elsewhere: untouched */
	p[3].vmid = 201;
	assert_false(agentbatch_ct_line("VMID       Status     Lock         Name", p, done, 4));
	assert_true(agentbatch_ct_line("201        running                 ct201", p, done, 4));
	assert_int_equal(p[0].state, TRANSPORT_PROBE_OK);
	assert_true(agentbatch_ct_line("202        stopped    backup       ct202", p, done, 4));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_NOT_RUNNING);
	assert_false(agentbatch_ct_line("203        mounted                 ct203", p, done, 4));
	assert_false(done[2]);
	assert_false(agentbatch_ct_line("999        running                 x", p, done, 4));
	assert_false(done[3]);
	assert_int_equal(p[3].state, TRANSPORT_PROBE_ERROR);
}

/* ---- the node program itself, against sockets that behave like QEMU's:
 * one client served at a time, a queue of one, EAGAIN when it is full. */

static int listen_at(const char *dir, int vmid)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%d.qga", dir, vmid);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	return fd;
}

/* A non-blocking connect: 0, or the errno. */
static int try_connect(const char *dir, int vmid, int *out)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%d.qga", dir, vmid);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		*out = fd;
		return 0;
	}
	int e = errno;
	close(fd);
	return e;
}

/* An agent that answers: one client at a time; each gets, before its own
 * replies, a stale reply meant for an earlier client (as QEMU's socket may
 * pass on), which the program must skip. */
static void *answering_agent(void *arg)
{
	int lfd = *(int *)arg;

	for (int served = 0; served < 1; served++) {
		char req[4096] = "";
		size_t len = 0;
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			break;
		while (len < sizeof(req) - 1 && strstr(req, "guest-info") == NULL) {
			ssize_t r = read(c, req + len, sizeof(req) - 1 - len);
			if (r <= 0)
				break;
			len += (size_t)r;
			req[len] = '\0';
		}
		const char *id = strstr(req, "\"id\":");
		char out[1024];
		int n = snprintf(out, sizeof(out),
		                 "\xff{\"return\": 1}\n{\"return\": {\"supported_commands\": []}}\n"
		                 "\xff{\"return\": %ld}\n%s\n",
		                 id ? strtol(id + 5, NULL, 10) : 0L, INFO_ON);
		assert_int_equal(write(c, out, (size_t)n), n);
		/* Served until the client closes, as QEMU serves it. */
		while (read(c, req, sizeof(req)) > 0)
			;
		close(c);
	}
	return NULL;
}

/* An agent that accepts and never answers (a hung guest). */
static void *silent_agent(void *arg)
{
	int lfd = *(int *)arg;
	int c = accept(lfd, NULL, NULL);
	char b[4096];

	while (c >= 0 && read(c, b, sizeof(b)) > 0)
		;
	if (c >= 0)
		close(c);
	return NULL;
}

static char *run_program(const char *dir, const char *wait_s, const char *const *ids, size_t n)
{
	int pfd[2];
	pid_t pid;
	char *out = calloc(1, 65536);
	size_t len = 0;
	ssize_t r;
	int st;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *argv[16] = {"perl", "-e", agentbatch_program, dir, wait_s};
		for (size_t i = 0; i < n; i++)
			argv[5 + i] = ids[i];
		dup2(pfd[1], 1);
		close(pfd[0]);
		execvp("perl", (char *const *)argv);
		fprintf(stderr, "agentbatch_test: exec perl: %s\n", strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	while ((r = read(pfd[0], out + len, 65535 - len)) > 0)
		len += (size_t)r;
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("the probe program (perl) %s %d; its output: %.500s",
		         WIFEXITED(st) ? "exited with status" : "was killed by signal",
		         WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), out);
	return out;
}

/* Busy, silent, answering (past a stale reply), no socket, nobody
 * listening: each VM gets its line, and the program never waits on a full
 * queue.  (A program that blocked in that connect would report it refused
 * or not at all, and would keep holding the agents before it.) */
static void test_program_takes_turns(void **state)
{
	char dir[] = "/tmp/agentbatch_test.XXXXXX";
	int ans, busy, quiet, gone, q[4], nq = 0, held = -1;
	pthread_t ta, tq;
	const char *ids[] = {"101", "102", "103", "104", "105"};
	struct transport_probe p[5];
	bool done[5], silent[5] = {false};
	struct agentbatch_stats st = {0};
	(void)state;

	assert_non_null(mkdtemp(dir));
	ans = listen_at(dir, 101);
	busy = listen_at(dir, 102);
	quiet = listen_at(dir, 103);
	gone = listen_at(dir, 105);
	close(gone); /* its file stays: a stale socket, as after a VM crashed */
	/* 102: nobody accepts, so its queue fills; the next connect is EAGAIN. */
	while (nq < 4 && try_connect(dir, 102, &q[nq]) == 0)
		nq++;
	assert_true(nq < 4);
	assert_int_equal(try_connect(dir, 102, &held), EAGAIN);
	assert_int_equal(pthread_create(&ta, NULL, answering_agent, &ans), 0);
	assert_int_equal(pthread_create(&tq, NULL, silent_agent, &quiet), 0);

	char *out = run_program(dir, "0.5", ids, 5);
	assert_non_null(strstr(out, "102 busy\n"));
	assert_non_null(strstr(out, "103 timeout\n"));
	assert_non_null(strstr(out, "104 nosocket\n"));
	assert_non_null(strstr(out, "105 refused "));
	assert_non_null(strstr(out, "101 reply {\"return\": {\"version\": \"7.2.0\""));

	setup(p, done, 5);
	p[4].kind = TRANSPORT_PROBE_AGENT;
	p[4].vmid = 105;
	for (char *line = out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		agentbatch_line(line, p, done, silent, 5, &st);
	}
	assert_true(done[0]);
	assert_int_equal(p[0].state, TRANSPORT_PROBE_OK); /* the real answer, not the stale one */
	assert_false(done[1] || done[2] || done[3] || done[4]);
	assert_true(silent[1] && silent[2]);
	assert_false(silent[3] || silent[4]);
	assert_int_equal(st.answered, 1);
	assert_int_equal(st.busy, 1);
	assert_int_equal(st.silent, 2); /* the silent one and the refused one */

	free(out);
	pthread_join(ta, NULL);
	shutdown(quiet, SHUT_RDWR);
	close(quiet);
	for (int i = 0; i < nq; i++)
		close(q[i]);
	pthread_join(tq, NULL);
	close(ans);
	close(busy);
	for (int v = 101; v <= 105; v++) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%d.qga", dir, v);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answers),
	    cmocka_unit_test(test_busy_and_counts),
	    cmocka_unit_test(test_left_for_qm),
	    cmocka_unit_test(test_ct_list),
	    cmocka_unit_test(test_program_takes_turns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
