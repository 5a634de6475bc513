/* sshnode.c -- one node's SSH session and its channel multiplexer (see sshnode.h). */
#include "transport/sshnode.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

#include "lib/deadline.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "transport/hostkey.h"

/* An EOF sent right behind the exec request (eof_early). */
enum { EOF_UNTRIED, EOF_SENT, EOF_HALF, EOF_NOT_SENT };

/* What a pass may gather before it writes (tx). */
#define SSHNODE_TX_BYTES 65536

enum phase {
	PH_QUEUED,    /* waiting for a session and a free channel slot */
	PH_OPEN,      /* channel open requested */
	PH_EXEC,      /* exec request sent: from here the command may have started */
	PH_EOF,       /* sending EOF on its stdin */
	PH_READ,      /* draining stdout and stderr */
	PH_WAITCLOSE, /* EOF seen: wait for the exit status and the server's close */
	PH_KILL,      /* deadline or cancel: SIGTERM request */
	PH_CLOSE,
	PH_FREE,
	PH_DONE,
};

/* A caller of sshnode_run, waiting for its operations (on its own stack). */
struct sshnode_wait {
	pthread_cond_t cv; /* signalled once, when left reaches 0 */
	size_t left;       /* its operations not yet done (under the node's mu) */
};

struct sshnode {
	char *name, *address, *user, *pinned, *private_key, *public_key, *known_hosts;
	int port, connect_timeout_ms, keepalive_s, max_channels;

	pthread_t thread;
	pthread_mutex_t mu;
	struct sshop *queue;     /* handed over, not yet taken by the thread (under mu) */
	bool stopping;           /* under mu */
	int wake[2];             /* a byte here wakes the thread */
	bool polling;            /* under mu: the thread sleeps (or is about to) in poll() */
	bool woken;              /* under mu: a byte is on its way through wake[] */
	int up_fd;               /* under mu: the authenticated session's socket; -1 when none */
	struct sshnode_stats st; /* under mu */

	/* owned by the thread */
	LIBSSH2_SESSION *s;
	int fd;
	/* The session is in non-blocking mode, driven by this thread's
	 * passes (not during a blocking connect or disconnect, whose libssh2
	 * calls poll, read and write for themselves).  Then:
	 * - rx_dry: recv() said EAGAIN (or returned less than asked for: all
	 *   the kernel had) since the socket was last polled; libssh2's
	 *   further reads are answered EAGAIN without asking the kernel
	 *   (each channel call reads the socket until it is dry);
	 * - tx: what libssh2 sends is gathered and written once per pass
	 *   (tx_flush), so the packets of all channels in one pass travel
	 *   together and the node answers them together. */
	bool nb, rx_dry;
	/* Counts arrivals: bytes read from the socket, and every wake-up that
	 * was not only the wake pipe (the socket was ready, or time passed).
	 * An operation that looked and found nothing to do need not look
	 * again in the same wake-up until it changes (see node_main). */
	unsigned long rx_gen;
	char *tx;
	size_t txlen;
	int64_t last_rx_ms;
	struct sshop *active;
	int nchannels;
	struct sshop *sender;  /* its call left a packet half sent: it goes first */
	struct sshop *starter; /* the one operation opening or exec'ing a channel */
	int64_t open_retry_ms; /* the server refused a channel: not before this */
	bool fatal;            /* the session failed during this pass */
	char fatal_msg[256];
};

static char *dup_or_null(const char *s)
{
	return s && s[0] ? xstrdup(s) : NULL;
}

static const struct {
	const char *name;
	int sig;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"ABRT", SIGABRT}, {"FPE", SIGFPE},   {"KILL", SIGKILL}, {"SEGV", SIGSEGV},
    {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
    {"USR2", SIGUSR2}, {"BUS", SIGBUS},   {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
};

static int signal_number(const char *name)
{
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (strcmp(name, signals[i].name) == 0)
			return signals[i].sig;
	return -1;
}

/* libssh2's own recv, plus: remember when the peer last sent anything, and
 * do not ask the kernel again for bytes it just said it does not have. */
static LIBSSH2_RECV_FUNC(recv_cb)
{
	struct sshnode *n = *abstract;
	ssize_t rc;

	if (n->nb && n->rx_dry)
		return -EAGAIN;
	rc = recv(socket, buffer, length, flags);
	if (rc < 0) {
		int e = errno;
		if ((e == EAGAIN || e == EWOULDBLOCK) && n->nb)
			n->rx_dry = true;
		return -e;
	}
	if (rc > 0) {
		n->last_rx_ms = deadline_now_ms();
		n->rx_gen++;
	}
	/* Fewer bytes than asked for: the kernel had no more (a stream
	 * socket hands over all it holds, up to length). */
	if (n->nb && (size_t)rc < length)
		n->rx_dry = true;
	return rc;
}

/* Writes what tx holds, as far as the socket takes it now.  0 (the rest,
 * if any, stays for the next pass); -1 when the connection failed
 * (n->fatal set). */
static int tx_flush(struct sshnode *n)
{
	while (n->txlen > 0) {
		ssize_t k = send(n->fd, n->tx, n->txlen, MSG_NOSIGNAL);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			n->fatal = true;
			snprintf(n->fatal_msg, sizeof(n->fatal_msg), "sending to the node: %s",
			         strerror(errno));
			return -1;
		}
		memmove(n->tx, n->tx + k, n->txlen - (size_t)k);
		n->txlen -= (size_t)k;
	}
	return 0;
}

/* libssh2's send: into tx during the passes (libssh2 takes a short count
 * or EAGAIN as a packet half sent, and sends the rest later); straight to
 * the socket otherwise. */
static LIBSSH2_SEND_FUNC(send_cb)
{
	struct sshnode *n = *abstract;
	size_t room;

	if (!n->nb) {
		ssize_t k = send(socket, buffer, length, flags);
		return k < 0 ? -errno : k;
	}
	if (n->txlen == SSHNODE_TX_BYTES && tx_flush(n) < 0)
		return -EPIPE;
	room = SSHNODE_TX_BYTES - n->txlen;
	if (room == 0)
		return -EAGAIN;
	if (length > room)
		length = room;
	memcpy(n->tx + n->txlen, buffer, length);
	n->txlen += length;
	return (ssize_t)length;
}

/* The libssh2 error of the session as text. */
static const char *ssh_error(LIBSSH2_SESSION *s)
{
	char *msg = NULL;

	libssh2_session_last_error(s, &msg, NULL, 0);
	return msg && msg[0] ? msg : "unknown libssh2 error";
}

/* Errors of the connection itself: they end the session and every channel
 * on it.  Anything else a channel call returns (a refused request, a channel
 * closed without EOF, a misuse) ends only that channel. */
static bool session_fatal(int e)
{
	switch (e) {
	case LIBSSH2_ERROR_BANNER_RECV:
	case LIBSSH2_ERROR_BANNER_SEND:
	case LIBSSH2_ERROR_INVALID_MAC:
	case LIBSSH2_ERROR_KEX_FAILURE:
	case LIBSSH2_ERROR_ALLOC:
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE:
	case LIBSSH2_ERROR_TIMEOUT:
	case LIBSSH2_ERROR_DECRYPT:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_PROTO:
	case LIBSSH2_ERROR_ZLIB:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_COMPRESS:
	case LIBSSH2_ERROR_SOCKET_RECV:
	case LIBSSH2_ERROR_ENCRYPT:
	case LIBSSH2_ERROR_BAD_SOCKET:
		return true;
	default:
		return false;
	}
}

static bool channel_level(int e)
{
	return !session_fatal(e);
}

static void op_fail(struct sshop *op, enum sshop_outcome outcome, enum sshop_error err,
                    const char *fmt, const char *arg)
{
	op->outcome = outcome;
	op->error = err;
	snprintf(op->errmsg, sizeof(op->errmsg), fmt, arg);
}

/* ---- connecting ---------------------------------------------------------- */

static int tcp_connect(struct sshnode *n, char *err, size_t errlen)
{
	struct addrinfo hints = {0}, *res = NULL, *ai;
	char port[16];
	int fd = -1, gai, saved = 0;
	int64_t deadline = deadline_now_ms() + n->connect_timeout_ms;

	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%d", n->port);
	gai = getaddrinfo(n->address, port, &hints, &res);
	if (gai != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", n->address, gai_strerror(gai));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		            ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			struct pollfd pfd = {fd, POLLOUT, 0};
			int left = (int)(deadline - deadline_now_ms());
			socklen_t sl = sizeof(saved);

			if (left > 0 && poll(&pfd, 1, left) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &saved, &sl) == 0 && saved == 0)
				break;
			if (left <= 0 || saved == 0)
				saved = ETIMEDOUT;
		} else {
			saved = errno;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to %s port %d: %s", n->address, n->port,
		         strerror(saved));
		return -1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	return fd;
}

static void session_drop(struct sshnode *n)
{
	bool whole = n->s && n->fd >= 0 && tx_flush(n) == 0 && n->txlen == 0;

	n->nb = false;
	n->rx_dry = false;
	n->txlen = 0;
	pthread_mutex_lock(&n->mu);
	n->up_fd = -1; /* before the close: sshnode_up polls it under mu */
	pthread_mutex_unlock(&n->mu);
	if (n->s) {
		/* Blocking, briefly: a non-blocking free may stop half way (EAGAIN)
		 * and leak the session; a dead socket fails at once.  No goodbye
		 * after a packet that could not be written whole. */
		libssh2_session_set_blocking(n->s, 1);
		libssh2_session_set_timeout(n->s, 2000);
		if (whole)
			libssh2_session_disconnect(n->s, "airlock: closing");
		libssh2_session_free(n->s);
		n->s = NULL;
	}
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
	n->nchannels = 0;
	n->sender = NULL;
	n->starter = NULL;
}

/* Opens, verifies and authenticates a session; -1 with *kind and err set. */
static int node_connect(struct sshnode *n, enum sshop_error *kind, char *err, size_t errlen)
{
	char why[400];
	const char *list;
	int64_t t0 = deadline_now_ms();

	*kind = SSHOP_ERR_CONNECT;
	n->fd = tcp_connect(n, err, errlen);
	if (n->fd < 0)
		return -1;
	n->s = libssh2_session_init_ex(NULL, NULL, NULL, n);
	if (n->s == NULL) {
		snprintf(err, errlen, "cannot create an SSH session");
		goto fail;
	}
	libssh2_session_callback_set(n->s, LIBSSH2_CALLBACK_RECV, (void *)recv_cb);
	libssh2_session_callback_set(n->s, LIBSSH2_CALLBACK_SEND, (void *)send_cb);
	libssh2_session_set_blocking(n->s, 1);
	libssh2_session_set_timeout(n->s, n->connect_timeout_ms);
	if (libssh2_session_handshake(n->s, n->fd) != 0) {
		snprintf(err, errlen, "SSH handshake with %s port %d failed: %s", n->address,
		         n->port, ssh_error(n->s));
		goto fail;
	}
	if (hostkey_verify(n->s, n->name, n->address, n->port, n->pinned, n->known_hosts, why,
	                   sizeof(why)) < 0) {
		*kind = SSHOP_ERR_HOSTKEY;
		snprintf(err, errlen, "%s", why);
		goto fail;
	}
	*kind = SSHOP_ERR_AUTH;
	list = libssh2_userauth_list(n->s, n->user, (unsigned)strlen(n->user));
	if (list == NULL && !libssh2_userauth_authenticated(n->s)) {
		snprintf(err, errlen, "SSH server %s refused to list authentication methods: %s",
		         n->address, ssh_error(n->s));
		goto fail;
	}
	if (list && strstr(list, "publickey") == NULL) {
		snprintf(err, errlen,
		         "SSH server %s does not offer public key authentication (offers: %s)",
		         n->address, list);
		goto fail;
	}
	if (list &&
	    libssh2_userauth_publickey_fromfile_ex(n->s, n->user, (unsigned)strlen(n->user),
	                                           n->public_key, n->private_key, NULL) != 0) {
		snprintf(err, errlen, "public key authentication as %s on %s with %s failed: %s",
		         n->user, n->address, n->private_key, ssh_error(n->s));
		goto fail;
	}
	libssh2_keepalive_config(n->s, 1, (unsigned)n->keepalive_s);
	libssh2_session_set_blocking(n->s, 0);
	n->nb = true;
	n->rx_dry = false;
	n->last_rx_ms = deadline_now_ms();
	pthread_mutex_lock(&n->mu);
	n->st.sessions_opened++;
	n->up_fd = n->fd;
	pthread_mutex_unlock(&n->mu);
	log_msg(LOG_INFO, "node=%s evt=ssh.connected addr=%s port=%d ms=%lld", n->name, n->address,
	        n->port, (long long)(deadline_now_ms() - t0));
	return 0;
fail:
	session_drop(n);
	return -1;
}

/* The session died: started operations are LOST, the others wait for a new one. */
static void session_lost(struct sshnode *n, const char *why)
{
	char lq[512];
	log_msg(LOG_WARN, "node=%s evt=ssh.lost reason=%s", n->name,
	        log_quote(why, lq, sizeof(lq)));
	for (struct sshop *op = n->active; op; op = op->next) {
		if (op->phase == PH_DONE)
			continue;
		if (op->phase >= PH_EXEC && op->phase < PH_CLOSE && op->outcome == SSHOP_EXITED) {
			op_fail(
			    op, SSHOP_LOST, SSHOP_ERR_LOST,
			    "connection to the node was lost after the command was sent (it may "
			    "have run): %s",
			    why);
			op->phase = PH_DONE;
		} else if (op->phase >= PH_EXEC) {
			op->phase = PH_DONE; /* timed out, cancelled or exited: that stays */
		} else {
			op->phase = PH_QUEUED;
		}
		op->ch = NULL;
	}
	session_drop(n);
}

/* ---- one operation ------------------------------------------------------- */

static void sink_out(struct sshop *op, const char *p, size_t len)
{
	if (op->out_sink)
		op->out_sink(op->sink_ctx, p, len);
	else
		buf_append(&op->out, p, len);
}

/* A libssh2 call returned rc < 0 (not EAGAIN) for op: end op or the session. */
static int op_error(struct sshnode *n, struct sshop *op, int rc, const char *what)
{
	if (!channel_level(rc)) {
		n->fatal = true;
		snprintf(n->fatal_msg, sizeof(n->fatal_msg), "%s: %s", what, ssh_error(n->s));
		return 1;
	}
	/* Before the exec request, or the server refused it: nothing ran. */
	if (op->phase < PH_EXEC ||
	    (op->phase == PH_EXEC && rc == LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED)) {
		char msg[300];

		snprintf(msg, sizeof(msg), "%s: %s", what, ssh_error(n->s));
		op_fail(op, SSHOP_FAILED, SSHOP_ERR_SSH, "%s", msg);
	} else if (op->outcome == SSHOP_EXITED) {
		op_fail(op, SSHOP_LOST, SSHOP_ERR_SSH,
		        "the channel failed after the command was sent (it may have run): %s",
		        ssh_error(n->s));
	}
	op->phase = op->ch ? PH_FREE : PH_DONE;
	if (op->phase == PH_DONE && n->nchannels > 0)
		n->nchannels--;
	return 1;
}

static bool expired(struct sshop *op, int64_t now)
{
	if (op->cancel && atomic_load(op->cancel)) {
		op->outcome = SSHOP_CANCELLED;
		return true;
	}
	if (now >= op->deadline_ms) {
		op->outcome = SSHOP_TIMED_OUT;
		return true;
	}
	return false;
}

static int drain(struct sshnode *n, struct sshop *op)
{
	char chunk[32768];
	int progress = 0;

	for (int stream = 0; stream < 2; stream++) {
		for (;;) {
			ssize_t r = libssh2_channel_read_ex(op->ch, stream, chunk, sizeof(chunk));
			if (r == LIBSSH2_ERROR_EAGAIN || r == 0)
				break;
			if (r < 0)
				return op_error(n, op, (int)r, "reading the command's output");
			progress = 1;
			if (stream == 0)
				sink_out(op, chunk, (size_t)r);
			else
				buf_append(&op->err, chunk, (size_t)r);
		}
	}
	if (libssh2_channel_eof(op->ch)) {
		op->phase = PH_WAITCLOSE;
		progress = 1;
	}
	return progress;
}

static void collect_status(struct sshnode *n, struct sshop *op)
{
	char *sig = NULL;
	size_t siglen = 0;

	op->exit_status = libssh2_channel_get_exit_status(op->ch);
	op->exit_signal = 0;
	if (libssh2_channel_get_exit_signal(op->ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 &&
	    sig != NULL) {
		snprintf(op->signame, sizeof(op->signame), "%.*s", (int)siglen, sig);
		op->exit_signal = signal_number(op->signame);
		op->exit_status = -1;
		libssh2_free(n->s, sig);
	}
}

/* Has the peer closed the connection on fd (FIN or reset)?  Seen without
 * reading it: bytes may wait unread on an idle session. */
static bool fd_peer_closed(int fd)
{
	struct pollfd pfd = {fd, POLLIN | POLLRDHUP, 0};

	return fd < 0 ||
	       (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
}

static bool peer_closed(struct sshnode *n)
{
	return fd_peer_closed(n->fd);
}

static bool outbound_pending(struct sshnode *n)
{
	return n->s && (libssh2_session_block_directions(n->s) & LIBSSH2_SESSION_BLOCK_OUTBOUND);
}

/* The exec request is out and its answer not yet in: the EOF on the
 * command's stdin follows it at once, in the same write, rather than after
 * the answer in a write of its own (the node reads them in order: the
 * command is started before its stdin is closed).  Tried once, when the
 * pass's buffer has room for it; 1 if it was sent (or half sent). */
static int eof_early(struct sshnode *n, struct sshop *op)
{
	int rc;

	if (op->eof_early != EOF_UNTRIED || op->in_len > 0 || outbound_pending(n) ||
	    SSHNODE_TX_BYTES - n->txlen < 1024)
		return 0;
	rc = libssh2_channel_send_eof(op->ch);
	if (rc == 0 || rc == LIBSSH2_ERROR_EAGAIN) {
		op->eof_early = rc == 0 ? EOF_SENT : EOF_HALF;
		return 1;
	}
	op->eof_early = EOF_NOT_SENT; /* the usual step after the answer tries again */
	if (!channel_level(rc))
		return op_error(n, op, rc, "sending EOF");
	return 0;
}

/* Advances op as far as it goes without blocking; 1 if anything happened. */
static int advance(struct sshnode *n, struct sshop *op, int64_t now)
{
	int rc;

	/* The backstop: a channel still busy 15 s after its deadline (a close
	 * that never completes, a server that stopped answering on it) is
	 * abandoned -- libssh2 frees it with the session -- so that no caller
	 * waits longer, and the other channels carry on. */
	if (op->phase > PH_QUEUED && op->phase < PH_DONE && now > op->deadline_ms + 15000) {
		if (op->phase == PH_OPEN || n->sender == op) {
			/* libssh2 keeps this state per session: only a new one clears it */
			n->fatal = true;
			snprintf(n->fatal_msg, sizeof(n->fatal_msg),
			         "the server stopped answering a channel past its deadline");
			return 1;
		}
		if (op->outcome == SSHOP_EXITED && op->phase < PH_CLOSE)
			op_fail(op, op->phase >= PH_EXEC ? SSHOP_LOST : SSHOP_FAILED, SSHOP_ERR_SSH,
			        "%s", "the channel stopped answering after its deadline");
		log_msg(LOG_WARN, "node=%s evt=ssh.channel_abandoned", n->name);
		op->ch = NULL;
		n->nchannels--;
		op->phase = PH_DONE;
		return 1;
	}
	switch (op->phase) {
	case PH_QUEUED:
		if (expired(op, now)) {
			op_fail(op, op->outcome, SSHOP_ERR_SSH, "%s",
			        op->outcome == SSHOP_CANCELLED
			            ? "cancelled before the command was sent"
			            : "the deadline passed before the command could be sent");
			op->phase = PH_DONE;
			return 1;
		}
		if (op->cmdline == NULL) {
			/* Only a session that is up: no channel.  A peer that
			 * closed the pooled one while it was idle is found here
			 * (nothing reads an idle session's socket), and a new
			 * session is opened for this operation. */
			if (n->s == NULL)
				return 0;
			if (peer_closed(n)) {
				n->fatal = true;
				snprintf(n->fatal_msg, sizeof(n->fatal_msg),
				         "the node closed the connection");
				return 1;
			}
			op->exit_status = 0;
			op->phase = PH_DONE;
			return 1;
		}
		/* One channel at a time through open and exec: libssh2 waits for
		 * their replies by packet type, and a reply of the same type for
		 * another channel makes the waiting call fail (-1, "Failed waiting
		 * for channel success") after the exec request went out. */
		if (n->s == NULL || n->nchannels >= n->max_channels || now < n->open_retry_ms ||
		    n->starter != NULL)
			return 0;
		n->starter = op;
		n->nchannels++;
		pthread_mutex_lock(&n->mu);
		n->st.channels_opened++;
		if (n->nchannels > n->st.peak_channels)
			n->st.peak_channels = n->nchannels;
		pthread_mutex_unlock(&n->mu);
		op->phase = PH_OPEN;
		return 1;
	case PH_OPEN:
		op->ch = libssh2_channel_open_session(n->s);
		if (op->ch == NULL) {
			rc = libssh2_session_last_errno(n->s);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return 0;
			if (rc == LIBSSH2_ERROR_CHANNEL_FAILURE && op->open_retries++ < 100) {
				/* sshd's MaxSessions (sessions it is still closing
				 * count): nothing was sent; wait and retry. */
				n->nchannels--;
				n->open_retry_ms = now + 50;
				op->phase = PH_QUEUED;
				return 1;
			}
			return op_error(n, op, rc, "opening a channel");
		}
		op->phase = PH_EXEC;
		return 1;
	case PH_EXEC:
		if (op->eof_early == EOF_HALF) {
			/* That packet's call comes first (libssh2's rule). */
			rc = libssh2_channel_send_eof(op->ch);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return 0;
			op->eof_early = rc == 0 ? EOF_SENT : EOF_NOT_SENT;
			if (rc < 0 && !channel_level(rc))
				return op_error(n, op, rc, "sending EOF");
		}
		rc = libssh2_channel_exec((LIBSSH2_CHANNEL *)op->ch, op->cmdline);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return eof_early(n, op);
		if (rc < 0)
			return op_error(n, op, rc, "the exec request");
		op->phase = op->eof_early == EOF_SENT ? PH_READ : PH_EOF;
		return 1;
	case PH_EOF:
		if (op->in_off < op->in_len) {
			/* The stdin bytes first, as far as the channel's window takes them. */
			ssize_t k = libssh2_channel_write(
			    op->ch, op->in + op->in_off,
			    op->in_len - op->in_off > 32768 ? 32768 : op->in_len - op->in_off);
			if (k == LIBSSH2_ERROR_EAGAIN) {
				if (expired(op, now)) {
					op->phase = PH_KILL;
					return 1;
				}
				return 0;
			}
			if (k < 0)
				return op_error(n, op, (int)k, "writing to the command's stdin");
			op->in_off += (size_t)k;
			return 1;
		}
		rc = libssh2_channel_send_eof(op->ch);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc < 0 && !channel_level(rc))
			return op_error(n, op, rc, "sending EOF");
		op->phase = PH_READ;
		return 1;
	case PH_READ:
		if (expired(op, now)) {
			op->phase = PH_KILL;
			return 1;
		}
		return drain(n, op);
	case PH_WAITCLOSE:
		if (expired(op, now)) {
			op->phase = PH_KILL;
			return 1;
		}
		rc = libssh2_channel_wait_closed(op->ch);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc < 0)
			return op_error(n, op, rc, "waiting for the exit status");
		collect_status(n, op);
		op->phase = PH_CLOSE;
		return 1;
	case PH_KILL:
		if (op->kill_cmdline) {
			struct sshop *k = xcalloc(1, sizeof(*k));
			k->cmdline = xstrdup(op->kill_cmdline);
			k->deadline_ms = now + 10000;
			k->internal = true;
			k->exit_status = -1;
			k->outcome = SSHOP_EXITED;
			k->start_ms = now;
			buf_init(&k->out, 4096);
			buf_init(&k->err, 4096);
			k->next = op->next; /* runs in this very pass, after op */
			op->next = k;
			log_msg(LOG_INFO, "node=%s evt=ssh.kill", n->name);
		}
		op->phase = PH_CLOSE;
		return 1;
	case PH_CLOSE:
		rc = libssh2_channel_close(op->ch);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		if (rc < 0 && !channel_level(rc))
			return op_error(n, op, rc, "closing the channel");
		op->phase = PH_FREE;
		return 1;
	case PH_FREE:
		rc = libssh2_channel_free(op->ch);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return 0;
		op->ch = NULL;
		n->nchannels--;
		op->phase = PH_DONE;
		return 1;
	case PH_DONE:
		return 0;
	}
	return 0;
}

/* ---- the thread ---------------------------------------------------------- */

static void take_queue(struct sshnode *n, bool *stopping)
{
	struct sshop **tail = &n->active;
	bool was_idle = n->active == NULL;

	while (*tail)
		tail = &(*tail)->next;
	pthread_mutex_lock(&n->mu);
	*tail = n->queue; /* in the order they were handed over */
	n->queue = NULL;
	/* While idle the socket is not read, so keepalive replies sit unread:
	 * the silence clock starts when work starts. */
	if (was_idle && n->active)
		n->last_rx_ms = deadline_now_ms();
	*stopping = n->stopping;
	pthread_mutex_unlock(&n->mu);
}

/* Hands finished operations back; a caller is woken once, when the last of
 * its operations is done (never for another caller's). */
static void report_done(struct sshnode *n)
{
	struct sshop **pp = &n->active;

	pthread_mutex_lock(&n->mu);
	while (*pp) {
		struct sshop *op = *pp;
		if (op->phase == PH_DONE && op->internal) {
			*pp = op->next;
			if (op->outcome != SSHOP_EXITED || op->exit_status != 0)
				log_msg(LOG_WARN, "node=%s evt=ssh.kill_failed exit=%d", n->name,
				        op->exit_status);
			sshop_clear(op);
			free((char *)op->cmdline);
			free(op);
		} else if (op->phase == PH_DONE) {
			*pp = op->next;
			op->next = NULL;
			op->end_ms = deadline_now_ms();
			op->done = true;
			if (--op->waiter->left == 0)
				pthread_cond_signal(&op->waiter->cv);
		} else {
			pp = &op->next;
		}
	}
	pthread_mutex_unlock(&n->mu);
}

static void connect_if_needed(struct sshnode *n)
{
	char lq[512];
	enum sshop_error kind;
	char err[512];
	bool waiting = false;

	if (n->s)
		return;
	for (struct sshop *op = n->active; op; op = op->next)
		waiting |= op->phase == PH_QUEUED;
	if (!waiting || node_connect(n, &kind, err, sizeof(err)) == 0)
		return;
	log_msg(LOG_WARN, "node=%s evt=ssh.connect_failed reason=%s", n->name,
	        log_quote(err, lq, sizeof(lq)));
	for (struct sshop *op = n->active; op; op = op->next) {
		if (op->phase == PH_QUEUED) {
			op_fail(op, SSHOP_FAILED, kind, "%s", err);
			op->phase = PH_DONE;
		}
	}
}

/* Blocks until the socket or the wake pipe is ready, or about 100 ms (1 s
 * when idle).  Not at all when work was handed over meanwhile.  Callers
 * write to the pipe only while the thread is here, once. */
static void wait_io(struct sshnode *n)
{
	struct pollfd pfd[2] = {{n->wake[0], POLLIN, 0}, {-1, 0, 0}};
	int timeout = 100;
	bool woken;

	if (n->s && n->active) {
		int dir = libssh2_session_block_directions(n->s);
		pfd[1].fd = n->fd;
		pfd[1].events = POLLIN;
		if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			pfd[1].events |= POLLOUT;
	}
	if (n->s && n->txlen > 0) {
		pfd[1].fd = n->fd;
		pfd[1].events |= POLLOUT;
	}
	if (n->active == NULL)
		timeout = 1000;
	pthread_mutex_lock(&n->mu);
	if (n->queue != NULL || n->stopping) {
		pthread_mutex_unlock(&n->mu);
		return;
	}
	n->polling = true;
	pthread_mutex_unlock(&n->mu);
	poll(pfd, 2, timeout);
	pthread_mutex_lock(&n->mu);
	n->polling = false;
	woken = n->woken;
	n->woken = false;
	pthread_mutex_unlock(&n->mu);
	/* Bytes may have come since the last EAGAIN: read the socket again,
	 * unless poll() just saw it without any. */
	if (pfd[1].fd < 0 || (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
		n->rx_dry = false;
	if (pfd[1].revents != 0 || (pfd[0].revents & POLLIN) == 0)
		n->rx_gen++; /* the socket, or the timeout: every operation looks */
	if (woken || (pfd[0].revents & POLLIN)) {
		char drainbuf[64];
		if (read(n->wake[0], drainbuf, sizeof(drainbuf)) < 0 && errno != EAGAIN)
			log_msg(LOG_WARN, "node=%s evt=ssh.wake_failed err=%d", n->name, errno);
	}
}

/* Makes the thread look at its queue: a byte through the pipe when it
 * sleeps in poll() and none is on its way yet.  Called with n->mu held. */
static bool wake_needed(struct sshnode *n)
{
	if (!n->polling || n->woken)
		return false;
	n->woken = true;
	return true;
}

static void wake_thread(struct sshnode *n)
{
	if (write(n->wake[1], "x", 1) < 0 && errno != EAGAIN)
		log_msg(LOG_WARN, "node=%s evt=ssh.wake_failed err=%d", n->name, errno);
}

static void keepalive(struct sshnode *n, int64_t now)
{
	int next = 0;

	if (n->s == NULL || n->sender)
		return;
	if (libssh2_keepalive_send(n->s, &next) < 0 &&
	    libssh2_session_last_errno(n->s) != LIBSSH2_ERROR_EAGAIN) {
		session_lost(n, "sending a keepalive failed");
		return;
	}
	/* Keepalives ask for a reply: a peer silent for three intervals while
	 * channels are open is gone. */
	if (n->active && now - n->last_rx_ms > 3000LL * n->keepalive_s + 1000)
		session_lost(n, "no reply to keepalives");
}

/* Whether op may sit out this pass: it waits for the node's answer, it
 * looked once since anything arrived and found nothing, and no packet is
 * half sent (then every call is held to one order anyway).  Operations
 * that wait for a channel slot, or send, always go. */
static bool skip_dry(const struct sshnode *n, const struct sshop *op)
{
	switch (op->phase) {
	case PH_OPEN:
	case PH_EXEC:
	case PH_READ:
	case PH_WAITCLOSE:
		return op->dry && op->dry_gen == n->rx_gen && n->sender == NULL;
	default:
		return false;
	}
}

static void *node_main(void *arg)
{
	struct sshnode *n = arg;
	bool stopping = false;

	for (;;) {
		take_queue(n, &stopping);
		if (stopping) {
			for (struct sshop *op = n->active; op; op = op->next)
				if (op->phase != PH_DONE) {
					op_fail(
					    op, op->phase >= PH_EXEC ? SSHOP_LOST : SSHOP_FAILED,
					    SSHOP_ERR_LOST, "%s", "the transport was shut down");
					op->phase = PH_DONE;
				}
			report_done(n);
			break;
		}
		connect_if_needed(n);
		int progress;
		do {
			int64_t now = deadline_now_ms();
			progress = 0;
			n->fatal = false;
			for (struct sshop *op = n->active; op && !n->fatal; op = op->next) {
				/* libssh2 holds one outgoing packet per session: while
				 * one call's packet is half sent, no other call may
				 * start a packet of its own. */
				if (n->sender && n->sender != op)
					continue;
				if (skip_dry(n, op))
					continue;
				bool before = outbound_pending(n);
				unsigned long gen = n->rx_gen;
				int moved = advance(n, op, now);
				progress |= moved;
				op->dry = moved == 0 && n->rx_gen == gen;
				op->dry_gen = gen;
				bool after = outbound_pending(n);
				if (n->starter == op && op->phase != PH_OPEN &&
				    op->phase != PH_EXEC)
					n->starter = NULL;
				if (after && !before && op->phase != PH_DONE)
					n->sender = op;
				else if (n->sender == op && (!after || op->phase == PH_DONE))
					n->sender = NULL;
			}
			if (n->fatal)
				session_lost(n, n->fatal_msg);
		} while (progress && n->s);
		keepalive(n, deadline_now_ms());
		/* What the pass gathered goes out together. */
		if (n->s && tx_flush(n) < 0)
			session_lost(n, n->fatal_msg);
		report_done(n);
		wait_io(n);
	}
	session_drop(n);
	return NULL;
}

/* ---- the API --------------------------------------------------------------- */

struct sshnode *sshnode_new(const struct sshnode_params *p)
{
	struct sshnode *n = xcalloc(1, sizeof(*n));

	n->name = xstrdup(p->name);
	n->address = xstrdup(p->address);
	n->user = xstrdup(p->user);
	n->pinned = dup_or_null(p->pinned);
	n->private_key = xstrdup(p->private_key);
	n->public_key = dup_or_null(p->public_key);
	n->known_hosts = dup_or_null(p->known_hosts);
	n->port = p->port > 0 ? p->port : 22;
	n->connect_timeout_ms = p->connect_timeout_ms;
	n->keepalive_s = p->keepalive_s;
	n->max_channels = p->max_channels;
	n->fd = -1;
	n->up_fd = -1;
	n->tx = xmalloc(SSHNODE_TX_BYTES);
	pthread_mutex_init(&n->mu, NULL);
	if (pipe2(n->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		fatal("pipe2: %s", strerror(errno));
	if (pthread_create(&n->thread, NULL, node_main, n) != 0)
		fatal("pthread_create: %s", strerror(errno));
	return n;
}

void sshnode_run(struct sshnode *n, struct sshop **ops, size_t count)
{
	int64_t now = deadline_now_ms();
	struct sshnode_wait w = {.left = count};
	struct sshop **tail;
	bool wake;

	if (count == 0)
		return;
	pthread_cond_init(&w.cv, NULL);
	pthread_mutex_lock(&n->mu);
	tail = &n->queue;
	while (*tail)
		tail = &(*tail)->next;
	for (size_t i = 0; i < count; i++) {
		struct sshop *op = ops[i];
		op->phase = PH_QUEUED;
		op->done = false;
		op->dry = false;
		op->eof_early = EOF_UNTRIED;
		op->outcome = SSHOP_EXITED;
		op->exit_status = -1;
		op->exit_signal = 0;
		op->signame[0] = '\0';
		op->error = SSHOP_ERR_NONE;
		op->errmsg[0] = '\0';
		op->ch = NULL;
		op->open_retries = 0;
		op->in_off = 0;
		op->start_ms = now;
		buf_init(&op->out, op->out_cap);
		buf_init(&op->err, op->err_cap);
		op->waiter = &w;
		op->next = NULL;
		*tail = op;
		tail = &op->next;
	}
	wake = wake_needed(n);
	pthread_mutex_unlock(&n->mu);
	if (wake)
		wake_thread(n);
	pthread_mutex_lock(&n->mu);
	/* The thread bounds every operation by its deadline and signals once
	 * all of these are done; the timed wait only keeps this loop honest. */
	while (w.left > 0)
		deadline_cond_wait(&w.cv, &n->mu, deadline_now_ms() + 1000);
	pthread_mutex_unlock(&n->mu);
	pthread_cond_destroy(&w.cv);
}

bool sshnode_up(struct sshnode *n)
{
	bool up;

	pthread_mutex_lock(&n->mu);
	up = n->up_fd >= 0 && !fd_peer_closed(n->up_fd);
	pthread_mutex_unlock(&n->mu);
	return up;
}

void sshnode_stats(struct sshnode *n, struct sshnode_stats *out)
{
	pthread_mutex_lock(&n->mu);
	*out = n->st;
	pthread_mutex_unlock(&n->mu);
}

void sshnode_free(struct sshnode *n)
{
	if (n == NULL)
		return;
	pthread_mutex_lock(&n->mu);
	n->stopping = true;
	pthread_mutex_unlock(&n->mu);
	wake_thread(n); /* whether or not it polls yet: it stops either way */
	pthread_join(n->thread, NULL);
	close(n->wake[0]);
	close(n->wake[1]);
	pthread_mutex_destroy(&n->mu);
	free(n->name);
	free(n->address);
	free(n->user);
	free(n->pinned);
	free(n->private_key);
	free(n->public_key);
	free(n->known_hosts);
	free(n->tx);
	free(n);
}

void sshop_clear(struct sshop *op)
{
	buf_free(&op->out);
	buf_free(&op->err);
}
