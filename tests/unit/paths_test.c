/* paths_test.c -- where airlock looks for what it ships. */
#include "lib/paths.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_env_overrides(void **state)
{
	char *p;
	(void)state;

	setenv("AIRLOCK_SHARE", "/opt/airlock-share", 1);
	p = paths_share();
	assert_string_equal(p, "/opt/airlock-share");
	free(p);
	p = paths_share_sub("migrations");
	assert_string_equal(p, "/opt/airlock-share/migrations");
	free(p);
	assert_string_equal(paths_share_origin(), "AIRLOCK_SHARE");
	unsetenv("AIRLOCK_SHARE");
}

/* This test binary lives in build/unit/, not build/bin/: it is no checkout's
 * airlock, so it gets the directory compiled in. */
static void test_built_in_default(void **state)
{
	char *p;
	(void)state;

	unsetenv("AIRLOCK_SHARE");
	setenv("AIRLOCK_SHARE", "", 1); /* empty counts as unset */
	p = paths_share();
	assert_string_equal(paths_share_origin(), "built-in");
	assert_true(p[0] == '/');
	assert_non_null(strstr(p, "airlock"));
	free(p);
	unsetenv("AIRLOCK_SHARE");
}

static void test_config_paths(void **state)
{
	(void)state;
	assert_true(paths_confdir()[0] == '/');
	assert_non_null(strstr(paths_daemon_config(), "/airlock/airlockd.yaml"));
	assert_memory_equal(paths_daemon_config(), paths_confdir(), strlen(paths_confdir()));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_env_overrides),
	    cmocka_unit_test(test_built_in_default),
	    cmocka_unit_test(test_config_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
