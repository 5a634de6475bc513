/* transport_qmjson_test.c -- decoding qm's exec JSON: format, double UTF-8
 * encoding, chunking, caps, and rejection of malformed input. */
#include "transport/qmjson.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Exactly what the rig's qm (Perl JSON::PP format) prints for
 * `printf 'gr\303\274n\377\n'; echo err >&2; exit 3`. */
static const char finished[] = "{\n"
                               "   \"err-data\" : \"err\\n\",\n"
                               "   \"err-truncated\" : 0,\n"
                               "   \"exitcode\" : 3,\n"
                               "   \"exited\" : 1,\n"
                               "   \"out-data\" : \"gr\xc3\x83\xc2\xbcn\xc3\xbf\\n\",\n"
                               "   \"out-truncated\" : 0\n"
                               "}\n";

static struct qmjson *parse_chunks(const char *s, size_t chunk, size_t cap, int *rc)
{
	struct qmjson *p = qmjson_new(cap);
	size_t n = strlen(s);

	*rc = 0;
	for (size_t i = 0; i < n && *rc == 0; i += chunk)
		*rc = qmjson_feed(p, s + i, n - i < chunk ? n - i : chunk);
	if (*rc == 0)
		*rc = qmjson_finish(p);
	return p;
}

static void test_finished_any_chunking(void **state)
{
	(void)state;
	for (size_t chunk = 1; chunk <= sizeof(finished); chunk++) {
		int rc;
		struct qmjson *p = parse_chunks(finished, chunk, 0, &rc);
		struct qmjson_result *r = qmjson_result(p);

		assert_int_equal(rc, 0);
		assert_true(r->has_exited && r->exited);
		assert_true(r->has_exitcode);
		assert_int_equal(r->exitcode, 3);
		assert_false(r->has_signal);
		assert_int_equal(r->out.len, 7);
		assert_memory_equal(r->out.data, "gr\xc3\xbcn\xff\n", 7);
		assert_string_equal(buf_str(&r->err), "err\n");
		assert_false(r->out_truncated || r->err_truncated);
		qmjson_free(p);
	}
}

static void test_pid_and_signal(void **state)
{
	int rc;
	struct qmjson *p = parse_chunks("{\n   \"pid\" : 25\n}\n", 3, 0, &rc);
	(void)state;

	assert_int_equal(rc, 0);
	assert_true(qmjson_result(p)->has_pid);
	assert_int_equal(qmjson_result(p)->pid, 25);
	assert_false(qmjson_result(p)->has_exited);
	qmjson_free(p);

	p = parse_chunks("{\"exited\":true,\"signal\":15,\"out-truncated\":true}", 5, 0, &rc);
	assert_int_equal(rc, 0);
	assert_true(qmjson_result(p)->exited);
	assert_int_equal(qmjson_result(p)->signal, 15);
	assert_false(qmjson_result(p)->has_exitcode);
	assert_true(qmjson_result(p)->out_truncated);
	qmjson_free(p);
}

static void test_escapes_and_unknown_keys(void **state)
{
	int rc;
	struct qmjson *p =
	    parse_chunks("{\"zzz\":\"\\u0101\",\"other\":[],\"exited\":1}", 4, 0, &rc);
	(void)state;
	/* Arrays are not in qm's vocabulary: rejected, not skipped silently. */
	assert_int_equal(rc, -1);
	assert_non_null(strstr(qmjson_error(p), "unexpected value"));
	qmjson_free(p);

	p = parse_chunks(
	    "{\"zzz\":\"\\u0101 \\\"x\",\"out-data\":\"\\u0000\\u00ff\\t\\/\",\"n\":null,"
	    "\"exited\":1}",
	    1, 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(qmjson_result(p)->out.len, 4);
	assert_memory_equal(qmjson_result(p)->out.data, "\0\xff\t/", 4);
	qmjson_free(p);
}

static void test_cap(void **state)
{
	int rc;
	struct qmjson *p = parse_chunks(finished, 2, 3, &rc);
	(void)state;

	assert_int_equal(rc, 0);
	assert_int_equal(qmjson_result(p)->out.len, 3);
	assert_true(qmjson_result(p)->out.truncated);
	assert_int_equal(qmjson_result(p)->err.len, 3);
	assert_true(qmjson_result(p)->err.truncated);
	/* The agent's own flags are separate from airlock's cap. */
	assert_false(qmjson_result(p)->out_truncated);
	qmjson_free(p);
}

static void test_rejects(void **state)
{
	static const char *bad[] = {
	    "",
	    "[1]",
	    "{\"exited\":1",
	    "{\"exited\":1}x",
	    "{\"out-data\":\"\\u0100\"}",
	    "{\"out-data\":\"\xc4\x80\"}",
	    "{\"out-data\":\"\xc0\x80\"}",
	    "{\"out-data\":\"\xff\"}",
	    "{\"out-data\":\"a\nb\"}",
	    "{\"out-data\":3}",
	    "{\"exitcode\":\"3\"}",
	    "{\"exitcode\":3.5}",
	    "{\"exitcode\":99999999999999999999}",
	    "{\"exited\":tru}",
	    "{\"exited\" 1}",
	    "{exited:1}",
	    "{\"a\":\"\\x\"}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;
		struct qmjson *p = parse_chunks(bad[i], 1, 0, &rc);
		assert_int_equal(rc, -1);
		assert_true(strlen(qmjson_error(p)) > 0);
		qmjson_free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_finished_any_chunking),
	    cmocka_unit_test(test_pid_and_signal),
	    cmocka_unit_test(test_escapes_and_unknown_keys),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
