/* buf_test.c -- growth, caps and ownership of struct buf. */
#include "lib/buf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_append_grows(void **state)
{
	struct buf b = BUF_INIT;
	(void)state;

	assert_string_equal(buf_str(&b), "");
	for (int i = 0; i < 1000; i++)
		buf_putc(&b, 'x');
	assert_int_equal(b.len, 1000);
	assert_false(b.truncated);
	buf_printf(&b, "%d-%s", 42, "end");
	assert_int_equal(b.len, 1006);
	assert_string_equal(buf_str(&b) + 1000, "42-end");
	buf_free(&b);
}

static void test_limit_truncates(void **state)
{
	struct buf b;
	(void)state;

	buf_init(&b, 5);
	buf_puts(&b, "abc");
	assert_false(b.truncated);
	buf_puts(&b, "defgh");
	assert_true(b.truncated);
	assert_int_equal(b.len, 5);
	assert_string_equal(buf_str(&b), "abcde");
	buf_puts(&b, "zzz");
	assert_int_equal(b.len, 5);
	buf_free(&b);
}

static void test_steal_and_long_printf(void **state)
{
	struct buf b = BUF_INIT;
	char big[1000];
	(void)state;

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_printf(&b, "<%s>", big);
	assert_int_equal(b.len, 1001);
	char *s = buf_steal(&b);
	assert_int_equal(strlen(s), 1001);
	assert_int_equal(b.len, 0);
	assert_null(b.data);
	free(s);
	s = buf_steal(&b);
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_append_grows),
	    cmocka_unit_test(test_limit_truncates),
	    cmocka_unit_test(test_steal_and_long_printf),
	};
	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
