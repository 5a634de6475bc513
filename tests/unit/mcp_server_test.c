/* mcp_server_test.c -- airlock-mcp's lifecycle, dispatch, errors and tool validation,
 * driven line by line without a database (tool calls that get past validation
 * must then report the unreachable database as an isError result). */
#include "mcp/server.h"
#include "mcp/tools.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct fixture {
	FILE *out;
	long read_at;
	struct mcp_server *srv;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->out = tmpfile();
	f->srv = mcp_server_new("host=/nonexistent-airlock-mcp-test", NULL, -1, fileno(f->out));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mcp_server_free(f->srv);
	fclose(f->out);
	free(f);
	return 0;
}

/* Sends one line; returns everything the server wrote for it (caller frees). */
static char *send(struct fixture *f, const char *line)
{
	long end;
	char *got;

	mcp_server_handle_line(f->srv, line, strlen(line));
	mcp_server_settle(f->srv); /* tool calls are answered by a worker */
	fflush(f->out);
	fseek(f->out, 0, SEEK_END);
	end = ftell(f->out);
	got = calloc(1, (size_t)(end - f->read_at) + 1);
	fseek(f->out, f->read_at, SEEK_SET);
	assert_int_equal(fread(got, 1, (size_t)(end - f->read_at), f->out),
	                 (size_t)(end - f->read_at));
	f->read_at = end;
	return got;
}

static void expect(struct fixture *f, const char *line, const char *want)
{
	char *got = send(f, line);

	if (strstr(got, want) == NULL)
		fail_msg("sent %s\n got %s\nwant %s", line, got, want);
	free(got);
}

static void expect_silence(struct fixture *f, const char *line)
{
	char *got = send(f, line);

	if (got[0] != '\0')
		fail_msg("sent %s\n got %s\nwant nothing", line, got);
	free(got);
}

static void init(struct fixture *f, const char *version)
{
	char line[256];

	snprintf(line, sizeof(line),
	         "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
	         "\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
	         "\"version\":\"1\"}}}",
	         version);
	expect(f, line, "\"serverInfo\":{\"name\":\"airlock-mcp\"");
	expect_silence(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static void test_lifecycle(void **state)
{
	struct fixture *f = *state;

	expect(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	       "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
	expect(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
	       "\"id\":2,\"error\":{\"code\":-32600,");
	expect(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{}}",
	       "\"id\":3,\"error\":{\"code\":-32602,");
	expect(f,
	       "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{"
	       "\"protocolVersion\":\"1999-01-01\"}}",
	       "\"result\":{\"protocolVersion\":\"2025-11-25\"");
	assert_string_equal(mcp_server_version(f->srv), "2025-11-25");
	expect(f,
	       "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{"
	       "\"protocolVersion\":\"2025-11-25\"}}",
	       "\"id\":5,\"error\":{\"code\":-32600,");
	expect(f, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"resources/list\"}",
	       "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"error\":{\"code\":-32601,");
	expect_silence(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
	expect_silence(f, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}");
	expect_silence(f, "   \t");
	expect(f, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"} x",
	       "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,");
	expect(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"id\":8}",
	       "\"id\":null,\"error\":{\"code\":-32600,");
	expect(f, "[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]",
	       "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,");
}

static void test_versions_echoed(void **state)
{
	static const char *const v[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
	(void)state;

	for (size_t i = 0; i < 4; i++) {
		struct fixture *f;
		char want[64];
		setup((void **)&f);
		init(f, v[i]);
		snprintf(want, sizeof(want), "%s", v[i]);
		assert_string_equal(mcp_server_version(f->srv), want);
		teardown((void **)&f);
	}
}

static void test_batches_2025_03_26(void **state)
{
	struct fixture *f = *state;

	init(f, "2025-03-26");
	expect(f,
	       "[{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"method\":\"ping\"},"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},{\"jsonrpc\":\"2.0\",\"id\":"
	       "\"b\",\"method\":\"nope\"},7]",
	       "[{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"result\":{}},{\"jsonrpc\":"
	       "\"2.0\",\"id\":\"b\",\"error\":{\"code\":-32601,");
	expect_silence(f, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]");
	expect(f, "[]", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,");
	expect(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}]",
	       "[{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,");
	/* Calls a worker answers still come back in one array, in the batch's
	 * order, after the entries answered at once. */
	expect(f,
	       "[{\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"method\":\"tools/call\",\"params\":{"
	       "\"name\":\"get_health_summary\"}},{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":"
	       "\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":\"t2\",\"method\":\"tools/call\",\"params\":{"
	       "\"name\":\"list_checks\"}},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]",
	       "[{\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"result\":{\"content\":[{\"type\":\"text\","
	       "\"text\":\"cannot connect");
	expect(
	    f,
	    "[{\"jsonrpc\":\"2.0\",\"id\":\"t3\",\"method\":\"tools/call\",\"params\":{"
	    "\"name\":\"list_checks\"}},{\"jsonrpc\":\"2.0\",\"id\":\"p2\",\"method\":\"ping\"}]",
	    "\"isError\":true}},{\"jsonrpc\":\"2.0\",\"id\":\"p2\",\"result\":{}}]\n");
}

static void test_tools(void **state)
{
	struct fixture *f = *state;
	char *got;

	init(f, "2025-11-25");
	got = send(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	assert_non_null(strstr(got, "\"name\":\"run\""));
	assert_non_null(strstr(got, "\"name\":\"check_tool\""));
	assert_non_null(strstr(got, "\"outputSchema\""));
	assert_non_null(strstr(got, "\"readOnlyHint\":true"));
	free(got);
	expect(f,
	       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
	       "list\",\"params\":{\"cursor\":\"x\"}}",
	       "\"id\":2,\"error\":{\"code\":-32602,");
	expect(f,
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/"
	       "call\",\"params\":{\"name\":\"nope\"}}",
	       "\"id\":3,\"error\":{\"code\":-32602,");
	expect(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{}}",
	       "\"id\":4,\"error\":{\"code\":-32602,");
	expect(f,
	       "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
	       "\"run\",\"arguments\":[]}}",
	       "\"id\":5,\"error\":{\"code\":-32602,");
	expect(f,
	       "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
	       "\"get_execution\",\"arguments\":{\"id\":\"7\"}}}",
	       "\"isError\":true");
	/* Valid arguments get to the database, which is not there: still a result. */
	expect(f,
	       "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
	       "\"get_health_summary\"}}",
	       "could not be reached");
}

static void expect_invalid(const char *tool, const char *args, const char *want)
{
	cJSON *a = cJSON_Parse(args);
	char *msg = mcp_tools_validate(tool, a);

	if (want == NULL && msg != NULL)
		fail_msg("%s %s: %s", tool, args, msg);
	if (want != NULL && (msg == NULL || strstr(msg, want) == NULL))
		fail_msg("%s %s: got %s, want %s", tool, args, msg ? msg : "(valid)", want);
	free(msg);
	cJSON_Delete(a);
}

static void test_validation(void **state)
{
	(void)state;
	expect_invalid("run", "{\"target\":\"vm:a\",\"command\":\"ls\",\"action\":\"look\"}", NULL);
	expect_invalid("run", "{\"target\":\"vm:a\",\"command\":\"ls\"}",
	               "missing required \"action\"");
	expect_invalid("run",
	               "{\"target\":\"vm:a\",\"command\":\"ls\",\"action\":\"x\","
	               "\"requested_by\":\"operator\"}",
	               "unknown argument \"requested_by\"");
	expect_invalid("run", "{\"target\":1,\"command\":\"ls\",\"action\":\"x\"}",
	               "\"target\" must be a string");
	expect_invalid("run",
	               "{\"target\":\"a\",\"command\":\"ls\",\"action\":\"x\","
	               "\"declared_risk\":\"low\"}",
	               "must be one of");
	expect_invalid("run",
	               "{\"target\":\"a\",\"command\":\"ls\",\"action\":\"x\","
	               "\"wait_seconds\":301}",
	               "between 0 and 300");
	expect_invalid("get_execution", "{\"id\":1.5}", "must be an integer");
	expect_invalid("get_execution", "{\"id\":0}", "between 1 and");
	expect_invalid("get_execution", "{\"id\":9007199254740992}", "between 1 and");
	expect_invalid("update_entity_attributes", "{\"slug\":\"vm:a\",\"attributes\":[]}",
	               "must be an object");
	expect_invalid("get_health_summary", "{}", NULL);
	expect_invalid("list_checks", "{\"slug\":\"\"}", "must not be empty");
	/* Length is in characters: 200 two-byte characters fit a 200-character limit. */
	{
		char args[1024] = "{\"slug\":\"";
		for (int i = 0; i < 200; i++)
			strcat(args, "\xc3\xa9");
		strcat(args, "\"}");
		expect_invalid("get_relations", args, NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
	    cmocka_unit_test(test_versions_echoed),
	    cmocka_unit_test_setup_teardown(test_batches_2025_03_26, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tools, setup, teardown),
	    cmocka_unit_test(test_validation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
