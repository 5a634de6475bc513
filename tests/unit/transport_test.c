/* transport_test.c -- the transport's refusals and failures that need no SSH
 * server: bad configuration, requests that cannot be sent, a closed port, a
 * server that never speaks, the names.  (Everything with a server is in
 * tests/suites/40-transport.sh, over the rig.) */
#include "transport/transport.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/log.h"

static char keyfile[] = "/tmp/transport_test_key.XXXXXX";

static struct transport *new_transport(void)
{
	struct transport_config cfg = {
	    .private_key = keyfile,
	    .known_hosts = NULL,
	    .connect_timeout_ms = 500,
	};
	char err[256];
	struct transport *t = transport_new(&cfg, err, sizeof(err));
	assert_non_null(t);
	return t;
}

/* A TCP port on 127.0.0.1: listening (never accepting) or closed. */
static int local_port(int listening, int *fd_out)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	if (listening) {
		assert_int_equal(listen(fd, 8), 0);
		*fd_out = fd;
	} else {
		close(fd);
		*fd_out = -1;
	}
	return ntohs(sa.sin_port);
}

static void test_config_refused(void **state)
{
	struct transport_config cfg = {.private_key = "/nonexistent/key"};
	char err[256] = "";
	(void)state;

	assert_null(transport_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/key"));
	cfg.private_key = keyfile;
	cfg.known_hosts = "/nonexistent/known_hosts";
	assert_null(transport_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "known_hosts"));
}

static void test_requests_that_cannot_be_sent(void **state)
{
	struct transport *t = new_transport();
	struct transport_node node = {.name = "n", .address = "127.0.0.1", .port = 1};
	struct transport_result r;
	char *huge = malloc(40000);
	(void)state;

	assert_int_equal(transport_exec(t, &node, TARGET_VM, 101, "echo \xff", NULL, &r), -1);
	assert_int_equal(r.status, TRANSPORT_FAILED);
	assert_int_equal(r.error, TRANSPORT_ERR_INVALID);
	assert_non_null(strstr(r.errmsg, "UTF-8"));
	assert_string_equal(r.out, "");
	transport_result_free(&r);
	/* Strict UTF-8, as the guest agent's JSON is: a surrogate and an
	 * overlong form are refused before sending; real text is not. */
	char why[200];
	assert_int_equal(transport_check_command(TARGET_VM, 101, "echo \xed\xa0\x80", why, 200),
	                 -1);
	assert_int_equal(transport_check_command(TARGET_VM, 101, "echo \xe0\x80\xaf", why, 200),
	                 -1);
	assert_int_equal(
	    transport_check_command(TARGET_VM, 101, "echo gr\xc3\xbcn \xf0\x9f\x99\x82", why, 200),
	    0);

	assert_int_equal(transport_exec(t, &node, TARGET_LXC, 7, "true", NULL, &r), -1);
	assert_int_equal(r.error, TRANSPORT_ERR_INVALID);
	transport_result_free(&r);

	memset(huge, '\'', 39999); /* each ' quotes to 4 bytes */
	huge[39999] = '\0';
	assert_int_equal(transport_exec(t, &node, TARGET_PROXMOX_HOST, 0, huge, NULL, &r), -1);
	assert_int_equal(r.error, TRANSPORT_ERR_INVALID);
	assert_non_null(strstr(r.errmsg, "too long"));
	transport_result_free(&r);

	assert_int_equal(transport_exec(t, NULL, TARGET_PROXMOX_HOST, 0, "true", NULL, &r), -1);
	assert_int_equal(r.error, TRANSPORT_ERR_INVALID);
	transport_result_free(&r);
	free(huge);
	transport_free(t);
}

static void test_closed_port_is_connect_failure(void **state)
{
	int fd;
	int port = local_port(0, &fd);
	struct transport *t = new_transport();
	struct transport_node node = {.name = "down", .address = "127.0.0.1", .port = port};
	struct transport_result r;
	struct transport_stats st;
	(void)state;

	for (int target = 0; target < 3; target++) {
		assert_int_equal(
		    transport_exec(t, &node, (enum target_type)target, 101, "true", NULL, &r), -1);
		assert_int_equal(r.status, TRANSPORT_FAILED); /* nothing ran */
		assert_int_equal(r.error, TRANSPORT_ERR_CONNECT);
		assert_non_null(strstr(r.errmsg, "refused"));
		transport_result_free(&r);
	}
	struct transport_probe p[2] = {{TRANSPORT_PROBE_HOST, 0}, {TRANSPORT_PROBE_AGENT, 101}};
	assert_int_equal(transport_probe(t, &node, p, 2, 2000), -1);
	assert_int_equal(p[0].state, TRANSPORT_PROBE_UNREACHABLE);
	assert_int_equal(p[1].state, TRANSPORT_PROBE_UNREACHABLE);
	assert_null(transport_agent_attr(p[1].state));
	transport_stats(t, "down", &st);
	assert_int_equal(st.sessions_opened, 0);
	transport_free(t);
}

static void test_silent_server_times_out(void **state)
{
	int fd;
	int port = local_port(1, &fd); /* the kernel accepts; nobody speaks SSH */
	struct transport *t = new_transport();
	struct transport_node node = {.name = "mute", .address = "127.0.0.1", .port = port};
	struct transport_result r;
	(void)state;

	assert_int_equal(transport_exec(t, &node, TARGET_PROXMOX_HOST, 0, "true", NULL, &r), -1);
	assert_int_equal(r.status, TRANSPORT_FAILED);
	assert_int_equal(r.error, TRANSPORT_ERR_CONNECT);
	assert_non_null(strstr(r.errmsg, "handshake"));
	transport_result_free(&r);
	transport_free(t);
	close(fd);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(transport_status_name(TRANSPORT_UNKNOWN), "unknown");
	assert_string_equal(transport_status_name(TRANSPORT_TIMED_OUT), "timed_out");
	assert_string_equal(transport_error_name(TRANSPORT_ERR_HOSTKEY), "hostkey");
	assert_string_equal(transport_probe_state_name(TRANSPORT_PROBE_EXEC_DISABLED),
	                    "exec_disabled");
	assert_string_equal(transport_agent_attr(TRANSPORT_PROBE_OK), "running");
	assert_string_equal(transport_agent_attr(TRANSPORT_PROBE_VM_STOPPED), "not_running");
	assert_string_equal(transport_agent_attr(TRANSPORT_PROBE_NOT_CONFIGURED), "not_configured");
	assert_null(transport_agent_attr(TRANSPORT_PROBE_ERROR));
}

/* One reading of guest-info for both ways it arrives: the agent's own reply
 * (the batched probe) and the return value qm guest cmd prints. */
static void test_agent_info(void **state)
{
	struct transport_probe p;
	const char *on = "{\"version\": \"7.2\", \"supported_commands\": [{\"enabled\": true, "
	                 "\"name\": \"guest-exec\"}, {\"enabled\": true, \"name\": "
	                 "\"guest-exec-status\"}]}";
	char wrapped[400];
	(void)state;

	memset(&p, 0, sizeof(p));
	transport_agent_info(&p, on, strlen(on));
	assert_int_equal(p.state, TRANSPORT_PROBE_OK);
	snprintf(wrapped, sizeof(wrapped), "{\"return\": %s}", on);
	p.state = TRANSPORT_PROBE_ERROR;
	transport_agent_info(&p, wrapped, strlen(wrapped));
	assert_int_equal(p.state, TRANSPORT_PROBE_OK);
	/* the length is honoured: the text need not end there */
	transport_agent_info(&p, wrapped, 12);
	assert_int_equal(p.state, TRANSPORT_PROBE_ERROR);

	const char *off = "{\"return\": {\"supported_commands\": [{\"enabled\": false, \"name\": "
	                  "\"guest-exec\"}, {\"enabled\": 1, \"name\": \"guest-exec-status\"}]}}";
	transport_agent_info(&p, off, strlen(off));
	assert_int_equal(p.state, TRANSPORT_PROBE_EXEC_DISABLED);
	assert_non_null(strstr(p.detail, "disabled"));
	const char *none =
	    "{\"supported_commands\": [{\"enabled\": true, \"name\": \"guest-ping\"}]}";
	transport_agent_info(&p, none, strlen(none));
	assert_int_equal(p.state, TRANSPORT_PROBE_EXEC_DISABLED);
	assert_non_null(strstr(p.detail, "does not offer guest-exec"));

	/* an error reply (qm guest cmd prints it and exits 0) */
	const char *err = "{\"error\": {\"class\": \"GenericError\", \"desc\": \"frozen\"}}";
	transport_agent_info(&p, err, strlen(err));
	assert_int_equal(p.state, TRANSPORT_PROBE_ERROR);
	assert_non_null(strstr(p.detail, "guest-info failed: frozen"));
	/* not guest-info's answer at all */
	transport_agent_info(&p, "{\"return\": 4711}", 16);
	assert_int_equal(p.state, TRANSPORT_PROBE_ERROR);
	transport_agent_info(&p, "not json", 8);
	assert_int_equal(p.state, TRANSPORT_PROBE_ERROR);
	assert_non_null(strstr(p.detail, "no supported_commands"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config_refused),
	    cmocka_unit_test(test_requests_that_cannot_be_sent),
	    cmocka_unit_test(test_closed_port_is_connect_failure),
	    cmocka_unit_test(test_silent_server_times_out),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_agent_info),
	};
	int fd = mkstemp(keyfile), rc;

	if (fd < 0)
		return 1;
	close(fd); /* readable is all transport_new checks; no server ever asks for it */
	log_set_level(LOG_FATAL);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(keyfile);
	return rc;
}
