/* sidedoor.c -- the side door of this host, tried for every node. */
#include "hook/sidedoor.h"

#include "lib/buf.h"
#include "lib/deadline.h"
#include "lib/readfile.h"
#include "lib/sshkey.h"
#include "lib/xalloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_MAX  ((size_t)1 << 20) /* a file read for keys or tokens */
#define FILES_MAX 4000              /* files looked at for tokens */
#define OUT_MAX   (256 * 1024)      /* a child's output kept */

extern char **environ;

const char *sidedoor_status_name(enum sidedoor_status s)
{
	switch (s) {
	case SIDEDOOR_CLOSED:
		return "closed";
	case SIDEDOOR_OPEN:
		return "open";
	case SIDEDOOR_WALL:
		return "wall";
	case SIDEDOOR_UNKNOWN:
		return "unknown";
	}
	return "unknown";
}

struct run {
	const struct sidedoor_opts *o;
	sidedoor_fn fn;
	void *ctx;
	int open;
	const char *home;
	char tmp[64]; /* the public halves handed to ssh */
	int timeout_ms;
};

static void report(struct run *r, enum sidedoor_status st, const char *subject, const char *fix,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void report(struct run *r, enum sidedoor_status st, const char *subject, const char *fix,
                   const char *fmt, ...)
{
	char detail[1024];
	va_list ap;
	struct sidedoor_finding f = {st, subject, detail, fix};

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (st == SIDEDOOR_OPEN || st == SIDEDOOR_UNKNOWN)
		r->open++;
	r->fn(r->ctx, &f);
}

/* ~/x for a path under the home directory, for messages. */
static const char *tilde(const struct run *r, const char *path, char *buf, size_t len)
{
	size_t hl = strlen(r->home);

	if (strncmp(path, r->home, hl) == 0 && path[hl] == '/') {
		snprintf(buf, len, "~%s", path + hl);
		return buf;
	}
	return path;
}

/* ---------------------------------------------------------------- children */

/* Runs argv with HOME set to the checked home, stdin from /dev/null; its
 * stdout into out and stderr into err (each capped), for at most
 * timeout_ms.  When kill_on appears in its stderr it is ended at once.
 * Returns its exit status, or -1 when it did not finish (killed). */
static int run_capture(const struct run *r, char *const argv[], int timeout_ms, struct buf *out,
                       struct buf *err, const char *kill_on)
{
	int po[2], pe[2], status = -1;
	pid_t pid;
	int64_t deadline = deadline_now_ms() + timeout_ms;
	bool done_o = false, done_e = false, killed = false;

	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		setenv("HOME", r->home, 1);
		setenv("LC_ALL", "C", 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while (!done_o || !done_e) {
		struct pollfd p[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
		long left = (long)(deadline - deadline_now_ms());
		char chunk[4096];

		if (left <= 0 || poll(p, 2, (int)left) <= 0) {
			killed = true;
			break;
		}
		for (int i = 0; i < 2; i++) {
			struct buf *b = i == 0 ? out : err;
			bool *done = i == 0 ? &done_o : &done_e;
			ssize_t got;

			if (*done || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(p[i].fd, chunk, sizeof(chunk));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				*done = true;
				continue;
			}
			if (b->len < OUT_MAX)
				buf_append(b, chunk, (size_t)got);
		}
		if (kill_on != NULL && err->len > 0 && strstr(buf_str(err), kill_on) != NULL) {
			killed = true;
			break;
		}
	}
	close(po[0]);
	close(pe[0]);
	if (killed)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) < 0 || killed)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Whether a TCP connection to address:port is accepted within timeout_ms. */
static bool port_answers(const char *address, int port, int timeout_ms)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV},
	                *res = NULL;
	char ps[16];
	bool ok = false;

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(address, ps, &hints, &res) != 0)
		return false;
	for (struct addrinfo *ai = res; ai && !ok; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		struct pollfd p;
		int e = 0;
		socklen_t el = sizeof(e);

		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			ok = true;
		} else if (errno == EINPROGRESS) {
			p = (struct pollfd){fd, POLLOUT, 0};
			if (poll(&p, 1, timeout_ms) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0)
				ok = true;
		}
		close(fd);
	}
	freeaddrinfo(res);
	return ok;
}

/* ---------------------------------------------------------------- identities */

struct ident {
	struct sshkey_pub key;
	char *source; /* "~/.ssh/id_ed25519", "the running ssh-agent" */
	char *cert;   /* a certificate beside it, or NULL */
};

struct idents {
	struct ident *v;
	size_t n, cap;
	char **seen_paths; /* key files already read */
	size_t nseen;
};

static void ident_add(struct idents *l, struct sshkey_pub *k, const char *source, const char *cert)
{
	for (size_t i = 0; i < l->n; i++)
		if (sshkey_same(&l->v[i].key, k)) {
			if (cert != NULL && l->v[i].cert == NULL)
				l->v[i].cert = xstrdup(cert);
			sshkey_clear(k);
			return;
		}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].key = *k;
	l->v[l->n].source = xstrdup(source);
	l->v[l->n].cert = cert ? xstrdup(cert) : NULL;
	l->n++;
	memset(k, 0, sizeof(*k));
}

/* The public half of the private key in path: from the file itself, from
 * path.pub, or from ssh-keygen -y (an unencrypted PEM key). */
static int public_half(struct run *r, const char *path, const char *text, size_t len,
                       struct sshkey_pub *k, char *why, size_t whylen)
{
	char *pubpath = xasprintf("%s.pub", path), err[160];
	size_t pl;
	char *pub;
	int rc = -1;

	if (sshkey_public_of_private(text, len, k, err, sizeof(err)) == 0) {
		free(pubpath);
		return 0;
	}
	pub = readfile(pubpath, FILE_MAX, &pl, why, whylen);
	if (pub != NULL && sshkey_parse_line(pub, pl, k) == 0)
		rc = 0;
	free(pub);
	if (rc < 0) {
		struct buf out = BUF_INIT, e = BUF_INIT;
		char *argv[] = {"ssh-keygen", "-y", "-P", "", "-f", (char *)path, NULL};

		if (run_capture(r, argv, 5000, &out, &e, NULL) == 0 &&
		    sshkey_parse_line(buf_str(&out), out.len, k) == 0)
			rc = 0;
		buf_free(&out);
		buf_free(&e);
	}
	if (rc < 0)
		snprintf(why, whylen,
		         "%s, no readable %s.pub, and no passphrase-free key for "
		         "ssh-keygen -y",
		         err, path);
	free(pubpath);
	return rc;
}

/* A key file named by ~/.ssh, ~/.ssh/config or ssh's defaults. */
static void key_file(struct run *r, struct idents *l, const char *path)
{
	size_t len;
	char err[256], why[512], tb[600], *certpath;
	char *text;
	struct sshkey_pub k;
	struct stat st;

	for (size_t i = 0; i < l->nseen; i++)
		if (strcmp(l->seen_paths[i], path) == 0)
			return;
	l->seen_paths = xrealloc(l->seen_paths, (l->nseen + 1) * sizeof(char *));
	l->seen_paths[l->nseen++] = xstrdup(path);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	text = readfile(path, FILE_MAX, &len, err, sizeof(err));
	if (text == NULL || !sshkey_is_private(text, len)) {
		free(text);
		return;
	}
	if (public_half(r, path, text, len, &k, why, sizeof(why)) < 0) {
		report(
		    r, SIDEDOOR_UNKNOWN, "this host",
		    "delete the key, or put its public half beside it (KEY.pub) so the check "
		    "can offer it",
		    "%s is a private key whose public half cannot be read (%s): the check cannot "
		    "tell whether a node accepts it",
		    tilde(r, path, tb, sizeof(tb)), why);
		free(text);
		return;
	}
	free(text);
	certpath = xasprintf("%s-cert.pub", path);
	ident_add(l, &k, tilde(r, path, tb, sizeof(tb)),
	          access(certpath, R_OK) == 0 ? certpath : NULL);
	free(certpath);
}

/* ~ and %d (home), %u (user), %% in an IdentityFile; NULL for others. */
static char *expand_path(const struct run *r, const char *p)
{
	struct buf b = BUF_INIT;
	const char *user = getenv("USER");
	char *out;

	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		buf_puts(&b, r->home);
		p++;
	}
	for (; *p; p++) {
		if (*p != '%') {
			buf_putc(&b, *p);
			continue;
		}
		p++;
		if (*p == 'd')
			buf_puts(&b, r->home);
		else if (*p == 'u')
			buf_puts(&b, user ? user : "root");
		else if (*p == '%')
			buf_putc(&b, '%');
		else {
			buf_free(&b);
			return NULL; /* %h, %r ...: per connection, ssh -G resolves them */
		}
	}
	if (b.len == 0 || buf_str(&b)[0] != '/') {
		buf_free(&b);
		return NULL;
	}
	out = xstrdup(buf_str(&b));
	buf_free(&b);
	return out;
}

/* Every private key in ~/.ssh (any file name). */
static void ssh_dir(struct run *r, struct idents *l)
{
	char *dir = xasprintf("%s/.ssh", r->home);
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		char *p;

		if (e->d_name[0] == '.' || strstr(e->d_name, ".pub") != NULL)
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		key_file(r, l, p);
		free(p);
	}
	if (d != NULL)
		closedir(d);
	free(dir);
}

/* IdentityFile lines of ~/.ssh/config (every Host block). */
static void ssh_config(struct run *r, struct idents *l)
{
	char *path = xasprintf("%s/.ssh/config", r->home), err[256];
	size_t len;
	char *text = readfile(path, FILE_MAX, &len, err, sizeof(err));

	for (char *line = text, *nl; line && *line; line = nl) {
		char *k, *v, *x;

		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		k = line + strspn(line, " \t");
		if (strncasecmp(k, "identityfile", 12) != 0 || !strchr(" \t=", k[12]))
			continue;
		v = k + 12 + strspn(k + 12, " \t=");
		if (*v == '"') {
			v++;
			if (strchr(v, '"'))
				*strchr(v, '"') = '\0';
		}
		v[strcspn(v, "\r")] = '\0';
		for (size_t n = strlen(v); n > 0 && isspace((unsigned char)v[n - 1]); n--)
			v[n - 1] = '\0';
		if ((x = expand_path(r, v)) != NULL) {
			key_file(r, l, x);
			free(x);
		}
	}
	free(text);
	free(path);
}

/* What ssh itself would offer this node: ssh -G's identityfile lines (its
 * defaults, and the Host blocks that match the address or the name). */
static void ssh_g(struct run *r, struct idents *l, const char *host, int port)
{
	char ps[16];
	char *argv[] = {"ssh", "-G", "-p", ps, "--", (char *)host, NULL};
	struct buf out = BUF_INIT, err = BUF_INIT;

	snprintf(ps, sizeof(ps), "%d", port);
	if (run_capture(r, argv, 5000, &out, &err, NULL) == 0)
		for (char *line = out.len ? (char *)buf_str(&out) : NULL, *nl; line && *line;
		     line = nl) {
			nl = strchr(line, '\n');
			if (nl)
				*nl++ = '\0';
			if (strncmp(line, "identityfile ", 13) == 0) {
				char *x = expand_path(r, line + 13);

				if (x != NULL) {
					key_file(r, l, x);
					free(x);
				}
			}
		}
	buf_free(&out);
	buf_free(&err);
}

/* The keys of the running ssh-agent (ssh-add -L). */
static void agent_keys(struct run *r, struct idents *l)
{
	char *argv[] = {"ssh-add", "-L", NULL};
	struct buf out = BUF_INIT, err = BUF_INIT;
	const char *sock = getenv("SSH_AUTH_SOCK");

	if (sock == NULL || sock[0] == '\0')
		return;
	if (run_capture(r, argv, 5000, &out, &err, NULL) == 0)
		for (char *line = out.len ? (char *)buf_str(&out) : NULL, *nl; line && *line;
		     line = nl) {
			struct sshkey_pub k;
			char src[300];

			nl = strchr(line, '\n');
			if (nl)
				*nl++ = '\0';
			if (sshkey_parse_line(line, strlen(line), &k) < 0)
				continue;
			snprintf(src, sizeof(src), "the running ssh-agent's key%s%s",
			         k.comment[0] ? " " : "", k.comment);
			ident_add(l, &k, src, NULL);
		}
	buf_free(&out);
	buf_free(&err);
}

static void idents_free(struct idents *l)
{
	for (size_t i = 0; i < l->n; i++) {
		sshkey_clear(&l->v[i].key);
		free(l->v[i].source);
		free(l->v[i].cert);
	}
	for (size_t i = 0; i < l->nseen; i++)
		free(l->seen_paths[i]);
	free(l->seen_paths);
	free(l->v);
}

/* ---------------------------------------------------------------- the question to sshd */

enum probe { PROBE_REFUSED, PROBE_ACCEPTED, PROBE_LOGGED_IN, PROBE_HOSTKEY, PROBE_FAILED };

/* Offers key k (its public half only) to t's sshd as t's user. */
static enum probe probe(struct run *r, const struct sidedoor_target *t, const struct ident *id,
                        char *why, size_t whylen)
{
	char *line = sshkey_public_line(&id->key), *kf = xasprintf("%s/key", r->tmp);
	char port[16], idopt[600], certopt[600];
	int fd;
	enum probe res = PROBE_FAILED;
	struct buf out = BUF_INIT, err = BUF_INIT;

	why[0] = '\0';
	fd = open(kf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, line, strlen(line)) < 0 || write(fd, "\n", 1) != 1) {
		snprintf(why, whylen, "cannot write %s: %s", kf, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	snprintf(port, sizeof(port), "%d", t->ssh_port);
	snprintf(idopt, sizeof(idopt), "IdentityFile=%s", kf);
	snprintf(certopt, sizeof(certopt), "CertificateFile=%s", id->cert ? id->cert : "none");
	{
		/* no configuration, no agent, no private key, no forwarding, no
		 * command (-N): a key the server accepts cannot be signed with,
		 * so the session never authenticates */
		char *argv[] = {"ssh",
		                "-F",
		                "/dev/null",
		                "-v",
		                "-N",
		                "-o",
		                "BatchMode=yes",
		                "-o",
		                "PreferredAuthentications=publickey",
		                "-o",
		                "PasswordAuthentication=no",
		                "-o",
		                "KbdInteractiveAuthentication=no",
		                "-o",
		                "IdentitiesOnly=yes",
		                "-o",
		                "IdentityAgent=none",
		                "-o",
		                idopt,
		                "-o",
		                certopt,
		                "-o",
		                "StrictHostKeyChecking=no",
		                "-o",
		                "UserKnownHostsFile=/dev/null",
		                "-o",
		                "GlobalKnownHostsFile=/dev/null",
		                "-o",
		                "ConnectTimeout=5",
		                "-o",
		                "ControlMaster=no",
		                "-o",
		                "ControlPath=none",
		                "-o",
		                "ClearAllForwardings=yes",
		                "-o",
		                "ForwardAgent=no",
		                "-o",
		                "PermitLocalCommand=no",
		                "-o",
		                "RequestTTY=no",
		                "-o",
		                "ProxyCommand=none",
		                "-o",
		                "ProxyJump=none",
		                "-p",
		                port,
		                "-l",
		                (char *)t->ssh_user,
		                "--",
		                (char *)t->address,
		                NULL};

		run_capture(r, argv, r->timeout_ms + 3000, &out, &err, "Authenticated to");
	}
	{
		const char *e = err.len ? buf_str(&err) : "", *hk = strstr(e, "Server host key: ");

		if (t->pin != NULL && hk != NULL) {
			const char *fp = strstr(hk, "SHA256:");
			size_t pl = strlen(t->pin);

			if (fp == NULL || strncmp(fp, t->pin, pl) != 0 ||
			    (fp[pl] != '\n' && fp[pl] != '\r' && fp[pl] != '\0')) {
				snprintf(why, whylen, "its host key is not the one pinned (%s)",
				         t->pin);
				res = PROBE_HOSTKEY;
				goto out;
			}
		}
		if (strstr(e, "Authenticated to") != NULL)
			res = PROBE_LOGGED_IN;
		else if (strstr(e, "Server accepts key") != NULL)
			res = PROBE_ACCEPTED;
		else if (strstr(e, "Permission denied") != NULL ||
		         strstr(e, "Too many authentication failures") != NULL ||
		         strstr(e, "No more authentication methods") != NULL)
			res = PROBE_REFUSED;
		else {
			const char *last = strrchr(e, '\n');
			while (last && last > e && last[1] == '\0') {
				const char *p = last - 1;
				while (p > e && *p != '\n')
					p--;
				last = p;
			}
			snprintf(why, whylen, "%.200s", last ? last + (last[0] == '\n') : e);
		}
	}
out:
	if (access(kf, F_OK) == 0)
		unlink(kf);
	buf_free(&out);
	buf_free(&err);
	free(line);
	free(kf);
	return res;
}

static void ssh_doors(struct run *r, const struct sidedoor_target *t, const struct idents *l)
{
	char why[300], fp[128], fix[600];
	int accepted = 0;

	if (!port_answers(t->address, t->ssh_port, r->timeout_ms)) {
		report(r, SIDEDOOR_CLOSED, t->slug, NULL,
		       "its SSH port %s:%d does not answer from this host: no key here can log in "
		       "(the second wall holds)",
		       t->address, t->ssh_port);
		return;
	}
	report(r, SIDEDOOR_WALL, t->slug,
	       "let the node's SSH port accept only airlockd's and the cluster's addresses (its "
	       "firewall, or sshd's ListenAddress and Match Address), so no other host gets as "
	       "far as offering a key",
	       "its SSH port %s:%d answers from this host: the second wall is missing", t->address,
	       t->ssh_port);
	for (size_t i = 0; i < l->n; i++) {
		const struct ident *id = &l->v[i];
		enum probe p = probe(r, t, id, why, sizeof(why));

		sshkey_fingerprint(&id->key, fp, sizeof(fp));
		snprintf(
		    fix, sizeof(fix),
		    "delete the key from this host, or remove it from %s's authorized_keys for "
		    "%s (`airlock doctor` on airlockd's host lists every key each node accepts)",
		    t->slug, t->ssh_user);
		switch (p) {
		case PROBE_ACCEPTED:
		case PROBE_LOGGED_IN:
			accepted++;
			report(r, SIDEDOOR_OPEN, t->slug, fix,
			       "this host logs in to %s as %s with %s (%s%s)%s", t->slug,
			       t->ssh_user, id->source, fp,
			       id->cert ? ", with its certificate" : "",
			       p == PROBE_LOGGED_IN ? ": the node let this host in without a key"
			                            : "");
			break;
		case PROBE_REFUSED:
			break;
		case PROBE_HOSTKEY:
		case PROBE_FAILED:
			report(
			    r, SIDEDOOR_UNKNOWN, t->slug,
			    "look at the node's sshd log and at the network between; run the check "
			    "again",
			    "cannot tell whether %s logs in to %s: %s", id->source, t->slug,
			    why[0] ? why : "ssh gave no answer");
			break;
		}
	}
	if (accepted == 0 && l->n > 0)
		report(r, SIDEDOOR_CLOSED, t->slug, NULL,
		       "none of this host's %zu SSH key(s) logs in to %s as %s", l->n, t->slug,
		       t->ssh_user);
}

/* ---------------------------------------------------------------- tokens and passwords */

/* A Proxmox API token: user@realm!tokenid, then = or : and its UUID secret. */
static bool pve_token(const char *s, size_t len, char *id, size_t idlen)
{
	for (size_t i = 0; i < len; i++) {
		const char *bang;
		size_t st, e, u;

		if (s[i] != '@')
			continue;
		for (st = i;
		     st > 0 && (isalnum((unsigned char)s[st - 1]) || strchr("._-", s[st - 1]));)
			st--;
		bang = memchr(s + i, '!', len - i > 64 ? 64 : len - i);
		if (bang == NULL || st == i)
			continue;
		e = (size_t)(bang - s) + 1;
		while (e < len && (isalnum((unsigned char)s[e]) || strchr("._-", s[e])))
			e++;
		if (e >= len || (s[e] != '=' && s[e] != ':' && s[e] != ' ' && s[e] != '"'))
			continue;
		u = e + 1;
		while (u < len && (s[u] == ' ' || s[u] == '"' || s[u] == '\''))
			u++;
		/* 8-4-4-4-12 hex */
		if (len - u >= 36 && s[u + 8] == '-' && s[u + 13] == '-' && s[u + 18] == '-' &&
		    s[u + 23] == '-' && strspn(s + u, "0123456789abcdefABCDEF-") >= 36) {
			snprintf(id, idlen, "%.*s", (int)(e - st > 120 ? 120 : e - st), s + st);
			return true;
		}
	}
	return memmem(s, len, "PVEAPIToken=", 12) != NULL &&
	       (snprintf(id, idlen, "PVEAPIToken"), true);
}

static bool credential_name(const char *name, size_t nl)
{
	static const char *const prefixes[] = {
	    "PROXMOX",    "PVE",   "PM_", "TF_VAR_PM", "TF_VAR_PROXMOX",
	    "TF_VAR_PVE", "ZERTO", "ZVM", NULL};
	static const char *const kinds[] = {"TOKEN",  "SECRET", "PASS", "PASSWORD",
	                                    "TICKET", "KEY",    NULL};
	bool pre = false, kind = false;
	char up[128];

	if (nl >= sizeof(up))
		return false;
	for (size_t i = 0; i < nl; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[nl] = '\0';
	for (size_t i = 0; prefixes[i] && !pre; i++)
		pre = strncmp(up, prefixes[i], strlen(prefixes[i])) == 0;
	for (size_t i = 0; kinds[i] && !kind; i++)
		kind = strstr(up, kinds[i]) != NULL;
	return pre && kind;
}

static void env_credentials(struct run *r)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char id[160];
		size_t nl;

		if (eq == NULL)
			continue;
		nl = (size_t)(eq - *e);
		if (nl == 7 && strncmp(*e, "SSHPASS", 7) == 0)
			report(
			    r, SIDEDOOR_UNKNOWN, "this host",
			    "unset SSHPASS where the agent runs (its shell profile, the service's "
			    "environment)",
			    "$SSHPASS holds a password for sshpass: the check never sends a "
			    "password, "
			    "so it cannot tell which machine it opens");
		else if (pve_token(eq + 1, strlen(eq + 1), id, sizeof(id)))
			report(r, SIDEDOOR_OPEN, "this host",
			       "unset it where the agent runs, and revoke the token on the cluster "
			       "(pveum user token remove)",
			       "$%.*s holds a Proxmox API token (%s): with it this host calls the "
			       "nodes' API",
			       (int)nl, *e, id);
		else if (credential_name(*e, nl) && eq[1] != '\0')
			report(r, SIDEDOOR_OPEN, "this host",
			       "unset it where the agent runs, and change the credential",
			       "$%.*s looks like a Proxmox or Zerto credential (its name says so): "
			       "with "
			       "it this host can call their API",
			       (int)nl, *e);
	}
}

/* A file where clients keep what opens a node's API: a Proxmox token, a
 * ~/.netrc entry for a node. */
static void file_credentials(struct run *r, const char *path, const struct sidedoor_target *t,
                             size_t nt)
{
	char err[256], id[160], tb[600];
	size_t len;
	char *text = readfile(path, FILE_MAX, &len, err, sizeof(err));
	const char *base = strrchr(path, '/');

	if (text == NULL)
		return;
	if (pve_token(text, len, id, sizeof(id)))
		report(r, SIDEDOOR_OPEN, "this host",
		       "delete the token from the file, and revoke it on the cluster (pveum user "
		       "token "
		       "remove)",
		       "%s holds a Proxmox API token (%s): with it this host calls the nodes' API",
		       tilde(r, path, tb, sizeof(tb)), id);
	if (base != NULL && strcmp(base + 1, ".netrc") == 0)
		for (size_t i = 0; i < nt; i++) {
			char needle[300];

			snprintf(needle, sizeof(needle), "machine %s", t[i].address);
			if (memmem(text, len, needle, strlen(needle)) != NULL)
				report(
				    r, SIDEDOOR_OPEN, t[i].slug,
				    "remove that machine's entry from ~/.netrc",
				    "~/.netrc holds a login for %s (%s): curl -n and others use it",
				    t[i].slug, t[i].address);
		}
	free(text);
}

/* The home directory's own files and ~/.config (two levels), and the working
 * directory's top level: where clients and tools keep credentials. */
static void walk_files(struct run *r, const char *dir, int depth, int *budget,
                       const struct sidedoor_target *t, size_t nt)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d != NULL && *budget > 0 && (e = readdir(d)) != NULL) {
		char *p;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, ".ssh") == 0)
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		if (lstat(p, &st) == 0) {
			if (S_ISREG(st.st_mode) && st.st_size > 0 &&
			    (size_t)st.st_size <= FILE_MAX) {
				(*budget)--;
				file_credentials(r, p, t, nt);
			} else if (S_ISDIR(st.st_mode) && depth > 0) {
				walk_files(r, p, depth - 1, budget, t, nt);
			}
		}
		free(p);
	}
	if (d != NULL)
		closedir(d);
}

/* ---------------------------------------------------------------- all of it */

int sidedoor_check(const struct sidedoor_opts *o, sidedoor_fn fn, void *ctx)
{
	struct run r = {
	    .o = o, .fn = fn, .ctx = ctx, .timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 5000};
	struct idents ids = {0};
	int budget = FILES_MAX;
	char *cfg;

	r.home = o->home ? o->home : getenv("HOME");
	if (r.home == NULL || r.home[0] != '/') {
		report(&r, SIDEDOOR_UNKNOWN, "this host", "set HOME to the agent's home directory",
		       "no home directory to look in (HOME is not set)");
		return r.open;
	}
	snprintf(r.tmp, sizeof(r.tmp), "/tmp/airlock-sidedoor.XXXXXX");
	if (mkdtemp(r.tmp) == NULL) {
		report(&r, SIDEDOOR_UNKNOWN, "this host", "make /tmp writable",
		       "cannot make a directory for the keys' public halves: %s", strerror(errno));
		return r.open;
	}
	/* every key this host could offer */
	ssh_dir(&r, &ids);
	ssh_config(&r, &ids);
	for (size_t i = 0; i < o->ntargets; i++) {
		const char *name = strchr(o->targets[i].slug, ':');

		ssh_g(&r, &ids, o->targets[i].address, o->targets[i].ssh_port);
		if (name != NULL)
			ssh_g(&r, &ids, name + 1, o->targets[i].ssh_port);
	}
	agent_keys(&r, &ids);
	if (ids.n == 0)
		report(
		    &r, SIDEDOOR_CLOSED, "this host", NULL,
		    "no SSH key: none in ~/.ssh, none named by ~/.ssh/config or ssh's defaults, no "
		    "ssh-agent with keys");
	else
		for (size_t i = 0; i < o->ntargets; i++)
			ssh_doors(&r, &o->targets[i], &ids);
	/* API credentials */
	env_credentials(&r);
	walk_files(&r, r.home, 0, &budget, o->targets, o->ntargets);
	cfg = xasprintf("%s/.config", r.home);
	walk_files(&r, cfg, 2, &budget, o->targets, o->ntargets);
	free(cfg);
	walk_files(&r, ".", 0, &budget, o->targets, o->ntargets);
	/* the API port: the second wall */
	for (size_t i = 0; i < o->ntargets; i++) {
		const struct sidedoor_target *t = &o->targets[i];

		if (port_answers(t->address, t->api_port, r.timeout_ms))
			report(&r, SIDEDOOR_WALL, t->slug,
			       "let the node's API port accept only airlockd's and the cluster's "
			       "addresses (its firewall)",
			       "its API port %s:%d answers from this host: anyone here with a "
			       "password "
			       "or token can call it",
			       t->address, t->api_port);
		else
			report(&r, SIDEDOOR_CLOSED, t->slug, NULL,
			       "its API port %s:%d does not answer from this host", t->address,
			       t->api_port);
	}
	rmdir(r.tmp);
	idents_free(&ids);
	return r.open;
}
