/* transport.h -- run a command on a Proxmox node, in a VM or in a container.
 *
 * Everything goes over SSH to the node that hosts the target: one long-lived
 * libssh2 session per node, a new channel per command (see docs/transport.md).
 *
 *   host: <one shell> '<command>'
 *   VM:   qm guest exec <vmid> --timeout <n> -- <one shell> '<command>'
 *   CT:   pct exec <ctid> -- <one shell> '<command>'
 *
 * where <one shell> is bash with no startup file and a fixed environment
 * (shell.h): `/usr/bin/env -i PATH=... HOME=/root LANG=C.UTF-8
 * AIRLOCK_EXEC_ID=<tag> /bin/bash --noprofile --norc +O extglob +O
 * xpg_echo -c`, the shell the
 * classifier parses.  With limits.jail set, the words after the environment
 * become the jail helper's check and invocation (jail.h), which ends in
 * the same shell: the same command, in a jail on the target.  A target
 * without the helper (or with another one) gets it first, through the same
 * session.
 *
 * The node's login shell parses that line once more, so the command is one
 * single-quoted word (lib/shellquote): the target's bash receives exactly the
 * bytes given here, and the login shell interprets none of them.
 *
 * Thread safety: one struct transport serves any number of threads at once;
 * calls for the same node share its session (each node's session is owned by
 * one internal thread).  Results are per call; nothing is kept on the handle
 * but configuration and sessions. */
#ifndef AIRLOCK_TRANSPORT_H
#define AIRLOCK_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier/classes.h"
#include "transport/jail.h"

/* A node that has a key of its own (its authorized_keys trusts only that). */
struct transport_node_key {
	const char *node;        /* the node entity's name (transport_node.name) */
	const char *private_key; /* OpenSSH private key file for that node */
};

struct transport_config {
	const char *private_key; /* OpenSSH private key file; public key auth only;
	                            every node's unless node_keys names the node */
	const char *public_key;  /* NULL: derived from the private key */
	const char *known_hosts; /* OpenSSH known_hosts; may be NULL if every node pins */
	int connect_timeout_ms;  /* TCP connect, handshake, auth; 0 = 10000 */
	int keepalive_s;         /* 0 = 15; a peer silent for 3 intervals is dropped */
	int max_channels;        /* concurrent channels per node; 0 = 8 (sshd's
	                            MaxSessions defaults to 10); more wait their turn */
	size_t output_cap;       /* bytes kept per stream; 0 = 1 MiB */
	int qm_timeout_s;        /* largest --timeout per `qm guest exec`; 0 = 30 */
	int poll_interval_ms;    /* `qm guest exec-status` polling; 0 = 1000 */
	const struct transport_node_key *node_keys; /* copied by transport_new */
	size_t nnode_keys;
	const char *jail_helper; /* the jail helper (build/bin/airlock-jail) copied to
	                            targets; NULL: jailed commands fail (ERR_JAIL) */
};

/* Connection facts of one node, from its entity row.  Borrowed for the call. */
struct transport_node {
	const char *name;            /* entity name: the session pool's key, logs */
	const char *address;         /* host name or IP */
	int port;                    /* 0 = 22 */
	const char *user;            /* NULL = "root" */
	const char *host_key_sha256; /* pinned "SHA256:..." or NULL: known_hosts */
};

enum transport_status {
	TRANSPORT_EXITED,    /* the command ran and exited: exit_code */
	TRANSPORT_SIGNALED,  /* the command was killed by a signal: signal */
	TRANSPORT_TIMED_OUT, /* the deadline passed; the command was killed */
	TRANSPORT_CANCELLED, /* *cancel was set; the command was killed */
	TRANSPORT_FAILED,    /* transport or Proxmox refused: the command never started */
	TRANSPORT_UNKNOWN,   /* the transport failed after the command may have started */
};

enum transport_error {
	TRANSPORT_ERR_NONE,
	TRANSPORT_ERR_CONNECT,  /* TCP, handshake, keepalive */
	TRANSPORT_ERR_HOSTKEY,  /* unknown or changed host key: refused */
	TRANSPORT_ERR_AUTH,     /* public key authentication failed */
	TRANSPORT_ERR_SSH,      /* a channel failed; deadline passed before a channel was free */
	TRANSPORT_ERR_LOST,     /* the session died mid-command */
	TRANSPORT_ERR_PVE,      /* qm/pct refused: errmsg is their stderr line */
	TRANSPORT_ERR_PROTOCOL, /* qm printed something that is not its JSON */
	TRANSPORT_ERR_INVALID,  /* the request cannot be sent (bad target, too long, ...) */
	TRANSPORT_ERR_JAIL,     /* the jail could not be built: the command never started */
	TRANSPORT_ERR_SHELL,    /* the target has no bash (transport_shell_probe): nothing sent */
};

struct transport_limits {
	int timeout_ms;            /* airlock's deadline for the whole command; 0 = 600000 */
	size_t output_cap;         /* 0 = the config's */
	const atomic_bool *cancel; /* optional: set from any thread to cancel */
	enum transport_jail jail;  /* run it in the jail (jail.h); 0 = unconfined */
	const struct transport_jail_spec *jail_spec; /* how (NULL: defaults, no secret stores) */
	/* Host only, for airlock's own side-door check: the node's login shell
	 * first prints "S $SSH_CONNECTION" (this session's client address and
	 * port as sshd saw them) as the first line of stdout; the command
	 * still gets only the one shell's fixed environment. */
	bool print_connection;
};

struct transport_result {
	enum transport_status status;
	int exit_code;   /* EXITED; -1 otherwise.  A CT command killed by signal N
	                    exits 128+N (pct/lxc-attach rule) */
	int signal;      /* SIGNALED, or the signal that ended a killed command; else 0 */
	char *out, *err; /* NUL-terminated for convenience; may hold NULs: use *_len */
	size_t out_len, err_len;
	bool out_truncated, err_truncated; /* past the cap, or the agent's *-truncated */
	int64_t started_at_ms;             /* wall clock, when the call began */
	int64_t duration_ms;
	int64_t guest_pid;          /* VM: the guest pid qm reported, else 0 */
	enum transport_error error; /* FAILED / UNKNOWN, and TIMED_OUT that could not kill */
	char errmsg[512];
	char jail_facts[256]; /* jailed: what the jail's ready line said (uid, network,
	                         limits), "" otherwise */
	bool jail_installed;  /* the jail helper was (re)installed on the target first */
};

struct transport;

/* NULL with the reason in err when cfg is unusable (e.g. no key file). */
struct transport *transport_new(const struct transport_config *cfg, char *err, size_t errlen);

/* Whether command can be sent to a target of this type at all (a guest id,
 * UTF-8 for a VM's guest agent, the quoted length under the SSH packet
 * limit; the jail's own words are checked by transport_exec, which refuses
 * a jailed command that no longer fits with TRANSPORT_ERR_JAIL).  0 when it
 * can; -1 with the reason in err.  transport_exec applies the same check;
 * callers use it to refuse before committing to a run. */
int transport_check_command(enum target_type type, int vmid, const char *command, char *err,
                            size_t errlen);

/* Runs command (a shell string) on the target.  type: TARGET_PROXMOX_HOST (vmid
 * ignored), TARGET_VM or TARGET_LXC.  Fills *out in every case (free it with
 * transport_result_free).  Returns 0 when *out is an outcome of the command
 * (EXITED, SIGNALED, TIMED_OUT, CANCELLED), -1 when it is FAILED or UNKNOWN. */
int transport_exec(struct transport *t, const struct transport_node *node, enum target_type type,
                   int vmid, const char *command, const struct transport_limits *lim,
                   struct transport_result *out);
void transport_result_free(struct transport_result *r);

/* Whether the node can be reached now, without a channel: its pooled
 * session is up and the node has not closed it, or a new session was opened
 * (TCP, host key, authentication) within timeout_ms.  The check a command
 * needs before it is marked running; the command's own channel is the rest
 * of it: a command whose session fails before its exec request went out is
 * TRANSPORT_FAILED with CONNECT, HOSTKEY, AUTH or SSH (nothing was sent).
 * 0 when reachable; -1 with *err (CONNECT, HOSTKEY, AUTH) and msg. */
int transport_reachable(struct transport *t, const struct transport_node *node, int timeout_ms,
                        enum transport_error *err, char *msg, size_t msglen);

/* Whether the pool already holds a session for exactly this node (name,
 * address, port, user and pin) and that session is up.  Never connects and
 * never adds to the pool: the check for connection facts that nothing has
 * vouched for yet. */
bool transport_pooled_up(struct transport *t, const struct transport_node *node);

enum transport_probe_kind {
	TRANSPORT_PROBE_HOST,  /* can we log in and run a command on the node? */
	TRANSPORT_PROBE_AGENT, /* qm agent <vmid> ping, then qm guest cmd <vmid> info */
	TRANSPORT_PROBE_CT,    /* pct status <ctid> */
};

enum transport_probe_state {
	TRANSPORT_PROBE_OK,             /* reachable / agent running with guest-exec / CT running */
	TRANSPORT_PROBE_NOT_RUNNING,    /* agent not answering / CT stopped */
	TRANSPORT_PROBE_NOT_CONFIGURED, /* VM has no agent: line */
	TRANSPORT_PROBE_EXEC_DISABLED,  /* agent answers, guest-exec is disabled */
	TRANSPORT_PROBE_VM_STOPPED,     /* the VM itself is not running */
	TRANSPORT_PROBE_NO_SUCH_GUEST,  /* no such VM/CT config on this node */
	TRANSPORT_PROBE_UNREACHABLE,    /* the node could not be asked (detail says why) */
	TRANSPORT_PROBE_ERROR,          /* an answer we do not understand (detail) */
};

struct transport_probe {
	enum transport_probe_kind kind;   /* in */
	int vmid;                         /* in: VM or CT id */
	enum transport_probe_state state; /* out */
	char detail[256];                 /* out: qm/pct's line, or the SSH error */
	int64_t duration_ms;              /* out */
};

/* Probes n targets of one node over its one session, concurrently (channels
 * up to the bound).  Always fills every probe's state; returns 0, or -1 when
 * the node itself was unreachable. */
int transport_probe(struct transport *t, const struct transport_node *node,
                    struct transport_probe *probes, size_t n, int timeout_ms);

/* Reads a guest agent's answer to guest-info into p (state and detail):
 * OK when it offers guest-exec and guest-exec-status, both enabled;
 * EXEC_DISABLED when it answers without them; ERROR for an error reply or
 * an answer that is not guest-info's.  json (len bytes, need not end in
 * NUL) is the agent's reply as it came off the socket ({"return": ...} or
 * {"error": ...}) or the return value alone, as `qm guest cmd <vmid> info`
 * prints it. */
void transport_agent_info(struct transport_probe *p, const char *json, size_t len);

/* "ok", "not_running", "not_configured", "exec_disabled", "vm_stopped",
 * "no_such_guest", "unreachable", "error". */
const char *transport_probe_state_name(enum transport_probe_state s);
/* The qemu_guest_agent attribute for an agent probe: "running" (OK),
 * "not_running" (NOT_RUNNING, VM_STOPPED), "not_configured", "exec_disabled";
 * NULL when the probe could not tell (UNREACHABLE, ERROR, NO_SUCH_GUEST). */
const char *transport_agent_attr(enum transport_probe_state s);
/* "exited", "signaled", "timed_out", "cancelled", "failed", "unknown". */
const char *transport_status_name(enum transport_status s);
/* "none", "connect", "hostkey", "auth", "ssh", "lost", "pve", "protocol", "invalid",
 * "jail", "shell". */
const char *transport_error_name(enum transport_error e);

/* ---- the one shell (shell.h) on each target ---------------------------------- */

enum transport_shell_state {
	TRANSPORT_SHELL_BASH,    /* /bin/bash is GNU bash, as modelled: commands run there */
	TRANSPORT_SHELL_NONE,    /* no usable /bin/bash: nothing runs there */
	TRANSPORT_SHELL_UNKNOWN, /* the target could not be asked (detail says why) */
};

struct transport_shell {
	enum transport_shell_state state;
	char bash_version[64]; /* BASH: $BASH_VERSION, e.g. "5.2.15(1)-release" */
	char bash_path[256];   /* BASH: where /bin/bash leads (readlink -f), e.g. /usr/bin/bash */
	char sh[256];          /* where /bin/sh leads, e.g. /usr/bin/dash; "" when unknown */
	char detail[400];      /* one line for the operator: what was found (and, NONE, why) */
};

/* Asks the target which shell its commands get: runs, under the one shell
 * itself, a script that prints $BASH_VERSION, where /bin/bash and /bin/sh
 * lead and whether bash is in POSIX mode.  When the one shell does not start
 * (no /bin/bash, or one that is not GNU bash), it asks, without any shell,
 * `readlink -f /bin/sh`, to say what the target has instead.  Always fills
 * *out.  The answer is remembered on t: while a target's last answer is
 * TRANSPORT_SHELL_NONE, transport_exec sends it nothing (TRANSPORT_FAILED,
 * TRANSPORT_ERR_SHELL, errmsg from transport_shell_refused); an answer of
 * BASH lifts that.  0 when the target answered (BASH or NONE); -1 when it
 * could not be asked (UNKNOWN; nothing is remembered). */
int transport_shell_probe(struct transport *t, const struct transport_node *node,
                          enum target_type type, int vmid, int timeout_ms,
                          struct transport_shell *out);

/* -1 with the reason in why when the target's last shell probe found no
 * bash: what is missing and what to do; 0 otherwise (bash, or never
 * probed: then the one shell's line itself fails on a target without
 * bash, and nothing else runs). */
int transport_shell_refused(struct transport *t, const struct transport_node *node,
                            enum target_type type, int vmid, char *why, size_t whylen);

/* "bash", "none", "unknown". */
const char *transport_shell_state_name(enum transport_shell_state s);

struct transport_stats {
	long sessions_opened; /* connects to this node (1 + reconnects) */
	long channels_opened;
	int peak_channels;
};
/* Counters for one node (by name); zeros if it was never used. */
void transport_stats(struct transport *t, const char *node_name, struct transport_stats *out);

/* Ends every session.  Only once no thread is inside a transport call
 * (stop the workers first: a cancel flag ends a running call). */
void transport_free(struct transport *t); /* NULL is a no-op */

#endif
