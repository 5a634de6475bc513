/* zerto_test.c -- the guard's pure rules (zerto/policy.h). */
#include "zerto/policy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void test_tag_format(void **state)
{
	char *t;

	(void)state;
	/* 2026-09-21T15:04:05Z, the origin notes' example */
	t = zerto_tag_format("claude", "edit /etc/nginx/nginx.conf", "web01", "chg-412",
	                     1790003045);
	assert_string_equal(t, "ai:claude | edit /etc/nginx/nginx.conf | vm=web01 | "
	                       "change=chg-412 | 20260921T150405Z");
	free(t);
	/* A field cannot forge another field or break the line. */
	t = zerto_tag_format("a|b", "x\ny | z", "vm", NULL, 0);
	assert_string_equal(t, "ai:a b | x y   z | vm=vm | change= | 19700101T000000Z");
	free(t);
}

static void test_tag_long_action(void **state)
{
	char action[600];
	char *t;

	(void)state;
	/* "é" is two bytes: the cut must not split one. */
	for (size_t i = 0; i + 2 < sizeof(action); i += 2)
		memcpy(action + i, "\xc3\xa9", 2);
	action[sizeof(action) - 2] = '\0';
	t = zerto_tag_format("hermes", action, "web01", "chg-1", 1790003045);
	assert_true(strlen(t) <= ZERTO_TAG_MAX);
	assert_true(strlen(t) >= ZERTO_TAG_MAX - 3);
	assert_non_null(strstr(t, "... | vm=web01 | change=chg-1 | 20260921T150405Z"));
	const char *dots = strstr(t, "...");
	assert_true(((unsigned char)dots[-1] & 0xC0) == 0x80); /* ends after a whole "é" */
	assert_true((size_t)(dots - t - strlen("ai:hermes | ")) % 2 == 0);
	free(t);
}

static void test_taggable_whitelist(void **state)
{
	(void)state;
	for (int st = 1; st <= 4; st++) {
		assert_true(zerto_vpg_taggable(st, 0));
		assert_true(zerto_vpg_taggable(st, 28)); /* Backup */
	}
	/* Initializing, failing over, moving, deleting, recovered, unknown. */
	const int bad_status[] = {0, 5, 6, 7, 8, 9, -1};
	for (size_t i = 0; i < sizeof(bad_status) / sizeof(bad_status[0]); i++)
		assert_false(zerto_vpg_taggable(bad_status[i], 0));
	/* Every sync, pause, error, failover phase and unknown substatus. */
	for (int sub = 1; sub <= 42; sub++)
		if (sub != 28)
			assert_false(zerto_vpg_taggable(1, sub));
}

static void test_cadence_median(void **state)
{
	const int64_t five[] = {0, 5000, 10000, 15100, 19900, 25000};
	const int64_t aws[] = {630000, 0, 1260000, 1890000}; /* unordered */
	const int64_t one[] = {42};
	int64_t jitter[60];

	(void)state;
	assert_true(zerto_cadence_s(five, 6, 20) == 5.0);
	assert_true(zerto_cadence_s(aws, 4, 20) == 630.0);
	assert_true(zerto_cadence_s(one, 1, 20) < 0);
	assert_true(zerto_cadence_s(NULL, 0, 20) < 0);
	/* Only the most recent gaps count: the cadence changed from 60 s to 5 s. */
	for (int i = 0; i < 60; i++)
		jitter[i] = i < 30 ? i * 60000 : 29 * 60000 + (i - 29) * 5000;
	assert_true(zerto_cadence_s(jitter, 60, 20) == 5.0);
}

static void test_budget_and_poll(void **state)
{
	(void)state;
	/* 2 x cadence + 15 s, clamped to 45..300 s. */
	assert_true(zerto_budget_s(5) == 45.0);
	assert_true(zerto_budget_s(60) == 135.0);
	assert_true(zerto_budget_s(630) == 300.0);
	assert_true(zerto_budget_s(-1) == 300.0);
	/* The budget on a 630 s VPG exceeds the 128 s visibility measured live;
	 * a fixed 45 s did not. */
	assert_true(zerto_budget_s(630) > 128.0);
	/* Poll interval scales with the cadence. */
	assert_true(zerto_poll_s(5) == 0.3125);
	assert_true(zerto_poll_s(60) == 3.75);
	assert_true(zerto_poll_s(630) == 10.0);
	assert_true(zerto_poll_s(1) == 0.25);
	assert_true(zerto_task_poll_s(630) == 2.0);
	assert_true(zerto_task_poll_s(5) == 0.3125);
}

static void test_time_parse(void **state)
{
	int64_t ms;
	char buf[40];

	(void)state;
	assert_int_equal(zerto_time_parse("2026-09-21T15:04:05.000Z", &ms), 0);
	assert_true(ms == 1790003045000LL);
	assert_string_equal(zerto_time_format(ms, buf, sizeof(buf)), "2026-09-21T15:04:05.000Z");
	assert_int_equal(zerto_time_parse("2026-09-21T15:04:05.5Z", &ms), 0);
	assert_true(ms == 1790003045500LL);
	assert_int_equal(zerto_time_parse("2026-09-21T15:04:05Z", &ms), 0);
	assert_true(ms == 1790003045000LL);
	assert_int_equal(zerto_time_parse("2026-09-21T11:04:05-04:00", &ms), 0);
	assert_true(ms == 1790003045000LL);
	assert_int_equal(zerto_time_parse("2026-09-21T15:04:05", &ms), 0);
	assert_true(ms == 1790003045000LL);
	assert_int_equal(zerto_time_parse("/Date(1479727039000)/", &ms), 0);
	assert_true(ms == 1479727039000LL);
	assert_int_equal(zerto_time_parse("2026-13-01T00:00:00Z", &ms), -1);
	assert_int_equal(zerto_time_parse("yesterday", &ms), -1);
	assert_int_equal(zerto_time_parse("2026-09-21T15:04:05Zjunk", &ms), -1);
	assert_int_equal(zerto_time_parse(NULL, &ms), -1);
}

static void test_task_states(void **state)
{
	char b[24];

	(void)state;
	assert_string_equal(zerto_task_state_name(6, b, sizeof(b)), "Completed");
	assert_string_equal(zerto_task_state_name(3, b, sizeof(b)), "Paused");
	assert_string_equal(zerto_task_state_name(9, b, sizeof(b)), "Unknown(9)");
	assert_true(zerto_task_terminal(4) && zerto_task_terminal(5) && zerto_task_terminal(6));
	for (int s = 0; s <= 3; s++)
		assert_false(zerto_task_terminal(s));
	assert_false(zerto_task_terminal(7));
	assert_string_equal(zerto_vpg_substatus_name(23), "BitmapSync");
	assert_string_equal(zerto_vpg_status_name(1), "MeetingSLA");
	assert_string_equal(zerto_vpg_status_name(42), "Unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tag_format),         cmocka_unit_test(test_tag_long_action),
	    cmocka_unit_test(test_taggable_whitelist), cmocka_unit_test(test_cadence_median),
	    cmocka_unit_test(test_budget_and_poll),    cmocka_unit_test(test_time_parse),
	    cmocka_unit_test(test_task_states),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
