/* secretscan_test.c -- the scanner on real-format secrets made fresh for this run
 * (tests/outhold/secretgen.py: ssh-keygen, openssl, puttygen, gpg, argon2,
 * crypt(3), SCRAM and NTLM computed, JWTs signed), their CRLF, JSON, split and
 * cut-by-the-cap spellings, and harmless output that must stay unheld. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lib/secretscan.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int find(const char *s, bool truncated, struct secretscan_match *m)
{
	return secretscan_find(s, strlen(s), truncated, m);
}

/* Every generated sample: a secret the scanner claims is found (in the plain
 * spelling, as its own kind); harmless output and what it does not claim are not. */
static void test_generated_samples(void **state)
{
	FILE *f = popen("tests/outhold/secretgen.py --variants --cap 4096", "r");
	char *line = NULL;
	size_t cap = 0;
	int n = 0, held = 0, harmless = 0, unclaimed = 0, failures = 0;

	(void)state;
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		cJSON *s = cJSON_Parse(line);
		assert_non_null(s);
		const char *id = str(s, "id"), *kind = str(s, "kind"), *variant = str(s, "variant");
		const char *out = str(s, "stdout"), *err = str(s, "stderr");
		bool claimed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "claimed"));
		bool truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "truncated"));
		struct secretscan_match mo, me;
		int fo = find(out, truncated, &mo), fe = find(err, false, &me);
		bool found = fo || fe;

		n++;
		if (kind == NULL || !claimed) {
			kind == NULL ? harmless++ : unclaimed++;
			if (found) {
				failures++;
				print_error("%s (%s): held as %s at line %zu, wanted not held\n",
				            id, variant,
				            secretscan_kind_name(fo ? mo.kind : me.kind),
				            fo ? mo.line : me.line);
			}
		} else if (!found) {
			failures++;
			print_error("%s (%s): not held, wanted %s\n", id, variant, kind);
		} else {
			held++;
			if (strcmp(variant, "plain") == 0 &&
			    strcmp(secretscan_kind_name(mo.kind), kind) != 0) {
				failures++;
				print_error("%s: held as %s, wanted %s\n", id,
				            secretscan_kind_name(mo.kind), kind);
			}
		}
		cJSON_Delete(s);
	}
	free(line);
	assert_int_equal(pclose(f), 0);
	print_message("secretscan: %d samples: %d held, %d harmless, %d not claimed\n", n, held,
	              harmless, unclaimed);
	assert_true(held > 200 && harmless > 20 && unclaimed > 5);
	assert_int_equal(failures, 0);
}

/* The line reported is the first line that matches, counting \n only. */
static void test_line_numbers(void **state)
{
	struct secretscan_match m;
	const char *crlf = "a\r\nb\r\npassword = hunter2horse\r\n";

	(void)state;
	assert_int_equal(find("one\ntwo\nAKIAABCDEFGHIJKLMNOP\n", false, &m), 1);
	assert_int_equal(m.kind, SECRET_AWS_ACCESS_KEY);
	assert_int_equal(m.line, 3);
	assert_int_equal(m.offset, 8);
	assert_int_equal(find(crlf, false, &m), 1);
	assert_int_equal(m.kind, SECRET_PASSWORD_SETTING);
	assert_int_equal(m.line, 3);
	/* two on one line: the first */
	assert_int_equal(find("x AKIAABCDEFGHIJKLMNOP -----BEGIN EC PRIVATE KEY-----", false, &m),
	                 1);
	assert_int_equal(m.kind, SECRET_AWS_ACCESS_KEY);
	assert_int_equal(find("", false, &m), 0);
	assert_int_equal(m.kind, SECRET_NONE);
	assert_int_equal(secretscan_find(NULL, 0, false, &m), 0);
	assert_string_equal(secretscan_kind_name(SECRET_JWT), "jwt");
	assert_string_equal(secretscan_kind_label(SECRET_OPENSSH_PRIVATE_KEY),
	                    "an OpenSSH private key");
	assert_string_equal(secretscan_kind_name(SECRET_NONE), "");
}

/* NUL bytes and invalid UTF-8 are bytes like any other: a key after them is found. */
static void test_binary(void **state)
{
	char buf[256];
	struct secretscan_match m;
	size_t n = 0;

	(void)state;
	memcpy(buf, "\x00\xff\xfe\x80\n\x00", 6);
	n = 6;
	memcpy(buf + n, "-----BEGIN RSA PRIVATE KEY-----\n", 32);
	n += 32;
	assert_int_equal(secretscan_find(buf, n, false, &m), 1);
	assert_int_equal(m.kind, SECRET_PRIVATE_KEY);
	assert_int_equal(m.line, 2);
	/* the header cut before PRIVATE KEY: nothing secret was kept */
	assert_int_equal(secretscan_find("-----BEGIN OPENSSH PRIV", 23, true, &m), 0);
}

/* A hash cut by the cap counts only as the capture's last line. */
static void test_cut(void **state)
{
	const char *h = "root:$6$saltsalt$abcdefghijklmnopqrstuv";
	struct secretscan_match m;

	(void)state;
	assert_int_equal(find(h, true, &m), 1);
	assert_int_equal(m.kind, SECRET_PASSWORD_HASH);
	assert_int_equal(find(h, false, &m), 0); /* 22 characters: not a sha512crypt hash */
	assert_int_equal(find("root@pam!t 0123abcd-12", true, &m), 1);
	assert_int_equal(m.kind, SECRET_PVE_API_TOKEN);
	assert_int_equal(find("root@pam!t 0123abcd-12", false, &m), 0);
}

/* Inputs built to make every check look as far as it may: each finishes,
 * finds nothing, and ASan sees no read outside the buffer. */
static void test_adversarial(void **state)
{
	static const char *const units[] = {"$6$",
	                                    "$2b$12$",
	                                    ":",
	                                    "=",
	                                    "eyJ",
	                                    "-----BEGIN ",
	                                    "LS0tLS1CRUdJTi",
	                                    "PVEAPIToken a!",
	                                    "PVE:a@b:",
	                                    "://a:",
	                                    "SCRAM-SHA-256$1:",
	                                    "otpauth://",
	                                    "password",
	                                    "Bearer ",
	                                    "::a:",
	                                    "{SSHA}",
	                                    "AQ"};
	size_t len = 1 << 18;
	char *buf = malloc(len);
	struct secretscan_match m;

	(void)state;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t k = strlen(units[u]), n = 0;
		while (n + k <= len) {
			memcpy(buf + n, units[u], k);
			n += k;
		}
		if (secretscan_find(buf, n, false, &m) != 0) {
			print_error("%s repeated: held as %s\n", units[u],
			            secretscan_kind_name(m.kind));
			free(buf);
			fail();
		}
		/* and cut inside the last unit, truncated */
		(void)secretscan_find(buf, n - 1, true, &m);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_generated_samples),
	    cmocka_unit_test(test_line_numbers),
	    cmocka_unit_test(test_binary),
	    cmocka_unit_test(test_cut),
	    cmocka_unit_test(test_adversarial),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
