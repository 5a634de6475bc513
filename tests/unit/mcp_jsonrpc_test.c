/* mcp_jsonrpc_test.c -- strict parsing, exact ids and bounded framing of airlock-mcp. */
#include "mcp/framing.h"
#include "mcp/jsonrpc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static cJSON *parse(const char *s)
{
	char err[128];

	return mcp_json_parse(s, strlen(s), err, sizeof(err));
}

static void test_parse_is_strict(void **state)
{
	static const char *const bad[] = {
	    "{\"id\":1} trailing",
	    "{\"a\":1}{\"b\":2}",
	    "{\"a\":\"\\u0000\"}",
	    "{\"a\":\"\xc3\"}",
	    "{\"a\":\"\xed\xa0\x80\"}",
	    "{\"a\":\"\xc0\xaf\"}",
	    "{\"a\":1,}",
	    "{'a':1}",
	    "",
	    "NaN",
	    /* numbers strtod() takes and JSON does not, as ids and anywhere else */
	    "{\"id\":01}",
	    "{\"id\":-01}",
	    "{\"id\":1.}",
	    "{\"id\":00}",
	    "{\"id\":-.5}",
	    "{\"id\":1.e5}",
	    "{\"id\":-}",
	    "{\"id\":1e}",
	    "{\"id\":1e+}",
	    "{\"id\":7,\"params\":{\"x\":[1,02]}}",
	    "[1,2.]",
	};
	cJSON *j;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = parse(bad[i]);
		if (j != NULL)
			fail_msg("accepted: %s", bad[i]);
	}
	/* An escaped backslash before u0000 is text, not a NUL. */
	j = parse("{\"a\":\"\\\\u0000\"}");
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "a")->valuestring, "\\u0000");
	cJSON_Delete(j);
	j = parse(" {\"a\":\"\xc3\xa9\xf0\x9f\x98\x80\"} \r");
	assert_non_null(j);
	cJSON_Delete(j);
}

static void test_duplicate_keys(void **state)
{
	cJSON *j = parse("{\"a\":{\"x\":1,\"y\":2,\"x\":3},\"b\":1}");
	(void)state;

	assert_string_equal(mcp_json_duplicate_key(j), "x");
	cJSON_Delete(j);
	j = parse("{\"a\":[{\"k\":1},{\"k\":2}],\"A\":1}");
	assert_null(mcp_json_duplicate_key(j));
	cJSON_Delete(j);
}

/* Classifies s and returns the printed id ("null" when none). */
static char *classify(const char *s, enum mcp_msg_kind *kind)
{
	struct mcp_msg m;
	cJSON *j = parse(s);
	cJSON *r;
	char *out;

	assert_non_null(j);
	mcp_msg_classify(j, s, strlen(s), &m);
	*kind = m.kind;
	r = mcp_reply_result(m.id, cJSON_CreateObject());
	out = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(r, "id"));
	cJSON_Delete(r);
	mcp_msg_clear(&m);
	cJSON_Delete(j);
	return out;
}

static void expect(const char *msg, enum mcp_msg_kind want_kind, const char *want_id)
{
	enum mcp_msg_kind kind;
	char *id = classify(msg, &kind);

	if (kind != want_kind || strcmp(id, want_id) != 0)
		fail_msg("%s: kind %d id %s, want kind %d id %s", msg, kind, id, want_kind,
		         want_id);
	free(id);
}

static void test_ids_round_trip(void **state)
{
	(void)state;
	expect("{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}", MCP_MSG_REQUEST,
	       "9007199254740993");
	expect("{\"jsonrpc\":\"2.0\",\"id\":-18446744073709551617,\"method\":\"ping\"}",
	       MCP_MSG_REQUEST, "-18446744073709551617");
	expect("{\"method\":\"ping\", \"id\" : 0 ,\"jsonrpc\":\"2.0\"}", MCP_MSG_REQUEST, "0");
	/* Integers written with an exponent or a fraction of zeros: echoed as written. */
	expect("{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"ping\"}", MCP_MSG_REQUEST, "1e2");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1e5,\"method\":\"ping\"}", MCP_MSG_REQUEST, "1e5");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1E+2,\"method\":\"ping\"}", MCP_MSG_REQUEST, "1E+2");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}", MCP_MSG_REQUEST, "1.0");
	expect("{\"jsonrpc\":\"2.0\",\"id\":12.50e1,\"method\":\"ping\"}", MCP_MSG_REQUEST,
	       "12.50e1");
	expect("{\"jsonrpc\":\"2.0\",\"id\":100e-2,\"method\":\"ping\"}", MCP_MSG_REQUEST,
	       "100e-2");
	expect("{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"ping\"}", MCP_MSG_REQUEST, "-0");
	expect("{\"jsonrpc\":\"2.0\",\"id\":0.000e9,\"method\":\"ping\"}", MCP_MSG_REQUEST,
	       "0.000e9");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1e300,\"method\":\"ping\"}", MCP_MSG_REQUEST, "1e300");
	/* Fractions are no ids. */
	expect("{\"jsonrpc\":\"2.0\",\"id\":1e-1,\"method\":\"ping\"}", MCP_MSG_INVALID, "null");
	expect("{\"jsonrpc\":\"2.0\",\"id\":10.01e1,\"method\":\"ping\"}", MCP_MSG_INVALID, "null");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1.5e0,\"method\":\"ping\"}", MCP_MSG_INVALID, "null");
	expect("{\"jsonrpc\":\"2.0\",\"id\":\"x\\\"\\u00e9\",\"method\":\"ping\"}", MCP_MSG_REQUEST,
	       "\"x\\\"\xc3\xa9\"");
	expect("{\"jsonrpc\":\"2.0\",\"params\":{\"id\":5},\"id\":7,\"method\":\"ping\"}",
	       MCP_MSG_REQUEST, "7");
	expect("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_MSG_INVALID, "null");
	expect("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_MSG_INVALID, "null");
	expect("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", MCP_MSG_INVALID, "null");
	expect("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", MCP_MSG_INVALID, "null");
	expect("{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}", MCP_MSG_INVALID, "4");
	expect("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":7}", MCP_MSG_INVALID, "4");
	expect("{\"jsonrpc\":\"2.0\",\"id\":4,\"Method\":\"ping\"}", MCP_MSG_INVALID, "4");
	expect("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":3}", MCP_MSG_INVALID,
	       "4");
	expect("{\"jsonrpc\":\"2.0\",\"ID\":4,\"method\":\"ping\"}", MCP_MSG_NOTIFICATION, "null");
	expect("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}", MCP_MSG_RESPONSE, "4");
	expect("[1]", MCP_MSG_INVALID, "null");
}

static void test_element_spans(void **state)
{
	const char *s = " [ {\"id\":1,\"s\":\"]},\\\"\"} , [2,[3]] ,\"x\", 12 ] ";
	size_t n = 0;
	size_t *sp = mcp_json_element_spans(s, strlen(s), &n);
	(void)state;

	assert_int_equal(n, 4);
	assert_memory_equal(s + sp[0], "{\"id\":1,\"s\":\"]},\\\"\"}", sp[1] - sp[0]);
	assert_memory_equal(s + sp[2], "[2,[3]]", sp[3] - sp[2]);
	assert_memory_equal(s + sp[4], "\"x\"", sp[5] - sp[4]);
	assert_memory_equal(s + sp[6], "12", sp[7] - sp[6]);
	free(sp);
}

/* Feeds text from a file into a reader capped at max and collects what it returns. */
static void read_all(const char *text, size_t textlen, size_t max, char *out, size_t outlen)
{
	FILE *f = tmpfile();
	struct mcp_reader *r;
	char *line;
	size_t len, o = 0;
	enum mcp_read k;

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, textlen, f), textlen);
	fflush(f);
	rewind(f);
	r = mcp_reader_new(fileno(f), max);
	while ((k = mcp_reader_next(r, &line, &len)) != MCP_READ_EOF) {
		if (k == MCP_READ_AGAIN)
			assert_int_equal(mcp_reader_fill(r), 0);
		else if (k == MCP_READ_TOO_LONG)
			o += (size_t)snprintf(out + o, outlen - o, "<too long>");
		else
			o += (size_t)snprintf(out + o, outlen - o, "[%.*s]", (int)len, line);
	}
	mcp_reader_free(r);
	fclose(f);
}

static void test_framing(void **state)
{
	char out[4096];
	char *big = malloc(200001);
	(void)state;

	read_all("a\nbb\r\n\ncc", 9, 100, out, sizeof(out));
	assert_string_equal(out, "[a][bb][][cc]");
	/* A line over the cap is reported once, whole, and the next line is intact. */
	memset(big, 'x', 200000);
	big[150000] = '\n';
	memcpy(big + 150001, "ok\n", 3);
	read_all(big, 150004, 1000, out, sizeof(out));
	assert_string_equal(out, "<too long>[ok]");
	/* Exactly at the cap is fine. */
	memset(big, 'y', 1000);
	big[1000] = '\n';
	read_all(big, 1001, 1000, out, sizeof(out));
	assert_int_equal(strlen(out), 1002);
	/* A line a little over the cap that arrives in one read is still too
	 * long (the reader holds up to the cap plus one chunk). */
	read_all("0123456789ab\nok\n", 16, 10, out, sizeof(out));
	assert_string_equal(out, "<too long>[ok]");
	/* An over-long last line without a newline still ends as one error. */
	read_all(big, 1000, 10, out, sizeof(out));
	assert_string_equal(out, "<too long>");
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_is_strict), cmocka_unit_test(test_duplicate_keys),
	    cmocka_unit_test(test_ids_round_trip),  cmocka_unit_test(test_element_spans),
	    cmocka_unit_test(test_framing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
