/* reachprogs.c -- where each remote-access program goes: ssh and its
 * family, scp/sftp, rsync, mosh, sshpass, fleet tools, nc/telnet/socat,
 * HTTP clients and git, read from their options and operands. */
#include "hook/reach_int.h"

#include "lib/buf.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- ssh family */

struct ssh_state {
	char *args[REACH_SSH_ARGS];
	size_t nargs;
	int port;
	bool jump_is_code; /* dbclient: -J is a proxy command */
};

static void ssh_keep(struct ssh_state *st, char opt, const char *text, size_t len)
{
	if (st->nargs + 2 > REACH_SSH_ARGS)
		return;
	st->args[st->nargs++] = xasprintf("-%c", opt);
	st->args[st->nargs++] = xstrndup(text, len);
}

/* -J / ProxyJump: [user@]host[:port][,...] */
static void jump_list(struct reach_ctx *sc, const char *prog, const char *t, size_t len)
{
	while (len > 0) {
		const char *comma = memchr(t, ',', len);
		size_t l = comma ? (size_t)(comma - t) : len;
		const char *h;
		size_t hl;
		int port;
		const char *at = memrchr(t, '@', l);
		const char *s = at ? at + 1 : t;
		size_t sl = l - (size_t)(s - t);

		if (!(sl == 4 && strncasecmp(s, "none", 4) == 0) && sl > 0) {
			if (sl > 6 && strncmp(s - (at ? 0 : 0), "ssh://", 6) == 0 &&
			    reach_parse_url(s, sl, &h, &hl, &port)) {
				reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
			} else {
				reach_split_hostport(s, sl, &h, &hl, &port);
				struct reach *r = reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
				if (r != NULL && r->kind == REACH_DEST)
					r->ssh_config = true;
			}
		}
		if (comma == NULL)
			break;
		len -= l + 1;
		t = comma + 1;
	}
}

/* -L/-R [bind:]port:host:hostport: host is reached through the tunnel. */
static void forward_spec(struct reach_ctx *sc, const char *prog, const char *t, size_t len)
{
	const char *part[5];
	size_t plen[5], np = 0, i = 0;

	while (i <= len && np < 5) {
		size_t st = i;

		if (i < len && t[i] == '[') {
			const char *rb = memchr(t + i, ']', len - i);
			if (rb == NULL)
				return;
			i = (size_t)(rb - t) + 1;
		} else {
			while (i < len && t[i] != ':')
				i++;
		}
		part[np] = t + st;
		plen[np++] = i - st;
		i++;
	}
	if (np == 4)
		reach_add_dest(sc, prog, part[2], plen[2], reach_parse_port(part[3], plen[3]),
		               REACH_DEST);
	else if (np == 3 && reach_parse_port(part[0], plen[0]) > 0)
		reach_add_dest(sc, prog, part[1], plen[1], reach_parse_port(part[2], plen[2]),
		               REACH_DEST);
}

/* -o Key=Value or -o "Key Value" */
static void ssh_option(struct reach_ctx *sc, const char *prog, struct ssh_state *st, const char *t,
                       size_t len)
{
	size_t k = 0, vs;

	while (k < len && t[k] != '=' && t[k] != ' ' && t[k] != '\t')
		k++;
	vs = k;
	while (vs < len && (t[vs] == '=' || t[vs] == ' ' || t[vs] == '\t'))
		vs++;
	if (k == 8 && strncasecmp(t, "hostname", 8) == 0) {
		reach_add_dest(sc, prog, t + vs, len - vs, 0, REACH_DEST);
	} else if ((k == 12 && strncasecmp(t, "proxycommand", 12) == 0) ||
	           (k == 12 && strncasecmp(t, "localcommand", 12) == 0) ||
	           (k == 13 && strncasecmp(t, "remotecommand", 13) == 0) ||
	           (k == 17 && strncasecmp(t, "knownhostscommand", 17) == 0)) {
		if (!(len - vs == 4 && strncasecmp(t + vs, "none", 4) == 0))
			reach_scan_text(sc, t + vs, len - vs);
	} else if (k == 9 && strncasecmp(t, "proxyjump", 9) == 0) {
		jump_list(sc, prog, t + vs, len - vs);
	} else if (k == 4 && strncasecmp(t, "port", 4) == 0) {
		st->port = reach_parse_port(t + vs, len - vs);
	}
	ssh_keep(st, 'o', t, len);
}

static void ssh_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	struct ssh_state *st = arg;

	if (v->opt == 0 || v->text == NULL)
		return;
	if (v->computed && strchr("JoLRW", v->opt)) {
		struct reach *r = reach_add(sc, REACH_COMPUTED, prog);
		if (r != NULL)
			r->dest = xstrndup(v->text, v->len > 80 ? 80 : v->len);
		return;
	}
	switch (v->opt) {
	case 'J':
		if (st->jump_is_code || memchr(v->text, ' ', v->len))
			reach_scan_text(sc, v->text, v->len);
		else
			jump_list(sc, prog, v->text, v->len);
		ssh_keep(st, 'J', v->text, v->len);
		break;
	case 'o':
		ssh_option(sc, prog, st, v->text, v->len);
		break;
	case 'W': {
		const char *h;
		size_t hl;
		int port;
		reach_split_hostport(v->text, v->len, &h, &hl, &port);
		reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
	} break;
	case 'L':
	case 'R':
		forward_spec(sc, prog, v->text, v->len);
		break;
	case 'p':
	case 'P':
		st->port = reach_parse_port(v->text, v->len);
		ssh_keep(st, 'p', v->text, v->len);
		break;
	case 'F':
	case 'l':
		ssh_keep(st, v->opt, v->text, v->len);
		break;
	case 'S':
		/* scp/sftp -S program: the program used instead of ssh */
		if (strcmp(prog, "ssh") != 0)
			reach_scan_text(sc, v->text, v->len);
		break;
	default:
		break;
	}
}

static void ssh_state_free(struct ssh_state *st)
{
	for (size_t i = 0; i < st->nargs; i++)
		free(st->args[i]);
	st->nargs = 0;
}

/* The destination operand of ssh, mosh, sftp: [user@]host or ssh://... */
static void ssh_dest(struct reach_ctx *sc, const char *prog, const struct sh_word *x,
                     struct ssh_state *st)
{
	const char *h;
	size_t hl;
	int port = st->port;
	struct reach *r;

	if (!reach_lit(x)) {
		reach_add_computed(sc, prog, x);
		return;
	}
	if (reach_parse_url(x->text, x->len, &h, &hl, &port)) {
		r = reach_add_dest(sc, prog, h, hl, port ? port : st->port, REACH_DEST);
	} else {
		const char *at = memrchr(x->text, '@', x->len);
		const char *s = at ? at + 1 : x->text;
		size_t sl = x->len - (size_t)(s - x->text);

		if (strcmp(prog, "sftp") == 0 || strcmp(prog, "mosh") == 0) {
			if (reach_remote_operand(s, sl, &h, &hl))
				s = h, sl = hl;
		}
		r = reach_add_dest(sc, prog, s, sl, st->port, REACH_DEST);
	}
	if (r != NULL && r->kind == REACH_DEST) {
		r->ssh_config = true;
		for (size_t i = 0; i < st->nargs && r->nssh_args < REACH_SSH_ARGS; i++)
			r->ssh_args[r->nssh_args++] = xstrdup(st->args[i]);
	}
}

void reach_prog_ssh(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct ssh_state st = {.jump_is_code = strcmp(prog, "dbclient") == 0};
	const char *valopts = strcmp(prog, "autossh") == 0       ? "BbcDEeFIiJLlMmOoPpQRSWw"
	                      : strcmp(prog, "dbclient") == 0    ? "pliLRJWKIcmsbz"
	                      : strcmp(prog, "ssh-copy-id") == 0 ? "iFpotx"
	                                                         : "BbcDEeFIiJLlmOoPpQRSWw";
	size_t i = reach_parse_opts(sc, prog, w, n, valopts, NULL, ssh_opt, &st, NULL, NULL, 0);

	if (i < n) {
		ssh_dest(sc, prog, &w[i], &st);
		/* OpenSSH reads options after the destination too, up to the command */
		if (i + 1 < n && strcmp(prog, "ssh") == 0)
			reach_parse_opts(sc, prog, w + i, n - i, valopts, NULL, ssh_opt, &st, NULL,
			                 NULL, 0);
	}
	ssh_state_free(&st);
}

void reach_prog_scp(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct ssh_state st = {0};
	const struct sh_word *ops[64];
	size_t nops;

	reach_parse_opts(sc, prog, w, n, "BbcDFiJlPRSsXo", NULL, ssh_opt, &st, ops, &nops, 64);
	for (size_t k = 0; k < nops; k++) {
		const char *h;
		size_t hl;
		int port;

		if (!reach_lit(ops[k])) {
			/* scp "$SRC" dst: a computed operand may name a host */
			if (memchr(ops[k]->raw, ':', ops[k]->raw_len) || ops[k]->prefix == 0)
				reach_add_computed(sc, prog, ops[k]);
			continue;
		}
		if (strcmp(prog, "sftp") == 0 && k == 0) {
			ssh_dest(sc, prog, ops[k], &st);
			break;
		}
		if (reach_parse_url(ops[k]->text, ops[k]->len, &h, &hl, &port)) {
			struct reach *r = reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
			if (r != NULL && r->kind == REACH_DEST)
				r->ssh_config = true;
		} else if (reach_remote_operand(ops[k]->text, ops[k]->len, &h, &hl)) {
			struct reach *r = reach_add_dest(sc, prog, h, hl, st.port, REACH_DEST);
			if (r != NULL && r->kind == REACH_DEST) {
				r->ssh_config = true;
				for (size_t a = 0; a < st.nargs && r->nssh_args < REACH_SSH_ARGS;
				     a++)
					r->ssh_args[r->nssh_args++] = xstrdup(st.args[a]);
			}
		}
	}
	ssh_state_free(&st);
}

/* ---------------------------------------------------------------- rsync, mosh, sshpass */

static void rsync_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	(void)prog;
	(void)arg;
	if (v->text == NULL)
		return;
	if (reach_opt_is(v, 'e', "rsh") || reach_opt_is(v, 0, "rsync-path"))
		reach_value_code(sc, v);
}

void reach_prog_rsync(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	static const char longval[] =
	    "rsh rsync-path filter exclude include exclude-from include-from files-from "
	    "password-file port temp-dir compare-dest copy-dest link-dest log-file "
	    "log-file-format chmod out-format bwlimit timeout contimeout max-size min-size "
	    "partial-dir backup-dir suffix chown usermap groupmap skip-compress info debug "
	    "sockopts address block-size checksum-choice compress-choice compress-level "
	    "max-delete modify-window outbuf protocol iconv remote-option stop-after "
	    "stop-at write-batch only-write-batch read-batch";
	const struct sh_word *ops[64];
	size_t nops;

	reach_parse_opts(sc, prog, w, n, "efBTM", longval, rsync_opt, NULL, ops, &nops, 64);
	for (size_t k = 0; k < nops; k++) {
		const char *h;
		size_t hl;
		int port;

		if (!reach_lit(ops[k])) {
			if (memchr(ops[k]->raw, ':', ops[k]->raw_len) || ops[k]->prefix == 0)
				reach_add_computed(sc, prog, ops[k]);
			continue;
		}
		if (reach_parse_url(ops[k]->text, ops[k]->len, &h, &hl, &port))
			reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
		else if (reach_remote_operand(ops[k]->text, ops[k]->len, &h, &hl)) {
			struct reach *r = reach_add_dest(sc, prog, h, hl, 0, REACH_DEST);
			if (r != NULL && r->kind == REACH_DEST)
				r->ssh_config = true;
		}
	}
}

static void mosh_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	(void)prog;
	(void)arg;
	if (v->text != NULL && reach_opt_is(v, 0, "ssh"))
		reach_value_code(sc, v);
}

void reach_prog_mosh(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct ssh_state st = {0};
	const struct sh_word *ops[4];
	size_t nops;

	reach_parse_opts(sc, prog, w, n, "p",
	                 "ssh port client server predict family bind-server experimental-remote-ip",
	                 mosh_opt, NULL, ops, &nops, 1);
	if (nops > 0)
		ssh_dest(sc, prog, ops[0], &st);
}

void reach_prog_sshpass(struct reach_ctx *sc, const struct sh_word *w, size_t n, bool extra)
{
	size_t i = 1;

	while (i < n && reach_lit(&w[i]) && w[i].len >= 2 && w[i].text[0] == '-') {
		if (reach_weq(&w[i], "--")) {
			i++;
			break;
		}
		/* -p PW, -f FILE, -d FD, -P PROMPT take a value (attached or next) */
		if (w[i].len == 2 && strchr("pfdP", w[i].text[1]))
			i++;
		i++;
	}
	if (i < n)
		reach_on_program(sc, w + i, n - i, extra);
}

/* ---------------------------------------------------------------- fleets */

void reach_host_list(struct reach_ctx *sc, const char *prog, const char *t, size_t len,
                     struct reach_fleet *fs)
{
	/* ansible's words are inventory names and patterns (web:&db): they
	 * matter when managed; what they stand for is hidden in the inventory */
	bool names = strncmp(prog, "ansible", 7) == 0;
	enum reach_kind k = names ? REACH_NAMED : REACH_DEST;
	size_t i = 0;

	while (i < len) {
		size_t st;

		while (i < len && strchr(" ,\t\n&!", t[i]))
			i++;
		st = i;
		while (i < len && !strchr(" ,\t\n&!", t[i]))
			i++;
		if (i == st)
			continue;
		{
			const char *h;
			size_t hl;
			int port;

			reach_split_hostport(t + st, i - st, &h, &hl, &port);
			/* node[1-3] ranges and globs: the literal part may still be a name */
			if (memchr(h, '[', hl) && h[0] != '[')
				hl = (size_t)((const char *)memchr(h, '[', hl) - h),
				fs->hidden = true;
			if (memchr(h, '*', hl))
				fs->hidden = true;
			if (hl > 0 && reach_add_dest(sc, prog, h, hl, port, k) != NULL)
				fs->found++;
		}
		if (names) {
			/* the item whole (an IPv6 address), then each part of a pattern */
			size_t p = st;

			reach_add_dest(sc, prog, t + st, i - st, 0, k);
			while (p < i) {
				size_t q = p;

				while (q < i && t[q] != ':')
					q++;
				if (q > p)
					reach_add_dest(sc, prog, t + p, q - p, 0, k);
				p = q + 1;
			}
		}
	}
}

void reach_fleet_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	struct reach_fleet *fs = arg;

	if (v->text == NULL)
		return;
	if (v->computed) {
		fs->hidden = true;
		return;
	}
	if (reach_opt_is(v, 'H', "host") || reach_opt_is(v, 'w', NULL) ||
	    reach_opt_is(v, 'm', NULL) || reach_opt_is(v, 0, "hosts") ||
	    reach_opt_is(v, 0, "nodes")) {
		if (strcmp(prog, "ansible") == 0 || strncmp(prog, "ansible-", 8) == 0)
			return;
		reach_host_list(sc, prog, v->text, v->len, fs);
	} else if (reach_opt_is(v, 'i', "inventory") || reach_opt_is(v, 0, "inventory-file")) {
		/* an inline inventory "a,b," names its hosts; a file hides them */
		if (memchr(v->text, ',', v->len))
			reach_host_list(sc, prog, v->text, v->len, fs);
		fs->hidden = true;
	} else if (reach_opt_is(v, 'l', "limit")) {
		reach_host_list(sc, prog, v->text, v->len, fs);
	} else if (reach_opt_is(v, 'h', NULL) || reach_opt_is(v, 'g', "group") ||
	           reach_opt_is(v, 0, "hostfile")) {
		fs->hidden = true;
	} else if (reach_opt_is(v, 'e', "extra-vars") &&
	           (memmem(v->text, v->len, "ansible_host", 12) != NULL)) {
		reach_host_list(sc, prog, v->text, v->len, fs);
	}
}

void reach_prog_fleet(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct reach_fleet fs = {0};
	const struct sh_word *ops[8];
	size_t nops;
	bool ansible = strcmp(prog, "ansible") == 0 || strncmp(prog, "ansible-", 8) == 0;

	reach_parse_opts(sc, prog, w, n, ansible ? "iluMmaefBPtoTkK" : "hHlpotxXOwgmeEIcRbfF",
	                 ansible
	                     ? "inventory inventory-file limit module-name args extra-vars forks "
	                       "user become-user private-key timeout connection vault-id "
	                       "vault-password-file tags skip-tags start-at-task ssh-common-args "
	                       "ssh-extra-args"
	                     : "host hosts user timeout outdir errdir par options",
	                 reach_fleet_opt, &fs, ops, &nops, 8);
	if (ansible && strcmp(prog, "ansible") == 0 && nops > 0 && reach_lit(ops[0]))
		reach_host_list(sc, prog, ops[0]->text, ops[0]->len, &fs);
	if (!ansible && strcmp(prog, "pdsh") != 0 && strcmp(prog, "clush") != 0 && nops > 0 &&
	    fs.found == 0)
		fs.hidden = true;
	if (fs.hidden || fs.found == 0 || ansible) {
		struct reach *r = reach_add(sc, REACH_HIDDEN, prog);
		if (r != NULL)
			r->dest =
			    xstrdup(ansible ? "hosts from its inventory" : "hosts from a list");
	}
}

/* ---------------------------------------------------------------- raw sockets */

static void nc_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	bool *listen = arg;

	if (v->opt == 'l' || v->opt == 'U' || reach_opt_is(v, 0, "listen"))
		*listen = true;
	if (v->text != NULL && (reach_opt_is(v, 'x', "proxy")))
		reach_value_dest(sc, prog, v);
	if (v->text != NULL && (reach_opt_is(v, 'e', "exec") || reach_opt_is(v, 'c', "sh-exec")))
		reach_value_code(sc, v);
}

void reach_prog_nc(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[4];
	size_t nops;
	bool listen = false;

	reach_parse_opts(
	    sc, prog, w, n, "bceIiMmOPpqsTVwXx",
	    "proxy exec sh-exec source source-port wait idle-timeout proxy-type proxy-auth", nc_opt,
	    &listen, ops, &nops, 2);
	if (listen || nops == 0)
		return;
	if (!reach_lit(ops[0])) {
		reach_add_computed(sc, prog, ops[0]);
		return;
	}
	reach_add_dest(sc, prog, ops[0]->text, ops[0]->len,
	               nops > 1 && reach_lit(ops[1]) ? reach_parse_port(ops[1]->text, ops[1]->len)
	                                             : 0,
	               REACH_DEST);
}

void reach_prog_telnet(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[4];
	size_t nops;
	bool unused = false;

	reach_parse_opts(sc, prog, w, n, "belnXk", NULL, nc_opt, &unused, ops, &nops, 2);
	if (nops == 0)
		return;
	if (!reach_lit(ops[0])) {
		reach_add_computed(sc, prog, ops[0]);
		return;
	}
	reach_add_dest(sc, prog, ops[0]->text, ops[0]->len,
	               nops > 1 && reach_lit(ops[1]) ? reach_parse_port(ops[1]->text, ops[1]->len)
	                                             : 0,
	               REACH_DEST);
}

/* One socat address: TYPE:params[,options] */
static void socat_addr(struct reach_ctx *sc, const char *prog, const struct sh_word *x)
{
	const char *t = x->text, *end, *colon;
	size_t len = x->len, tl;
	const char *part[4];
	size_t plen[4], np = 0;

	if (!reach_lit(x)) {
		reach_add_computed(sc, prog, x);
		return;
	}
	colon = memchr(t, ':', len);
	if (colon == NULL)
		return; /* STDIO, -, a file name */
	tl = (size_t)(colon - t);
	if ((tl == 4 && strncasecmp(t, "exec", 4) == 0) ||
	    (tl == 6 && strncasecmp(t, "system", 6) == 0)) {
		const char *comma = memchr(colon + 1, ',', len - tl - 1);
		size_t cl = comma ? (size_t)(comma - colon - 1) : len - tl - 1;
		reach_scan_text(sc, colon + 1, cl);
		return;
	}
	if (!(strncasecmp(t, "tcp", 3) == 0 || strncasecmp(t, "udp", 3) == 0 ||
	      strncasecmp(t, "sctp", 4) == 0 || strncasecmp(t, "ssl", 3) == 0 ||
	      strncasecmp(t, "openssl", 7) == 0 || strncasecmp(t, "socks", 5) == 0 ||
	      strncasecmp(t, "proxy", 5) == 0 || strncasecmp(t, "dccp", 4) == 0))
		return;
	if (memmem(t, tl, "listen", 6) || memmem(t, tl, "LISTEN", 6) || memmem(t, tl, "recv", 4) ||
	    memmem(t, tl, "RECV", 4))
		return;
	end = t + len;
	{
		const char *p = colon + 1;

		while (p <= end && np < 4) {
			const char *st = p;

			if (p < end && *p == '[') {
				const char *rb = memchr(p, ']', (size_t)(end - p));
				p = rb ? rb + 1 : end;
			}
			while (p < end && *p != ':' && *p != ',')
				p++;
			part[np] = st;
			plen[np++] = (size_t)(p - st);
			if (p >= end || *p == ',')
				break;
			p++;
		}
	}
	if (np >= 1)
		reach_add_dest(sc, prog, part[0], plen[0],
		               np > 1 ? reach_parse_port(part[1], plen[1]) : 0, REACH_DEST);
	if ((strncasecmp(t, "socks", 5) == 0 || strncasecmp(t, "proxy", 5) == 0) && np >= 2)
		reach_add_dest(sc, prog, part[1], plen[1],
		               np > 2 ? reach_parse_port(part[2], plen[2]) : 0, REACH_DEST);
}

void reach_prog_socat(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (!(reach_lit(&w[i]) && w[i].len > 1 && w[i].text[0] == '-'))
			socat_addr(sc, prog, &w[i]);
}

/* ---------------------------------------------------------------- HTTP clients */

/* --resolve HOST:PORT:ADDR[,ADDR]... or --connect-to HOST1:PORT1:HOST2:PORT2:
 * the hosts and addresses in it are destinations. */
static size_t field_end(const char *t, size_t i, size_t len)
{
	if (i < len && t[i] == '[') {
		const char *rb = memchr(t + i, ']', len - i);
		return rb ? (size_t)(rb - t) + 1 : len;
	}
	while (i < len && t[i] != ':')
		i++;
	return i;
}

static void resolve_spec(struct reach_ctx *sc, const char *prog, const char *t, size_t len,
                         bool connect_to)
{
	size_t e, st = 0;

	if (len > 0 && (t[0] == '+' || t[0] == '-'))
		st = 1; /* --resolve +host:... / -host:... */
	e = field_end(t, st, len);
	if (e > st)
		reach_add_dest(sc, prog, t + st, e - st, 0, REACH_DEST);
	if (e >= len)
		return;
	e = field_end(t, e + 1, len); /* the port */
	if (e >= len)
		return;
	st = e + 1;
	if (connect_to) {
		/* HOST2:PORT2, HOST2 bracketed when it is IPv6 */
		const char *last = memrchr(t + st, ':', len - st);
		size_t hl = last ? (size_t)(last - (t + st)) : len - st;

		if (hl > 0)
			reach_add_dest(sc, prog, t + st, hl, 0, REACH_DEST);
		return;
	}
	while (st < len) {
		const char *comma = memchr(t + st, ',', len - st);
		size_t l = comma ? (size_t)(comma - (t + st)) : len - st;

		if (l > 0)
			reach_add_dest(sc, prog, t + st, l, 0, REACH_DEST);
		st += l + 1;
	}
}

static void http_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	bool *hidden = arg;

	if (v->text == NULL)
		return;
	if (reach_opt_is(v, 'x', "proxy") || reach_opt_is(v, 0, "preproxy") ||
	    reach_opt_is(v, 0, "socks4") || reach_opt_is(v, 0, "socks4a") ||
	    reach_opt_is(v, 0, "socks5") || reach_opt_is(v, 0, "socks5-hostname") ||
	    reach_opt_is(v, 0, "url") || reach_opt_is(v, 0, "http-proxy") ||
	    reach_opt_is(v, 0, "https-proxy")) {
		const char *h;
		size_t hl;
		int port;

		if (v->computed) {
			reach_value_dest(sc, prog, v);
		} else if (reach_parse_url(v->text, v->len, &h, &hl, &port)) {
			reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
		} else {
			reach_split_hostport(v->text, v->len, &h, &hl, &port);
			reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
		}
	} else if (reach_opt_is(v, 0, "resolve") || reach_opt_is(v, 0, "connect-to")) {
		/* host:port:addr[,addr] / host1:port1:host2:port2: both ends count */
		if (v->computed) {
			reach_value_dest(sc, prog, v);
			return;
		}
		resolve_spec(sc, prog, v->text, v->len, reach_opt_is(v, 0, "connect-to"));
	} else if (reach_opt_is(v, 'K', "config") ||
	           (reach_opt_is(v, 'i', "input-file") && strcmp(prog, "wget") == 0)) {
		*hidden = true;
	} else if (reach_opt_is(v, 'e', "execute") && strcmp(prog, "wget") == 0) {
		/* wget -e http_proxy=host:port */
		const char *eq = memchr(v->text, '=', v->len);
		if (eq != NULL && memmem(v->text, (size_t)(eq - v->text), "proxy", 5)) {
			struct reach_opt pv = *v;
			pv.name = "proxy";
			pv.namelen = 5;
			pv.opt = 0;
			pv.text = eq + 1;
			pv.len = v->len - (size_t)(eq + 1 - v->text);
			http_opt(sc, prog, &pv, arg);
		}
	}
}

static void http_url(struct reach_ctx *sc, const char *prog, const struct sh_word *x)
{
	const char *h;
	size_t hl;
	int port;

	if (!reach_lit(x)) {
		if (x->prefix == 0 || memmem(x->text, x->prefix, "://", 3) != NULL ||
		    memchr(x->text, '/', x->prefix) == NULL)
			reach_add_computed(sc, prog, x);
		return;
	}
	if (reach_parse_url(x->text, x->len, &h, &hl, &port)) {
		reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
		return;
	}
	if (x->len > 0 && x->text[0] == ':') {
		/* httpie's :8006/path is localhost */
		reach_add_dest(sc, prog, "localhost", 9, reach_parse_port(x->text + 1, x->len - 1),
		               REACH_DEST);
		return;
	}
	reach_split_hostport(x->text, x->len, &h, &hl, &port);
	reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
}

void reach_prog_http(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	static const char curl_long[] =
	    "data data-raw data-binary data-urlencode data-ascii header output request user "
	    "user-agent referer cookie cookie-jar form form-string max-time connect-timeout proxy "
	    "resolve connect-to url config write-out upload-file cacert capath cert key retry "
	    "range interface dns-servers doh-url json output-dir unix-socket "
	    "abstract-unix-socket proxy-user noproxy limit-rate max-filesize aws-sigv4 "
	    "oauth2-bearer pass ciphers continue-at dump-header trace trace-ascii stderr "
	    "local-port preproxy socks4 socks4a socks5 socks5-hostname retry-delay "
	    "retry-max-time expect100-timeout speed-limit speed-time max-redirs "
	    "proxy-header variable url-query etag-save etag-compare";
	static const char wget_long[] =
	    "output-document output-file append-output execute input-file base tries timeout "
	    "wait user password header user-agent referer post-data post-file body-data "
	    "body-file method directory-prefix load-cookies save-cookies level "
	    "ca-certificate certificate private-key limit-rate bind-address "
	    "http-user http-password proxy-user proxy-password accept reject domains "
	    "exclude-domains include-directories exclude-directories";
	bool curl = strcmp(prog, "curl") == 0, wget = strcmp(prog, "wget") == 0;
	bool httpie = !curl && !wget &&
	              (strcmp(prog, "http") == 0 || strcmp(prog, "https") == 0 ||
	               strcmp(prog, "xh") == 0 || strcmp(prog, "xhs") == 0);
	const struct sh_word *ops[64];
	size_t nops;
	bool hidden = false;

	reach_parse_opts(
	    sc, prog, w, n,
	    curl   ? "AbcCdDeEFHKmoPQrtTuUwxXYyz"
	    : wget ? "OoaeiBtTwQPUlDAR"
	           : "aAbhfjpv",
	    curl   ? curl_long
	    : wget ? wget_long
	           : "auth auth-type session session-read-only output print proxy verify cert "
	             "cert-key timeout",
	    http_opt, &hidden, ops, &nops, 64);
	if (httpie) {
		size_t k = 0;

		/* [METHOD] URL [items]: only the URL is a destination */
		if (k < nops && reach_lit(ops[k]) && ops[k]->len > 0 &&
		    strspn(ops[k]->text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ops[k]->len)
			k++;
		if (k < nops)
			http_url(sc, prog, ops[k]);
	} else {
		for (size_t k = 0; k < nops; k++)
			http_url(sc, prog, ops[k]);
	}
	if (hidden) {
		struct reach *r = reach_add(sc, REACH_HIDDEN, prog);
		if (r != NULL)
			r->dest = xstrdup("URLs from a file");
	}
}

/* ---------------------------------------------------------------- git */

/* ext::CMD ARGS (git's "ext" transport): git splits the text at spaces
 * into the command's arguments ("% " is a space inside one, %S the
 * service, %% a percent sign) and runs it: it is read as that command. */
static void git_ext(struct reach_ctx *sc, const char *t, size_t len)
{
	struct buf cmd = BUF_INIT, arg = BUF_INIT;

	for (size_t i = 0; i <= len; i++) {
		if (i == len || t[i] == ' ') {
			if (arg.len > 0) {
				if (cmd.len > 0)
					buf_putc(&cmd, ' ');
				shellquote_append(&cmd, buf_str(&arg), arg.len);
			}
			buf_free(&arg);
			continue;
		}
		if (t[i] == '%' && i + 1 < len) {
			char c = t[++i];

			if (c == ' ' || c == '%')
				buf_putc(&arg, c);
			else if (c == 'S' || c == 's')
				buf_puts(&arg, "git-upload-pack");
			continue; /* %G, %V: the repository path, the service's name */
		}
		buf_putc(&arg, t[i]);
	}
	if (cmd.len > 0)
		reach_scan_text(sc, buf_str(&cmd), cmd.len);
	buf_free(&cmd);
}

/* Keys of `git -c key=value` whose value git runs as a command line. */
static bool git_command_key(const char *k, size_t kl)
{
	static const char *const keys[] = {"core.sshcommand",
	                                   "core.gitproxy",
	                                   "core.pager",
	                                   "core.editor",
	                                   "core.fsmonitor",
	                                   "core.hookspath",
	                                   "diff.external",
	                                   "sequence.editor",
	                                   "credential.helper",
	                                   "gpg.program",
	                                   "uploadpack.packobjectshook",
	                                   "protocol.ext.allow",
	                                   NULL};

	for (size_t i = 0; keys[i]; i++)
		if (strlen(keys[i]) == kl && strncasecmp(k, keys[i], kl) == 0)
			return true;
	return false;
}

struct git_state {
	bool ext_allowed; /* protocol.ext.allow or protocol.allow set by the command */
};

static void git_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	struct git_state *st = arg;

	(void)prog;
	if (v->text == NULL)
		return;
	if (v->opt == 'c' && v->computed) {
		reach_add_opaque(sc, "git", "git -c with a setting known only at run time");
		return;
	}
	if (v->opt == 'c') {
		const char *eq = memchr(v->text, '=', v->len);
		size_t kl = eq ? (size_t)(eq - v->text) : v->len;
		const char *val = eq ? eq + 1 : "";
		size_t vl = eq ? v->len - kl - 1 : 0;

		if ((kl == 18 && strncasecmp(v->text, "protocol.ext.allow", 18) == 0) ||
		    (kl == 14 && strncasecmp(v->text, "protocol.allow", 14) == 0)) {
			if (!(vl == 5 && strncmp(val, "never", 5) == 0))
				st->ext_allowed = true;
		} else if (vl > 0 && val[0] == '!') {
			reach_scan_text(sc, val + 1, vl - 1); /* alias.x=!cmd, helpers */
		} else if (vl > 5 && strncmp(val, "ext::", 5) == 0) {
			git_ext(sc, val + 5, vl - 5);
		} else if (git_command_key(v->text, kl)) {
			reach_scan_text(sc, val, vl);
		}
	} else if (reach_opt_is(v, 'u', "upload-pack") || reach_opt_is(v, 0, "receive-pack") ||
	           reach_opt_is(v, 0, "exec")) {
		reach_value_code(sc, v);
	}
}

void reach_prog_git(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[64];
	size_t nops;
	struct git_state st = {0};
	bool names_remote = false;

	reach_parse_opts(sc, prog, w, n, "cCu", "upload-pack receive-pack exec", git_opt, &st, ops,
	                 &nops, 64);
	for (size_t k = 0; k < nops; k++) {
		const char *h;
		size_t hl;

		if (!reach_lit(ops[k]))
			continue;
		if (ops[k]->len > 5 && strncmp(ops[k]->text, "ext::", 5) == 0) {
			git_ext(sc, ops[k]->text + 5, ops[k]->len - 5);
			continue;
		}
		if (ops[k]->len > 4 && strncmp(ops[k]->text, "fd::", 4) == 0)
			continue; /* the shell connected it: its redirection is read */
		if (reach_url_dest(sc, prog, ops[k], REACH_DEST))
			continue;
		if (reach_remote_operand(ops[k]->text, ops[k]->len, &h, &hl)) {
			/* user@host:repo is ssh; rev:path (HEAD:README) is not: a name
			 * without @ or a dot matters only when it is managed */
			bool hosty = memchr(h, '@', hl) || memchr(h, '.', hl);
			struct reach *r =
			    reach_add_dest(sc, prog, h, hl, 0, hosty ? REACH_DEST : REACH_NAMED);
			if (r != NULL && r->kind == REACH_DEST)
				r->ssh_config = true;
			continue;
		}
		if (k > 0 && ops[k]->text[0] != '-')
			names_remote = true; /* git fetch origin: a remote from its config */
	}
	if (st.ext_allowed && names_remote)
		reach_add_opaque(sc, "git",
		                 "git with the ext:: transport allowed (protocol.ext.allow) and a "
		                 "remote from its configuration, whose URL may run any command");
	else if (st.ext_allowed)
		reach_add_opaque(sc, "git",
		                 "git with the ext:: transport allowed (protocol.ext.allow)");
}
