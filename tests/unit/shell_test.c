/* shell_test.c -- the one shell (transport/shell.h): its line, word for word,
 * and, through a real login-shell parse and a real bash, that the command
 * runs with exactly its argv and environment whatever the caller's
 * environment holds: no startup file read, not in POSIX mode. */
#include "transport/shell.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/buf.h"
#include "transport/jail.h"

/* The one shell's argv before the command, NUL-separated. */
#define ONE_ARGV "/bin/bash\0--noprofile\0--norc\0+O\0extglob\0+O\0xpg_echo\0-c\0"

static void test_line_words(void **state)
{
	struct buf b = BUF_INIT;
	(void)state;

	shell_line(&b, "12.3.456", "echo 'hi'");
	assert_string_equal(buf_str(&b),
	                    "/usr/bin/env -i "
	                    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
	                    "HOME=/root LANG=C.UTF-8 AIRLOCK_EXEC_ID=12.3.456 "
	                    "/bin/bash --noprofile --norc +O extglob +O xpg_echo -c "
	                    "'echo '\\''hi'\\'''");
	buf_reset(&b);
	/* The jail's unconfined form is the same shell. */
	jail_command_line(&b, TRANSPORT_JAIL_NONE, NULL, "", 0, "true");
	assert_string_equal(buf_str(&b),
	                    "/bin/bash --noprofile --norc +O extglob +O xpg_echo -c 'true'");
	buf_reset(&b);
	/* Only digits and dots of a tag reach the line. */
	shell_env_words(&b, "1.2; touch /tmp/x");
	assert_non_null(strstr(buf_str(&b), " AIRLOCK_EXEC_ID=1.2 "));
	assert_null(strstr(buf_str(&b), "touch"));
	buf_free(&b);

	/* The plain form for a program that execs the command itself. */
	assert_string_equal(shell_argv[0], SHELL_PATH);
	assert_string_equal(shell_argv[1], "--noprofile");
	assert_string_equal(shell_argv[2], "--norc");
	assert_string_equal(shell_argv[3], "+O");
	assert_string_equal(shell_argv[4], "extglob");
	assert_string_equal(shell_argv[5], "+O");
	assert_string_equal(shell_argv[6], "xpg_echo");
	assert_string_equal(shell_argv[7], "-c");
	assert_null(shell_argv[8]);
	assert_string_equal(shell_env[1], "HOME=/root");
	assert_null(shell_env[3]);
}

static void test_tags(void **state)
{
	char t[SHELL_TAG_MAX], u[SHELL_TAG_MAX];
	(void)state;

	shell_tag(t, 4242, 7, 1764500000123LL);
	assert_string_equal(t, "4242.7.1764500000123");
	assert_true(shell_tag_valid(t));
	shell_tag(u, 2147483647, 9223372036854775807L, 9223372036854775807LL);
	assert_true(shell_tag_valid(u));
	assert_false(shell_tag_valid(""));
	assert_false(shell_tag_valid(NULL));
	assert_false(shell_tag_valid("1.2 x"));
	assert_false(shell_tag_valid("1;2"));
}

/* Runs line the way the node's login shell does (/bin/sh -c LINE) with the
 * given environment; returns its stdout. */
static char *run_line(const char *line, char *const envp[], int *status, size_t *len)
{
	int p[2];
	struct buf out = BUF_INIT;
	char chunk[4096];
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execle("/bin/sh", "sh", "-c", line, (char *)NULL, envp);
		_exit(99);
	}
	close(p[1]);
	while ((n = read(p[0], chunk, sizeof(chunk))) > 0)
		buf_append(&out, chunk, (size_t)n);
	close(p[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
	*len = out.len;
	return buf_steal(&out);
}

/* What a caller's environment might hold: every way bash could be made to
 * read a file or change its language before the command. */
static char bash_env[64], env_env[80], marker[64];

static void hostile_files(void)
{
	FILE *f;

	snprintf(marker, sizeof(marker), "/tmp/airlock-shell-test.%d.ran", (int)getpid());
	snprintf(bash_env, sizeof(bash_env), "/tmp/airlock-shell-test.%d.rc", (int)getpid());
	snprintf(env_env, sizeof(env_env), "ENV=%s", bash_env);
	f = fopen(bash_env, "w");
	assert_non_null(f);
	fprintf(f, "echo startup-file-read > %s\n", marker);
	fclose(f);
	unlink(marker);
}

static void test_runs_as_modelled(void **state)
{
	char be[128];
	char *envp[] = {be,
	                env_env,
	                "BASHOPTS=extglob:nullglob",
	                "SHELLOPTS=posix",
	                "POSIXLY_CORRECT=1",
	                "PATH=/nonexistent",
	                "HOME=/nonexistent",
	                "SSH_CONNECTION=10.0.0.1 1 10.0.0.2 22",
	                "LC_ALL=C",
	                NULL};
	struct buf line = BUF_INIT, want = BUF_INIT;
	/* The shell's own argv and environment, as the kernel holds them
	 * (read by the shell itself: /proc/self is bash), then its mode. */
	const char *cmd = "LC_ALL=C; "
	                  "d() { while IFS= read -r -d '' a; do printf '%s\\0' \"$a\"; done; }; "
	                  "d </proc/self/cmdline; echo; d </proc/self/environ; echo; "
	                  "shopt -qo posix && echo posix || echo bash-mode; "
	                  "shopt -q extglob && echo extglob || echo no-extglob";
	int st;
	size_t len;
	char *out;
	(void)state;

	hostile_files();
	snprintf(be, sizeof(be), "BASH_ENV=%s", bash_env);

	/* Without the one shell's line the attacks work, so the test below
	 * can fail: bash takes SHELLOPTS (and then, in POSIX mode, skips
	 * BASH_ENV), and without it reads BASH_ENV before the command. */
	buf_puts(&line, "/bin/bash -c 'shopt -qo posix && echo posix'");
	out = run_line(buf_str(&line), envp, &st, &len);
	assert_true(WIFEXITED(st));
	assert_string_equal(out, "posix\n");
	free(out);
	out = run_line(buf_str(&line), (char *[]){be, NULL}, &st, &len);
	assert_int_equal(access(marker, F_OK), 0);
	unlink(marker);
	free(out);
	buf_reset(&line);

	shell_line(&line, "77.1.2", cmd);
	out = run_line(buf_str(&line), envp, &st, &len);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	buf_append(&want, ONE_ARGV, sizeof(ONE_ARGV) - 1);
	buf_puts(&want, cmd);
	buf_append(&want, "\0\n", 2);
	for (size_t i = 0; shell_env[i]; i++) {
		buf_puts(&want, shell_env[i]);
		buf_putc(&want, '\0');
	}
	buf_puts(&want, "AIRLOCK_EXEC_ID=77.1.2");
	buf_append(&want, "\0\nbash-mode\nno-extglob\n", 23);
	assert_int_equal(len, want.len);
	assert_memory_equal(out, want.data, want.len);
	assert_int_equal(access(marker, F_OK), -1); /* no startup file was read */
	free(out);
	buf_free(&line);
	buf_free(&want);
	unlink(bash_env);
}

/* Runs prog as name with the one shell's options and command (or, pinned
 * false, with only --noprofile --norc -c); its exit status. */
static int run_as(const char *prog, const char *name, bool pinned, const char *command)
{
	const char *argv[16];
	size_t n = 0;
	int st;
	pid_t pid;

	for (size_t i = 0; shell_argv[i] != NULL; i++)
		assert_true(i < sizeof(argv) / sizeof(argv[0]) - 2);

	argv[n++] = name;
	for (size_t i = 1; shell_argv[i] != NULL; i++)
		if (pinned ||
		    (strcmp(shell_argv[i], "+O") != 0 && strcmp(shell_argv[i - 1], "+O") != 0))
			argv[n++] = shell_argv[i];
	argv[n++] = command;
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		freopen("/dev/null", "w", stderr);
		execv(prog, (char *const *)argv);
		_exit(99);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A /bin/bash that is another shell runs nothing: dash and busybox ash
 * refuse the one shell's +O options, though both accept the rest (so
 * without the pins they would run the command the classifier read as bash). */
static void test_other_shells_refuse(void **state)
{
	static const char *shells[][2] = {{"/bin/dash", "dash"}, {"/bin/busybox", "ash"}};
	char cmd[128];
	(void)state;

	snprintf(cmd, sizeof(cmd), "echo ran > /tmp/airlock-shell-test.%d.other", (int)getpid());
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++) {
		char other[64];
		snprintf(other, sizeof(other), "/tmp/airlock-shell-test.%d.other", (int)getpid());
		if (access(shells[i][0], X_OK) != 0) {
			fail_msg("%s is missing (scripts/install-deps installs it)", shells[i][0]);
			continue;
		}
		unlink(other);
		if (strcmp(shells[i][1], "ash") == 0) {
			/* busybox ash takes --noprofile --norc and runs the command */
			assert_int_equal(run_as(shells[i][0], shells[i][1], false, cmd), 0);
			assert_int_equal(access(other, F_OK), 0);
			unlink(other);
		}
		assert_int_not_equal(run_as(shells[i][0], shells[i][1], true, cmd), 0);
		assert_int_equal(access(other, F_OK), -1);
	}
	/* and bash runs it */
	assert_int_equal(run_as(SHELL_PATH, "bash", true, cmd), 0);
	snprintf(cmd, sizeof(cmd), "/tmp/airlock-shell-test.%d.other", (int)getpid());
	assert_int_equal(access(cmd, F_OK), 0);
	unlink(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_line_words),
	    cmocka_unit_test(test_tags),
	    cmocka_unit_test(test_runs_as_modelled),
	    cmocka_unit_test(test_other_shells_refuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
