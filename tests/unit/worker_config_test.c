/* worker_config_test.c -- airlockd's config: whole or not at all, with positions. */
#include "worker/config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];
static char key[128], known[128], secret[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/airlock-cfgtest.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(key, sizeof(key), "%s/id", dir);
	snprintf(known, sizeof(known), "%s/known_hosts", dir);
	snprintf(secret, sizeof(secret), "%s/zerto.secret", dir);
	const char *files[] = {key, known, secret};
	for (int i = 0; i < 3; i++) {
		FILE *f = fopen(files[i], "w");
		if (f == NULL)
			return -1;
		fputs("x\n", f);
		fclose(f);
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes text (with %1$s = key, %2$s = known_hosts, %3$s = secret) and loads it. */
static struct config *load(const char *text, char *err, size_t errlen)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/airlockd.yaml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, text, key, known, secret);
	fclose(f);
	return config_load(path, err, errlen);
}

#define SSH "ssh:\n  private_key: %1$s\n  known_hosts: %2$s\n"

static void test_defaults_and_values(void **state)
{
	char err[512];
	(void)state;

	struct config *c = load("worker_id: w1\nworkers: 3\nper_node: 2\n" SSH
	                        "execution:\n  command_timeout_s: 42\n  output_cap_bytes: 4096\n"
	                        "guard:\n  reversible_low_without_rewind: refuse\n"
	                        "webhooks:\n  - url: https://ntfy.example/x\n    operator: alice\n",
	                        err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(c->worker_id, "w1");
	assert_int_equal(c->workers, 3);
	assert_int_equal(c->per_node, 2);
	assert_int_equal(c->command_timeout_s, 42);
	assert_int_equal(c->output_cap, 4096);
	assert_false(c->reversible_low_without_rewind);
	assert_int_equal(c->poll_interval_ms, 2000);
	assert_null(c->zerto_url);
	assert_int_equal(c->nwebhooks, 1);
	assert_string_equal(c->webhooks[0].operator_name, "alice");
	config_free(c);
}

static void test_errors_name_the_place(void **state)
{
	char err[512];
	(void)state;

	assert_null(load(SSH "workers: 0\n", err, sizeof(err)));
	assert_non_null(strstr(err, "airlockd.yaml:4:10: workers must be an integer in 1..256"));
	assert_null(load(SSH "wrokers: 2\n", err, sizeof(err)));
	assert_non_null(strstr(err, ":4:1: unknown key \"wrokers\""));
	assert_null(load(SSH "  colour: blue\n", err, sizeof(err)));
	assert_non_null(strstr(err, "unknown key \"colour\" in ssh"));
	assert_null(load("workers: 4\n", err, sizeof(err)));
	assert_non_null(strstr(err, "private_key and known_hosts are required"));
	assert_null(
	    load("ssh:\n  private_key: /nonexistent/key\n  known_hosts: %2$s\n", err, sizeof(err)));
	assert_non_null(strstr(err, "cannot read ssh private_key /nonexistent/key"));
	assert_null(load(SSH "workers: 2\nper_node: 3\n", err, sizeof(err)));
	assert_non_null(strstr(err, "per_node must not exceed workers"));
	assert_null(load(SSH "log_level: loud\n", err, sizeof(err)));
	assert_non_null(strstr(err, "log_level \"loud\""));
	assert_null(load(SSH "webhooks:\n  - url: ftp://x\n", err, sizeof(err)));
	assert_non_null(strstr(err, "http://"));
	assert_null(load(SSH "workers: [1\n", err, sizeof(err)));
}

/* ssh.node_keys: a node's own key; the shared one serves the others. */
static void test_node_keys(void **state)
{
	char err[512];
	(void)state;

	struct config *c = load(SSH "  node_keys:\n    pve-2: %1$s\n    pve3.lab: %2$s\n"
	                            "probes:\n  discover: false\n",
	                        err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(c->nssh_node_keys, 2);
	assert_string_equal(c->ssh_node_keys[0].node, "pve-2");
	assert_string_equal(c->ssh_node_keys[0].private_key, key);
	assert_string_equal(c->ssh_node_keys[1].node, "pve3.lab");
	assert_false(c->probe_discover);
	config_free(c);
	c = load(SSH, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(c->nssh_node_keys, 0);
	assert_true(c->probe_discover);
	config_free(c);

	assert_null(load(SSH "  node_keys:\n    pve2: /nonexistent/k\n", err, sizeof(err)));
	assert_non_null(strstr(err, ":5:11: cannot read ssh key /nonexistent/k (node_keys)"));
	assert_null(load(SSH "  node_keys:\n    \"a b\": %1$s\n", err, sizeof(err)));
	assert_non_null(strstr(err, "node_keys: \"a b\" is not a node name"));
	assert_null(load(SSH "  node_keys:\n    pve2: %1$s\n    pve2: %1$s\n", err, sizeof(err)));
	assert_non_null(strstr(err, "duplicate key \"pve2\""));
	assert_null(load(SSH "  node_keys: [a]\n", err, sizeof(err)));
	assert_non_null(strstr(err, "node_keys must be a mapping"));
	assert_null(load(SSH "  node_keys:\n    pve2: [a]\n", err, sizeof(err)));
	assert_non_null(strstr(err, "node_keys: pve2 needs a key file"));
}

static void test_secrets_stay_out(void **state)
{
	char err[512];
	(void)state;

	assert_null(load(SSH "database: \"host=db user=a password=hunter2\"\n", err, sizeof(err)));
	assert_non_null(strstr(err, "must not contain a password"));
	assert_null(strstr(err, "hunter2"));
	assert_null(load(SSH "zerto:\n  url: https://zvm\n", err, sizeof(err)));
	assert_non_null(strstr(err, "secret_file or secret_env"));
	assert_null(load(SSH "zerto:\n  url: http://zvm\n  secret_env: ZS\n", err, sizeof(err)));
	assert_non_null(strstr(err, "https://"));
	struct config *c = load(SSH "zerto:\n  url: https://zvm\n  secret_file: %3$s\n"
	                            "  verify_tls: false\n  grant: client_credentials\n",
	                        err, sizeof(err));
	assert_non_null(c);
	assert_false(c->zerto_verify_tls);
	assert_string_equal(c->zerto_secret_file, secret);
	config_free(c);
	assert_null(load(SSH "zerto:\n  url: https://zvm\n  secret_env: ZS\n  grant: password\n",
	                 err, sizeof(err)));
	assert_non_null(strstr(err, "needs username"));
}

static void test_durability_settings(void **state)
{
	char err[512];
	(void)state;

	struct config *c = load(SSH, err, sizeof(err));
	assert_non_null(c);
	assert_false(c->durability_allow_fsync_off); /* safe by default */
	assert_false(c->durability_failover);
	config_free(c);
	c = load(SSH "durability:\n  allow_fsync_off: true\n  failover: true\n", err, sizeof(err));
	assert_non_null(c);
	assert_true(c->durability_allow_fsync_off);
	assert_true(c->durability_failover);
	config_free(c);
	assert_null(load(SSH "retry_max: 5\n", err, sizeof(err)));
	assert_non_null(strstr(err, "unknown key \"retry_max\""));
}

/* The test-only switch: off by default, refused outside a test rig (the
 * rig's marker file under $AIRLOCK_RIG_ROOT), accepted inside one. */
static void test_test_mode_needs_the_rig(void **state)
{
	char err[512], marker[128], rig[96];
	struct config *c;
	FILE *f;
	(void)state;

	unsetenv("AIRLOCK_RIG_ROOT");
	c = load(SSH, err, sizeof(err));
	assert_non_null(c);
	assert_false(c->test_classify_all_read_only);
	config_free(c);

	c = load(SSH "testing:\n  classify_all_read_only: true\n", err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "airlockd.yaml:5:27: testing.classify_all_read_only turns "
	                            "the approval gate off"));
	assert_non_null(strstr(err, "AIRLOCK_RIG_ROOT is not set"));

	snprintf(rig, sizeof(rig), "%s/rig", dir);
	mkdir(rig, 0700);
	setenv("AIRLOCK_RIG_ROOT", rig, 1);
	c = load(SSH "testing:\n  classify_all_read_only: true\n", err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "is not a test rig"));

	snprintf(marker, sizeof(marker), "%s/.airlock-rig", rig);
	f = fopen(marker, "w");
	assert_non_null(f);
	fputs("airlock production\n", f);
	fclose(f);
	c = load(SSH "testing:\n  classify_all_read_only: true\n", err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "does not hold the test rig's marker"));

	f = fopen(marker, "w");
	assert_non_null(f);
	fputs("airlock test rig\n", f);
	fclose(f);
	c = load(SSH "testing:\n  classify_all_read_only: true\n", err, sizeof(err));
	assert_non_null(c);
	assert_true(c->test_classify_all_read_only);
	config_free(c);
	c = load(SSH "testing:\n  classify_all_read_only: maybe\n", err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "classify_all_read_only must be true or false"));

	/* The reversible_low switch: inside the rig, with its write set. */
	c = load(SSH
	         "testing:\n  classify_all_reversible_low: {writes: [/etc/x.conf, /var/lib/x/]}\n",
	         err, sizeof(err));
	assert_non_null(c);
	assert_true(c->test_classify_all_reversible_low);
	assert_int_equal(c->ntest_writes, 2);
	assert_string_equal(c->test_writes[1], "/var/lib/x/");
	config_free(c);
	c = load(SSH "testing:\n  classify_all_reversible_low: {writes: [etc/x]}\n", err,
	         sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "a write path must be an absolute path"));
	c = load(SSH "testing:\n  classify_all_reversible_low: true\n", err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "must be {writes: [path, ...]}"));
	c = load(SSH "testing:\n  classify_all_read_only: true\n  classify_all_reversible_low: "
	             "{writes: [/etc/x]}\n",
	         err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "cannot both be on"));
	unsetenv("AIRLOCK_RIG_ROOT");
	c = load(SSH "testing:\n  classify_all_reversible_low: {writes: [/etc/x]}\n", err,
	         sizeof(err));
	assert_null(c);
	assert_non_null(
	    strstr(err, "exists for the test rig only; refused: AIRLOCK_RIG_ROOT is not set"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_and_values),
	    cmocka_unit_test(test_errors_name_the_place),
	    cmocka_unit_test(test_node_keys),
	    cmocka_unit_test(test_secrets_stay_out),
	    cmocka_unit_test(test_durability_settings),
	    cmocka_unit_test(test_test_mode_needs_the_rig),
	};
	return cmocka_run_group_tests_name("worker_config", tests, setup, teardown);
}
