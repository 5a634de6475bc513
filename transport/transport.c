/* transport.c -- commands and probes over per-node SSH sessions (see transport.h). */
#include "transport/transport.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libssh2.h>

#include "lib/buf.h"
#include "lib/log.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"
#include "transport/qmjson.h"
#include "transport/sshnode.h"

/* The remote command line travels in one SSH packet, which libssh2 1.10
 * caps at 35000 bytes (MAX_SSH_PACKET_LEN); a longer exec request fails and
 * takes the session with it.  (The login shell's own limit, one argv element
 * of 128 KiB, is larger.)  Longer commands are refused before sending. */
#define TRANSPORT_MAX_CMDLINE 32768
/* How long past its own --timeout a `qm guest exec` may take to answer. */
#define QM_GRACE_MS 20000
/* With a cancel flag, qm's synchronous wait is at most this long: a cancel
 * is acted on once qm has returned the pid. */
#define QM_CANCEL_SLICE_S 5
/* Bound on a short qm/pct call (ping, exec-status, kill, status). */
#define QM_CALL_MS 20000
#define STDERR_CAP 8192

struct pool_entry {
	char *key; /* name \n address \n port \n user \n pin */
	char *name;
	struct sshnode *node;
	struct pool_entry *next;
};

struct transport {
	struct transport_config cfg; /* strings below are owned copies */
	atomic_long seq;             /* numbers the AIRLOCK_EXEC_ID tags */
	char *private_key, *public_key, *known_hosts;
	struct transport_node_key *node_keys; /* cfg.nnode_keys, pointing into key_text */
	char **key_text;                      /* owned: node, key, node, key, ... */
	pthread_mutex_t mu;
	struct pool_entry *pool; /* under mu */
};

/* Copies src into dst (size n), cut to fit; always NUL-terminated. */
static void set_text(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static pthread_once_t libssh2_once = PTHREAD_ONCE_INIT;
static void libssh2_start(void)
{
	if (libssh2_init(0) != 0)
		fatal("libssh2_init failed");
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct transport *transport_new(const struct transport_config *cfg, char *err, size_t errlen)
{
	struct transport *t;

	if (cfg->private_key == NULL || access(cfg->private_key, R_OK) != 0) {
		snprintf(err, errlen, "transport: private key %s is not readable: %s",
		         cfg->private_key ? cfg->private_key : "(none)", strerror(errno));
		return NULL;
	}
	if (cfg->known_hosts && cfg->known_hosts[0] && access(cfg->known_hosts, R_OK) != 0) {
		snprintf(err, errlen, "transport: known_hosts %s is not readable: %s",
		         cfg->known_hosts, strerror(errno));
		return NULL;
	}
	for (size_t i = 0; i < cfg->nnode_keys; i++) {
		const struct transport_node_key *k = &cfg->node_keys[i];
		if (k->node == NULL || k->node[0] == '\0' || k->private_key == NULL ||
		    access(k->private_key, R_OK) != 0) {
			snprintf(err, errlen,
			         "transport: private key %s of node %s is not readable: %s",
			         k->private_key ? k->private_key : "(none)",
			         k->node ? k->node : "(none)", strerror(errno));
			return NULL;
		}
	}
	pthread_once(&libssh2_once, libssh2_start);
	t = xcalloc(1, sizeof(*t));
	t->cfg = *cfg;
	t->private_key = xstrdup(cfg->private_key);
	t->public_key = cfg->public_key ? xstrdup(cfg->public_key) : NULL;
	t->known_hosts = cfg->known_hosts && cfg->known_hosts[0] ? xstrdup(cfg->known_hosts) : NULL;
	t->cfg.private_key = t->private_key;
	t->cfg.public_key = t->public_key;
	t->cfg.known_hosts = t->known_hosts;
	if (cfg->nnode_keys > 0) {
		t->node_keys = xcalloc(cfg->nnode_keys, sizeof(*t->node_keys));
		t->key_text = xcalloc(2 * cfg->nnode_keys, sizeof(*t->key_text));
		for (size_t i = 0; i < cfg->nnode_keys; i++) {
			t->key_text[2 * i] = xstrdup(cfg->node_keys[i].node);
			t->key_text[2 * i + 1] = xstrdup(cfg->node_keys[i].private_key);
			t->node_keys[i].node = t->key_text[2 * i];
			t->node_keys[i].private_key = t->key_text[2 * i + 1];
		}
	}
	t->cfg.node_keys = t->node_keys;
	if (t->cfg.connect_timeout_ms <= 0)
		t->cfg.connect_timeout_ms = 10000;
	if (t->cfg.keepalive_s <= 0)
		t->cfg.keepalive_s = 15;
	if (t->cfg.max_channels <= 0)
		t->cfg.max_channels = 8;
	if (t->cfg.output_cap == 0)
		t->cfg.output_cap = 1024 * 1024;
	if (t->cfg.qm_timeout_s <= 0)
		t->cfg.qm_timeout_s = 30;
	if (t->cfg.poll_interval_ms <= 0)
		t->cfg.poll_interval_ms = 1000;
	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void transport_free(struct transport *t)
{
	if (t == NULL)
		return;
	while (t->pool) {
		struct pool_entry *e = t->pool;
		t->pool = e->next;
		sshnode_free(e->node);
		free(e->key);
		free(e->name);
		free(e);
	}
	pthread_mutex_destroy(&t->mu);
	for (size_t i = 0; i < 2 * t->cfg.nnode_keys; i++)
		free(t->key_text[i]);
	free(t->key_text);
	free(t->node_keys);
	free(t->private_key);
	free(t->public_key);
	free(t->known_hosts);
	free(t);
}

/* The private key for a node: its own, else the one every node shares.  The
 * node's own key also means no public key file: it is derived from it. */
static const char *key_for(const struct transport *t, const char *name, const char **public_key)
{
	for (size_t i = 0; i < t->cfg.nnode_keys; i++)
		if (strcmp(t->cfg.node_keys[i].node, name) == 0) {
			*public_key = NULL;
			return t->cfg.node_keys[i].private_key;
		}
	*public_key = t->cfg.public_key;
	return t->cfg.private_key;
}

/* The node's session, created on first use.  New connection facts for a
 * name (address, port, user, pin) make a new session. */
static struct sshnode *pool_get(struct transport *t, const struct transport_node *node)
{
	const char *user = node->user && node->user[0] ? node->user : "root";
	int port = node->port > 0 ? node->port : 22;
	char *key = xasprintf("%s\n%s\n%d\n%s\n%s", node->name, node->address, port, user,
	                      node->host_key_sha256 ? node->host_key_sha256 : "");
	struct pool_entry *e;

	pthread_mutex_lock(&t->mu);
	for (e = t->pool; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			break;
	if (e == NULL) {
		const char *public_key;
		const char *private_key = key_for(t, node->name, &public_key);
		struct sshnode_params p = {
		    .name = node->name,
		    .address = node->address,
		    .port = port,
		    .user = user,
		    .pinned = node->host_key_sha256,
		    .private_key = private_key,
		    .public_key = public_key,
		    .known_hosts = t->cfg.known_hosts,
		    .connect_timeout_ms = t->cfg.connect_timeout_ms,
		    .keepalive_s = t->cfg.keepalive_s,
		    .max_channels = t->cfg.max_channels,
		};
		e = xcalloc(1, sizeof(*e));
		e->key = key;
		key = NULL;
		e->name = xstrdup(node->name);
		e->node = sshnode_new(&p);
		e->next = t->pool;
		t->pool = e;
	}
	pthread_mutex_unlock(&t->mu);
	free(key);
	return e->node;
}

void transport_stats(struct transport *t, const char *node_name, struct transport_stats *out)
{
	struct sshnode_stats st = {0};

	pthread_mutex_lock(&t->mu);
	for (struct pool_entry *e = t->pool; e; e = e->next)
		if (strcmp(e->name, node_name) == 0) {
			sshnode_stats(e->node, &st);
			break;
		}
	pthread_mutex_unlock(&t->mu);
	out->sessions_opened = st.sessions_opened;
	out->channels_opened = st.channels_opened;
	out->peak_channels = st.peak_channels;
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
	static const char *names[] = {"none", "connect", "hostkey",  "auth",    "ssh",
	                              "lost", "pve",     "protocol", "invalid", "jail"};
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
	r->started_at_ms = wall_ms();
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

static void result_buf(struct buf *b, char **p, size_t *len)
{
	*len = b->len;
	*p = buf_steal(b);
}

static int result_fail(struct transport_result *r, enum transport_status st, enum transport_error e,
                       const char *msg)
{
	r->status = st;
	r->error = e;
	set_text(r->errmsg, sizeof(r->errmsg), msg);
	return -1;
}

static enum transport_error map_error(enum sshop_error e)
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
static void stderr_line(const struct buf *b, char *out, size_t outlen)
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

static void op_setup(struct sshop *op, const char *cmdline, int64_t deadline, size_t cap)
{
	memset(op, 0, sizeof(*op));
	op->cmdline = cmdline;
	op->deadline_ms = deadline;
	op->out_cap = cap;
	op->err_cap = STDERR_CAP;
}

static void run1(struct sshnode *n, struct sshop *op)
{
	sshnode_run(n, &op, 1);
}

static void qm_sink(void *ctx, const char *data, size_t len)
{
	qmjson_feed(ctx, data, len);
}

/* Runs a short qm call whose stdout is qm JSON; *p is the parser (caller frees). */
static void run_qm(struct sshnode *n, struct sshop *op, const char *cmdline, int64_t deadline,
                   size_t cap, struct qmjson **p)
{
	*p = qmjson_new(cap);
	op_setup(op, cmdline, deadline, 0);
	op->out_sink = qm_sink;
	op->sink_ctx = *p;
	run1(n, op);
}

/* Does qm's stderr prove the guest command was never started? */
static bool qm_never_started(const char *msg, int vmid)
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
static int op_not_exited(const struct sshop *op, struct transport_result *r)
{
	switch (op->outcome) {
	case SSHOP_TIMED_OUT:
	case SSHOP_CANCELLED:
		r->status =
		    op->outcome == SSHOP_TIMED_OUT ? TRANSPORT_TIMED_OUT : TRANSPORT_CANCELLED;
		if (op->errmsg[0]) /* expired before it was sent: nothing ran */
			set_text(r->errmsg, sizeof(r->errmsg), op->errmsg);
		else
			r->signal = SIGTERM; /* sent to the session's process group */
		return 0;
	case SSHOP_LOST:
		return result_fail(r, TRANSPORT_UNKNOWN, map_error(op->error), op->errmsg);
	case SSHOP_FAILED:
	default:
		return result_fail(r, TRANSPORT_FAILED, map_error(op->error), op->errmsg);
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

/* Host and CT commands carry AIRLOCK_EXEC_ID=<tag> in their environment (pct
 * keeps the environment by default), inherited by everything they start; on
 * the deadline a second channel sends SIGTERM to every process carrying it. */
static int exec_plain(struct transport *t, struct sshnode *n, const char *prog, bool ct, int ctid,
                      int64_t deadline, size_t cap, const atomic_int *cancel,
                      struct transport_result *r)
{
	char *tag = xasprintf("%d.%ld.%lld", (int)getpid(), atomic_fetch_add(&t->seq, 1),
	                      (long long)wall_ms());
	char *cmdline = ct ? xasprintf("AIRLOCK_EXEC_ID=%s pct exec %d -- %s", tag, ctid, prog)
	                   : xasprintf("AIRLOCK_EXEC_ID=%s %s", tag, prog);
	char *kill =
	    xasprintf("for p in /proc/[0-9]*; do grep -qsxzF AIRLOCK_EXEC_ID=%s "
	              "\"$p/environ\" && kill -TERM \"${p#/proc/}\"; done 2>/dev/null; true",
	              tag);
	struct sshop op;
	int rc;

	op_setup(&op, cmdline, deadline, cap);
	op.err_cap = cap;
	op.cancel = cancel;
	op.kill_cmdline = kill;
	run1(n, &op);
	if (op.outcome != SSHOP_EXITED) {
		rc = op_not_exited(&op, r);
	} else if (ct && op.exit_status == 255 && pct_refusal(&op.err, ctid)) {
		char line[400];
		stderr_line(&op.err, line, sizeof(line));
		rc = result_fail(r, TRANSPORT_FAILED, TRANSPORT_ERR_PVE, line);
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
	result_buf(&op.out, &r->out, &r->out_len);
	result_buf(&op.err, &r->err, &r->err_len);
	sshop_clear(&op);
	free(tag);
	free(cmdline);
	free(kill);
	return rc;
}

/* ---- VM: qm guest exec ------------------------------------------------------- */

struct vmctx {
	struct transport *t;
	struct sshnode *n;
	int vmid;
	int64_t deadline;
	size_t cap;
	const atomic_int *cancel;
	struct transport_result *r;
};

static bool vm_stop_requested(const struct vmctx *c)
{
	return (c->cancel && atomic_load(c->cancel)) || sshnode_now_ms() >= c->deadline;
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
		return result_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PROTOCOL,
		                   "qm reported the command exited without an exit code or signal");
	}
	r->out_truncated = q->out.truncated || q->out_truncated;
	r->err_truncated = q->err.truncated || q->err_truncated;
	result_buf(&q->out, &r->out, &r->out_len);
	result_buf(&q->err, &r->err, &r->err_len);
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
	char *qs = shellquote(script);
	char *cmd = xasprintf("qm guest exec %d -- /bin/sh -c %s", c->vmid, qs);
	struct sshop op;
	struct qmjson *p = NULL;

	r->status = cancelled ? TRANSPORT_CANCELLED : TRANSPORT_TIMED_OUT;
	run_qm(c->n, &op, cmd, sshnode_now_ms() + QM_CALL_MS, 4096, &p);
	if (op.outcome != SSHOP_EXITED || op.exit_status != 0) {
		char line[400];
		stderr_line(&op.err, line, sizeof(line));
		snprintf(r->errmsg, sizeof(r->errmsg),
		         "could not kill guest pid %lld in VM %d (it may still be running): %.300s",
		         (long long)pid, c->vmid, op.outcome == SSHOP_EXITED ? line : op.errmsg);
		r->error = op.outcome == SSHOP_EXITED ? TRANSPORT_ERR_PVE : map_error(op.error);
	} else {
		r->signal = SIGTERM;
	}
	sshop_clear(&op);
	qmjson_free(p);
	free(cmd);
	free(script);
	free(qs);
	/* Reap the record (and learn how it ended) if it is already gone. */
	cmd = xasprintf("qm guest exec-status %d %lld", c->vmid, (long long)pid);
	run_qm(c->n, &op, cmd, sshnode_now_ms() + QM_CALL_MS, c->cap, &p);
	if (op.outcome == SSHOP_EXITED && op.exit_status == 0 && qmjson_finish(p) == 0) {
		struct qmjson_result *q = qmjson_result(p);
		if (q->has_exited && q->exited) {
			if (q->has_signal)
				r->signal = q->signal;
			r->out_truncated = q->out.truncated || q->out_truncated;
			r->err_truncated = q->err.truncated || q->err_truncated;
			result_buf(&q->out, &r->out, &r->out_len);
			result_buf(&q->err, &r->err, &r->err_len);
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
		int64_t wake = sshnode_now_ms() + c->t->cfg.poll_interval_ms;

		while (!vm_stop_requested(c) && sshnode_now_ms() < wake)
			usleep(20000);
		if (vm_stop_requested(c)) {
			if (last[0]) {
				char msg[500];
				snprintf(msg, sizeof(msg),
				         "lost track of guest pid %lld in VM %d: %s",
				         (long long)pid, c->vmid, last);
				vm_kill(c, pid);
				rc = result_fail(c->r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE, msg);
			} else {
				rc = vm_kill(c, pid);
			}
			break;
		}
		run_qm(c->n, &op, cmd, sshnode_now_ms() + QM_CALL_MS, c->cap, &p);
		if (op.outcome != SSHOP_EXITED) {
			set_text(last, sizeof(last), op.errmsg); /* retry: a new session */
		} else if (op.exit_status != 0) {
			stderr_line(&op.err, last, sizeof(last));
			if (strstr(last, "Invalid parameter 'pid'") ||
			    strstr(last, "does not exist")) {
				/* The record is gone: the agent restarted or someone reaped it. */
				char msg[500];
				snprintf(msg, sizeof(msg), "guest pid %lld in VM %d vanished: %s",
				         (long long)pid, c->vmid, last);
				rc = result_fail(c->r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE, msg);
				sshop_clear(&op);
				qmjson_free(p);
				break;
			}
		} else if (qmjson_finish(p) != 0) {
			set_text(last, sizeof(last), qmjson_error(p));
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

/* `qm agent <vmid> ping`: 0 when the agent answers, else -1 with r filled. */
static int vm_agent_check(struct vmctx *c)
{
	char *cmd = xasprintf("qm agent %d ping", c->vmid);
	struct sshop op;
	int rc = 0;

	op_setup(&op, cmd, sshnode_now_ms() + QM_CALL_MS, 4096);
	run1(c->n, &op);
	if (op.outcome != SSHOP_EXITED) {
		/* Only a ping was sent: whatever happened, the command did not run. */
		rc = result_fail(c->r, TRANSPORT_FAILED, map_error(op.error), op.errmsg);
	} else if (op.exit_status != 0) {
		char line[400];
		stderr_line(&op.err, line, sizeof(line));
		rc = result_fail(c->r, TRANSPORT_FAILED, TRANSPORT_ERR_PVE, line);
	}
	sshop_clear(&op);
	free(cmd);
	return rc;
}

static int exec_vm(struct vmctx *c, const char *prog, bool check_agent)
{
	struct transport_result *r = c->r;
	int64_t left = c->deadline - sshnode_now_ms();
	int n = (int)((left + 999) / 1000);
	struct sshop op;
	struct qmjson *p = NULL;
	char *cmd;
	int rc;

	if (check_agent && vm_agent_check(c) < 0)
		return -1;
	if (n > c->t->cfg.qm_timeout_s)
		n = c->t->cfg.qm_timeout_s;
	if (c->cancel && n > QM_CANCEL_SLICE_S)
		n = QM_CANCEL_SLICE_S;
	if (n < 1)
		n = 1; /* 0 would mean "wait forever" */
	cmd = xasprintf("qm guest exec %d --timeout %d -- %s", c->vmid, n, prog);
	/* qm answers by itself after n seconds (with the pid): no cancel here, so
	 * that a cancelled command can still be killed by its pid. */
	run_qm(c->n, &op, cmd, sshnode_now_ms() + n * 1000LL + QM_GRACE_MS, c->cap, &p);
	if (op.outcome == SSHOP_LOST || op.outcome == SSHOP_FAILED) {
		rc = op_not_exited(&op, r);
	} else if (op.outcome != SSHOP_EXITED) {
		rc = result_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE,
		                 "qm guest exec did not return; the guest pid is unknown and the "
		                 "command may still be running");
	} else if (op.exit_status != 0) {
		char line[400], msg[500];
		stderr_line(&op.err, line, sizeof(line));
		if (qm_never_started(line, c->vmid)) {
			rc = result_fail(r, TRANSPORT_FAILED, TRANSPORT_ERR_PVE, line);
		} else {
			snprintf(msg, sizeof(msg),
			         "qm guest exec failed, possibly after starting "
			         "the command: %s",
			         line);
			rc = result_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PVE, msg);
		}
	} else if (qmjson_finish(p) != 0) {
		rc = result_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PROTOCOL, qmjson_error(p));
	} else if (qmjson_result(p)->has_exited && qmjson_result(p)->exited) {
		rc = vm_result(c, qmjson_result(p));
	} else if (qmjson_result(p)->has_pid) {
		r->guest_pid = qmjson_result(p)->pid;
		rc = vm_poll(c, r->guest_pid);
	} else {
		rc = result_fail(r, TRANSPORT_UNKNOWN, TRANSPORT_ERR_PROTOCOL,
		                 "qm guest exec printed neither a result nor a pid");
	}
	sshop_clear(&op);
	qmjson_free(p);
	free(cmd);
	return rc;
}

/* ---- the entry point ------------------------------------------------------------ */

/* A jailed command's outcome: the jail's ready line is removed from stderr;
 * without it the command never started, whatever the shell's status says. */
static int jail_result(enum transport_jail j, struct transport_result *r, int rc)
{
	char why[400];

	/* A guest agent that cannot start unshare (qm's "Failed to execute child
	 * process") is a guest without the jail's tools. */
	if (r->status == TRANSPORT_FAILED && r->error == TRANSPORT_ERR_PVE &&
	    strstr(r->errmsg, "Failed to execute child process")) {
		r->error = TRANSPORT_ERR_JAIL;
		return rc;
	}
	if (jail_report(j, r->err, &r->err_len, why, sizeof(why)) == JAIL_REPORT_READY)
		return rc;
	if (r->status != TRANSPORT_EXITED && r->status != TRANSPORT_SIGNALED)
		return rc; /* timed out, cancelled, failed, unknown: as the transport said */
	r->exit_code = -1;
	r->signal = 0;
	return result_fail(r, TRANSPORT_FAILED, TRANSPORT_ERR_JAIL, why);
}

static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		int need = *s < 0x80                  ? 0
		           : *s >= 0xc2 && *s <= 0xdf ? 1
		           : *s >= 0xe0 && *s <= 0xef ? 2
		           : *s >= 0xf0 && *s <= 0xf4 ? 3
		                                      : -1;
		if (need < 0)
			return false;
		s++;
		for (int i = 0; i < need; i++, s++)
			if ((*s & 0xc0) != 0x80)
				return false;
	}
	return true;
}

int transport_check_command(enum target_type type, int vmid, const char *command, char *err,
                            size_t errlen)
{
	size_t quoted = 2;

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
	for (const char *p = command; *p; p++)
		quoted += *p == '\'' ? 4 : 1; /* shellquote: ' becomes '\'' */
	if (quoted + 128 > TRANSPORT_MAX_CMDLINE) {
		snprintf(err, errlen,
		         "the command is too long (%zu bytes quoted; the limit is %d); nothing was "
		         "sent",
		         quoted, TRANSPORT_MAX_CMDLINE - 128);
		return -1;
	}
	return 0;
}

int transport_exec(struct transport *t, const struct transport_node *node, enum target_type type,
                   int vmid, const char *command, const struct transport_limits *lim,
                   struct transport_result *out)
{
	struct transport_limits dflt = {0};
	struct buf prog = BUF_INIT;
	int64_t t0 = sshnode_now_ms(), deadline;
	char why[200];
	size_t cap;
	int rc = -1;

	result_init(out);
	if (lim == NULL)
		lim = &dflt;
	cap = lim->output_cap ? lim->output_cap : t->cfg.output_cap;
	deadline = t0 + (lim->timeout_ms > 0 ? lim->timeout_ms : 600000);
	if (node == NULL || node->name == NULL || node->address == NULL || command == NULL) {
		result_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_INVALID, "no node or no command");
		goto out;
	}
	if (transport_check_command(type, vmid, command, why, sizeof(why)) < 0) {
		result_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_INVALID, why);
		goto out;
	}
	jail_command_line(&prog, lim->jail, command);
	/* Counted as for an unconfined line ("/bin/sh -c " is in the 128). */
	if (lim->jail != TRANSPORT_JAIL_NONE &&
	    prog.len - strlen("/bin/sh -c ") + 128 > TRANSPORT_MAX_CMDLINE) {
		/* The jail's script shares the one SSH packet with the command:
		 * a command near the limit fits unconfined only. */
		snprintf(why, sizeof(why),
		         "the command is too long to run in the read-only jail (%zu bytes quoted; "
		         "with the jail's %zu the limit is %d); nothing was sent",
		         prog.len - strlen("/bin/sh -c ") - jail_overhead(lim->jail),
		         jail_overhead(lim->jail), TRANSPORT_MAX_CMDLINE - 128);
		result_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_JAIL, why);
		goto out;
	}
	struct sshnode *n = pool_get(t, node);
	switch (type) {
	case TARGET_PROXMOX_HOST:
	case TARGET_LXC:
		rc = exec_plain(t, n, buf_str(&prog), type == TARGET_LXC, vmid, deadline, cap,
		                lim->cancel, out);
		break;
	case TARGET_VM: {
		struct vmctx c = {t, n, vmid, deadline, cap, lim->cancel, out};
		rc = exec_vm(&c, buf_str(&prog), !lim->no_agent_check);
		break;
	}
	default:
		result_fail(out, TRANSPORT_FAILED, TRANSPORT_ERR_INVALID, "unknown target type");
		break;
	}
	if (lim->jail != TRANSPORT_JAIL_NONE && out->err != NULL)
		rc = jail_result(lim->jail, out, rc);
out:
	if (out->out == NULL)
		out->out = xstrdup("");
	if (out->err == NULL)
		out->err = xstrdup("");
	out->duration_ms = sshnode_now_ms() - t0;
	{
		char reason[200];
		log_msg(out->status >= TRANSPORT_FAILED ? LOG_WARN : LOG_DEBUG,
		        "node=%s evt=transport.exec target=%s vmid=%d status=%s exit=%d ms=%lld "
		        "error=%s reason=%s",
		        node && node->name ? node->name : "-", target_type_name(type), vmid,
		        transport_status_name(out->status), out->exit_code,
		        (long long)out->duration_ms, transport_error_name(out->error),
		        log_quote(out->errmsg[0] ? out->errmsg : "-", reason, sizeof(reason)));
	}
	buf_free(&prog);
	return rc;
}

/* ---- probes ------------------------------------------------------------------ */

static void probe_set(struct transport_probe *p, enum transport_probe_state s, const char *detail)
{
	p->state = s;
	set_text(p->detail, sizeof(p->detail), detail);
}

/* qm's refusal line to a state. */
static enum transport_probe_state agent_state(const char *line, int vmid)
{
	char vm[64];

	snprintf(vm, sizeof(vm), "VM %d is not running", vmid);
	if (strncmp(line, "No QEMU guest agent configured", 30) == 0)
		return TRANSPORT_PROBE_NOT_CONFIGURED;
	if (strncmp(line, "QEMU guest agent is not running", 31) == 0)
		return TRANSPORT_PROBE_NOT_RUNNING;
	if (strncmp(line, vm, strlen(vm)) == 0)
		return TRANSPORT_PROBE_VM_STOPPED;
	if (strncmp(line, "Configuration file '", 20) == 0)
		return TRANSPORT_PROBE_NO_SUCH_GUEST;
	if (strstr(line, "has been disabled") || strstr(line, "not allowed"))
		return TRANSPORT_PROBE_EXEC_DISABLED;
	return TRANSPORT_PROBE_ERROR;
}

/* `qm guest cmd <vmid> info`: is guest-exec (and its status) enabled? */
static void agent_info(struct transport_probe *p, const struct buf *out)
{
	cJSON *root = cJSON_ParseWithLength(buf_str(out), out->len);
	const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(root, "supported_commands");
	const cJSON *c;
	int exec = -1, status = -1;

	if (!cJSON_IsArray(cmds)) {
		probe_set(p, TRANSPORT_PROBE_ERROR, "qm guest cmd info: no supported_commands");
		goto out;
	}
	cJSON_ArrayForEach(c, cmds)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
		const cJSON *en = cJSON_GetObjectItemCaseSensitive(c, "enabled");
		int on = cJSON_IsTrue(en) || (cJSON_IsNumber(en) && en->valueint != 0);
		if (!cJSON_IsString(name))
			continue;
		if (strcmp(name->valuestring, "guest-exec") == 0)
			exec = on;
		else if (strcmp(name->valuestring, "guest-exec-status") == 0)
			status = on;
	}
	if (exec == 1 && status == 1)
		probe_set(p, TRANSPORT_PROBE_OK, "guest agent answers; guest-exec enabled");
	else
		probe_set(p, TRANSPORT_PROBE_EXEC_DISABLED,
		          exec == -1 ? "guest agent does not offer guest-exec"
		                     : "guest agent answers but guest-exec is disabled");
out:
	cJSON_Delete(root);
}

static void probe_answer(struct transport_probe *p, struct sshop *op, bool info)
{
	char line[400];

	stderr_line(&op->err, line, sizeof(line));
	if (op->outcome != SSHOP_EXITED) {
		probe_set(p, TRANSPORT_PROBE_UNREACHABLE, op->errmsg[0] ? op->errmsg : "timed out");
		return;
	}
	switch (p->kind) {
	case TRANSPORT_PROBE_HOST:
		if (op->exit_status == 0)
			probe_set(p, TRANSPORT_PROBE_OK, "ssh login and command ok");
		else
			probe_set(p, TRANSPORT_PROBE_ERROR, line);
		return;
	case TRANSPORT_PROBE_CT:
		if (op->exit_status != 0) {
			probe_set(p,
			          strncmp(line, "Configuration file '", 20) == 0
			              ? TRANSPORT_PROBE_NO_SUCH_GUEST
			              : TRANSPORT_PROBE_ERROR,
			          line);
		} else if (strncmp(buf_str(&op->out), "status: running", 15) == 0) {
			probe_set(p, TRANSPORT_PROBE_OK, "status: running");
		} else if (strncmp(buf_str(&op->out), "status: stopped", 15) == 0) {
			probe_set(p, TRANSPORT_PROBE_NOT_RUNNING, "status: stopped");
		} else {
			stderr_line(&op->out, line, sizeof(line));
			probe_set(p, TRANSPORT_PROBE_ERROR, line);
		}
		return;
	case TRANSPORT_PROBE_AGENT:
		if (op->exit_status != 0)
			probe_set(p, agent_state(line, p->vmid), line);
		else if (info)
			agent_info(p, &op->out);
		else
			probe_set(p, TRANSPORT_PROBE_OK, "guest agent answers ping");
		return;
	}
}

int transport_probe(struct transport *t, const struct transport_node *node,
                    struct transport_probe *probes, size_t n, int timeout_ms)
{
	struct sshnode *sn;
	struct sshop *ops = NULL, **ptrs = NULL;
	char **cmds = NULL;
	int64_t t0 = sshnode_now_ms();
	int64_t deadline = t0 + (timeout_ms > 0 ? timeout_ms : 30000);
	size_t unreachable = 0, k;
	int rc = 0;

	if (n == 0)
		return 0;
	sn = pool_get(t, node);
	ops = xcalloc(n, sizeof(*ops));
	ptrs = xcalloc(n, sizeof(*ptrs));
	cmds = xcalloc(n, sizeof(*cmds));
	/* Round 1: ping / status / login, all at once on the one session. */
	for (size_t i = 0; i < n; i++) {
		struct transport_probe *p = &probes[i];
		cmds[i] = p->kind == TRANSPORT_PROBE_AGENT ? xasprintf("qm agent %d ping", p->vmid)
		          : p->kind == TRANSPORT_PROBE_CT  ? xasprintf("pct status %d", p->vmid)
		                                           : xstrdup("true");
		op_setup(&ops[i], cmds[i], deadline, 65536);
		ptrs[i] = &ops[i];
	}
	sshnode_run(sn, ptrs, n);
	for (size_t i = 0; i < n; i++) {
		probe_answer(&probes[i], &ops[i], false);
		if (ops[i].outcome == SSHOP_FAILED &&
		    (ops[i].error == SSHOP_ERR_CONNECT || ops[i].error == SSHOP_ERR_HOSTKEY ||
		     ops[i].error == SSHOP_ERR_AUTH))
			unreachable++;
	}
	/* Round 2: agents that answered -- is guest-exec allowed? */
	k = 0;
	for (size_t i = 0; i < n; i++) {
		sshop_clear(&ops[i]);
		free(cmds[i]);
		cmds[i] = NULL;
		if (probes[i].kind != TRANSPORT_PROBE_AGENT ||
		    probes[i].state != TRANSPORT_PROBE_OK)
			continue;
		cmds[i] = xasprintf("qm guest cmd %d info", probes[i].vmid);
		op_setup(&ops[i], cmds[i], deadline, 1024 * 1024);
		ptrs[k++] = &ops[i];
	}
	if (k > 0)
		sshnode_run(sn, ptrs, k);
	for (size_t i = 0; i < n; i++) {
		if (cmds[i] != NULL) {
			probe_answer(&probes[i], &ops[i], true);
			sshop_clear(&ops[i]);
			free(cmds[i]);
		}
		probes[i].duration_ms = sshnode_now_ms() - t0;
	}
	if (unreachable == n)
		rc = -1;
	log_msg(LOG_DEBUG, "node=%s evt=transport.probe n=%zu ms=%lld", node->name, n,
	        (long long)(sshnode_now_ms() - t0));
	free(ops);
	free(ptrs);
	free(cmds);
	return rc;
}
