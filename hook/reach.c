/* reach.c -- the remote-access programs and where their words say they go. */
#include "hook/reach.h"

#include "classifier/classifier.h"
#include "classifier/shparse.h"
#include "lib/buf.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Nested code (ProxyCommand, rsync -e, socat EXEC:) read again, this deep. */
#define SCAN_MAX_DEPTH 6

const char reach_policy_yaml[] =
    "version: 1\n"
    "description: what airlock hook needs of the shell reading\n"
    "defaults:\n"
    "  unknown_program: config_mutation\n"
    "  opaque_code: config_mutation\n"
    "  write_unlisted: reversible_low\n"
    "  write_unknown: config_mutation\n"
    "  home: /root\n"
    "  standard_dirs: [/bin, /sbin, /usr/bin, /usr/sbin, /usr/local/bin, /usr/local/sbin]\n"
    "  shells: [sh, bash, dash, zsh, ksh, mksh, ash, rbash, lksh, posh, yash, tcsh, csh, fish,\n"
    "           busybox]\n"
    "  interpreters: [python, python2, python3, python3.9, python3.10, python3.11, python3.12,\n"
    "                 python3.13, pypy, pypy3, perl, ruby, irb, node, nodejs, deno, bun, php,\n"
    "                 lua, lua5.1, lua5.3, lua5.4, luajit, tclsh, wish, Rscript, pwsh, expect,\n"
    "                 jshell, gdb, osqueryi]\n"
    "rules: []\n";

struct scan {
	const struct classifier *c;
	struct reach_list *out;
	int depth;
	int failed;            /* a nested reading failed: out->err says why */
	bool computed_program; /* some program's name is known only at run time */
};

static void scan_text(struct scan *sc, const char *text, size_t len);

/* ---------------------------------------------------------------- hosts */

bool reach_norm_host(const char *s, size_t len, char *out, size_t outlen)
{
	char buf[256];
	struct in_addr a4;
	struct in6_addr a6;
	char *pct;

	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	while (len > 1 && s[len - 1] == '.')
		len--;
	if (len == 0 || len >= sizeof(buf) || len > 253)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!(isalnum(ch) || ch == '.' || ch == '-' || ch == '_' || ch == ':' || ch == '%'))
			return false;
		buf[i] = (char)tolower(ch);
	}
	buf[len] = '\0';
	if ((pct = strchr(buf, '%')) != NULL)
		*pct = '\0'; /* fe80::1%eth0: the zone is not part of the address */
	if (strchr(buf, ':') != NULL) {
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			return false;
		if (IN6_IS_ADDR_V4MAPPED(&a6)) {
			memcpy(&a4, &a6.s6_addr[12], 4);
			return inet_ntop(AF_INET, &a4, out, (socklen_t)outlen) != NULL;
		}
		return inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen) != NULL;
	}
	/* 127.1, 0x7f.0.0.1, 2130706433, 0177.0.0.1: the resolver takes every
	 * spelling inet_aton does, so they all mean one dotted quad */
	if (strspn(buf, "0123456789abcdefx.") == strlen(buf) && isdigit((unsigned char)buf[0]) &&
	    inet_aton(buf, &a4) == 1)
		return inet_ntop(AF_INET, &a4, out, (socklen_t)outlen) != NULL;
	if (strlen(buf) >= outlen || strchr(buf, '%') != NULL)
		return false;
	strcpy(out, buf);
	return true;
}

static struct reach *add(struct scan *sc, enum reach_kind k, const char *prog)
{
	struct reach_list *l = sc->out;
	struct reach *r;

	if (l->n >= REACH_MAX) {
		l->overflow = true;
		return NULL;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	r = &l->v[l->n++];
	memset(r, 0, sizeof(*r));
	r->kind = k;
	snprintf(r->program, sizeof(r->program), "%s", prog);
	return r;
}

/* A destination spelled s[0..len) ([user@]host, a bracketed IPv6 literal). */
static struct reach *add_dest(struct scan *sc, const char *prog, const char *s, size_t len,
                              int port, enum reach_kind k)
{
	char host[256];
	const char *at = len ? memrchr(s, '@', len) : NULL;
	struct reach *r;

	if (at != NULL) {
		len -= (size_t)(at + 1 - s);
		s = at + 1;
	}
	if (!reach_norm_host(s, len, host, sizeof(host))) {
		if (k == REACH_NAMED)
			return NULL; /* a word of code that is no host: nothing to check */
		r = add(sc, REACH_HIDDEN, prog);
		if (r != NULL)
			r->dest = xstrndup(s, len > 80 ? 80 : len);
		return r;
	}
	for (size_t i = 0; i < sc->out->n; i++) {
		struct reach *o = &sc->out->v[i];

		if (o->kind == k && o->dest && strcmp(o->dest, host) == 0 &&
		    strcmp(o->program, prog) == 0 && k == REACH_NAMED)
			return o;
	}
	r = add(sc, k, prog);
	if (r != NULL) {
		r->dest = xstrdup(host);
		r->port = port;
	}
	return r;
}

static void add_computed(struct scan *sc, const char *prog, const struct sh_word *w)
{
	struct reach *r = add(sc, REACH_COMPUTED, prog);

	if (r != NULL)
		r->dest = xstrndup(w->raw, w->raw_len > 80 ? 80 : w->raw_len);
}

static bool lit(const struct sh_word *w)
{
	return !(w->flags & SHW_COMPUTED) && memchr(w->text, '\0', w->len) == NULL;
}

static bool weq(const struct sh_word *w, const char *s)
{
	return lit(w) && strlen(s) == w->len && memcmp(w->text, s, w->len) == 0;
}

static int parse_port(const char *s, size_t len)
{
	int p = 0;

	if (len == 0 || len > 5)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		p = p * 10 + (s[i] - '0');
	}
	return p <= 65535 ? p : 0;
}

/* scheme://[user@]host[:port][/...]: the host and port; false if not a URL. */
static bool parse_url(const char *s, size_t len, const char **host, size_t *hlen, int *port)
{
	const char *p = memmem(s, len, "://", 3), *end = s + len, *hs, *he, *at;

	if (p == NULL || p == s)
		return false;
	for (const char *q = s; q < p; q++)
		if (!(isalnum((unsigned char)*q) || *q == '+' || *q == '-' || *q == '.'))
			return false;
	hs = p + 3;
	he = hs;
	while (he < end && *he != '/' && *he != '?' && *he != '#')
		he++;
	at = he > hs ? memrchr(hs, '@', (size_t)(he - hs)) : NULL;
	if (at != NULL)
		hs = at + 1;
	*port = 0;
	if (hs < he && *hs == '[') {
		const char *rb = memchr(hs, ']', (size_t)(he - hs));

		if (rb == NULL)
			return false;
		*host = hs;
		*hlen = (size_t)(rb + 1 - hs);
		if (rb + 1 < he && rb[1] == ':')
			*port = parse_port(rb + 2, (size_t)(he - rb - 2));
		return true;
	}
	{
		const char *colon = memchr(hs, ':', (size_t)(he - hs));

		*host = hs;
		*hlen = (size_t)((colon ? colon : he) - hs);
		if (colon)
			*port = parse_port(colon + 1, (size_t)(he - colon - 1));
	}
	return *hlen > 0;
}

/* host[:port][/path] without a scheme (curl's default): host and port. */
static void split_hostport(const char *s, size_t len, const char **host, size_t *hlen, int *port)
{
	const char *end = s + len, *he = s;

	*port = 0;
	*host = s;
	while (he < end && *he != '/' && *he != '?' && *he != '#')
		he++;
	if (s < he && *s == '[') {
		const char *rb = memchr(s, ']', (size_t)(he - s));

		if (rb != NULL) {
			*hlen = (size_t)(rb + 1 - s);
			if (rb + 1 < he && rb[1] == ':')
				*port = parse_port(rb + 2, (size_t)(he - rb - 2));
			return;
		}
	}
	{
		const char *c1 = memchr(s, ':', (size_t)(he - s));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(he - c1 - 1)) : NULL;

		if (c1 != NULL && c2 == NULL) {
			*hlen = (size_t)(c1 - s);
			*port = parse_port(c1 + 1, (size_t)(he - c1 - 1));
		} else {
			*hlen = (size_t)(he - s); /* bare IPv6, or no port */
		}
	}
}

/* A URL word: its host as a destination of kind k.  false if not a URL. */
static bool url_dest(struct scan *sc, const char *prog, const struct sh_word *w, enum reach_kind k)
{
	const char *h;
	size_t hl;
	int port;

	if (!lit(w) || !parse_url(w->text, w->len, &h, &hl, &port))
		return false;
	add_dest(sc, prog, h, hl, port, k);
	return true;
}

/* [user@]host:path (scp, rsync, git): the host; false for a local path. */
static bool remote_operand(const char *s, size_t len, const char **host, size_t *hlen)
{
	const char *colon;

	if (len > 0 && (s[0] == '[' || (memchr(s, '@', len) && memchr(s, '[', len)))) {
		const char *lb = memchr(s, '[', len), *rb = memchr(s, ']', len);

		if (lb == NULL || rb == NULL || rb < lb || rb + 1 >= s + len || rb[1] != ':')
			return false;
		*host = s;
		*hlen = (size_t)(rb + 1 - s);
		return true;
	}
	colon = memchr(s, ':', len);
	if (colon == NULL || colon == s)
		return false;
	if (memchr(s, '/', (size_t)(colon - s)) != NULL)
		return false; /* ./a:b is a local file */
	*host = s;
	*hlen = (size_t)(colon - s);
	return true;
}

/* Words of code or of an unknown program that look like hosts: checked only
 * against the managed list (a managed name in them denies). */
static void named_tokens(struct scan *sc, const char *prog, const char *t, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t st, e;

		while (i < len && !(isalnum((unsigned char)t[i]) || t[i] == '[' || t[i] == ':'))
			i++;
		st = i;
		while (i < len &&
		       (isalnum((unsigned char)t[i]) || strchr(".-_:[]@%", t[i]) != NULL) &&
		       t[i] != '\0')
			i++;
		e = i;
		if (e - st < 2 || e - st > 253)
			continue;
		{
			const char *s = t + st, *at = memrchr(s, '@', e - st);
			size_t l = e - st;
			const char *h;
			size_t hl;
			int port;

			if (at != NULL) {
				l -= (size_t)(at + 1 - s);
				s = at + 1;
			}
			while (l > 0 && s[l - 1] == ':')
				l--;
			split_hostport(s, l, &h, &hl, &port);
			if (hl > 0)
				add_dest(sc, prog, h, hl, port, REACH_NAMED);
			/* OPENSSL:host:8006, api:8006:addr (--resolve): each field */
			for (size_t p = 0, q; p < l && memchr(s, ':', l); p = q + 1) {
				for (q = p; q < l && s[q] != ':' && s[q] != ','; q++)
					;
				if (q > p && (q - p != l))
					add_dest(sc, prog, s + p, q - p, 0, REACH_NAMED);
			}
			/* an unbracketed IPv6 address split at its first colon: try it whole */
			if (memchr(s, ':', l) && port == 0)
				add_dest(sc, prog, s, l, 0, REACH_NAMED);
		}
	}
}

/* ---------------------------------------------------------------- options */

/* Walks getopt-style options of w[1..n).  valopts: short options taking a
 * value; longval: long options taking the next word when spelled without =.
 * For each option with a value, fn(opt, value word or NULL with value text).
 * Returns the index of the first operand; stops at "--" (skipped).
 * permute: options may follow operands (GNU getopt); operands are then
 * collected into ops. */
struct opt_value {
	char opt;         /* short option letter, or 0 for a long one */
	const char *name; /* long option name (without --), NULL for short */
	size_t namelen;
	const char *text; /* the value */
	size_t len;
	const struct sh_word *word; /* the value's word when it is a whole word */
	bool computed;
};

typedef void (*opt_fn)(struct scan *sc, const char *prog, const struct opt_value *v, void *arg);

static bool long_in(const char *list, const char *name, size_t len)
{
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, ' ');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == len && memcmp(p, name, len) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static size_t parse_opts(struct scan *sc, const char *prog, const struct sh_word *w, size_t n,
                         const char *valopts, const char *longval, opt_fn fn, void *arg,
                         const struct sh_word **ops, size_t *nops, size_t maxops)
{
	size_t i = 1, none;

	if (nops == NULL)
		nops = &none;
	*nops = 0;
	while (i < n) {
		const struct sh_word *x = &w[i];

		if (weq(x, "--")) {
			i++;
			break;
		}
		if (!lit(x) && x->prefix > 0 && x->text[0] == '-') {
			/* -o$X: an option with a computed value */
			struct opt_value v = {.opt = x->len > 1 ? x->text[1] : 0,
			                      .text = x->raw,
			                      .len = x->raw_len,
			                      .computed = true};
			if (x->len > 1 && x->text[1] == '-') {
				const char *eq = memchr(x->text, '=', x->prefix);
				v.opt = 0;
				v.name = x->text + 2;
				v.namelen = eq ? (size_t)(eq - x->text - 2) : x->prefix - 2;
			}
			fn(sc, prog, &v, arg);
			i++;
			continue;
		}
		if (!lit(x) || x->len < 2 || x->text[0] != '-') {
			if (ops == NULL)
				break;
			if (*nops < maxops)
				ops[(*nops)++] = x;
			i++;
			continue;
		}
		if (x->text[1] == '-') {
			const char *name = x->text + 2;
			const char *eq = memchr(name, '=', x->len - 2);
			size_t nl = eq ? (size_t)(eq - name) : x->len - 2;
			struct opt_value v = {.name = name, .namelen = nl};

			if (eq != NULL) {
				v.text = eq + 1;
				v.len = x->len - 2 - nl - 1;
				fn(sc, prog, &v, arg);
			} else if (longval && long_in(longval, name, nl) && i + 1 < n) {
				v.word = &w[i + 1];
				v.text = w[i + 1].text;
				v.len = w[i + 1].len;
				v.computed = !lit(&w[i + 1]);
				if (v.computed) {
					v.text = w[i + 1].raw;
					v.len = w[i + 1].raw_len;
				}
				fn(sc, prog, &v, arg);
				i++;
			} else {
				fn(sc, prog, &v, arg); /* a flag */
			}
			i++;
			continue;
		}
		for (size_t k = 1; k < x->len; k++) {
			char o = x->text[k];

			if (o == '\0' || strchr(valopts, o) == NULL) {
				struct opt_value v = {.opt = o};
				fn(sc, prog, &v, arg);
				continue;
			}
			{
				struct opt_value v = {.opt = o};

				if (k + 1 < x->len) {
					v.text = x->text + k + 1;
					v.len = x->len - k - 1;
				} else if (i + 1 < n) {
					i++;
					v.word = &w[i];
					v.computed = !lit(&w[i]);
					v.text = v.computed ? w[i].raw : w[i].text;
					v.len = v.computed ? w[i].raw_len : w[i].len;
				} else {
					v.text = "";
					v.len = 0;
				}
				fn(sc, prog, &v, arg);
				break;
			}
		}
		i++;
	}
	if (ops != NULL)
		for (; i < n && *nops < maxops; i++)
			ops[(*nops)++] = &w[i];
	return i;
}

static bool opt_is(const struct opt_value *v, char s, const char *l)
{
	return (s && v->opt == s) || (l && v->name && v->namelen == strlen(l) &&
	                              strncasecmp(v->name, l, v->namelen) == 0);
}

/* A value that is itself a destination spelling. */
static void value_dest(struct scan *sc, const char *prog, const struct opt_value *v)
{
	if (v->computed) {
		struct reach *r = add(sc, REACH_COMPUTED, prog);
		if (r != NULL)
			r->dest = xstrndup(v->text, v->len > 80 ? 80 : v->len);
		return;
	}
	if (v->len > 0)
		add_dest(sc, prog, v->text, v->len, 0, REACH_DEST);
}

/* A value that is a command line (ProxyCommand, rsync -e, mosh --ssh). */
static void value_code(struct scan *sc, const struct opt_value *v)
{
	if (v->computed) {
		struct reach *r = add(sc, REACH_COMPUTED, "command");
		if (r != NULL)
			r->dest = xstrndup(v->text, v->len > 80 ? 80 : v->len);
		return;
	}
	scan_text(sc, v->text, v->len);
}

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
static void jump_list(struct scan *sc, const char *prog, const char *t, size_t len)
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
			    parse_url(s, sl, &h, &hl, &port)) {
				add_dest(sc, prog, h, hl, port, REACH_DEST);
			} else {
				split_hostport(s, sl, &h, &hl, &port);
				struct reach *r = add_dest(sc, prog, h, hl, port, REACH_DEST);
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
static void forward_spec(struct scan *sc, const char *prog, const char *t, size_t len)
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
		add_dest(sc, prog, part[2], plen[2], parse_port(part[3], plen[3]), REACH_DEST);
	else if (np == 3 && parse_port(part[0], plen[0]) > 0)
		add_dest(sc, prog, part[1], plen[1], parse_port(part[2], plen[2]), REACH_DEST);
}

/* -o Key=Value or -o "Key Value" */
static void ssh_option(struct scan *sc, const char *prog, struct ssh_state *st, const char *t,
                       size_t len)
{
	size_t k = 0, vs;

	while (k < len && t[k] != '=' && t[k] != ' ' && t[k] != '\t')
		k++;
	vs = k;
	while (vs < len && (t[vs] == '=' || t[vs] == ' ' || t[vs] == '\t'))
		vs++;
	if (k == 8 && strncasecmp(t, "hostname", 8) == 0) {
		add_dest(sc, prog, t + vs, len - vs, 0, REACH_DEST);
	} else if ((k == 12 && strncasecmp(t, "proxycommand", 12) == 0) ||
	           (k == 12 && strncasecmp(t, "localcommand", 12) == 0) ||
	           (k == 13 && strncasecmp(t, "remotecommand", 13) == 0) ||
	           (k == 17 && strncasecmp(t, "knownhostscommand", 17) == 0)) {
		if (!(len - vs == 4 && strncasecmp(t + vs, "none", 4) == 0))
			scan_text(sc, t + vs, len - vs);
	} else if (k == 9 && strncasecmp(t, "proxyjump", 9) == 0) {
		jump_list(sc, prog, t + vs, len - vs);
	} else if (k == 4 && strncasecmp(t, "port", 4) == 0) {
		st->port = parse_port(t + vs, len - vs);
	}
	ssh_keep(st, 'o', t, len);
}

static void ssh_opt(struct scan *sc, const char *prog, const struct opt_value *v, void *arg)
{
	struct ssh_state *st = arg;

	if (v->opt == 0 || v->text == NULL)
		return;
	if (v->computed && strchr("JoLRW", v->opt)) {
		struct reach *r = add(sc, REACH_COMPUTED, prog);
		if (r != NULL)
			r->dest = xstrndup(v->text, v->len > 80 ? 80 : v->len);
		return;
	}
	switch (v->opt) {
	case 'J':
		if (st->jump_is_code || memchr(v->text, ' ', v->len))
			scan_text(sc, v->text, v->len);
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
		split_hostport(v->text, v->len, &h, &hl, &port);
		add_dest(sc, prog, h, hl, port, REACH_DEST);
	} break;
	case 'L':
	case 'R':
		forward_spec(sc, prog, v->text, v->len);
		break;
	case 'p':
	case 'P':
		st->port = parse_port(v->text, v->len);
		ssh_keep(st, 'p', v->text, v->len);
		break;
	case 'F':
	case 'l':
		ssh_keep(st, v->opt, v->text, v->len);
		break;
	case 'S':
		/* scp/sftp -S program: the program used instead of ssh */
		if (strcmp(prog, "ssh") != 0)
			scan_text(sc, v->text, v->len);
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
static void ssh_dest(struct scan *sc, const char *prog, const struct sh_word *x,
                     struct ssh_state *st)
{
	const char *h;
	size_t hl;
	int port = st->port;
	struct reach *r;

	if (!lit(x)) {
		add_computed(sc, prog, x);
		return;
	}
	if (parse_url(x->text, x->len, &h, &hl, &port)) {
		r = add_dest(sc, prog, h, hl, port ? port : st->port, REACH_DEST);
	} else {
		const char *at = memrchr(x->text, '@', x->len);
		const char *s = at ? at + 1 : x->text;
		size_t sl = x->len - (size_t)(s - x->text);

		if (strcmp(prog, "sftp") == 0 || strcmp(prog, "mosh") == 0) {
			if (remote_operand(s, sl, &h, &hl))
				s = h, sl = hl;
		}
		r = add_dest(sc, prog, s, sl, st->port, REACH_DEST);
	}
	if (r != NULL && r->kind == REACH_DEST) {
		r->ssh_config = true;
		for (size_t i = 0; i < st->nargs && r->nssh_args < REACH_SSH_ARGS; i++)
			r->ssh_args[r->nssh_args++] = xstrdup(st->args[i]);
	}
}

static void prog_ssh(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct ssh_state st = {.jump_is_code = strcmp(prog, "dbclient") == 0};
	const char *valopts = strcmp(prog, "autossh") == 0       ? "BbcDEeFIiJLlMmOoPpQRSWw"
	                      : strcmp(prog, "dbclient") == 0    ? "pliLRJWKIcmsbz"
	                      : strcmp(prog, "ssh-copy-id") == 0 ? "iFpotx"
	                                                         : "BbcDEeFIiJLlmOoPpQRSWw";
	size_t i = parse_opts(sc, prog, w, n, valopts, NULL, ssh_opt, &st, NULL, NULL, 0);

	if (i < n) {
		ssh_dest(sc, prog, &w[i], &st);
		/* OpenSSH reads options after the destination too, up to the command */
		if (i + 1 < n && strcmp(prog, "ssh") == 0)
			parse_opts(sc, prog, w + i, n - i, valopts, NULL, ssh_opt, &st, NULL, NULL,
			           0);
	}
	ssh_state_free(&st);
}

static void prog_scp(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct ssh_state st = {0};
	const struct sh_word *ops[64];
	size_t nops;

	parse_opts(sc, prog, w, n, "BbcDFiJlPRSsXo", NULL, ssh_opt, &st, ops, &nops, 64);
	for (size_t k = 0; k < nops; k++) {
		const char *h;
		size_t hl;
		int port;

		if (!lit(ops[k])) {
			/* scp "$SRC" dst: a computed operand may name a host */
			if (memchr(ops[k]->raw, ':', ops[k]->raw_len) || ops[k]->prefix == 0)
				add_computed(sc, prog, ops[k]);
			continue;
		}
		if (strcmp(prog, "sftp") == 0 && k == 0) {
			ssh_dest(sc, prog, ops[k], &st);
			break;
		}
		if (parse_url(ops[k]->text, ops[k]->len, &h, &hl, &port)) {
			struct reach *r = add_dest(sc, prog, h, hl, port, REACH_DEST);
			if (r != NULL && r->kind == REACH_DEST)
				r->ssh_config = true;
		} else if (remote_operand(ops[k]->text, ops[k]->len, &h, &hl)) {
			struct reach *r = add_dest(sc, prog, h, hl, st.port, REACH_DEST);
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

static void rsync_opt(struct scan *sc, const char *prog, const struct opt_value *v, void *arg)
{
	(void)prog;
	(void)arg;
	if (v->text == NULL)
		return;
	if (opt_is(v, 'e', "rsh") || opt_is(v, 0, "rsync-path"))
		value_code(sc, v);
}

static void prog_rsync(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
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

	parse_opts(sc, prog, w, n, "efBTM", longval, rsync_opt, NULL, ops, &nops, 64);
	for (size_t k = 0; k < nops; k++) {
		const char *h;
		size_t hl;
		int port;

		if (!lit(ops[k])) {
			if (memchr(ops[k]->raw, ':', ops[k]->raw_len) || ops[k]->prefix == 0)
				add_computed(sc, prog, ops[k]);
			continue;
		}
		if (parse_url(ops[k]->text, ops[k]->len, &h, &hl, &port))
			add_dest(sc, prog, h, hl, port, REACH_DEST);
		else if (remote_operand(ops[k]->text, ops[k]->len, &h, &hl)) {
			struct reach *r = add_dest(sc, prog, h, hl, 0, REACH_DEST);
			if (r != NULL && r->kind == REACH_DEST)
				r->ssh_config = true;
		}
	}
}

static void mosh_opt(struct scan *sc, const char *prog, const struct opt_value *v, void *arg)
{
	(void)prog;
	(void)arg;
	if (v->text != NULL && opt_is(v, 0, "ssh"))
		value_code(sc, v);
}

static void prog_mosh(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct ssh_state st = {0};
	const struct sh_word *ops[4];
	size_t nops;

	parse_opts(sc, prog, w, n, "p",
	           "ssh port client server predict family bind-server experimental-remote-ip",
	           mosh_opt, NULL, ops, &nops, 1);
	if (nops > 0)
		ssh_dest(sc, prog, ops[0], &st);
}

static void on_program(void *ctx, const struct sh_word *w, size_t n, bool extra);

static void prog_sshpass(struct scan *sc, const struct sh_word *w, size_t n, bool extra)
{
	size_t i = 1;

	while (i < n && lit(&w[i]) && w[i].len >= 2 && w[i].text[0] == '-') {
		if (weq(&w[i], "--")) {
			i++;
			break;
		}
		/* -p PW, -f FILE, -d FD, -P PROMPT take a value (attached or next) */
		if (w[i].len == 2 && strchr("pfdP", w[i].text[1]))
			i++;
		i++;
	}
	if (i < n)
		on_program(sc, w + i, n - i, extra);
}

/* ---------------------------------------------------------------- fleets */

struct fleet_state {
	bool hidden;
	size_t found;
};

static void host_list(struct scan *sc, const char *prog, const char *t, size_t len,
                      struct fleet_state *fs)
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

			split_hostport(t + st, i - st, &h, &hl, &port);
			/* node[1-3] ranges and globs: the literal part may still be a name */
			if (memchr(h, '[', hl) && h[0] != '[')
				hl = (size_t)((const char *)memchr(h, '[', hl) - h),
				fs->hidden = true;
			if (memchr(h, '*', hl))
				fs->hidden = true;
			if (hl > 0 && add_dest(sc, prog, h, hl, port, k) != NULL)
				fs->found++;
		}
		if (names) {
			/* the item whole (an IPv6 address), then each part of a pattern */
			size_t p = st;

			add_dest(sc, prog, t + st, i - st, 0, k);
			while (p < i) {
				size_t q = p;

				while (q < i && t[q] != ':')
					q++;
				if (q > p)
					add_dest(sc, prog, t + p, q - p, 0, k);
				p = q + 1;
			}
		}
	}
}

static void fleet_opt(struct scan *sc, const char *prog, const struct opt_value *v, void *arg)
{
	struct fleet_state *fs = arg;

	if (v->text == NULL)
		return;
	if (v->computed) {
		fs->hidden = true;
		return;
	}
	if (opt_is(v, 'H', "host") || opt_is(v, 'w', NULL) || opt_is(v, 'm', NULL) ||
	    opt_is(v, 0, "hosts") || opt_is(v, 0, "nodes")) {
		if (strcmp(prog, "ansible") == 0 || strncmp(prog, "ansible-", 8) == 0)
			return;
		host_list(sc, prog, v->text, v->len, fs);
	} else if (opt_is(v, 'i', "inventory") || opt_is(v, 0, "inventory-file")) {
		/* an inline inventory "a,b," names its hosts; a file hides them */
		if (memchr(v->text, ',', v->len))
			host_list(sc, prog, v->text, v->len, fs);
		fs->hidden = true;
	} else if (opt_is(v, 'l', "limit")) {
		host_list(sc, prog, v->text, v->len, fs);
	} else if (opt_is(v, 'h', NULL) || opt_is(v, 'g', "group") || opt_is(v, 0, "hostfile")) {
		fs->hidden = true;
	} else if (opt_is(v, 'e', "extra-vars") &&
	           (memmem(v->text, v->len, "ansible_host", 12) != NULL)) {
		host_list(sc, prog, v->text, v->len, fs);
	}
}

static void prog_fleet(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	struct fleet_state fs = {0};
	const struct sh_word *ops[8];
	size_t nops;
	bool ansible = strcmp(prog, "ansible") == 0 || strncmp(prog, "ansible-", 8) == 0;

	parse_opts(sc, prog, w, n, ansible ? "iluMmaefBPtoTkK" : "hHlpotxXOwgmeEIcRbfF",
	           ansible ? "inventory inventory-file limit module-name args extra-vars forks "
	                     "user become-user private-key timeout connection vault-id "
	                     "vault-password-file tags skip-tags start-at-task ssh-common-args "
	                     "ssh-extra-args"
	                   : "host hosts user timeout outdir errdir par options",
	           fleet_opt, &fs, ops, &nops, 8);
	if (ansible && strcmp(prog, "ansible") == 0 && nops > 0 && lit(ops[0]))
		host_list(sc, prog, ops[0]->text, ops[0]->len, &fs);
	if (!ansible && strcmp(prog, "pdsh") != 0 && strcmp(prog, "clush") != 0 && nops > 0 &&
	    fs.found == 0)
		fs.hidden = true;
	if (fs.hidden || fs.found == 0 || ansible) {
		struct reach *r = add(sc, REACH_HIDDEN, prog);
		if (r != NULL)
			r->dest =
			    xstrdup(ansible ? "hosts from its inventory" : "hosts from a list");
	}
}

/* ---------------------------------------------------------------- raw sockets */

static void nc_opt(struct scan *sc, const char *prog, const struct opt_value *v, void *arg)
{
	bool *listen = arg;

	if (v->opt == 'l' || v->opt == 'U' || opt_is(v, 0, "listen"))
		*listen = true;
	if (v->text != NULL && (opt_is(v, 'x', "proxy")))
		value_dest(sc, prog, v);
	if (v->text != NULL && (opt_is(v, 'e', "exec") || opt_is(v, 'c', "sh-exec")))
		value_code(sc, v);
}

static void prog_nc(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[4];
	size_t nops;
	bool listen = false;

	parse_opts(sc, prog, w, n, "bceIiMmOPpqsTVwXx",
	           "proxy exec sh-exec source source-port wait idle-timeout proxy-type proxy-auth",
	           nc_opt, &listen, ops, &nops, 2);
	if (listen || nops == 0)
		return;
	if (!lit(ops[0])) {
		add_computed(sc, prog, ops[0]);
		return;
	}
	add_dest(sc, prog, ops[0]->text, ops[0]->len,
	         nops > 1 && lit(ops[1]) ? parse_port(ops[1]->text, ops[1]->len) : 0, REACH_DEST);
}

static void prog_telnet(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[4];
	size_t nops;
	bool unused = false;

	parse_opts(sc, prog, w, n, "belnXk", NULL, nc_opt, &unused, ops, &nops, 2);
	if (nops == 0)
		return;
	if (!lit(ops[0])) {
		add_computed(sc, prog, ops[0]);
		return;
	}
	add_dest(sc, prog, ops[0]->text, ops[0]->len,
	         nops > 1 && lit(ops[1]) ? parse_port(ops[1]->text, ops[1]->len) : 0, REACH_DEST);
}

/* One socat address: TYPE:params[,options] */
static void socat_addr(struct scan *sc, const char *prog, const struct sh_word *x)
{
	const char *t = x->text, *end, *colon;
	size_t len = x->len, tl;
	const char *part[4];
	size_t plen[4], np = 0;

	if (!lit(x)) {
		add_computed(sc, prog, x);
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
		scan_text(sc, colon + 1, cl);
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
		add_dest(sc, prog, part[0], plen[0], np > 1 ? parse_port(part[1], plen[1]) : 0,
		         REACH_DEST);
	if ((strncasecmp(t, "socks", 5) == 0 || strncasecmp(t, "proxy", 5) == 0) && np >= 2)
		add_dest(sc, prog, part[1], plen[1], np > 2 ? parse_port(part[2], plen[2]) : 0,
		         REACH_DEST);
}

static void prog_socat(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (!(lit(&w[i]) && w[i].len > 1 && w[i].text[0] == '-'))
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

static void resolve_spec(struct scan *sc, const char *prog, const char *t, size_t len,
                         bool connect_to)
{
	size_t e, st = 0;

	if (len > 0 && (t[0] == '+' || t[0] == '-'))
		st = 1; /* --resolve +host:... / -host:... */
	e = field_end(t, st, len);
	if (e > st)
		add_dest(sc, prog, t + st, e - st, 0, REACH_DEST);
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
			add_dest(sc, prog, t + st, hl, 0, REACH_DEST);
		return;
	}
	while (st < len) {
		const char *comma = memchr(t + st, ',', len - st);
		size_t l = comma ? (size_t)(comma - (t + st)) : len - st;

		if (l > 0)
			add_dest(sc, prog, t + st, l, 0, REACH_DEST);
		st += l + 1;
	}
}

static void http_opt(struct scan *sc, const char *prog, const struct opt_value *v, void *arg)
{
	bool *hidden = arg;

	if (v->text == NULL)
		return;
	if (opt_is(v, 'x', "proxy") || opt_is(v, 0, "preproxy") || opt_is(v, 0, "socks4") ||
	    opt_is(v, 0, "socks4a") || opt_is(v, 0, "socks5") || opt_is(v, 0, "socks5-hostname") ||
	    opt_is(v, 0, "url") || opt_is(v, 0, "http-proxy") || opt_is(v, 0, "https-proxy")) {
		const char *h;
		size_t hl;
		int port;

		if (v->computed) {
			value_dest(sc, prog, v);
		} else if (parse_url(v->text, v->len, &h, &hl, &port)) {
			add_dest(sc, prog, h, hl, port, REACH_DEST);
		} else {
			split_hostport(v->text, v->len, &h, &hl, &port);
			add_dest(sc, prog, h, hl, port, REACH_DEST);
		}
	} else if (opt_is(v, 0, "resolve") || opt_is(v, 0, "connect-to")) {
		/* host:port:addr[,addr] / host1:port1:host2:port2: both ends count */
		if (v->computed) {
			value_dest(sc, prog, v);
			return;
		}
		resolve_spec(sc, prog, v->text, v->len, opt_is(v, 0, "connect-to"));
	} else if (opt_is(v, 'K', "config") ||
	           (opt_is(v, 'i', "input-file") && strcmp(prog, "wget") == 0)) {
		*hidden = true;
	} else if (opt_is(v, 'e', "execute") && strcmp(prog, "wget") == 0) {
		/* wget -e http_proxy=host:port */
		const char *eq = memchr(v->text, '=', v->len);
		if (eq != NULL && memmem(v->text, (size_t)(eq - v->text), "proxy", 5)) {
			struct opt_value pv = *v;
			pv.name = "proxy";
			pv.namelen = 5;
			pv.opt = 0;
			pv.text = eq + 1;
			pv.len = v->len - (size_t)(eq + 1 - v->text);
			http_opt(sc, prog, &pv, arg);
		}
	}
}

static void http_url(struct scan *sc, const char *prog, const struct sh_word *x)
{
	const char *h;
	size_t hl;
	int port;

	if (!lit(x)) {
		if (x->prefix == 0 || memmem(x->text, x->prefix, "://", 3) != NULL ||
		    memchr(x->text, '/', x->prefix) == NULL)
			add_computed(sc, prog, x);
		return;
	}
	if (parse_url(x->text, x->len, &h, &hl, &port)) {
		add_dest(sc, prog, h, hl, port, REACH_DEST);
		return;
	}
	if (x->len > 0 && x->text[0] == ':') {
		/* httpie's :8006/path is localhost */
		add_dest(sc, prog, "localhost", 9, parse_port(x->text + 1, x->len - 1), REACH_DEST);
		return;
	}
	split_hostport(x->text, x->len, &h, &hl, &port);
	add_dest(sc, prog, h, hl, port, REACH_DEST);
}

static void prog_http(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
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

	parse_opts(sc, prog, w, n,
	           curl   ? "AbcCdDeEFHKmoPQrtTuUwxXYyz"
	           : wget ? "OoaeiBtTwQPUlDAR"
	                  : "aAbhfjpv",
	           curl ? curl_long
	           : wget
	               ? wget_long
	               : "auth auth-type session session-read-only output print proxy verify cert "
	                 "cert-key timeout",
	           http_opt, &hidden, ops, &nops, 64);
	if (httpie) {
		size_t k = 0;

		/* [METHOD] URL [items]: only the URL is a destination */
		if (k < nops && lit(ops[k]) && ops[k]->len > 0 &&
		    strspn(ops[k]->text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ops[k]->len)
			k++;
		if (k < nops)
			http_url(sc, prog, ops[k]);
	} else {
		for (size_t k = 0; k < nops; k++)
			http_url(sc, prog, ops[k]);
	}
	if (hidden) {
		struct reach *r = add(sc, REACH_HIDDEN, prog);
		if (r != NULL)
			r->dest = xstrdup("URLs from a file");
	}
}

/* ---------------------------------------------------------------- git */

static void git_opt(struct scan *sc, const char *prog, const struct opt_value *v, void *arg)
{
	(void)prog;
	(void)arg;
	/* git -c core.sshCommand='ssh -o ProxyCommand=...' */
	if (v->text != NULL && v->opt == 'c' && !v->computed) {
		const char *eq = memchr(v->text, '=', v->len);
		if (eq != NULL && strncasecmp(v->text, "core.sshcommand", 15) == 0)
			scan_text(sc, eq + 1, v->len - (size_t)(eq + 1 - v->text));
	}
}

static void prog_git(struct scan *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[64];
	size_t nops;

	parse_opts(sc, prog, w, n, "cC", NULL, git_opt, NULL, ops, &nops, 64);
	for (size_t k = 0; k < nops; k++) {
		const char *h;
		size_t hl;

		if (!lit(ops[k]))
			continue;
		if (url_dest(sc, prog, ops[k], REACH_DEST))
			continue;
		if (remote_operand(ops[k]->text, ops[k]->len, &h, &hl)) {
			/* user@host:repo is ssh; rev:path (HEAD:README) is not: a name
			 * without @ or a dot matters only when it is managed */
			bool hosty = memchr(h, '@', hl) || memchr(h, '.', hl);
			struct reach *r =
			    add_dest(sc, prog, h, hl, 0, hosty ? REACH_DEST : REACH_NAMED);
			if (r != NULL && r->kind == REACH_DEST)
				r->ssh_config = true;
		}
	}
}

/* ---------------------------------------------------------------- dispatch */

static bool in_list(const char *name, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

static const char *const local_pve[] = {
    "qm",      "pct",          "pvesh",      "pvesm",      "pveam",  "pvecm",     "pvenode",
    "pveceph", "pvesr",        "pveum",      "ha-manager", "vzdump", "qmrestore", "pct-restore",
    "virsh",   "virt-install", "virt-clone", "qemu-img",   NULL};
static const char *const ssh_family[] = {"ssh",      "slogin",      "autossh",
                                         "dbclient", "ssh-copy-id", NULL};
static const char *const fleet[] = {"pssh",   "parallel-ssh",   "pscp",   "parallel-scp",
                                    "prsync", "parallel-rsync", "pslurp", "parallel-slurp",
                                    "pnuke",  "parallel-nuke",  "pdsh",   "pdcp",
                                    "rpdcp",  "clush",          "dsh",    NULL};
static const char *const netcat[] = {"nc", "ncat", "netcat", "nc.openbsd", "nc.traditional", NULL};
static const char *const http_clients[] = {
    "curl",   "wget", "http", "https", "xh",     "xhs",  "lwp-request", "GET",      "POST", "HEAD",
    "aria2c", "lynx", "w3m",  "links", "elinks", "lftp", "ftp",         "WebFetch", NULL};

/* Programs that run a command given in their arguments, which the shell
 * reading does not look into: the command is found and read as well. */
static const char *const runners[] = {
    "script",   "tmux",        "screen",       "dtach",       "abduco",     "systemd-run",
    "parallel", "proxychains", "proxychains4", "torsocks",    "tsocks",     "strace",
    "ltrace",   "valgrind",    "unbuffer",     "rlwrap",      "firejail",   "bwrap",
    "unshare",  "setsid",      "stdbuf",       "faketime",    "daemonize",  "start-stop-daemon",
    "doas",     "pkexec",      "sg",           "ionice",      "chrt",       "taskset",
    "numactl",  "cgexec",      "prlimit",      "dbus-launch", "xvfb-run",   "ssh-agent",
    "gosu",     "su-exec",     "chpst",        "runcon",      "sshfs",      "nohup",
    "time",     "catchsegv",   "with-lock-ex", "lxc-attach",  "machinectl", NULL};

/* Programs whose arguments are shell code. */
static const char *const code_takers[] = {"sh",      "bash",    "dash",  "zsh",    "ksh", "mksh",
                                          "ash",     "busybox", "eval",  "source", ".",   "su",
                                          "runuser", "watch",   "flock", NULL};

/* A program this file looks into (so a runner's command starts there). */
static bool reaching_program(const char *name)
{
	static const char *const shells[] = {
	    "sh",    "bash",   "dash",  "zsh", "ksh",  "busybox", "env",     "sudo",        "git",
	    "socat", "telnet", "rsync", "scp", "sftp", "mosh",    "sshpass", "ssh-keyscan", NULL};

	return in_list(name, local_pve) || in_list(name, ssh_family) || in_list(name, fleet) ||
	       in_list(name, netcat) || in_list(name, http_clients) || in_list(name, shells) ||
	       in_list(name, runners) || strncmp(name, "ansible", 7) == 0 ||
	       strncmp(name, "python", 6) == 0 || strcmp(name, "perl") == 0;
}

static bool standard_dir(const char *w, size_t dirlen)
{
	static const char *const dirs[] = {
	    "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", NULL};

	for (size_t i = 0; dirs[i]; i++)
		if (strlen(dirs[i]) == dirlen && memcmp(dirs[i], w, dirlen) == 0)
			return true;
	return false;
}

static bool in_list(const char *name, const char *const *list);
static bool reaching_program(const char *name);

/* What echo/printf print inside the command substitutions of a spelling,
 * read as code: the bodies are parsed by the classifier's reading, and each
 * echo or printf of literal words contributes its output. */
struct printed {
	struct buf out;
};

static void printed_program(void *ctx, const struct sh_word *w, size_t n, bool extra)
{
	struct printed *pr = ctx;
	size_t i = 1;
	bool is_printf;

	(void)extra;
	if (n == 0 || !lit(&w[0]))
		return;
	is_printf = w[0].len == 6 && memcmp(w[0].text, "printf", 6) == 0;
	if (!is_printf && !(w[0].len == 4 && memcmp(w[0].text, "echo", 4) == 0))
		return;
	if (is_printf && n > 1 && lit(&w[1]) && memchr(w[1].text, '%', w[1].len))
		i = 2; /* printf %s ARGS: the arguments are the output */
	while (!is_printf && i < n && lit(&w[i]) && w[i].len == 2 && w[i].text[0] == '-')
		i++; /* echo -n / -e */
	for (; i < n; i++) {
		buf_putc(&pr->out, ' ');
		if (lit(&w[i]))
			buf_append(&pr->out, w[i].text, w[i].len);
	}
	buf_putc(&pr->out, '\n');
}

static void printed_code(struct scan *sc, const char *raw, size_t len)
{
	struct printed pr = {.out = BUF_INIT};
	struct classifier_observer obs = {.program = printed_program, .ctx = &pr};
	struct verdict v = VERDICT_INIT;

	/* the spelling, quotes and all, parsed as a command: its substitutions'
	 * bodies are walked like any code */
	classifier_observe(sc->c, TARGET_PROXMOX_HOST, raw, len, &obs, &v);
	verdict_free(&v);
	if (pr.out.len > 0)
		scan_text(sc, buf_str(&pr.out), pr.out.len);
	buf_free(&pr.out);
}

/* A runner's command: the first word naming a program that reaches or a
 * shell is read from there; an argument with spaces is read as code. */
static void runner(struct scan *sc, const struct sh_word *w, size_t n, bool extra)
{
	for (size_t i = 1; i < n; i++) {
		const char *t = w[i].text, *slash;
		char base[64];
		size_t bl;

		if (!lit(&w[i])) {
			if (memmem(w[i].raw, w[i].raw_len, "$(", 2) ||
			    memchr(w[i].raw, '`', w[i].raw_len))
				named_tokens(sc, "a computed command", w[i].raw, w[i].raw_len);
			continue;
		}
		slash = memrchr(t, '/', w[i].len);
		bl = slash ? w[i].len - (size_t)(slash + 1 - t) : w[i].len;
		if (bl > 0 && bl < sizeof(base) && memchr(t, ' ', w[i].len) == NULL) {
			memcpy(base, slash ? slash + 1 : t, bl);
			base[bl] = '\0';
			if (reaching_program(base)) {
				/* read the command again, whole, so wrappers and
				 * interpreters in it are looked through too */
				struct buf b = BUF_INIT;

				for (size_t k = i; k < n; k++) {
					if (k > i)
						buf_putc(&b, ' ');
					if (lit(&w[k]))
						shellquote_append(&b, w[k].text, w[k].len);
					else
						buf_append(&b, w[k].raw, w[k].raw_len);
				}
				if (extra)
					buf_puts(&b, " \"$EXTRA\""); /* xargs: unseen arguments */
				scan_text(sc, buf_str(&b), b.len);
				buf_free(&b);
				return;
			}
		}
		if (memchr(t, ' ', w[i].len) != NULL)
			scan_text(sc, t, w[i].len);
	}
}

static void on_program(void *ctx, const struct sh_word *w, size_t n, bool extra)
{
	struct scan *sc = ctx;
	char name[64];
	const char *slash;
	size_t nl;
	bool odd_place;

	if (n == 0 || sc->failed)
		return;
	if (!lit(&w[0])) {
		/* $CMD host, ssh${IFS}node: the program is known only at run time; a
		 * managed name in its spelling or among its words still denies */
		sc->computed_program = true;
		named_tokens(sc, "a computed program", w[0].raw, w[0].raw_len);
		for (size_t i = 1; i < n; i++)
			named_tokens(sc, "a computed program", lit(&w[i]) ? w[i].text : w[i].raw,
			             lit(&w[i]) ? w[i].len : w[i].raw_len);
		return;
	}
	slash = memrchr(w[0].text, '/', w[0].len);
	nl = slash ? w[0].len - (size_t)(slash + 1 - w[0].text) : w[0].len;
	if (nl == 0 || nl >= sizeof(name))
		return;
	memcpy(name, slash ? slash + 1 : w[0].text, nl);
	name[nl] = '\0';
	odd_place = slash != NULL && !standard_dir(w[0].text, (size_t)(slash - w[0].text));
	if (in_list(name, code_takers)) {
		/* code computed by a command substitution (bash -c "$(printf 'ssh
		 * node')"): what echo/printf in it print is read as code, and a
		 * managed name anywhere in its spelling counts */
		for (size_t i = 1; i < n; i++)
			if (!lit(&w[i]) && (memmem(w[i].raw, w[i].raw_len, "$(", 2) ||
			                    memchr(w[i].raw, '`', w[i].raw_len))) {
				named_tokens(sc, "a computed command", w[i].raw, w[i].raw_len);
				printed_code(sc, w[i].raw, w[i].raw_len);
			}
	}
	if (in_list(name, local_pve)) {
		struct reach *r = add(sc, REACH_LOCAL_PVE, name);
		(void)r;
		return;
	}
	if (in_list(name, ssh_family)) {
		prog_ssh(sc, name, w, n);
		if (extra)
			add_computed(sc, name, &w[0]); /* xargs ssh, xargs -I{} ssh {} */
		return;
	}
	if (strcmp(name, "scp") == 0 || strcmp(name, "sftp") == 0) {
		prog_scp(sc, name, w, n);
		if (extra)
			add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "rsync") == 0) {
		prog_rsync(sc, name, w, n);
		if (extra)
			add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "mosh") == 0) {
		prog_mosh(sc, name, w, n);
		return;
	}
	if (strcmp(name, "sshpass") == 0) {
		prog_sshpass(sc, w, n, extra);
		return;
	}
	if (strcmp(name, "ansible") == 0 || strcmp(name, "ansible-playbook") == 0 ||
	    strcmp(name, "ansible-console") == 0 || strcmp(name, "ansible-runner") == 0 ||
	    in_list(name, fleet)) {
		prog_fleet(sc, name, w, n);
		return;
	}
	if (in_list(name, netcat)) {
		prog_nc(sc, name, w, n);
		if (extra)
			add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "telnet") == 0) {
		prog_telnet(sc, name, w, n);
		return;
	}
	if (strcmp(name, "socat") == 0) {
		prog_socat(sc, name, w, n);
		return;
	}
	if (in_list(name, http_clients)) {
		prog_http(sc, name, w, n);
		if (extra)
			add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "git") == 0) {
		prog_git(sc, name, w, n);
		return;
	}
	if (strcmp(name, "ssh-keyscan") == 0) {
		const struct sh_word *ops[32];
		size_t nops;
		struct fleet_state fs = {0};

		parse_opts(sc, name, w, n, "fpTtO", NULL, fleet_opt, &fs, ops, &nops, 32);
		for (size_t k = 0; k < nops; k++) {
			if (!lit(ops[k]))
				add_computed(sc, name, ops[k]);
			else
				host_list(sc, name, ops[k]->text, ops[k]->len, &fs);
		}
		return;
	}
	if (in_list(name, runners)) {
		runner(sc, w, n, extra);
		return;
	}
	/* Anything else: a URL among its words, or, for a program outside the
	 * standard directories (a copied ssh), any host-like word, counts when
	 * it is managed. */
	for (size_t i = 1; i < n; i++) {
		if (!lit(&w[i]))
			continue;
		if (odd_place)
			named_tokens(sc, name, w[i].text, w[i].len);
		else if (memmem(w[i].text, w[i].len, "://", 3) != NULL)
			url_dest(sc, name, &w[i], REACH_NAMED);
	}
}

/* bash opens /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT as connections. */
static void on_redirect(void *ctx, const struct sh_word *w)
{
	struct scan *sc = ctx;
	const char *t = lit(w) ? w->text : w->raw;
	size_t len = lit(w) ? w->len : w->raw_len;
	const char *h, *slash;

	if (len < 10 || (memcmp(t, "/dev/tcp/", 9) != 0 && memcmp(t, "/dev/udp/", 9) != 0))
		return;
	if (!lit(w)) {
		add_computed(sc, "bash /dev/tcp", w);
		return;
	}
	h = t + 9;
	slash = memchr(h, '/', len - 9);
	add_dest(sc, "bash /dev/tcp", h, slash ? (size_t)(slash - h) : len - 9,
	         slash ? parse_port(slash + 1, len - (size_t)(slash + 1 - t)) : 0, REACH_DEST);
}

static void on_opaque(void *ctx, const char *text, size_t len)
{
	struct scan *sc = ctx;

	named_tokens(sc, "inline code", text, len);
}

static void scan_text(struct scan *sc, const char *text, size_t len)
{
	struct classifier_observer obs = {on_program, on_opaque, on_redirect, sc};
	struct verdict v = VERDICT_INIT;

	if (sc->failed)
		return;
	if (sc->depth >= SCAN_MAX_DEPTH) {
		struct reach *r = add(sc, REACH_COMPUTED, "command");
		if (r != NULL)
			r->dest = xstrdup("code nested too deeply to read");
		return;
	}
	sc->depth++;
	if (classifier_observe(sc->c, TARGET_PROXMOX_HOST, text, len, &obs, &v) < 0) {
		snprintf(sc->out->err, sizeof(sc->out->err), "the command could not be read");
		sc->failed = 1;
	}
	verdict_free(&v);
	sc->depth--;
}

int reach_scan(const struct classifier *c, const char *command, size_t len, struct reach_list *out)
{
	struct scan sc = {.c = c, .out = out};

	out->err[0] = '\0';
	if (c == NULL || command == NULL) {
		snprintf(out->err, sizeof(out->err), "no command");
		return -1;
	}
	if (len > CLASSIFIER_MAX_COMMAND) {
		snprintf(out->err, sizeof(out->err),
		         "the command is %zu bytes, more than airlock reads", len);
		return -1;
	}
	scan_text(&sc, command, len);
	/* c=ssh_node; IFS=_; $c -- set -- ssh node; "$@": the program and its
	 * words come from values assigned anywhere in the command, so a
	 * managed name anywhere in it counts */
	if (sc.computed_program && !sc.failed) {
		named_tokens(&sc, "a computed program", command, len);
		/* a changed IFS splits words anywhere (IFS=_; c=ssh_node; $c):
		 * what runs cannot be read */
		if (memmem(command, len, "IFS", 3) != NULL) {
			struct reach *r = add(&sc, REACH_COMPUTED, "a program");
			if (r != NULL)
				r->dest = xstrdup("a command split by a changed IFS");
		}
	}
	return sc.failed ? -1 : 0;
}

void reach_list_clear(struct reach_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].dest);
		for (size_t k = 0; k < l->v[i].nssh_args; k++)
			free(l->v[i].ssh_args[k]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
