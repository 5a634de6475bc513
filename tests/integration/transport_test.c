/* transport_test.c -- the transport against the real rig (tests/rig): real sshd,
 * real qemu-ga, qm/pct shims.  Run by tests/suites/40-transport.sh, which brings
 * the rig up and exports its env file (AIRLOCK_RIG_*).
 *
 *   transport_test [SCENARIO...]     default: all, in order
 *
 * No timed assertions: deadlines are set and the outcome is checked, never how
 * long it took. */
#include "transport/transport.h"
#include "transport/shell.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/sha256.h"
#include "lib/shellquote.h"
#include "lib/log.h"
#include "lib/xalloc.h"

static int failures;
static int checks;

#define CHECK(cond, ...) check_((cond), #cond, __FILE__, __LINE__, __VA_ARGS__)

static void check_(int ok, const char *expr, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	checks++;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok) {
		failures++;
		printf("  [%s:%d: %s]", file, line, expr);
	}
	printf("\n");
	fflush(stdout);
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	if (v == NULL || v[0] == '\0') {
		fprintf(stderr, "transport_test: %s is not set (run under tests/rig)\n", name);
		exit(2);
	}
	return v;
}

static struct transport_node node;
static struct transport *T;

static struct transport *new_transport(const char *known_hosts, int qm_timeout_s)
{
	struct transport_config cfg = {
	    .private_key = env("AIRLOCK_RIG_SSH_KEY"),
	    .known_hosts = known_hosts,
	    .keepalive_s = 3,
	    .qm_timeout_s = qm_timeout_s,
	    .poll_interval_ms = 200,
	    .jail_helper = "build/bin/airlock-jail",
	};
	char err[256];
	struct transport *t = transport_new(&cfg, err, sizeof(err));
	if (t == NULL) {
		fprintf(stderr, "transport_test: %s\n", err);
		exit(2);
	}
	return t;
}

static void rigctl(const char *args)
{
	char *cmd =
	    xasprintf("'%s' --root '%s' %s", env("AIRLOCK_RIG_CTL"), env("AIRLOCK_RIG_ROOT"), args);
	int rc = system(cmd);
	CHECK(rc == 0, "rigctl %s", args);
	free(cmd);
}

/* The jail run() asks for: scenarios that repeat under each tier set it. */
static enum transport_jail cur_jail = TRANSPORT_JAIL_NONE;
static const struct transport_jail_spec *cur_spec; /* NULL: the helper's defaults */
static char helper_sha[SHA256_HEX_LEN + 1];        /* build/bin/airlock-jail's */

static int run(enum target_type type, int vmid, const char *command, int timeout_ms, size_t cap,
               struct transport_result *r)
{
	struct transport_limits lim = {
	    .timeout_ms = timeout_ms, .output_cap = cap, .jail = cur_jail, .jail_spec = cur_spec};
	return transport_exec(T, &node, type, vmid, command, &lim, r);
}

static const char *tname(enum target_type t, int id)
{
	static char s[3][32];
	snprintf(s[t], sizeof(s[t]), "%s%s%d", target_type_name(t), id ? ":" : "", id);
	if (!id)
		snprintf(s[t], sizeof(s[t]), "%s", target_type_name(t));
	return s[t];
}

static const struct {
	enum target_type type;
	int id;
} targets[] = {{TARGET_PROXMOX_HOST, 0}, {TARGET_VM, 101}, {TARGET_LXC, 201}};

/* ---- scenarios ------------------------------------------------------------- */

static void t_basic(void)
{
	for (size_t i = 0; i < 3; i++) {
		struct transport_result r;
		const char *w = tname(targets[i].type, targets[i].id);
		int rc = run(targets[i].type, targets[i].id,
		             "echo out; echo err >&2; hostname >&2; exit 3", 60000, 0, &r);
		CHECK(rc == 0 && r.status == TRANSPORT_EXITED && r.exit_code == 3,
		      "%s: exit code 3 is a result (status=%s exit=%d %s)", w,
		      transport_status_name(r.status), r.exit_code, r.errmsg);
		CHECK(r.out_len == 4 && memcmp(r.out, "out\n", 4) == 0, "%s: stdout", w);
		const char *host = targets[i].type == TARGET_VM    ? "vm101"
		                   : targets[i].type == TARGET_LXC ? "ct201"
		                                                   : "pverig";
		char want[64];
		snprintf(want, sizeof(want), "err\n%s\n", host);
		CHECK(strcmp(r.err, want) == 0, "%s: stderr is separate and ran on %s ('%s')", w,
		      host, r.err);
		transport_result_free(&r);
	}
	struct transport_result r;
	run(TARGET_PROXMOX_HOST, 0, "kill -TERM $$", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_SIGNALED && r.signal == SIGTERM,
	      "host: killed by SIGTERM (%s %d)", transport_status_name(r.status), r.signal);
	transport_result_free(&r);
	run(TARGET_VM, 101, "kill -KILL $$", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_SIGNALED && r.signal == SIGKILL,
	      "vm: killed by SIGKILL (%s %d)", transport_status_name(r.status), r.signal);
	transport_result_free(&r);
	run(TARGET_LXC, 201, "kill -KILL $$", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 137,
	      "ct: pct reports a killed command as 128+9 (%s %d)", transport_status_name(r.status),
	      r.exit_code);
	transport_result_free(&r);
	run(TARGET_LXC, 201, "echo mine >&2; exit 255", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 255,
	      "ct: the command's own exit 255 is a result, not a pct refusal");
	transport_result_free(&r);
	run(TARGET_VM, 101, "/no/such/program", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 127, "vm: sh's 127 is a result");
	transport_result_free(&r);
}

/* How many command log lines for where hold cmd: exactly, or (suffix) as
 * their end after a space (host commands carry an AIRLOCK_EXEC_ID= prefix). */
static int log_count_(const char *where, const char *cmd, size_t cmdlen, bool suffix)
{
	struct buf want = BUF_INIT;
	FILE *f = fopen(env("AIRLOCK_RIG_LOG"), "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int count = 0;

	if (!suffix)
		buf_printf(&want, "\t%s\t", where);
	else
		buf_putc(&want, ' ');
	for (size_t i = 0; i < cmdlen; i++) {
		char c = cmd[i];
		if (c == '\\')
			buf_puts(&want, "\\\\");
		else if (c == '\n')
			buf_puts(&want, "\\n");
		else if (c == '\t')
			buf_puts(&want, "\\t");
		else if (c == '\r')
			buf_puts(&want, "\\r");
		else
			buf_putc(&want, c);
	}
	buf_putc(&want, '\n');
	while (f && (n = getline(&line, &cap, f)) > 0) {
		char *tab = memchr(line, '\t', (size_t)n);
		if (suffix) {
			char *w = tab ? memchr(tab + 1, '\t', (size_t)(line + n - tab - 1)) : NULL;
			if (w && (size_t)(w - tab - 1) == strlen(where) &&
			    memcmp(tab + 1, where, strlen(where)) == 0 && (size_t)n >= want.len &&
			    memcmp(line + n - want.len, want.data, want.len) == 0)
				count++;
		} else if (tab && (size_t)(line + n - tab) == want.len &&
		           memcmp(tab, want.data, want.len) == 0) {
			count++;
		}
	}
	free(line);
	if (f)
		fclose(f);
	buf_free(&want);
	return count;
}

static int log_count(const char *where, const char *cmd, size_t cmdlen)
{
	return log_count_(where, cmd, cmdlen, false);
}

static int log_count_end(const char *where, const char *cmd)
{
	return log_count_(where, cmd, strlen(cmd), true);
}

/* Any file whose name starts with "airlock-pwned" under dir? */
static int pwned_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	while (d && (e = readdir(d)))
		found |= strncmp(e->d_name, "airlock-pwned", 13) == 0;
	if (d)
		closedir(d);
	return found;
}

/* A command that prints its shell's argv (SELF_ARGV) or environment
 * (SELF_ENV), NUL-separated, as the kernel holds them: the read builtin
 * opens /proc/self in the shell itself (a forked child would show the
 * program it execs), in the C locale so that it reads bytes, not
 * characters (a stray UTF-8 lead byte would swallow the NUL after it). */
#define SELF_DUMP(what)                                                                            \
	"LC_ALL=C; while IFS= read -r -d '' a; do printf '%s\\0' \"$a\"; done </proc/self/" what
#define SELF_ARGV SELF_DUMP("cmdline")
#define SELF_ENV  SELF_DUMP("environ")
/* What the target's shell's argv starts with: the one shell (shell.h). */
#define ONE_SHELL_ARGV "/bin/bash\0--noprofile\0--norc\0+O\0extglob\0+O\0xpg_echo\0-c\0"
/* How the rig logs the end of a guest's argv for command (no quote in it):
 * pct and qm write each element single-quoted. */
#define ARGV_LOGGED(command)                                                                       \
	"'/bin/bash' '--noprofile' '--norc' '+O' 'extglob' '+O' 'xpg_echo' '-c' '" command "'"

/* Whether env (len bytes, NUL-separated) is exactly the one shell's fixed
 * environment with a tag, in any order (the jail's shells re-export it in
 * their own); the tag goes to tag (SHELL_TAG_MAX bytes). */
static bool env_is_fixed(const char *env, size_t len, char *tag)
{
	size_t nfixed = 0, seen = 0;
	bool tagged = false;

	while (shell_env[nfixed] != NULL)
		nfixed++;
	tag[0] = '\0';
	for (size_t off = 0; off < len;) {
		const char *e = env + off, *nul = memchr(e, '\0', len - off);
		bool known = false;
		if (nul == NULL)
			return false;
		for (size_t i = 0; i < nfixed; i++)
			known |= strcmp(e, shell_env[i]) == 0;
		if (known) {
			seen++;
		} else if (!tagged && strncmp(e, SHELL_TAG_NAME "=", 16) == 0 &&
		           shell_tag_valid(e + 16)) {
			snprintf(tag, SHELL_TAG_MAX, "%s", e + 16);
			tagged = true;
		} else {
			return false;
		}
		off += (size_t)(nul - e) + 1;
	}
	return tagged && seen == nfixed;
}

/* env's NUL-separated strings, joined by " | " for a message. */
static const char *env_text(const char *env, size_t len, char *out, size_t outlen)
{
	size_t j = 0;

	for (size_t i = 0; i < len && j + 4 < outlen; i++) {
		if (env[i] == '\0') {
			memcpy(out + j, " | ", 3);
			j += 3;
		} else {
			out[j++] = env[i];
		}
	}
	out[j] = '\0';
	return out;
}

static void t_quoting(void)
{
	static const char *payloads[] = {
	    "plain words",
	    "it's 'single' and \"double\" quotes '\\''",
	    "$(touch /tmp/airlock-pwned-subst) ${HOME} $HOME $$ $0",
	    "`touch /tmp/airlock-pwned-backtick`",
	    "; touch /tmp/airlock-pwned-semi ; && || | & > /tmp/airlock-pwned-redir <",
	    "' ; touch /tmp/airlock-pwned-break ; '",
	    "line one\nline two\n\ttabbed\r\n",
	    "* ? [a-z]* ~ ~root {a,b} /*",
	    "\\ \\\\ \\' \\\" \\n \\$HOME",
	    "-x -- --timeout 1 -la",
	    "gr\xc3\xbcn \xe2\x82\xac \xf0\x9f\x94\x92 utf-8",
	    "\xff\xfe\x80 not utf-8 \xc3",
	    "",
	};
	char tmp[3][256];
	const char *root = env("AIRLOCK_RIG_ROOT");

	snprintf(tmp[0], sizeof(tmp[0]), "%s/node/tmp", root);
	snprintf(tmp[1], sizeof(tmp[1]), "%s/guests/vm101/root/tmp", root);
	snprintf(tmp[2], sizeof(tmp[2]), "%s/guests/ct201/root/tmp", root);
	for (size_t p = 0; p < sizeof(payloads) / sizeof(payloads[0]) + 1; p++) {
		struct buf cmd = BUF_INIT;
		bool longone = p == sizeof(payloads) / sizeof(payloads[0]);

		/* The target's shell prints its own argv as the kernel holds it
		 * (read by the shell itself, so /proc/self is the shell, in a pid
		 * namespace too), then stops reading: what follows `exit 0` is
		 * never parsed, so any bytes may follow. */
		buf_puts(&cmd, SELF_ARGV "; exit 0\n");
		if (longone) {
			for (int i = 0; i < 1800; i++) /* ~30 KB once quoted */
				buf_puts(&cmd, "'$(x)`y`\"; *\n");
		} else {
			buf_puts(&cmd, payloads[p]);
		}
		for (size_t i = 0; i < 3; i++) {
			struct transport_result r;
			const char *w = tname(targets[i].type, targets[i].id);
			bool utf8_bad = !longone && strchr(payloads[p], '\xff') != NULL;

			run(targets[i].type, targets[i].id, buf_str(&cmd), 60000, 0, &r);
			if (targets[i].type == TARGET_VM && utf8_bad) {
				CHECK(r.status == TRANSPORT_FAILED &&
				          r.error == TRANSPORT_ERR_INVALID,
				      "vm: non-UTF-8 command refused before sending (%s)",
				      r.errmsg);
				transport_result_free(&r);
				continue;
			}
			struct buf want = BUF_INIT;
			buf_append(&want, ONE_SHELL_ARGV, sizeof(ONE_SHELL_ARGV) - 1);
			buf_append(&want, cmd.data, cmd.len);
			buf_append(&want, "\0", 1);
			CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0 &&
			          r.out_len == want.len && memcmp(r.out, want.data, want.len) == 0,
			      "%s%s%s: payload %zu%s arrives byte for byte (%zu bytes; got %zu, %s "
			      "%s)",
			      w, cur_jail ? " jail=" : "", cur_jail ? jail_name(cur_jail) : "", p,
			      longone ? " (long)" : "", want.len, r.out_len,
			      transport_status_name(r.status), r.errmsg);
			if (targets[i].type == TARGET_PROXMOX_HOST) {
				struct buf line = BUF_INIT;
				jail_command_line(&line, cur_jail, NULL, helper_sha, 62000,
				                  buf_str(&cmd));
				CHECK(log_count_("node", line.data, line.len, true) >= 1,
				      "host: the node's login shell got exactly %s'<quoted>'",
				      cur_jail ? "the jail's words and " : SHELL_EXEC_WORDS " ");
				buf_free(&line);
			}
			buf_free(&want);
			transport_result_free(&r);
		}
		buf_free(&cmd);
	}
	/* The environment the command's shell was started with: exactly the
	 * one shell's, with a tag of its own for every command, nothing from
	 * the node's login session, pct or the guest agent. */
	for (size_t i = 0; i < 3; i++) {
		char tag[2][SHELL_TAG_MAX] = {"", ""};
		bool fixed[2];
		for (int k = 0; k < 2; k++) {
			struct transport_result r;
			run(targets[i].type, targets[i].id, SELF_ENV, 60000, 0, &r);
			fixed[k] = r.status == TRANSPORT_EXITED && r.exit_code == 0 &&
			           env_is_fixed(r.out, r.out_len, tag[k]);
			if (!fixed[k]) {
				char text[1024];
				printf("# %s environment: %s\n",
				       tname(targets[i].type, targets[i].id),
				       env_text(r.out, r.out_len, text, sizeof(text)));
			}
			transport_result_free(&r);
		}
		CHECK(fixed[0] && fixed[1] && strcmp(tag[0], tag[1]) != 0,
		      "%s%s%s: the shell's environment is exactly PATH, HOME, LANG and a tag of "
		      "its own (%s, %s)",
		      tname(targets[i].type, targets[i].id), cur_jail ? " jail=" : "",
		      cur_jail ? jail_name(cur_jail) : "", tag[0], tag[1]);
	}
	for (int i = 0; i < 3; i++)
		CHECK(!pwned_in(tmp[i]), "no side effect of the payloads in %s", tmp[i]);
	CHECK(!pwned_in("/tmp"), "no side effect of the payloads in the machine's /tmp");

	/* Longer than one argv element may be: refused, nothing sent. */
	struct buf huge = BUF_INIT;
	for (int i = 0; i < 200000; i++)
		buf_putc(&huge, 'a' + i % 26);
	struct transport_result r;
	for (size_t i = 0; i < 3; i++) {
		run(targets[i].type, targets[i].id, huge.data, 60000, 0, &r);
		CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_INVALID,
		      "%s: a 200000-byte command is refused before sending (%s)",
		      tname(targets[i].type, targets[i].id), r.errmsg);
		transport_result_free(&r);
	}
	run(TARGET_PROXMOX_HOST, 0, "echo still-fine", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED, "the session is unharmed by the refusals");
	transport_result_free(&r);
	buf_free(&huge);
}

/* The same payloads through the jail, in each tier: the command crosses the
 * login shell, the jail's two shells and setpriv, and must still reach the
 * target's bash byte for byte, with no side effect anywhere. */
static void t_quoting_jailed(void)
{
	for (cur_jail = TRANSPORT_JAIL_USER; cur_jail <= TRANSPORT_JAIL_ROOT; cur_jail++)
		t_quoting();
	cur_jail = TRANSPORT_JAIL_NONE;
}

/* ---- the read-only jail ------------------------------------------------------- */

/* Runs command on target i, unconfined whatever cur_jail says. */
static int run_plain(size_t i, const char *command, struct transport_result *r)
{
	enum transport_jail saved = cur_jail;
	int rc;

	cur_jail = TRANSPORT_JAIL_NONE;
	rc = run(targets[i].type, targets[i].id, command, 60000, 0, r);
	cur_jail = saved;
	return rc;
}

static bool file_has(const char *path, const char *text)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "r");
	bool found = false;

	if (f == NULL)
		return false;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	found = b.len > 0 && memmem(b.data, b.len, text, strlen(text)) != NULL;
	buf_free(&b);
	return found;
}

/* The rig's disk still starts with its pattern (no sector was written). */
static bool disk_intact(const char *path)
{
	static const char want[] = "airlock-rig-disk\nairlock-rig-disk\n";
	char head[sizeof(want)] = "";
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(head, 1, sizeof(want) - 1, f) : 0;

	if (f)
		fclose(f);
	return n == sizeof(want) - 1 && memcmp(head, want, n) == 0;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* One effect the jail must stop: the command, the stderr each tier must show,
 * and where the effect would show on the target (a path under the guest's
 * root, or a line in the rig's svcmgr records). */
struct effect {
	const char *what;
	const char *cmd;
	const char *want_user, *want_root;
	const char *left_path; /* relative to the target's root */
	const char *svc_file;  /* units / modules, or NULL */
	const char *svc_text;
};

static const struct effect effects[] = {
    {"write /etc", "echo x > /etc/airlock-jail-etc", "Read-only file system",
     "Read-only file system", "etc/airlock-jail-etc", NULL, NULL},
    {"plant /root/.ssh/rc", "mkdir -p /root/.ssh; echo id > /root/.ssh/rc",
     "Read-only file system|Permission denied", "Read-only file system", "root/.ssh/rc", NULL,
     NULL},
    {"write /var/lib", "touch /var/lib/airlock-jail-varlib", "Read-only file system",
     "Read-only file system", "var/lib/airlock-jail-varlib", NULL, NULL},
    {"setuid file", "cp /bin/sh /var/lib/airlock-jail-suid; chmod 4755 /var/lib/airlock-jail-suid",
     "Read-only file system", "Read-only file system", "var/lib/airlock-jail-suid", NULL, NULL},
    {"install a package", "apt-get install -y airlock-jail-pkg", "Could not open lock file",
     "Could not open lock file", "var/lib/dpkg/rig-installed/airlock-jail-pkg", NULL, NULL},
    {"start a unit", "systemctl start airlock-jail.service", "Access denied",
     "Failed to connect to bus", NULL, "units", "airlock-jail.service"},
    {"enable a unit", "systemctl enable airlock-jail-en.service", "Access denied",
     "Failed to connect to bus", NULL, "units", "airlock-jail-en.service"},
    {"load a module", "modprobe airlock_jail", "Operation not permitted", "Operation not permitted",
     NULL, "modules", "airlock_jail"},
    {"add an address", "ip addr add 192.0.2.78/32 dev lo", "Operation not permitted",
     "Operation not permitted", NULL, NULL, NULL},
    {"write a sysctl", "sysctl -w vm.swappiness=$(cat /proc/sys/vm/swappiness)",
     "Read-only file system|permission denied", "Read-only file system|permission denied", NULL,
     NULL, NULL},
    {"write the block device", "dd if=/dev/zero of=/dev/sdb bs=512 count=1 conv=notrunc",
     "Read-only file system|Permission denied", "Read-only file system|Permission denied", NULL,
     NULL, NULL},
    {"stop a unit", "systemctl stop sshd.service",
     "Access denied", "Failed to connect to bus", NULL, "units", "sshd.service stop"},
};

/* Does text match any of the |-separated alternatives in want? */
static bool matches_any(const char *text, const char *want)
{
	char alt[128];
	const char *p = want;

	while (*p) {
		size_t n = strcspn(p, "|");
		snprintf(alt, sizeof(alt), "%.*s", (int)n, p);
		if (strstr(text, alt))
			return true;
		p += n + (p[n] == '|');
	}
	return false;
}

static void t_jail(void)
{
	static const char *roots[] = {"node", "guests/vm101/root", "guests/ct201/root"};
	static const char *wheres[] = {"node", "vm:101", "ct:201"};
	const char *rig = env("AIRLOCK_RIG_ROOT");
	char path[512], disk[512];
	struct transport_result r;

	snprintf(disk, sizeof(disk), "%s/disk.img", rig);
	for (cur_jail = TRANSPORT_JAIL_USER; cur_jail <= TRANSPORT_JAIL_ROOT; cur_jail++) {
		const char *tier = jail_name(cur_jail);
		for (size_t i = 0; i < 3; i++) {
			const char *w = tname(targets[i].type, targets[i].id);
			for (size_t e = 0; e < sizeof(effects) / sizeof(effects[0]); e++) {
				const struct effect *x = &effects[e];
				const char *want =
				    cur_jail == TRANSPORT_JAIL_USER ? x->want_user : x->want_root;
				run(targets[i].type, targets[i].id, x->cmd, 60000, 0, &r);
				CHECK(r.status == TRANSPORT_EXITED && r.exit_code != 0 &&
				          matches_any(r.err, want),
				      "%s %s tier: %s fails: %s (%s exit=%d: %.200s)", w, tier,
				      x->what, want, transport_status_name(r.status), r.exit_code,
				      r.err);
				transport_result_free(&r);
				if (x->left_path) {
					snprintf(path, sizeof(path), "%s/%s/%s", rig, roots[i],
					         x->left_path);
					CHECK(!exists(path), "%s %s tier: %s left nothing (%s)", w,
					      tier, x->what, path);
				}
				if (x->svc_file) {
					snprintf(path, sizeof(path), "%s/pve/svc/%s/%s", rig,
					         wheres[i], x->svc_file);
					CHECK(!file_has(path, x->svc_text),
					      "%s %s tier: %s: nothing was asked of the daemon", w,
					      tier, x->what);
				}
			}
			CHECK(disk_intact(disk), "%s %s tier: the disk is untouched", w, tier);
			/* A process it does not own: a victim started unconfined. */
			if (targets[i].type != TARGET_LXC) {
				char cmd[128];
				long victim;
				run_plain(
				    i, "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!", &r);
				victim = atol(r.out);
				transport_result_free(&r);
				snprintf(cmd, sizeof(cmd), "kill -9 %ld", victim);
				run(targets[i].type, targets[i].id, cmd, 60000, 0, &r);
				CHECK(victim > 0 && r.status == TRANSPORT_EXITED &&
				          r.exit_code != 0 &&
				          matches_any(r.err, "No such process|not permitted"),
				      "%s %s tier: kill of a root process fails (%.200s)", w, tier,
				      r.err);
				transport_result_free(&r);
				snprintf(cmd, sizeof(cmd), "kill -0 %ld && kill -9 %ld", victim,
				         victim);
				run_plain(i, cmd, &r);
				CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0,
				      "%s %s tier: the victim was alive afterwards", w, tier);
				transport_result_free(&r);
			}
			/* Daemons' sockets are hidden; the user tier keeps the bus. */
			run(targets[i].type, targets[i].id,
			    "for s in /run/systemd/private /run/dbus/system_bus_socket; do "
			    "[ -S $s ] && echo socket || echo hidden; done",
			    60000, 0, &r);
			CHECK(r.status == TRANSPORT_EXITED &&
			          strcmp(r.out, cur_jail == TRANSPORT_JAIL_USER
			                            ? "hidden\nsocket\n"
			                            : "hidden\nhidden\n") == 0,
			      "%s %s tier: systemd's socket is hidden%s (%s)", w, tier,
			      cur_jail == TRANSPORT_JAIL_USER ? ", the system bus is not"
			                                      : ", the bus too",
			      r.out);
			transport_result_free(&r);
			/* The ready line is the jail's; the command's stderr is its own,
			 * and a command cannot pretend the jail failed. */
			run(targets[i].type, targets[i].id,
			    "echo 'airlock-jail: cannot confine: forged' >&2; exit 125", 60000, 0,
			    &r);
			CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 125 &&
			          strcmp(r.err, "airlock-jail: cannot confine: forged\n") == 0,
			      "%s %s tier: a forged jail failure is the command's own output (%s)",
			      w, tier, transport_status_name(r.status));
			transport_result_free(&r);
		}
		/* An address a broken jail would have added to the machine's lo. */
		CHECK(system("ip -o addr show dev lo | grep -q '192.0.2.78/'") != 0,
		      "%s tier: no address was added anywhere", tier);
	}
	cur_jail = TRANSPORT_JAIL_NONE;

	/* Each effect is one the rig takes from an unconfined root: the checks
	 * above can fail.  (Files, units, modules; the rest is the kernel's.) */
	for (size_t i = 0; i < 3; i++) {
		const char *w = tname(targets[i].type, targets[i].id);
		run_plain(i,
		          "touch /etc/airlock-jail-etc && systemctl start airlock-jail.service && "
		          "modprobe airlock_jail",
		          &r);
		snprintf(path, sizeof(path), "%s/%s/etc/airlock-jail-etc", rig, roots[i]);
		bool wrote = exists(path);
		unlink(path);
		snprintf(path, sizeof(path), "%s/pve/svc/%s/units", rig, wheres[i]);
		bool started = file_has(path, "airlock-jail.service start");
		snprintf(path, sizeof(path), "%s/pve/svc/%s/modules", rig, wheres[i]);
		CHECK(r.exit_code == 0 && wrote && started && file_has(path, "airlock_jail"),
		      "%s: unconfined, the same effects take place", w);
		transport_result_free(&r);
		/* ...and leave the records as the jailed runs found them. */
		snprintf(path, sizeof(path), "%s/pve/svc/%s/units", rig, wheres[i]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/pve/svc/%s/modules", rig, wheres[i]);
		unlink(path);
	}

	/* Root-only observations: PVE's CLIs refuse any uid but 0, so the user
	 * tier cannot run them; the root tier gives the unconfined output. */
	static const char *pve_cmds[] = {"qm list", "pct list", "qm config 101"};
	for (size_t k = 0; k < 3; k++) {
		struct transport_result plain, jailed;
		run_plain(0, pve_cmds[k], &plain);
		cur_jail = TRANSPORT_JAIL_ROOT;
		run(TARGET_PROXMOX_HOST, 0, pve_cmds[k], 60000, 0, &jailed);
		CHECK(jailed.status == TRANSPORT_EXITED && jailed.exit_code == 0 &&
		          plain.out_len > 0 && jailed.out_len == plain.out_len &&
		          memcmp(jailed.out, plain.out, plain.out_len) == 0,
		      "host root tier: %s gives the unconfined output", pve_cmds[k]);
		transport_result_free(&jailed);
		cur_jail = TRANSPORT_JAIL_USER;
		run(TARGET_PROXMOX_HOST, 0, pve_cmds[k], 60000, 0, &jailed);
		CHECK(jailed.status == TRANSPORT_EXITED && jailed.exit_code != 0 &&
		          strstr(jailed.err, "please run as root"),
		      "host user tier: %s is refused as PVE refuses a non-root uid", pve_cmds[k]);
		transport_result_free(&jailed);
		transport_result_free(&plain);
		cur_jail = TRANSPORT_JAIL_NONE;
	}

	/* The longest command the transport accepts (32640 bytes once quoted)
	 * runs unconfined; with the jail's script it would not fit one SSH
	 * packet, so the jail refuses it before anything is sent (the row then
	 * waits for a human), while one that fits beside the script runs. */
	{
		struct buf big = BUF_INIT;
		char err[200];
		struct buf empty = BUF_INIT;
		jail_command_line(&empty, TRANSPORT_JAIL_ROOT, NULL, helper_sha, 62000, "");
		size_t fits = 32640 - (empty.len - strlen("/bin/sh -c ") - 2) - 2;
		buf_free(&empty);
		buf_puts(&big, "echo ");
		while (big.len < 32638 - 4)
			buf_putc(&big, 'a' + big.len % 26);
		buf_puts(&big, " >&2");
		CHECK(transport_check_command(TARGET_LXC, 201, big.data, err, sizeof(err)) == 0,
		      "a command of 32640 bytes once quoted is accepted (%zu)", big.len);
		for (size_t i = 0; i < 3; i++) {
			run(targets[i].type, targets[i].id, big.data, 60000, 0, &r);
			CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0 &&
			          r.err_len == big.len - strlen("echo ") - strlen(" >&2") + 1,
			      "%s: the longest command runs unconfined (%s %s)",
			      tname(targets[i].type, targets[i].id),
			      transport_status_name(r.status), r.errmsg);
			transport_result_free(&r);
		}
		for (cur_jail = TRANSPORT_JAIL_USER; cur_jail <= TRANSPORT_JAIL_ROOT; cur_jail++)
			for (size_t i = 0; i < 3; i++) {
				run(targets[i].type, targets[i].id, big.data, 60000, 0, &r);
				CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_JAIL &&
				          strstr(r.errmsg, "too long to run in the jail"),
				      "%s %s tier: in the jail it is refused before sending (%s)",
				      tname(targets[i].type, targets[i].id), jail_name(cur_jail),
				      r.errmsg);
				transport_result_free(&r);
			}
		big.len = fits - 4;
		big.data[big.len] = '\0';
		buf_puts(&big, " >&2");
		for (cur_jail = TRANSPORT_JAIL_USER; cur_jail <= TRANSPORT_JAIL_ROOT; cur_jail++)
			for (size_t i = 0; i < 3; i++) {
				run(targets[i].type, targets[i].id, big.data, 60000, 0, &r);
				CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0,
				      "%s %s tier: the longest command that fits beside the jail "
				      "runs "
				      "(%zu bytes; %s %s)",
				      tname(targets[i].type, targets[i].id), jail_name(cur_jail),
				      big.len, transport_status_name(r.status), r.errmsg);
				transport_result_free(&r);
			}
		cur_jail = TRANSPORT_JAIL_NONE;
		buf_free(&big);
	}

	/* A target where the jail cannot be built: nothing runs, the reason is
	 * the jail's, and the same target still runs unconfined commands. */
	for (cur_jail = TRANSPORT_JAIL_USER; cur_jail <= TRANSPORT_JAIL_ROOT; cur_jail++) {
		run(TARGET_LXC, 203, "echo ran > /dev/null; echo ran", 60000, 0, &r);
		CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_JAIL &&
		          strstr(r.errmsg, "Operation not permitted") && r.out_len == 0,
		      "ct:203 %s tier: no jail, nothing ran (%s: %s)", jail_name(cur_jail),
		      transport_error_name(r.error), r.errmsg);
		transport_result_free(&r);
	}
	/* Another architecture: the helper is never installed there, nothing
	 * runs, in either tier. */
	for (cur_jail = TRANSPORT_JAIL_USER; cur_jail <= TRANSPORT_JAIL_ROOT; cur_jail++) {
		run(TARGET_LXC, 204, "echo ran", 60000, 0, &r);
		CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_JAIL &&
		          strstr(r.errmsg, "the target is aarch64") && r.out_len == 0,
		      "ct:204 %s tier: another architecture, no jail, nothing ran (%s)",
		      jail_name(cur_jail), r.errmsg);
		transport_result_free(&r);
	}
	snprintf(path, sizeof(path), "%s/guests/ct204/root" JAIL_HELPER_PATH, rig);
	CHECK(!exists(path), "ct:204: no helper was left there");
	cur_jail = TRANSPORT_JAIL_NONE;
	run(TARGET_LXC, 203, "echo ran", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "ran\n") == 0,
	      "ct:203 unconfined still runs (for approved commands)");
	transport_result_free(&r);

	/* A jailed command past its deadline is killed with everything it started. */
	for (cur_jail = TRANSPORT_JAIL_USER; cur_jail <= TRANSPORT_JAIL_ROOT; cur_jail++) {
		for (size_t i = 0; i < 3; i++) {
			const char *w = tname(targets[i].type, targets[i].id);
			char cmd[96];
			snprintf(cmd, sizeof(cmd), "sleep 53%zu%d & sleep 53%zu%d", i, cur_jail, i,
			         cur_jail);
			run(targets[i].type, targets[i].id, cmd, 3000, 0, &r);
			CHECK(r.status == TRANSPORT_TIMED_OUT,
			      "%s %s tier: the deadline holds (%s)", w, jail_name(cur_jail),
			      transport_status_name(r.status));
			transport_result_free(&r);
			snprintf(cmd, sizeof(cmd),
			         "sleep 1; ps -eo args | grep -c '^sleep 53%zu%d$'", i, cur_jail);
			run_plain(i, cmd, &r);
			CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "0\n") == 0,
			      "%s %s tier: nothing of it is left (%s)", w, jail_name(cur_jail),
			      r.out);
			transport_result_free(&r);
		}
	}
	cur_jail = TRANSPORT_JAIL_NONE;
}


/* ---- the promise: a misjudged command may fail, never act ---------------------- *
 *
 * Every attack below is generated from its category (what it tries to do)
 * crossed with ways to spell it (shell builtins and redirections, coreutils,
 * python3, perl), run jailed on the host, VM 101 and CT 201, and checked ON
 * THE TARGET afterwards; each category's effect is first shown to happen when
 * the same command runs unconfined, so every check can fail. */

static const char *const target_roots[] = {"node", "guests/vm101/root", "guests/ct201/root"};

/* Where something would show on target i, seen from outside. */
static void on_target(char *out, size_t len, size_t i, const char *path)
{
	snprintf(out, len, "%s/%s%s", env("AIRLOCK_RIG_ROOT"), target_roots[i], path);
}

static int jrun(size_t i, enum transport_jail tier, const struct transport_jail_spec *spec,
                const char *cmd, int timeout_ms, struct transport_result *r)
{
	enum transport_jail sj = cur_jail;
	const struct transport_jail_spec *ss = cur_spec;
	int rc;

	cur_jail = tier;
	cur_spec = spec;
	rc = run(targets[i].type, targets[i].id, cmd, timeout_ms, 0, r);
	cur_jail = sj;
	cur_spec = ss;
	return rc;
}

/* Spellings of "write TEXT to PATH". */
static char *spell_write(int k, const char *path)
{
	switch (k) {
	case 0:
		return xasprintf("echo pwned > %s", path);
	case 1:
		return xasprintf("echo pwned | tee %s >/dev/null", path);
	case 2:
		return xasprintf("touch %s", path);
	case 3:
		return xasprintf("cp /etc/hostname %s", path);
	case 4:
		return xasprintf("python3 -c \"open('%s','w').write('pwned')\"", path);
	case 5:
		return xasprintf("perl -e 'open(F, \">\", \"%s\") or die \"$!\\n\"; print F 1'", path);
	case 6:
		return xasprintf("dd if=/dev/zero of=%s bs=1 count=1 2>&1", path);
	case 7:
		return xasprintf("mkdir %s", path);
	default:
		return xasprintf("ln -s /etc/shadow %s", path);
	}
}
#define NSPELL_WRITE 9

/* Spellings of "send one datagram or stream to the target's 127.0.0.1:PORT"
 * or to the abstract socket @NAME. */
static char *spell_send(int k, int port, const char *abs)
{
	switch (k) {
	case 0:
		return xasprintf("python3 -c \"import socket; s=socket.create_connection(('127.0.0.1',"
		                 "%d),2); s.send(b'tcp')\"",
		                 port);
	case 1:
		return xasprintf("perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(PeerAddr=>"
		                 "\"127.0.0.1:%d\") or die \"$!\\n\"; print $s \"tcp\"'",
		                 port);
	case 2:
		return xasprintf("bash -c 'echo tcp >/dev/tcp/127.0.0.1/%d'", port);
	case 3:
		return xasprintf("curl -s -m 2 -d tcp http://127.0.0.1:%d/", port);
	case 4:
		return xasprintf("python3 -c \"import socket; socket.socket(socket.AF_INET,"
		                 "socket.SOCK_DGRAM).sendto(b'udp',('127.0.0.1',%d))\"; sleep 0.2",
		                 port);
	case 5:
		return xasprintf("bash -c 'echo udp >/dev/udp/127.0.0.1/%d'; sleep 0.2", port);
	default:
		return xasprintf("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX,"
		                 "socket.SOCK_STREAM); s.connect(b'\\0%s'); s.send(b'abs')\"",
		                 abs);
	}
}
#define NSPELL_SEND 7

/* Spellings of "leave a process behind": each starts `sleep TAG`. */
static char *spell_linger(int k, int tag)
{
	switch (k) {
	case 0:
		return xasprintf("sleep %d &", tag);
	case 1:
		return xasprintf("nohup sleep %d >/dev/null 2>&1 &", tag);
	case 2:
		return xasprintf("setsid sleep %d </dev/null >/dev/null 2>&1 &", tag);
	case 3:
		return xasprintf("env -i sleep %d </dev/null >/dev/null 2>&1 &", tag);
	case 4:
		return xasprintf("(sh -c 'sleep %d </dev/null >/dev/null 2>&1 &' &)", tag);
	default:
		return xasprintf("python3 -c \"import os,sys\nif os.fork(): sys.exit(0)\nos.setsid()\n"
		                 "if os.fork(): sys.exit(0)\nos.execv('/bin/sleep',['sleep','%d'])\"",
		                 tag);
	}
}
#define NSPELL_LINGER 6

/* Spellings of "print the file at PATH". */
static char *spell_read(int k, const char *path)
{
	switch (k) {
	case 0:
		return xasprintf("cat %s", path);
	case 1:
		return xasprintf("f=%s; cat \"$f\"", path);
	case 2:
		return xasprintf("while read -r l; do echo \"$l\"; done < %s", path);
	case 3:
		return xasprintf("cat /proc/self/root%s", path);
	case 4:
		return xasprintf("python3 -c \"print(open('%s').read())\"", path);
	default:
		return xasprintf("grep -r . $(dirname %s)", path);
	}
}
#define NSPELL_READ 6

static int count_procs(size_t i, int tag)
{
	struct transport_result r;
	char cmd[128];
	int n;

	snprintf(cmd, sizeof(cmd), "ps -eo args | grep -cE '^(/bin/|/usr/bin/)?sleep %d$'; true", tag);
	run_plain(i, cmd, &r);
	n = r.status == TRANSPORT_EXITED ? atoi(r.out) : -1;
	transport_result_free(&r);
	return n;
}

static void kill_procs(size_t i, int tag)
{
	struct transport_result r;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "pkill -KILL -x -f 'sleep %d' || pkill -KILL -f '^sleep %d$'; true",
	         tag, tag);
	run_plain(i, cmd, &r);
	transport_result_free(&r);
}

struct held {
	size_t i;
	enum transport_jail tier;
	atomic_bool flag;
	struct transport_result r;
};

static void *held_request(void *arg)
{
	struct held *h = arg;
	struct transport_limits lim = {.timeout_ms = 60000, .jail = h->tier, .cancel = &h->flag};

	transport_exec(T, &node, targets[h->i].type, targets[h->i].id, "sleep 3071", &lim, &h->r);
	return NULL;
}

static void t_jail_promise(void)
{
	static const char *const secrets[] = {"/root/.ssh", "/root/.pgpass", "/home/*/.ssh",
	                                      "/etc/airlock-secret-*"};
	struct transport_jail_spec spec = {.secrets = secrets, .nsecrets = 4};
	static const char *const claim[] = {"/var/lib/airlock-wt/", "/etc/airlock-wt.conf"};
	struct transport_jail_spec wspec = {.secrets = secrets, .nsecrets = 4, .writes = claim,
	                                    .nwrites = 2};
	static const enum transport_jail tiers[] = {TRANSPORT_JAIL_USER, TRANSPORT_JAIL_ROOT,
	                                            TRANSPORT_JAIL_WRITE};
	struct transport_result r;
	char path[600], cmd[2048];

	for (size_t i = 0; i < 3; i++) {
		const char *w = tname(targets[i].type, targets[i].id);
		/* Below the ephemeral range, so that no outgoing connection holds it. */
		int port = 29100 + (int)i * 3 + (int)(getpid() % 50) * 10;
		char abs[64], logp[600];

		/* ---- the target's own listener: TCP, UDP, abstract socket */
		/* A CT's processes end with each pct exec on the rig (no init of its
		 * own), and the rig's CTs share the node's network: their listener
		 * runs on the node. */
		size_t li = targets[i].type == TARGET_LXC ? 0 : i;
		snprintf(abs, sizeof(abs), "airlock-promise-%d", port);
		on_target(logp, sizeof(logp), li, "/var/lib/airlock-promise.log");
		unlink(logp);
		snprintf(cmd, sizeof(cmd),
		         "setsid python3 -c \"\nimport socket,select\nt=socket.socket(); "
		         "t.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); "
		         "t.bind(('127.0.0.1',%d)); t.listen(8)\nu=socket.socket(socket.AF_INET,"
		         "socket.SOCK_DGRAM); u.bind(('127.0.0.1',%d))\na=socket.socket(socket.AF_UNIX);"
		         " a.bind(b'\\0%s'); a.listen(8)\nwhile True:\n for s in select.select([t,u,a]"
		         ",[],[])[0]:\n  if s is u: d=u.recv(64)\n  else: c,_=s.accept(); d=b'conn'\n"
		         "  open('/var/lib/airlock-promise.log','ab').write(d+b'\\n')\n\" "
		         "</dev/null >/dev/null 2>&1 & echo $!; for i in $(seq 100); do "
		         "ss -Hltn | grep -q ':%d ' && ss -Hlx | grep -q '@%s' && echo ready && "
		         "break; sleep 0.1; done",
		         port, port, abs, port, abs);
		run_plain(li, cmd, &r);
		long listener = atol(r.out);
		CHECK(listener > 0 && strstr(r.out, "ready"), "%s: the target's listener is up (%s)", w,
		      r.out);
		transport_result_free(&r);
		for (int k = 0; k < NSPELL_SEND; k++) {
			char *a = spell_send(k, port, abs);
			for (size_t t = 0; t < 3; t++) {
				jrun(i, tiers[t], t == 2 ? &wspec : &spec, a, 30000, &r);
				CHECK(r.status == TRANSPORT_EXITED,
				      "%s %s tier: send spelling %d ran (%s %s)", w,
				      jail_name(tiers[t]), k, transport_status_name(r.status),
				      r.errmsg);
				transport_result_free(&r);
			}
			CHECK(!exists(logp), "%s: send spelling %d reached nothing on the target in "
			                     "any tier (%s)",
			      w, k, a);
			if (k == 0 || k == 4 || k == 6) {
				/* Unconfined, the same send arrives: the check can fail. */
				run_plain(i, a, &r);
				transport_result_free(&r);
				usleep(300000);
				CHECK(exists(logp), "%s: unconfined, send spelling %d arrives", w, k);
				unlink(logp);
			}
			free(a);
		}
		snprintf(cmd, sizeof(cmd), "kill %ld", listener);
		run_plain(li, cmd, &r);
		transport_result_free(&r);

		/* ---- secrets on the target: planted, covered in every tier */
		on_target(path, sizeof(path), i, "/root/.pgpass");
		snprintf(cmd, sizeof(cmd),
		         "mkdir -p /root/.ssh && echo 'localhost:5432:*:postgres:PLANTED-PGPASS-%zu' "
		         ">/root/.pgpass && echo PLANTED-KEY-%zu >/root/.ssh/id_planted && echo "
		         "PLANTED-ETC-%zu >/etc/airlock-secret-x && chmod 0644 /etc/airlock-secret-x",
		         i, i, i);
		run_plain(i, cmd, &r);
		transport_result_free(&r);
		static const char *const stores[] = {"/root/.pgpass", "/root/.ssh/id_planted",
		                                     "/etc/airlock-secret-x"};
		/* Every spelling on every target, the stores taking turns (suite time). */
		for (size_t sidx = 0; sidx < 3; sidx++)
			for (int k = (int)sidx; k < NSPELL_READ; k += 3) {
				char *a = spell_read(k, stores[sidx]);
				run_plain(i, a, &r);
				bool plain = strstr(r.out, "PLANTED-") != NULL;
				transport_result_free(&r);
				for (size_t t = 0; t < 3; t++) {
					jrun(i, tiers[t], t == 2 ? &wspec : &spec, a, 30000, &r);
					CHECK(r.status == TRANSPORT_EXITED && !strstr(r.out, "PLANTED-") &&
					          !strstr(r.err, "PLANTED-"),
					      "%s %s tier: %s prints no secret (unconfined it does: %d)",
					      w, jail_name(tiers[t]), a, plain);
					transport_result_free(&r);
				}
				CHECK(plain || k == 5, "%s: unconfined, `%s` prints the secret", w, a);
				free(a);
			}
		run_plain(i, "rm -f /root/.pgpass /root/.ssh/id_planted /etc/airlock-secret-x", &r);
		transport_result_free(&r);

		/* ---- SSH with a key found on the target: a key that really logs
		 * in to the rig's node, planted where root's keys live. */
		{
			char *key = NULL;
			FILE *f = fopen(env("AIRLOCK_RIG_SSH_KEY"), "r");
			struct buf kb = BUF_INIT;
			char chunk[4096];
			size_t n;
			while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
				buf_append(&kb, chunk, n);
			if (f)
				fclose(f);
			key = shellquote(buf_str(&kb));
			snprintf(path, sizeof(path), "%s/node/var/lib/airlock-promise-ssh",
			         env("AIRLOCK_RIG_ROOT"));
			unlink(path);
			char *plant = xasprintf("mkdir -p /root/.ssh && printf %%s %s >/root/.ssh/id_rig && "
			                        "chmod 600 /root/.ssh/id_rig",
			                        key);
			run_plain(i, plant, &r);
			transport_result_free(&r);
			char *login = xasprintf(
			    "ssh -i /root/.ssh/id_rig -p %s -o BatchMode=yes -o StrictHostKeyChecking=no "
			    "-o UserKnownHostsFile=/dev/null -o ConnectTimeout=3 root@127.0.0.1 'touch "
			    "/var/lib/airlock-promise-ssh' 2>&1",
			    env("AIRLOCK_RIG_SSH_PORT"));
			for (size_t t = 0; t < 3; t++) {
				jrun(i, tiers[t], t == 2 ? &wspec : &spec, login, 30000, &r);
				transport_result_free(&r);
				CHECK(!exists(path), "%s %s tier: ssh with the key found there logs in "
				                     "nowhere",
				      w, jail_name(tiers[t]));
			}
			run_plain(i, login, &r);
			CHECK(exists(path), "%s: unconfined, that key logs in to the node (%.200s)", w,
			      r.out);
			transport_result_free(&r);
			unlink(path);
			run_plain(i, "rm -f /root/.ssh/id_rig", &r);
			transport_result_free(&r);
			free(plant);
			free(login);
			free(key);
			buf_free(&kb);
		}

		/* ---- processes left behind: none outlives its request */
		for (int k = 0; k < NSPELL_LINGER; k++) {
			for (size_t t = 0; t < 3; t++) {
				int tag = 3001 + k * 10 + (int)t;
				char *a = spell_linger(k, tag);
				jrun(i, tiers[t], t == 2 ? &wspec : &spec, a, 30000, &r);
				transport_result_free(&r);
				int left = count_procs(i, tag);
				CHECK(left == 0, "%s %s tier: `%s` left nothing alive once it was final "
				                 "(%d)",
				      w, jail_name(tiers[t]), a, left);
				kill_procs(i, tag);
				free(a);
			}
		}
		if (targets[i].type != TARGET_LXC) { /* the rig's CTs keep nothing (see above) */
			char *a = spell_linger(3, 3099);
			run_plain(i, a, &r);
			transport_result_free(&r);
			CHECK(count_procs(i, 3099) == 1, "%s: unconfined, `%s` stays alive", w, a);
			kill_procs(i, 3099);
			free(a);
		}

		/* ---- bounds: memory, tasks, scratch, CPU */
		{
			struct transport_jail_spec small = spec;
			small.mem_bytes = 64LL << 20;
			small.tasks = 16;
			small.scratch_bytes = 8LL << 20;
			small.cpu_pct = 10;
			const char *mem = "python3 -c 'x=bytearray(256<<20); print(len(x))'";
			const char *forks = "python3 -c \"import os,time\nn=0\nfor i in range(40):\n "
			                    "try:\n  p=os.fork()\n except OSError: break\n if p==0:\n  "
			                    "time.sleep(2); os._exit(0)\n n+=1\nprint(n)\"";
			const char *fill = "head -c 32M /dev/zero > /tmp/fill && echo filled";
			const char *cpu = "cat /sys/fs/cgroup/cpu/$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ "
			                  "{print $3}' /proc/self/cgroup)/cpu.cfs_quota_us 2>/dev/null || "
			                  "cat /sys/fs/cgroup$(awk -F: '$1 == 0 {print $3}' "
			                  "/proc/self/cgroup)/cpu.max";
			run_plain(i, mem, &r);
			CHECK(r.status == TRANSPORT_EXITED && strstr(r.out, "268435456"),
			      "%s: unconfined, 256 MiB can be had", w);
			transport_result_free(&r);
			run_plain(i, forks, &r);
			CHECK(r.status == TRANSPORT_EXITED && atoi(r.out) == 40,
			      "%s: unconfined, 40 processes can be had (%s)", w, r.out);
			transport_result_free(&r);
			for (size_t t = 0; t < 3; t++) {
				const char *tn = jail_name(tiers[t]);
				struct transport_jail_spec sp = small;
				if (t == 2) {
					sp.writes = claim;
					sp.nwrites = 2;
				}
				jrun(i, tiers[t], &sp, mem, 30000, &r);
				CHECK(!strstr(r.out, "268435456") &&
				          (strstr(r.err, "killed by the memory limit (64 MiB)") ||
				           strstr(r.err, "MemoryError")),
				      "%s %s tier: 256 MiB is refused by the 64 MiB bound (%.200s)", w, tn,
				      r.err);
				transport_result_free(&r);
				jrun(i, tiers[t], &sp, forks, 30000, &r);
				CHECK(r.status == TRANSPORT_EXITED && atoi(r.out) > 0 && atoi(r.out) < 16,
				      "%s %s tier: the 16-task bound stops forks (%s)", w, tn, r.out);
				transport_result_free(&r);
				jrun(i, tiers[t], &sp, fill, 30000, &r);
				CHECK(!strstr(r.out, "filled") &&
				          (strstr(r.err, "No space left") || strstr(r.err, "File too large")),
				      "%s %s tier: scratch is bounded (%.200s)", w, tn, r.err);
				transport_result_free(&r);
				jrun(i, tiers[t], &sp, cpu, 30000, &r);
				CHECK(strstr(r.out, "10000") == r.out,
				      "%s %s tier: its cgroup holds a CPU quota of 10%% (%s)", w, tn, r.out);
				transport_result_free(&r);
			}
			on_target(path, sizeof(path), i, "/tmp/fill");
			CHECK(!exists(path), "%s: the jail's scratch left nothing in the target's /tmp", w);
		}

		/* ---- another request's processes: no signal, trace or memory (not in
		 * the rig's CTs, where each pct exec is a pid namespace of its own) */
		for (size_t t = 0; t < 2 && targets[i].type != TARGET_LXC; t++) {
			struct held h = {.i = i, .tier = tiers[t]};
			pthread_t th;
			long pid = 0;
			atomic_init(&h.flag, false);
			pthread_create(&th, NULL, held_request, &h);
			for (int k = 0; k < 200 && pid <= 0; k++) {
				run_plain(i, "pgrep -x -f 'sleep 3071' | head -1", &r);
				pid = atol(r.out);
				transport_result_free(&r);
				if (pid <= 0)
					usleep(50000);
			}
			snprintf(cmd, sizeof(cmd),
			         "kill -9 %ld; echo kill=$?; kill -STOP %ld; echo stop=$?; "
			         "cat /proc/%ld/environ >/dev/null; echo environ=$?; python3 -c \"open("
			         "'/proc/%ld/mem','rb')\" 2>/dev/null; echo mem=$?; "
			         "gdb -p %ld -batch 2>/dev/null; strace -p %ld -o /dev/null 2>/dev/null "
			         "& sleep 0.3; echo done",
			         pid, pid, pid, pid, pid, pid);
			jrun(i, tiers[t], &spec, cmd, 30000, &r);
			CHECK(pid > 0 && strstr(r.out, "kill=1") && strstr(r.out, "stop=1") &&
			          strstr(r.out, "environ=1") && strstr(r.out, "mem=1"),
			      "%s %s tier: another request's process cannot be signalled, read or "
			      "traced (%s)",
			      w, jail_name(tiers[t]), r.out);
			transport_result_free(&r);
			snprintf(cmd, sizeof(cmd), "kill -0 %ld && grep State /proc/%ld/status", pid,
			         pid);
			run_plain(i, cmd, &r);
			CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0 && !strstr(r.out, "stopped"),
			      "%s %s tier: the other request's process runs on, untouched (%s)", w,
			      jail_name(tiers[t]), r.out);
			transport_result_free(&r);
			atomic_store(&h.flag, true);
			pthread_join(th, NULL);
			transport_result_free(&h.r);
			CHECK(count_procs(i, 3071) == 0, "%s %s tier: the cancelled request left nothing",
			      w, jail_name(tiers[t]));
		}

		/* ---- devices */
		for (size_t t = 0; t < 3; t++) {
			jrun(i, tiers[t], t == 2 ? &wspec : &spec,
			     "head -c 16 /dev/sdb; head -c 16 /dev/mem; ls /dev", 30000, &r);
			CHECK(!strstr(r.out, "airlock-rig-disk") && !strstr(r.out, "\nsdb\n"),
			      "%s %s tier: no disk or memory device can be read (%.100s)", w,
			      jail_name(tiers[t]), r.out);
			transport_result_free(&r);
		}

		/* ---- writes: everywhere but the claim, in every spelling */
		static const char *const elsewhere[] = {
		    "/etc/airlock-promise", "/var/lib/airlock-promise", "/root/airlock-promise",
		    "/var/lib/airlock-wt-sibling"};
		/* Every spelling on every target, the paths taking turns (suite time). */
		for (size_t e = 0; e < sizeof(elsewhere) / sizeof(elsewhere[0]); e++)
			for (int k = (int)e; k < NSPELL_WRITE; k += 4) {
				char *a = spell_write(k, elsewhere[e]);
				for (size_t t = 0; t < 3; t++) {
					jrun(i, tiers[t], t == 2 ? &wspec : &spec, a, 30000, &r);
					transport_result_free(&r);
					on_target(path, sizeof(path), i, elsewhere[e]);
					struct stat st;
					bool left = lstat(path, &st) == 0;
					CHECK(!left, "%s %s tier: `%s` wrote nothing", w,
					      jail_name(tiers[t]), a);
					if (left)
						run_plain(i, "rm -rf /etc/airlock-promise /var/lib/airlock-promise "
						             "/root/airlock-promise /var/lib/airlock-wt-sibling",
						          &r), transport_result_free(&r);
				}
				free(a);
			}
		/* The claim itself is writable in the write tier, and only there. */
		const char *inclaim = "mkdir -p /var/lib/airlock-wt/sub && echo a >/var/lib/airlock-wt/sub/f && "
		                      "echo b > /etc/airlock-wt.conf && ln -s /etc /var/lib/airlock-wt/e && "
		                      "(echo c > /var/lib/airlock-wt/e/airlock-promise-via-link; true) && "
		                      "(echo d > /var/lib/airlock-wt/../airlock-promise-dotdot; true)";
		jrun(i, TRANSPORT_JAIL_WRITE, &wspec, inclaim, 30000, &r);
		on_target(path, sizeof(path), i, "/var/lib/airlock-wt/sub/f");
		bool wrote = exists(path);
		on_target(path, sizeof(path), i, "/etc/airlock-wt.conf");
		wrote = wrote && file_has(path, "b");
		CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0 && wrote,
		      "%s write tier: the claimed paths are written (%s %.200s)", w,
		      transport_status_name(r.status), r.err);
		transport_result_free(&r);
		on_target(path, sizeof(path), i, "/etc/airlock-promise-via-link");
		CHECK(!exists(path), "%s write tier: a link in the claim leads nowhere writable", w);
		on_target(path, sizeof(path), i, "/var/lib/airlock-promise-dotdot");
		CHECK(!exists(path), "%s write tier: .. out of the claim is not writable", w);
		jrun(i, TRANSPORT_JAIL_ROOT, &spec, "echo x > /etc/airlock-wt.conf", 30000, &r);
		CHECK(r.status == TRANSPORT_EXITED && r.exit_code != 0,
		      "%s root tier: the same path is read-only without the claim", w);
		transport_result_free(&r);
		run_plain(i, "rm -rf /var/lib/airlock-wt /etc/airlock-wt.conf", &r);
		transport_result_free(&r);
		/* Unconfined, the writes elsewhere take place: the checks can fail. */
		for (int k = 0; k < NSPELL_WRITE; k++) {
			char *a = spell_write(k, "/var/lib/airlock-promise");
			run_plain(i, a, &r);
			transport_result_free(&r);
			on_target(path, sizeof(path), i, "/var/lib/airlock-promise");
			struct stat st;
			CHECK(lstat(path, &st) == 0, "%s: unconfined, `%s` writes", w, a);
			run_plain(i, "rm -rf /var/lib/airlock-promise", &r);
			transport_result_free(&r);
			free(a);
		}
	}
}

/* The jail where an unprivileged container runs it: in a user namespace
 * (uids 0..65535 mapped to 100000..), whose root has capabilities only over
 * its own namespaces, may not mknod, and finds the mounts it inherited
 * locked.  Run here, on the machine, in a fresh user and mount namespace:
 * the jail's line is handed to /bin/sh exactly as a login shell would get it.
 * A step the child cannot take is written to *out ("userns_run: ...") and
 * the child exits 90..93; the parent never writes to a child that is gone
 * (SIGPIPE is ignored in this program, and a failed write is a failed
 * step).  Returns the child's exit status, 128+N for a signal, -1 when the
 * child could not even be started. */
enum { USERNS_NO_UNSHARE = 90, USERNS_NO_SYNC, USERNS_NO_ROOT, USERNS_NO_EXEC };

static void userns_child_fail(int fd, int code, const char *what)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "userns_run: %s: %s\n", what, strerror(errno));
	if (n > 0 && write(fd, msg, (size_t)n) < 0) {
		/* nobody to tell: the exit status says which step failed */
	}
	_exit(code);
}

static int userns_run(const char *line, struct buf *out)
{
	int sync1[2], sync2[2], outp[2], st = 0;
	char c = 0, path[64];
	pid_t pid;

	if (pipe(sync1) < 0 || pipe(sync2) < 0 || pipe(outp) < 0) {
		buf_printf(out, "userns_run: pipe: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		buf_printf(out, "userns_run: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(sync1[0]);
		close(sync2[1]);
		close(outp[0]);
		if (unshare(CLONE_NEWUSER) < 0)
			userns_child_fail(outp[1], USERNS_NO_UNSHARE,
			                  "unshare(CLONE_NEWUSER) (a chroot, or user namespaces off?)");
		if (write(sync1[1], "u", 1) != 1 || read(sync2[0], &c, 1) != 1)
			userns_child_fail(outp[1], USERNS_NO_SYNC, "waiting for the uid/gid maps");
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0 || unshare(CLONE_NEWNS) < 0)
			userns_child_fail(outp[1], USERNS_NO_ROOT,
			                  "becoming root of the new namespace, unshare(CLONE_NEWNS)");
		dup2(outp[1], 1);
		dup2(outp[1], 2);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		userns_child_fail(2, USERNS_NO_EXEC, "exec /bin/sh");
	}
	close(sync1[1]);
	close(sync2[0]);
	close(outp[1]);
	if (read(sync1[0], &c, 1) == 1) {
		static const char *maps[] = {"uid_map", "gid_map"};
		for (int i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, maps[i]);
			FILE *f = fopen(path, "w");
			int ok = f != NULL && fputs("0 100000 65536\n", f) >= 0;
			if (f != NULL && fclose(f) != 0)
				ok = 0;
			if (!ok)
				buf_printf(out, "userns_run: writing %s: %s\n", path, strerror(errno));
		}
		if (write(sync2[1], "m", 1) != 1) {
			buf_printf(out, "userns_run: telling the child to go on: %s\n", strerror(errno));
			kill(pid, SIGKILL);
		}
	}
	/* Else the child is gone before its namespace existed: its reason is in
	 * the output pipe. */
	char chunk[4096];
	ssize_t n;
	while ((n = read(outp[0], chunk, sizeof(chunk))) > 0)
		buf_append(out, chunk, (size_t)n);
	close(outp[0]);
	close(sync1[0]);
	close(sync2[1]);
	if (waitpid(pid, &st, 0) < 0) {
		buf_printf(out, "userns_run: waitpid: %s\n", strerror(errno));
		return -1;
	}
	if (WIFSIGNALED(st)) {
		buf_printf(out, "userns_run: the child was killed by signal %d\n", WTERMSIG(st));
		return 128 + WTERMSIG(st);
	}
	return WEXITSTATUS(st);
}

static void t_jail_userns(void)
{
	const char *cmd = "id -u; grep CapEff /proc/self/status; touch /etc/airlock-userns 2>&1; "
	                  "echo x > /dev/null && echo devnull-ok; ls /dev";
	for (enum transport_jail j = TRANSPORT_JAIL_USER; j <= TRANSPORT_JAIL_ROOT; j++) {
		struct buf line = BUF_INIT, out = BUF_INIT;
		/* The helper itself, as the checked line execs it. */
		buf_printf(&line, "exec build/bin/airlock-jail -t %s -d 20000 -- ", jail_name(j));
		shellquote_append(&line, cmd, strlen(cmd));
		int rc = userns_run(buf_str(&line), &out);
		const char *o = buf_str(&out);
		char ready[64];
		snprintf(ready, sizeof(ready), "airlock-jail: ready %s ", jail_name(j));
		if (j == TRANSPORT_JAIL_ROOT) {
			/* No cgroup this namespace may write: uid 0 is exempt from
			 * the per-user process limit, so the root tier is refused. */
			CHECK(rc == 125 && strstr(o, "cannot confine: no cgroup") != NULL,
			      "user namespace, root tier: without a cgroup it is refused (rc %d: "
			      "%.300s)",
			      rc, o);
			buf_free(&line);
			buf_free(&out);
			continue;
		}
		CHECK(rc == 0 && strncmp(o, ready, strlen(ready)) == 0 &&
		          strstr(o, "limits=rlimit") != NULL,
		      "user namespace, %s tier: the jail is built, with rlimits (rc %d: %.300s)",
		      jail_name(j), rc, o);
		const char *nl = strchr(o, '\n');
		long uid = nl ? atol(nl + 1) : -1;
		CHECK(uid >= 40000 && uid < 60000,
		      "user namespace, %s tier: a uid of its own from the mapped range (%ld)",
		      jail_name(j), uid);
		CHECK(strstr(o, "CapEff:\t0000000000000000") != NULL,
		      "user namespace, %s tier: no capabilities", jail_name(j));
		CHECK(strstr(o, "Read-only file system") != NULL && !exists("/etc/airlock-userns"),
		      "user namespace, %s tier: / is read-only, nothing written", jail_name(j));
		CHECK(strstr(o, "devnull-ok") != NULL && strstr(o, "\nurandom\n") != NULL,
		      "user namespace, %s tier: /dev/null works without mknod", jail_name(j));
		buf_free(&line);
		buf_free(&out);
	}
}

static void t_big_output(void)
{
	const char *cmd = "head -c 20971520 /dev/zero | tr '\\0' x; echo done >&2";
	for (size_t i = 0; i < 3; i++) {
		struct transport_result r;
		const char *w = tname(targets[i].type, targets[i].id);
		run(targets[i].type, targets[i].id, cmd, 120000, 1024 * 1024, &r);
		CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0 &&
		          r.out_len == 1024 * 1024 && r.out_truncated && !r.err_truncated &&
		          strcmp(r.err, "done\n") == 0,
		      "%s: 20 MiB of stdout capped at 1 MiB and flagged (%zu bytes, %s %s)", w,
		      r.out_len, transport_status_name(r.status), r.errmsg);
		int allx = 1;
		for (size_t k = 0; k < r.out_len; k++)
			allx &= r.out[k] == 'x';
		CHECK(allx, "%s: the kept bytes are the command's", w);
		transport_result_free(&r);
	}
	/* With a cap above the agent's: the agent's own 16 MiB limit and flag. */
	struct transport_result r;
	run(TARGET_VM, 101, cmd, 120000, 32 * 1024 * 1024, &r);
	CHECK(r.status == TRANSPORT_EXITED && r.out_len == 16 * 1024 * 1024 && r.out_truncated,
	      "vm: qemu-ga's out-truncated is honoured (%zu bytes)", r.out_len);
	transport_result_free(&r);
}

struct canceller {
	atomic_bool flag;
	int after_ms;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;
	usleep((useconds_t)(c->after_ms > 0 ? c->after_ms : 500) * 1000);
	atomic_store(&c->flag, true);
	return NULL;
}

static void t_vm_timeout(void)
{
	struct transport *saved = T;
	struct transport_result r;

	/* qm's --timeout 1 runs out; the transport polls exec-status. */
	T = new_transport(env("AIRLOCK_RIG_KNOWN_HOSTS"), 1);
	run(TARGET_VM, 101, "sleep 3; echo done; exit 4", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 4 && strcmp(r.out, "done\n") == 0 &&
	          r.guest_pid > 0,
	      "vm: a command outliving --timeout is polled to its end (pid %lld, %s %d %s)",
	      (long long)r.guest_pid, transport_status_name(r.status), r.exit_code, r.errmsg);
	transport_result_free(&r);

	/* airlock's deadline: the guest pid is killed with qm guest exec ... kill. */
	run(TARGET_VM, 101, "sleep 41", 2500, 0, &r);
	CHECK(r.status == TRANSPORT_TIMED_OUT && r.guest_pid > 0,
	      "vm: deadline passed -> timed_out (%s %s)", transport_status_name(r.status),
	      r.errmsg);
	char kill[64];
	snprintf(kill, sizeof(kill), "kill -TERM $(k %lld)'", (long long)r.guest_pid);
	CHECK(log_count_end("vm:101", kill) == 1, "vm: killed pid %lld and its descendants once",
	      (long long)r.guest_pid);
	CHECK(r.signal == SIGTERM, "vm: the guest process ended by SIGTERM (%d)", r.signal);
	transport_result_free(&r);
	run(TARGET_VM, 101, "ps -eo args | grep -c '^sleep 41' || true", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "0\n") == 0,
	      "vm: no 'sleep 41' left in the guest (%s)", r.out);
	transport_result_free(&r);

	/* Cancel while the transport polls exec-status. */
	struct canceller c = {.after_ms = 2500};
	struct transport_limits lim = {.timeout_ms = 60000, .cancel = &c.flag};
	pthread_t th;
	pthread_create(&th, NULL, cancel_later, &c);
	transport_exec(T, &node, TARGET_VM, 101, "sleep 46; echo not-reached", &lim, &r);
	pthread_join(th, NULL);
	CHECK(r.status == TRANSPORT_CANCELLED && r.signal == SIGTERM && r.guest_pid > 0,
	      "vm: cancel flag -> cancelled, guest process killed (%s %d %s)",
	      transport_status_name(r.status), r.signal, r.errmsg);
	transport_result_free(&r);
	run(TARGET_VM, 101, "ps -eo args | grep -c '^sleep 46' || true", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "0\n") == 0,
	      "vm: no 'sleep 46' left in the guest (%s)", r.out);
	transport_result_free(&r);
	transport_free(T);
	T = saved;
}

static void t_timeout_cancel(void)
{
	static const char *cmds[] = {"sleep 42.5", "sleep 43.5"};
	for (int k = 0; k < 2; k++) {
		enum target_type ty = k == 0 ? TARGET_PROXMOX_HOST : TARGET_LXC;
		int id = k == 0 ? 0 : 201;
		struct transport_result r;
		run(ty, id, cmds[k], 1500, 0, &r);
		CHECK(r.status == TRANSPORT_TIMED_OUT && r.signal == SIGTERM,
		      "%s: deadline -> timed_out, SIGTERM sent (%s)", tname(ty, id),
		      transport_status_name(r.status));
		transport_result_free(&r);
	}
	/* The remote processes are gone (the node's ps sees the CTs' too). */
	struct transport_result r;
	int gone = 0;
	for (int i = 0; i < 50 && !gone; i++) {
		run(TARGET_PROXMOX_HOST, 0, "ps -eo args | grep -c '^sleep 4[23].5' || true", 60000,
		    0, &r);
		gone = strcmp(r.out, "0\n") == 0;
		transport_result_free(&r);
		if (!gone)
			usleep(100000);
	}
	CHECK(gone, "host, ct: the timed-out commands were killed");

	struct canceller c = {0};
	struct transport_limits lim = {.timeout_ms = 60000, .cancel = &c.flag};
	pthread_t th;
	pthread_create(&th, NULL, cancel_later, &c);
	transport_exec(T, &node, TARGET_PROXMOX_HOST, 0, "sleep 44", &lim, &r);
	pthread_join(th, NULL);
	CHECK(r.status == TRANSPORT_CANCELLED, "host: cancel flag -> cancelled (%s)",
	      transport_status_name(r.status));
	transport_result_free(&r);

	/* VM, cancelled while qm itself still waits (qm_timeout_s is 30 here). */
	struct canceller v = {.after_ms = 1000};
	pthread_create(&th, NULL, cancel_later, &v);
	lim.cancel = &v.flag;
	transport_exec(T, &node, TARGET_VM, 101, "sleep 48", &lim, &r);
	pthread_join(th, NULL);
	CHECK(r.status == TRANSPORT_CANCELLED && r.signal == SIGTERM && r.guest_pid > 0,
	      "vm: cancelled during qm's own wait: killed by pid (%s %d %s)",
	      transport_status_name(r.status), r.signal, r.errmsg);
	transport_result_free(&r);
}

static void expect_refusal(enum target_type ty, int id, const char *text)
{
	struct transport_result r;
	int rc = run(ty, id, "echo should-not-run", 60000, 0, &r);
	CHECK(rc == -1 && r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_PVE &&
	          strstr(r.errmsg, text) != NULL && r.out_len == 0,
	      "%s: refused, nothing ran: '%s' (%s)", tname(ty, id), text, r.errmsg);
	transport_result_free(&r);
}

static void probe_expect(struct transport_probe *p, size_t n,
                         const enum transport_probe_state *want)
{
	int rc = transport_probe(T, &node, p, n, 30000);
	CHECK(rc == 0, "probe: the node answered");
	for (size_t i = 0; i < n; i++)
		CHECK(p[i].state == want[i], "probe %s %d: %s (want %s; %s)",
		      p[i].kind == TRANSPORT_PROBE_AGENT ? "agent"
		      : p[i].kind == TRANSPORT_PROBE_CT  ? "ct"
		                                         : "host",
		      p[i].vmid, transport_probe_state_name(p[i].state),
		      transport_probe_state_name(want[i]), p[i].detail);
}

static void t_agents_and_probes(void)
{
	struct transport_stats before, after;

	expect_refusal(TARGET_VM, 102, "No QEMU guest agent configured");
	expect_refusal(TARGET_VM, 103, "QEMU guest agent is not running");
	expect_refusal(TARGET_VM, 999, "does not exist");
	expect_refusal(TARGET_LXC, 202, "container '202' not running (status: stopped)");
	expect_refusal(TARGET_LXC, 999, "does not exist");
	/* The live check rides on the command's own channel: the ping and qm
	 * guest exec are one remote line, one channel. */
	struct transport_stats st0, st1;
	struct transport_result ok;
	transport_stats(T, node.name, &st0);
	run(TARGET_VM, 101, "echo one-channel", 60000, 0, &ok);
	transport_stats(T, node.name, &st1);
	CHECK(ok.status == TRANSPORT_EXITED && ok.exit_code == 0 &&
	          st1.channels_opened == st0.channels_opened + 1,
	      "vm: the agent check and the command on one channel (%ld channels; %s)",
	      st1.channels_opened - st0.channels_opened, ok.errmsg);
	transport_result_free(&ok);
	/* A container's status check rides on its command's channel too: its
	 * answer is not part of the command's output. */
	transport_stats(T, node.name, &st0);
	run(TARGET_LXC, 201, "echo ct-one-channel; echo err >&2", 60000, 0, &ok);
	transport_stats(T, node.name, &st1);
	CHECK(ok.status == TRANSPORT_EXITED && ok.exit_code == 0 &&
	          strcmp(ok.out, "ct-one-channel\n") == 0 && strcmp(ok.err, "err\n") == 0 &&
	          st1.channels_opened == st0.channels_opened + 1,
	      "ct: the status check and the command on one channel, the check's line removed "
	      "(%ld channels; out '%s')",
	      st1.channels_opened - st0.channels_opened, ok.out);
	transport_result_free(&ok);
	/* The check's line is first on stdout: a command cannot forge a refusal
	 * (it ran: its exit and output are its own). */
	run(TARGET_LXC, 201, "echo 'status: stopped'; exit 1", 60000, 0, &ok);
	CHECK(ok.status == TRANSPORT_EXITED && ok.exit_code == 1 &&
	          strcmp(ok.out, "status: stopped\n") == 0,
	      "ct: a command printing 'status: stopped' ran and exited 1 (%s %s)",
	      transport_status_name(ok.status), ok.errmsg);
	transport_result_free(&ok);
	/* Output capped at the command's cap, the status line not counted. */
	run(TARGET_LXC, 201, "printf 0123456789abcdef", 60000, 10, &ok);
	CHECK(ok.status == TRANSPORT_EXITED && ok.out_len == 10 && ok.out_truncated &&
	          memcmp(ok.out, "0123456789", 10) == 0,
	      "ct: the cap is the command's (%zu bytes, truncated %d)", ok.out_len,
	      ok.out_truncated);
	transport_result_free(&ok);
	CHECK(log_count_end("ct:201", ARGV_LOGGED("echo ct-one-channel; echo err >&2")) == 1 &&
	          log_count_end("ct:202", ARGV_LOGGED("echo should-not-run")) == 0,
	      "ct: nothing reached a stopped container (as a running one's command would)");
	rigctl("vm 101 agent-stop");
	expect_refusal(TARGET_VM, 101, "QEMU guest agent is not running");
	CHECK(log_count_end("vm:101", ARGV_LOGGED("echo one-channel")) == 1 &&
	          log_count_end("vm:101", ARGV_LOGGED("echo should-not-run")) == 0,
	      "vm: nothing reached a guest (as the earlier command did)");

	transport_stats(T, node.name, &before);
	struct transport_probe p[] = {
	    {TRANSPORT_PROBE_HOST, 0},    {TRANSPORT_PROBE_AGENT, 101},
	    {TRANSPORT_PROBE_AGENT, 102}, {TRANSPORT_PROBE_AGENT, 103},
	    {TRANSPORT_PROBE_AGENT, 999}, {TRANSPORT_PROBE_CT, 201},
	    {TRANSPORT_PROBE_CT, 202},    {TRANSPORT_PROBE_CT, 999},
	};
	enum transport_probe_state want[] = {
	    TRANSPORT_PROBE_OK,
	    TRANSPORT_PROBE_NOT_RUNNING,
	    TRANSPORT_PROBE_NOT_CONFIGURED,
	    TRANSPORT_PROBE_NOT_RUNNING,
	    TRANSPORT_PROBE_NO_SUCH_GUEST,
	    TRANSPORT_PROBE_OK,
	    TRANSPORT_PROBE_NOT_RUNNING,
	    TRANSPORT_PROBE_NO_SUCH_GUEST,
	};
	probe_expect(p, 8, want);
	CHECK(strcmp(transport_agent_attr(p[1].state), "not_running") == 0 &&
	          strcmp(transport_agent_attr(p[2].state), "not_configured") == 0,
	      "probe: qemu_guest_agent attribute values");
	rigctl("vm 101 agent-start");
	rigctl("vm 103 agent-start");
	rigctl("ct 202 start");
	want[1] = want[3] = want[6] = TRANSPORT_PROBE_OK;
	probe_expect(p, 8, want);
	CHECK(strcmp(transport_agent_attr(p[1].state), "running") == 0, "probe: running");
	transport_stats(T, node.name, &after);
	CHECK(after.sessions_opened == before.sessions_opened,
	      "probe: 16 targets probed without a new SSH session (%ld -> %ld)",
	      before.sessions_opened, after.sessions_opened);
	rigctl("vm 101 stop");
	struct transport_probe q = {TRANSPORT_PROBE_AGENT, 101};
	enum transport_probe_state w = TRANSPORT_PROBE_VM_STOPPED;
	probe_expect(&q, 1, &w);
	expect_refusal(TARGET_VM, 101, "VM 101 is not running");
	rigctl("vm 101 start");
	rigctl("vm 103 agent-hang");
	rigctl("ct 202 stop");

	/* An agent that answers ping but has guest-exec disabled (RHEL 10 style). */
	rigctl("vm 101 agent-lockdown");
	w = TRANSPORT_PROBE_EXEC_DISABLED;
	probe_expect(&q, 1, &w);
	CHECK(q.state == TRANSPORT_PROBE_EXEC_DISABLED &&
	          strcmp(transport_agent_attr(q.state), "exec_disabled") == 0,
	      "probe: qemu_guest_agent=exec_disabled");
	expect_refusal(TARGET_VM, 101, "has been disabled");
	rigctl("vm 101 agent-start");
}

struct worker {
	pthread_t th;
	int i;
	struct transport_result r;
	enum target_type type;
	int id;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "sleep 0.3; echo %d", w->i);
	run(w->type, w->id, cmd, 120000, 0, &w->r);
	return NULL;
}

static void t_concurrent(void)
{
	enum { N = 50 };
	struct worker w[N];
	struct transport_stats before, after;
	int good = 0;

	run(TARGET_PROXMOX_HOST, 0, "true", 60000, 0, &w[0].r); /* the session exists */
	transport_result_free(&w[0].r);
	transport_stats(T, node.name, &before);
	for (int i = 0; i < N; i++) {
		w[i].i = i;
		w[i].type = i % 5 == 4 ? TARGET_LXC : i % 10 == 3 ? TARGET_VM : TARGET_PROXMOX_HOST;
		w[i].id = w[i].type == TARGET_LXC ? 201 : w[i].type == TARGET_VM ? 101 : 0;
		pthread_create(&w[i].th, NULL, work, &w[i]);
	}
	for (int i = 0; i < N; i++) {
		char want[16];
		pthread_join(w[i].th, NULL);
		snprintf(want, sizeof(want), "%d\n", i);
		if (w[i].r.status == TRANSPORT_EXITED && w[i].r.exit_code == 0 &&
		    strcmp(w[i].r.out, want) == 0)
			good++;
		else
			printf("# worker %d: %s %d %s\n", i, transport_status_name(w[i].r.status),
			       w[i].r.exit_code, w[i].r.errmsg);
		transport_result_free(&w[i].r);
	}
	transport_stats(T, node.name, &after);
	CHECK(good == N, "50 concurrent commands (host, CT, VM) from 50 threads: %d right", good);
	CHECK(after.sessions_opened == before.sessions_opened,
	      "one SSH session carried them all (%ld new)",
	      after.sessions_opened - before.sessions_opened);
	CHECK(after.peak_channels > 1 && after.peak_channels <= 8,
	      "channels ran concurrently, bounded by 8 (peak %d)", after.peak_channels);
}

struct bg {
	pthread_t th;
	struct transport_result r;
	int rc;
};

static void *bg_run(void *arg)
{
	struct bg *b = arg;
	b->rc =
	    run(TARGET_PROXMOX_HOST, 0, "echo started; sleep 45; echo finished", 60000, 0, &b->r);
	return NULL;
}

static void *bg_run_vm(void *arg)
{
	struct bg *b = arg;
	b->rc = run(TARGET_VM, 101, "sleep 47; echo finished", 60000, 0, &b->r);
	return NULL;
}

/* An idle session outlives several keepalive intervals and is still used. */
static void t_idle(void)
{
	struct transport_stats before, after;
	struct transport_result r;

	run(TARGET_PROXMOX_HOST, 0, "true", 60000, 0, &r);
	transport_result_free(&r);
	transport_stats(T, node.name, &before);
	sleep(11); /* keepalive_s is 3: more than three intervals */
	run(TARGET_PROXMOX_HOST, 0, "echo still", 60000, 0, &r);
	transport_stats(T, node.name, &after);
	CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "still\n") == 0 &&
	          after.sessions_opened == before.sessions_opened,
	      "after 11 s idle the same session serves the next command (%ld new sessions)",
	      after.sessions_opened - before.sessions_opened);
	transport_result_free(&r);
}

static void t_sshd_killed(void)
{
	struct bg b;
	struct transport_stats before, after;
	const char *marker = SHELL_EXEC_WORDS " 'echo started; sleep 45; echo finished'";

	struct bg v;
	const char *vmarker = ARGV_LOGGED("sleep 47; echo finished");

	transport_stats(T, node.name, &before);
	pthread_create(&b.th, NULL, bg_run, &b);
	pthread_create(&v.th, NULL, bg_run_vm, &v);
	for (int i = 0; i < 200 && (log_count_end("node", marker) == 0 ||
	                            log_count("vm:101", vmarker, strlen(vmarker)) == 0);
	     i++)
		usleep(50000);
	CHECK(log_count_end("node", marker) == 1, "the long host command started");
	CHECK(log_count_end("vm:101", vmarker) == 1, "the long VM command started");
	rigctl("node stop");
	pthread_join(b.th, NULL);
	pthread_join(v.th, NULL);
	CHECK(b.rc == -1 && b.r.status == TRANSPORT_UNKNOWN && b.r.error == TRANSPORT_ERR_LOST,
	      "host: sshd killed mid-command: unknown outcome, not a result (%s/%s: %s)",
	      transport_status_name(b.r.status), transport_error_name(b.r.error), b.r.errmsg);
	CHECK(v.rc == -1 && v.r.status == TRANSPORT_UNKNOWN && v.r.error == TRANSPORT_ERR_LOST,
	      "vm: sshd killed mid-command: unknown outcome, not a result (%s/%s: %s)",
	      transport_status_name(v.r.status), transport_error_name(v.r.error), v.r.errmsg);
	transport_result_free(&b.r);
	transport_result_free(&v.r);

	struct transport_result r;
	struct transport_stats s0, s1;
	enum transport_error e;
	char why[512];
	run(TARGET_PROXMOX_HOST, 0, "echo x", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_CONNECT,
	      "node down: failed to connect, nothing ran (%s)", r.errmsg);
	transport_result_free(&r);
	CHECK(transport_reachable(T, &node, 15000, &e, why, sizeof(why)) == -1 &&
	          e == TRANSPORT_ERR_CONNECT && strstr(why, "cannot connect") != NULL,
	      "node down: not reachable, saying why (%s)", why);
	rigctl("node start");
	transport_stats(T, node.name, &s0);
	CHECK(transport_reachable(T, &node, 15000, &e, why, sizeof(why)) == 0,
	      "node back: reachable (%s)", why);
	transport_stats(T, node.name, &s1);
	CHECK(s1.sessions_opened == s0.sessions_opened + 1 &&
	          s1.channels_opened == s0.channels_opened,
	      "reachable opened the session without a channel (%ld sessions, %ld channels)",
	      s1.sessions_opened - s0.sessions_opened, s1.channels_opened - s0.channels_opened);
	run(TARGET_PROXMOX_HOST, 0, "echo back", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "back\n") == 0,
	      "node back: the next command reconnects transparently (%s)", r.errmsg);
	transport_result_free(&r);
	transport_stats(T, node.name, &after);
	CHECK(after.sessions_opened == before.sessions_opened + 1, "exactly one reconnect (%ld)",
	      after.sessions_opened - before.sessions_opened);

	/* The node closes the pooled session while it is idle (sshd restarted):
	 * reachable finds it closed without a channel and opens a new one; an
	 * idle session that is still open costs nothing. */
	transport_stats(T, node.name, &s0);
	CHECK(transport_reachable(T, &node, 15000, &e, why, sizeof(why)) == 0,
	      "an open session is reachable (%s)", why);
	transport_stats(T, node.name, &s1);
	CHECK(s1.sessions_opened == s0.sessions_opened && s1.channels_opened == s0.channels_opened,
	      "an open session: no new session, no channel");
	rigctl("node restart");
	CHECK(transport_reachable(T, &node, 15000, &e, why, sizeof(why)) == 0,
	      "after a restart of the node's sshd: reachable (%s)", why);
	transport_stats(T, node.name, &s0);
	CHECK(s0.sessions_opened == s1.sessions_opened + 1 &&
	          s0.channels_opened == s1.channels_opened,
	      "the closed session was found and replaced, without a channel (%ld sessions)",
	      s0.sessions_opened - s1.sessions_opened);
	run(TARGET_PROXMOX_HOST, 0, "echo after-restart", 60000, 0, &r);
	transport_stats(T, node.name, &s1);
	CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "after-restart\n") == 0 &&
	          s1.sessions_opened == s0.sessions_opened,
	      "and the command uses it (%s)", r.errmsg);
	transport_result_free(&r);
}

static void hostkey_case(const char *known_hosts, const char *pin, const char *want)
{
	struct transport *t = new_transport(known_hosts, 0);
	struct transport_node n = node;
	struct transport_result r;
	const char *fp = env("AIRLOCK_RIG_HOSTKEY_SHA256");

	n.host_key_sha256 = pin;
	enum transport_error e;
	char why[512];
	int up = transport_reachable(t, &n, 15000, &e, why, sizeof(why));
	if (want == NULL)
		CHECK(up == 0, "reachable with a trusted host key (%s)", why);
	else
		CHECK(up == -1 && e == TRANSPORT_ERR_HOSTKEY && strstr(why, want) &&
		          strstr(why, fp),
		      "not reachable, the same refusal: %s", why);
	transport_exec(t, &n, TARGET_PROXMOX_HOST, 0, "echo trusted", NULL, &r);
	if (want == NULL) {
		CHECK(r.status == TRANSPORT_EXITED && strcmp(r.out, "trusted\n") == 0,
		      "host key accepted (%s)", r.errmsg);
	} else {
		CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_HOSTKEY &&
		          strstr(r.errmsg, want) && strstr(r.errmsg, fp) &&
		          strstr(r.errmsg, "127.0.0.1"),
		      "refused, naming host and the offered fingerprint: %s", r.errmsg);
	}
	transport_result_free(&r);
	transport_free(t);
}

/* ---- the one shell on each target ------------------------------------------ */

/* The first line a local command prints (the rig's guests share the
 * machine's /usr: their bash is this machine's). */
static void local_line(const char *cmd, char *out, size_t outlen)
{
	FILE *p = popen(cmd, "r");

	out[0] = '\0';
	if (p != NULL && fgets(out, (int)outlen, p) != NULL)
		out[strcspn(out, "\n")] = '\0';
	if (p != NULL)
		pclose(p);
}

static void t_shell(void)
{
	char version[64], bash[256], sh[256];

	local_line("/bin/bash -c 'echo $BASH_VERSION'", version, sizeof(version));
	local_line("readlink -f /bin/bash", bash, sizeof(bash));
	local_line("readlink -f /bin/sh", sh, sizeof(sh));
	for (size_t i = 0; i < 3; i++) {
		struct transport_shell r;
		const char *w = tname(targets[i].type, targets[i].id);
		int rc = transport_shell_probe(T, &node, targets[i].type, targets[i].id, 60000, &r);
		CHECK(rc == 0 && r.state == TRANSPORT_SHELL_BASH &&
		          strcmp(r.bash_version, version) == 0 && strcmp(r.bash_path, bash) == 0 &&
		          strcmp(r.sh, sh) == 0,
		      "%s: the shell probe finds bash %s at %s, /bin/sh is %s (%s: %s)", w, version,
		      bash, sh, transport_shell_state_name(r.state), r.detail);
	}
}

/* A container with busybox alone (rigctl ct-add --busybox): no bash.  Its
 * commands never run under a shell the classifier did not model: before
 * any probe the one shell's line fails there with nothing run; once the
 * probe has found it, nothing is even sent; once bash is there and the probe
 * has seen it, commands run. */
static void t_noshell(void)
{
	const char *root = env("AIRLOCK_RIG_ROOT");
	char ct[256], path[512], cmd[2048];
	struct transport_result r;
	struct transport_shell sh;
	int before;

	rigctl("ct-add 205 --busybox");
	snprintf(ct, sizeof(ct), "%s/guests/ct205/root", root);

	/* What the command would do under the container's own /bin/sh (busybox
	 * ash): it runs there, so the checks below can fail. */
	snprintf(cmd, sizeof(cmd),
	         "ssh -F '%s' %s \"pct exec 205 -- /bin/sh -c 'echo ran > /tmp/airlock-ash'\"",
	         env("AIRLOCK_RIG_SSH_CONFIG"), env("AIRLOCK_RIG_NODE"));
	snprintf(path, sizeof(path), "%s/tmp/airlock-ash", ct);
	CHECK(system(cmd) == 0 && exists(path),
	      "ct:205: busybox's /bin/sh runs a command when asked directly");

	/* Never probed: the one shell's line itself refuses to start anything. */
	run(TARGET_LXC, 205, "echo ran > /tmp/airlock-noshell; echo ran", 60000, 0, &r);
	snprintf(path, sizeof(path), "%s/tmp/airlock-noshell", ct);
	CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 127 && r.out_len == 0 &&
	          strstr(r.err, "/bin/bash") && !exists(path),
	      "ct:205 before any probe: env cannot start /bin/bash, nothing ran (exit %d: %s)",
	      r.exit_code, r.err);
	transport_result_free(&r);

	CHECK(transport_shell_probe(T, &node, TARGET_LXC, 205, 60000, &sh) == 0 &&
	          sh.state == TRANSPORT_SHELL_NONE && strstr(sh.detail, "no /bin/bash") &&
	          strcmp(sh.sh, "/bin/busybox") == 0,
	      "ct:205: the shell probe finds no bash, /bin/sh is busybox (%s: %s)",
	      transport_shell_state_name(sh.state), sh.detail);

	before = log_count_end("ct:205", ARGV_LOGGED("echo ran"));
	run(TARGET_LXC, 205, "echo ran", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_SHELL &&
	          strstr(r.errmsg, "container 205 on node") && strstr(r.errmsg, "has no bash") &&
	          strstr(r.errmsg, "Install bash") &&
	          log_count_end("ct:205", ARGV_LOGGED("echo ran")) == before,
	      "ct:205 after the probe: refused before sending, saying what to do (%s)", r.errmsg);
	transport_result_free(&r);
	char why[600];
	CHECK(transport_shell_refused(T, &node, TARGET_LXC, 205, why, sizeof(why)) < 0 &&
	          transport_shell_refused(T, &node, TARGET_LXC, 201, why, sizeof(why)) == 0,
	      "the refusal is the bash-less container's only");

	/* bash arrives (the machine's, with its libraries); until the probe has
	 * seen it, the refusal stands; then commands run. */
	snprintf(cmd, sizeof(cmd),
	         "rm -f '%s/pve/lxc/205.busybox' && ln -s usr/lib '%s/lib' && ln -s usr/lib64 "
	         "'%s/lib64' && ln -s /usr/bin/bash '%s/bin/bash'",
	         root, ct, ct, ct);
	CHECK(system(cmd) == 0, "ct:205: bash installed");
	run(TARGET_LXC, 205, "echo ran", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_FAILED && r.error == TRANSPORT_ERR_SHELL,
	      "ct:205: still refused until a probe has seen bash");
	transport_result_free(&r);
	CHECK(transport_shell_probe(T, &node, TARGET_LXC, 205, 60000, &sh) == 0 &&
	          sh.state == TRANSPORT_SHELL_BASH,
	      "ct:205: the probe finds bash now (%s)", sh.detail);
	run(TARGET_LXC, 205, "echo ran", 60000, 0, &r);
	CHECK(r.status == TRANSPORT_EXITED && r.exit_code == 0 && strcmp(r.out, "ran\n") == 0,
	      "ct:205: and its commands run (%s %s)", transport_status_name(r.status), r.errmsg);
	transport_result_free(&r);
}

static void t_hostkey(void)
{
	const char *root = env("AIRLOCK_RIG_ROOT");
	char *empty = xasprintf("%s/client/kh-empty", root);
	char *other = xasprintf("%s/client/kh-other", root);
	char *cmd;
	FILE *f = fopen(empty, "w");
	fclose(f);
	cmd = xasprintf(
	    "rm -f %s/client/other && ssh-keygen -q -t ed25519 -N '' -f %s/client/other "
	    "&& printf '[127.0.0.1]:%s %%s\\n' \"$(cut -d' ' -f1,2 %s/client/other.pub)\" "
	    "> %s",
	    root, root, env("AIRLOCK_RIG_SSH_PORT"), root, other);
	CHECK(system(cmd) == 0, "made a known_hosts with another key for the node");
	free(cmd);
	hostkey_case(env("AIRLOCK_RIG_KNOWN_HOSTS"), NULL, NULL);
	hostkey_case(NULL, env("AIRLOCK_RIG_HOSTKEY_SHA256"), NULL);
	hostkey_case(other, NULL, "HOST KEY CHANGED");
	hostkey_case(empty, NULL, "UNKNOWN HOST KEY");
	hostkey_case(env("AIRLOCK_RIG_KNOWN_HOSTS"),
	             "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "HOST KEY MISMATCH");
	free(empty);
	free(other);
}

/* After `rigctl node rekey` (the suite re-reads rig.env): the node really has a
 * new key; the rig's known_hosts still lists the old one. */
static void t_rekeyed(void)
{
	hostkey_case(env("AIRLOCK_RIG_KNOWN_HOSTS"), NULL, "HOST KEY CHANGED");
	hostkey_case(NULL, env("AIRLOCK_RIG_HOSTKEY_SHA256"), NULL);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} all[] = {
	    {"basic", t_basic},
	    {"quoting", t_quoting},
	    {"quoting_jailed", t_quoting_jailed},
	    {"jail", t_jail},
	    {"jail_userns", t_jail_userns},
	    {"jail_promise", t_jail_promise},
	    {"big_output", t_big_output},
	    {"vm_timeout", t_vm_timeout},
	    {"timeout_cancel", t_timeout_cancel},
	    {"agents", t_agents_and_probes},
	    {"concurrent", t_concurrent},
	    {"idle", t_idle},
	    {"sshd_killed", t_sshd_killed},
	    {"shell", t_shell},
	    {"noshell", t_noshell},
	    {"hostkey", t_hostkey},
	    {"rekeyed", t_rekeyed}, /* only when named */
	};

	/* Every line reaches the log as it is printed, also when a check kills
	 * the program; and a write to a child that is gone fails as a write,
	 * instead of killing the test silently with SIGPIPE. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	log_set_level(LOG_WARN);
	node.name = env("AIRLOCK_RIG_NODE");
	node.address = env("AIRLOCK_RIG_SSH_HOST");
	node.port = atoi(env("AIRLOCK_RIG_SSH_PORT"));
	node.user = env("AIRLOCK_RIG_SSH_USER");
	{
		FILE *f = fopen("build/bin/airlock-jail", "rb");
		static char helper[1 << 20];
		size_t n = f ? fread(helper, 1, sizeof(helper), f) : 0;
		if (f)
			fclose(f);
		if (n == 0) {
			fprintf(stderr, "transport_test: build/bin/airlock-jail missing (make)\n");
			return 2;
		}
		sha256_hex(helper, n, helper_sha);
	}
	T = new_transport(env("AIRLOCK_RIG_KNOWN_HOSTS"), 0);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		bool want = argc < 2 && all[i].fn != t_rekeyed;
		for (int a = 1; a < argc; a++)
			want |= strcmp(argv[a], all[i].name) == 0;
		if (!want)
			continue;
		printf("# %s\n", all[i].name);
		all[i].fn();
	}
	transport_free(T);
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
