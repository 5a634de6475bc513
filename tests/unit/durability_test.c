/* durability_test.c -- when may airlockd send a mutation?  The judgement of
 * the database's settings, without a database. */
#include "worker/durability.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static const char *const SAFE =
    "{\"fsync\": \"on\", \"synchronous_commit\": \"off\", \"synchronous_standby_names\": \"\","
    " \"in_recovery\": false, \"standbys\": []}";

static bool judge(const struct config *c, const char *json, char *why, const char **level)
{
	return durability_judge(c, json, why, 1024, level);
}

static void test_safe_primary(void **state)
{
	struct config c = {0};
	char why[1024];
	const char *level;
	(void)state;

	/* The server's own synchronous_commit = off does not matter: airlockd's
	 * sessions set their own level. */
	assert_true(judge(&c, SAFE, why, &level));
	assert_string_equal(level, "on");
	assert_string_equal(why, "");
}

static void test_fsync_off_needs_the_test_setting(void **state)
{
	struct config c = {0};
	char why[1024];
	const char *level;
	const char *json =
	    "{\"fsync\": \"off\", \"synchronous_standby_names\": \"\", \"standbys\": []}";
	(void)state;

	assert_false(judge(&c, json, why, &level));
	assert_non_null(strstr(why, "fsync = off"));
	assert_non_null(strstr(why, "Set fsync = on"));
	c.durability_allow_fsync_off = true;
	assert_true(judge(&c, json, why, &level));
}

static void test_declared_failover_needs_a_synchronous_standby(void **state)
{
	struct config c = {.durability_failover = true};
	char why[1024];
	const char *level;
	(void)state;

	/* No standby named. */
	assert_false(judge(&c, SAFE, why, &level));
	assert_non_null(strstr(why, "no standby is synchronous"));
	assert_non_null(strstr(why, "none connected"));
	/* Named, but streaming asynchronously. */
	assert_false(
	    judge(&c,
	          "{\"fsync\": \"on\", \"synchronous_standby_names\": \"s1\", \"standbys\":"
	          " [{\"name\": \"s1\", \"state\": \"streaming\", \"sync_state\": \"async\"}]}",
	          why, &level));
	assert_non_null(strstr(why, "s1 streaming/async"));
	assert_string_equal(level, "remote_apply");
	/* Named and still catching up. */
	assert_false(
	    judge(&c,
	          "{\"fsync\": \"on\", \"synchronous_standby_names\": \"s1\", \"standbys\":"
	          " [{\"name\": \"s1\", \"state\": \"catchup\", \"sync_state\": \"sync\"}]}",
	          why, &level));
	/* In sync. */
	assert_true(
	    judge(&c,
	          "{\"fsync\": \"on\", \"synchronous_standby_names\": \"s1\", \"standbys\":"
	          " [{\"name\": \"s1\", \"state\": \"streaming\", \"sync_state\": \"sync\"}]}",
	          why, &level));
	assert_string_equal(level, "remote_apply");
	/* Quorum commit counts as synchronous. */
	assert_true(judge(&c,
	                  "{\"fsync\": \"on\", \"synchronous_standby_names\": \"ANY 1 (s1, s2)\","
	                  " \"standbys\": [{\"name\": \"s2\", \"state\": \"streaming\","
	                  " \"sync_state\": \"quorum\"}]}",
	                  why, &level));
}

static void test_unreadable_settings_are_not_safe(void **state)
{
	struct config c = {.durability_allow_fsync_off = true};
	char why[1024];
	const char *level;
	(void)state;

	assert_false(judge(&c, "not json", why, &level));
	assert_false(judge(&c, "{}", why, &level)); /* fsync unknown: not "on" */
}

static void test_unchecked_state_holds_mutations(void **state)
{
	struct config c = {0};
	char why[256];
	(void)state;

	struct durability *d = durability_new(&c);
	assert_false(durability_ok(d, why, sizeof(why)));
	assert_non_null(strstr(why, "not been checked"));
	assert_string_equal(durability_session_sql(d), "SET synchronous_commit = on");
	durability_free(d);
}

/* A standby that streams asynchronously, or a conninfo with several hosts,
 * without durability.failover declared: said, with what runs twice and the
 * fix; declared, or one server and no asynchronous standby: nothing. */
static void test_undeclared_failover_is_said(void **state)
{
	struct config c = {0};
	char why[1400];
	const char *async =
	    "{\"fsync\": \"on\", \"synchronous_standby_names\": \"\", \"standbys\": "
	    "[{\"name\": \"s1\", \"state\": \"streaming\", \"sync_state\": \"async\"}]}";
	const char *sync =
	    "{\"fsync\": \"on\", \"synchronous_standby_names\": \"s1\", \"standbys\": "
	    "[{\"name\": \"s1\", \"state\": \"streaming\", \"sync_state\": \"sync\"}]}";
	(void)state;

	assert_false(durability_failover_undeclared(&c, SAFE, 1, why, sizeof(why)));
	assert_string_equal(why, "");
	assert_true(durability_failover_undeclared(&c, async, 1, why, sizeof(why)));
	assert_non_null(strstr(why, "s1 streaming/async"));
	assert_non_null(strstr(why, "run a second time"));
	assert_non_null(strstr(why, "durability.failover: true"));
	assert_true(durability_failover_undeclared(&c, SAFE, 2, why, sizeof(why)));
	assert_non_null(strstr(why, "names several hosts"));
	assert_true(durability_failover_undeclared(&c, async, 2, why, sizeof(why)));
	assert_non_null(strstr(why, "also names 2 hosts"));
	/* A synchronous standby is no risk of this kind. */
	assert_false(durability_failover_undeclared(&c, sync, 1, why, sizeof(why)));
	c.durability_failover = true;
	assert_false(durability_failover_undeclared(&c, async, 2, why, sizeof(why)));
}

static void test_conninfo_hosts(void **state)
{
	(void)state;
	assert_int_equal(durability_conninfo_hosts("host=db1 dbname=airlock"), 1);
	assert_int_equal(durability_conninfo_hosts("dbname=airlock"), 1);
	assert_int_equal(durability_conninfo_hosts(
	                     "host=db1,db2 port=5432,5432 target_session_attrs=read-write"),
	                 2);
	assert_int_equal(durability_conninfo_hosts("postgresql://db1:5432,db2:5432,db3/airlock"),
	                 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_safe_primary),
	    cmocka_unit_test(test_fsync_off_needs_the_test_setting),
	    cmocka_unit_test(test_declared_failover_needs_a_synchronous_standby),
	    cmocka_unit_test(test_unreadable_settings_are_not_safe),
	    cmocka_unit_test(test_unchecked_state_holds_mutations),
	    cmocka_unit_test(test_undeclared_failover_is_said),
	    cmocka_unit_test(test_conninfo_hosts),
	};
	return cmocka_run_group_tests_name("durability", tests, NULL, NULL);
}
