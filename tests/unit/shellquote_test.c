/* shellquote_test.c -- the quoting rule, and proof by a real /bin/sh that a
 * quoted word comes back as exactly the bytes that went in. */
#include "lib/shellquote.h"

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

static void test_forms(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"", "''"},
	    {"abc", "'abc'"},
	    {"it's", "'it'\\''s'"},
	    {"'", "''\\'''"},
	    {"''", "''\\'''\\'''"},
	    {"$(id) `id` ; * \\ \"", "'$(id) `id` ; * \\ \"'"},
	    {"a\nb", "'a\nb'"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *q = shellquote(cases[i].in);
		assert_string_equal(q, cases[i].out);
		free(q);
	}
}

static void test_append_binary(void **state)
{
	struct buf b = BUF_INIT;
	const char in[] = {'x', '\xff', '\'', '\x01'};
	const char want[] = {'\'', 'x', '\xff', '\'', '\\', '\'', '\'', '\x01', '\''};
	(void)state;

	buf_puts(&b, "echo ");
	shellquote_append(&b, in, sizeof(in));
	assert_int_equal(b.len, 5 + sizeof(want));
	assert_memory_equal(b.data + 5, want, sizeof(want));
	buf_free(&b);
}

/* Runs `/bin/sh -c "printf %s <quoted>"` and returns what it printed. */
static char *through_sh(const char *word, size_t *outlen)
{
	struct buf cmd = BUF_INIT, out = BUF_INIT;
	char chunk[4096];
	size_t n;
	FILE *p;

	buf_puts(&cmd, "printf %s ");
	shellquote_append(&cmd, word, strlen(word));
	/* popen itself runs /bin/sh -c <cmd>: exactly one shell parses it. */
	p = popen(buf_str(&cmd), "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		buf_append(&out, chunk, n);
	assert_int_equal(pclose(p), 0);
	buf_free(&cmd);
	*outlen = out.len;
	return buf_steal(&out);
}

static void test_round_trip_through_sh(void **state)
{
	static const char *words[] = {
	    "plain",
	    "it's a 'quoted' \"word\"",
	    "$(touch /tmp/shellquote-pwned) `touch /tmp/shellquote-pwned` ${HOME} $HOME",
	    "a; b && c || d | e > f < g & h",
	    "* ? [a-z] ~ ~root {a,b}",
	    "line1\nline2\n\n",
	    "\\ \\\\ \\' \\n",
	    "gr\xc3\xbcn \xff\xfe \x80 invalid utf-8",
	    "-x --",
	    "'",
	    "",
	};
	char all[256];
	(void)state;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t len;
		char *got = through_sh(words[i], &len);
		assert_int_equal(len, strlen(words[i]));
		assert_memory_equal(got, words[i], len);
		free(got);
	}
	/* Every byte value but NUL, in one word. */
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	size_t len;
	char *got = through_sh(all, &len);
	assert_int_equal(len, 255);
	assert_memory_equal(got, all, 255);
	free(got);
	assert_int_not_equal(access("/tmp/shellquote-pwned", F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_append_binary),
	    cmocka_unit_test(test_round_trip_through_sh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
