/* zerto_flr_test.c -- mapping guest paths into the FLR namespace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/buf.h"
#include "zerto/flr.h"

#include <stdlib.h>
#include <string.h>

static void split_ok(const char *guest, char want_drive, const char *want_rel)
{
	char drive = 'x', *rel = NULL;

	if (zerto_flr_split_guest_path(guest, &drive, &rel) != 0)
		fail_msg("%s: refused", guest);
	assert_int_equal(drive, want_drive);
	assert_string_equal(rel, want_rel);
	free(rel);
}

static void split_bad(const char *guest)
{
	char drive = 'x', *rel = (char *)"sentinel";

	if (zerto_flr_split_guest_path(guest, &drive, &rel) != -1)
		fail_msg("%s: accepted as %s", guest, rel);
	assert_null(rel);
	assert_int_equal(drive, '\0');
}

static void test_split_examples(void **state)
{
	(void)state;
	split_ok("/etc/nginx/nginx.conf", '\0', "etc/nginx/nginx.conf");
	split_ok("/a", '\0', "a");
	split_ok("/home/j/app.yaml", '\0', "home/j/app.yaml");
	split_ok("/a/...b/c", '\0', "a/...b/c");
	split_ok("/a\\b/c", '\0', "a\\b/c"); /* a backslash is part of a Linux name */
	split_ok("C:\\Users\\j\\app.conf", 'C', "Users/j/app.conf");
	split_ok("c:/Users/j/app.conf", 'C', "Users/j/app.conf");
	split_ok("D:\\a/b\\c", 'D', "a/b/c");
	split_bad(NULL);
	split_bad("");
	split_bad("/");
	split_bad("etc/passwd");
	split_bad("/etc/");
	split_bad("//etc");
	split_bad("/etc/./passwd");
	split_bad("/etc/../passwd");
	split_bad("/..");
	split_bad("C:");
	split_bad("C:\\");
	split_bad("C:x\\y");
	split_bad("1:\\x");
	split_bad("\\\\server\\share\\x");
	split_bad("C:\\a\\..\\b");
	split_bad("C:\\a\\\\b");
}

/* Generated paths: components drawn from names that are fine and names that
 * are not ("", ".", ".."), joined with the platform's separators; a path is
 * accepted exactly when every component is fine, and then maps to the
 * components joined with '/'. */
static void test_split_generated(void **state)
{
	static const char *const good[] = {"etc",    "a b",
	                                   "...",    ".hidden",
	                                   "x.conf", "\xc3\xa9t\xc3\xa9",
	                                   "-",      "name with 'quote'",
	                                   "$HOME",  "*"};
	static const char *const bad[] = {"", ".", ".."};
	unsigned seed = 12345;

	(void)state;
	for (int round = 0; round < 5000; round++) {
		struct buf g = BUF_INIT, want = BUF_INIT;
		int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
		bool windows = ((seed >> 8) & 3) == 0, ok = true;
		char letter = (char)('A' + (int)((seed >> 4) % 26));

		buf_init(&g, 0);
		buf_init(&want, 0);
		if (windows)
			buf_printf(&g, "%c:", (seed & 1) ? letter : (char)(letter + 32));
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			bool pick_bad = ((seed >> 16) % 9) == 0;
			const char *c = pick_bad ? bad[(seed >> 20) % 3] : good[(seed >> 20) % 10];
			const char *sep = windows && ((seed >> 12) & 1) ? "\\" : "/";

			ok = ok && !pick_bad;
			buf_printf(&g, "%s%s", sep, c);
			buf_printf(&want, "%s%s", i ? "/" : "", c);
		}
		char drive = 'x', *rel = NULL;
		int rc = zerto_flr_split_guest_path(buf_str(&g), &drive, &rel);
		if (ok) {
			if (rc != 0)
				fail_msg("refused %s", buf_str(&g));
			assert_string_equal(rel, buf_str(&want));
			assert_int_equal(drive, windows ? letter : '\0');
		} else if (rc != -1) {
			fail_msg("accepted %s as %s", buf_str(&g), rel);
		}
		free(rel);
		buf_free(&g);
		buf_free(&want);
	}
}

static void test_partition_is_drive(void **state)
{
	(void)state;
	assert_true(zerto_flr_partition_is_drive("partition#2 NTFS (C:)", 'C'));
	assert_true(zerto_flr_partition_is_drive("C: NTFS", 'C'));
	assert_true(zerto_flr_partition_is_drive("Local Disk (c:)", 'C'));
	assert_true(zerto_flr_partition_is_drive("partition#3 NTFS D:\\", 'D'));
	assert_false(zerto_flr_partition_is_drive("partition#2 NTFS (C:)", 'D'));
	assert_false(zerto_flr_partition_is_drive("ABC: data", 'C'));
	assert_false(zerto_flr_partition_is_drive("partition#1 Ext4", 'E'));
	assert_false(zerto_flr_partition_is_drive("", 'C'));
	assert_false(zerto_flr_partition_is_drive(NULL, 'C'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_examples),
	    cmocka_unit_test(test_split_generated),
	    cmocka_unit_test(test_partition_is_drive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
