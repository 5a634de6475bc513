/* previewtpl_test.c -- previews built from the seed policy: the examples,
 * refusals, the policy syntax's errors, and generated hostile operands that
 * must stay one inert word each. */
#include "classifier/arena.h"
#include "classifier/classifier.h"
#include "classifier/previewtpl.h"
#include "classifier/shparse.h"
#include "lib/readfile.h"
#include "lib/shellquote.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct fx {
	struct policy *p;
	struct classifier *c;
	struct verdict v;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[512];
	size_t len;
	char *yaml = readfile("seeds/policy.yaml", 8 << 20, &len, err, sizeof(err));

	assert_non_null(yaml);
	f->p = policy_parse(yaml, len, "seeds/policy.yaml", err, sizeof(err));
	free(yaml);
	assert_non_null(f->p);
	f->c = classifier_new(f->p, err, sizeof(err));
	f->v = (struct verdict)VERDICT_INIT;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	verdict_free(&f->v);
	classifier_free(f->c);
	policy_free(f->p);
	free(f);
	return 0;
}

/* The previews of cmd on target type tt; rc returned, t filled. */
static int build(struct fx *f, enum target_type tt, const char *cmd, struct previewtpl *t)
{
	char why[512];

	classifier_classify(f->c, tt, cmd, strlen(cmd), RISK_READ_ONLY, &f->v);
	return previewtpl_build(f->p, &f->v, cmd, strlen(cmd), t, why, sizeof(why));
}

static void expect(struct fx *f, enum target_type tt, const char *cmd, size_t n,
                   const char *const *want)
{
	struct previewtpl t;

	assert_int_equal(build(f, tt, cmd, &t), 1);
	assert_int_equal(t.n, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(t.commands[i], want[i]);
		/* every preview the seed names is itself read_only */
		classifier_classify(f->c, tt, t.commands[i], strlen(t.commands[i]), RISK_READ_ONLY,
		                    &f->v);
		assert_int_equal(f->v.cls, RISK_READ_ONLY);
	}
	previewtpl_clear(&t);
}

static void test_examples(void **state)
{
	struct fx *f = *state;

	expect(f, TARGET_PROXMOX_HOST, "apt-get install -y nfs-kernel-server", 1,
	       (const char *const[]){"'apt-get' '-s' 'install' '-y' 'nfs-kernel-server'"});
	expect(f, TARGET_VM, "apt --no-install-recommends install nginx curl", 1,
	       (const char *const[]){"'apt-get' '-s' 'install' '--no-install-recommends' "
	                             "'nginx' 'curl'"});
	expect(f, TARGET_PROXMOX_HOST, "systemctl restart pveproxy", 2,
	       (const char *const[]){"'systemctl' 'status' '--no-pager' 'pveproxy'",
	                             "'systemctl' 'list-dependencies' '--reverse' '--no-pager' "
	                             "'pveproxy'"});
	expect(f, TARGET_PROXMOX_HOST, "systemctl stop a.service b.service", 3,
	       (const char *const[]){"'systemctl' 'status' '--no-pager' 'a.service' 'b.service'",
	                             "'systemctl' 'list-dependencies' '--reverse' '--no-pager' "
	                             "'a.service'",
	                             "'systemctl' 'list-dependencies' '--reverse' '--no-pager' "
	                             "'b.service'"});
	expect(f, TARGET_PROXMOX_HOST, "qm destroy 102 --purge", 2,
	       (const char *const[]){"'qm' 'config' '102'", "'qm' 'status' '102'"});
	expect(f, TARGET_PROXMOX_HOST, "/usr/sbin/pct stop 201", 2,
	       (const char *const[]){"'pct' 'config' '201'", "'pct' 'status' '201'"});
	expect(f, TARGET_PROXMOX_HOST, "zfs destroy -r rpool/data/vm-102-disk-0", 1,
	       (const char *const[]){"'zfs' 'destroy' '-nv' '-r' 'rpool/data/vm-102-disk-0'"});
	expect(f, TARGET_PROXMOX_HOST, "sudo apt-get remove proxmox-ve", 1,
	       (const char *const[]){"'apt-get' '-s' 'remove' 'proxmox-ve'"});
}

static void test_none_or_refused(void **state)
{
	struct fx *f = *state;
	struct previewtpl t;

	/* no rule with previews */
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "rm -rf /tmp/x", &t), 0);
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "zpool destroy tank", &t), 0);
	/* a rule with previews, but not one simple command of literal words */
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "apt-get install -y $PKG", &t), -1);
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "apt-get install x; reboot", &t), -1);
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "apt-get install $(cat list)", &t), -1);
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "apt-get install x > /tmp/o", &t), -1);
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "DEBIAN_FRONTEND=x apt-get install y", &t),
	                 -1);
	/* an operand that would become an option */
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "qm destroy -- --skiplock", &t), -1);
	assert_string_equal(t.rule, "guest-destroy");
	/* nothing to look at */
	assert_int_equal(build(f, TARGET_PROXMOX_HOST, "qm destroy", &t), -1);
	/* apt -o can undo -s: its rule (packages-apt-options) names no preview */
	assert_int_equal(build(f, TARGET_VM, "apt -o Dpkg::Options::=x install nginx", &t), 0);
}

/* Words a generated operand is made of: every shell metacharacter. */
static const char *const hostile[] = {
    ";",     "&&",     "|",        "$(", ")",   "`",        "'",       "\"",   "\\",
    "\n",    "*",      "?",        "[",  "]",   "{",        "}",       "<",    ">",
    "$HOME", "${IFS}", "#",        "~",  " ",   "\t",       "!",       "&",    "%",
    "=",     "reboot", "rm -rf /", "x",  "pkg", "\xc3\xa9", "\x1b[2J", "'\\''"};

/* Generated: a literal operand with every metacharacter, put in the command
 * as one quoted word, comes out of the preview as exactly that one word. */
static void test_hostile_operands(void **state)
{
	struct fx *f = *state;
	static const char *const forms[] = {"apt-get install -y %s", "systemctl restart %s",
	                                    "qm destroy %s", "zfs destroy -r %s"};
	struct arena *a = arena_new(1 << 20);

	srand(99);
	for (int round = 0; round < 400; round++) {
		char op[512] = "x";
		int n = 1 + rand() % 8;
		for (int i = 0; i < n; i++)
			strcat(op, hostile[rand() % (sizeof(hostile) / sizeof(hostile[0]))]);
		char *q = shellquote(op), cmd[1200];
		snprintf(cmd, sizeof(cmd), forms[round % 4], q);
		free(q);
		struct previewtpl t;
		int rc = build(f, TARGET_PROXMOX_HOST, cmd, &t);
		assert_int_equal(rc, 1);
		for (size_t k = 0; k < t.n; k++) {
			struct sh_parse res;
			arena_reset(a);
			assert_int_equal(sh_parse(a, t.commands[k], strlen(t.commands[k]), 8, &res),
			                 0);
			const struct sh_node *s = res.root;
			assert_int_equal(s->nkids, 1);
			s = s->kids[0];
			assert_int_equal(s->kind, SH_SIMPLE);
			assert_int_equal(s->nredirs, 0);
			assert_int_equal(res.nsubs, 0);
			/* the operand is the last word, exactly, and nothing is computed */
			const struct sh_word *w = &s->words[s->nwords - 1];
			assert_int_equal(w->len, strlen(op));
			assert_memory_equal(w->text, op, w->len);
			for (size_t i = 0; i < s->nwords; i++)
				assert_int_equal(
				    s->words[i].flags & (SHW_COMPUTED | SHW_SPLIT | SHW_GLOB), 0);
		}
		previewtpl_clear(&t);
	}
	arena_free(a);
}

/* The policy's preview syntax: errors name what is wrong. */
static void test_policy_syntax(void **state)
{
	static const struct {
		const char *preview, *want;
	} cases[] = {
	    {"[[apt-get, \"{pkgs}\"]]", "is not a placeholder"},
	    {"[[\"{operands}\", x]]", "the first word is the program"},
	    {"[[x, \"{operand}\", \"{operands}\"]]", "not both"},
	    {"[{when: [install]}]", "needs run"},
	    {"[{run: [x], what: 1}]", "unknown key 'what'"},
	    {"[[a], [b], [c], [d], [e]]", "a list of 1..4 commands"},
	    {"[[x, \"{program}\"]]", "{program} only as the first word"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[600], err[512] = "";
		snprintf(yaml, sizeof(yaml),
		         "version: 1\ndefaults:\n  unknown_program: config_mutation\n"
		         "  opaque_code: config_mutation\nrules:\n  - id: r\n    programs: [x]\n"
		         "    class: config_mutation\n    preview: %s\n",
		         cases[i].preview);
		struct policy *p = policy_parse(yaml, strlen(yaml), "t.yaml", err, sizeof(err));
		if (p != NULL)
			fail_msg("accepted: %s", cases[i].preview);
		if (strstr(err, cases[i].want) == NULL)
			fail_msg("%s: wanted '%s' in: %s", cases[i].preview, cases[i].want, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examples),
	    cmocka_unit_test(test_none_or_refused),
	    cmocka_unit_test(test_hostile_operands),
	    cmocka_unit_test(test_policy_syntax),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
