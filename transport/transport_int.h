/* transport_int.h -- what the transport's files share and nobody else sees:
 * the pool's struct, the bounds on remote calls, and the helpers for one
 * remote call and its result.  transport.c: names, results, one remote call,
 * host and container commands, the entry point; pool.c: the per-node SSH
 * sessions; qm.c: a VM command's qm guest exec state machine; probes.c: the
 * batched probes; shellprobe.c: each target's shell, and the targets that
 * have none. */
#ifndef AIRLOCK_TRANSPORT_INT_H
#define AIRLOCK_TRANSPORT_INT_H

#include "lib/buf.h"
#include "transport/qmjson.h"
#include "transport/shell.h"
#include "transport/sshnode.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* A target whose last shell probe found no bash (shellprobe.c). */
struct shell_memo {
	char *key; /* node name \n type \n vmid */
	char why[400];
	struct shell_memo *next;
};

struct transport {
	struct transport_config cfg; /* strings below are owned copies */
	atomic_long seq;             /* numbers the AIRLOCK_EXEC_ID tags */
	int pid;                     /* getpid() at transport_new, for the same tags */
	char *private_key, *public_key, *known_hosts;
	struct transport_node_key *node_keys; /* cfg.nnode_keys, pointing into key_text */
	char **key_text;                      /* owned: node, key, node, key, ... */
	pthread_mutex_t mu;
	struct pool_entry *pool;    /* under mu */
	struct shell_memo *no_bash; /* under mu: targets that run nothing */
	char *jail_bytes;           /* the jail helper's file, read once */
	size_t jail_len;
	char jail_sha[65];  /* its SHA-256, hex ("" without a helper) */
	char jail_why[300]; /* why there is no helper */
	char arch[72];      /* uname -m of this machine: the helper's architecture */
	char **jail_seen;   /* under mu: "node/type/vmid" where the helper was found */
	size_t njail_seen, jail_seen_cap;
};

/* A VM command in flight: where, until when, and the result to fill. */
struct vmctx {
	struct transport *t;
	struct sshnode *n;
	int vmid;
	int64_t deadline;
	size_t cap;
	const atomic_bool *cancel;
	struct transport_result *r;
};

/* Copies src into dst (size n), cut to fit; always NUL-terminated. */
void transport_set_text(char *dst, size_t n, const char *src);
/* The length of command once quoted as one shell word (lib/shellquote). */
size_t transport_quoted_len(const char *command);
/* A new AIRLOCK_EXEC_ID tag for one command (shell.h). */
void transport_new_tag(struct transport *t, char out[SHELL_TAG_MAX]);
/* The node's pooled session, made on first use (pool.c). */
struct sshnode *transport_pool_get(struct transport *t, const struct transport_node *node);
/* Moves b's bytes into *p and *len (NUL-terminated). */
void transport_result_buf(struct buf *b, char **p, size_t *len);
/* Sets r's status, error and message; returns -1. */
int transport_fail(struct transport_result *r, enum transport_status st, enum transport_error e,
                   const char *msg);
enum transport_error transport_map_error(enum sshop_error e);
/* The last non-empty line of b (qm/pct's message), cut to outlen. */
void transport_stderr_line(const struct buf *b, char *out, size_t outlen);
void transport_op_setup(struct sshop *op, const char *cmdline, int64_t deadline, size_t cap);
void transport_run1(struct sshnode *n, struct sshop *op);
/* Runs a short qm call whose stdout is qm JSON; *p is the parser (caller frees). */
void transport_run_qm(struct sshnode *n, struct sshop *op, const char *cmdline, int64_t deadline,
                      size_t cap, struct qmjson **p);
/* Does qm's stderr prove the guest command was never started? */
bool transport_qm_never_started(const char *msg, int vmid);
/* An operation that did not run to an exit: fill r; -1 for FAILED/UNKNOWN. */
int transport_op_not_exited(const struct sshop *op, struct transport_result *r);
/* transport_exec; honour_shell false: also on a target the last shell
 * probe found without bash (the shell probe itself). */
int transport_exec_command(struct transport *t, const struct transport_node *node,
                           enum target_type type, int vmid, const char *command,
                           const struct transport_limits *lim, bool honour_shell,
                           struct transport_result *out);
/* Runs prog -- the words that follow the target's prefix on its line (for
 * a command, the one shell's; see transport.c) -- with tag in the node's
 * processes' environment.  Fills out as transport_exec does. */
int transport_run_prog(struct transport *t, const struct transport_node *node,
                       enum target_type type, int vmid, const char *prog, const char *tag,
                       int64_t deadline, size_t cap, const atomic_bool *cancel,
                       bool print_connection, struct transport_result *out);
/* Forgets every remembered shell (pool.c's transport_free). */
void transport_shell_forget(struct transport *t);
/* A VM command: `qm agent ping` and then qm guest exec on one channel, then
 * exec-status polls until it exits, the deadline passes (kill by pid) or
 * cancel is set (qm.c).  A failed ping is a clean "nothing ran". */
int transport_exec_vm(struct vmctx *c, const char *prog);
/* Installs the jail helper in a VM through the guest agent (qm guest exec
 * --pass-stdin): 0, or -1 with the reason in why. */
int transport_vm_install(struct vmctx *c, const char *script, const char *data, size_t len,
                         char *why, size_t whylen);

#endif
