/* log_test.c -- a log value can neither split its line nor act on a terminal. */
#include "lib/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_values_stay_bare),
	    cmocka_unit_test(test_hidden_characters_are_escapes),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
