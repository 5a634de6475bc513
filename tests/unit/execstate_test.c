/* execstate_test.c -- the C names of execution states are the schema's: the
 * CHECK on executions.state lists exactly them, every transition the
 * migrations allow names known states, and no transition leaves a state C
 * calls final. */
#include "lib/execstate.h"
#include "lib/readfile.h"

#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_round_trip(void **state)
{
	(void)state;
	for (int i = 0; i < EXEC_STATE_COUNT; i++) {
		enum exec_state s;
		assert_int_equal(exec_state_parse(exec_state_name((enum exec_state)i), &s), 0);
		assert_int_equal(s, i);
		assert_string_equal(exec_state_names[i], exec_state_name((enum exec_state)i));
	}
	assert_null(exec_state_names[EXEC_STATE_COUNT]);
	assert_string_equal(exec_state_name((enum exec_state)EXEC_STATE_COUNT), "invalid");
	assert_false(exec_state_is_final((enum exec_state)EXEC_STATE_COUNT));
}

static void test_parse_refuses(void **state)
{
	enum exec_state s = EXEC_QUEUED;

	(void)state;
	assert_int_equal(exec_state_parse(NULL, &s), -1);
	assert_int_equal(exec_state_parse("", &s), -1);
	assert_int_equal(exec_state_parse("Succeeded", &s), -1);
	assert_int_equal(exec_state_parse("succeeded ", &s), -1);
	assert_int_equal(exec_state_parse("pending", &s), -1);
	assert_int_equal(s, EXEC_QUEUED); /* untouched on refusal */
}

/* The quoted words from p up to the first occurrence of end. */
static int quoted_words(const char *p, const char *end, char words[][32], int max)
{
	int n = 0;
	const char *stop = strstr(p, end);

	assert_non_null(stop);
	while ((p = strchr(p, '\'')) != NULL && p < stop) {
		const char *q = strchr(p + 1, '\'');
		assert_non_null(q);
		assert_true(q - p - 1 < 32);
		assert_true(n < max);
		snprintf(words[n++], 32, "%.*s", (int)(q - p - 1), p + 1);
		p = q + 1;
	}
	return n;
}

static char *migration(const char *path)
{
	char err[256];
	char *text = readfile(path, 1 << 22, NULL, err, sizeof(err));

	if (text == NULL)
		fail_msg("%s", err);
	return text;
}

static void test_schema_check_matches(void **state)
{
	char *sql = migration("migrations/0001_schema.sql");
	const char *p = strstr(sql, "DEFAULT 'received' CHECK (state IN (");
	char words[32][32];
	int n;

	(void)state;
	assert_non_null(p);
	n = quoted_words(p + strlen("DEFAULT 'received'"), "))", words, 32);
	assert_int_equal(n, EXEC_STATE_COUNT);
	for (int i = 0; i < n; i++) {
		enum exec_state s;
		if (exec_state_parse(words[i], &s) < 0)
			fail_msg("schema state %s has no C name", words[i]);
	}
	free(sql);
}

static void test_transitions_respect_finality(void **state)
{
	glob_t g;
	int pairs = 0;

	(void)state;
	assert_int_equal(glob("migrations/[0-9][0-9][0-9][0-9]_*.sql", 0, NULL, &g), 0);
	for (size_t f = 0; f < g.gl_pathc; f++) {
		char *sql = migration(g.gl_pathv[f]);
		const char *p = sql;
		while ((p = strstr(p, "INSERT INTO airlock.transitions")) != NULL) {
			char words[64][32];
			int n = quoted_words(p, ";", words, 64);
			assert_int_equal(n % 2, 0);
			for (int i = 0; i < n; i += 2) {
				enum exec_state from, to;
				if (exec_state_parse(words[i], &from) < 0 ||
				    exec_state_parse(words[i + 1], &to) < 0)
					fail_msg("%s: transition %s -> %s names an unknown state",
					         g.gl_pathv[f], words[i], words[i + 1]);
				if (exec_state_is_final(from))
					fail_msg("%s: transition %s -> %s leaves a final state",
					         g.gl_pathv[f], words[i], words[i + 1]);
				pairs++;
			}
			p++;
		}
		free(sql);
	}
	globfree(&g);
	assert_true(pairs >= 20); /* the migrations were found and read */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_parse_refuses),
	    cmocka_unit_test(test_schema_check_matches),
	    cmocka_unit_test(test_transitions_respect_finality),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
