/* netclient.c -- programs that send network traffic: where to, and whether
 * the words prove a harmless read the operator allowed.
 *
 * Every known client has a way its destinations are spelled (URLs, a host
 * operand, host:path, a host option, socat addresses ...).  A destination
 * counts as allowed only when it is a literal host name or address matching
 * one of gate.yaml's network.allow globs; one known only at run time never
 * is.  The harmless forms are narrow on purpose:
 *   curl:  HTTP(S) GET or HEAD, no body, upload, form, output file, cookie
 *          file, config file, proxy, unix socket or redirect following;
 *   wget:  to stdout (-O -) or --spider, --max-redirect=0, no files;
 *   ping:  echo requests without a data pattern, flood, broadcast or preload;
 *   dig, host, nslookup: lookups of names (and servers) that are allowed;
 *   SQL clients: a plain query (tools.c decides) to an allowed server.
 * Everything else that sends is at least config_mutation. */
#include "classifier/netclient.h"

#include "classifier/arena.h"
#include "classifier/nameidx.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DESTS 6

/* Destinations found for one program. */
struct dests {
	const char *v[MAX_DESTS];
	size_t n, more;
	bool unknown;     /* some destination is known only at run time */
	bool not_allowed; /* some destination is not (or cannot be) allowed */
};

enum kind {
	K_URL,     /* URL operands (curl, wget ...) */
	K_HOST,    /* host operands (ping, nc, traceroute ...) */
	K_SCP,     /* [user@]host:path operands; none: a local copy */
	K_RSYNC,   /* host:path, host::module, rsync://host; none: local */
	K_GIT,     /* only the subcommands that talk to a remote */
	K_DNS,     /* names and @server */
	K_DB,      /* SQL and document clients: host options, URIs, conninfo */
	K_REDIS,   /* key-value clients: -h, -u, -s */
	K_OPENSSL, /* s_client, s_time: -connect */
	K_APT,     /* the package mirrors, for the subcommands that fetch */
	K_SOCAT,   /* socat addresses */
	K_SMB,     /* //host/share or -L host */
	K_LOCAL,   /* a daemon on the same machine (showmount, rpcinfo, ntpq): host operands */
};

struct client {
	const char *name;
	enum kind kind;
	/* options whose value is a destination (space separated); the ones after
	 * a ';' take a connection string (host=x, postgresql://x) */
	const char *host_opts;
	const char *deflt; /* the destination when none is named */
};

static const struct client clients[] = {
    {"apt", K_APT, "", "the package mirrors"},
    {"apt-file", K_APT, "", "the package mirrors"},
    {"apt-get", K_APT, "", "the package mirrors"},
    {"aptitude", K_APT, "", "the package mirrors"},
    {"aria2c", K_URL, "", NULL},
    {"arping", K_HOST, "", NULL},
    {"clickhouse-client", K_DB, "-h --host", "localhost"},
    {"cqlsh", K_DB, "", "localhost"},
    {"curl", K_URL, "--url", NULL},
    {"curlie", K_URL, "", NULL},
    {"delv", K_DNS, "", NULL},
    {"dig", K_DNS, "", NULL},
    {"drill", K_DNS, "", NULL},
    {"elinks", K_URL, "", NULL},
    {"etcdctl", K_DB, "--endpoints", "localhost"},
    {"fping", K_HOST, "", NULL},
    {"ftp", K_HOST, "", NULL},
    {"git", K_GIT, "", "the repository's configured remote"},
    {"host", K_DNS, "", NULL},
    {"hping3", K_HOST, "", NULL},
    {"http", K_URL, "", NULL},
    {"httpie", K_URL, "", NULL},
    {"https", K_URL, "", NULL},
    {"iperf", K_HOST, "-c --client", "a listening socket"},
    {"iperf3", K_HOST, "-c --client", "a listening socket"},
    {"keydb-cli", K_REDIS, "-h", "localhost"},
    {"ldapsearch", K_DB, "-H -h", "localhost"},
    {"lftp", K_URL, "", NULL},
    {"links", K_URL, "", NULL},
    {"lynx", K_URL, "", NULL},
    {"mariadb", K_DB, "-h --host", "localhost"},
    {"mariadb-dump", K_DB, "-h --host", "localhost"},
    {"mongo", K_DB, "--host", "localhost"},
    {"mongosh", K_DB, "--host", "localhost"},
    {"mtr", K_HOST, "", NULL},
    {"mysql", K_DB, "-h --host", "localhost"},
    {"mysqladmin", K_DB, "-h --host", "localhost"},
    {"mysqldump", K_DB, "-h --host", "localhost"},
    {"nc", K_HOST, "", "a listening socket or the destination its options name"},
    {"ncat", K_HOST, "", "a listening socket or the destination its options name"},
    {"netcat", K_HOST, "", "a listening socket or the destination its options name"},
    {"nmap", K_HOST, "", NULL},
    {"nmblookup", K_HOST, "", "the local network (broadcast)"},
    {"nslookup", K_DNS, "", NULL},
    {"ntpdate", K_HOST, "", NULL},
    {"ntpq", K_LOCAL, "", "localhost"},
    {"openssl", K_OPENSSL, "-connect -host -url", "localhost"},
    {"pg_dump", K_DB, "-h --host;-d --dbname", "localhost"},
    {"pg_dumpall", K_DB, "-h --host;-d --dbname", "localhost"},
    {"pg_isready", K_DB, "-h --host;-d --dbname", "localhost"},
    {"ping", K_HOST, "", NULL},
    {"ping6", K_HOST, "", NULL},
    {"psql", K_DB, "-h --host;-d --dbname", "localhost"},
    {"redis-cli", K_REDIS, "-h", "localhost"},
    {"rpcinfo", K_LOCAL, "", "localhost"},
    {"rsync", K_RSYNC, "", NULL},
    {"scp", K_SCP, "", NULL},
    {"sftp", K_SCP, "", NULL},
    {"showmount", K_LOCAL, "", "localhost"},
    {"smbclient", K_SMB, "-L", NULL},
    {"snmpbulkwalk", K_HOST, "", NULL},
    {"snmpget", K_HOST, "", NULL},
    {"snmpwalk", K_HOST, "", NULL},
    {"sntp", K_HOST, "", NULL},
    {"socat", K_SOCAT, "", NULL},
    {"speedtest", K_HOST, "", "the speedtest servers"},
    {"speedtest-cli", K_HOST, "", "the speedtest servers"},
    {"ssh-keyscan", K_HOST, "", NULL},
    {"telnet", K_HOST, "", NULL},
    {"tftp", K_HOST, "", NULL},
    {"tracepath", K_HOST, "", NULL},
    {"tracepath6", K_HOST, "", NULL},
    {"traceroute", K_HOST, "", NULL},
    {"traceroute6", K_HOST, "", NULL},
    {"valkey-cli", K_REDIS, "-h", "localhost"},
    {"w3m", K_URL, "", NULL},
    {"wget", K_URL, "", NULL},
    {"whois", K_HOST, "-h", "the whois servers"},
    {"xh", K_URL, "", NULL},
};

static struct nameidx client_idx;
static pthread_once_t client_once = PTHREAD_ONCE_INIT;

static void build_client_idx(void)
{
	nameidx_build(&client_idx, clients, sizeof(clients) / sizeof(clients[0]),
	              sizeof(clients[0]));
}

static const struct client *find_client(const char *name)
{
	pthread_once(&client_once, build_client_idx);
	return nameidx_find(&client_idx, clients, sizeof(clients[0]), name);
}

bool netclient_wants_items(const char *name)
{
	return find_client(name) != NULL;
}

const char *netclient_allow_glob_problem(const char *glob)
{
	bool letter = false;

	if (glob[0] == '\0')
		return "an empty host";
	if (strlen(glob) > 253)
		return "longer than a host name can be";
	for (const char *q = glob; *q; q++) {
		unsigned char c = (unsigned char)*q;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_' || c == '*' || c == '?'))
			return "a host name or address glob holds only letters, digits, . - _ * "
			       "and ?";
		letter = letter || (c != '*' && c != '?' && c != '.');
	}
	if (!letter)
		return "a glob of wildcards alone would allow every host: list the hosts";
	return NULL;
}

/* A host spelled the way name resolution takes it: letters, digits, . - _ */
static bool plain_host(const char *h, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)h[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* Does host match an allow glob?  A * or ? stays within one label: 10.0.0.*
 * is 10.0.0.5, not 10.0.0.5.evil.test; *.example.com is www.example.com, not
 * a.b.example.com (list *.*.example.com for that). */
static bool allowed(const struct judge *j, const char *host)
{
	char h[256], g[256];
	size_t hl = strlen(host);

	if (hl >= sizeof(h))
		return false;
	for (size_t i = 0; i <= hl; i++)
		h[i] = host[i] == '.' ? '/' : host[i];
	for (size_t i = 0; i < j->nnet_allow; i++) {
		size_t gl = strlen(j->net_allow[i]);

		if (gl >= sizeof(g))
			continue;
		for (size_t k = 0; k <= gl; k++)
			g[k] = j->net_allow[i][k] == '.' ? '/' : j->net_allow[i][k];
		if (fnmatch(g, h, FNM_PATHNAME | FNM_CASEFOLD) == 0)
			return true;
	}
	return false;
}

/* Adds a destination shown as text[0..n); host[0..hl) is what the allow list
 * is asked about (hl 0: it cannot be allowed). */
static void add_dest(struct judge *j, struct dests *d, const char *text, size_t n, const char *host,
                     size_t hl)
{
	char buf[256];

	if (hl > 0 && hl < sizeof(buf) && plain_host(host, hl)) {
		for (size_t i = 0; i < hl; i++)
			buf[i] = (char)(host[i] >= 'A' && host[i] <= 'Z' ? host[i] + 32 : host[i]);
		buf[hl] = '\0';
		if (!allowed(j, buf))
			d->not_allowed = true;
	} else {
		d->not_allowed = true;
	}
	for (size_t i = 0; i < d->n; i++)
		if (strlen(d->v[i]) == n && memcmp(d->v[i], text, n) == 0)
			return;
	if (d->n == MAX_DESTS) {
		d->more++;
		return;
	}
	d->v[d->n] = arena_strndup(j->a, text, n > 120 ? 120 : n);
	if (d->v[d->n] != NULL)
		d->n++;
}

static void add_unknown(struct dests *d)
{
	d->unknown = true;
	d->not_allowed = true;
}

/* host[:port], [v6]:port, user@host: the host part of an authority. */
static void split_authority(const char *a, size_t n, const char **host, size_t *hl)
{
	const char *at = NULL;

	for (size_t i = 0; i < n; i++)
		if (a[i] == '@')
			at = a + i;
	if (at != NULL) {
		n -= (size_t)(at + 1 - a);
		a = at + 1;
	}
	if (n > 0 && a[0] == '[') {
		*host = a;
		*hl = 0; /* an IPv6 literal: shown, never matched */
		return;
	}
	*host = a;
	*hl = n;
	for (size_t i = 0; i < n; i++)
		if (a[i] == ':') {
			*hl = i;
			break;
		}
}

/* A URL's scheme and host.  *http: the scheme is http or https; *clean: the
 * authority holds nothing but [user@]host[:port] in plain characters. */
static bool parse_url(const char *u, size_t n, const char **host, size_t *hl, bool *http,
                      bool *clean)
{
	const char *sep = memmem(u, n, "://", 3);
	size_t st, end;

	*http = false;
	*clean = false;
	if (sep == NULL)
		return false;
	if ((sep - u == 4 && strncasecmp(u, "http", 4) == 0) ||
	    (sep - u == 5 && strncasecmp(u, "https", 5) == 0))
		*http = true;
	st = (size_t)(sep - u) + 3;
	end = st;
	while (end < n && u[end] != '/' && u[end] != '?' && u[end] != '#')
		end++;
	split_authority(u + st, end - st, host, hl);
	*clean = *hl > 0 && plain_host(*host, *hl);
	for (size_t i = st; i < end && *clean; i++) {
		unsigned char c = (unsigned char)u[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_' || c == ':' || c == '@'))
			*clean = false;
	}
	return true;
}

/* A word naming a host in some spelling: URL, [user@]host[:port], host:path. */
static void add_host_word(struct judge *j, struct dests *d, const struct sh_word *w,
                          bool colon_path)
{
	const char *host;
	size_t hl;
	bool http, clean;

	if (!judge_lit(w)) {
		add_unknown(d);
		return;
	}
	if (w->len == 0)
		return;
	if (parse_url(w->text, w->len, &host, &hl, &http, &clean)) {
		add_dest(j, d, w->text, w->len, clean ? host : "", clean ? hl : 0);
		return;
	}
	if (colon_path) {
		const char *colon = memchr(w->text, ':', w->len);

		split_authority(w->text, colon ? (size_t)(colon - w->text) : w->len, &host, &hl);
	} else {
		split_authority(w->text, w->len, &host, &hl);
	}
	add_dest(j, d, host, hl ? hl : w->len, host, hl);
}

/* Does the word look like a host (not a number, a port or a path)? */
static bool hostish(const struct sh_word *w)
{
	bool digits = true;

	if (!judge_lit(w))
		return true;
	if (w->len == 0 || w->text[0] == '/' || w->text[0] == '.')
		return false;
	for (size_t i = 0; i < w->len; i++)
		digits = digits && w->text[i] >= '0' && w->text[i] <= '9';
	return !digits;
}

/* 0: not listed; 1: a host option; 2: a connection-string option (after ';'). */
static int opt_listed(const char *list, const char *name, size_t nl)
{
	int kind = 1;

	for (const char *q = list; *q;) {
		size_t l = strcspn(q, " ;");

		if (l == nl && memcmp(q, name, nl) == 0)
			return kind;
		q += l;
		while (*q == ' ' || *q == ';')
			kind = *q++ == ';' ? 2 : kind;
	}
	return 0;
}

/* The operands and host options of a program: from the grammar's parse when
 * there is one, else every word that is no option.  Calls each for every
 * operand, and host_opt for every destination option value. */
struct walkargs {
	const struct sh_word *ops[64];
	size_t nops;
	const struct sh_word *hostvals[8];
	bool connvals[8]; /* hostvals[i] is a connection string */
	size_t nhostvals;
	bool lost; /* more words than fit */
};

static void collect(struct judge *j, const struct client *c, const struct judge_argv *av,
                    const struct gram_proof *gp, struct walkargs *wa)
{
	(void)j;
	wa->nops = wa->nhostvals = 0;
	wa->lost = gp != NULL && gp->ok && gp->items_lost;
	if (gp != NULL && gp->ok && gp->items != NULL) {
		for (size_t i = 0; i < gp->nitems; i++) {
			const struct gram_item *it = &gp->items[i];

			if (it->opt == NULL) {
				if (wa->nops < 64)
					wa->ops[wa->nops++] = it->word;
				else
					wa->lost = true;
			} else if (c != NULL &&
			           opt_listed(c->host_opts, it->opt->name, it->opt->len)) {
				struct sh_word *v;
				bool conn =
				    opt_listed(c->host_opts, it->opt->name, it->opt->len) == 2;

				if (it->vword != NULL) {
					v = (struct sh_word *)it->vword;
				} else if (it->value != NULL &&
				           (v = arena_alloc(j->a, sizeof(*v))) != NULL) {
					*v = *it->word;
					v->text = v->raw = it->value;
					v->len = v->prefix = v->raw_len = it->vlen;
					v->flags &= ~(unsigned)SHW_TILDE;
				} else {
					continue;
				}
				if (wa->nhostvals < 8) {
					wa->connvals[wa->nhostvals] = conn;
					wa->hostvals[wa->nhostvals++] = v;
				} else {
					wa->lost = true;
				}
			}
		}
		return;
	}
	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];

		if (judge_lit(w) && w->len > 1 && w->text[0] == '-') {
			const char *eq = memchr(w->text, '=', w->len);
			size_t nl = eq ? (size_t)(eq - w->text) : w->len;

			int kind = c != NULL ? opt_listed(c->host_opts, w->text, nl) : 0;

			if (kind == 0 && c != NULL && w->text[1] != '-' && w->len > 2) {
				/* -hHOST: the value attached */
				kind = opt_listed(c->host_opts, w->text, 2);
				if (kind != 0)
					eq = w->text + 1;
			}
			if (kind != 0 && wa->nhostvals < 8) {
				wa->connvals[wa->nhostvals] = kind == 2;
				if (eq != NULL) {
					struct sh_word *v = arena_alloc(j->a, sizeof(*v));

					if (v != NULL) {
						*v = *w;
						v->text = v->raw = eq + 1;
						v->len = v->prefix = v->raw_len =
						    w->len - (size_t)(eq + 1 - w->text);
						wa->hostvals[wa->nhostvals++] = v;
					}
				} else if (i + 1 < av->n) {
					wa->hostvals[wa->nhostvals++] = &av->w[++i];
				}
			} else if (kind != 0) {
				wa->lost = true;
			}
			continue;
		}
		if (wa->nops < 64)
			wa->ops[wa->nops++] = w;
		else
			wa->lost = true;
	}
}

/* The reason: "sends network traffic to a, b (and 2 more)". */
static void say_sends(struct judge *j, struct judge_seg *s, const char *name, const struct dests *d,
                      const char *deflt, const char *why, enum target_type t)
{
	char buf[400];
	size_t o = 0;

	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s sends network traffic to ", name);
	if (d->n == 0 && !d->unknown)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s",
		                      deflt ? deflt : "a destination its options or files name");
	for (size_t i = 0; i < d->n && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? ", " : "", d->v[i]);
	if (d->more && o < sizeof(buf))
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, " and %zu more", d->more);
	if (d->unknown && o < sizeof(buf))
		o +=
		    (size_t)snprintf(buf + o, sizeof(buf) - o,
		                     "%sa destination known only at run time", d->n ? " and " : "");
	if (why != NULL && o < sizeof(buf))
		snprintf(buf + o, sizeof(buf) - o, " (%s)", why);
	judge_reason(j, s, "network-send", judge_fmt(j, "%s", buf), RISK_CONFIG_MUTATION, t);
}

static void say_allowed(struct judge *j, struct judge_seg *s, const char *name, const char *form,
                        const struct dests *d, enum target_type t)
{
	char buf[300];
	size_t o = 0;

	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s %s to ", name, form);
	for (size_t i = 0; i < d->n && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? ", " : "", d->v[i]);
	if (o < sizeof(buf))
		snprintf(buf + o, sizeof(buf) - o, " (allowed in gate.yaml network.allow)");
	judge_reason(j, s, "network-read-allowed", judge_fmt(j, "%s", buf), RISK_READ_ONLY, t);
}

/* ---- harmless forms ------------------------------------------------------------------ */

static bool name_in(const char *name, const char *const *list)
{
	for (size_t i = 0; list[i] != NULL; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

static bool value_is(const struct gram_item *it, const char *s)
{
	size_t n = strlen(s);

	if (it->value == NULL || (it->vword != NULL && !judge_lit(it->vword)))
		return false;
	return it->vlen == n && memcmp(it->value, s, n) == 0;
}

/* Did the command put a proxy in the environment (https_proxy=... curl)? */
static bool proxy_assigned(const struct judge *j)
{
	for (size_t i = 0; i < j->nassigns; i++) {
		const struct sh_word *w = j->assigns[i];

		if (w->name_len >= 6 && strncasecmp(w->text + w->name_len - 6, "_proxy", 6) == 0 &&
		    !(w->name_len == 8 && strncasecmp(w->text, "no_proxy", 8) == 0))
			return true;
	}
	return j->assigns_lost;
}

/* curl: HTTP(S) GET or HEAD, nothing sent but the request.  *why says what
 * breaks the form. */
static bool curl_harmless(const struct gram_proof *gp, const char **why)
{
	static const char *const ok[] = {"-s",
	                                 "--silent",
	                                 "-S",
	                                 "--show-error",
	                                 "-f",
	                                 "--fail",
	                                 "--fail-with-body",
	                                 "-I",
	                                 "--head",
	                                 "-i",
	                                 "--include",
	                                 "-v",
	                                 "--verbose",
	                                 "-m",
	                                 "--max-time",
	                                 "--connect-timeout",
	                                 "-4",
	                                 "-6",
	                                 "--ipv4",
	                                 "--ipv6",
	                                 "--compressed",
	                                 "-H",
	                                 "--header",
	                                 "-A",
	                                 "--user-agent",
	                                 "-e",
	                                 "--referer",
	                                 "-N",
	                                 "--no-buffer",
	                                 "--http1.0",
	                                 "--http1.1",
	                                 "--http2",
	                                 "--tlsv1.2",
	                                 "--tlsv1.3",
	                                 "-#",
	                                 "--progress-bar",
	                                 "--no-progress-meter",
	                                 "-k",
	                                 "--insecure",
	                                 "-X",
	                                 "--request",
	                                 "--retry",
	                                 "--retry-delay",
	                                 "--retry-max-time",
	                                 "--retry-all-errors",
	                                 "-g",
	                                 "--globoff",
	                                 "-q",
	                                 "--disable",
	                                 "--max-filesize",
	                                 "--limit-rate",
	                                 "-y",
	                                 "--speed-time",
	                                 "-Y",
	                                 "--speed-limit",
	                                 "-r",
	                                 "--range",
	                                 "--url",
	                                 "--noproxy",
	                                 "--path-as-is",
	                                 "--raw",
	                                 "--tcp-nodelay",
	                                 "--no-keepalive",
	                                 "--ssl-no-revoke",
	                                 "--fail-early",
	                                 "-Z",
	                                 "--parallel",
	                                 "-j",
	                                 "--junk-session-cookies",
	                                 NULL};

	for (size_t i = 0; i < gp->nitems; i++) {
		const struct gram_item *it = &gp->items[i];

		if (it->opt == NULL)
			continue;
		if (!name_in(it->opt->name, ok)) {
			*why = "an option other than those of a plain GET or HEAD";
			return false;
		}
		if ((strcmp(it->opt->name, "-X") == 0 || strcmp(it->opt->name, "--request") == 0) &&
		    !value_is(it, "GET") && !value_is(it, "HEAD")) {
			*why = "a method other than GET or HEAD";
			return false;
		}
		if ((strcmp(it->opt->name, "-H") == 0 || strcmp(it->opt->name, "--header") == 0) &&
		    (it->value == NULL || (it->vword != NULL && !judge_lit(it->vword)) ||
		     (it->vlen > 0 && it->value[0] == '@'))) {
			*why = "headers read from a file or known only at run time";
			return false;
		}
	}
	return true;
}

/* wget: to stdout or --spider, no redirects followed, no files. */
static bool wget_harmless(const struct gram_proof *gp, const char **why)
{
	static const char *const ok[] = {"-q",
	                                 "--quiet",
	                                 "-v",
	                                 "--verbose",
	                                 "--no-verbose",
	                                 "-S",
	                                 "--server-response",
	                                 "-T",
	                                 "--timeout",
	                                 "--dns-timeout",
	                                 "--connect-timeout",
	                                 "--read-timeout",
	                                 "-t",
	                                 "--tries",
	                                 "--no-check-certificate",
	                                 "-U",
	                                 "--user-agent",
	                                 "--header",
	                                 "-4",
	                                 "-6",
	                                 "--inet4-only",
	                                 "--inet6-only",
	                                 "--limit-rate",
	                                 "--no-proxy",
	                                 "--https-only",
	                                 "--no-cache",
	                                 "--retry-connrefused",
	                                 "--no-hsts",
	                                 "--no-config",
	                                 "--compression",
	                                 "--show-progress",
	                                 "--progress",
	                                 "--save-headers",
	                                 NULL};
	bool to_stdout = false, no_redirect = false;

	for (size_t i = 0; i < gp->nitems; i++) {
		const struct gram_item *it = &gp->items[i];
		const char *o;

		if (it->opt == NULL)
			continue;
		o = it->opt->name;
		if (strcmp(o, "-O") == 0 || strcmp(o, "--output-document") == 0) {
			if (!value_is(it, "-")) {
				*why = "a file written";
				return false;
			}
			to_stdout = true;
		} else if (strcmp(o, "--spider") == 0) {
			to_stdout = true;
		} else if (strcmp(o, "--max-redirect") == 0) {
			no_redirect = value_is(it, "0");
		} else if (strcmp(o, "-n") == 0) {
			if (!value_is(it, "v")) {
				*why = "an option other than those of a plain GET or HEAD";
				return false;
			}
		} else if (strcmp(o, "--method") == 0) {
			if (!value_is(it, "GET") && !value_is(it, "HEAD")) {
				*why = "a method other than GET or HEAD";
				return false;
			}
		} else if (!name_in(o, ok)) {
			*why = "an option other than those of a plain GET or HEAD";
			return false;
		}
	}
	if (!to_stdout) {
		*why = "wget saves to a file unless -O - or --spider";
		return false;
	}
	if (!no_redirect) {
		*why = "wget follows redirects elsewhere unless --max-redirect=0";
		return false;
	}
	return true;
}

/* ping: echo requests, paced, no payload pattern. */
static bool ping_harmless(const struct gram_proof *gp, const char **why)
{
	static const char *const ok[] = {"-c", "-W", "-w", "-i", "-q", "-n", "-4", "-6", "-D",
	                                 "-O", "-v", "-s", "-t", "-A", "-U", "-a", NULL};

	for (size_t i = 0; i < gp->nitems; i++) {
		const struct gram_item *it = &gp->items[i];

		if (it->opt != NULL && !name_in(it->opt->name, ok)) {
			*why =
			    "an option beyond a plain echo request (flood, broadcast, pattern ...)";
			return false;
		}
	}
	return true;
}

/* ---- destinations, per kind ---------------------------------------------------------- */

/* dig's words (its grammar takes any): @server, +flags, -t/-c/-q values, types. */
static void dig_dests(struct judge *j, const struct judge_argv *av, struct dests *d, bool *harmless,
                      const char **why)
{
	static const char *const flags[] = {
	    "+short",       "+noall",        "+answer",    "+stats",       "+nostats",
	    "+nocomments",  "+comments",     "+nocmd",     "+cmd",         "+noquestion",
	    "+noauthority", "+noadditional", "+multiline", "+nomultiline", "+nocl",
	    "+ttlid",       "+nottlid",      "+search",    "+nosearch",    "+tcp",
	    "+notcp",       "+dnssec",       "+nodnssec",  "+recurse",     "+norecurse",
	    "+identify",    "+noidentify",   NULL};
	static const char *const types[] = {
	    "a",     "aaaa",  "mx",   "ns",     "txt",   "soa",  "cname", "ptr",  "srv",
	    "caa",   "any",   "ds",   "dnskey", "rrsig", "nsec", "nsec3", "tlsa", "sshfp",
	    "naptr", "https", "svcb", "in",     "ch",    "hs",   NULL};
	bool names = false;

	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];
		char low[16];

		if (!judge_lit(w)) {
			add_unknown(d);
			*harmless = false;
			continue;
		}
		if (w->len > 1 && w->text[0] == '@') {
			add_dest(j, d, w->text + 1, w->len - 1, w->text + 1, w->len - 1);
			continue;
		}
		if (w->len > 1 && w->text[0] == '+') {
			const char *eq = memchr(w->text, '=', w->len);
			size_t nl = eq ? (size_t)(eq - w->text) : w->len;
			bool known = false;

			for (size_t k = 0; flags[k] != NULL && !known; k++)
				known =
				    strlen(flags[k]) == nl && memcmp(flags[k], w->text, nl) == 0;
			known = known || (nl >= 5 && (memcmp(w->text, "+time", 5) == 0 ||
			                              memcmp(w->text, "+tries", 6) == 0 ||
			                              memcmp(w->text, "+retry", 6) == 0));
			if (!known) {
				*harmless = false;
				*why = "a query option beyond a plain lookup (+trace, +https ...)";
			}
			continue;
		}
		if (w->len >= 2 && w->text[0] == '-') {
			if ((judge_weq(w, "-t") || judge_weq(w, "-c") || judge_weq(w, "-q")) &&
			    i + 1 < av->n) {
				if (judge_weq(w, "-q")) {
					add_dest(j, d, av->w[i + 1].text, av->w[i + 1].len,
					         av->w[i + 1].text, av->w[i + 1].len);
					names = true;
				}
				i++;
				continue;
			}
			if (!judge_weq(w, "-4") && !judge_weq(w, "-6")) {
				*harmless = false;
				*why = "an option beyond a plain lookup (-x, -f, -k, -y, -b ...)";
			}
			continue;
		}
		if (w->len < sizeof(low)) {
			bool is_type = false;

			for (size_t k = 0; k < w->len; k++)
				low[k] =
				    (char)(w->text[k] >= 'A' && w->text[k] <= 'Z' ? w->text[k] + 32
				                                                  : w->text[k]);
			low[w->len] = '\0';
			for (size_t k = 0; types[k] != NULL && !is_type; k++)
				is_type = strcmp(types[k], low) == 0;
			if (is_type)
				continue;
		}
		names = true;
		add_dest(j, d, w->text, w->len, w->text, w->len);
	}
	if (!names && !d->unknown)
		add_dest(j, d, "the root name servers", 21, "", 0); /* dig alone asks for . */
}

/* PostgreSQL conninfo words (host=x) and URIs (postgresql://x/db). */
static void db_word(struct judge *j, const struct sh_word *w, struct dests *d, bool *named)
{
	const char *h;

	if (!judge_lit(w)) {
		add_unknown(d);
		*named = true;
		return;
	}
	if (memmem(w->text, w->len, "://", 3) != NULL) {
		add_host_word(j, d, w, false);
		*named = true;
		return;
	}
	if ((h = memmem(w->text, w->len, "host=", 5)) != NULL && (h == w->text || h[-1] == ' ')) {
		size_t st = (size_t)(h + 5 - w->text), e = st;

		while (e < w->len && w->text[e] != ' ')
			e++;
		add_dest(j, d, w->text + st, e - st, w->text + st, e - st);
		*named = true;
	}
}

/* The destinations program c's words name.  Returns false when this use of
 * the program sends nothing (a local rsync, git status, apt list). */
static bool find_dests(struct judge *j, const struct client *c, const char *name,
                       const struct judge_argv *av, const struct gram_proof *gp, struct dests *d,
                       const char **deflt, bool *harmless, const char **why)
{
	struct walkargs wa;
	bool named = false;

	*deflt = c->deflt;
	collect(j, c, av, gp, &wa);
	for (size_t i = 0; i < wa.nhostvals && c->kind != K_URL; i++) {
		if (wa.connvals[i])
			db_word(j, wa.hostvals[i], d, &named);
		else
			add_host_word(j, d, wa.hostvals[i], false);
		named = true;
	}
	switch (c->kind) {
	case K_URL:
		for (size_t i = 0; i < wa.nops + wa.nhostvals; i++) {
			const struct sh_word *w =
			    i < wa.nops ? wa.ops[i] : wa.hostvals[i - wa.nops];
			const char *host;
			size_t hl;
			bool http, clean;

			if (!judge_lit(w)) {
				add_unknown(d);
				continue;
			}
			if (!parse_url(w->text, w->len, &host, &hl, &http, &clean)) {
				/* curl guesses the protocol from a bare host */
				*harmless = false;
				*why = "a URL without http:// or https://";
				add_host_word(j, d, w, false);
				continue;
			}
			if (!http) {
				*harmless = false;
				*why = "a scheme other than http or https";
			} else if (!clean) {
				*harmless = false;
				*why = "a URL whose host part is not a plain host name";
			}
			add_dest(j, d, w->text, w->len, clean ? host : "", clean ? hl : 0);
		}
		break;
	case K_HOST:
	case K_LOCAL:
		for (size_t i = 0; i < wa.nops; i++)
			if (hostish(wa.ops[i]))
				add_host_word(j, d, wa.ops[i], false);
		break;
	case K_SCP:
	case K_RSYNC: {
		bool remote = false;

		for (size_t i = 0; i < wa.nops; i++) {
			const struct sh_word *w = wa.ops[i];
			const char *colon, *slash;

			if (!judge_lit(w)) {
				add_unknown(d);
				remote = true;
				continue;
			}
			colon = memchr(w->text, ':', w->len);
			slash = memchr(w->text, '/', w->len);
			if (memmem(w->text, w->len, "://", 3) != NULL) {
				add_host_word(j, d, w, false);
				remote = true;
			} else if (colon != NULL && (slash == NULL || colon < slash) &&
			           colon != w->text) {
				add_host_word(j, d, w, true);
				remote = true;
			}
		}
		if (strcmp(name, "sftp") == 0 && wa.nops > 0 && !remote) {
			add_host_word(j, d, wa.ops[0], false); /* sftp host */
			remote = true;
		}
		if (!remote && !av->extra_unknown)
			return false;
		if (!remote)
			add_unknown(d);
		break;
	}
	case K_GIT: {
		static const char *const net[] = {
		    "push",       "pull",      "fetch",        "clone", "ls-remote",
		    "fetch-pack", "send-pack", "svn",          "p4",    "daemon",
		    "http-fetch", "http-push", "request-pull", NULL};
		size_t i = 0;
		const struct sh_word *sub;

		/* git's own options: -C DIR, -c NAME=VALUE, --git-dir=... */
		while (i < av->n && judge_lit(&av->w[i]) && av->w[i].len > 1 &&
		       av->w[i].text[0] == '-')
			i += (judge_weq(&av->w[i], "-C") || judge_weq(&av->w[i], "-c")) ? 2 : 1;
		if (i >= av->n)
			return false;
		sub = &av->w[i];
		if (!judge_lit(sub)) {
			add_unknown(d);
			break;
		}
		if (judge_weq(sub, "remote") || judge_weq(sub, "submodule")) {
			static const char *const local[] = {
			    "add",           "remove",       "rm",       "rename",
			    "set-url",       "get-url",      "-v",       "--verbose",
			    "status",        "summary",      "init",     "deinit",
			    "absorbgitdirs", "set-branches", "set-head", NULL};
			bool quiet = true;

			if (i + 1 >= av->n)
				return false; /* git remote: lists them */
			for (size_t k = 0; local[k] != NULL && quiet; k++)
				quiet = !judge_weq(&av->w[i + 1], local[k]);
			if (!quiet)
				return false;
		} else if (judge_weq(sub, "archive")) {
			bool remote = false;

			for (size_t k = i + 1; k < av->n; k++)
				remote = remote || (judge_lit(&av->w[k]) && av->w[k].len >= 8 &&
				                    memcmp(av->w[k].text, "--remote", 8) == 0);
			if (!remote)
				return false;
		} else {
			bool sends = false;

			for (size_t k = 0; net[k] != NULL && !sends; k++)
				sends = judge_weq(sub, net[k]);
			if (!sends)
				return false;
		}
		for (size_t k = i + 1; k < av->n; k++) {
			const struct sh_word *w = &av->w[k];

			if (judge_lit(w) && w->len > 0 && w->text[0] == '-')
				continue;
			if (!judge_lit(w)) {
				add_unknown(d);
			} else if (memmem(w->text, w->len, "://", 3) != NULL ||
			           (memchr(w->text, ':', w->len) != NULL &&
			            memchr(w->text, '@', w->len) != NULL)) {
				add_host_word(j, d, w, true);
			} else {
				/* a remote's name: its URL is in the repository's config */
				const char *txt =
				    judge_fmt(j, "the remote `%.*s`",
				              (int)(w->len > 60 ? 60 : w->len), w->text);

				add_dest(j, d, txt, strlen(txt), "", 0);
			}
			break;
		}
		break;
	}
	case K_DNS:
		if (strcmp(name, "dig") == 0) {
			dig_dests(j, av, d, harmless, why);
		} else {
			for (size_t i = 0; i < wa.nops; i++)
				add_host_word(j, d, wa.ops[i], false);
			if (gp == NULL || !gp->ok || gp->items == NULL ||
			    (strcmp(name, "host") != 0 && strcmp(name, "nslookup") != 0)) {
				*harmless = false;
				*why = "no harmless form is known for it";
			} else {
				for (size_t i = 0; i < gp->nitems; i++) {
					const struct gram_item *it = &gp->items[i];

					if (it->opt != NULL && (strcmp(it->opt->name, "-l") == 0 ||
					                        strcmp(it->opt->name, "-a") == 0)) {
						*harmless = false;
						*why = "a zone transfer or ANY query";
					}
				}
			}
		}
		if (d->n == 0 && !d->unknown)
			return false; /* no name: it prints its usage */
		break;
	case K_DB:
		for (size_t i = 0; i < wa.nops; i++)
			db_word(j, wa.ops[i], d, &named);
		break;
	case K_REDIS:
		for (size_t i = 0; i < av->n; i++) {
			const struct sh_word *w = &av->w[i];

			if ((judge_weq(w, "-u") || judge_weq(w, "-s")) && i + 1 < av->n) {
				if (judge_weq(w, "-s")) {
					add_dest(j, d, av->w[i + 1].text, av->w[i + 1].len, "", 0);
					named = true;
				} else {
					add_host_word(j, d, &av->w[i + 1], false);
					named = true;
				}
				i++;
			}
		}
		break;
	case K_OPENSSL: {
		static const char *const net[] = {"s_client", "s_time", "ocsp", NULL};
		bool sends = false;

		for (size_t k = 0; net[k] != NULL && !sends; k++)
			sends = av->n > 0 && judge_weq(&av->w[0], net[k]);
		if (!sends)
			return false;
		if (!named && av->n > 0 && judge_weq(&av->w[0], "s_client"))
			*deflt = "localhost:4433";
		break;
	}
	case K_APT: {
		static const char *const net[] = {
		    "update",    "upgrade",   "dist-upgrade", "full-upgrade",
		    "install",   "reinstall", "download",     "source",
		    "changelog", "build-dep", "satisfy",      "safe-upgrade",
		    NULL};
		static const char *const sim[] = {"-s",           "--simulate", "--dry-run",
		                                  "--just-print", "--no-act",   "--recon",
		                                  "--print-uris", NULL};
		static const char *const valued[] = {"-o",
		                                     "-c",
		                                     "-t",
		                                     "-a",
		                                     "--option",
		                                     "--config-file",
		                                     "--target-release",
		                                     "--host-architecture",
		                                     NULL};
		const struct sh_word *sub = NULL;
		bool sends = false;

		/* the subcommand: the first word that is no option or option value */
		for (size_t i = 0; i < av->n && sub == NULL; i++) {
			const struct sh_word *w = &av->w[i];

			if (!judge_lit(w) || w->len == 0 || w->text[0] != '-') {
				sub = w;
				continue;
			}
			for (size_t k = 0; valued[k] != NULL; k++)
				if (judge_weq(w, valued[k]))
					i++;
		}
		if (sub == NULL)
			return false;
		if (!judge_lit(sub))
			return true;
		for (size_t k = 0; net[k] != NULL && !sends; k++)
			sends = judge_weq(sub, net[k]);
		if (strcmp(name, "apt-file") == 0)
			sends = judge_weq(sub, "update");
		for (size_t i = 0; i < av->n && sends && !judge_weq(sub, "update"); i++)
			for (size_t k = 0; sim[k] != NULL; k++)
				if (judge_weq(&av->w[i], sim[k]))
					sends = false; /* simulated: nothing fetched */
		return sends;
	}
	case K_SOCAT:
		for (size_t i = 0; i < wa.nops; i++) {
			const struct sh_word *w = wa.ops[i];
			const char *colon;

			if (!judge_lit(w)) {
				add_unknown(d);
				continue;
			}
			colon = memchr(w->text, ':', w->len);
			if (w->len == 1 && w->text[0] == '-')
				continue; /* stdio */
			if (colon == NULL) {
				add_dest(j, d, w->text, w->len, "", 0);
				continue;
			}
			{
				const struct sh_word rest = {
				    .text = colon + 1,
				    .len = w->len - (size_t)(colon + 1 - w->text),
				    .prefix = w->len - (size_t)(colon + 1 - w->text),
				    .raw = colon + 1,
				    .raw_len = w->len - (size_t)(colon + 1 - w->text)};

				if (strncasecmp(w->text, "STDIO", 5) == 0 ||
				    strncasecmp(w->text, "STDOUT", 6) == 0 ||
				    strncasecmp(w->text, "STDERR", 6) == 0)
					continue;
				if (strncasecmp(w->text, "TCP", 3) == 0 ||
				    strncasecmp(w->text, "UDP", 3) == 0 ||
				    strncasecmp(w->text, "SCTP", 4) == 0 ||
				    strncasecmp(w->text, "OPENSSL", 7) == 0 ||
				    strncasecmp(w->text, "SSL", 3) == 0 ||
				    strncasecmp(w->text, "DCCP", 4) == 0)
					add_host_word(j, d, &rest, true);
				else
					add_dest(j, d, w->text, w->len, "", 0);
			}
		}
		break;
	case K_SMB:
		for (size_t i = 0; i < wa.nops; i++) {
			const struct sh_word *w = wa.ops[i];

			if (judge_lit(w) && w->len > 2 && w->text[0] == '/' && w->text[1] == '/') {
				const char *e = memchr(w->text + 2, '/', w->len - 2);
				size_t hl = e ? (size_t)(e - w->text - 2) : w->len - 2;

				add_dest(j, d, w->text + 2, hl, w->text + 2, hl);
			} else if (!judge_lit(w)) {
				add_unknown(d);
			}
		}
		break;
	}
	if (wa.lost || av->extra_unknown)
		add_unknown(d);
	if (d->n == 0 && !d->unknown) {
		if (av->n == 0 && c->deflt == NULL)
			return false; /* no words: it prints its usage */
		if (*deflt != NULL && strcmp(*deflt, "localhost") == 0)
			add_dest(j, d, "localhost", 9, "localhost", 9);
	}
	return true;
}

/* Only --version / --help: nothing is sent. */
static bool only_info(const struct judge_argv *av)
{
	if (av->n == 0 || av->extra_unknown)
		return false;
	for (size_t i = 0; i < av->n; i++)
		if (!judge_weq(&av->w[i], "--version") && !judge_weq(&av->w[i], "--help") &&
		    !judge_weq(&av->w[i], "-V"))
			return false;
	return true;
}

bool netclient_judge(struct judge *j, struct judge_seg *s, const char *name,
                     const struct judge_argv *av, const struct gram_proof *gp, enum target_type t)
{
	const struct client *c = find_client(name);
	struct dests d = {.n = 0};
	const char *deflt = NULL, *why = NULL, *form = NULL;
	bool harmless = true;
	bool (*check)(const struct gram_proof *, const char **) = NULL;

	if (c == NULL) {
		/* a program the policy says sends (`net: send`) */
		struct walkargs wa;

		if (gp == NULL || !gp->ok || gp->node == NULL || gp->node->net != GRAM_NET_SEND ||
		    only_info(av))
			return false;
		collect(j, NULL, av, gp, &wa);
		for (size_t i = 0; i < wa.nops; i++)
			if (hostish(wa.ops[i]))
				add_host_word(j, &d, wa.ops[i], false);
		if (wa.lost || av->extra_unknown)
			add_unknown(&d);
		say_sends(j, s, name, &d, NULL, NULL, t);
		return false;
	}
	if (only_info(av))
		return false;
	if (!find_dests(j, c, name, av, gp, &d, &deflt, &harmless, &why))
		return false;
	if (strcmp(name, "curl") == 0) {
		check = curl_harmless;
		form = "HTTP GET/HEAD";
	} else if (strcmp(name, "wget") == 0) {
		check = wget_harmless;
		form = "HTTP GET/HEAD";
	} else if (strcmp(name, "ping") == 0 || strcmp(name, "ping6") == 0) {
		check = ping_harmless;
		form = "echo requests";
	} else if (c->kind == K_DNS && harmless) {
		form = "DNS lookups";
	} else {
		harmless = false;
		if (why == NULL)
			why = c->kind == K_DB || c->kind == K_REDIS
			          ? "a database client: only a plain query may be allowed"
			          : "no harmless form is known for it";
	}
	if (harmless && check != NULL) {
		if (gp == NULL || !gp->ok || gp->items == NULL || gp->items_lost) {
			harmless = false;
			why = "its words are not all accounted for";
		} else {
			harmless = check(gp, &why);
		}
		/* every option value spelled out: a value known only at run time
		 * (-A "$(hostname)") carries the target's data along */
		for (size_t i = 0; harmless && i < gp->nitems; i++)
			if (gp->items[i].opt != NULL && gp->items[i].vword != NULL &&
			    !judge_lit(gp->items[i].vword)) {
				harmless = false;
				why = "an option value known only at run time";
			}
	}
	if (harmless && c->kind == K_URL && proxy_assigned(j)) {
		harmless = false;
		why = "a proxy set in the command's environment";
	}
	if (harmless && d.n == 0) {
		harmless = false;
		why = NULL;
	}
	if (harmless && !d.not_allowed) {
		say_allowed(j, s, name, form, &d, t);
		return true;
	}
	if (harmless && d.not_allowed && why == NULL)
		why = j->nnet_allow == 0 ? "gate.yaml allows no destination"
		                         : "a destination gate.yaml does not allow";
	say_sends(j, s, name, &d, deflt, why, t);
	return false;
}

bool netclient_sql(struct judge *j, struct judge_seg *s, const char *name,
                   const struct judge_argv *av, bool queries_only, enum target_type t)
{
	const struct client *c = find_client(name);
	struct dests d = {.n = 0};
	const char *deflt = NULL, *why = NULL;
	bool harmless = true;

	if (c == NULL)
		return false;
	if (!find_dests(j, c, name, av, NULL, &d, &deflt, &harmless, &why))
		return false;
	if (queries_only && !d.not_allowed && d.n > 0) {
		say_allowed(j, s, name, "a query", &d, t);
		return true;
	}
	say_sends(j, s, name, &d, deflt,
	          !queries_only        ? "statements that are not plainly a query"
	          : j->nnet_allow == 0 ? "gate.yaml allows no destination"
	                               : "a destination gate.yaml does not allow",
	          t);
	return false;
}

void netclient_code(struct judge *j, struct judge_seg *s, const char *what, const char *text,
                    size_t len, enum target_type t)
{
	/* what code in Python, Perl, Ruby, Node, PHP, Lua, Tcl or awk calls to
	 * open a connection or send a request */
	static const char *const words[] = {"socket",
	                                    "Socket",
	                                    "urlopen",
	                                    "urllib",
	                                    "requests.",
	                                    "httplib",
	                                    "http.client",
	                                    "HTTPConnection",
	                                    "HTTPSConnection",
	                                    "IO::Socket",
	                                    "LWP::",
	                                    "HTTP::Tiny",
	                                    "Net::",
	                                    "fsockopen",
	                                    "curl_init",
	                                    "curl_exec",
	                                    "file_get_contents(\"http",
	                                    "XMLHttpRequest",
	                                    "fetch(",
	                                    "net.connect",
	                                    "createConnection",
	                                    "require(\"net\")",
	                                    "require('net')",
	                                    "require(\"http",
	                                    "require('http",
	                                    "TCPSocket",
	                                    "UDPSocket",
	                                    "WebSocket",
	                                    "websocket",
	                                    "paramiko",
	                                    "smtplib",
	                                    "ftplib",
	                                    "telnetlib",
	                                    "aiohttp",
	                                    "httpx",
	                                    "Net::HTTP",
	                                    "open-uri",
	                                    "/dev/tcp/",
	                                    "/dev/udp/",
	                                    "/inet/",
	                                    "connect(",
	                                    NULL};
	struct dests d = {.n = 0};

	for (size_t i = 0; words[i] != NULL; i++) {
		if (memmem(text, len, words[i], strlen(words[i])) == NULL)
			continue;
		add_unknown(&d);
		say_sends(j, s, what, &d, NULL, judge_fmt(j, "its code names `%s`", words[i]), t);
		return;
	}
}

void netclient_ssh(struct judge *j, struct judge_seg *s, const struct sh_word *host,
                   enum target_type t)
{
	struct dests d = {.n = 0};

	add_host_word(j, &d, host, false);
	say_sends(j, s, "ssh", &d, NULL, "a remote login", t);
}

void netclient_redirect(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                        enum target_type t)
{
	size_t len = judge_lit(w) ? w->len : w->prefix;
	struct dests d = {.n = 0};
	const char *rest, *slash;

	if (len < 9 ||
	    (memcmp(w->text, "/dev/tcp/", 9) != 0 && memcmp(w->text, "/dev/udp/", 9) != 0))
		return;
	rest = w->text + 9;
	slash = memchr(rest, '/', len - 9);
	if (!judge_lit(w))
		add_unknown(&d);
	else
		add_dest(j, &d, rest, len - 9, rest, slash ? (size_t)(slash - rest) : len - 9);
	say_sends(j, s, "the shell", &d, NULL, "a /dev/tcp or /dev/udp redirection", t);
}
