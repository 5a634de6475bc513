/* unwrap.c -- programs that run other programs: wrappers with their option
 * specs (sudo, env, nice, timeout, xargs ...), shells and interpreters given
 * code, ssh, guest exec (pct exec, qm guest exec, lxc-attach, docker exec),
 * find -exec, su -c, watch.  Each hands the program it runs back to the walk
 * (walk_argv, walk_text). */
#include "classifier/unwrap.h"

#include "classifier/arena.h"
#include "classifier/judge.h"
#include "classifier/nameidx.h"
#include "classifier/netclient.h"
#include "classifier/secrets.h"
#include "classifier/walk.h"

#include <pthread.h>
#include <string.h>

struct unwrap_spec {
	const char *name;
	const char *short_val;       /* short options that take a value */
	const char *flags;           /* short options without a value; others are unexpected */
	const char *const *long_val; /* long options that take the next word */
	const char *nocmd;           /* short options after which no command follows */
	int npos;                    /* operands before the command */
	bool assignments;            /* NAME=value words before the command */
	bool extra;                  /* the command gets more, unseen arguments (xargs) */
	/* the program sees the machine as it would alone (not chroot, nsenter,
	 * a transient unit, a proxy): it may keep the jail's root tier or
	 * network view */
	bool plain;
};

static const char *const lv_sudo[] = {"--user",       "--group",           "--host",   "--prompt",
                                      "--close-from", "--chdir",           "--role",   "--type",
                                      "--other-user", "--command-timeout", "--chroot", NULL};
static const char *const lv_env[] = {"--unset", "--chdir", "--split-string", NULL};
static const char *const lv_nice[] = {"--adjustment", NULL};
static const char *const lv_ionice[] = {"--class", "--classdata", NULL};
static const char *const lv_timeout[] = {"--signal", "--kill-after", NULL};
static const char *const lv_stdbuf[] = {"--input", "--output", "--error", NULL};
static const char *const lv_time[] = {"--format", "--output", NULL};
static const char *const lv_xargs[] = {"--arg-file",  "--delimiter", "--max-args",
                                       "--max-procs", "--max-chars", "--process-slot-var",
                                       NULL};
static const char *const lv_sysrun[] = {"--unit",
                                        "--property",
                                        "--setenv",
                                        "--machine",
                                        "--host",
                                        "--description",
                                        "--slice",
                                        "--uid",
                                        "--gid",
                                        "--nice",
                                        "--working-directory",
                                        "--on-active",
                                        "--on-boot",
                                        "--on-startup",
                                        "--on-unit-active",
                                        "--on-unit-inactive",
                                        "--on-calendar",
                                        "--timer-property",
                                        "--path-property",
                                        "--socket-property",
                                        "--service-type",
                                        "--remain-after-exit",
                                        NULL};
static const char *const lv_none[] = {NULL};

static const struct unwrap_spec wrappers[] = {
    {"sudo", "ugpChDrtUTRh", "AbBEeHiKklnNPSsVv", lv_sudo, "lvKV", 0, true, false, true},
    {"doas", "uC", "nsL", lv_none, "L", 0, false, false, true},
    {"env", "uCS", "i0v", lv_env, "", 0, true, false, true},
    {"nice", "n", "0123456789", lv_nice, "", 0, false, false, true},
    {"ionice", "cn", "t", lv_ionice, "pPu", 0, false, false, true},
    {"nohup", "", "", lv_none, "", 0, false, false, true},
    {"timeout", "sk", "v", lv_timeout, "", 1, false, false, true},
    {"stdbuf", "ioe", "", lv_stdbuf, "", 0, false, false, true},
    {"chrt", "TPD", "abdefiomrvR", lv_none, "p", 1, false, false, true},
    {"taskset", "", "acpV", lv_none, "p", 1, false, false, true},
    {"time", "fo", "pvaq", lv_time, "", 0, false, false, true},
    {"command", "", "pvV", lv_none, "vV", 0, false, false, true},
    {"builtin", "", "", lv_none, "", 0, false, false, true},
    {"exec", "a", "cl", lv_none, "", 0, false, false, true},
    {"setsid", "", "cfw", lv_none, "", 0, false, false, true},
    {"unbuffer", "", "p", lv_none, "", 0, false, false, true},
    {"chroot", "", "", lv_none, "", 1, false, false, false},
    {"nsenter", "tSG", "mutipnUCTarwFZ", lv_none, "", 0, false, false, false},
    {"systemd-run", "upEMH", "qrtPGdS", lv_sysrun, "", 0, false, false, false},
    {"fakeroot", "isbl", "uh", lv_none, "", 0, false, false, false},
    {"numactl", "CNmpil", "HsaV", lv_none, "", 0, false, false, true},
    {"busybox", "", "", lv_none, "", 0, false, false, true},
    {"toybox", "", "", lv_none, "", 0, false, false, true},
    {"torsocks", "", "", lv_none, "", 0, false, false, false},
    {"proxychains", "f", "q", lv_none, "", 0, false, false, false},
    {"proxychains4", "f", "q", lv_none, "", 0, false, false, false},
    {"dbus-run-session", "", "", lv_none, "", 0, false, false, false},
    {"catchsegv", "", "", lv_none, "", 0, false, false, true},
    {"xargs", "adEILnPs", "0rtpxoeil", lv_xargs, "", 0, false, true, true},
};

static struct nameidx wrapper_idx;
static pthread_once_t wrapper_once = PTHREAD_ONCE_INIT;

static void build_wrapper_idx(void)
{
	nameidx_build(&wrapper_idx, wrappers, sizeof(wrappers) / sizeof(wrappers[0]),
	              sizeof(wrappers[0]));
}

const struct unwrap_spec *unwrap_find(const char *name)
{
	pthread_once(&wrapper_once, build_wrapper_idx);
	return nameidx_find(&wrapper_idx, wrappers, sizeof(wrappers[0]), name);
}

static bool long_takes_value(const char *const *lv, const struct sh_word *w)
{
	for (size_t i = 0; lv[i] != NULL; i++)
		if (judge_weq(w, lv[i]))
			return true;
	return false;
}

/* Looks through wrapper wr; returns true when it handled the command. */
bool unwrap_wrapper(struct judge *j, struct judge_seg *s, const struct unwrap_spec *wr,
                    const struct sh_word *w, size_t n, enum target_type t,
                    const struct judge_stdin *in, bool extra)
{
	size_t i = 1;
	bool nocmd = false, shell = false, edit = false, odd = false;
	const struct sh_word *split = NULL;

	while (i < n) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a)) {
			judge_reason(
			    j, s, "wrapper-computed",
			    judge_fmt(j, "%s with options known only at run time", wr->name),
			    j->p->unknown_program, t);
			walk_scan_rest(j, s, w + i, n - i, t);
			return true;
		}
		if (judge_weq(a, "--")) {
			i++;
			break;
		}
		if (a->len < 2 || a->text[0] != '-')
			break;
		if (strcmp(wr->name, "systemd-run") == 0 &&
		    (judge_weq(a, "-p") ||
		     (a->len > 2 && memcmp(a->text, "-p", 2) == 0 && a->text[1] != '-') ||
		     (a->len >= 10 && memcmp(a->text, "--property", 10) == 0) ||
		     judge_weq(a, "-E") || (a->len >= 8 && memcmp(a->text, "--setenv", 8) == 0)))
			judge_reason(
			    j, s, "wrapper-property",
			    judge_fmt(j,
			              "systemd-run %.*s sets unit properties or environment "
			              "(ExecStartPre=, LD_PRELOAD...): cannot prove read-only",
			              (int)(a->len > 40 ? 40 : a->len), a->text),
			    j->p->unknown_program, t);
		if (a->text[1] == '-') {
			if (memchr(a->text, '=', a->len) == NULL &&
			    long_takes_value(wr->long_val, a)) {
				if (judge_weq(a, "--split-string"))
					split = i + 1 < n ? &w[i + 1] : NULL;
				i++;
			} else if (a->len > 15 && memcmp(a->text, "--split-string=", 15) == 0) {
				split = a;
			}
			if (judge_weq(a, "--shell") || judge_weq(a, "--login"))
				shell = true;
			if (judge_weq(a, "--edit"))
				edit = true;
			if (a->len >= 7 && memcmp(a->text, "--chdir", 7) == 0)
				j->cwd_unknown = true; /* relative paths now point elsewhere */
			i++;
			continue;
		}
		for (size_t k = 1; k < a->len; k++) {
			char c = a->text[k];

			if (strchr(wr->nocmd, c) != NULL)
				nocmd = true;
			if (strcmp(wr->name, "sudo") == 0 || strcmp(wr->name, "doas") == 0) {
				if (c == 's' || c == 'i')
					shell = true;
				if (c == 'e' && strcmp(wr->name, "sudo") == 0)
					edit = true;
			}
			if (c != '\0' && strchr(wr->short_val, c) == NULL &&
			    strchr(wr->flags, c) == NULL)
				odd = true; /* an option this spec does not know: it may take a
				               value */
			if (c != '\0' && strchr(wr->short_val, c) != NULL) {
				if (c == 'S' && strcmp(wr->name, "env") == 0)
					split = k + 1 < a->len ? a : (i + 1 < n ? &w[i + 1] : NULL);
				if ((c == 'C' && strcmp(wr->name, "env") == 0) ||
				    (c == 'D' && strcmp(wr->name, "sudo") == 0))
					j->cwd_unknown = true; /* env -C DIR, sudo -D DIR */
				if (k + 1 == a->len)
					i++;
				break;
			}
		}
		i++;
	}
	if (i > n)
		i = n; /* a value option at the end had no value */
	/* the wrapper's own options may read a file: xargs -a /etc/shadow */
	secrets_args(j, s, wr->name, &(struct judge_argv){w + 1, i - 1, false}, NULL, t);
	if (odd) { /* the command may start later than it seems: its words raise too */
		judge_reason(j, s, "unproven",
		             judge_fmt(j,
		                       "an option of %s that its spec does not know; cannot prove "
		                       "read-only",
		                       wr->name),
		             j->p->unknown_program, t);
		walk_scan_rest(j, s, w + i, n - i, t);
	}
	if (split != NULL) {
		walk_text(j, s, split->text, split->len, t, in, "env -S");
		return true;
	}
	if (edit) {
		struct judge_argv av = {w + i, n - i, false};

		judge_command(j, s, "sudoedit", &av, t);
		return true;
	}
	if (nocmd)
		return false;
	if (wr->assignments) {
		while (i < n && (w[i].flags & SHW_ASSIGN)) {
			walk_env_assignment(j, s, &w[i], t);
			i++;
		}
	}
	for (int k = 0; k < wr->npos && i < n; k++, i++) {
		if (w[i].flags & SHW_SPLIT) {
			judge_reason(
			    j, s, "wrapper-computed",
			    judge_fmt(j, "%s with operands known only at run time", wr->name),
			    j->p->unknown_program, t);
			walk_scan_rest(j, s, w + i, n - i, t);
			return true;
		}
	}
	if (i >= n) {
		if (shell) {
			walk_stdin_script(j, s, in, t, judge_fmt(j, "%s -s", wr->name));
			return true;
		}
		if (wr->extra) {
			static const struct sh_word echo = {
			    .text = "echo", .len = 4, .prefix = 4, .raw = "echo", .raw_len = 4};

			walk_argv(j, s, &echo, 1, t, in, true);
			return true;
		}
		return false; /* the wrapper alone: the policy says what it does */
	}
	if (wr->extra && in->kind == JUDGE_IN_TEXT && i < n) {
		/* echo reboot | xargs sudo: the words xargs reads are visible */
		size_t cl;
		bool partial;
		const char *cmd = walk_join_words(j, w + i, n - i, &cl, &partial);
		char *full = arena_alloc(j->a, cl + in->len + 2);

		if (full != NULL) {
			memcpy(full, cmd, cl);
			full[cl] = ' ';
			memcpy(full + cl + 1, in->text, in->len);
			walk_text(j, s, full, cl + 1 + in->len, t,
			          &(struct judge_stdin){.kind = JUDGE_IN_UNKNOWN},
			          "xargs with its input");
		}
	}
	if (++j->unwrap > JUDGE_MAX_UNWRAP) {
		judge_reason(j, s, "nesting-too-deep", "too many wrappers", j->p->unknown_program,
		             t);
		walk_scan_rest(j, s, w + i, n - i, t);
		return true;
	}
	if (!wr->plain)
		j->odd_wrap++;
	{
		/* echo /etc/hosts | xargs cat: the words xargs adds were judged with
		 * the command above; here they only shape it */
		bool saved = j->extra_seen;

		if (wr->extra && in->kind == JUDGE_IN_TEXT && !in->partial)
			j->extra_seen = true;
		walk_argv(j, s, w + i, n - i, t, in, extra || wr->extra);
		j->extra_seen = saved;
	}
	if (!wr->plain)
		j->odd_wrap--;
	j->unwrap--;
	return true;
}

/* sh -c CODE, sh SCRIPT, sh < stdin */
void unwrap_shell(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t, const struct judge_stdin *in)
{
	size_t i = 1;
	bool has_c = false, from_stdin = false, version = false;

	while (i < n) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a))
			break; /* the code or script operand, computed */
		if (judge_weq(a, "--") || judge_weq(a, "-")) {
			from_stdin = judge_weq(a, "-");
			i++;
			break;
		}
		if (a->len < 2 || (a->text[0] != '-' && a->text[0] != '+'))
			break;
		if (a->text[1] == '-') {
			if (judge_weq(a, "--rcfile") || judge_weq(a, "--init-file"))
				i++;
			if (judge_weq(a, "--version") || judge_weq(a, "--help"))
				version = true;
			i++;
			continue;
		}
		for (size_t k = 1; k < a->len; k++) {
			if (a->text[k] == 'c')
				has_c = true;
			else if (a->text[k] == 's')
				from_stdin = true;
			else if (a->text[k] == 'o' || a->text[k] == 'O')
				i++;
		}
		i++;
	}
	if (version && i >= n && !has_c) {
		judge_reason(j, s, "shell-version", judge_fmt(j, "%s --version", w->text),
		             RISK_READ_ONLY, t);
		return;
	}
	if (has_c) {
		if (i >= n) {
			judge_opaque(j, s, judge_fmt(j, "%s -c without code", w->text), NULL, 0, t);
			return;
		}
		if (!judge_lit(&w[i])) {
			judge_opaque(
			    j, s, judge_fmt(j, "%s -c with code known only at run time", w->text),
			    NULL, 0, t);
			walk_scan_raw(j, s, &w[i], 1, t);
		}
		walk_text(j, s, w[i].text, w[i].len, t, in, judge_fmt(j, "%s -c", w->text));
		if (!judge_lit(&w[i]) || memchr(w[i].text, '$', w[i].len) != NULL)
			walk_scan_rest(j, s, w + i + 1, n - i - 1, t); /* sh -c '"$@"' _ reboot */
		return;
	}
	if (i < n && !from_stdin && walk_written_file(j, &w[i]) != NULL) {
		const struct judge_file *f = walk_written_file(j, &w[i]);

		struct judge_stdin as_in = {JUDGE_IN_TEXT, f->text, f->len, f->partial};

		walk_stdin_script(j, s, &as_in, t, "a script written by this command");
		return;
	}
	if (i < n && !from_stdin && !judge_lit(&w[i])) {
		judge_opaque(j, s, judge_fmt(j, "%s runs a script named at run time", w->text),
		             NULL, 0, t);
		walk_scan_assignments(j, s, t);
		return;
	}
	if (i < n && !from_stdin && !judge_weq(&w[i], "/dev/stdin") &&
	    !judge_weq(&w[i], "/dev/fd/0") && !judge_weq(&w[i], "/proc/self/fd/0")) {
		judge_opaque(j, s,
		             judge_fmt(j, "%s runs the script file %.*s, which cannot be read",
		                       w->text, (int)(w[i].len > 80 ? 80 : w[i].len), w[i].text),
		             NULL, 0, t);
		return;
	}
	walk_stdin_script(j, s, in, t, w->text);
}

/* python3 -c CODE, perl -e CODE, node script.js, ruby < stdin ... */
void unwrap_interpreter(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                        enum target_type t, const struct judge_stdin *in)
{
	static const char *const code_opts[] = {"-c", "-e",      "-E", "-r", "--eval",
	                                        "-p", "--print", "-x", NULL};
	bool only_info = n > 1;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!(judge_weq(a, "--version") || judge_weq(a, "-V") || judge_weq(a, "-v") ||
		      judge_weq(a, "--help") || judge_weq(a, "-h") || judge_weq(a, "-VV")))
			only_info = false;
	}
	if (only_info) {
		judge_reason(j, s, "interpreter-version", judge_fmt(j, "%s --version", w->text),
		             RISK_READ_ONLY, t);
		return;
	}
	if (n == 3 && judge_weq(&w[1], "-m") && judge_weq(&w[2], "json.tool")) {
		judge_reason(j, s, "interpreter-json-tool", "python -m json.tool (formats stdin)",
		             RISK_READ_ONLY, t);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a) || a->len < 2 || a->text[0] != '-')
			continue;
		/* perl -pe CODE, -ne, -lane: a cluster of letters ending in a code
		 * option takes the next word as code (before -p, a prefix, could
		 * take the cluster itself for the code) */
		if (a->len > 2 && a->text[1] != '-' && strchr("ceE", a->text[a->len - 1]) != NULL &&
		    strspn(a->text + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") ==
		        a->len - 1) {
			const struct sh_word *code = i + 1 < n ? &w[i + 1] : a;

			judge_opaque(j, s,
			             judge_fmt(j, "%s %.*s (code in another language)", w->text,
			                       (int)a->len, a->text),
			             code->text, code->len, t);
			return;
		}
		for (size_t k = 0; code_opts[k] != NULL; k++) {
			size_t cl = strlen(code_opts[k]);

			if (a->len >= cl && memcmp(a->text, code_opts[k], cl) == 0) {
				const struct sh_word *code =
				    a->len > cl ? a : (i + 1 < n ? &w[i + 1] : a);

				judge_opaque(j, s,
				             judge_fmt(j, "%s %s (code in another language)",
				                       w->text, code_opts[k]),
				             code->text, code->len, t);
				return;
			}
		}
		/* perl -pie, python -Ic: a cluster ending in a code option */
		if (a->text[1] != '-' && strchr("ceE", a->text[a->len - 1]) != NULL) {
			const struct sh_word *code = i + 1 < n ? &w[i + 1] : a;

			judge_opaque(j, s,
			             judge_fmt(j, "%s %.*s (code in another language)", w->text,
			                       (int)a->len, a->text),
			             code->text, code->len, t);
			return;
		}
	}
	for (size_t i = 1; i < n; i++) {
		const struct judge_file *f = walk_written_file(j, &w[i]);

		if (f != NULL) {
			/* echo 'import os...' > /tmp/x.py; python3 /tmp/x.py */
			judge_opaque(
			    j, s, judge_fmt(j, "%s runs a script written by this command", w->text),
			    f->text, f->len, t);
			return;
		}
		if (!judge_lit(&w[i]) || w[i].len == 0 || w[i].text[0] != '-') {
			judge_opaque(
			    j, s,
			    judge_fmt(j, "%s runs a script or module that cannot be read", w->text),
			    NULL, 0, t);
			return;
		}
	}
	if (in->kind == JUDGE_IN_TEXT) {
		judge_opaque(j, s, judge_fmt(j, "%s reads code from stdin", w->text), in->text,
		             in->len, t);
		return;
	}
	judge_opaque(j, s, judge_fmt(j, "%s reads code that cannot be seen", w->text), NULL, 0, t);
}

/* Options before the first operand; returns the index of the first operand.
 * value_opts: short options taking a value. */
size_t unwrap_skip_options(const struct sh_word *w, size_t n, size_t i, const char *value_opts)
{
	while (i < n) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a) || a->len < 2 || a->text[0] != '-')
			break;
		if (judge_weq(a, "--"))
			return i + 1;
		if (a->text[1] != '-' && strchr(value_opts, a->text[a->len - 1]) != NULL)
			i++;
		i++;
	}
	return i > n ? n : i;
}

/* ssh [options] host [command ...]: the command runs on another machine. */
void unwrap_ssh(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                enum target_type t, const struct judge_stdin *in)
{
	size_t i = unwrap_skip_options(w, n, 1, "BbcDEeFIiJLlmOopQRSWw");
	size_t len;
	bool partial;
	const char *cmd;

	if (i >= n) {
		judge_command(j, s, "ssh", &(struct judge_argv){w + 1, n - 1, false}, t);
		return;
	}
	walk_scan_rest(j, s, w + 1, i - 1, t); /* -o ProxyCommand=... runs here */
	netclient_ssh(j, s, &w[i], t);
	i++; /* the host */
	judge_reason(j, s, "ssh-remote", "ssh runs a command on another machine, outside this gate",
	             RISK_CONFIG_MUTATION, t);
	if (i >= n) {
		walk_stdin_script(j, s, in, TARGET_PROXMOX_HOST, "ssh (remote shell)");
		return;
	}
	cmd = walk_join_words(j, w + i, n - i, &len, &partial);
	if (partial)
		judge_opaque(j, s, "ssh remote command known only at run time", NULL, 0, t);
	walk_text(j, s, cmd, len, TARGET_PROXMOX_HOST, in, "ssh remote command");
}

/* pct exec CTID -- cmd, qm guest exec VMID -- cmd, lxc-attach -n CT -- cmd:
 * the inner command runs in the guest and is judged by the guest's rules. */
bool unwrap_guest_exec(struct judge *j, struct judge_seg *s, const char *name,
                       const struct sh_word *w, size_t n, enum target_type t,
                       const struct judge_stdin *in)
{
	size_t i;
	enum target_type inner;

	if (strcmp(name, "pct") == 0 && n >= 3 && judge_weq(&w[1], "exec")) {
		inner = TARGET_LXC;
		i = 3;
	} else if (strcmp(name, "qm") == 0 && n >= 4 && judge_weq(&w[1], "guest") &&
	           judge_weq(&w[2], "exec")) {
		inner = TARGET_VM;
		i = 4;
	} else if (strcmp(name, "lxc-attach") == 0) {
		inner = TARGET_LXC;
		i = 1;
	} else if (strcmp(name, "ip") == 0 && n >= 5 && judge_weq(&w[1], "netns") &&
	           judge_weq(&w[2], "exec")) {
		walk_argv(j, s, w + 4, n - 4, t, in, false);
		return true;
	} else if ((strcmp(name, "docker") == 0 || strcmp(name, "podman") == 0 ||
	            strcmp(name, "nerdctl") == 0) &&
	           n >= 3 && judge_weq(&w[1], "exec")) {
		i = unwrap_skip_options(w, n, 2, "euw");
		if (i + 1 >= n)
			return false;
		walk_argv(j, s, w + i + 1, n - i - 1, t, in, false);
		return true;
	} else if ((strcmp(name, "kubectl") == 0 || strcmp(name, "lxc") == 0) && n >= 3 &&
	           judge_weq(&w[1], "exec")) {
		inner = t;
		i = 2;
	} else {
		return false;
	}
	{
		size_t first = i;

		while (i < n && !judge_weq(&w[i], "--"))
			i++;
		if (i < n) {
			i++;
		} else if (strcmp(name, "lxc-attach") == 0) {
			walk_stdin_script(j, s, in, inner, "lxc-attach (a shell in the container)");
			return true;
		} else if (strcmp(name, "pct") == 0 || strcmp(name, "qm") == 0) {
			/* pct exec 101 ls, qm guest exec 100 --timeout 5 ls: no "--" */
			i = first;
			while (i < n && judge_lit(&w[i]) && w[i].len > 2 &&
			       memcmp(w[i].text, "--", 2) == 0)
				i += memchr(w[i].text, '=', w[i].len) == NULL ? 2 : 1;
		}
	}
	if (i >= n)
		return false;
	walk_argv(j, s, w + i, n - i, inner, in, false);
	return true;
}

/* find ... -exec cmd {} ; : every -exec/-execdir/-ok/-okdir body runs, with
 * {} a file below find's starting points. */
void unwrap_find_exec(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                      enum target_type t)
{
	size_t d = 1, nd;
	const struct sh_word *saved = j->find_dirs;
	size_t saved_n = j->nfind_dirs;
	bool saved_in = j->in_find_exec;

	/* -H -L -P -D x -O3, then the starting points up to the expression */
	while (d < n && judge_lit(&w[d]) && w[d].len >= 2 && w[d].text[0] == '-' &&
	       (w[d].len == 2 || memcmp(w[d].text, "-O", 2) == 0) &&
	       strchr("HLPDO", w[d].text[1]) != NULL)
		d += judge_weq(&w[d], "-D") ? 2 : 1;
	for (nd = 0; d + nd < n; nd++) {
		const struct sh_word *x = &w[d + nd];

		if (judge_lit(x) && x->len > 0 &&
		    (x->text[0] == '-' || x->text[0] == '(' || x->text[0] == '!' ||
		     (x->len == 1 && x->text[0] == ')')))
			break;
	}
	j->find_dirs = d < n ? &w[d] : NULL;
	j->nfind_dirs = d < n ? nd : 0;
	for (size_t i = 1; i < n; i++) {
		size_t st;

		if (!(judge_weq(&w[i], "-exec") || judge_weq(&w[i], "-execdir") ||
		      judge_weq(&w[i], "-ok") || judge_weq(&w[i], "-okdir")))
			continue;
		st = ++i;
		while (i < n && !judge_weq(&w[i], ";") && !judge_weq(&w[i], "+"))
			i++;
		if (i > st) {
			j->in_find_exec = true;
			j->odd = true; /* a program per file found: no root tier, no network view */
			walk_argv(j, s, w + st, i - st, t,
			          &(struct judge_stdin){.kind = JUDGE_IN_UNKNOWN}, false);
			j->in_find_exec = saved_in;
		}
	}
	j->find_dirs = saved;
	j->nfind_dirs = saved_n;
}

/* su [opts] [user] [-c cmd]; runuser -u user -- cmd / runuser -c cmd */
void unwrap_su(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t, const struct judge_stdin *in)
{
	bool dashdash = false;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const struct sh_word *code = NULL;

		if (judge_weq(a, "--")) {
			dashdash = true;
			if (judge_weq(&w[0], "runuser") && i + 1 < n) {
				walk_argv(j, s, w + i + 1, n - i - 1, t, in, false);
				return;
			}
			continue;
		}
		if (!judge_lit(a)) {
			judge_opaque(j, s, "su with arguments known only at run time", NULL, 0, t);
			return;
		}
		if (judge_weq(a, "-c") || judge_weq(a, "--command") ||
		    judge_weq(a, "--session-command"))
			code = i + 1 < n ? &w[i + 1] : NULL;
		else if (a->len > 10 && memcmp(a->text, "--command=", 10) == 0)
			code = a;
		else if (!dashdash && a->len > 2 && a->text[0] == '-' && a->text[1] != '-' &&
		         a->text[a->len - 1] == 'c')
			code = i + 1 < n ? &w[i + 1] : NULL;
		if (code != NULL) {
			const char *txt = code->text;
			size_t len = code->len;

			if (code == a) {
				txt += 10;
				len -= 10;
			}
			if (!judge_lit(code)) {
				judge_opaque(j, s, "su -c with code known only at run time", NULL,
				             0, t);
				walk_scan_raw(j, s, code, 1, t);
			}
			walk_text(j, s, txt, len, t, in, "su -c");
			return;
		}
	}
	walk_stdin_script(j, s, in, t, w[0].text);
}

/* watch [opts] cmd ...: run through sh -c (or directly with -x). */
void unwrap_watch(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t, const struct judge_stdin *in)
{
	size_t i = 1, len;
	bool direct = false, partial;
	const char *cmd;

	while (i < n && judge_lit(&w[i]) && w[i].len > 1 && w[i].text[0] == '-') {
		if (judge_weq(&w[i], "--")) {
			i++;
			break;
		}
		if (judge_weq(&w[i], "-x") || judge_weq(&w[i], "--exec"))
			direct = true;
		if (judge_weq(&w[i], "-n") || judge_weq(&w[i], "--interval") ||
		    judge_weq(&w[i], "-q") || judge_weq(&w[i], "--equexit"))
			i++;
		i++;
	}
	if (i >= n) {
		judge_command(j, s, "watch", &(struct judge_argv){w + 1, n - 1, false}, t);
		return;
	}
	if (direct) {
		walk_argv(j, s, w + i, n - i, t, in, false);
		return;
	}
	cmd = walk_join_words(j, w + i, n - i, &len, &partial);
	if (partial)
		judge_opaque(j, s, "watch command known only at run time", NULL, 0, t);
	walk_text(j, s, cmd, len, t, in, "watch");
}
