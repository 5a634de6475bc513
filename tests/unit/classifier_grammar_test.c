/* classifier_grammar_test.c -- read-only by proof: program grammars (options,
 * clusters, abbreviations, subcommands, operands, separators), their refusal
 * at parse time with a position, the environment allowlist, secret material,
 * invisible characters, needs_root, and a property over the seed policy:
 * every rule that says read_only stops being read_only when an option the
 * grammar does not know is appended. */
#include "classifier/classifier.h"

#include "classifier/policy_int.h"
#include "classifier/grammar.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A small policy: one program per grammar feature. */
static const char base_policy[] =
    "defaults: {unknown_program: config_mutation}\n"
    "rules:\n"
    "  - {id: t-read, programs: [gnu, dash, sub, multi, xa, bare, fr, echo, xargs, sig], class: "
    "read_only}\n"
    "  - {id: t-flush, programs: [sub2], subcommand: [\"address flush\"], class: destructive}\n"
    "  - {id: t-sub2, programs: [sub2], class: read_only}\n"
    "  - {id: t-root, programs: [rooted], class: read_only, tier: root}\n"
    "  - {id: t-bare2, programs: [bare2], subcommand: [status], class: read_only}\n"
    "environment: [LC_*, TZ]\n"
    "secrets: [\"!*.pub\", /etc/shadow, /etc/priv/, id_rsa]\n"
    "grammars:\n"
    "  gnu:\n"
    "    abbrev: unique\n"
    "    numeric: true\n"
    "    options: -a -b -n= -c=? --all --lines= --color=? --list-units --list-timers\n"
    "    refuse: -o= --output=\n"
    "    operands: 2\n"
    "  dash:\n"
    "    style: dash\n"
    "    abbrev: first\n"
    "    options: -batch-ok -brief -details -name= -exec=;\n"
    "    operands: any\n"
    "  sub|sub2:\n"
    "    sub_abbrev: prefix\n"
    "    options: -4\n"
    "    subcommands:\n"
    "      address:\n"
    "        sub_abbrev: prefix\n"
    "        subcommands: {add: any, flush: any, \"show|list\": any}\n"
    "      link:\n"
    "        sub_abbrev: prefix\n"
    "        subcommands: {set: any, show: any}\n"
    "  multi:\n"
    "    separators: [\"--\", \";\"]\n"
    "    subcommands: {show: any}\n"
    "  xa:\n"
    "    subcommands: {config: 1}\n"
    "  fr|echo|xargs:\n"
    "    free: true\n"
    "  sig:\n"
    "    signals: true\n"
    "    options: -s=\n"
    "    operands: any\n"
    "  rooted:\n"
    "    operands: any\n";

struct fixture {
	struct policy *p;
	struct classifier *c;
	struct verdict v;
};

static struct fixture *fixture_new(const char *yaml, size_t len, const char *origin)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[512];

	f->p = policy_parse(yaml, len, origin, err, sizeof(err));
	if (f->p == NULL) {
		fprintf(stderr, "policy: %s\n", err);
		free(f);
		return NULL;
	}
	f->c = classifier_new(f->p, err, sizeof(err));
	f->v = (struct verdict)VERDICT_INIT;
	return f;
}

static int setup(void **state)
{
	*state = fixture_new(base_policy, strlen(base_policy), "test");
	return *state ? 0 : -1;
}

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

static int setup_seed(void **state)
{
	size_t len = 0;
	char *yaml = read_seed_policy(&len);

	if (yaml == NULL)
		return -1;
	*state = fixture_new(yaml, len, "seeds/policy.yaml");
	free(yaml);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	verdict_free(&f->v);
	classifier_free(f->c);
	policy_free(f->p);
	free(f);
	return 0;
}

static enum risk_class cls(struct fixture *f, enum target_type t, const char *cmd)
{
	assert_int_equal(classifier_classify(f->c, t, cmd, strlen(cmd), RISK_READ_ONLY, &f->v), 0);
	return f->v.cls;
}

/* The words of the first reason with this rule id, or NULL. */
static const char *reason(const struct verdict *v, const char *rule)
{
	for (size_t i = 0; i < v->nreasons; i++)
		if (strcmp(v->reasons[i].rule_id, rule) == 0)
			return v->reasons[i].words;
	return NULL;
}

#define PROVEN(f, cmd)                                                                             \
	do {                                                                                       \
		if (cls(f, TARGET_VM, cmd) != RISK_READ_ONLY)                                      \
			fail_msg("%s: %s (%s)", cmd, risk_class_name((f)->v.cls),                  \
			         reason(&(f)->v, "unproven") ? reason(&(f)->v, "unproven") : "");  \
	} while (0)

#define UNPROVEN(f, cmd, needle)                                                                   \
	do {                                                                                       \
		const char *why_;                                                                  \
		if (cls(f, TARGET_VM, cmd) != RISK_CONFIG_MUTATION)                                \
			fail_msg("%s: %s", cmd, risk_class_name((f)->v.cls));                      \
		why_ = reason(&(f)->v, "unproven");                                                \
		if (why_ == NULL)                                                                  \
			fail_msg("%s: no unproven reason", cmd);                                   \
		if (strstr(why_, needle) == NULL)                                                  \
			fail_msg("%s: reason `%s` lacks `%s`", cmd, why_, needle);                 \
	} while (0)

static void test_gnu_options(void **state)
{
	struct fixture *f = *state;

	PROVEN(f, "gnu");
	PROVEN(f, "gnu -ab x y");
	PROVEN(f, "gnu -n 5 x");
	PROVEN(f, "gnu -n5 -an3 x");
	PROVEN(f, "gnu --lines=5 --lines 7 --all");
	PROVEN(f, "gnu --lin 5");  /* unique abbreviation of --lines */
	PROVEN(f, "gnu --list-u"); /* unique among --list-units/--list-timers */
	PROVEN(f, "gnu -c -cauto --color --color=never");
	PROVEN(f, "gnu -12 x");          /* numeric option */
	PROVEN(f, "gnu -- -o --output"); /* after --, words are operands */
	UNPROVEN(f, "gnu --reboot-argument=x", "unknown option `--reboot-argument=x` for gnu");
	UNPROVEN(f, "gnu -az", "unknown option `-z`");
	UNPROVEN(f, "gnu -n", "lacks its value");
	UNPROVEN(f, "gnu --all=yes", "takes no value");
	UNPROVEN(f, "gnu --list", "ambiguous option `--list`");
	UNPROVEN(f, "gnu -ao /tmp/x", "option `-o` of gnu writes or runs something");
	UNPROVEN(f, "gnu --out=/tmp/x", "option `--output` of gnu writes or runs something");
	UNPROVEN(f, "gnu x y z", "extra operand `z` for gnu");
	/* a word known only at run time that may be an option */
	UNPROVEN(f, "gnu $(printf -- --output=/etc/x)", "may be an option");
	UNPROVEN(f, "x=--output=/etc/x; gnu $x", "may be an option");
	PROVEN(f, "gnu \"$HOME\"");
	PROVEN(f, "gnu $(bare)"); /* another program's output is data */
	PROVEN(f, "gnu <(bare)"); /* a /dev/fd path */
	UNPROVEN(f, "gnu \"$(cat /tmp/args)\"", "may be an option");
}

static void test_dash_style(void **state)
{
	struct fixture *f = *state;

	PROVEN(f, "sig -HUP 12 -SIGTERM -s KILL 13");
	UNPROVEN(f, "sig -HUPX 12", "unknown option `-H`");

	PROVEN(f, "dash -br -d . -name x");
	PROVEN(f, "dash --brief /");
	PROVEN(f, "dash -b /"); /* first listed that starts with -b: -batch-ok */
	PROVEN(f, "dash / -exec ls {} \\;");
	UNPROVEN(f, "dash -x /", "unknown option `-x`");
	UNPROVEN(f, "dash / -exec ls {}", "no closing `;`");
}

static void test_subcommands(void **state)
{
	struct fixture *f = *state;
	const char *w;

	PROVEN(f, "sub a s");
	PROVEN(f, "sub -4 address list dev x");
	PROVEN(f, "sub l sh");
	UNPROVEN(f, "sub zzz", "unknown subcommand `zzz` for sub");
	UNPROVEN(f, "sub a zzz", "unknown subcommand `zzz` for sub address");
	UNPROVEN(f, "sub $verb", "subcommand of sub known only at run time");
	/* abbreviations are spelled out before the rules see them */
	assert_int_equal(cls(f, TARGET_VM, "sub2 a f"), RISK_DESTRUCTIVE);
	w = reason(&f->v, "t-flush");
	assert_non_null(w);
	assert_non_null(strstr(w, "address flush"));
	assert_int_equal(cls(f, TARGET_VM, "sub2 a s"), RISK_READ_ONLY);
	/* prefix resolution takes the first listed: "s" of link is set */
	assert_int_equal(cls(f, TARGET_VM, "sub2 l s"), RISK_READ_ONLY);
	assert_int_equal(cls(f, TARGET_VM, "sub2 a fl dev eth0"), RISK_DESTRUCTIVE);
}

static void test_separators_and_xargs(void **state)
{
	struct fixture *f = *state;

	PROVEN(f, "multi show");
	UNPROVEN(f, "multi show -- del-br x", "`--` starts another command for multi");
	UNPROVEN(f, "multi show \\; kill", "`;` starts another command");
	PROVEN(f, "xa config 100");
	UNPROVEN(f, "xa config 100 200", "extra operand `200`");
	PROVEN(f, "echo 1 | xargs xa config");
	UNPROVEN(f, "echo 1 | xargs xa config 100", "xargs adds words");
	UNPROVEN(f, "echo 1 | xargs xa", "xargs supplies the subcommand");
	PROVEN(f, "bare | xargs -I{} xa config {}"); /* bare alone: proven */
	PROVEN(f, "fr --anything -x y");
	/* no grammar: proven only without options, and without operands unless
	 * the deciding rule named its subcommand or arguments */
	PROVEN(f, "bare");
	UNPROVEN(f, "bare -v", "the policy has no grammar for bare");
	UNPROVEN(f, "bare set x", "`set` for bare: the policy has no grammar for bare");
	PROVEN(f, "bare2 status x");
	UNPROVEN(f, "bare2 status -x", "`-x` for bare2");
}

static void test_environment_secrets_invisible_root(void **state)
{
	struct fixture *f = *state;
	const char *w;

	assert_int_equal(cls(f, TARGET_VM, "LC_ALL=C TZ=UTC gnu"), RISK_READ_ONLY);
	assert_int_equal(cls(f, TARGET_VM, "X=1; gnu"), RISK_READ_ONLY); /* a shell variable */
	assert_int_equal(cls(f, TARGET_VM, "FOO=1 gnu"), RISK_CONFIG_MUTATION);
	assert_non_null(reason(&f->v, "env-not-allowed"));
	assert_int_equal(cls(f, TARGET_VM, "export FOO=1; gnu"), RISK_CONFIG_MUTATION);
	assert_int_equal(cls(f, TARGET_VM, "GIT_TRACE=/etc/x gnu"), RISK_CONFIG_MUTATION);

	assert_int_equal(cls(f, TARGET_LXC, "gnu /etc/shadow"), RISK_CONFIG_MUTATION);
	w = reason(&f->v, "secret-read");
	assert_non_null(w);
	assert_non_null(strstr(w, "reads secret material"));
	assert_int_equal(cls(f, TARGET_VM, "gnu < /etc//./shadow"), RISK_CONFIG_MUTATION);
	assert_int_equal(cls(f, TARGET_VM, "gnu /etc/priv/key"), RISK_CONFIG_MUTATION);
	assert_int_equal(cls(f, TARGET_VM, "gnu /etc/priv/$x"), RISK_CONFIG_MUTATION);
	assert_int_equal(cls(f, TARGET_VM, "gnu /etc/sha*"), RISK_CONFIG_MUTATION);
	assert_int_equal(cls(f, TARGET_VM, "gnu ~/.ssh/id_rsa"), RISK_CONFIG_MUTATION);
	assert_int_equal(cls(f, TARGET_VM, "gnu ~/.ssh/id_rsa.pub"), RISK_READ_ONLY);
	assert_int_equal(cls(f, TARGET_VM, "gnu /etc/priv"), RISK_READ_ONLY);
	assert_int_equal(cls(f, TARGET_VM, "gnu file:///etc/shadow"), RISK_CONFIG_MUTATION);
	assert_non_null(reason(&f->v, "secret-read"));
	assert_int_equal(cls(f, TARGET_VM, "gnu http://h/etc/shadow"), RISK_READ_ONLY);
	cls(f, TARGET_VM, "gnu \"$(bare /etc/shadow)\"");
	assert_non_null(reason(&f->v, "secret-read"));
	assert_int_equal(cls(f, TARGET_VM, "gnu /etc/pr?v/x"), RISK_CONFIG_MUTATION);

	assert_int_equal(cls(f, TARGET_VM, "gnu \x1b[2K\xe2\x80\xae x"), RISK_READ_ONLY);
	w = reason(&f->v, "invisible-characters");
	assert_non_null(w);
	assert_non_null(strstr(w, "\\x1b"));
	assert_non_null(strstr(w, "\\u202e"));
	assert_int_equal(cls(f, TARGET_VM, "gnu x\ty\n"), RISK_READ_ONLY);
	assert_null(reason(&f->v, "invisible-characters"));

	/* values that run code when expanded */
	assert_int_equal(cls(f, TARGET_VM, "gnu \"${x@P}\""), RISK_CONFIG_MUTATION);
	assert_non_null(reason(&f->v, "value-runs-code"));
	assert_int_equal(cls(f, TARGET_VM, "gnu ${!x}"), RISK_CONFIG_MUTATION);
	assert_int_equal(cls(f, TARGET_VM, "gnu \"${x:-y}\" ${#x}"), RISK_READ_ONLY);

	/* the root tier: one proven invocation of a `tier: root` program, and
	 * nothing else (classifier_jail_test.c has the pipelines) */
	cls(f, TARGET_VM, "rooted x");
	assert_true(f->v.needs_root);
	cls(f, TARGET_VM, "gnu x");
	assert_false(f->v.needs_root);
	cls(f, TARGET_VM, "gnu x | rooted");
	assert_false(f->v.needs_root);
	cls(f, TARGET_VM, "rooted x; gnu x");
	assert_false(f->v.needs_root);
}

/* A malformed grammar is refused with origin:line:col and no policy. */
static void refused(const char *grammar_yaml, const char *where, const char *needle)
{
	char yaml[2048], err[512];
	struct policy *p;

	snprintf(yaml, sizeof(yaml),
	         "defaults: {unknown_program: config_mutation}\n"
	         "rules:\n"
	         "  - {id: r, programs: [a, b], class: read_only}\n"
	         "%s",
	         grammar_yaml);
	p = policy_parse(yaml, strlen(yaml), "pol.yaml", err, sizeof(err));
	if (p != NULL) {
		policy_free(p);
		fail_msg("accepted: %s", grammar_yaml);
	}
	if (strncmp(err, where, strlen(where)) != 0 || strstr(err, needle) == NULL)
		fail_msg("error `%s`, wanted `%s...%s`", err, where, needle);
}

static void test_malformed_grammars(void **state)
{
	(void)state;
	refused("grammars:\n  a:\n    optoins: -x\n", "pol.yaml:6:5:", "unknown key `optoins`");
	refused("grammars:\n  a:\n    options: x\n", "pol.yaml:6:14:", "option `x` must be");
	refused("grammars:\n  a:\n    options: -abc\n", "pol.yaml:6:14:", "one letter");
	refused("grammars:\n  a:\n    options: -a -a=\n", "pol.yaml:6:14:", "listed twice");
	refused("grammars:\n  a:\n    operands: lots\n", "pol.yaml:6:15:", "operands:");
	refused("grammars:\n  a:\n    abbrev: maybe\n", "pol.yaml:6:13:", "abbrev:");
	refused("grammars:\n  zz:\n    operands: any\n",
	        "pol.yaml:5:3:", "no rule names program 'zz'");
	refused("grammars:\n  a: {}\n  a|b: {}\n", "pol.yaml:6:3:", "has two grammars");
	refused("grammars:\n  a:\n    subcommands: {x: any, \"y|x\": none}\n",
	        "pol.yaml:6:27:", "subcommand `x` listed twice");
	refused("grammars:\n  a:\n    subcommands: {-x: any}\n",
	        "pol.yaml:6:19:", "a key is a name");
	refused("grammars:\n  a: [x]\n", "pol.yaml:5:6:", "must be a mapping");
	refused("grammars:\n  a:\n    options: [-x, {y: 1}]\n",
	        "pol.yaml:6:19:", "items must be option tokens");
	refused("environment: [LC_ALL, \"1X\"]\ngrammars: {}\n",
	        "pol.yaml:4:14:", "not a variable name");
	refused("secrets: [etc/shadow]\ngrammars: {}\n", "pol.yaml:4:10:", "absolute path");
	refused("grammars:\n  a:\n    subcommands:\n      x:\n        subcommands:\n          y:\n"
	        "            subcommands:\n              z:\n                subcommands:\n"
	        "                  q:\n                    subcommands:\n"
	        "                      r:\n                        subcommands:\n"
	        "                          s:\n                            subcommands:\n"
	        "                              t:\n                                subcommands:\n"
	        "                                  u:\n"
	        "                                    subcommands: {v: any}\n",
	        "pol.yaml:", "nested deeper");
	{
		char err[256];
		const char *bad =
		    "defaults: {unknown_program: config_mutation}\n"
		    "rules:\n  - {id: r, programs: [a], class: read_only, tier: god}\n";
		struct policy *p = policy_parse(bad, strlen(bad), "pol.yaml", err, sizeof(err));

		assert_null(p);
		assert_non_null(strstr(err, "tier: expected root or user"));
	}
}

/* Does program pr's grammar (its root level) say option word takes the next
 * word as its value?  Then an option appended after it is that value, as the
 * program itself would read it. */
static bool takes_next_word(const struct policy_program *pr, const char *word)
{
	if (pr == NULL || pr->grammar == NULL)
		return false;
	for (size_t i = 0; i < pr->grammar->nopts; i++)
		if (strcmp(pr->grammar->opts[i].name, word) == 0)
			return pr->grammar->opts[i].arity == GRAM_VALUE;
	return false;
}

/* Property: for every rule of the seed policy that says read_only, a command
 * that rule matches, with an option appended that no grammar knows, is no
 * longer read_only.  Programs whose grammar is `free` (echo, printf, test:
 * they print or compare their words and parse no options) are exempt, and
 * counted. */
static void test_property_unknown_option_raises(void **state)
{
	struct fixture *f = *state;
	const struct policy *p = f->p;
	size_t checked = 0, exempt = 0, bad = 0;

	for (size_t i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];
		enum target_type t = TARGET_VM;

		if (r->kind != POLICY_RULE_COMMAND || r->cls != RISK_READ_ONLY)
			continue;
		while (!(r->targets & (1u << t)))
			t = (enum target_type)((t + 1) % TARGET_TYPE_COUNT);
		for (size_t k = 0; k < r->programs.n; k++) {
			const struct policy_program *pr =
			    policy_program_find(p, r->programs.v[k], strlen(r->programs.v[k]));
			char cmd[512];
			size_t n = 0;

			if (pr != NULL && pr->grammar != NULL && pr->grammar->free_words) {
				exempt++;
				continue;
			}
			n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s", r->programs.v[k]);
			if (r->subcommand.n) {
				n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " ");
				for (const char *q = r->subcommand.v[0]; *q && n + 4 < sizeof(cmd);
				     q++) {
					if (*q == '*') {
						memcpy(cmd + n, "100", 3);
						n += 3;
					} else {
						cmd[n++] = *q;
					}
				}
				cmd[n] = '\0';
			}
			if (r->args.n)
				n +=
				    (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s", r->args.v[0]);
			if (r->arg_prefix.n)
				n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %sx",
				                      r->arg_prefix.v[0]);
			if (r->arg_contains.n)
				n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " x%s",
				                      r->arg_contains.v[0]);
			if (r->flags.n)
				n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " %s",
				                      r->flags.v[0]);
			if (n + 40 >= sizeof(cmd))
				continue;
			/* appended; and, since the last flag may take the next word as its
			 * value, also right after the program's name */
			snprintf(cmd + n, sizeof(cmd) - n, " --airlock-no-such-option");
			checked++;
			if (!r->flags.n && !(r->args.n && takes_next_word(pr, r->args.v[0])) &&
			    cls(f, t, cmd) < RISK_CONFIG_MUTATION) {
				bad++;
				fprintf(stderr, "rule %s: `%s` stays %s\n", r->id, cmd,
				        risk_class_name(f->v.cls));
			}
			{
				size_t pl = strlen(r->programs.v[k]);
				char moved[600];

				snprintf(moved, sizeof(moved), "%.*s --airlock-no-such-option%s",
				         (int)pl, cmd, cmd + pl);
				moved[strlen(moved) - strlen(" --airlock-no-such-option")] = '\0';
				if (cls(f, t, moved) < RISK_CONFIG_MUTATION) {
					bad++;
					fprintf(stderr, "rule %s: `%s` stays %s\n", r->id, moved,
					        risk_class_name(f->v.cls));
				}
			}
			continue;
			checked++;
			if (cls(f, t, cmd) < RISK_CONFIG_MUTATION) {
				bad++;
				fprintf(stderr, "rule %s: `%s` stays %s\n", r->id, cmd,
				        risk_class_name(f->v.cls));
			}
		}
	}
	fprintf(stderr, "property: %zu read_only uses checked, %zu exempt (free grammars)\n",
	        checked, exempt);
	assert_true(checked > 100);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_gnu_options, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dash_style, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_subcommands, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_separators_and_xargs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_environment_secrets_invisible_root, setup,
	                                    teardown),
	    cmocka_unit_test(test_malformed_grammars),
	    cmocka_unit_test_setup_teardown(test_property_unknown_option_raises, setup_seed,
	                                    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
