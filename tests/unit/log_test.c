/* log_test.c -- a log value can neither split its line nor act on a terminal. */
#include "lib/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static const char *q(const char *s)
{
	static char out[256];
	return log_quote(s, out, sizeof(out));
}

static void test_plain_values_stay_bare(void **state)
{
	(void)state;
	assert_string_equal(q("guard.tagged"), "guard.tagged");
	assert_string_equal(q("grün"), "grün");
	assert_string_equal(q(""), "\"\"");
	assert_string_equal(q("two words"), "\"two words\"");
	assert_string_equal(q("a=b \"c\" \\d"), "\"a=b \\\"c\\\" \\\\d\"");
}

static void test_hidden_characters_are_escapes(void **state)
{
	(void)state;
	/* A newline would split the line; CR, ESC and OSC would rewrite what a
	 * terminal shows; a right-to-left override would reverse it; DEL and a
	 * C1 control are controls too.  None reaches the log as itself. */
	const char *in[] = {"a\nb",
	                    "x\rforged",
	                    "\x1b[2K\x1b]0;title\x07",
	                    "ab\xe2\x80\xae"
	                    "cd",
	                    "del\x7f",
	                    "c1\xc2\x9b"
	                    "31m",
	                    "bad\xff"};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		const char *out = q(in[i]);
		for (const char *p = out; *p; p++) {
			unsigned char c = (unsigned char)*p;
			assert_true(c >= 0x20 && c != 0x7f);
		}
		assert_null(strstr(out, "\xe2\x80\xae"));
		assert_null(strstr(out, "\xc2\x9b"));
		assert_non_null(strchr(out, '\\'));
	}
	assert_string_equal(q("x\rforged"), "\"x\\\\rforged\"");
}

/* Whether s is "YYYY-MM-DDTHH:MM:SS.mmmZ" (RFC 3339, UTC, milliseconds). */
static int rfc3339_ms(const char *s)
{
	const char *shape = "dddd-dd-ddTdd:dd:dd.dddZ";

	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return 0;
	return 1;
}

static void test_every_line_starts_with_its_time(void **state)
{
	char path[] = "/tmp/airlock-log-test.XXXXXX", line[512], ts[32];
	int fd = mkstemp(path), saved = dup(2);
	FILE *f;
	time_t before = time(NULL);

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	fflush(stderr);
	assert_true(dup2(fd, 2) == 2);
	log_msg(LOG_WARN, "exec=7 evt=test.line why=%s", q("two words"));
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	assert_non_null(f);
	rewind(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_int_equal(strncmp(line, "ts=", 3), 0);
	assert_true(rfc3339_ms(line + 3));
	assert_string_equal(line + 3 + 24, " level=warn exec=7 evt=test.line why=\"two words\"\n");
	/* The time is now (UTC), not a constant. */
	struct tm tm = {0};
	assert_non_null(strptime(line + 3, "%Y-%m-%dT%H:%M:%S", &tm));
	time_t at = timegm(&tm);
	assert_true(at >= before - 1 && at <= time(NULL) + 1);
	/* The same stamp for callers that write their own lines. */
	assert_true(rfc3339_ms(log_timestamp(ts, sizeof(ts))));
	assert_int_equal(strlen(ts), 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_values_stay_bare),
	    cmocka_unit_test(test_hidden_characters_are_escapes),
	    cmocka_unit_test(test_every_line_starts_with_its_time),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
