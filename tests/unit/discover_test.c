/* discover_test.c -- reading a node's answer about the cluster's resources. */
#include "worker/discover.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static int parse(const char *json, cJSON *guests, cJSON *nodes, char *err, size_t errlen)
{
	return discover_parse(json, strlen(json), "pve1", guests, nodes, err, errlen);
}

static void test_guests_and_nodes(void **state)
{
	char err[256] = "";
	cJSON *g = cJSON_CreateArray(), *n = cJSON_CreateArray();
	(void)state;

	assert_int_equal(
	    parse("[{\"id\":\"qemu/101\",\"type\":\"qemu\",\"vmid\":101,\"node\":\"pve2\","
	          "\"name\":\"web\",\"status\":\"running\"},"
	          "{\"id\":\"lxc/200\",\"type\":\"lxc\",\"vmid\":200,\"node\":\"pve1\"},"
	          "{\"id\":\"storage/pve1/local\",\"type\":\"storage\",\"node\":\"pve1\"},"
	          "{\"id\":\"node/pve1\",\"type\":\"node\",\"node\":\"pve1\"},"
	          "{\"id\":\"node/pve2\",\"type\":\"node\",\"node\":\"pve2\"}]",
	          g, n, err, sizeof(err)),
	    0);
	assert_int_equal(cJSON_GetArraySize(g), 2);
	cJSON *a = cJSON_GetArrayItem(g, 0), *b = cJSON_GetArrayItem(g, 1);
	assert_string_equal(cJSON_GetObjectItem(a, "type")->valuestring, "qemu");
	assert_int_equal(cJSON_GetObjectItem(a, "vmid")->valueint, 101);
	assert_string_equal(cJSON_GetObjectItem(a, "node")->valuestring, "pve2");
	assert_string_equal(cJSON_GetObjectItem(a, "name")->valuestring, "web");
	assert_string_equal(cJSON_GetObjectItem(a, "from")->valuestring, "pve1");
	assert_string_equal(cJSON_GetObjectItem(b, "name")->valuestring, ""); /* no name given */
	assert_int_equal(cJSON_GetArraySize(n), 2);
	assert_string_equal(cJSON_GetArrayItem(n, 1)->valuestring, "pve2");
	cJSON_Delete(g);
	cJSON_Delete(n);
}

/* A bad answer appends nothing, even after good entries. */
static void test_bad_answers(void **state)
{
	static const char *const bad[] = {
	    "",
	    "{}",
	    "[1]",
	    "[{\"vmid\":101}]",
	    "[{\"type\":\"qemu\",\"vmid\":101,\"node\":\"a\"},{\"type\":\"qemu\",\"node\":\"a\"}]",
	    "[{\"type\":\"qemu\",\"vmid\":99,\"node\":\"a\"}]",
	    "[{\"type\":\"qemu\",\"vmid\":101.5,\"node\":\"a\"}]",
	    "[{\"type\":\"qemu\",\"vmid\":\"101\",\"node\":\"a\"}]",
	    "[{\"type\":\"lxc\",\"vmid\":1000000000,\"node\":\"a\"}]",
	    "[{\"type\":\"lxc\",\"vmid\":101,\"node\":\"\"}]",
	    "[{\"type\":\"lxc\",\"vmid\":101}]",
	    "[{\"type\":\"node\"}]",
	    "[{\"type\":\"qemu\",\"vmid\":101,\"node\":\"a\"}",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		cJSON *g = cJSON_CreateArray(), *n = cJSON_CreateArray();
		assert_int_equal(parse(bad[i], g, n, err, sizeof(err)), -1);
		assert_true(err[0] != '\0');
		assert_int_equal(cJSON_GetArraySize(g), 0);
		assert_int_equal(cJSON_GetArraySize(n), 0);
		cJSON_Delete(g);
		cJSON_Delete(n);
	}
}

static void test_empty_cluster(void **state)
{
	char err[256] = "";
	cJSON *g = cJSON_CreateArray(), *n = cJSON_CreateArray();
	(void)state;

	assert_int_equal(parse("[]", g, n, err, sizeof(err)), 0);
	assert_int_equal(cJSON_GetArraySize(g), 0);
	cJSON_Delete(g);
	cJSON_Delete(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_guests_and_nodes),
	    cmocka_unit_test(test_bad_answers),
	    cmocka_unit_test(test_empty_cluster),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
