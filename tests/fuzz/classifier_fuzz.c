/* classifier_fuzz.c -- libFuzzer target over the shell parser, the
 * classifier and the policy parser.
 *
 * Byte 0 picks the mode: 0-2 classify the rest as a command for that target
 * type with the seed policy (read once from seeds/policy.yaml, so run from
 * the repository root); 3 parses the rest as a policy.  Every verdict must
 * exist and, for unparseable input, be at least config_mutation. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *cmd = (const char *)data + 1;
	size_t len = size - 1;
	int mode;

	if (size < 1)
		return 0;
	mode = data[0] % 4;
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
