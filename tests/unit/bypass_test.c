/* bypass_test.c -- reading a node's evidence (worker/bypass.c). */
#include "worker/bypass.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void parse_all_sources(void **state)
{
	(void)state;
	const char out[] =
	    "S 10.0.0.5 40000 10.0.0.1 22\n"
	    "N 1764590400\n"
	    "Z +0100\n"
	    "J 1764590000.123456 hubris sshd[10]: Accepted publickey for root from 10.0.0.5 port "
	    "40000 ssh2: ED25519 SHA256:airlockd\n"
	    "A 2025-12-01T12:10:00.5+01:00 hubris sshd[11]: Accepted password for admin from "
	    "192.0.2.7 port 5000 ssh2\n"
	    "A Dec  1 12:20:00 hubris sshd[12]: Accepted publickey for root from 192.0.2.8 port 1 "
	    "ssh2: RSA SHA256:other\n"
	    "A Accepted publickey for root from 127.0.0.1 port 2 ssh2: ED25519 SHA256:rig\n"
	    "P 2025-12-01 12:30:00 install nfs-kernel-server:amd64 <none> 1:2.6.2-4\n"
	    "P garbage line\n"
	    "U 1764590100.5 hubris systemd[1]: Started nginx.service - A web server.\n"
	    "U 1764590101.5 hubris systemd[1]: Started session-7.scope - Session 7 of User root.\n"
	    "A no accepted here\n";
	struct bypass_report r;

	bypass_parse(out, sizeof(out) - 1, &r);
	assert_string_equal(r.self_addr, "10.0.0.5");
	assert_int_equal(r.self_port, 40000);
	assert_int_equal(r.node_now, 1764590400);
	assert_int_equal(r.nlogins, 4);
	assert_true(r.logins[0].self);
	assert_string_equal(r.logins[0].key, "ED25519 SHA256:airlockd");
	assert_int_equal(r.logins[0].at, 1764590000);
	assert_false(r.logins[1].self);
	assert_string_equal(r.logins[1].user, "admin");
	assert_string_equal(r.logins[1].from, "192.0.2.7");
	assert_string_equal(r.logins[1].key, "password");
	assert_int_equal(r.logins[1].at, 1764587400); /* 12:10 at +01:00 = 11:10Z */
	assert_int_equal(r.logins[2].at, 1764588000); /* syslog time in the node's zone */
	assert_string_equal(r.logins[2].key, "RSA SHA256:other");
	assert_int_equal(r.logins[3].at, 0); /* no time logged */
	assert_int_equal(r.nchanges, 2);     /* the session scope is routine */
	assert_string_equal(r.changes[0].what, "install nfs-kernel-server:amd64 1:2.6.2-4");
	assert_int_equal(r.changes[0].at, 1764588600); /* dpkg's local time, +01:00 */
	assert_string_equal(r.changes[1].what, "Started nginx.service - A web server.");
	bypass_report_clear(&r);
}

static void parse_empty_and_hostile(void **state)
{
	(void)state;
	struct bypass_report r;
	char big[5000];

	bypass_parse("", 0, &r);
	assert_int_equal(r.nlogins, 0);
	assert_int_equal(r.nchanges, 0);
	bypass_report_clear(&r);
	memset(big, 'A', sizeof(big));
	memcpy(big, "A Accepted publickey for ", 25);
	big[sizeof(big) - 1] = '\0';
	bypass_parse(big, strlen(big), &r); /* no " from ": not a login */
	assert_int_equal(r.nlogins, 0);
	bypass_report_clear(&r);
}

static void script_reads_since(void **state)
{
	(void)state;
	char *s = bypass_script(1764500000);

	assert_non_null(strstr(s, "-S @1764500000 _COMM=sshd"));
	assert_non_null(strstr(s, "/var/log/dpkg.log"));
	/* The session's address comes from the transport (print_connection):
	 * the script runs with the one shell's fixed environment. */
	assert_null(strstr(s, "SSH_CONNECTION"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parse_all_sources),
	    cmocka_unit_test(parse_empty_and_hostile),
	    cmocka_unit_test(script_reads_since),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
