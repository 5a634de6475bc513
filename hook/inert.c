/* inert.c -- interpreter code read for the capabilities a reach needs. */
#include "hook/inert.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define INERT_MAX (64 * 1024) /* longer code is not read */

enum lang { L_PYTHON, L_NODE, L_PERL, L_RUBY, L_PHP, L_LUA, L_NONE };

struct rules {
	/* identifiers that are a capability wherever they appear */
	const char *const *banned;
	/* modules an import/require/use may name (the rest are capabilities) */
	const char *const *modules;
	/* attribute names (after . -> ::) that are capabilities */
	const char *const *attrs;
};

static const char *const py_banned[] = {"eval",         "exec",       "compile",
                                        "getattr",      "setattr",    "delattr",
                                        "globals",      "locals",     "vars",
                                        "breakpoint",   "help",       "license",
                                        "credits",      "copyright",  "os",
                                        "subprocess",   "socket",     "ssl",
                                        "http",         "urllib",     "urllib2",
                                        "urllib3",      "requests",   "httpx",
                                        "aiohttp",      "asyncio",    "multiprocessing",
                                        "ctypes",       "cffi",       "importlib",
                                        "runpy",        "imp",        "code",
                                        "codeop",       "pty",        "pexpect",
                                        "paramiko",     "fabric",     "telnetlib",
                                        "ftplib",       "smtplib",    "poplib",
                                        "imaplib",      "nntplib",    "xmlrpc",
                                        "socketserver", "selectors",  "select",
                                        "pickle",       "marshal",    "shelve",
                                        "webbrowser",   "pydoc",      "pdb",
                                        "builtins",     "concurrent", "logging",
                                        "xml",          "platform",   "sysconfig",
                                        "site",         "modules",    NULL};
static const char *const py_modules[] = {
    "json",      "sys",         "math",       "cmath",       "re",           "datetime",
    "time",      "collections", "itertools",  "functools",   "string",       "textwrap",
    "hashlib",   "hmac",        "statistics", "pprint",      "csv",          "decimal",
    "fractions", "random",      "secrets",    "uuid",        "base64",       "binascii",
    "struct",    "operator",    "typing",     "dataclasses", "enum",         "shlex",
    "difflib",   "unicodedata", "calendar",   "heapq",       "bisect",       "array",
    "copy",      "numbers",     "zlib",       "gzip",        "bz2",          "lzma",
    "io",        "fnmatch",     "glob",       "pathlib",     "argparse",     "locale",
    "keyword",   "ipaddress",   "html",       "tomllib",     "configparser", "contextlib",
    "abc",       "traceback",   "warnings",   "sqlite3",     "string",       "colorsys",
    "graphlib",  NULL};
static const char *const py_attrs[] = {"system",
                                       "popen",
                                       "spawnl",
                                       "spawnle",
                                       "spawnlp",
                                       "spawnlpe",
                                       "spawnv",
                                       "spawnve",
                                       "spawnvp",
                                       "spawnvpe",
                                       "execl",
                                       "execle",
                                       "execlp",
                                       "execlpe",
                                       "execv",
                                       "execve",
                                       "execvp",
                                       "execvpe",
                                       "fork",
                                       "forkpty",
                                       "modules",
                                       "load_extension",
                                       "enable_load_extension",
                                       "_getframe",
                                       "f_globals",
                                       "f_locals",
                                       "f_back",
                                       "f_builtins",
                                       "gi_frame",
                                       "cr_frame",
                                       "ag_frame",
                                       "tb_frame",
                                       "settrace",
                                       "setprofile",
                                       "meta_path",
                                       "path_hooks",
                                       "breakpointhook",
                                       "posix_spawn",
                                       "posix_spawnp",
                                       NULL};

static const char *const node_banned[] = {"eval",
                                          "Function",
                                          "constructor",
                                          "child_process",
                                          "net",
                                          "http",
                                          "https",
                                          "http2",
                                          "tls",
                                          "dgram",
                                          "dns",
                                          "cluster",
                                          "worker_threads",
                                          "vm",
                                          "module",
                                          "inspector",
                                          "fetch",
                                          "WebSocket",
                                          "XMLHttpRequest",
                                          "EventSource",
                                          "Deno",
                                          "Bun",
                                          "globalThis",
                                          "global",
                                          "spawn",
                                          "spawnSync",
                                          "exec",
                                          "execSync",
                                          "execFile",
                                          "execFileSync",
                                          "fork",
                                          "__proto__",
                                          "Reflect",
                                          "Proxy",
                                          "import",
                                          "process_binding",
                                          NULL};
static const char *const node_modules[] = {
    "fs",          "path",           "util",        "os",        "crypto",    "assert",
    "events",      "string_decoder", "querystring", "url",       "zlib",      "buffer",
    "readline",    "stream",         "node:fs",     "node:path", "node:util", "node:os",
    "node:crypto", "node:readline",  "node:buffer", "node:zlib", NULL};
static const char *const node_attrs[] = {"binding", "_linkedBinding",   "dlopen",      "mainModule",
                                         "execve",  "getBuiltinModule", "constructor", NULL};

static const char *const perl_banned[] = {
    "system", "exec", "fork", "qx",      "open",  "pipe", "socket",  "Socket",   "IO",
    "Net",    "LWP",  "HTTP", "syscall", "eval",  "do",   "require", "readpipe", "CORE",
    "can",    "goto", "dump", "sysopen", "POSIX", "IPC",  "Sys",     "Socket6",  NULL};
static const char *const perl_modules[] = {
    "strict", "warnings", "utf8", "feature",  "List",    "Scalar", "Data",   "JSON", "Time",
    "Getopt", "File",     "Text", "constant", "integer", "bigint", "Encode", NULL};

static const char *const ruby_banned[] = {"system",
                                          "exec",
                                          "spawn",
                                          "fork",
                                          "IO",
                                          "open",
                                          "Kernel",
                                          "Socket",
                                          "TCPSocket",
                                          "UDPSocket",
                                          "UNIXSocket",
                                          "BasicSocket",
                                          "Addrinfo",
                                          "Net",
                                          "URI",
                                          "OpenURI",
                                          "Open3",
                                          "PTY",
                                          "Process",
                                          "syscall",
                                          "eval",
                                          "instance_eval",
                                          "class_eval",
                                          "module_eval",
                                          "instance_exec",
                                          "binding",
                                          "send",
                                          "__send__",
                                          "public_send",
                                          "method",
                                          "const_get",
                                          "Object",
                                          "ObjectSpace",
                                          "require_relative",
                                          "load",
                                          "autoload",
                                          "Gem",
                                          "DRb",
                                          "Fiddle",
                                          "DL",
                                          "Ractor",
                                          NULL};
static const char *const ruby_modules[] = {
    "json",     "set",        "time",     "date",     "digest",     "securerandom",
    "pp",       "csv",        "yaml",     "base64",   "bigdecimal", "ostruct",
    "optparse", "shellwords", "pathname", "stringio", NULL};

static const char *const php_banned[] = {"exec",
                                         "shell_exec",
                                         "system",
                                         "passthru",
                                         "popen",
                                         "proc_open",
                                         "pcntl_exec",
                                         "fsockopen",
                                         "pfsockopen",
                                         "stream_socket_client",
                                         "stream_socket_server",
                                         "socket_create",
                                         "socket_connect",
                                         "curl_init",
                                         "curl_exec",
                                         "curl_multi_exec",
                                         "file_get_contents",
                                         "fopen",
                                         "readfile",
                                         "file",
                                         "include",
                                         "require",
                                         "include_once",
                                         "require_once",
                                         "eval",
                                         "assert",
                                         "create_function",
                                         "call_user_func",
                                         "call_user_func_array",
                                         "mail",
                                         "dl",
                                         "FFI",
                                         "ReflectionFunction",
                                         "ReflectionClass",
                                         "ReflectionMethod",
                                         "new",
                                         "mb_send_mail",
                                         "imap_open",
                                         "ftp_connect",
                                         "ssh2_connect",
                                         "get_headers",
                                         "copy",
                                         "opendir",
                                         "scandir",
                                         NULL};

static const char *const lua_banned[] = {
    "os", "io",      "require", "load",   "loadstring", "loadfile", "dofile", "package", "debug",
    "_G", "getfenv", "setfenv", "rawget", "rawset",     "ffi",      "jit",    NULL};

static bool in_list(const char *const *l, const char *s, size_t n)
{
	for (size_t i = 0; l && l[i]; i++)
		if (strlen(l[i]) == n && memcmp(l[i], s, n) == 0)
			return true;
	return false;
}

static enum lang lang_of(const char *prog)
{
	if (strncmp(prog, "python", 6) == 0 || strncmp(prog, "pypy", 4) == 0)
		return L_PYTHON;
	if (strcmp(prog, "node") == 0 || strcmp(prog, "nodejs") == 0)
		return L_NODE;
	if (strcmp(prog, "perl") == 0)
		return L_PERL;
	if (strcmp(prog, "ruby") == 0)
		return L_RUBY;
	if (strcmp(prog, "php") == 0)
		return L_PHP;
	if (strncmp(prog, "lua", 3) == 0)
		return L_LUA;
	return L_NONE;
}

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '$';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

struct scan {
	const char *t;
	size_t len, i;
	enum lang lang;
	char *why;
	size_t whylen;
};

static bool found(struct scan *s, const char *what, const char *name, size_t n)
{
	snprintf(s->why, s->whylen, "%s %.*s", what, (int)(n > 60 ? 60 : n), name);
	return false;
}

/* Is the text before position p (skipping blanks) an attribute operator? */
static bool after_attr(const struct scan *s, size_t p)
{
	while (p > 0 && (s->t[p - 1] == ' ' || s->t[p - 1] == '\t'))
		p--;
	if (p >= 1 && s->t[p - 1] == '.')
		return true;
	if (p >= 2 && ((s->t[p - 2] == '-' && s->t[p - 1] == '>') ||
	               (s->t[p - 2] == ':' && s->t[p - 1] == ':')))
		return true;
	return false;
}

/* The next identifier from position i (skipping blanks, not newlines). */
static bool next_ident(const struct scan *s, size_t *i, const char **id, size_t *n)
{
	size_t p = *i;

	while (p < s->len && (s->t[p] == ' ' || s->t[p] == '\t'))
		p++;
	if (p >= s->len || !ident_start(s->t[p]))
		return false;
	*id = s->t + p;
	while (p < s->len && ident_char(s->t[p]))
		p++;
	*n = (size_t)(s->t + p - *id);
	*i = p;
	return true;
}

/* Python: import a.b as c, d / from a.b import c: every top module allowed. */
static bool py_import(struct scan *s, bool from)
{
	size_t i = s->i;
	const char *id;
	size_t n;

	for (;;) {
		while (i < s->len && (s->t[i] == ' ' || s->t[i] == '\t'))
			i++;
		if (i < s->len && s->t[i] == '.')
			return found(s, "it imports a relative module", ".", 1);
		if (!next_ident(s, &i, &id, &n))
			return found(s, "it imports a module airlock cannot name", "", 0);
		if (!in_list(py_modules, id, n))
			return found(s, "it imports", id, n);
		while (i < s->len && s->t[i] == '.') { /* a.b.c: the top module decides */
			i++;
			if (!next_ident(s, &i, &id, &n))
				break;
		}
		if (from) {
			/* from X import names: the names are X's, read as words */
			while (i < s->len && (s->t[i] == ' ' || s->t[i] == '\t'))
				i++;
			if (i + 6 <= s->len && memcmp(s->t + i, "import", 6) == 0)
				i += 6;
			break;
		}
		while (i < s->len && (s->t[i] == ' ' || s->t[i] == '\t'))
			i++;
		if (i + 2 < s->len && memcmp(s->t + i, "as", 2) == 0 && !ident_char(s->t[i + 2])) {
			i += 2;
			next_ident(s, &i, &id, &n);
			while (i < s->len && (s->t[i] == ' ' || s->t[i] == '\t'))
				i++;
		}
		if (i < s->len && s->t[i] == ',') {
			i++;
			continue;
		}
		break;
	}
	s->i = i;
	return true;
}

/* Node: require("x") / import ... from "x": a literal, allowed module. */
static bool node_require(struct scan *s)
{
	size_t i = s->i;
	char q;
	const char *m;

	while (i < s->len && (s->t[i] == ' ' || s->t[i] == '\t'))
		i++;
	if (i >= s->len || s->t[i] != '(')
		return found(s, "it uses require other than require(\"module\")", "", 0);
	i++;
	while (i < s->len && s->t[i] == ' ')
		i++;
	if (i >= s->len || (s->t[i] != '"' && s->t[i] != '\'' && s->t[i] != '`'))
		return found(s, "it requires a module named at run time", "", 0);
	q = s->t[i++];
	m = s->t + i;
	while (i < s->len && s->t[i] != q)
		i++;
	if (!in_list(node_modules, m, (size_t)(s->t + i - m)))
		return found(s, "it requires", m, (size_t)(s->t + i - m));
	s->i = i;
	return true;
}

/* Perl / Ruby: use X::Y / require 'x': an allowed module. */
static bool use_module(struct scan *s, const char *const *mods)
{
	size_t i = s->i;
	const char *id;
	size_t n;

	while (i < s->len && (s->t[i] == ' ' || s->t[i] == '\t' || s->t[i] == '(' ||
	                      s->t[i] == '\'' || s->t[i] == '"'))
		i++;
	if (!next_ident(s, &i, &id, &n) || !in_list(mods, id, n))
		return found(s, "it loads", id ? id : "a module", id ? n : 9);
	s->i = i;
	return true;
}

/* From position i, past the next unescaped d; len when there is none. */
static size_t past_delim(const char *t, size_t len, size_t i, char d)
{
	for (; i < len; i++) {
		if (t[i] == '\\') {
			i++;
			continue;
		}
		if (t[i] == d)
			return i + 1;
	}
	return len;
}

/* Perl's s/PATTERN/REPLACEMENT/FLAGS (any delimiter, s{..}{..} too): an e
 * flag evaluates the replacement as code. */
static bool perl_subst_ok(struct scan *s)
{
	static const char open_[] = "({[<", close_[] = ")}]>";
	const char *t = s->t;

	for (size_t i = 0; i + 1 < s->len; i++) {
		char d = t[i + 1];
		const char *o;
		size_t k;

		if (t[i] != 's' || (i > 0 && (ident_char(t[i - 1]) || t[i - 1] == '-')) ||
		    isalnum((unsigned char)d) || isspace((unsigned char)d) || d == '_' ||
		    d == '=' || d == ',' || d == ';' || d == '\0')
			continue;
		if ((o = strchr(open_, d)) != NULL) {
			char c = close_[o - open_];

			k = past_delim(t, s->len, i + 2, c);
			while (k < s->len && isspace((unsigned char)t[k]))
				k++;
			if (k >= s->len || (o = strchr(open_, t[k])) == NULL)
				continue;
			k = past_delim(t, s->len, k + 1, close_[o - open_]);
		} else {
			k = past_delim(t, s->len, i + 2, d);
			k = past_delim(t, s->len, k, d);
		}
		for (; k < s->len && isalpha((unsigned char)t[k]); k++)
			if (t[k] == 'e')
				return found(s, "it evaluates a substitution as code", "s///e", 5);
	}
	return true;
}

/* Characters that run text as code whatever the words are. */
static bool special_chars(struct scan *s)
{
	const char *t = s->t;

	for (size_t i = 0; i < s->len; i++) {
		char c = t[i];

		if (c == '`' && (s->lang == L_PERL || s->lang == L_RUBY || s->lang == L_PHP))
			return found(s, "it runs a command in backquotes", "`", 1);
		if (s->lang == L_RUBY && c == '%' && i + 1 < s->len && t[i + 1] == 'x')
			return found(s, "it runs a command with", "%x", 2);
		if (s->lang == L_PERL && c == '&' && i + 1 < s->len &&
		    (t[i + 1] == '{' || t[i + 1] == '$'))
			return found(s, "it calls a function named at run time", "&", 1);
		if (s->lang == L_PERL && c == '-' && i + 2 < s->len && t[i + 1] == '>' &&
		    t[i + 2] == '$')
			return found(s, "it calls a method named at run time", "->$", 3);
		if (s->lang == L_PHP && c == '$' && i + 1 < s->len && ident_start(t[i + 1])) {
			size_t k = i + 1;
			while (k < s->len && ident_char(t[k]))
				k++;
			while (k < s->len && t[k] == ' ')
				k++;
			if (k < s->len && t[k] == '(')
				return found(s, "it calls a function named at run time", t + i,
				             k - i);
		}
		if ((s->lang == L_NODE) && (strncmp(t + i, "setTimeout", 10) == 0 ||
		                            strncmp(t + i, "setInterval", 11) == 0)) {
			size_t k = i + (t[i + 3] == 'T' ? 10 : 11);
			while (k < s->len && (t[k] == ' ' || t[k] == '('))
				k++;
			if (k < s->len && (t[k] == '"' || t[k] == '\'' || t[k] == '`'))
				return found(s, "it runs a string as code with", t + i, 10);
		}
	}
	/* perl s///e and s///ee evaluate the replacement as code */
	if (s->lang == L_PERL && !perl_subst_ok(s))
		return false;
	return true;
}

bool inert_code(const char *prog, const char *code, size_t len, char *why, size_t whylen)
{
	struct scan s = {
	    .t = code, .len = len, .lang = lang_of(prog), .why = why, .whylen = whylen};
	struct rules r = {0};

	why[0] = '\0';
	switch (s.lang) {
	case L_PYTHON:
		r = (struct rules){py_banned, py_modules, py_attrs};
		break;
	case L_NODE:
		r = (struct rules){node_banned, node_modules, node_attrs};
		break;
	case L_PERL:
		r = (struct rules){perl_banned, perl_modules, NULL};
		break;
	case L_RUBY:
		r = (struct rules){ruby_banned, ruby_modules, NULL};
		break;
	case L_PHP:
		r = (struct rules){php_banned, NULL, NULL};
		break;
	case L_LUA:
		r = (struct rules){lua_banned, NULL, NULL};
		break;
	case L_NONE:
		snprintf(why, whylen, "airlock does not read %s code", prog);
		return false;
	}
	if (len > INERT_MAX) {
		snprintf(why, whylen, "the code is over %d KiB", INERT_MAX / 1024);
		return false;
	}
	if (memchr(code, '\0', len) != NULL) {
		snprintf(why, whylen, "the code holds a NUL byte");
		return false;
	}
	if (!special_chars(&s))
		return false;
	for (s.i = 0; s.i < len;) {
		const char *id;
		size_t n, at = s.i;

		if (!ident_start(code[s.i]) || (s.i > 0 && ident_char(code[s.i - 1]))) {
			s.i++;
			continue;
		}
		next_ident(&s, &s.i, &id, &n);
		if (s.lang == L_PYTHON && n >= 2 && id[0] == '_' && id[1] == '_')
			return found(&s, "it uses", id, n);
		if (s.lang == L_PERL && id[0] == '$')
			continue; /* a variable */
		if (s.lang == L_PHP && id[0] == '$')
			continue;
		if (after_attr(&s, at)) {
			if (in_list(r.attrs, id, n))
				return found(&s, "it uses", id, n);
			if (s.lang != L_PYTHON && in_list(r.banned, id, n))
				return found(&s, "it uses", id, n);
			continue;
		}
		if (s.lang == L_PYTHON && (n == 6 && memcmp(id, "import", 6) == 0)) {
			if (!py_import(&s, false))
				return false;
			continue;
		}
		if (s.lang == L_PYTHON && n == 4 && memcmp(id, "from", 4) == 0) {
			size_t save = s.i;
			const char *m;
			size_t mn;

			/* from X import ...: X is the module; a bare "from" (yield from) is not */
			while (save < len && (code[save] == ' ' || code[save] == '\t'))
				save++;
			if (save < len && code[save] == '.')
				return found(&s, "it imports a relative module", ".", 1);
			if (next_ident(&s, &save, &m, &mn)) {
				size_t k = save;
				while (k < len && (code[k] == '.' || ident_char(code[k])))
					k++; /* a.b.c */
				while (k < len && (code[k] == ' ' || code[k] == '\t'))
					k++;
				if (k + 6 <= len && memcmp(code + k, "import", 6) == 0 &&
				    !py_import(&s, true))
					return false;
			}
			continue;
		}
		if (s.lang == L_NODE && n == 7 && memcmp(id, "require", 7) == 0) {
			if (!node_require(&s))
				return false;
			continue;
		}
		if ((s.lang == L_PERL && n == 3 && memcmp(id, "use", 3) == 0) ||
		    (s.lang == L_RUBY && n == 7 && memcmp(id, "require", 7) == 0)) {
			if (!use_module(&s, r.modules))
				return false;
			continue;
		}
		if (in_list(r.banned, id, n))
			return found(&s, "it uses", id, n);
	}
	return true;
}
