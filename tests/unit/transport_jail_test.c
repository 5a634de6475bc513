/* transport_jail_test.c -- the jail helper's remote line, its install script
 * and its report (transport/jail.c), each through a real /bin/sh where the
 * shell is what reads it. */
#include "transport/jail.h"
#include "transport/shell.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/buf.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Runs script with /bin/sh -c; its stdout and stderr together into out. */
static int sh(const char *script, struct buf *out)
{
	char *q = shellquote(script);
	char *cmd = xasprintf("/bin/sh -c %s 2>&1", q);
	FILE *p = popen(cmd, "r");
	char chunk[4096];
	size_t n;
	int st;

	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		buf_append(out, chunk, n);
	st = pclose(p);
	free(cmd);
	free(q);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_unconfined_line(void **state)
{
	struct buf b = BUF_INIT;
	(void)state;

	jail_command_line(&b, TRANSPORT_JAIL_NONE, NULL, SHA, 5000, "echo 'hi'");
	assert_string_equal(buf_str(&b), SHELL_EXEC_WORDS " 'echo '\\''hi'\\'''");
	buf_free(&b);
}

/* The words after the check script reach the helper as these arguments,
 * however the command and the paths are spelled. */
static void test_helper_arguments(void **state)
{
	static const char *const secrets[] = {"/etc/shadow", "/home/*/.ssh"};
	static const char *const writes[] = {"/etc/x y", "/var/lib/app/"};
	struct transport_jail_spec spec = {.net_view = true,
	                                   .secrets = secrets,
	                                   .nsecrets = 2,
	                                   .writes = writes,
	                                   .nwrites = 2,
	                                   .mem_bytes = 1 << 26,
	                                   .tasks = 9,
	                                   .cpu_pct = 50,
	                                   .scratch_bytes = 1 << 23};
	struct buf b = BUF_INIT, out = BUF_INIT;
	const char *cmd = "echo \"$HOME\" 'it''s' $(id) \\\n";
	(void)state;

	jail_command_line(&b, TRANSPORT_JAIL_WRITE, &spec, SHA, 7000, cmd);
	const char *words = strstr(buf_str(&b), "' airlock-jail -t write ");
	assert_non_null(words);
	assert_non_null(strstr(buf_str(&b), SHA));
	char *script = xasprintf("printf '[%%s]' %s", words + 2);
	assert_int_equal(sh(script, &out), 0);
	char *want =
	    xasprintf("[airlock-jail][-t][write][-n][-d][7000][-m][67108864][-p][9][-c][50]"
	              "[-s][8388608][-S][/etc/shadow][-S][/home/*/.ssh][-w][/etc/x y][-w]"
	              "[/var/lib/app/][--][%s]",
	              cmd);
	assert_string_equal(buf_str(&out), want);
	free(want);
	free(script);
	buf_free(&out);
	buf_free(&b);

	/* No write set outside the write tier, and nothing but the tier by default. */
	jail_command_line(&b, TRANSPORT_JAIL_USER, &spec, SHA, 0, "true");
	assert_null(strstr(buf_str(&b), " -w "));
	buf_free(&b);
	jail_command_line(&b, TRANSPORT_JAIL_ROOT, NULL, SHA, 0, "true");
	assert_non_null(strstr(buf_str(&b), "' airlock-jail -t root -- 'true'"));
	buf_free(&b);
}

/* Where the helper is not (or not this one), the check refuses before
 * anything runs, and the report says so. */
static void test_missing_helper(void **state)
{
	struct buf b = BUF_INIT, out = BUF_INIT;
	char why[200], facts[64];
	struct stat st;
	(void)state;

	if (stat(JAIL_HELPER_PATH, &st) == 0)
		skip(); /* this machine has a helper installed: a wrong SHA is enough below */
	jail_command_line(&b, TRANSPORT_JAIL_USER, NULL, SHA, 0, "echo ran");
	assert_int_equal(sh(buf_str(&b), &out), 125);
	assert_null(strstr(buf_str(&out), "ran"));
	size_t len = out.len;
	assert_int_equal(jail_report(TRANSPORT_JAIL_USER, out.data, &len, why, sizeof(why), facts,
	                             sizeof(facts)),
	                 JAIL_REPORT_MISSING);
	assert_non_null(strstr(why, "not installed"));
	buf_free(&out);
	buf_free(&b);
}

static void test_report(void **state)
{
	char why[300], facts[128];
	char err[256];
	size_t len;
	(void)state;

	snprintf(err, sizeof(err), "airlock-jail: ready user uid=7 net=own limits=cgroup2\nboom\n");
	len = strlen(err);
	assert_int_equal(
	    jail_report(TRANSPORT_JAIL_USER, err, &len, why, sizeof(why), facts, sizeof(facts)),
	    JAIL_REPORT_READY);
	assert_string_equal(err, "boom\n");
	assert_int_equal(len, 5);
	assert_string_equal(facts, "uid=7 net=own limits=cgroup2");

	/* The ready line of another tier is not this one's. */
	snprintf(err, sizeof(err), "airlock-jail: ready root uid=0\n");
	len = strlen(err);
	assert_int_equal(
	    jail_report(TRANSPORT_JAIL_USER, err, &len, why, sizeof(why), facts, sizeof(facts)),
	    JAIL_REPORT_FAILED);
	snprintf(err, sizeof(err), "airlock-jail: ready userx\n");
	len = strlen(err);
	assert_int_equal(
	    jail_report(TRANSPORT_JAIL_USER, err, &len, why, sizeof(why), facts, sizeof(facts)),
	    JAIL_REPORT_FAILED);

	snprintf(err, sizeof(err),
	         "sh: 1: warning\nairlock-jail: cannot confine: new namespaces: "
	         "Operation not permitted\n");
	len = strlen(err);
	assert_int_equal(
	    jail_report(TRANSPORT_JAIL_WRITE, err, &len, why, sizeof(why), facts, sizeof(facts)),
	    JAIL_REPORT_FAILED);
	assert_string_equal(why, "new namespaces: Operation not permitted (sh: 1: warning)");

	/* A command's own words after the ready line change nothing. */
	snprintf(err, sizeof(err),
	         "airlock-jail: ready write uid=0\nairlock-jail: not installed\n");
	len = strlen(err);
	assert_int_equal(
	    jail_report(TRANSPORT_JAIL_WRITE, err, &len, why, sizeof(why), facts, sizeof(facts)),
	    JAIL_REPORT_READY);
	assert_string_equal(err, "airlock-jail: not installed\n");
	len = 0;
	err[0] = '\0';
	assert_int_equal(
	    jail_report(TRANSPORT_JAIL_USER, err, &len, why, sizeof(why), facts, sizeof(facts)),
	    JAIL_REPORT_FAILED);
	assert_string_equal(why, "the jail ended without a word");
}

/* The install script refuses a target of another architecture before it
 * touches anything. */
static void test_install_other_arch(void **state)
{
	char *script = jail_install_script(SHA, "sparc64");
	struct buf out = BUF_INIT;
	char why[300], facts[8];
	size_t len;
	(void)state;

	assert_int_equal(sh(script, &out), 125);
	len = out.len;
	assert_int_equal(jail_report(TRANSPORT_JAIL_USER, out.data, &len, why, sizeof(why), facts,
	                             sizeof(facts)),
	                 JAIL_REPORT_FAILED);
	assert_non_null(strstr(why, "the jail helper is built for sparc64"));
	buf_free(&out);
	free(script);
}

static void test_names(void **state)
{
	enum transport_jail j;
	(void)state;

	assert_string_equal(jail_name(TRANSPORT_JAIL_WRITE), "write");
	assert_int_equal(jail_parse("write", &j), 0);
	assert_int_equal(j, TRANSPORT_JAIL_WRITE);
	assert_int_equal(jail_parse("full", &j), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unconfined_line),    cmocka_unit_test(test_helper_arguments),
	    cmocka_unit_test(test_missing_helper),     cmocka_unit_test(test_report),
	    cmocka_unit_test(test_install_other_arch), cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
