/* yamltree_test.c -- positions, shapes and refusals of lib/yamltree. */
#include "lib/yamltree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static struct yt_node *parse(const char *s, char *err)
{
	return yt_parse(s, strlen(s), "t.yaml", err, 256);
}

static void test_nested_with_positions(void **state)
{
	char err[256];
	const char *doc = "version: 1\n"
	                  "rules:\n"
	                  "  - id: host-packages\n"
	                  "    words: [apt-get, 'dpkg']\n"
	                  "  - id: \"x\"\n";
	(void)state;

	struct yt_node *root = parse(doc, err);
	assert_non_null(root);
	assert_int_equal(root->kind, YT_MAP);
	assert_int_equal(root->n, 2);
	const struct yt_node *rules = yt_get(root, "rules");
	assert_non_null(rules);
	assert_int_equal(rules->kind, YT_SEQ);
	assert_int_equal(rules->n, 2);
	const struct yt_node *r0 = rules->items[0];
	assert_int_equal(r0->line, 3);
	assert_int_equal(r0->col, 5);
	const struct yt_node *words = yt_get(r0, "words");
	assert_int_equal(words->n, 2);
	assert_string_equal(words->items[1]->scalar, "dpkg");
	assert_true(words->items[1]->quoted);
	assert_false(words->items[0]->quoted);
	assert_int_equal(words->line, 4);
	assert_null(yt_get(root, "missing"));
	assert_null(yt_get(words, "x"));
	yt_free(root);
}

static void test_errors_name_file_line_column(void **state)
{
	char err[256];
	(void)state;

	assert_null(parse("a: 1\nb: [1, 2\n", err));
	assert_true(strncmp(err, "t.yaml:", 7) == 0);
	assert_null(parse("a: 1\na: 2\n", err));
	assert_string_equal(err, "t.yaml:2:1: duplicate key \"a\"");
	assert_null(parse("a: &x 1\nb: *x\n", err));
	assert_non_null(strstr(err, "anchors are not supported"));
	assert_null(parse("a: 1\n---\nb: 2\n", err));
	assert_non_null(strstr(err, "only one YAML document"));
	assert_null(parse("? [a, b]\n: 1\n", err));
	assert_non_null(strstr(err, "mapping key"));
}

static void test_empty_and_deep(void **state)
{
	char err[256];
	char deep[400];
	(void)state;

	struct yt_node *root = parse("", err);
	assert_non_null(root);
	assert_int_equal(root->kind, YT_MAP);
	assert_int_equal(root->n, 0);
	yt_free(root);

	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	deep[200] = '\0';
	assert_null(parse(deep, err));
	assert_non_null(strstr(err, "nesting too deep"));
	yt_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nested_with_positions),
	    cmocka_unit_test(test_errors_name_file_line_column),
	    cmocka_unit_test(test_empty_and_deep),
	};
	return cmocka_run_group_tests_name("yamltree", tests, NULL, NULL);
}
