/* agentbatch_test.c -- reading the node program's answers about guest agents. */
#include "worker/agentbatch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define INFO_ON                                                                                    \
	"{\"return\": {\"version\": \"7.2.0\", \"supported_commands\": [{\"enabled\": true, "      \
	"\"name\": \"guest-exec-status\", \"success-response\": true}, {\"enabled\": true, "       \
	"\"name\": \"guest-exec\", \"success-response\": true}]}}"
#define INFO_OFF                                                                                   \
	"{\"return\": {\"version\": \"9.2\", \"supported_commands\": [{\"enabled\": false, "       \
	"\"name\": \"guest-exec\", \"success-response\": true}, {\"enabled\": true, "              \
	"\"name\": \"guest-exec-status\", \"success-response\": true}]}}"

static void setup(struct transport_probe *p, bool *done, size_t n)
{
	memset(p, 0, n * sizeof(*p));
	memset(done, 0, n * sizeof(*done));
	for (size_t i = 0; i < n; i++) {
		p[i].kind = TRANSPORT_PROBE_AGENT;
		p[i].vmid = 101 + (int)i;
		p[i].state = TRANSPORT_PROBE_ERROR;
	}
	p[n - 1].kind = TRANSPORT_PROBE_CT; /* never touched */
	p[n - 1].vmid = 101;
}

static void test_answers(void **state)
{
	struct transport_probe p[6];
	bool done[6];
	(void)state;

	setup(p, done, 6);
	assert_true(agentbatch_line("101 reply " INFO_ON, p, done, 6));
	assert_int_equal(p[0].state, TRANSPORT_PROBE_OK);
	assert_true(done[0]);
	assert_true(agentbatch_line("102 reply " INFO_OFF, p, done, 6));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_EXEC_DISABLED);
	/* An agent that does not answer may only be busy: qm decides. */
	assert_false(agentbatch_line("103 timeout", p, done, 6));
	assert_false(done[2]);
	assert_false(agentbatch_line("104 refused Connection refused", p, done, 6));
	assert_false(agentbatch_line("104 closed", p, done, 6));
	assert_false(done[3]);
	assert_true(agentbatch_line(
	    "105 reply {\"error\": {\"class\": \"GenericError\", \"desc\": \"boom\"}}", p, done,
	    6));
	assert_int_equal(p[4].state, TRANSPORT_PROBE_ERROR);
	assert_non_null(strstr(p[4].detail, "boom"));
	assert_false(done[5]);
	assert_int_equal(p[5].kind, TRANSPORT_PROBE_CT);
}

/* What the batch cannot tell is left for qm: nothing is decided. */
static void test_left_for_qm(void **state)
{
	struct transport_probe p[3];
	bool done[3];
	(void)state;

	setup(p, done, 3);
	assert_false(agentbatch_line("101 nosocket", p, done, 3));
	assert_false(agentbatch_line("999 reply " INFO_ON, p, done, 3)); /* not asked */
	assert_false(agentbatch_line("garbage", p, done, 3));
	assert_false(agentbatch_line("", p, done, 3));
	assert_false(agentbatch_line("102 whatever", p, done, 3));
	assert_false(done[0] || done[1] || done[2]);
	assert_true(agentbatch_line("102 reply not json", p, done, 3));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_ERROR);
	/* one answer per VM: a second line for it changes nothing */
	assert_false(agentbatch_line("102 reply " INFO_ON, p, done, 3));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_ERROR);
}

/* `pct list`: the header and unknown states decide nothing. */
static void test_ct_list(void **state)
{
	struct transport_probe p[4];
	bool done[4];
	(void)state;

	memset(p, 0, sizeof(p));
	memset(done, 0, sizeof(done));
	for (int i = 0; i < 4; i++) {
		p[i].kind = TRANSPORT_PROBE_CT;
		p[i].vmid = 201 + i;
		p[i].state = TRANSPORT_PROBE_ERROR;
	}
	p[3].kind = TRANSPORT_PROBE_AGENT; /* a VM with a CT's id elsewhere: untouched */
	p[3].vmid = 201;
	assert_false(agentbatch_ct_line("VMID       Status     Lock         Name", p, done, 4));
	assert_true(agentbatch_ct_line("201        running                 ct201", p, done, 4));
	assert_int_equal(p[0].state, TRANSPORT_PROBE_OK);
	assert_true(agentbatch_ct_line("202        stopped    backup       ct202", p, done, 4));
	assert_int_equal(p[1].state, TRANSPORT_PROBE_NOT_RUNNING);
	assert_false(agentbatch_ct_line("203        mounted                 ct203", p, done, 4));
	assert_false(done[2]);
	assert_false(agentbatch_ct_line("999        running                 x", p, done, 4));
	assert_false(done[3]);
	assert_int_equal(p[3].state, TRANSPORT_PROBE_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answers),
	    cmocka_unit_test(test_left_for_qm),
	    cmocka_unit_test(test_ct_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
