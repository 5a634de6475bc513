/* transport.c -- commands over per-node SSH sessions (see transport.h):
 * names, results, one remote call, host and container commands, and the
 * entry point.  The pool, the VM state machine and the probes have files of
 * their own (transport_int.h lists them). */
#include "transport/transport.h"

#include "lib/buf.h"
#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/secretscan.h"
#include "lib/shellquote.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"
#include "transport/shell.h"
#include "transport/transport_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Copies src into dst (size n), cut to fit; always NUL-terminated. */
void transport_set_text(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* ---- names ------------------------------------------------------------------ */

const char *transport_status_name(enum transport_status s)
{
	static const char *names[] = {"exited",    "signaled", "timed_out",
	                              "cancelled", "failed",   "unknown"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *transport_error_name(enum transport_error e)
{
	static const char *names[] = {"none", "connect",  "hostkey", "auth", "ssh",  "lost",
	                              "pve",  "protocol", "invalid", "jail", "shell"};
	return (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e] : "?";
}

const char *transport_probe_state_name(enum transport_probe_state s)
{
	static const char *names[] = {
	    "ok",         "not_running",   "not_configured", "exec_disabled",
	    "vm_stopped", "no_such_guest", "unreachable",    "error"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *transport_agent_attr(enum transport_probe_state s)
{
	switch (s) {
	case TRANSPORT_PROBE_OK:
		return "running";
	case TRANSPORT_PROBE_NOT_RUNNING:
	case TRANSPORT_PROBE_VM_STOPPED:
		return "not_running";
	case TRANSPORT_PROBE_NOT_CONFIGURED:
		return "not_configured";
	case TRANSPORT_PROBE_EXEC_DISABLED:
		return "exec_disabled";
	default:
		return NULL;
	}
}

/* ---- results -------------------------------------------------------------- */

static void result_init(struct transport_result *r)
{
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	r->started_at_ms = deadline_wall_ms();
}

void transport_result_free(struct transport_result *r)
{
	if (r == NULL)
		return;
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
	r->out_len = r->err_len = 0;
}

void transport_result_buf(struct buf *b, char **p, size_t *len)
{
	*len = b->len;
	*p = buf_steal(b);
}

int transport_fail(struct transport_result *r, enum transport_status st, enum transport_error e,
                   const char *msg)
{
	r->status = st;
	r->error = e;
	transport_set_text(r->errmsg, sizeof(r->errmsg), msg);
	return -1;
}

enum transport_error transport_map_error(enum sshop_error e)
{
	switch (e) {
	case SSHOP_ERR_CONNECT:
		return TRANSPORT_ERR_CONNECT;
	case SSHOP_ERR_HOSTKEY:
		return TRANSPORT_ERR_HOSTKEY;
	case SSHOP_ERR_AUTH:
		return TRANSPORT_ERR_AUTH;
	case SSHOP_ERR_LOST:
		return TRANSPORT_ERR_LOST;
	case SSHOP_ERR_SSH:
		return TRANSPORT_ERR_SSH;
	case SSHOP_ERR_NONE:
		break;
	}
	return TRANSPORT_ERR_NONE;
}

/* stderr of qm/pct as one line: trimmed, newlines as "; ". */
void transport_stderr_line(const struct buf *b, char *out, size_t outlen)
{
	size_t j = 0;
	const char *s = buf_str(b);
	size_t n = b->len;

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n && j + 3 < outlen; i++) {
		if (s[i] == '\n') {
			out[j++] = ';';
			out[j++] = ' ';
		} else {
			out[j++] = s[i];
		}
	}
	out[j] = '\0';
	if (j == 0)
		snprintf(out, outlen, "(no message)");
}

/* ---- one remote call ---------------------------------------------------------- */

void transport_op_setup(struct sshop *op, const char *cmdline, int64_t deadline, size_t cap)
{
	memset(op, 0, sizeof(*op));
	op->cmdline = cmdline;
	op->deadline_ms = deadline;
	op->out_cap = cap;
	op->err_cap = STDERR_CAP;
}

void transport_run1(struct sshnode *n, struct sshop *op)
{
	sshnode_run(n, &op, 1);
}

static void qm_sink(void *ctx, const char *data, size_t len)
{
	qmjson_feed(ctx, data, len);
}

/* Runs a short qm call whose stdout is qm JSON; *p is the parser (caller frees). */
void transport_run_qm(struct sshnode *n, struct sshop *op, const char *cmdline, int64_t deadline,
                      size_t cap, struct qmjson **p)
{
	*p = qmjson_new(cap);
	transport_op_setup(op, cmdline, deadline, 0);
	op->out_sink = qm_sink;
	op->sink_ctx = *p;
	transport_run1(n, op);
}

/* Does qm's stderr prove the guest command was never started? */
bool transport_qm_never_started(const char *msg, int vmid)
{
	char vm[64];

	snprintf(vm, sizeof(vm), "VM %d is not running", vmid);
	return strncmp(msg, "400 ", 4) == 0 || strncmp(msg, "Unknown option", 14) == 0 ||
	       strncmp(msg, "Configuration file '", 20) == 0 ||
	       strncmp(msg, "No QEMU guest agent configured", 30) == 0 ||
	       strncmp(msg, vm, strlen(vm)) == 0 ||
	       strncmp(msg, "command or input-data", 21) == 0 ||
	       strstr(msg, "Failed to execute child process") != NULL ||
	       strstr(msg, "has been disabled") != NULL || strstr(msg, "not allowed") != NULL;
}

/* An operation that did not run to an exit: fill r; -1 for FAILED/UNKNOWN. */
int transport_op_not_exited(const struct sshop *op, struct transport_result *r)
{
	switch (op->outcome) {
	case SSHOP_TIMED_OUT:
	case SSHOP_CANCELLED:
		r->status =
		    op->outcome == SSHOP_TIMED_OUT ? TRANSPORT_TIMED_OUT : TRANSPORT_CANCELLED;
		if (op->errmsg[0]) /* expired before it was sent: nothing ran */
			transport_set_text(r->errmsg, sizeof(r->errmsg), op->errmsg);
		else
			r->signal = SIGTERM; /* sent to the session's process group */
		return 0;
	case SSHOP_LOST:
		return transport_fail(r, TRANSPORT_UNKNOWN, transport_map_error(op->error),
		                      op->errmsg);
	case SSHOP_FAILED:
	default:
		return transport_fail(r, TRANSPORT_FAILED, transport_map_error(op->error),
		                      op->errmsg);
	}
}

/* ---- host and container ------------------------------------------------------ */

/* pct's own refusals exit 255 with one of these; anything else is the command's. */
static bool pct_refusal(const struct buf *err, int ctid)
{
	char want[64];
	const char *s = buf_str(err);

	snprintf(want, sizeof(want), "container '%d' not running!", ctid);
	return strncmp(s, want, strlen(want)) == 0 || strncmp(s, "Configuration file '", 20) == 0 ||
	       strncmp(s, "400 ", 4) == 0 || strncmp(s, "Unknown option", 14) == 0 ||
	       strncmp(s, "missing command", 15) == 0;
}

/* For airlock's own side-door check (print_connection): the node's login
 * shell prints "S <client address> <client port> <server address> <server
 * port>" -- this session's $SSH_CONNECTION, which the command's fixed
 * environment does not carry -- before the command starts. */
#define CONNECTION_LINE "echo \"S $SSH_CONNECTION\"; "

/* A CT command's first stdout line: `pct status` said the container runs,
 * and only then was pct exec started, on the same channel. */
#define CT_RUNNING "status: running\n"

/* Did the status check in front of pct exec fail (so pct exec was never
 * started)?  Its answer comes first on stdout, before anything the command
 * prints, so the command cannot forge it.  When it passed, its line is
 * removed from the output. */
static bool ct_status_refused(struct sshop *op, int ctid, char *why, size_t whylen)
{
	size_t m = strlen(CT_RUNNING);
	char line[300];

	if (op->out.len >= m && memcmp(op->out.data, CT_RUNNING, m) == 0) {
		memmove(op->out.data, op->out.data + m, op->out.len - m + 1);
		op->out.len -= m;
		return false;
	}
	transport_stderr_line(&op->err, line, sizeof(line));
	if (op->out.len > 0 && strcmp(line, "(no message)") == 0)
		transport_stderr_line(&op->out, line, sizeof(line)); /* "status: stopped" */
	snprintf(why, whylen, "container '%d' not running (%s); pct exec was not started", ctid,
	         line);
	return true;
}

/* Host and CT commands carry AIRLOCK_EXEC_ID=<tag> in their environment
 * from the first process on (the node's `env`, `pct` and lxc-attach, then
 * the one shell's fixed environment holds it), inherited by everything they
 * start; on the deadline a second channel sends SIGTERM to every process
 * carrying it.  With print_connection (host only), the node's login shell
 * first prints CONNECTION_LINE's answer on stdout.
 * A CT command's channel first asks `pct status` and starts pct exec only
 * when the container runs: the check right before executing rides on the
 * command's own channel, as the VM's agent ping does. */
static int exec_plain(struct transport *t, struct sshnode *n, const char *prog, const char *tag,
                      bool ct, int ctid, int64_t deadline, size_t cap, const atomic_bool *cancel,
                      bool print_connection, struct transport_result *r, const char *in,
                      size_t in_len)
{
	char *cmdline = ct ? xasprintf("s=$(pct status %d) || exit 255; echo \"$s\"; "
	                               "[ \"$s\" = 'status: running' ] || exit 255; " SHELL_TAG_NAME
	                               "=%s pct exec %d -- %s",
	                               ctid, tag, ctid, prog)
	                   : xasprintf("%s" SHELL_TAG_NAME "=%s %s",
	                               print_connection ? CONNECTION_LINE : "", tag, prog);
	char why[400], ktag[SHELL_TAG_MAX];
	char *script =
	    xasprintf("for p in /proc/[0-9]*; do grep -qsxzF " SHELL_TAG_NAME "=%s "
	              "\"$p/environ\" && kill -TERM \"${p#/proc/}\"; done 2>/dev/null; true",
	              tag);
	struct buf kill = BUF_INIT;
	struct sshop op;
	int rc;

	/* The kill is airlock's own command on the node: the one shell too,
	 * with a tag of its own (its environment must not hold the one it
	 * looks for). */
	transport_new_tag(t, ktag);
	shell_line(&kill, ktag, script);

	/* The status line does not count against the command's cap. */
	transport_op_setup(&op, cmdline, deadline, ct ? cap + strlen(CT_RUNNING) : cap);
	op.err_cap = cap;
	op.cancel = cancel;
	op.kill_cmdline = buf_str(&kill);
	op.in = in;
	op.in_len = in_len;
	transport_run1(n, &op);
	if (op.outcome == SSHOP_EXITED && ct && ct_status_refused(&op, ctid, why, sizeof(why))) {
		/* Nothing ran: no output is the command's. */
		rc = transport_fail(r, TRANSPORT_FAILED, TRANSPORT_ERR_PVE, why);
		buf_free(&op.out);
		buf_free(&op.err);
	} else if (op.outcome != SSHOP_EXITED) {
		if (ct && op.outcome != SSHOP_FAILED)
			ct_status_refused(&op, ctid, why, sizeof(why)); /* strip the status line */
		rc = transport_op_not_exited(&op, r);
	} else if (ct && op.exit_status == 255 && pct_refusal(&op.err, ctid)) {
		char line[400];
		transport_stderr_line(&op.err, line, sizeof(line));
		rc = transport_fail(r, TRANSPORT_FAILED, TRANSPORT_ERR_PVE, line);
	} else if (op.exit_signal != 0) {
		r->status = TRANSPORT_SIGNALED;
		r->signal = op.exit_signal > 0 ? op.exit_signal : 0;
		rc = 0;
	} else {
		r->status = TRANSPORT_EXITED;
		r->exit_code = op.exit_status;
		rc = 0;
	}
	r->out_truncated = op.out.truncated;
	r->err_truncated = op.err.truncated;
	transport_result_buf(&op.out, &r->out, &r->out_len);
	transport_result_buf(&op.err, &r->err, &r->err_len);
	sshop_clear(&op);
	free(cmdline);
	free(script);
	buf_free(&kill);
	return rc;
}

/* ---- the entry point ------------------------------------------------------------ */

/* A jailed command's outcome: the jail's ready line is removed from stderr
 * (its facts kept); without it the command never started, whatever the
 * shell's status says.  *missing: the helper is not on the target. */
static int jail_result(enum transport_jail j, struct transport_result *r, int rc, bool *missing)
{
	char why[400];
	enum jail_report rep;

	*missing = false;
	/* A guest agent that cannot start /bin/sh (qm's "Failed to execute
	 * child process") is a guest without the jail's tools. */
	if (r->status == TRANSPORT_FAILED && r->error == TRANSPORT_ERR_PVE &&
	    strstr(r->errmsg, "Failed to execute child process")) {
		r->error = TRANSPORT_ERR_JAIL;
		return rc;
	}
	if (r->err == NULL)
		return rc;
	rep = jail_report(j, r->err, &r->err_len, why, sizeof(why), r->jail_facts,
	                  sizeof(r->jail_facts));
	if (rep == JAIL_REPORT_READY)
		return rc;
	if (r->status != TRANSPORT_EXITED && r->status != TRANSPORT_SIGNALED)
		return rc; /* timed out, cancelled, failed, unknown: as the transport said */
	*missing =
	    rep == JAIL_REPORT_MISSING && r->status == TRANSPORT_EXITED && r->exit_code == 125;
	r->exit_code = -1;
	r->signal = 0;
	return transport_fail(r, TRANSPORT_FAILED, TRANSPORT_ERR_JAIL, why);
}

/* Copies the jail helper to the target (a root-only folder, then checked by
 * its SHA-256 there): over the pooled session from stdin on a host and in a
 * CT (pct exec), through the guest agent in a VM.  0, or -1 with why. */
static int jail_install(struct transport *t, struct sshnode *n, enum target_type type, int vmid,
                        int64_t deadline, char *why, size_t whylen)
{
	char *script = jail_install_script(t->jail_sha, t->arch);
	struct transport_result r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.exit_code = -1;
	if (type == TARGET_VM) {
		struct vmctx c = {t, n, vmid, deadline, 4096, NULL, &r};
		rc = transport_vm_install(&c, script, t->jail_bytes, t->jail_len, why, whylen);
	} else {
		struct buf prog = BUF_INIT;
		char tag[SHELL_TAG_MAX];
		transport_new_tag(t, tag);
		shell_line(&prog, tag, script);
		rc = exec_plain(t, n, buf_str(&prog), tag, type == TARGET_LXC, vmid, deadline, 4096,
		                NULL, false, &r, t->jail_bytes, t->jail_len);
		if (rc == 0 && (r.status != TRANSPORT_EXITED || r.exit_code != 0)) {
			char fac[8];
			size_t len = r.err_len;
			if (r.err == NULL ||
			    jail_report(TRANSPORT_JAIL_USER, r.err, &len, why, whylen, fac,
			                sizeof(fac)) != JAIL_REPORT_FAILED ||
			    strncmp(why, "the jail ended", 14) == 0)
				snprintf(why, whylen,
				         "installing the jail helper failed (exit %d): %.200s",
				         r.exit_code, r.err && r.err[0] ? r.err : "no message");
			rc = -1;
		} else if (rc != 0) {
			snprintf(why, whylen, "installing the jail helper failed: %.300s",
			         r.errmsg);
		}
		buf_free(&prog);
	}
	log_msg(rc == 0 ? LOG_INFO : LOG_WARN, "evt=transport.jail_install target=%s vmid=%d ok=%d",
	        target_type_name(type), vmid, rc == 0);
	transport_result_free(&r);
	free(script);
	return rc;
}

/* Whether the helper was found (or installed) on this target already. */
static bool jail_seen(struct transport *t, const char *key, bool add)
{
	bool found = false;

	pthread_mutex_lock(&t->mu);
	for (size_t i = 0; i < t->njail_seen && !found; i++)
		found = strcmp(t->jail_seen[i], key) == 0;
	if (!found && add) {
		if (t->njail_seen == t->jail_seen_cap) {
			t->jail_seen_cap = t->jail_seen_cap ? 2 * t->jail_seen_cap : 16;
			t->jail_seen = xrealloc(t->jail_seen, t->jail_seen_cap * sizeof(char *));
		}
		t->jail_seen[t->njail_seen++] = xstrdup(key);
	}
	pthread_mutex_unlock(&t->mu);
	return found;
}

/* Before the first jailed command on a target: is the helper there, and
 * this one?  Asked on a line of its own that carries no command (so a
 * command is sent once, with its jail), and installed when it is not.
 * Later, a helper that changed is found by the check on the command's own
 * line (installed, then tried once more).  0, or -1 with why. */
static int jail_ensure(struct transport *t, struct sshnode *n, const struct transport_node *node,
                       enum target_type type, int vmid, int64_t deadline, char *why, size_t whylen)
{
	char key[300], *check, tag[SHELL_TAG_MAX];
	struct buf prog = BUF_INIT;
	struct transport_result r;
	bool present;

	snprintf(key, sizeof(key), "%s/%d/%d", node->name, (int)type, vmid);
	if (jail_seen(t, key, false))
		return 0;
	check =
	    xasprintf("s=$(sha256sum " JAIL_HELPER_PATH " 2>/dev/null) && [ \"${s%%%% *}\" = %s ] "
	              "&& echo airlock-jail-present; true",
	              t->jail_sha);
	transport_new_tag(t, tag);
	shell_line(&prog, tag, check);
	memset(&r, 0, sizeof(r));
	r.exit_code = -1;
	if (type == TARGET_VM) {
		struct vmctx c = {t, n, vmid, deadline, 4096, NULL, &r};
		transport_exec_vm(&c, buf_str(&prog));
	} else {
		exec_plain(t, n, buf_str(&prog), tag, type == TARGET_LXC, vmid, deadline, 4096,
		           NULL, false, &r, NULL, 0);
	}
	present = r.status == TRANSPORT_EXITED && r.out && strstr(r.out, "airlock-jail-present");
	transport_result_free(&r);
	buf_free(&prog);
	free(check);
	if (!present && r.status != TRANSPORT_EXITED)
		return 0; /* the target could not be asked: the command's own line will say why */
	if (!present && jail_install(t, n, type, vmid, deadline, why, whylen) != 0)
		return -1;
	jail_seen(t, key, true);
	return 0;
}

/* Valid UTF-8 throughout, by the one strict decoder (lib/utf8.h). */
static bool utf8_valid(const unsigned char *s)
{
	size_t n = strlen((const char *)s);
	unsigned long cp;

	while (n > 0) {
		size_t k = utf8_decode(s, n, &cp);
		if (k == 0)
			return false;
		s += k;
		n -= k;
	}
	return true;
}

size_t transport_quoted_len(const char *command)
{
	size_t quoted = 2;

	for (const char *p = command; *p; p++)
		quoted += *p == '\'' ? 4 : 1; /* shellquote: ' becomes '\'' */
	return quoted;
}

void transport_new_tag(struct transport *t, char out[SHELL_TAG_MAX])
{
	shell_tag(out, t->pid, atomic_fetch_add(&t->seq, 1), (long long)deadline_wall_ms());
}

int transport_check_command(enum target_type type, int vmid, const char *command, char *err,
                            size_t errlen)
{
	size_t quoted;

	if ((type == TARGET_VM || type == TARGET_LXC) && vmid < 100) {
		snprintf(err, errlen, "a guest id is below 100");
		return -1;
	}
	if (type == TARGET_VM && !utf8_valid((const unsigned char *)command)) {
		/* The guest agent protocol is JSON: qemu-ga rejects such bytes. */
		snprintf(err, errlen,
		         "the command is not valid UTF-8, which the QEMU guest agent cannot carry; "
		         "nothing was sent");
		return -1;
	}
	quoted = transport_quoted_len(command);
	if (quoted + 128 > TRANSPORT_MAX_CMDLINE) {
		snprintf(err, errlen,
		         "the command is too long (%zu bytes quoted; the limit is %d); nothing was "
		         "sent",
		         quoted, TRANSPORT_MAX_CMDLINE - 128);
		return -1;
	}
	return 0;
}

int transport_run_prog(struct transport *t, const struct transport_node *node,
                       enum target_type type, int vmid, const char *prog, const char *tag,
                       int64_t deadline, size_t cap, const atomic_bool *cancel,
                       bool print_connection, struct transport_result *out)
{
	struct sshnode *n = transport_pool_get(t, node);

	switch (type) {
	case TARGET_PROXMOX_HOST:
	case TARGET_LXC:
		return exec_plain(t, n, prog, tag, type == TARGET_LXC, vmid, deadline, cap, cancel,
		                  type == TARGET_PROXMOX_HOST && print_connection, out, NULL, 0);
	case TARGET_VM: {
		struct vmctx c = {t, n, vmid, deadline, cap, cancel, out};
		return transport_exec_vm(&c, prog);
	}
	default:
		return transport_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_INVALID,
		                      "unknown target type");
	}
}

int transport_exec(struct transport *t, const struct transport_node *node, enum target_type type,
                   int vmid, const char *command, const struct transport_limits *lim,
                   struct transport_result *out)
{
	return transport_exec_command(t, node, type, vmid, command, lim, true, out);
}

int transport_exec_command(struct transport *t, const struct transport_node *node,
                           enum target_type type, int vmid, const char *command,
                           const struct transport_limits *lim, bool honour_shell,
                           struct transport_result *out)
{
	struct transport_limits dflt = {0};
	struct buf prog = BUF_INIT;
	int64_t t0 = deadline_now_ms(), deadline;
	char why[sizeof(out->errmsg)], tag[SHELL_TAG_MAX];
	size_t cap, quoted;
	int rc = -1;

	result_init(out);
	if (lim == NULL)
		lim = &dflt;
	cap = lim->output_cap ? lim->output_cap : t->cfg.output_cap;
	deadline = t0 + (lim->timeout_ms > 0 ? lim->timeout_ms : 600000);
	if (node == NULL || node->name == NULL || node->address == NULL || command == NULL) {
		transport_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_INVALID,
		               "no node or no command");
		goto out;
	}
	if (transport_check_command(type, vmid, command, why, sizeof(why)) < 0) {
		transport_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_INVALID, why);
		goto out;
	}
	/* A target whose last shell probe found no bash runs nothing: no
	 * other shell may run what was judged as bash. */
	if (honour_shell && transport_shell_refused(t, node, type, vmid, why, sizeof(why)) < 0) {
		transport_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_SHELL, why);
		goto out;
	}
	if (lim->jail != TRANSPORT_JAIL_NONE && t->jail_len == 0) {
		snprintf(why, sizeof(why), "%s; nothing was sent", t->jail_why);
		transport_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_JAIL, why);
		goto out;
	}
	/* Every command: the one shell's environment, then the shell (or the
	 * jail helper's check and invocation, which end in the same shell),
	 * then the command.  The helper's own deadline is a backstop 2 s
	 * behind the transport's: it ends the request even when the
	 * transport's kill cannot reach it. */
	transport_new_tag(t, tag);
	shell_env_words(&prog, tag);
	size_t env_len = prog.len;
	jail_command_line(&prog, lim->jail, lim->jail_spec, t->jail_sha, deadline - t0 + 2000,
	                  command);
	quoted = transport_quoted_len(command);
	/* Counted as for an unconfined line (its shell words are in the 128). */
	if (lim->jail != TRANSPORT_JAIL_NONE &&
	    prog.len - env_len - strlen(SHELL_EXEC_WORDS " ") + 128 > TRANSPORT_MAX_CMDLINE) {
		/* The helper's arguments (the secret stores above all) share the
		 * one SSH packet with the command: a command near the limit fits
		 * unconfined only. */
		snprintf(why, sizeof(why),
		         "the command is too long to run in the jail (%zu bytes quoted; with the "
		         "jail's %zu the limit is %d); nothing was sent",
		         quoted, prog.len - env_len - strlen(SHELL_EXEC_WORDS " ") - quoted,
		         TRANSPORT_MAX_CMDLINE - 128);
		transport_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_JAIL, why);
		goto out;
	}
	struct sshnode *n = transport_pool_get(t, node);
	if (lim->jail != TRANSPORT_JAIL_NONE &&
	    jail_ensure(t, n, node, type, vmid, deadline, why, sizeof(why)) != 0) {
		transport_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_JAIL, why);
		goto out;
	}
	for (int attempt = 0;; attempt++) {
		bool missing = false;
		rc = transport_run_prog(t, node, type, vmid, buf_str(&prog), tag, deadline, cap,
		                        lim->cancel, lim->print_connection, out);
		if (lim->jail == TRANSPORT_JAIL_NONE)
			break;
		rc = jail_result(lim->jail, out, rc, &missing);
		if (!missing)
			break;
		if (attempt > 0) {
			/* Installed, and still not the one airlockd has: refuse. */
			transport_set_text(
			    out->errmsg, sizeof(out->errmsg),
			    "the jail helper on the target is not the one airlockd sent "
			    "(SHA-256 mismatch after installing it); nothing ran");
			break;
		}
		/* Nothing ran: the check refused before the helper started. */
		char iwhy[400];
		if (jail_install(t, n, type, vmid, deadline, iwhy, sizeof(iwhy)) != 0) {
			transport_set_text(out->errmsg, sizeof(out->errmsg), iwhy);
			break;
		}
		out->jail_installed = true;
		transport_result_free(out);
		out->status = TRANSPORT_EXITED;
		out->error = TRANSPORT_ERR_NONE;
		out->errmsg[0] = '\0';
		out->exit_code = -1;
	}
out:
	if (out->out == NULL)
		out->out = xstrdup("");
	if (out->err == NULL)
		out->err = xstrdup("");
	out->duration_ms = deadline_now_ms() - t0;
	{
		/* errmsg may quote the first line a command printed on stderr
		 * (pct's refusals are recognised by their words): never a secret
		 * into the log. */
		char reason[200], withheld[96];
		const char *said = out->errmsg[0] ? out->errmsg : "-";
		struct secretscan_match m;
		if (secretscan_find(said, strlen(said), false, &m)) {
			snprintf(withheld, sizeof(withheld), "[withheld: it contained %s]",
			         secretscan_kind_label(m.kind));
			said = withheld;
		}
		log_msg(out->status >= TRANSPORT_FAILED ? LOG_WARN : LOG_DEBUG,
		        "node=%s evt=transport.exec target=%s vmid=%d status=%s exit=%d ms=%lld "
		        "error=%s reason=%s",
		        node && node->name ? node->name : "-", target_type_name(type), vmid,
		        transport_status_name(out->status), out->exit_code,
		        (long long)out->duration_ms, transport_error_name(out->error),
		        log_quote(said, reason, sizeof(reason)));
	}
	buf_free(&prog);
	return rc;
}
