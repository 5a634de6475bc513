/* classifier_jail_test.c -- what the classifier tells the jail: the root
 * tier (needs_root), the network view (net_view), the write set (writes,
 * writes_unknown) and the action rule; network clients and the operator's
 * allow list; secret material reached through the command's own values,
 * trees and /proc; the policy keys behind them, each refused when malformed. */
#include "classifier/classifier.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char policy_yaml[] =
    "defaults: {unknown_program: config_mutation, home: /root}\n"
    "floors: {proxmox-host: config_mutation}\n"
    "rules:\n"
    "  - {id: t-root, programs: [rootprog], class: read_only, tier: root}\n"
    "  - {id: t-view, programs: [viewer, fw], class: read_only}\n"
    "  - {id: t-filter, programs: [filt, grep, cat], class: read_only}\n"
    "  - {id: t-plain, programs: [plain, echo], class: read_only}\n"
    "  - {id: t-write, programs: [writer], writes: all, class: reversible_low}\n"
    "  - {id: t-first, programs: [zipper], writes: first, class: reversible_low}\n"
    "  - {id: t-paths, programs: [cleaner], write_paths: [/var/cache/x/, /var/lib/x/state],\n"
    "     class: reversible_low}\n"
    "  - {id: t-act, programs: [svc], action: true, class: reversible_low}\n"
    "  - {id: t-act2, programs: [svc2], action: true, class: reversible_low}\n"
    "  - {id: t-vague, programs: [vague], class: reversible_low}\n"
    "  - {id: t-curl, programs: [curl, wget, ping, dig], class: read_only}\n"
    "  - {id: t-send, programs: [sender], class: read_only}\n"
    "  - {id: t-wrap, programs: [chroot], class: read_only}\n"
    "paths:\n"
    "  - {id: p-null, prefixes: [/dev/null], class: read_only}\n"
    "  - {id: p-tmp, prefixes: [/tmp/], class: reversible_low}\n"
    "  - {id: p-etc, prefixes: [/etc/], class: config_mutation}\n"
    "secrets: [\"!*.pub\", /etc/shadow, /etc/priv/, id_rsa, /dev/sd*]\n"
    "secret_stores: [/root/.ssh, /etc/creds, /home/*/.pgpass, /var/lib/db/config.db]\n"
    "environment: [LC_*, https_proxy]\n"
    "grammars:\n"
    "  rootprog:\n"
    "    subcommands:\n"
    "      list: {operands: none, net: view}\n"
    "      show: 1\n"
    "  viewer:\n"
    "    subcommands:\n"
    "      show: {operands: any, net: view}\n"
    "      set: any\n"
    "  fw:\n"
    "    options: -L -A= -n\n"
    "    net_options: -L\n"
    "  filt:\n"
    "    filter: 1\n"
    "    options: -i -f=\n"
    "    filter_refuse: -f\n"
    "    operands: any\n"
    "  grep:\n"
    "    filter: 1\n"
    "    options: -i -r -e=\n"
    "    filter_refuse: -r -e\n"
    "    operands: any\n"
    "  cat:\n"
    "    filter: 0\n"
    "    operands: any\n"
    "  plain:\n"
    "    operands: any\n"
    "  echo:\n"
    "    free: true\n"
    "    filter: 0\n"
    "  writer|zipper|cleaner|svc|svc2|vague:\n"
    "    operands: any\n"
    "  curl:\n"
    "    options: -s -I -L -X= -o= -H= -d= --version\n"
    "    operands: any\n"
    "  wget:\n"
    "    options: -q -O= --max-redirect= --spider\n"
    "    operands: any\n"
    "  ping:\n"
    "    options: -c= -f -p=\n"
    "    operands: 1\n"
    "  dig:\n"
    "    free: true\n"
    "  sender:\n"
    "    net: send\n"
    "    operands: any\n";

struct fixture {
	struct policy *p;
	struct classifier *c;  /* no network allowed */
	struct classifier *ca; /* network.allow: allowed.example, 10.0.0.* */
	struct verdict v;
};

static int setup(void **state)
{
	static const char *const allow[] = {"allowed.example", "10.0.0.*", "localhost"};
	struct fixture *f = calloc(1, sizeof(*f));
	char err[512];

	f->p = policy_parse(policy_yaml, strlen(policy_yaml), "test", err, sizeof(err));
	if (f->p == NULL) {
		fprintf(stderr, "policy: %s\n", err);
		free(f);
		return -1;
	}
	f->c = classifier_new(f->p, err, sizeof(err));
	f->ca = classifier_new_opts(f->p, &(struct classifier_options){allow, 3}, err, sizeof(err));
	if (f->c == NULL || f->ca == NULL) {
		fprintf(stderr, "classifier: %s\n", err);
		return -1;
	}
	f->v = (struct verdict)VERDICT_INIT;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	verdict_free(&f->v);
	classifier_free(f->c);
	classifier_free(f->ca);
	policy_free(f->p);
	free(f);
	return 0;
}

static enum risk_class run(struct fixture *f, const struct classifier *c, enum target_type t,
                           const char *cmd)
{
	assert_int_equal(classifier_classify(c, t, cmd, strlen(cmd), RISK_READ_ONLY, &f->v), 0);
	return f->v.cls;
}

static const char *reason(const struct verdict *v, const char *rule)
{
	for (size_t i = 0; i < v->nreasons; i++)
		if (strcmp(v->reasons[i].rule_id, rule) == 0)
			return v->reasons[i].words;
	return NULL;
}

/* The write set joined with spaces, for comparing. */
static const char *writes(const struct verdict *v)
{
	static char buf[1024];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < v->nwrites && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", v->writes[i]);
	return buf;
}

#define ROOT(f, cmd, want)                                                                         \
	do {                                                                                       \
		run(f, (f)->c, TARGET_PROXMOX_HOST, cmd);                                          \
		if ((f)->v.needs_root != (want))                                                   \
			fail_msg("%s: needs_root %d, wanted %d (%s)", cmd, (f)->v.needs_root,      \
			         want, risk_class_name((f)->v.cls));                               \
	} while (0)

#define NET(f, c, cmd, want)                                                                       \
	do {                                                                                       \
		run(f, c, TARGET_VM, cmd);                                                         \
		if ((f)->v.net_view != (want))                                                     \
			fail_msg("%s: net_view %d, wanted %d (%s)", cmd, (f)->v.net_view, want,    \
			         risk_class_name((f)->v.cls));                                     \
	} while (0)

/* Every field starts from its most confined value. */
static void test_fields_reset(void **state)
{
	struct fixture *f = *state;

	run(f, f->c, TARGET_VM, "svc x; writer /tmp/a; rootprog list");
	assert_non_null(f->v.action_rule);
	assert_int_equal(f->v.nwrites, 1);
	run(f, f->c, TARGET_VM, "plain x");
	assert_false(f->v.needs_root);
	assert_false(f->v.net_view);
	assert_int_equal(f->v.nwrites, 0);
	assert_false(f->v.writes_unknown);
	assert_null(f->v.action_rule);
}

/* The root tier: one proven tier:root invocation, optionally piped into
 * filters that read only the pipe; nothing else. */
static void test_root_tier(void **state)
{
	struct fixture *f = *state;

	ROOT(f, "rootprog list", true);
	ROOT(f, "rootprog show 1", true);
	ROOT(f, "rootprog list | grep -i x", true);
	ROOT(f, "rootprog list | grep x | cat", true);
	ROOT(f, "rootprog list 2>/dev/null | filt x 2>&1", true);
	ROOT(f, "rootprog list >/dev/null", true);
	/* filters that read more than the pipe */
	ROOT(f, "rootprog list | grep x /etc/hosts", false);
	ROOT(f, "rootprog list | grep -r x", false);
	ROOT(f, "rootprog list | grep -e x", false);
	ROOT(f, "rootprog list | filt -f /root/patterns", false);
	ROOT(f, "rootprog list | cat /etc/hosts", false);
	/* not a filter, not first, not alone */
	ROOT(f, "rootprog list | plain", false);
	ROOT(f, "plain | rootprog list", false);
	ROOT(f, "grep x | rootprog list", false);
	ROOT(f, "rootprog list; plain", false);
	ROOT(f, "rootprog list && rootprog show 1", false);
	ROOT(f, "rootprog list; rootprog show 1", false);
	ROOT(f, "echo $(rootprog list)", false);
	ROOT(f, "rootprog show $(plain)", false);
	ROOT(f, "bash -c 'rootprog list'", false);
	ROOT(f, "f() { rootprog list; }; f", false);
	/* redirections other than descriptor copies and /dev/null */
	ROOT(f, "rootprog list > /tmp/out", false);
	ROOT(f, "rootprog list < /etc/hosts", false);
	ROOT(f, "rootprog list | grep x > /tmp/out", false);
	/* assignments and wrappers that change how it runs */
	ROOT(f, "LC_ALL=C rootprog list", false);
	ROOT(f, "chroot /mnt rootprog list", false);
	ROOT(f, "sudo rootprog list", true);
	ROOT(f, "timeout 10 rootprog list | grep x", true);
	/* unproven or a change */
	ROOT(f, "rootprog list --frobnicate", false);
	ROOT(f, "rootprog destroy", false);
	ROOT(f, "plain", false);
}

/* The network view: every program is `net: view` where its words led (or
 * given a net_options option), an allowed harmless read, or a filter. */
static void test_net_view(void **state)
{
	struct fixture *f = *state;

	NET(f, f->c, "viewer show", true);
	NET(f, f->c, "viewer show | grep x", true);
	NET(f, f->c, "viewer show; viewer show x", true);
	NET(f, f->c, "fw -L -n", true);
	NET(f, f->c, "fw -n", false);
	NET(f, f->c, "rootprog list", true);
	NET(f, f->c, "rootprog show 1", false); /* not marked: no network */
	NET(f, f->c, "viewer", false);          /* the node itself is not marked */
	NET(f, f->c, "viewer set x", false);    /* a change, marked nothing */
	NET(f, f->c, "viewer show; plain", false);
	NET(f, f->c, "viewer show | plain", false);
	NET(f, f->c, "grep x", false); /* a filter alone needs no network */
	NET(f, f->c, "chroot / viewer show", false);
	NET(f, f->c, "viewer show; sh -c 'viewer show'", false);
	NET(f, f->c, "viewer show --frobnicate", false);
	/* a harmless read of an allowed destination keeps the network */
	NET(f, f->ca, "curl -s http://allowed.example/x", true);
	NET(f, f->ca, "curl -s http://allowed.example/x | grep y", true);
	NET(f, f->c, "curl -s http://allowed.example/x", false);
	NET(f, f->ca, "curl -s http://other.example/x", false);
}

static void test_write_set(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(run(f, f->c, TARGET_VM, "writer /tmp/a /tmp/b"), RISK_REVERSIBLE_LOW);
	assert_string_equal(writes(&f->v), "/tmp/a /tmp/b");
	assert_false(f->v.writes_unknown);
	assert_null(f->v.action_rule);
	/* normalised, once each, relative to every directory a cd reached */
	run(f, f->c, TARGET_VM, "writer /tmp//a /tmp/./a /tmp/x/../a");
	assert_string_equal(writes(&f->v), "/tmp/a");
	run(f, f->c, TARGET_VM, "cd /tmp || cd /opt/app; writer x");
	assert_string_equal(writes(&f->v), "/root/x /tmp/x /opt/app/x");
	run(f, f->c, TARGET_VM, "echo hi > /tmp/out; echo hi >> /opt/log; plain 2>/dev/null");
	assert_string_equal(writes(&f->v), "/tmp/out /opt/log");
	assert_int_equal(f->v.cls, RISK_REVERSIBLE_LOW);
	/* writes: first, write_paths ("dir/" below dir) */
	run(f, f->c, TARGET_VM, "zipper /tmp/a.zip /etc/hosts");
	assert_string_equal(writes(&f->v), "/tmp/a.zip");
	run(f, f->c, TARGET_VM, "cleaner");
	assert_string_equal(writes(&f->v), "/var/cache/x/ /var/lib/x/state");
	assert_int_equal(f->v.cls, RISK_REVERSIBLE_LOW);
	/* a tree: tar -x below a directory */
	run(f, f->c, TARGET_VM, "cd /opt/app && tar -xf /tmp/a.tar");
	assert_non_null(strstr(writes(&f->v), "/opt/app/"));
	/* known only at run time: writes_unknown, and an operator looks */
	assert_int_equal(run(f, f->c, TARGET_VM, "writer \"$f\""), RISK_CONFIG_MUTATION);
	assert_true(f->v.writes_unknown);
	assert_int_equal(run(f, f->c, TARGET_VM, "echo x > $out"), RISK_CONFIG_MUTATION);
	assert_true(f->v.writes_unknown);
	assert_int_equal(run(f, f->c, TARGET_VM, "cd \"$d\"; writer x"), RISK_CONFIG_MUTATION);
	assert_true(f->v.writes_unknown);
	/* more paths than a write set holds */
	{
		char cmd[4096] = "writer";
		size_t n = strlen(cmd);

		for (int i = 0; i < 70; i++)
			n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " /tmp/f%d", i);
		assert_int_equal(run(f, f->c, TARGET_VM, cmd), RISK_CONFIG_MUTATION);
		assert_true(f->v.writes_unknown);
		assert_int_equal(f->v.nwrites, 64);
	}
}

static void test_actions(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(run(f, f->c, TARGET_VM, "svc restart x"), RISK_REVERSIBLE_LOW);
	assert_string_equal(f->v.action_rule, "t-act");
	assert_int_equal(f->v.nwrites, 0);
	assert_int_equal(run(f, f->c, TARGET_VM, "svc a; svc b"), RISK_REVERSIBLE_LOW);
	assert_string_equal(f->v.action_rule, "t-act");
	/* two kinds of action: the jail lets one through, so a human looks */
	assert_int_equal(run(f, f->c, TARGET_VM, "svc a; svc2 b"), RISK_CONFIG_MUTATION);
	assert_non_null(reason(&f->v, "actions-differ"));
	/* a reversible_low rule that says neither what it writes nor that it
	 * acts cannot be confined to its claim */
	assert_int_equal(run(f, f->c, TARGET_VM, "vague x"), RISK_CONFIG_MUTATION);
	assert_non_null(reason(&f->v, "unstated-change"));
	assert_non_null(strstr(reason(&f->v, "unstated-change"), "t-vague"));
	/* ... a redirection of its own output is not what it changes */
	assert_int_equal(run(f, f->c, TARGET_VM, "vague x > /tmp/o"), RISK_CONFIG_MUTATION);
	assert_int_equal(run(f, f->c, TARGET_VM, "writer /tmp/y"), RISK_REVERSIBLE_LOW);
}

#define SENDS(f, c, cmd, needle)                                                                   \
	do {                                                                                       \
		const char *r_;                                                                    \
		if (run(f, c, TARGET_VM, cmd) < RISK_CONFIG_MUTATION)                              \
			fail_msg("%s: %s", cmd, risk_class_name((f)->v.cls));                      \
		r_ = reason(&(f)->v, "network-send");                                              \
		if (r_ == NULL || strstr(r_, "sends network traffic to") == NULL ||                \
		    strstr(r_, needle) == NULL)                                                    \
			fail_msg("%s: reason `%s` lacks `%s`", cmd, r_ ? r_ : "(none)", needle);   \
		if ((f)->v.net_view)                                                               \
			fail_msg("%s: keeps the network", cmd);                                    \
	} while (0)

#define READS(f, cmd)                                                                              \
	do {                                                                                       \
		if (run(f, (f)->ca, TARGET_VM, cmd) != RISK_READ_ONLY)                             \
			fail_msg("%s: %s (%s)", cmd, risk_class_name((f)->v.cls),                  \
			         reason(&(f)->v, "network-send") ? reason(&(f)->v, "network-send") \
			                                         : "");                            \
		if (reason(&(f)->v, "network-read-allowed") == NULL || !(f)->v.net_view)           \
			fail_msg("%s: not an allowed network read", cmd);                          \
	} while (0)

static void test_network_clients(void **state)
{
	struct fixture *f = *state;

	/* nothing allowed: every client sends */
	SENDS(f, f->c, "curl -s http://allowed.example/x", "http://allowed.example/x");
	SENDS(f, f->c, "ping -c 1 10.0.0.1", "10.0.0.1");
	SENDS(f, f->c, "dig allowed.example", "allowed.example");
	/* allowed, and harmless */
	READS(f, "curl -s http://allowed.example/x");
	READS(f, "curl -sI https://ALLOWED.example:8443/x?y=1");
	READS(f, "curl -s -X HEAD http://allowed.example/");
	READS(f, "curl -s -H 'Accept: text/plain' http://allowed.example/");
	READS(f, "wget -q -O - --max-redirect=0 http://allowed.example/x");
	READS(f, "wget --spider --max-redirect 0 http://allowed.example/x");
	READS(f, "ping -c 1 10.0.0.7");
	READS(f, "dig +short allowed.example");
	READS(f, "dig @10.0.0.53 allowed.example mx");
	/* allowed destination, but not a harmless form */
	SENDS(f, f->ca, "curl -d x=1 http://allowed.example/", "http://allowed.example/");
	SENDS(f, f->ca, "curl -X POST http://allowed.example/", "a method other than GET");
	SENDS(f, f->ca, "curl -L http://allowed.example/", "allowed.example");
	SENDS(f, f->ca, "curl -o /tmp/x http://allowed.example/", "allowed.example");
	SENDS(f, f->ca, "curl -H @/etc/hosts http://allowed.example/", "headers");
	SENDS(f, f->ca, "curl -s -H \"X-Host: $(hostname)\" http://allowed.example/", "run time");
	SENDS(f, f->ca, "ping -c \"$n\" 10.0.0.5", "known only at run time");
	SENDS(f, f->ca, "curl gopher://allowed.example:70/_x", "a scheme other than http");
	SENDS(f, f->ca, "curl allowed.example", "without http");
	SENDS(f, f->ca, "https_proxy=http://10.9.9.9:3128 curl -s https://allowed.example/",
	      "a proxy");
	SENDS(f, f->ca, "wget -q -O - http://allowed.example/x", "redirects");
	SENDS(f, f->ca, "wget -q -O /tmp/x --max-redirect=0 http://allowed.example/x", "a file");
	SENDS(f, f->ca, "ping -f 10.0.0.1", "10.0.0.1");
	SENDS(f, f->ca, "ping -p ff 10.0.0.1", "10.0.0.1");
	SENDS(f, f->ca, "dig +trace allowed.example", "+trace");
	/* destinations that look allowed but are not */
	SENDS(f, f->ca, "curl -s http://allowed.example.evil.test/", "does not allow");
	SENDS(f, f->ca, "curl -s http://10.0.0.5.evil.test/", "does not allow"); /* 10.0.0.* */
	SENDS(f, f->ca, "ping -c 1 10.0.0.5.evil.test", "does not allow");
	SENDS(f, f->ca, "curl -s http://allowed.example@evil.test/", "does not allow");
	SENDS(f, f->ca, "curl -s http://[::1]/", "not a plain host name");
	SENDS(f, f->ca, "curl -s \"$url\"", "known only at run time");
	SENDS(f, f->ca, "curl -s http://allowed.example/ http://evil.test/", "evil.test");
	SENDS(f, f->ca, "plain urls | xargs curl -s", "known only at run time");
	/* programs the grammar says send, and the shell's own connections */
	SENDS(f, f->ca, "sender 10.0.0.1", "10.0.0.1");
	SENDS(f, f->ca, "echo hi > /dev/tcp/10.0.0.1/80", "10.0.0.1/80");
	SENDS(f, f->ca, "plain < /dev/udp/10.0.0.1/53", "10.0.0.1/53");
	SENDS(f, f->ca, "exec 3<>/dev/tcp/allowed.example/80", "allowed.example/80");
	/* --version sends nothing */
	assert_int_equal(run(f, f->c, TARGET_VM, "curl --version"), RISK_READ_ONLY);
	assert_null(reason(&f->v, "network-send"));
}

static void test_allow_list_refused(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[][1] = {{"*"}, {"*.*"}, {"exa mple"}, {"a/b"}, {""}, {"?"}};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct classifier *c = classifier_new_opts(
		    f->p, &(struct classifier_options){bad[i], 1}, err, sizeof(err));

		if (c != NULL)
			fail_msg("network.allow `%s` was accepted", bad[i][0]);
		assert_non_null(strstr(err, "network.allow"));
	}
	assert_null(classifier_network_glob_problem("*.example.com"));
	assert_null(classifier_network_glob_problem("10.0.0.*"));
	assert_non_null(classifier_network_glob_problem("*"));
}

#define SECRET(f, t, cmd)                                                                          \
	do {                                                                                       \
		if (run(f, (f)->c, t, cmd) < RISK_CONFIG_MUTATION)                                 \
			fail_msg("%s: %s", cmd, risk_class_name((f)->v.cls));                      \
		if (reason(&(f)->v, "secret-read") == NULL ||                                      \
		    strstr(reason(&(f)->v, "secret-read"), "reads secret material") == NULL)       \
			fail_msg("%s: no `reads secret material` reason", cmd);                    \
	} while (0)

#define CLEAN(f, cmd)                                                                              \
	do {                                                                                       \
		if (run(f, (f)->c, TARGET_VM, cmd) != RISK_READ_ONLY)                              \
			fail_msg("%s: %s (%s)", cmd, risk_class_name((f)->v.cls),                  \
			         reason(&(f)->v, "secret-read") ? reason(&(f)->v, "secret-read")   \
			                                        : "");                             \
	} while (0)

static void test_secrets_indirection(void **state)
{
	struct fixture *f = *state;

	/* values the command assigns */
	SECRET(f, TARGET_VM, "x=/etc/shadow; cat $x");
	SECRET(f, TARGET_VM, "x=/etc; cat \"$x/shadow\"");
	SECRET(f, TARGET_VM, "d=/etc; n=shadow; cat \"${d}/${n}\"");
	SECRET(f, TARGET_VM, "for f in /tmp/a /etc/shadow; do cat \"$f\"; done");
	SECRET(f, TARGET_VM, "a=(/tmp/a /etc/priv/key); cat \"${a[1]}\"");
	SECRET(f, TARGET_VM, "cat ${x:-/etc/shadow}");
	SECRET(f, TARGET_VM, "cat $HOME/.ssh/config");
	SECRET(f, TARGET_VM, "cat ~/.ssh/known_hosts");
	SECRET(f, TARGET_VM, "read f <<< /etc/shadow; cat $f");
	SECRET(f, TARGET_VM, "read -r f <<EOF\n/etc/priv/x\nEOF\ncat \"$f\"");
	/* a reader's file known only at run time may be anything */
	SECRET(f, TARGET_VM, "cat \"$1\"");
	SECRET(f, TARGET_VM, "cat $(plain)");
	SECRET(f, TARGET_VM, "cat /tmp/$x");
	SECRET(f, TARGET_VM, "plain | xargs cat");
	SECRET(f, TARGET_VM, "cat < \"$f\"");
	/* /proc/PID/root and friends */
	SECRET(f, TARGET_VM, "cat /proc/self/root/etc/shadow");
	SECRET(f, TARGET_VM, "cat /proc/1/task/1/root/etc/priv/k");
	SECRET(f, TARGET_VM, "cat /proc/1/cwd/x");
	SECRET(f, TARGET_VM, "cat /proc/1/fd/4");
	/* stores, globs, trees, devices */
	SECRET(f, TARGET_VM, "cat /etc/creds");
	SECRET(f, TARGET_VM, "cat /etc/creds/db/password");
	SECRET(f, TARGET_VM, "cat /home/ops/.pgpass");
	SECRET(f, TARGET_VM, "cat /etc/pri*/key");
	SECRET(f, TARGET_VM, "grep -r x /etc");
	SECRET(f, TARGET_VM, "cd /etc && grep -r x");
	SECRET(f, TARGET_VM, "cat /dev/sda1");
	SECRET(f, TARGET_VM, "plain /var/lib/db/config.db");
	/* what stays an observation */
	CLEAN(f, "x=/etc/hosts; cat $x");
	CLEAN(f, "for f in /tmp/a /tmp/b; do cat \"$f\"; done");
	CLEAN(f, "cat /proc/self/fd/0");
	CLEAN(f, "grep -r x /tmp");
	CLEAN(f, "grep x /etc/hosts");
	CLEAN(f, "cat /root/.ssh/id_rsa.pub");
	CLEAN(f, "plain \"$x\""); /* not a file the policy knows is read */
}

/* Each new key refused when malformed, with the place. */
static void refused(const char *extra, const char *needle)
{
	char yaml[2048], err[512];
	struct policy *p;

	snprintf(yaml, sizeof(yaml),
	         "defaults: {unknown_program: config_mutation}\n"
	         "rules:\n"
	         "  - {id: r1, programs: [a], class: read_only}\n"
	         "%s",
	         extra);
	p = policy_parse(yaml, strlen(yaml), "t.yaml", err, sizeof(err));
	if (p != NULL) {
		policy_free(p);
		fail_msg("accepted: %s", extra);
	}
	if (strstr(err, needle) == NULL || strstr(err, "t.yaml:") == NULL)
		fail_msg("`%s` lacks `%s`", err, needle);
}

static void test_keys_refused(void **state)
{
	(void)state;
	refused("  - {id: r2, programs: [b], class: read_only, action: true}\n",
	        "an observation does not act");
	refused("  - {id: r2, programs: [b], class: reversible_low, action: yes}\n", "action:");
	refused("  - {id: r2, programs: [b], class: reversible_low, write_paths: [tmp/x]}\n",
	        "write_paths");
	refused("  - {id: r2, programs: [b], class: reversible_low, write_paths: [/tmp/*]}\n",
	        "write_paths");
	refused("  - {id: r2, programs: [b], class: reversible_low, writes: middle}\n",
	        "writes: expected all, first or last");
	refused("grammars:\n  a: {net: maybe}\n", "net: expected view, send or none");
	refused("grammars:\n  a: {filter: some}\n", "operands");
	refused("grammars:\n  a: {options: -x, filter_refuse: -x}\n", "only a grammar with");
	refused("grammars:\n  a: {filter: 1, options: -x, filter_refuse: -y}\n",
	        "not one of this grammar's options");
	refused("grammars:\n  a: {options: -x, net_options: -y}\n",
	        "not one of this grammar's options");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fields_reset, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_root_tier, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_net_view, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_set, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_actions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_network_clients, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_allow_list_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_secrets_indirection, setup, teardown),
	    cmocka_unit_test(test_keys_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
