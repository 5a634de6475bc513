/* qm.c -- a VM command: `qm guest exec`, then exec-status polls until the
 * guest process exits; at the deadline or on cancel, kill it by its pid. */
#include "transport/transport_int.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool vm_stop_requested(const struct vmctx *c)
{
	return (c->cancel && atomic_load(c->cancel)) || deadline_now_ms() >= c->deadline;
}

/* A finished qm JSON record into the result. */
static int vm_result(struct vmctx *c, struct qmjson_result *q)
{
	struct transport_result *r = c->r;

	if (q->has_signal && q->signal > 0) {
		r->status = TRANSPORT_SIGNALED;
		r->signal = q->signal;
	} else if (q->has_exitcode) {
		r->status = TRANSPORT_EXITED;
		r->exit_code = q->exitcode;
	} else {
		return transport_fail(
		    r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PROTOCOL,
		    "qm reported the command exited without an exit code or signal");
	}
	r->out_truncated = q->out.truncated || q->out_truncated;
	r->err_truncated = q->err.truncated || q->err_truncated;
	transport_result_buf(&q->out, &r->out, &r->out_len);
	transport_result_buf(&q->err, &r->err, &r->err_len);
	return 0;
}

/* Deadline or cancel with the guest pid known: kill it, reap it once. */
static int vm_kill(struct vmctx *c, int64_t pid)
{
	struct transport_result *r = c->r;
	bool cancelled = c->cancel && atomic_load(c->cancel);
	/* The guest's process and all its descendants: killing only the shell
	 * would leave its children holding the output pipes, and the agent
	 * would never report the command as exited. */
	char *script = xasprintf("k() { echo \"$1\"; for c in $(ps -o pid= --ppid \"$1\" "
	                         "2>/dev/null); do k \"$c\"; done; }; kill -TERM $(k %lld)",
	                         (long long)pid);
	char ktag[SHELL_TAG_MAX];
	struct buf kline = BUF_INIT;
	char *cmd;
	struct sshop op;
	struct qmjson *p = NULL;

	/* airlock's own command in the guest: under the one shell too. */
	transport_new_tag(c->t, ktag);
	shell_line(&kline, ktag, script);
	cmd = xasprintf("qm guest exec %d -- %s", c->vmid, buf_str(&kline));
	r->status = cancelled ? TRANSPORT_CANCELLED : TRANSPORT_TIMED_OUT;
	transport_run_qm(c->n, &op, cmd, deadline_now_ms() + QM_CALL_MS, 4096, &p);
	if (op.outcome != SSHOP_EXITED || op.exit_status != 0) {
		char line[400];
		transport_stderr_line(&op.err, line, sizeof(line));
		snprintf(r->errmsg, sizeof(r->errmsg),
		         "could not kill guest pid %lld in VM %d (it may still be running): %.300s",
		         (long long)pid, c->vmid, op.outcome == SSHOP_EXITED ? line : op.errmsg);
		r->error =
		    op.outcome == SSHOP_EXITED ? TRANSPORT_ERR_PVE : transport_map_error(op.error);
	} else {
		r->signal = SIGTERM;
	}
	sshop_clear(&op);
	qmjson_free(p);
	free(cmd);
	free(script);
	buf_free(&kline);
	/* Reap the record (and learn how it ended) if it is already gone. */
	cmd = xasprintf("qm guest exec-status %d %lld", c->vmid, (long long)pid);
	transport_run_qm(c->n, &op, cmd, deadline_now_ms() + QM_CALL_MS, c->cap, &p);
	if (op.outcome == SSHOP_EXITED && op.exit_status == 0 && qmjson_finish(p) == 0) {
		struct qmjson_result *q = qmjson_result(p);
		if (q->has_exited && q->exited) {
			if (q->has_signal)
				r->signal = q->signal;
			r->out_truncated = q->out.truncated || q->out_truncated;
			r->err_truncated = q->err.truncated || q->err_truncated;
			transport_result_buf(&q->out, &r->out, &r->out_len);
			transport_result_buf(&q->err, &r->err, &r->err_len);
		}
	}
	sshop_clear(&op);
	qmjson_free(p);
	free(cmd);
	return 0;
}

/* The command outlived --timeout: poll exec-status until it exits or our deadline. */
static int vm_poll(struct vmctx *c, int64_t pid)
{
	char *cmd = xasprintf("qm guest exec-status %d %lld", c->vmid, (long long)pid);
	char last[400] = "";
	int rc = -1;

	for (;;) {
		struct sshop op;
		struct qmjson *p = NULL;
		int64_t wake = deadline_now_ms() + c->t->cfg.poll_interval_ms;

		while (!vm_stop_requested(c) && deadline_now_ms() < wake)
			usleep(20000);
		if (vm_stop_requested(c)) {
			if (last[0]) {
				char msg[500];
				snprintf(msg, sizeof(msg),
				         "lost track of guest pid %lld in VM %d: %s",
				         (long long)pid, c->vmid, last);
				vm_kill(c, pid);
				rc =
				    transport_fail(c->r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE, msg);
			} else {
				rc = vm_kill(c, pid);
			}
			break;
		}
		transport_run_qm(c->n, &op, cmd, deadline_now_ms() + QM_CALL_MS, c->cap, &p);
		if (op.outcome != SSHOP_EXITED) {
			transport_set_text(last, sizeof(last),
			                   op.errmsg); /* retry: a new session */
		} else if (op.exit_status != 0) {
			transport_stderr_line(&op.err, last, sizeof(last));
			if (strstr(last, "Invalid parameter 'pid'") ||
			    strstr(last, "does not exist")) {
				/* The record is gone: the agent restarted or someone reaped it. */
				char msg[500];
				snprintf(msg, sizeof(msg), "guest pid %lld in VM %d vanished: %s",
				         (long long)pid, c->vmid, last);
				rc =
				    transport_fail(c->r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE, msg);
				sshop_clear(&op);
				qmjson_free(p);
				break;
			}
		} else if (qmjson_finish(p) != 0) {
			transport_set_text(last, sizeof(last), qmjson_error(p));
		} else if (qmjson_result(p)->exited) {
			rc = vm_result(c, qmjson_result(p));
			sshop_clear(&op);
			qmjson_free(p);
			break;
		} else {
			last[0] = '\0';
		}
		sshop_clear(&op);
		qmjson_free(p);
	}
	free(cmd);
	return rc;
}

/* What the node's shell says when the agent did not answer the ping that
 * runs before qm guest exec on the same channel; qm never started. */
#define PING_REFUSED "airlock: no answer to qm agent ping; qm guest exec was not started"

/* Did the ping in front of qm guest exec fail (so nothing was sent)?  Then
 * line (stderr, lines joined) loses the marker and keeps qm's own words. */
static bool ping_refused(const struct sshop *op, char *line)
{
	const char *s = buf_str(&op->err);
	size_t n = op->err.len, m = strlen(PING_REFUSED);
	char *at;

	while (n > 0 && s[n - 1] == '\n')
		n--;
	if (n < m || memcmp(s + n - m, PING_REFUSED, m) != 0)
		return false;
	at = strstr(line, PING_REFUSED);
	if (at != NULL) {
		while (at > line && (at[-1] == ' ' || at[-1] == ';'))
			at--;
		*at = '\0';
	}
	if (line[0] == '\0')
		strcpy(line, "the guest agent did not answer ping");
	return true;
}

int transport_exec_vm(struct vmctx *c, const char *prog)
{
	struct transport_result *r = c->r;
	int64_t left = c->deadline - deadline_now_ms();
	int n = (int)((left + 999) / 1000);
	struct sshop op;
	struct qmjson *p = NULL;
	char *cmd;
	int rc;

	if (n > c->t->cfg.qm_timeout_s)
		n = c->t->cfg.qm_timeout_s;
	if (c->cancel && n > QM_CANCEL_SLICE_S)
		n = QM_CANCEL_SLICE_S;
	if (n < 1)
		n = 1; /* 0 would mean "wait forever" */
	/* The check right before executing (agents die) rides on the command's
	 * own channel: the ping, then, only if it answered, qm guest exec in its
	 * place.  qm guest exec pings again itself, but its "not running" could
	 * also come from a later exec-status poll, after the command started; the
	 * ping's own failure is told apart by the marker. */
	cmd = xasprintf("qm agent %d ping || { echo '" PING_REFUSED "' >&2; exit 1; }; "
	                "exec qm guest exec %d --timeout %d -- %s",
	                c->vmid, c->vmid, n, prog);
	/* qm answers by itself after n seconds (with the pid): no cancel here, so
	 * that a cancelled command can still be killed by its pid. */
	transport_run_qm(c->n, &op, cmd, deadline_now_ms() + n * 1000LL + QM_GRACE_MS, c->cap, &p);
	if (op.outcome == SSHOP_LOST || op.outcome == SSHOP_FAILED) {
		rc = transport_op_not_exited(&op, r);
	} else if (op.outcome != SSHOP_EXITED) {
		rc =
		    transport_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE,
		                   "qm guest exec did not return; the guest pid is unknown and the "
		                   "command may still be running");
	} else if (op.exit_status != 0) {
		char line[400], msg[500];
		transport_stderr_line(&op.err, line, sizeof(line));
		if (ping_refused(&op, line) || transport_qm_never_started(line, c->vmid)) {
			rc = transport_fail(r, TRANSPORT_FAILED, TRANSPORT_ERR_PVE, line);
		} else {
			snprintf(msg, sizeof(msg),
			         "qm guest exec failed, possibly after starting "
			         "the command: %s",
			         line);
			rc = transport_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE, msg);
		}
	} else if (qmjson_finish(p) != 0) {
		rc = transport_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PROTOCOL, qmjson_error(p));
	} else if (qmjson_result(p)->has_exited && qmjson_result(p)->exited) {
		rc = vm_result(c, qmjson_result(p));
	} else if (qmjson_result(p)->has_pid) {
		r->guest_pid = qmjson_result(p)->pid;
		rc = vm_poll(c, r->guest_pid);
	} else {
		rc = transport_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PROTOCOL,
		                    "qm guest exec printed neither a result nor a pid");
	}
	sshop_clear(&op);
	qmjson_free(p);
	free(cmd);
	return rc;
}

int transport_vm_install(struct vmctx *c, const char *script, const char *data, size_t len,
                         char *why, size_t whylen)
{
	struct buf sline = BUF_INIT;
	char tag[SHELL_TAG_MAX];
	/* qm reads the whole of stdin first and hands it to the agent as the
	 * process's input (guest-exec input-data); the script runs under the
	 * one shell. */
	transport_new_tag(c->t, tag);
	shell_line(&sline, tag, script);
	char *cmd = xasprintf("qm guest exec %d --timeout 60 --pass-stdin 1 -- %s", c->vmid,
	                      buf_str(&sline));
	struct sshop op;
	struct qmjson *p = NULL;
	int rc = -1;

	p = qmjson_new(8192);
	transport_op_setup(&op, cmd, deadline_now_ms() + 60000 + QM_GRACE_MS, 0);
	op.out_sink = NULL;
	op.in = data;
	op.in_len = len;
	transport_run1(c->n, &op);
	if (op.outcome != SSHOP_EXITED) {
		snprintf(why, whylen, "installing the jail helper in VM %d: %s", c->vmid,
		         op.errmsg);
	} else if (op.exit_status != 0) {
		char line[400];
		transport_stderr_line(&op.err, line, sizeof(line));
		snprintf(why, whylen, "installing the jail helper in VM %d: %s", c->vmid, line);
	} else if (qmjson_feed(p, op.out.data, op.out.len) < 0 || qmjson_finish(p) != 0) {
		snprintf(why, whylen, "installing the jail helper in VM %d: %s", c->vmid,
		         qmjson_error(p));
	} else if (!qmjson_result(p)->has_exited || !qmjson_result(p)->exited) {
		snprintf(why, whylen, "installing the jail helper in VM %d took over 60 s",
		         c->vmid);
	} else if (!qmjson_result(p)->has_exitcode || qmjson_result(p)->exitcode != 0) {
		struct qmjson_result *q = qmjson_result(p);
		char fac[8];
		size_t n = q->err.len;
		char *e = q->err.len ? q->err.data : (char *)"";
		if (q->err.len == 0 || jail_report(TRANSPORT_JAIL_USER, e, &n, why, whylen, fac,
		                                   sizeof(fac)) != JAIL_REPORT_FAILED)
			snprintf(why, whylen,
			         "installing the jail helper in VM %d failed (exit %d)", c->vmid,
			         q->has_exitcode ? q->exitcode : -1);
	} else {
		rc = 0;
	}
	sshop_clear(&op);
	qmjson_free(p);
	free(cmd);
	buf_free(&sline);
	return rc;
}
