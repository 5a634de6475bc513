/* sshnode.h -- one Proxmox node's long-lived SSH session (internal to transport/).
 *
 * A node owns one thread, which owns the libssh2 session: libssh2 sessions
 * are not thread-safe, so no other thread ever touches it.  Callers hand it
 * operations -- one remote command line each -- and block until the thread
 * reports them done.  The thread runs every operation on its own channel of
 * the one session, all multiplexed in non-blocking mode: at most max_channels
 * at once (the rest wait their turn), keepalives while connected, a session
 * that died is dropped and a new one opened for the next operation.  Every
 * step is bounded: TCP connect, handshake and authentication by
 * connect_timeout_ms, a silent peer by the keepalives, each operation by its
 * deadline (then its kill command runs on another channel, and its channel
 * is closed). */
#ifndef AIRLOCK_SSHNODE_H
#define AIRLOCK_SSHNODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

struct sshnode_params {
	const char *name;        /* the node entity's name (logs, messages) */
	const char *address;     /* host name or IP */
	int port;                /* 22 by default */
	const char *user;        /* remote login */
	const char *pinned;      /* "SHA256:..." or NULL: use known_hosts */
	const char *private_key; /* OpenSSH private key file */
	const char *public_key;  /* NULL: derived from the private key */
	const char *known_hosts; /* NULL only if pinned */
	int connect_timeout_ms;
	int keepalive_s;
	int max_channels;
};

enum sshop_outcome {
	SSHOP_EXITED,    /* the remote process ended: exit_status or exit_signal */
	SSHOP_TIMED_OUT, /* the deadline passed: kill_cmdline run, channel closed */
	SSHOP_CANCELLED, /* *cancel became true: likewise */
	SSHOP_FAILED,    /* nothing was started: errmsg says why */
	SSHOP_LOST,      /* the session failed after the command was sent */
};

/* Why an operation FAILED or was LOST; the values are enum transport_error's. */
enum sshop_error {
	SSHOP_ERR_NONE,
	SSHOP_ERR_CONNECT,
	SSHOP_ERR_HOSTKEY,
	SSHOP_ERR_AUTH,
	SSHOP_ERR_SSH,
	SSHOP_ERR_LOST,
};

struct sshop {
	/* in */
	const char *cmdline;       /* the remote command line, parsed by the login shell;
	                              NULL: no command, only a session that is up (EXITED,
	                              exit_status 0, when it is; FAILED when it cannot be) */
	int64_t deadline_ms;       /* monotonic (deadline_now_ms) */
	const atomic_bool *cancel; /* optional */
	size_t out_cap, err_cap;   /* 0 = unbounded */
	/* optional: on deadline or cancel, run this on a new channel of the
	 * session (e.g. signal the command's processes), then close the channel.
	 * libssh2 1.10 cannot send an SSH "signal" request once a channel has
	 * exec'd, and sshd does not signal a session whose channel closes. */
	const char *kill_cmdline;
	/* optional: bytes written to the command's stdin before its EOF
	 * (borrowed until the operation is done) */
	const char *in;
	size_t in_len;
	/* optional: stdout goes here instead of into out */
	void (*out_sink)(void *ctx, const char *data, size_t n);
	void *sink_ctx;

	/* out */
	enum sshop_outcome outcome;
	int exit_status;     /* EXITED without a signal; else -1 */
	int exit_signal;     /* EXITED by a signal: its number; else 0 */
	char signame[16];    /* the signal's SSH name ("TERM"), "" if none */
	struct buf out, err; /* .truncated set past the caps */
	enum sshop_error error;
	char errmsg[512];
	int64_t start_ms, end_ms; /* monotonic: handed over, reported done */

	/* private to sshnode.c */
	int phase;
	bool done;
	struct sshnode_wait *waiter; /* the caller of sshnode_run, woken when all are done */
	bool internal;               /* a kill operation the node thread made and frees */
	int open_retries;
	size_t in_off;         /* bytes of in written so far */
	int eof_early;         /* EOF sent right behind the exec request? */
	bool dry;              /* its last look found nothing to do ... */
	unsigned long dry_gen; /* ... with the node's arrivals at this count */
	void *ch;
	struct sshop *next;
};

struct sshnode_stats {
	long sessions_opened; /* successful connects (1 + reconnects) */
	long channels_opened;
	int peak_channels; /* most channels open at once */
};

struct sshnode;
struct sshnode_wait;

/* Copies p; starts the node's thread.  Connecting waits for the first operation. */
struct sshnode *sshnode_new(const struct sshnode_params *p);
/* Runs the count operations concurrently; returns when every one is done.
 * Thread-safe: any number of threads may call it on one node. */
void sshnode_run(struct sshnode *n, struct sshop **ops, size_t count);
/* Whether the node's session is up now and its peer has not closed the
 * connection: answered in the calling thread, without waking the node's.
 * false says only that the thread must look (connect, or find out). */
bool sshnode_up(struct sshnode *n);
void sshnode_stats(struct sshnode *n, struct sshnode_stats *out);
/* Ends the session and the thread.  No caller may be inside sshnode_run. */
void sshnode_free(struct sshnode *n); /* NULL is a no-op */
/* Releases an operation's buffers (not the struct). */
void sshop_clear(struct sshop *op);

#endif
