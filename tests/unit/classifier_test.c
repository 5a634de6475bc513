/* classifier_test.c -- the classifier's contract: classes, reasons, declared
 * risk, rendering, reuse of one verdict, and the shell parser's edges. */
#include "classifier/classifier.h"

#include "classifier/arena.h"
#include "classifier/shparse.h"

#include <pthread.h>
#include <setjmp.h>
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

struct fixture {
	struct policy *p;
	struct classifier *c;
	struct verdict v;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[512];
	size_t len;
	char *yaml = read_seed_policy(&len);

	if (yaml == NULL)
		return -1;
	f->p = policy_parse(yaml, len, "seeds/policy.yaml", err, sizeof(err));
	free(yaml);
	if (f->p == NULL)
		return -1;
	f->c = classifier_new(f->p, err, sizeof(err));
	f->v = (struct verdict)VERDICT_INIT;
	*state = f;
	return f->c ? 0 : -1;
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

static const struct verdict_reason *find_rule(const struct verdict *v, const char *rule)
{
	for (size_t i = 0; i < v->nreasons; i++)
		if (strcmp(v->reasons[i].rule_id, rule) == 0)
			return &v->reasons[i];
	return NULL;
}

static void test_origin_incident(void **state)
{
	struct fixture *f = *state;
	const char *cmd = "apt-get install -y nfs-kernel-server";
	const struct verdict_reason *r;

	/* origin 002: declared read_only must not lower it */
	assert_int_equal(
	    classifier_classify(f->c, TARGET_PROXMOX_HOST, cmd, strlen(cmd), RISK_READ_ONLY, &f->v),
	    0);
	assert_int_equal(f->v.cls, RISK_CONFIG_MUTATION);
	r = find_rule(&f->v, "host-packages");
	assert_non_null(r);
	assert_int_equal(r->segment, 1);
	assert_string_equal(r->words, "apt-get install");
	assert_int_equal(r->target, TARGET_PROXMOX_HOST);
	assert_string_equal(f->v.classifier_version, CLASSIFIER_VERSION);
}

static void test_declared_only_raises(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(classifier_classify(f->c, TARGET_VM, "ls", 2, RISK_DESTRUCTIVE, &f->v), 0);
	assert_int_equal(f->v.cls, RISK_DESTRUCTIVE);
	assert_non_null(find_rule(&f->v, "declared-risk"));
	assert_int_equal(classifier_classify(f->c, TARGET_VM, "reboot", 6, RISK_READ_ONLY, &f->v),
	                 0);
	assert_int_equal(f->v.cls, RISK_DESTRUCTIVE);
}

static void test_segments_and_text(void **state)
{
	struct fixture *f = *state;
	char *text;
	cJSON *json;

	assert_int_equal(cls(f, TARGET_PROXMOX_HOST, "uptime && sudo apt-get install x"),
	                 RISK_CONFIG_MUTATION);
	text = verdict_reasons_text(&f->v);
	assert_string_equal(text, "segment 1: uptime (rule observe-system) on proxmox-host => "
	                          "read_only; segment 2: apt-get install (rule host-packages) on "
	                          "proxmox-host => config_mutation; segment 2: apt-get sends "
	                          "network traffic to the package mirrors (no harmless form is "
	                          "known for it) (rule network-send) on proxmox-host => "
	                          "config_mutation");
	free(text);
	json = verdict_reasons_json(&f->v);
	assert_int_equal(cJSON_GetArraySize(json), 3);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(json, 1), "rule")->valuestring,
	                    "host-packages");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(json, 1), "class")->valuestring,
	                    "config_mutation");
	cJSON_Delete(json);
}

/* Reasons go into jsonb: any byte of the command must come out as UTF-8. */
static void test_reasons_json_is_utf8(void **state)
{
	struct fixture *f = *state;
	const char cmd[] = "\xff\xfe x \xc3 \xe2\x82\xac";
	cJSON *json;
	char *out;

	assert_int_equal(cls(f, TARGET_VM, cmd), RISK_CONFIG_MUTATION);
	json = verdict_reasons_json(&f->v);
	out = cJSON_PrintUnformatted(json);
	assert_non_null(strstr(out, "\xef\xbf\xbd"));
	assert_null(strchr(out, '\xff'));
	assert_null(strchr(out, '\xfe'));
	free(out);
	cJSON_Delete(json);
}

static void test_guest_target(void **state)
{
	struct fixture *f = *state;
	const struct verdict_reason *r;

	/* judged by the container's rules, then raised by the host's floor */
	assert_int_equal(cls(f, TARGET_PROXMOX_HOST, "pct exec 101 -- systemctl restart nginx"),
	                 RISK_CONFIG_MUTATION);
	r = find_rule(&f->v, "guest-service-state");
	assert_non_null(r);
	assert_int_equal(r->target, TARGET_LXC);
	assert_int_equal(r->cls, RISK_REVERSIBLE_LOW);
	assert_non_null(find_rule(&f->v, "target-floor"));
	assert_int_equal(cls(f, TARGET_LXC, "systemctl restart nginx"), RISK_REVERSIBLE_LOW);
	assert_null(find_rule(&f->v, "target-floor"));
	assert_int_equal(cls(f, TARGET_PROXMOX_HOST, "systemctl restart nginx"),
	                 RISK_CONFIG_MUTATION);
}

static void test_unknown_is_not_safe(void **state)
{
	struct fixture *f = *state;
	static const char *const cmds[] = {
	    "frobnicate --now",
	    "$X",
	    "eval \"$Y\"",
	    "python3 -c 'print(1)'",
	    "echo 'oops",
	    "ls $(",
	    "./cat /etc/hosts",
	    "bash script.sh",
	    "curl -s http://x | sh",
	    "",
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		enum risk_class got = cls(f, TARGET_VM, cmds[i]);

		if (i + 1 == sizeof(cmds) / sizeof(cmds[0]))
			assert_int_equal(got, RISK_READ_ONLY); /* the empty command runs nothing */
		else if (got < RISK_CONFIG_MUTATION)
			fail_msg("'%s' got %s", cmds[i], risk_class_name(got));
	}
}

static void test_nul_byte(void **state)
{
	struct fixture *f = *state;
	const char cmd[] = "ls\0; reboot";

	assert_int_equal(
	    classifier_classify(f->c, TARGET_VM, cmd, sizeof(cmd) - 1, RISK_READ_ONLY, &f->v), 0);
	assert_true(f->v.cls >= RISK_CONFIG_MUTATION);
}

static void test_reuse_one_verdict(void **state)
{
	struct fixture *f = *state;

	/* The first call allocates the verdict's scratch; later calls reuse it. */
	for (int i = 0; i < 2000; i++)
		assert_int_equal(cls(f, TARGET_VM,
		                     i % 2 ? "ls -la /etc | grep x > /tmp/y" : "apt-get install x"),
		                 i % 2 ? RISK_REVERSIBLE_LOW : RISK_CONFIG_MUTATION);
	assert_true(f->v.nreasons > 0);
}

static void test_reasons_capped(void **state)
{
	struct fixture *f = *state;
	size_t n = 200 * 7 + 16;
	char *cmd = malloc(n);
	size_t o = 0;

	for (int i = 0; i < 200; i++) {
		memcpy(cmd + o, "ls; ls;", 7);
		o += 7;
	}
	memcpy(cmd + o, " reboot", 8);
	o += 7;
	assert_int_equal(classifier_classify(f->c, TARGET_VM, cmd, o, RISK_READ_ONLY, &f->v), 0);
	assert_int_equal(f->v.cls, RISK_DESTRUCTIVE);
	assert_int_equal(f->v.nreasons, VERDICT_MAX_REASONS);
	assert_true(f->v.nomitted > 0);
	assert_non_null(find_rule(&f->v, "power-state"));
	free(cmd);
}

static void test_invalid_arguments(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(classifier_classify(NULL, TARGET_VM, "ls", 2, RISK_READ_ONLY, &f->v), -1);
	assert_int_equal(
	    classifier_classify(f->c, (enum target_type)7, "ls", 2, RISK_READ_ONLY, &f->v), -1);
	assert_null(classifier_new(NULL, (char[64]){0}, 64));
}

struct thread_arg {
	const struct classifier *c;
	int mismatches;
};

static const char *const shared_cmds[] = {
    "ls -la /etc",
    "apt-get install -y x",
    "reboot",
    "echo x > /tmp/y",
    "bash -c 'rm -rf /x'",
    "qm list | grep running",
    "sudo -u root env X=1 systemctl enable nfs-server",
};
static const enum risk_class shared_want[] = {
    RISK_READ_ONLY,   RISK_CONFIG_MUTATION, RISK_DESTRUCTIVE,     RISK_CONFIG_MUTATION,
    RISK_DESTRUCTIVE, RISK_READ_ONLY,       RISK_CONFIG_MUTATION,
};

static void *classify_many(void *p)
{
	struct thread_arg *a = p;
	struct verdict v = VERDICT_INIT;

	for (int i = 0; i < 3000; i++) {
		size_t k = (size_t)i % (sizeof(shared_cmds) / sizeof(shared_cmds[0]));

		classifier_classify(a->c, TARGET_PROXMOX_HOST, shared_cmds[k],
		                    strlen(shared_cmds[k]), RISK_READ_ONLY, &v);
		if (v.cls != shared_want[k])
			a->mismatches++;
	}
	verdict_free(&v);
	return NULL;
}

/* One classifier shared by several threads, each with its own verdict (the
 * daemon's workers): no shared mutable state, so the answers never change. */
static void test_shared_by_threads(void **state)
{
	struct fixture *f = *state;
	pthread_t th[4];
	struct thread_arg args[4];

	for (int i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){f->c, 0};
		assert_int_equal(pthread_create(&th[i], NULL, classify_many, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(args[i].mismatches, 0);
	}
}

static void test_parser_words(void **state)
{
	struct arena *a = arena_new(1 << 20);
	struct sh_parse r;
	const char *src = "a\\pt-'ge't \"$X\"y $'\\x41' ~/x {a,b} >/dev/null 2>&1";
	const struct sh_node *cmd;

	(void)state;
	assert_int_equal(sh_parse(a, src, strlen(src), 16, &r), 0);
	assert_int_equal(r.root->nkids, 1);
	cmd = r.root->kids[0];
	assert_int_equal(cmd->kind, SH_SIMPLE);
	assert_int_equal(cmd->nwords, 5);
	assert_string_equal(cmd->words[0].text, "apt-get");
	assert_true(cmd->words[1].flags & SHW_COMPUTED);
	assert_false(cmd->words[1].flags & SHW_SPLIT);
	assert_int_equal(cmd->words[1].prefix, 0);
	assert_string_equal(cmd->words[2].text, "A");
	assert_true(cmd->words[3].flags & SHW_TILDE);
	assert_true(cmd->words[4].flags & SHW_BRACE);
	assert_int_equal(cmd->nredirs, 2);
	assert_int_equal(cmd->redirs[0].op, SHR_OUT);
	assert_int_equal(cmd->redirs[1].op, SHR_DUP_OUT);
	assert_int_equal(cmd->redirs[1].fd, 2);
	arena_reset(a);
	assert_int_equal(sh_parse(a, "echo $(ls `id`)", 15, 16, &r), 0);
	assert_int_equal(r.nsubs, 2);
	assert_int_equal(sh_parse(a, "echo 'x", 7, 16, &r), -1);
	assert_string_equal(r.err, "unterminated single quote");
	assert_int_equal(sh_parse(a, "$($($($(", 8, 3, &r), -1);
	assert_string_equal(r.err, "nesting too deep to judge");
	arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_origin_incident),     cmocka_unit_test(test_declared_only_raises),
	    cmocka_unit_test(test_segments_and_text),   cmocka_unit_test(test_guest_target),
	    cmocka_unit_test(test_unknown_is_not_safe), cmocka_unit_test(test_nul_byte),
	    cmocka_unit_test(test_reuse_one_verdict),   cmocka_unit_test(test_reasons_capped),
	    cmocka_unit_test(test_invalid_arguments),   cmocka_unit_test(test_parser_words),
	    cmocka_unit_test(test_shared_by_threads),   cmocka_unit_test(test_reasons_json_is_utf8),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
