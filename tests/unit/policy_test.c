/* policy_test.c -- parsing the classifier policy, and refusing bad ones with
 * file:line:col. */
#include "classifier/policy.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The seed policy as text (tests run from the repository root). */
static char *read_seed_policy(size_t *len)
{
	FILE *f = fopen("seeds/policy.yaml", "rb");
	char *text = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		text = malloc((size_t)n + 1);
		if (text != NULL && fread(text, 1, (size_t)n, f) == (size_t)n) {
			text[n] = '\0';
			*len = (size_t)n;
		} else {
			free(text);
			text = NULL;
		}
	}
	fclose(f);
	return text;
}

static const char *const minimal = "defaults:\n"
                                   "  unknown_program: config_mutation\n"
                                   "rules:\n"
                                   "  - id: observe\n"
                                   "    description: looking\n"
                                   "    programs: [ls, cat]\n"
                                   "    class: read_only\n"
                                   "  - id: pkgs\n"
                                   "    programs: apt-get\n"
                                   "    subcommand: [install]\n"
                                   "    class: config_mutation\n"
                                   "paths:\n"
                                   "  - id: etc\n"
                                   "    prefixes: [/etc/]\n"
                                   "    class: config_mutation\n";

static struct policy *parse(const char *y, char *err, size_t errlen)
{
	return policy_parse(y, strlen(y), "p.yaml", err, errlen);
}

static void test_minimal(void **state)
{
	char err[256];
	struct policy *p = parse(minimal, err, sizeof(err));

	(void)state;
	assert_non_null(p);
	assert_int_equal(policy_rule_count(p), 3);
	assert_string_equal(policy_rule_id(p, 0), "observe");
	assert_string_equal(policy_rule_description(p, 0), "looking");
	assert_int_equal(policy_rule_class(p, 1), RISK_CONFIG_MUTATION);
	assert_string_equal(policy_rule_description(p, 1), "");
	assert_int_equal(policy_rule_kind(p, 2), POLICY_RULE_PATH);
	policy_free(p);
	policy_free(NULL);
}

struct bad {
	const char *yaml;
	const char *err; /* expected prefix of the message */
};

static void test_refusals(void **state)
{
	static const struct bad cases[] = {
	    {"defaults: {}\nrules:\n  - id: x\n    programs: [ls]\n    class: safe\n",
	     "p.yaml:5:12: unknown class"},
	    {"defaults: {}\nrules:\n  - id: x\n    programs: [ls]\n    clas: read_only\n",
	     "p.yaml:5:5: unknown or invalid key 'clas'"},
	    {"defaults:\n  unknown_program: read_only\nrules: []\n",
	     "p.yaml:2:20: unknown_program must be at least config_mutation"},
	    {"defaults:\n  opaque_code: reversible_low\nrules: []\n",
	     "p.yaml:2:16: opaque_code must be at least config_mutation"},
	    {"defaults: {}\nrules:\n  - {id: a, programs: [ls], class: read_only}\n"
	     "  - {id: a, programs: [cat], class: read_only}\n",
	     "p.yaml:4:5: duplicate rule id 'a'"},
	    {"rules: []\n", "p.yaml:1:1: missing 'defaults'"},
	    {"defaults: {}\n", "p.yaml:1:1: missing 'rules'"},
	    {"defaults: {}\nrules:\n  - id: x\n    class: read_only\n",
	     "p.yaml:3:5: rule 'x' names no"},
	    {"defaults: {}\nrules:\n  - id: x\n    programs: [ls]\n    targets: [host]\n    class: "
	     "read_only\n",
	     "p.yaml:5:14: unknown target type 'host'"},
	    {"defaults: {}\nrules: []\npaths:\n  - id: p\n    prefixes: [etc]\n    class: "
	     "read_only\n",
	     "p.yaml:5:15: prefixes must be absolute"},
	    {"defaults: {}\nrules: []\nextra: 1\n", "p.yaml:3:1: unknown top-level key 'extra'"},
	    {"defaults: {}\nrules: [\n", "p.yaml:"},
	    {"defaults: {}\nrules: []\nfloors:\n  host: config_mutation\n",
	     "p.yaml:4:3: floors: unknown target type"},
	    {"defaults: {}\nrules: []\nfloors:\n  vm: high\n", "p.yaml:4:7: unknown class"},
	    {"defaults: {}\nrules: []\nvalue_options:\n  ls: [-x]\n",
	     "p.yaml:4:3: value_options: no rule names program 'ls'"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256];
		struct policy *p = parse(cases[i].yaml, err, sizeof(err));

		if (p != NULL || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("case %zu: got %s, want %s", i, p ? "a policy" : err,
			         cases[i].err);
	}
}

static void test_seed_policy_parses(void **state)
{
	char err[512];
	size_t len = 0;
	char *yaml = NULL;
	struct policy *p;
	bool host_packages = false;

	(void)state;
	yaml = read_seed_policy(&len);
	assert_non_null(yaml);
	p = policy_parse(yaml, len, "seeds/policy.yaml", err, sizeof(err));
	if (p == NULL)
		fail_msg("%s", err);
	assert_true(policy_rule_count(p) > 100);
	for (size_t i = 0; i < policy_rule_count(p); i++) {
		if (strcmp(policy_rule_id(p, i), "host-packages") == 0) {
			host_packages = true;
			assert_int_equal(policy_rule_class(p, i), RISK_CONFIG_MUTATION);
		}
		assert_null(strchr(policy_rule_description(p, i), '\n'));
	}
	assert_true(host_packages);
	policy_free(p);
	free(yaml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minimal),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_seed_policy_parses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
