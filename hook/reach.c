/* reach.c -- the findings, host spellings, words and options of a command, and
 * the reading that hands each program to reachprogs.c. */
#include "hook/reach.h"
#include "hook/reach_int.h"

#include "classifier/classifier.h"
#include "classifier/shparse.h"
#include "hook/inert.h"
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

struct reach *reach_add(struct reach_ctx *sc, enum reach_kind k, const char *prog)
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
struct reach *reach_add_dest(struct reach_ctx *sc, const char *prog, const char *s, size_t len,
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
		r = reach_add(sc, REACH_HIDDEN, prog);
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
	if (k == REACH_NAMED && sc->out->nnamed >= REACH_NAMED_MAX) {
		sc->out->named_overflow = true;
		return NULL;
	}
	r = reach_add(sc, k, prog);
	if (r != NULL) {
		r->dest = xstrdup(host);
		r->port = port;
		if (k == REACH_NAMED)
			sc->out->nnamed++;
	}
	return r;
}

void reach_add_computed(struct reach_ctx *sc, const char *prog, const struct sh_word *w)
{
	struct reach *r = reach_add(sc, REACH_COMPUTED, prog);

	if (r != NULL)
		r->dest = xstrndup(w->raw, w->raw_len > 80 ? 80 : w->raw_len);
}

bool reach_lit(const struct sh_word *w)
{
	return !(w->flags & SHW_COMPUTED) && memchr(w->text, '\0', w->len) == NULL;
}

bool reach_weq(const struct sh_word *w, const char *s)
{
	return reach_lit(w) && strlen(s) == w->len && memcmp(w->text, s, w->len) == 0;
}

int reach_parse_port(const char *s, size_t len)
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
bool reach_parse_url(const char *s, size_t len, const char **host, size_t *hlen, int *port)
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
			*port = reach_parse_port(rb + 2, (size_t)(he - rb - 2));
		return true;
	}
	{
		const char *colon = memchr(hs, ':', (size_t)(he - hs));

		*host = hs;
		*hlen = (size_t)((colon ? colon : he) - hs);
		if (colon)
			*port = reach_parse_port(colon + 1, (size_t)(he - colon - 1));
	}
	return *hlen > 0;
}

/* host[:port][/path] without a scheme (curl's default): host and port. */
void reach_split_hostport(const char *s, size_t len, const char **host, size_t *hlen, int *port)
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
				*port = reach_parse_port(rb + 2, (size_t)(he - rb - 2));
			return;
		}
	}
	{
		const char *c1 = memchr(s, ':', (size_t)(he - s));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(he - c1 - 1)) : NULL;

		if (c1 != NULL && c2 == NULL) {
			*hlen = (size_t)(c1 - s);
			*port = reach_parse_port(c1 + 1, (size_t)(he - c1 - 1));
		} else {
			*hlen = (size_t)(he - s); /* bare IPv6, or no port */
		}
	}
}

/* A URL word: its host as a destination of kind k.  false if not a URL. */
bool reach_url_dest(struct reach_ctx *sc, const char *prog, const struct sh_word *w,
                    enum reach_kind k)
{
	const char *h;
	size_t hl;
	int port;

	if (!reach_lit(w) || !reach_parse_url(w->text, w->len, &h, &hl, &port))
		return false;
	reach_add_dest(sc, prog, h, hl, port, k);
	return true;
}

/* [user@]host:path (scp, rsync, git): the host; false for a local path. */
bool reach_remote_operand(const char *s, size_t len, const char **host, size_t *hlen)
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

/* Words of programming languages, never a host worth asking about: code
 * is full of them, and each would cost a question to the database. */
static bool code_word(const char *s, size_t len)
{
	static const char *const words[] = {
	    "import", "from",    "print",  "def",     "return", "for",    "while",    "if",
	    "else",   "elif",    "true",   "false",   "none",   "null",   "len",      "str",
	    "int",    "self",    "this",   "var",     "let",    "const",  "function", "json",
	    "sys",    "console", "log",    "require", "my",     "sub",    "use",      "end",
	    "do",     "then",    "puts",   "and",     "or",     "not",    "in",       "is",
	    "with",   "as",      "try",    "except",  "catch",  "lambda", "class",    "new",
	    "loads",  "dumps",   "load",   "stdin",   "stdout", "stderr", "argv",     "strip",
	    "split",  "join",    "format", "open",    "read",   "write",  "line",     "lines",
	    "range",  "list",    "dict",   "keys",    "values", "items",  "get",      "sort",
	    "sorted", "echo",    "exit",   "main",    "args",   "data",   "value",    "key",
	    NULL};

	for (size_t i = 0; words[i]; i++)
		if (strlen(words[i]) == len && strncasecmp(words[i], s, len) == 0)
			return true;
	return false;
}

/* Words of code or of an unknown program that look like hosts: checked only
 * against the managed list (a managed name in them denies). */
void reach_named_tokens(struct reach_ctx *sc, const char *prog, const char *t, size_t len)
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
		if (e - st < 2 || e - st > 253 || code_word(t + st, e - st))
			continue;
		if (e - st < 7 && strspn(t + st, "0123456789") >= e - st)
			continue; /* a port or a count, not an address */
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
			reach_split_hostport(s, l, &h, &hl, &port);
			if (hl > 0)
				reach_add_dest(sc, prog, h, hl, port, REACH_NAMED);
			/* OPENSSL:host:8006, api:8006:addr (--resolve): each field */
			for (size_t p = 0, q; p < l && memchr(s, ':', l); p = q + 1) {
				for (q = p; q < l && s[q] != ':' && s[q] != ','; q++)
					;
				if (q > p && (q - p != l))
					reach_add_dest(sc, prog, s + p, q - p, 0, REACH_NAMED);
			}
			/* an unbracketed IPv6 address split at its first colon: try it whole */
			if (memchr(s, ':', l) && port == 0)
				reach_add_dest(sc, prog, s, l, 0, REACH_NAMED);
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

size_t reach_parse_opts(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n,
                        const char *valopts, const char *longval, reach_opt_fn fn, void *arg,
                        const struct sh_word **ops, size_t *nops, size_t maxops)
{
	size_t i = 1, none;

	if (nops == NULL)
		nops = &none;
	*nops = 0;
	while (i < n) {
		const struct sh_word *x = &w[i];

		if (reach_weq(x, "--")) {
			i++;
			break;
		}
		if (!reach_lit(x) && x->prefix > 0 && x->text[0] == '-') {
			/* -o$X: an option with a computed value */
			struct reach_opt v = {.opt = x->len > 1 ? x->text[1] : 0,
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
		if (!reach_lit(x) || x->len < 2 || x->text[0] != '-') {
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
			struct reach_opt v = {.name = name, .namelen = nl};

			if (eq != NULL) {
				v.text = eq + 1;
				v.len = x->len - 2 - nl - 1;
				fn(sc, prog, &v, arg);
			} else if (longval && long_in(longval, name, nl) && i + 1 < n) {
				v.word = &w[i + 1];
				v.text = w[i + 1].text;
				v.len = w[i + 1].len;
				v.computed = !reach_lit(&w[i + 1]);
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
				struct reach_opt v = {.opt = o};
				fn(sc, prog, &v, arg);
				continue;
			}
			{
				struct reach_opt v = {.opt = o};

				if (k + 1 < x->len) {
					v.text = x->text + k + 1;
					v.len = x->len - k - 1;
				} else if (i + 1 < n) {
					i++;
					v.word = &w[i];
					v.computed = !reach_lit(&w[i]);
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

bool reach_opt_is(const struct reach_opt *v, char s, const char *l)
{
	return (s && v->opt == s) || (l && v->name && v->namelen == strlen(l) &&
	                              strncasecmp(v->name, l, v->namelen) == 0);
}

/* A value that is itself a destination spelling. */
void reach_value_dest(struct reach_ctx *sc, const char *prog, const struct reach_opt *v)
{
	if (v->computed) {
		struct reach *r = reach_add(sc, REACH_COMPUTED, prog);
		if (r != NULL)
			r->dest = xstrndup(v->text, v->len > 80 ? 80 : v->len);
		return;
	}
	if (v->len > 0)
		reach_add_dest(sc, prog, v->text, v->len, 0, REACH_DEST);
}

/* A value that is a command line (ProxyCommand, rsync -e, mosh --ssh). */
void reach_value_code(struct reach_ctx *sc, const struct reach_opt *v)
{
	if (v->computed) {
		struct reach *r = reach_add(sc, REACH_COMPUTED, "command");
		if (r != NULL)
			r->dest = xstrndup(v->text, v->len > 80 ? 80 : v->len);
		return;
	}
	reach_scan_text(sc, v->text, v->len);
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
    "script",    "tmux",         "screen",       "dtach",       "abduco",    "systemd-run",
    "parallel",  "proxychains",  "proxychains4", "torsocks",    "tsocks",    "strace",
    "ltrace",    "valgrind",     "unbuffer",     "rlwrap",      "firejail",  "bwrap",
    "unshare",   "setsid",       "stdbuf",       "faketime",    "daemonize", "start-stop-daemon",
    "doas",      "pkexec",       "sg",           "ionice",      "chrt",      "taskset",
    "numactl",   "cgexec",       "prlimit",      "dbus-launch", "xvfb-run",  "ssh-agent",
    "gosu",      "su-exec",      "chpst",        "runcon",      "nohup",     "time",
    "catchsegv", "with-lock-ex", "lxc-attach",   "machinectl",  NULL};

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
	       strncmp(name, "python", 6) == 0 || strcmp(name, "perl") == 0 ||
	       reach_more_known(name);
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

/* What echo/printf print inside the command substitutions of a spelling,
 * read as code: the bodies are parsed by the classifier's reading, and each
 * echo or printf of literal words contributes its output. */
struct printed {
	struct buf out;
	int programs, printers; /* programs the spelling runs; of them, echo/printf of literals */
	bool computed;          /* some printed word is known only at run time */
	size_t spelling_len;    /* the spelling itself is parsed as a command of one word */
};

static void printed_program(void *ctx, const struct sh_word *w, size_t n, bool extra)
{
	struct printed *pr = ctx;
	size_t i = 1;
	bool is_printf;

	if (n == 1 && !reach_lit(&w[0]) && w[0].raw_len == pr->spelling_len)
		return; /* the spelling, not a program in it */
	pr->programs++;
	if (n == 0 || !reach_lit(&w[0]) || extra)
		return;
	is_printf = w[0].len == 6 && memcmp(w[0].text, "printf", 6) == 0;
	if (!is_printf && !(w[0].len == 4 && memcmp(w[0].text, "echo", 4) == 0))
		return;
	pr->printers++;
	if (is_printf && n > 1 && reach_lit(&w[1]) && memchr(w[1].text, '%', w[1].len))
		i = 2; /* printf %s ARGS: the arguments are the output */
	while (!is_printf && i < n && reach_lit(&w[i]) && w[i].len == 2 && w[i].text[0] == '-')
		i++; /* echo -n / -e */
	for (; i < n; i++) {
		buf_putc(&pr->out, ' ');
		if (reach_lit(&w[i]))
			buf_append(&pr->out, w[i].text, w[i].len);
		else
			pr->computed = true;
	}
	buf_putc(&pr->out, '\n');
}

/* Returns whether the spelling's whole output is known: every program in
 * it is an echo or printf of literal words (then the code it makes is
 * read here, and is no code "known only at run time"). */
static bool printed_code(struct reach_ctx *sc, const char *raw, size_t len)
{
	struct printed pr = {.out = BUF_INIT, .spelling_len = len};
	struct classifier_observer obs = {.program = printed_program, .ctx = &pr};
	struct verdict v = VERDICT_INIT;
	bool complete;

	/* the spelling, quotes and all, parsed as a command: its substitutions'
	 * bodies are walked like any code */
	classifier_observe(sc->c, TARGET_PROXMOX_HOST, raw, len, &obs, &v);
	verdict_free(&v);
	complete = pr.programs > 0 && pr.programs == pr.printers && !pr.computed;
	if (pr.out.len > 0)
		reach_scan_text(sc, buf_str(&pr.out), pr.out.len);
	buf_free(&pr.out);
	return complete;
}

/* A runner's command: the first word naming a program that reaches or a
 * shell is read from there; an argument with spaces is read as code. */
static void runner(struct reach_ctx *sc, const struct sh_word *w, size_t n, bool extra)
{
	for (size_t i = 1; i < n; i++) {
		const char *t = w[i].text, *slash;
		char base[64];
		size_t bl;

		if (!reach_lit(&w[i])) {
			if (memmem(w[i].raw, w[i].raw_len, "$(", 2) ||
			    memchr(w[i].raw, '`', w[i].raw_len))
				reach_named_tokens(sc, "a computed command", w[i].raw,
				                   w[i].raw_len);
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
					if (reach_lit(&w[k]))
						shellquote_append(&b, w[k].text, w[k].len);
					else
						buf_append(&b, w[k].raw, w[k].raw_len);
				}
				if (extra)
					buf_puts(&b, " \"$EXTRA\""); /* xargs: unseen arguments */
				reach_scan_text(sc, buf_str(&b), b.len);
				buf_free(&b);
				return;
			}
		}
		if (memchr(t, ' ', w[i].len) != NULL)
			reach_scan_text(sc, t, w[i].len);
	}
}

/* parallel-ssh's tools name their hosts with -h FILE or -H HOST. */
static bool fleet_style(const struct sh_word *w, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (reach_lit(&w[i]) && w[i].len >= 2 && w[i].text[0] == '-' &&
		    (w[i].text[1] == 'h' || w[i].text[1] == 'H' ||
		     (w[i].len > 6 && strncmp(w[i].text, "--host", 6) == 0)))
			return true;
	return false;
}

void reach_on_program(void *ctx, const struct sh_word *w, size_t n, bool extra)
{
	struct reach_ctx *sc = ctx;
	char name[64];
	const char *slash;
	size_t nl;
	bool odd_place;

	if (n == 0 || sc->failed)
		return;
	if (!reach_lit(&w[0])) {
		/* $CMD host, ssh${IFS}node: the program is known only at run time; a
		 * managed name in its spelling or among its words still denies */
		sc->computed_program = true;
		reach_named_tokens(sc, "a computed program", w[0].raw, w[0].raw_len);
		for (size_t i = 1; i < n; i++)
			reach_named_tokens(sc, "a computed program",
			                   reach_lit(&w[i]) ? w[i].text : w[i].raw,
			                   reach_lit(&w[i]) ? w[i].len : w[i].raw_len);
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
			if (!reach_lit(&w[i]) && (memmem(w[i].raw, w[i].raw_len, "$(", 2) ||
			                          memchr(w[i].raw, '`', w[i].raw_len))) {
				reach_named_tokens(sc, "a computed command", w[i].raw,
				                   w[i].raw_len);
				if (printed_code(sc, w[i].raw, w[i].raw_len))
					sc->printed_known++; /* the shell's "-c with code known only
					                        at run time" is known here */
			}
	}
	if (in_list(name, local_pve)) {
		struct reach *r = reach_add(sc, REACH_LOCAL_PVE, name);
		(void)r;
		return;
	}
	if (in_list(name, ssh_family)) {
		reach_prog_ssh(sc, name, w, n);
		if (extra)
			reach_add_computed(sc, name, &w[0]); /* xargs ssh, xargs -I{} ssh {} */
		return;
	}
	if (strcmp(name, "scp") == 0 || strcmp(name, "sftp") == 0) {
		reach_prog_scp(sc, name, w, n);
		if (extra)
			reach_add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "rsync") == 0) {
		reach_prog_rsync(sc, name, w, n);
		if (extra)
			reach_add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "mosh") == 0) {
		reach_prog_mosh(sc, name, w, n);
		return;
	}
	if (strcmp(name, "sshpass") == 0) {
		reach_prog_sshpass(sc, w, n, extra);
		return;
	}
	if (strcmp(name, "pscp") == 0 && !fleet_style(w, n) &&
	    reach_more_program(sc, name, w, n, extra))
		return; /* PuTTY's pscp, not parallel-ssh's */
	if (strcmp(name, "ansible") == 0 || strcmp(name, "ansible-playbook") == 0 ||
	    strcmp(name, "ansible-console") == 0 || strcmp(name, "ansible-runner") == 0 ||
	    in_list(name, fleet)) {
		reach_prog_fleet(sc, name, w, n);
		return;
	}
	if (in_list(name, netcat)) {
		reach_prog_nc(sc, name, w, n);
		if (extra)
			reach_add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "telnet") == 0) {
		reach_prog_telnet(sc, name, w, n);
		return;
	}
	if (strcmp(name, "socat") == 0) {
		reach_prog_socat(sc, name, w, n);
		return;
	}
	if (in_list(name, http_clients)) {
		reach_prog_http(sc, name, w, n);
		if (extra)
			reach_add_computed(sc, name, &w[0]);
		return;
	}
	if (strcmp(name, "git") == 0) {
		reach_prog_git(sc, name, w, n);
		return;
	}
	if (strcmp(name, "ssh-keyscan") == 0) {
		const struct sh_word *ops[32];
		size_t nops;
		struct reach_fleet fs = {0};

		reach_parse_opts(sc, name, w, n, "fpTtO", NULL, reach_fleet_opt, &fs, ops, &nops,
		                 32);
		for (size_t k = 0; k < nops; k++) {
			if (!reach_lit(ops[k]))
				reach_add_computed(sc, name, ops[k]);
			else
				reach_host_list(sc, name, ops[k]->text, ops[k]->len, &fs);
		}
		return;
	}
	if (reach_more_program(sc, name, w, n, extra))
		return;
	if (in_list(name, runners)) {
		runner(sc, w, n, extra);
		return;
	}
	/* Anything else: a URL among its words, or, for a program outside the
	 * standard directories (a copied ssh), any host-like word, counts when
	 * it is managed. */
	for (size_t i = 1; i < n; i++) {
		if (!reach_lit(&w[i]))
			continue;
		if (odd_place)
			reach_named_tokens(sc, name, w[i].text, w[i].len);
		else if (memmem(w[i].text, w[i].len, "://", 3) != NULL)
			reach_url_dest(sc, name, &w[i], REACH_NAMED);
	}
}

/* bash opens /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT as connections. */
static void on_redirect(void *ctx, const struct sh_word *w)
{
	struct reach_ctx *sc = ctx;
	const char *t = reach_lit(w) ? w->text : w->raw;
	size_t len = reach_lit(w) ? w->len : w->raw_len;
	const char *h, *slash;

	if (len < 10 || (memcmp(t, "/dev/tcp/", 9) != 0 && memcmp(t, "/dev/udp/", 9) != 0))
		return;
	if (!reach_lit(w)) {
		reach_add_computed(sc, "bash /dev/tcp", w);
		return;
	}
	h = t + 9;
	slash = memchr(h, '/', len - 9);
	reach_add_dest(sc, "bash /dev/tcp", h, slash ? (size_t)(slash - h) : len - 9,
	               slash ? reach_parse_port(slash + 1, len - (size_t)(slash + 1 - t)) : 0,
	               REACH_DEST);
}

/* What an opaque part of the command is, by the reading's own words. */
enum opaque_kind {
	OPAQUE_IGNORE, /* a script file or program file: what the hook never reads */
	OPAQUE_CODE,   /* interpreter code whose text is known: read for capabilities */
	OPAQUE_ASK,    /* code nobody can see or that is made at run time */
};

static enum opaque_kind opaque_kind(const char *what, const char *text, size_t len)
{
	static const char *const files[] = {"runs the script file ",
	                                    "runs a script or module that cannot be read",
	                                    "sed runs a script file",
	                                    "awk runs a program file",
	                                    "at -f runs a script file",
	                                    " -c without code",
	                                    NULL};

	for (size_t i = 0; files[i]; i++)
		if (strstr(what, files[i]) != NULL)
			return OPAQUE_IGNORE;
	if (strstr(what, "awk program runs commands or writes files") != NULL)
		return text != NULL && (memmem(text, len, "system", 6) || memchr(text, '|', len))
		           ? OPAQUE_ASK
		           : OPAQUE_IGNORE;
	/* the reading took an option for the code (ruby -rsocket, python -c'...'):
	 * the code itself was not seen */
	if (text != NULL && len > 0 && text[0] == '-')
		return OPAQUE_ASK;
	if (text != NULL && (strstr(what, "(code in another language)") != NULL ||
	                     strstr(what, " reads code from stdin") != NULL ||
	                     (strstr(what, " runs a script written by this command") != NULL &&
	                      strncmp(what, "a script", 8) != 0)))
		return OPAQUE_CODE;
	return OPAQUE_ASK; /* and any reading this file does not know: fail closed */
}

static void on_opaque(void *ctx, const char *what, const char *text, size_t len)
{
	struct reach_ctx *sc = ctx;
	enum opaque_kind k = opaque_kind(what, text, len);
	char prog[64], why[160];
	const char *subject = what, *sp = strchr(what, ' '), *slash;
	size_t pl = sp ? (size_t)(sp - what) : strlen(what);
	struct reach *r;

	if (k == OPAQUE_IGNORE)
		return;
	/* what runs on the far side of ssh is judged by where ssh goes */
	if (strstr(what, "(remote shell)") != NULL || strncmp(what, "ssh remote command", 18) == 0)
		return;
	if (sc->printed_known > 0 && strstr(what, "-c with code known only at run time") != NULL) {
		sc->printed_known--;
		return;
	}
	/* the program: the first word of the reading's words, without its path */
	slash = memrchr(what, '/', pl);
	if (slash != NULL) {
		pl -= (size_t)(slash + 1 - what);
		what = slash + 1;
	}
	snprintf(prog, sizeof(prog), "%.*s", (int)(pl < sizeof(prog) ? pl : sizeof(prog) - 1),
	         what);
	why[0] = '\0';
	if (k == OPAQUE_CODE && inert_code(prog, text, len, why, sizeof(why)))
		return; /* it can compute and print, not connect */
	if (text != NULL)
		reach_named_tokens(sc, "inline code", text, len);
	for (size_t i = 0; i < sc->out->n; i++)
		if (sc->out->v[i].kind == REACH_OPAQUE && strcmp(sc->out->v[i].program, prog) == 0)
			return; /* one question per program is enough */
	r = reach_add(sc, REACH_OPAQUE, strncmp(subject, "a script", 8) == 0 ? "a shell" : prog);
	if (r != NULL)
		r->why = why[0] ? xasprintf("%s: %s", subject, why) : xstrdup(subject);
}

void reach_add_opaque(struct reach_ctx *sc, const char *prog, const char *why)
{
	struct reach *r = reach_add(sc, REACH_OPAQUE, prog);

	if (r != NULL)
		r->why = xstrdup(why);
}

void reach_scan_text(struct reach_ctx *sc, const char *text, size_t len)
{
	struct classifier_observer obs = {
	    .program = reach_on_program, .opaque = on_opaque, .redirect = on_redirect, .ctx = sc};
	struct verdict v = VERDICT_INIT;

	if (sc->failed)
		return;
	if (sc->depth >= SCAN_MAX_DEPTH) {
		struct reach *r = reach_add(sc, REACH_COMPUTED, "command");
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
	struct reach_ctx sc = {.c = c, .out = out};

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
	reach_scan_text(&sc, command, len);
	if (!sc.failed)
		reach_env_assignments(&sc, command, len);
	/* code nobody can read may reach what any word of the command names */
	if (!sc.failed && reach_any_opaque(out))
		reach_named_tokens(&sc, "inline code", command, len);
	/* c=ssh_node; IFS=_; $c -- set -- ssh node; "$@": the program and its
	 * words come from values assigned anywhere in the command, so a
	 * managed name anywhere in it counts */
	if (sc.computed_program && !sc.failed) {
		reach_named_tokens(&sc, "a computed program", command, len);
		/* a changed IFS splits words anywhere (IFS=_; c=ssh_node; $c):
		 * what runs cannot be read */
		if (memmem(command, len, "IFS", 3) != NULL) {
			struct reach *r = reach_add(&sc, REACH_COMPUTED, "a program");
			if (r != NULL)
				r->dest = xstrdup("a command split by a changed IFS");
		}
	}
	return sc.failed ? -1 : 0;
}

bool reach_any_opaque(const struct reach_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == REACH_OPAQUE)
			return true;
	return false;
}

void reach_add_named_text(struct reach_list *l, const char *prog, const char *text, size_t len)
{
	struct reach_ctx sc = {.out = l};

	reach_named_tokens(&sc, prog, text, len);
}

void reach_list_clear(struct reach_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].dest);
		free(l->v[i].why);
		for (size_t k = 0; k < l->v[i].nssh_args; k++)
			free(l->v[i].ssh_args[k]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
