/* dest.c -- destination spellings, ssh -G and the resolver, and the database's answer. */
#include "hook/dest.h"

#include "lib/deadline.h"
#include "lib/buf.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct dest_cand {
	char *s;
	size_t reach;
	bool own;     /* the destination as spelled (allowlist applies to it) */
	bool resolve; /* ask the resolver (DNS too); else /etc/hosts only */
};

static void cand_add_as(struct dest_set *ds, const char *s, size_t len, size_t reach, bool own,
                        bool resolve)
{
	char host[256];

	if (!reach_norm_host(s, len, host, sizeof(host)))
		return;
	for (size_t i = 0; i < ds->n; i++)
		if (ds->c[i].reach == reach && strcmp(ds->c[i].s, host) == 0)
			return;
	if (ds->n == ds->cap) {
		ds->cap = ds->cap ? ds->cap * 2 : 16;
		ds->c = xrealloc(ds->c, ds->cap * sizeof(*ds->c));
	}
	ds->c[ds->n].s = xstrdup(host);
	ds->c[ds->n].reach = reach;
	ds->c[ds->n].own = own;
	ds->c[ds->n].resolve = resolve;
	ds->n++;
}

static void cand_add(struct dest_set *ds, const char *s, size_t len, size_t reach, bool own)
{
	cand_add_as(ds, s, len, reach, own, false);
}

/* Words of code are not sent to DNS (that would leak them, and take long):
 * a name there is looked up in /etc/hosts only, like the resolver's first
 * source. */
static void hosts_file(struct dest_set *ds)
{
	char err[128];
	size_t len, n0 = ds->n;
	char *text = readfile("/etc/hosts", (size_t)1 << 20, &len, err, sizeof(err));

	if (text == NULL)
		return;
	for (char *line = text, *nl; line && *line; line = nl) {
		char *addr, *name, *save = NULL;

		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		addr = strtok_r(line, " \t", &save);
		while (addr && (name = strtok_r(NULL, " \t", &save)) != NULL) {
			for (size_t i = 0; i < n0; i++)
				if (!ds->c[i].resolve && strcasecmp(ds->c[i].s, name) == 0)
					cand_add(ds, addr, strlen(addr), ds->c[i].reach, false);
		}
	}
	free(text);
}

/* ssh -G [opts] host: what OpenSSH's configuration makes of the name
 * (Host aliases, HostName, ProxyJump, ProxyCommand).  Output capped. */
static void ssh_g(struct dest_set *ds, const struct reach *r, size_t idx)
{
	char *argv[REACH_SSH_ARGS + 5];
	size_t n = 0;
	int pfd[2];
	pid_t pid;
	char out[16384];
	size_t used = 0;
	int64_t deadline = deadline_now_ms() + DEST_SSH_G_MS;

	argv[n++] = "ssh";
	argv[n++] = "-G";
	for (size_t i = 0; i < r->nssh_args; i++)
		argv[n++] = r->ssh_args[i];
	argv[n++] = "--";
	argv[n++] = r->dest;
	argv[n] = NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(devnull, 2);
		execvp("ssh", argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		long left = (long)(deadline - deadline_now_ms());
		struct pollfd p = {pfd[0], POLLIN, 0};
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		got = read(pfd[0], out + used, sizeof(out) - 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		used += (size_t)got;
		if (used >= sizeof(out) - 1)
			break;
	}
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	out[used] = '\0';
	for (char *line = out, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (strncmp(line, "hostname ", 9) == 0) {
			cand_add_as(ds, line + 9, strlen(line + 9), idx, false, true);
		} else if (strncmp(line, "proxyjump ", 10) == 0 ||
		           strncmp(line, "proxycommand ", 13) == 0) {
			/* every host-like word of the jump list or the proxy command */
			char *v = strchr(line, ' ') + 1;

			for (char *tok = strtok(v, " ,\t\"'"); tok; tok = strtok(NULL, " ,\t\"'")) {
				char *at = strrchr(tok, '@');
				char *h = at ? at + 1 : tok;
				char *colon = strrchr(h, ':');

				if (colon && strchr(h, ':') == colon)
					*colon = '\0';
				cand_add(ds, h, strlen(h), idx, false);
			}
		}
	}
}

/* Resolves every name among the candidates in a child process, so a slow
 * resolver is simply killed at the bound (no resolver threads left behind).
 * The child writes "index address" lines. */
static void resolve_all(struct dest_set *ds)
{
	size_t n0 = ds->n;
	int64_t deadline = deadline_now_ms() + DEST_RESOLVE_MS;
	char out[16384];
	size_t used = 0;
	int pfd[2];
	pid_t pid;
	bool any = false;

	for (size_t i = 0; i < n0 && !any; i++)
		any =
		    ds->c[i].resolve && !(strspn(ds->c[i].s, "0123456789.") == strlen(ds->c[i].s) ||
		                          strchr(ds->c[i].s, ':'));
	if (!any || pipe2(pfd, O_CLOEXEC) < 0)
		return;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
		int devnull = open("/dev/null", O_RDWR);

		/* nothing of the child's may reach the hook's answer */
		dup2(devnull, 1);
		dup2(devnull, 2);
		close(pfd[0]);
		for (size_t i = 0; i < n0; i++) {
			const char *s = ds->c[i].s;
			struct addrinfo *res = NULL;

			if (!ds->c[i].resolve || strspn(s, "0123456789.") == strlen(s) ||
			    strchr(s, ':'))
				continue;
			if (getaddrinfo(s, NULL, &hints, &res) != 0)
				continue;
			for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
				char host[NI_MAXHOST], line[NI_MAXHOST + 32];
				int len;

				if (getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host),
				                NULL, 0, NI_NUMERICHOST) != 0)
					continue;
				len = snprintf(line, sizeof(line), "%zu %s\n", i, host);
				if (write(pfd[1], line, (size_t)len) != len)
					_exit(1);
			}
			freeaddrinfo(res);
		}
		_exit(0);
	}
	close(pfd[1]);
	for (;;) {
		long left = (long)(deadline - deadline_now_ms());
		struct pollfd p = {pfd[0], POLLIN, 0};
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		got = read(pfd[0], out + used, sizeof(out) - 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || (used += (size_t)got) >= sizeof(out) - 1)
			break;
	}
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	out[used] = '\0';
	for (char *line = out, *nl; line && *line; line = nl) {
		char *sp = strchr(line, ' ');
		size_t idx;

		nl = strchr(line, '\n');
		if (nl == NULL)
			break; /* a line cut by the bound */
		*nl++ = '\0';
		if (sp == NULL)
			continue;
		*sp = '\0';
		idx = (size_t)strtoul(line, NULL, 10);
		if (idx < n0)
			cand_add(ds, sp + 1, strlen(sp + 1), ds->c[idx].reach, false);
	}
}

int dest_resolve(const struct reach_list *rl, struct dest_set *ds)
{
	for (size_t i = 0; i < rl->n; i++) {
		const struct reach *r = &rl->v[i];

		if (r->dest == NULL || (r->kind != REACH_DEST && r->kind != REACH_NAMED))
			continue;
		cand_add_as(ds, r->dest, strlen(r->dest), i, true, r->kind == REACH_DEST);
		if (r->kind == REACH_DEST && r->ssh_config)
			ssh_g(ds, r, i);
	}
	hosts_file(ds);
	resolve_all(ds);
	return 0;
}

int dest_match(struct dest_set *ds, struct store *db, char *err, size_t errlen)
{
	struct buf arr;
	struct store_res *res;
	const char *params[1];

	if (ds->n == 0)
		return 0;
	buf_init(&arr, 0);
	buf_append(&arr, "{", 1);
	for (size_t i = 0, sent = 0; i < ds->n; i++) {
		bool dup = false;

		/* each spelling once: the database counts what it is asked */
		for (size_t k = 0; k < i && !dup; k++)
			dup = strcmp(ds->c[k].s, ds->c[i].s) == 0;
		if (dup)
			continue;
		if (sent++)
			buf_append(&arr, ",", 1);
		buf_append(&arr, "\"", 1);
		for (const char *p = ds->c[i].s; *p; p++) {
			if (*p == '"' || *p == '\\')
				buf_append(&arr, "\\", 1);
			buf_append(&arr, p, 1);
		}
		buf_append(&arr, "\"", 1);
	}
	buf_putc(&arr, '}');
	params[0] = buf_str(&arr);
	res = store_exec(db,
	                 "SELECT candidate, kind, coalesce(slug, ''), coalesce(label, '') "
	                 "FROM airlock.hook_match($1::text[])",
	                 1, params);
	buf_free(&arr);
	if (res == NULL) {
		snprintf(err, errlen, "%s", store_errmsg(db));
		return -1;
	}
	ds->nm = (size_t)store_nrows(res);
	ds->m = xcalloc(ds->nm ? ds->nm : 1, sizeof(*ds->m));
	for (size_t i = 0; i < ds->nm; i++) {
		struct dest_match *m = &ds->m[i];

		snprintf(m->candidate, sizeof(m->candidate), "%s", store_get(res, (int)i, 0));
		m->managed = strcmp(store_get(res, (int)i, 1), "managed") == 0;
		snprintf(m->slug, sizeof(m->slug), "%s", store_get(res, (int)i, 2));
		snprintf(m->label, sizeof(m->label), "%s", store_get(res, (int)i, 3));
	}
	store_clear(res);
	return 0;
}

const struct dest_match *dest_managed(const struct dest_set *ds, size_t i)
{
	for (size_t k = 0; k < ds->n; k++) {
		if (ds->c[k].reach != i)
			continue;
		for (size_t j = 0; j < ds->nm; j++)
			if (ds->m[j].managed && strcmp(ds->m[j].candidate, ds->c[k].s) == 0)
				return &ds->m[j];
	}
	return NULL;
}

bool dest_allowed(const struct dest_set *ds, size_t i)
{
	for (size_t k = 0; k < ds->n; k++) {
		if (ds->c[k].reach != i || !ds->c[k].own)
			continue;
		for (size_t j = 0; j < ds->nm; j++)
			if (!ds->m[j].managed && strcmp(ds->m[j].candidate, ds->c[k].s) == 0)
				return true;
	}
	return false;
}

void dest_set_clear(struct dest_set *ds)
{
	for (size_t i = 0; i < ds->n; i++)
		free(ds->c[i].s);
	free(ds->c);
	free(ds->m);
	memset(ds, 0, sizeof(*ds));
}
