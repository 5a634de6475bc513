/* seedgate_test.c -- gate.yaml: durations, defaults, and the checks that keep
 * a gate policy from loosening the gate by mistake. */
#include "cli/seedgate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static cJSON *check(const char *yaml)
{
	char err[256];
	struct yt_node *doc = yt_parse(yaml, strlen(yaml), "gate.yaml", err, sizeof(err));
	cJSON *out;

	assert_non_null(doc);
	out = seedgate_check("gate.yaml", doc);
	yt_free(doc);
	return out;
}

static long long at(const cJSON *o, const char *a, const char *b, const char *c)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	if (c)
		v = cJSON_GetObjectItemCaseSensitive(v, c);
	assert_true(cJSON_IsNumber(v));
	return (long long)v->valuedouble;
}

static void test_durations(void **state)
{
	long long s = 0;
	(void)state;

	assert_int_equal(seedgate_duration("90s", &s), 0);
	assert_int_equal(s, 90);
	assert_int_equal(seedgate_duration("15m", &s), 0);
	assert_int_equal(s, 900);
	assert_int_equal(seedgate_duration("1h30m", &s), 0);
	assert_int_equal(s, 5400);
	assert_int_equal(seedgate_duration("30d", &s), 0);
	assert_int_equal(s, 30 * 86400);
	const char *bad[] = {"",
	                     "0s",
	                     "31d",
	                     "5",
	                     "5 m",
	                     "m",
	                     "-5m",
	                     "1x",
	                     "1h-",
	                     "1.5h",
	                     "99999999999999999999s",
	                     "720h1s"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(seedgate_duration(bad[i], &s), -1);
}

static void test_format(void **state)
{
	char out[32];
	(void)state;

	seedgate_format_duration(5400, out, sizeof(out));
	assert_string_equal(out, "1h30m");
	seedgate_format_duration(900, out, sizeof(out));
	assert_string_equal(out, "15m");
	seedgate_format_duration(86461, out, sizeof(out));
	assert_string_equal(out, "1d1m1s");
	seedgate_format_duration(0, out, sizeof(out));
	assert_string_equal(out, "0s");
}

static void test_defaults(void **state)
{
	cJSON *g = check("{}");
	(void)state;

	assert_non_null(g);
	assert_int_equal(at(g, "classes", "destructive", "quorum"), 2);
	assert_int_equal(at(g, "classes", "config_mutation", "quorum"), 1);
	assert_int_equal(at(g, "classes", "destructive", "ttl_s"), 3600);
	assert_int_equal(at(g, "classes", "destructive", "approval_valid_for_s"), 900);
	assert_int_equal(at(g, "limits", "requests_per_minute", NULL), 60);
	assert_int_equal(at(g, "limits", "pending_per_agent", NULL), 100);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "rules")), 0);
	cJSON_Delete(g);
}

static void test_explicit_one_operator(void **state)
{
	cJSON *g = check("classes:\n  destructive: {quorum: 1, ttl: 30m}\n");
	(void)state;

	assert_non_null(g);
	assert_int_equal(at(g, "classes", "destructive", "quorum"), 1);
	assert_int_equal(at(g, "classes", "destructive", "ttl_s"), 1800);
	cJSON_Delete(g);
}

static void test_rules(void **state)
{
	cJSON *g = check("rules:\n"
	                 "  - {target: 'proxmox-host:*', class: config_mutation, quorum: 2}\n"
	                 "  - {agent: 'intern-?', approval_valid_for: 5m}\n");
	(void)state;

	assert_non_null(g);
	const cJSON *r = cJSON_GetObjectItem(g, "rules");
	assert_int_equal(cJSON_GetArraySize(r), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 0), "target")->valuestring,
	                    "proxmox-host:*");
	assert_int_equal(
	    (int)cJSON_GetObjectItem(cJSON_GetArrayItem(r, 1), "approval_valid_for_s")->valuedouble,
	    300);
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 1), "class"));
	cJSON_Delete(g);
}

/* Each of these must be refused: none may produce a document. */
static void test_refusals(void **state)
{
	const char *bad[] = {
	    "classes: {destructive: {quorum: 0}}\n",
	    "classes: {destructive: {quorum: 6}}\n",
	    "classes: {destructive: {quorum: '+2'}}\n",
	    "classes: {destructive: {quorum: 2x}}\n",
	    "classes: {reversible_low: {quorum: 1}}\n",
	    "classes: {destructive: {ttl: forever}}\n",
	    "classes: {destructive: [1]}\n",
	    "classes: [destructive]\n",
	    "quorum: 2\n",
	    "rules: {target: x}\n",
	    "rules:\n  - {quorum: 3}\n",
	    "rules:\n  - {target: 'vm:*'}\n",
	    "rules:\n  - {target: 'vm:*', class: destructive, quorum: 2}\n",
	    "rules:\n  - {target: 'vm:*', quorum: 1}\n",
	    "rules:\n  - {agent: hermes, ttl: 1h}\n",
	    "rules:\n  - {agent: hermes, approval_valid_for: 2h}\n",
	    "rules:\n  - {target: 'vm:*', class: read_only, quorum: 3}\n",
	    "rules:\n  - {target: 'vm:x;y', quorum: 3}\n",
	    "rules:\n  - {agent: '', quorum: 3}\n",
	    "rules:\n  - {target: 'vm:*', quorum: 3, colour: red}\n",
	    "rules:\n  - [target, quorum]\n",
	    "limits: {requests_per_minute: 0}\n",
	    "limits: {attribute_bytes: 100}\n",
	    "limits: {attribute_keys: -1}\n",
	    "limits: {requests_per_hour: 5}\n",
	    "limits: [1]\n",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *g = check(bad[i]);
		if (g != NULL)
			fail_msg("accepted: %s", bad[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_durations), cmocka_unit_test(test_format),
	    cmocka_unit_test(test_defaults),  cmocka_unit_test(test_explicit_one_operator),
	    cmocka_unit_test(test_rules),     cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
