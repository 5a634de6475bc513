/* classifier_fuzz.c -- libFuzzer target over the shell parser, the
 * classifier and the policy parser.
 *
 * Byte 0 picks the mode: 0-2 classify the rest as a command for that target
 * type with the seed policy (read once from seeds/policy.yaml, so run from
 * the repository root); 3 parses the rest as a policy; 4 builds a program
 * grammar from the first line of the rest (its option tokens; bytes 1-2 pick
 * the abbreviation rule and style) and classifies the other lines as that
 * program's arguments, so the grammar parser and the prover see hostile
 * tokens and words.  Every verdict must exist and, for unparseable input, be
 * at least config_mutation. */
#include "classifier/classifier.h"

#include "classifier/arena.h"
#include "classifier/shparse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Loaded once per fuzzing process; the harness, not the library, holds it. */
static struct policy *fuzz_policy;
static struct classifier *fuzz_classifier;
static struct verdict fuzz_verdict = VERDICT_INIT;
static struct arena *fuzz_arena;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f = fopen("seeds/policy.yaml", "rb");
	static char text[1 << 20];
	size_t n;
	char err[512];

	(void)argc;
	(void)argv;
	if (f == NULL) {
		fprintf(stderr, "classifier_fuzz: run from the repository root\n");
		abort();
	}
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	fuzz_policy = policy_parse(text, n, "seeds/policy.yaml", err, sizeof(err));
	if (fuzz_policy == NULL) {
		fprintf(stderr, "classifier_fuzz: %s\n", err);
		abort();
	}
	fuzz_classifier = classifier_new(fuzz_policy, err, sizeof(err));
	fuzz_arena = arena_new((size_t)64 << 20);
	return 0;
}

/* Mode 4: a grammar whose option tokens come from the input, and a command
 * for it.  Tokens are made YAML-safe (printable, no quotes); the words of the
 * command are taken as they are. */
static int fuzz_grammar(const char *in, size_t len)
{
	static const char *const abbrev[] = {"none", "unique", "first"};
	const char *nl = memchr(in, '\n', len);
	size_t tl = nl ? (size_t)(nl - in) : len, cl = nl ? len - tl - 1 : 0;
	char *yaml, *cmd, err[256];
	size_t yl = 0, cap = 2 * tl + 1024;
	struct policy *p;

	if (len < 2 || tl > 4096)
		return 0;
	yaml = malloc(cap);
	cmd = malloc(cl + 3);
	yl += (size_t)snprintf(yaml + yl, cap - yl,
	                       "defaults: {unknown_program: config_mutation}\n"
	                       "rules:\n  - {id: r, programs: [p], class: read_only}\n"
	                       "grammars:\n  p:\n    abbrev: %s\n    style: %s\n"
	                       "    sub_abbrev: prefix\n    numeric: true\n"
	                       "    separators: [\";\", \"--x\"]\n    options: '",
	                       abbrev[(unsigned char)in[0] % 3], in[1] & 1 ? "dash" : "gnu");
	for (size_t i = 2; i < tl; i++)
		yaml[yl++] =
		    (in[i] >= 0x20 && in[i] < 0x7f && in[i] != '\'' && in[i] != '\\') ? in[i] : ' ';
	yl += (size_t)snprintf(yaml + yl, cap - yl,
	                       "'\n    subcommands: {show: any, \"set|st\": 2, sub: {operands: 1, "
	                       "options: -q --quiet=}}\n    operands: 3\n");
	p = policy_parse(yaml, yl, "fuzz-grammar", err, sizeof(err));
	if (p != NULL) {
		struct classifier *c = classifier_new(p, err, sizeof(err));
		struct verdict v = VERDICT_INIT;

		memcpy(cmd, "p ", 2);
		if (cl > 0)
			memcpy(cmd + 2, nl + 1, cl);
		if (classifier_classify(c, TARGET_VM, cmd, cl + 2, RISK_READ_ONLY, &v) != 0)
			abort();
		free(verdict_reasons_text(&v));
		verdict_free(&v);
		classifier_free(c);
		policy_free(p);
	}
	free(cmd);
	free(yaml);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *cmd = (const char *)data + 1;
	size_t len = size - 1;
	int mode;

	if (size < 1)
		return 0;
	mode = data[0] % 5;
	if (mode == 4)
		return fuzz_grammar(cmd, len);
	if (mode == 3) {
		char err[256];
		struct policy *p = policy_parse(cmd, len, "fuzz", err, sizeof(err));

		if (p != NULL) {
			struct classifier *c = classifier_new(p, err, sizeof(err));
			struct verdict v = VERDICT_INIT;

			classifier_classify(c, TARGET_VM, "ls; apt-get install x > /etc/x", 30,
			                    RISK_READ_ONLY, &v);
			verdict_free(&v);
			classifier_free(c);
			policy_free(p);
		}
		return 0;
	}
	if (classifier_classify(fuzz_classifier, (enum target_type)mode, cmd, len, RISK_READ_ONLY,
	                        &fuzz_verdict) != 0)
		abort();
	{
		struct sh_parse r;

		arena_reset(fuzz_arena);
		if (sh_parse(fuzz_arena, cmd, len, 48, &r) != 0 &&
		    fuzz_verdict.cls < RISK_CONFIG_MUTATION)
			abort(); /* what cannot be parsed is never below config_mutation */
	}
	free(verdict_reasons_text(&fuzz_verdict));
	cJSON_Delete(verdict_reasons_json(&fuzz_verdict));
	return 0;
}
