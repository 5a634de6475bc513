/* reachmore.c -- programs that reach machines in ways the hook reads less
 * directly: container runtimes (a remote daemon, the host's network, the
 * command a container runs), fleet and provisioning runners (inventories,
 * rosters, configurations), tunnels, FUSE and network mounts, backup tools
 * over SSH and SFTP, remote desktops; and NAME=value words that set where a
 * program goes.  Each program's options and operands are read from its own
 * documentation's synopsis; where its destinations are in a file the hook
 * does not read, the part is hidden (ask), and where it runs code nobody can
 * read, it is opaque (ask). */
#include "hook/reach_int.h"

#include "lib/buf.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- one spec per program */

/* How a program's operands name destinations. */
enum operands {
	OP_NONE,     /* only options do */
	OP_FIRST,    /* the first operand: [user@]host[:port] or a URL */
	OP_ALL,      /* every operand that is a URL or host */
	OP_HOSTPATH, /* operands like [user@]host:path or host::module */
	OP_UNC,      /* //host/share (and \\host\share) */
	OP_URLS,     /* only operands with a scheme (scheme://host/...) */
};

struct spec {
	const char *names;   /* space-separated */
	const char *valopts; /* short options with a value */
	const char *longval; /* long options with a value, space-separated */
	const char *dest;    /* options (short letters, then " long names") whose value is a host */
	const char *code;    /* options whose value is a command line */
	const char *hidden;  /* options whose value is a file of hosts or a saved session */
	enum operands ops;
	bool ssh;            /* destinations are ssh's (its config can alias them) */
	const char *always;  /* non-NULL: where its hosts come from besides what is spelled
	                        (an inventory, a roster): always asks */
	const char *subcmds; /* non-NULL: it reaches only with one of these subcommands, and
	                        its operands start after it */
	bool all_names;      /* every operand's host-like words are names to check */
	bool first_hosts;    /* the first operand is a comma list of hosts (@ssh/host too) */
};

static const struct spec specs[] = {
    /* sshfs [user@]host:[dir] mountpoint [-o options] */
    {"sshfs", "opF", "", "", "", "", OP_HOSTPATH, true},
    /* sshuttle -r [user@]host[:port] subnets */
    {"sshuttle", "rexs", "remote ssh-cmd exclude python", "r remote", "e ssh-cmd", "", OP_NONE,
     true},
    /* corkscrew proxyhost proxyport desthost destport [authfile] */
    {"corkscrew", "", "", "", "", "", OP_ALL, false},
    /* proxytunnel -p proxy:port -d dest:port */
    {"proxytunnel", "pdrPFHe", "proxy dest remproxy proxyauth", "pdr proxy dest remproxy", "", "",
     OP_NONE, false},
    /* chisel client [options] server remote...; remotes name hosts too */
    {"chisel", "", "auth fingerprint proxy hostname keepalive max-retry-count", " proxy", "", "",
     OP_ALL, false, NULL, "client"},
    {"wstunnel", "", "", "", "", "", OP_URLS, false, NULL, "client"},
    {"stunnel stunnel4", "", "", "", "", "", OP_NONE, false,
     "the hosts its configuration file names"},
    {"frpc", "c", "config", "", "", "c config", OP_NONE, false,
     "the server its configuration names"},
    {"cloudflared", "", "hostname url", " hostname url", "", "", OP_NONE, false},
    {"tailscale", "", "", "", "", "", OP_FIRST, true, NULL, "ssh nc"},
    {"tsh", "l", "proxy user login", " proxy", "", "", OP_FIRST, true, NULL, "ssh"},
    /* network file systems */
    {"curlftpfs", "o", "", "", "", "", OP_FIRST, false},
    {"smbclient", "IUWpnOmL", "ip-address user workgroup port list", "IL ip-address list", "", "",
     OP_UNC, false},
    {"smbmap", "HudpP", "", "H", "", "", OP_NONE, false},
    {"showmount rpcinfo", "", "", "", "", "", OP_ALL, false},
    {"mount.nfs mount.nfs4 mount.cifs mount.smb3", "o", "", "", "", "", OP_HOSTPATH, false},
    /* backup and copy tools over SSH, SFTP and REST */
    {"duplicity", "", "ssh-options rsync-options file-to-restore", "", "", "", OP_URLS, true},
    {"rdiff-backup", "", "remote-schema", "", " remote-schema", "", OP_HOSTPATH, true},
    {"bup", "r", "remote", "r remote", "", "", OP_NONE, true},
    {"kopia", "", "host sftp-host", " host sftp-host", "", "", OP_NONE, true},
    /* remote desktops */
    {"rdesktop vncviewer xtightvncviewer xvncviewer", "ugdp", "", "", "", "", OP_FIRST, false},
    /* fleet and provisioning runners */
    {"salt-ssh", "rcLEGNtiu", "roster-file roster user passwd priv config-dir", "", "",
     "c config-dir roster-file", OP_NONE, false, "the hosts in its roster", NULL, true},
    {"salt salt-run salt-cp", "tcLEGNu", "timeout config-dir", "", "", "c config-dir", OP_NONE,
     false, "the minions its master reaches", NULL, true},
    {"pyinfra", "", "user port key password sudo-user", "", "", "", OP_NONE, true,
     "the hosts in its inventory and operations", NULL, false, true},
    {"fab fab2 fabric", "HiSrfc", "hosts identity ssh-config roles", "H hosts", "", "S ssh-config",
     OP_NONE, true, "the hosts its fabfile names"},
    {"bolt", "tiu", "targets inventoryfile user password", "t targets", "", "i inventoryfile",
     OP_NONE, true},
    {"knife", "xUPpiZc", "ssh-user ssh-password ssh-port identity-file config", "", "", "c config",
     OP_NONE, true, "the nodes its Chef server lists", NULL, true},
    {"kamal mrsk cap capistrano mina", "dc", "destination config-file", "", "", "", OP_NONE, true,
     "the servers its deploy configuration names"},
    {"ansible-pull", "iUCdl", "inventory url checkout directory limit", "U url", "", "", OP_NONE,
     false, "the hosts of the playbook it fetches"},
    {"cssh clusterssh mussh", "lpHhc", "username port", "H", "", "h c", OP_ALL, true},
};

static bool word_in(const char *list, const char *s, size_t len)
{
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ' ');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == len && memcmp(p, s, len) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static const struct spec *spec_of(const char *name)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (word_in(specs[i].names, name, strlen(name)))
			return &specs[i];
	return NULL;
}

/* Whether option v is named in list: short letters before the first
 * space, long names after it. */
static bool opt_in(const char *list, const struct reach_opt *v)
{
	const char *sp = strchr(list, ' ');
	size_t sl = sp ? (size_t)(sp - list) : strlen(list);

	if (v->opt && memchr(list, v->opt, sl) != NULL)
		return true;
	return v->name != NULL && sp != NULL && word_in(sp + 1, v->name, v->namelen);
}

/* A destination written as [user@]host[:port][/...] or a URL. */
static void add_hostish(struct reach_ctx *sc, const char *prog, const char *t, size_t len, bool ssh)
{
	const char *h;
	size_t hl;
	int port;
	struct reach *r;

	if (reach_parse_url(t, len, &h, &hl, &port)) {
		r = reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
	} else {
		const char *at = memrchr(t, '@', len);

		if (at != NULL) {
			len -= (size_t)(at + 1 - t);
			t = at + 1;
		}
		reach_split_hostport(t, len, &h, &hl, &port);
		if (hl == 0)
			return;
		r = reach_add_dest(sc, prog, h, hl, port, REACH_DEST);
	}
	if (r != NULL && r->kind == REACH_DEST && ssh)
		r->ssh_config = true;
}

struct spec_state {
	const struct spec *sp;
	bool hidden;
};

static void spec_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	struct spec_state *st = arg;

	if (v->text == NULL)
		return;
	if (opt_in(st->sp->dest, v)) {
		if (v->computed) {
			reach_value_dest(sc, prog, v);
			return;
		}
		/* host1,host2 lists (fab -H, bolt -t) */
		for (size_t i = 0; i < v->len;) {
			size_t e = i;

			while (e < v->len && v->text[e] != ',')
				e++;
			if (e > i)
				add_hostish(sc, prog, v->text + i, e - i, st->sp->ssh);
			i = e + 1;
		}
	} else if (opt_in(st->sp->code, v)) {
		reach_value_code(sc, v);
	} else if (opt_in(st->sp->hidden, v)) {
		st->hidden = true;
	} else if (v->opt == 'o' && !v->computed) {
		/* sshfs/curlftpfs -o ssh_command=...,ProxyCommand=...: code */
		const char *p;

		if ((p = memmem(v->text, v->len, "ssh_command=", 12)) != NULL ||
		    (p = memmem(v->text, v->len, "ProxyCommand=", 13)) != NULL) {
			const char *eq = memchr(p, '=', (size_t)(v->text + v->len - p));
			const char *end = memchr(eq, ',', (size_t)(v->text + v->len - eq));

			reach_scan_text(sc, eq + 1,
			                (size_t)((end ? end : v->text + v->len) - (eq + 1)));
		}
	}
}

/* An operand of kind ops: its destinations. */
static void spec_operand(struct reach_ctx *sc, const char *prog, const struct spec *sp,
                         const struct sh_word *x, size_t k)
{
	const char *t = x->text, *h;
	size_t len = x->len, hl;

	if (!reach_lit(x)) {
		if (sp->ops != OP_NONE && (k == 0 || sp->ops != OP_FIRST))
			reach_add_computed(sc, prog, x);
		return;
	}
	switch (sp->ops) {
	case OP_NONE:
		return;
	case OP_FIRST:
		if (k == 0)
			add_hostish(sc, prog, t, len, sp->ssh);
		return;
	case OP_ALL:
		/* a URL, or a word that is a host (chisel's remotes: a:b:host:port) */
		if (memmem(t, len, "://", 3) != NULL) {
			add_hostish(sc, prog, t, len, sp->ssh);
		} else if (len > 0 && t[0] != '-' && t[0] != '/' && t[0] != '.') {
			char host[256];
			size_t n = 0;

			for (size_t i = 0; i <= len; i++) {
				if (i < len && t[i] != ':' && n + 1 < sizeof(host)) {
					host[n++] = t[i];
					continue;
				}
				host[n] = '\0';
				/* a port is no host; a long number is an address (2130706433) */
				if (n > 0 && reach_parse_port(host, n) == 0 &&
				    (strspn(host, "0123456789") != n || n >= 7))
					add_hostish(sc, prog, host, n, sp->ssh);
				n = 0;
			}
		}
		return;
	case OP_HOSTPATH:
		if (memmem(t, len, "://", 3) != NULL)
			add_hostish(sc, prog, t, len, sp->ssh);
		else if (reach_remote_operand(t, len, &h, &hl))
			add_hostish(sc, prog, h, hl, sp->ssh);
		return;
	case OP_URLS:
		if (memmem(t, len, "://", 3) != NULL)
			add_hostish(sc, prog, t, len, sp->ssh);
		return;
	case OP_UNC:
		if (len > 2 && (t[0] == '/' || t[0] == '\\') && t[1] == t[0]) {
			const char *e = t + 2;

			while (e < t + len && *e != '/' && *e != '\\')
				e++;
			add_hostish(sc, prog, t + 2, (size_t)(e - t - 2), false);
		}
		return;
	}
}

static void run_spec(struct reach_ctx *sc, const char *prog, const struct spec *sp,
                     const struct sh_word *w, size_t n)
{
	struct spec_state st = {.sp = sp};
	const struct sh_word *ops[64];
	size_t nops;

	size_t first = 0;

	reach_parse_opts(sc, prog, w, n, sp->valopts, sp->longval, spec_opt, &st, ops, &nops, 64);
	if (sp->subcmds != NULL) {
		while (first < nops && !(reach_lit(ops[first]) &&
		                         word_in(sp->subcmds, ops[first]->text, ops[first]->len)))
			first++;
		if (first == nops)
			return; /* a subcommand that reaches nothing (status, server ...) */
		first++;
	}
	for (size_t k = first; k < nops; k++) {
		spec_operand(sc, prog, sp, ops[k], k - first);
		if (sp->all_names && reach_lit(ops[k]))
			reach_named_tokens(sc, prog, ops[k]->text, ops[k]->len);
	}
	if (sp->first_hosts && nops > 0 && reach_lit(ops[0]) &&
	    !memmem(ops[0]->text, ops[0]->len, ".py", 3)) {
		/* pyinfra host1,host2 / @ssh/host (an inventory file is hidden) */
		const char *t = ops[0]->text;
		size_t len = ops[0]->len;

		for (size_t i = 0; i < len;) {
			size_t e = i;

			while (e < len && t[e] != ',')
				e++;
			if (e - i > 5 && strncmp(t + i, "@ssh/", 5) == 0)
				add_hostish(sc, prog, t + i + 5, e - i - 5, true);
			else if (e > i && t[i] != '@' && memchr(t + i, '/', e - i) == NULL)
				add_hostish(sc, prog, t + i, e - i, true);
			i = e + 1;
		}
	}
	if (st.hidden || sp->always) {
		struct reach *r = reach_add(sc, REACH_HIDDEN, prog);

		if (r != NULL)
			r->dest = xstrdup(sp->always ? sp->always : "hosts from a file it reads");
	}
}

/* ---------------------------------------------------------------- programs with subcommands */

/* terraform/tofu/pulumi: what its providers and provisioners reach is in its
 * configuration; subcommands that only read files or print do not connect. */
static void provisioner(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	static const char offline[] =
	    "fmt validate version show output graph providers workspace login logout "
	    "get init test metadata state config whoami about help -version -help --version "
	    "--help";

	for (size_t i = 1; i < n; i++) {
		if (!reach_lit(&w[i])) {
			reach_add_opaque(sc, prog, "its subcommand is known only at run time");
			return;
		}
		if (w[i].len > 0 && w[i].text[0] == '-')
			continue;
		if (word_in(offline, w[i].text, w[i].len))
			return;
		for (size_t k = i + 1; k < n; k++)
			if (reach_lit(&w[k]))
				reach_named_tokens(sc, prog, w[k].text, w[k].len);
		{
			struct reach *r = reach_add(sc, REACH_HIDDEN, prog);

			if (r != NULL)
				r->dest = xstrdup("the machines its providers and provisioners are "
				                  "configured for");
		}
		return;
	}
}

struct docker_state {
	bool host_net, hidden;
	const char *entrypoint;
	size_t entrypoint_len;
};

static void docker_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	struct docker_state *st = arg;

	if (v->text == NULL)
		return;
	if (reach_opt_is(v, 'H', "host") || reach_opt_is(v, 0, "url")) {
		if (v->computed)
			reach_value_dest(sc, prog, v);
		else if (!(v->len > 7 && strncmp(v->text, "unix://", 7) == 0) &&
		         !(v->len > 6 && strncmp(v->text, "npipe:", 6) == 0))
			add_hostish(sc, prog, v->text, v->len, true);
	} else if (reach_opt_is(v, 'c', "context") || reach_opt_is(v, 0, "connection") ||
	           reach_opt_is(v, 0, "remote")) {
		st->hidden = true;
	} else if (reach_opt_is(v, 0, "network") || reach_opt_is(v, 0, "net")) {
		if (v->computed || (v->len == 4 && strncmp(v->text, "host", 4) == 0))
			st->host_net = true;
	} else if (reach_opt_is(v, 0, "entrypoint") && !v->computed) {
		st->entrypoint = v->text;
		st->entrypoint_len = v->len;
	} else if (reach_opt_is(v, 0, "add-host")) {
		const char *colon = memchr(v->text, ':', v->len);

		if (colon != NULL)
			reach_add_dest(sc, prog, colon + 1, v->len - (size_t)(colon + 1 - v->text),
			               0, REACH_NAMED);
	}
}

/* docker/podman/nerdctl [global options] COMMAND [options] [IMAGE|CONTAINER] [CMD...] */
static void container(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	static const char global_val[] = "Hcl";
	static const char global_long[] =
	    "host context config log-level tlscacert tlscert tlskey url connection identity "
	    "root runroot storage-driver";
	/* options of run/create/exec that take a value */
	static const char run_val[] = "acehlmpuvw";
	static const char run_long[] =
	    "add-host attach blkio-weight cap-add cap-drop cgroup-parent cgroupns cidfile cpus "
	    "cpu-shares cpuset-cpus device dns dns-option dns-search entrypoint env env-file "
	    "expose gpus group-add health-cmd hostname init-path ip ip6 ipc isolation label "
	    "label-file link log-driver log-opt mac-address memory memory-swap mount name "
	    "network net network-alias pid platform publish pull restart runtime "
	    "security-opt shm-size stop-signal stop-timeout storage-opt sysctl tmpfs ulimit "
	    "user userns uts volume volumes-from workdir detach-keys";
	struct docker_state st = {0};
	size_t i;

	i = reach_parse_opts(sc, prog, w, n, global_val, global_long, docker_opt, &st, NULL, NULL,
	                     0);
	if (i < n && reach_lit(&w[i])) {
		const struct sh_word *sub = &w[i];
		bool run = reach_weq(sub, "run") || reach_weq(sub, "create");
		bool exec = reach_weq(sub, "exec");

		if (reach_weq(sub, "container") && i + 1 < n) {
			sub = &w[++i];
			run = reach_weq(sub, "run") || reach_weq(sub, "create");
			exec = reach_weq(sub, "exec");
		}
		if (run || exec) {
			/* its options end at the image (run) or the container (exec);
			 * what follows is the command, after the entrypoint if any */
			size_t first =
			    i + reach_parse_opts(sc, prog, w + i, n - i, run_val, run_long,
			                         docker_opt, &st, NULL, NULL, 0);

			if (st.host_net)
				reach_add_opaque(
				    sc, prog,
				    "docker runs a container on this host's network "
				    "(--network host), which runs what its image holds");
			if (first < n && (st.entrypoint != NULL || first + 1 < n)) {
				struct buf b = BUF_INIT;

				if (st.entrypoint != NULL)
					shellquote_append(&b, st.entrypoint, st.entrypoint_len);
				for (size_t k = first + 1; k < n; k++) {
					if (b.len > 0)
						buf_putc(&b, ' ');
					if (reach_lit(&w[k]))
						shellquote_append(&b, w[k].text, w[k].len);
					else
						buf_append(&b, w[k].raw, w[k].raw_len);
				}
				reach_scan_text(sc, buf_str(&b), b.len);
				buf_free(&b);
			}
		} else if (reach_weq(sub, "context") && i + 1 < n) {
			/* docker context create NAME --docker host=ssh://... */
			for (size_t k = i + 1; k < n; k++) {
				const char *p;

				if (reach_lit(&w[k]) &&
				    (p = memmem(w[k].text, w[k].len, "host=", 5)) != NULL)
					add_hostish(sc, prog, p + 5,
					            w[k].len - (size_t)(p + 5 - w[k].text), true);
			}
		}
	}
	if (st.hidden) {
		struct reach *r = reach_add(sc, REACH_HIDDEN, prog);

		if (r != NULL)
			r->dest = xstrdup("the daemon its context or connection names");
	}
}

/* restic -r REPO / --repo REPO: sftp:user@host:/path, rest:URL, s3:host/...;
 * -o sftp.command="ssh ..." is code. */
static void restic_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	bool *hidden = arg;
	const char *t = v->text;

	if (t == NULL)
		return;
	if (reach_opt_is(v, 'r', "repo")) {
		if (v->computed) {
			reach_value_dest(sc, prog, v);
		} else if (v->len > 5 && strncmp(t, "sftp:", 5) == 0) {
			const char *h;
			size_t hl;

			if (reach_remote_operand(t + 5, v->len - 5, &h, &hl))
				add_hostish(sc, prog, h, hl, true);
			else
				add_hostish(sc, prog, t + 5, v->len - 5, true);
		} else if (v->len > 5 && strncmp(t, "rest:", 5) == 0) {
			add_hostish(sc, prog, t + 5, v->len - 5, false);
		} else if (v->len > 3 &&
		           (strncmp(t, "s3:", 3) == 0 || strncmp(t, "rclone:", 7) == 0)) {
			add_hostish(sc, prog, t + 3, v->len - 3, false);
		}
	} else if (reach_opt_is(v, 0, "repository-file") || reach_opt_is(v, 0, "repo-file")) {
		*hidden = true;
	} else if (reach_opt_is(v, 'o', "option")) {
		const char *eq = memchr(t, '=', v->len);

		if (eq != NULL && strncasecmp(t, "sftp.command", 12) == 0)
			reach_scan_text(sc, eq + 1, v->len - (size_t)(eq + 1 - t));
	}
}

static void no_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg)
{
	(void)sc, (void)prog, (void)v, (void)arg;
}

/* borg: repositories are operands (ssh://user@host:port/path, user@host:path,
 * with ::archive); --rsh is code. */
static void borg(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[64];
	size_t nops;

	reach_parse_opts(sc, prog, w, n, "", "rsh remote-path exclude pattern patterns-from",
	                 no_opt, NULL, ops, &nops, 64);
	for (size_t i = 1; i < n; i++)
		if (reach_lit(&w[i]) && w[i].len > 6 && strncmp(w[i].text, "--rsh", 5) == 0) {
			const char *eq = memchr(w[i].text, '=', w[i].len);
			if (eq != NULL)
				reach_scan_text(sc, eq + 1,
				                w[i].len - (size_t)(eq + 1 - w[i].text));
			else if (i + 1 < n && reach_lit(&w[i + 1]))
				reach_scan_text(sc, w[i + 1].text, w[i + 1].len);
		}
	for (size_t k = 0; k < nops; k++) {
		const char *t = ops[k]->text, *h, *dc;
		size_t len = ops[k]->len, hl;

		if (!reach_lit(ops[k]))
			continue;
		if ((dc = memmem(t, len, "::", 2)) != NULL)
			len = (size_t)(dc - t); /* repo::archive */
		if (memmem(t, len, "://", 3) != NULL)
			add_hostish(sc, prog, t, len, true);
		else if (reach_remote_operand(t, len, &h, &hl))
			add_hostish(sc, prog, h, hl, true);
	}
}

/* rclone: remote:path names a remote from its configuration (hidden);
 * :sftp,host=H:path and --sftp-host H name the host. */
static void rclone(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	bool hidden = false;

	for (size_t i = 1; i < n; i++) {
		const char *t = w[i].text, *p;
		size_t len = w[i].len;

		if (!reach_lit(&w[i]))
			continue;
		if ((p = memmem(t, len, "host=", 5)) != NULL) {
			const char *e = p + 5;

			while (e < t + len && *e != ',' && *e != ':')
				e++;
			add_hostish(sc, prog, p + 5, (size_t)(e - p - 5), true);
		} else if (len > 2 && t[0] == '-' && memmem(t, len, "-host", 5) && i + 1 < n &&
		           reach_lit(&w[i + 1])) {
			add_hostish(sc, prog, w[i + 1].text, w[i + 1].len, true);
		} else if (len > 1 && t[0] != '-' && t[0] != '/' && t[0] != '.' &&
		           memchr(t, ':', len) != NULL && t[0] != ':') {
			hidden = true; /* a configured remote */
		}
	}
	if (hidden) {
		struct reach *r = reach_add(sc, REACH_HIDDEN, prog);

		if (r != NULL)
			r->dest = xstrdup("the remotes its configuration names");
	}
}

/* openssl s_client / s_time -connect host:port, -proxy host:port. */
static void openssl(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	if (n < 2 || !reach_lit(&w[1]) ||
	    !(reach_weq(&w[1], "s_client") || reach_weq(&w[1], "s_time")))
		return;
	for (size_t i = 2; i + 1 < n; i++)
		if (reach_weq(&w[i], "-connect") || reach_weq(&w[i], "-proxy") ||
		    reach_weq(&w[i], "-host")) {
			if (!reach_lit(&w[i + 1]))
				reach_add_computed(sc, prog, &w[i + 1]);
			else
				add_hostish(sc, prog, w[i + 1].text, w[i + 1].len, false);
		}
}

/* mount -t nfs|cifs|sshfs|... SOURCE DIR: the source's host. */
static void mount(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	const struct sh_word *ops[8];
	size_t nops;
	struct spec_state st = {.sp = &(struct spec){.dest = "", .code = "", .hidden = ""}};

	reach_parse_opts(sc, prog, w, n, "tOoLUBbMnN", "types options source target", spec_opt, &st,
	                 ops, &nops, 8);
	for (size_t k = 0; k < nops; k++) {
		const char *t = ops[k]->text, *h;
		size_t len = ops[k]->len, hl;

		if (!reach_lit(ops[k]))
			continue;
		if (len > 2 && t[0] == '/' && t[1] == '/')
			spec_operand(sc, prog, &(struct spec){.ops = OP_UNC}, ops[k], k);
		else if (reach_remote_operand(t, len, &h, &hl))
			add_hostish(sc, prog, h, hl, true);
	}
}

/* GNU parallel -S/--sshlogin [user@]host,...; --sshloginfile hides them. */
static bool parallel(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	bool any = false;

	for (size_t i = 1; i < n; i++) {
		const char *t = w[i].text, *v = NULL;
		size_t vl = 0;

		if (!reach_lit(&w[i]))
			continue;
		if ((reach_weq(&w[i], "-S") || reach_weq(&w[i], "--sshlogin") ||
		     reach_weq(&w[i], "--slf") || reach_weq(&w[i], "--sshloginfile")) &&
		    i + 1 < n) {
			if (t[1] == 'S' || strcmp(t, "--sshlogin") == 0) {
				v = w[i + 1].text;
				vl = w[i + 1].len;
			} else {
				struct reach *r = reach_add(sc, REACH_HIDDEN, prog);
				if (r != NULL)
					r->dest = xstrdup("the hosts of its --sshloginfile");
			}
			any = true;
		} else if (w[i].len > 11 && strncmp(t, "--sshlogin=", 11) == 0) {
			v = t + 11;
			vl = w[i].len - 11;
			any = true;
		}
		for (size_t p = 0; v != NULL && p < vl;) {
			size_t e = p;

			while (e < vl && v[e] != ',')
				e++;
			/* N/host, : (local) */
			{
				const char *s = v + p, *sl = memchr(s, '/', e - p);
				size_t l = e - p;

				if (sl != NULL) {
					l -= (size_t)(sl + 1 - s);
					s = sl + 1;
				}
				if (!(l == 1 && s[0] == ':') && l > 0)
					add_hostish(sc, prog, s, l, true);
			}
			p = e + 1;
		}
	}
	return any;
}

/* PuTTY's plink, pscp, psftp: single-dash options, some with values;
 * -load names a saved session (hidden), -proxycmd is code, -J and -nc name
 * hosts; plink's and psftp's first operand is the host, pscp's host:path. */
static void putty(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n)
{
	static const char valued[] =
	    "-l -P -i -m -L -R -D -pw -pwfile -hostkey -sshlog -sshrawlog -loghost -sercfg -serial "
	    "-proxycmd -load -J -nc -b -be -bc";
	bool pscp = strcmp(prog, "pscp") == 0, host_done = false;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *x = &w[i];
		const char *h;
		size_t hl;

		if (reach_lit(x) && x->len > 1 && x->text[0] == '-') {
			if (!word_in(valued, x->text, x->len) || i + 1 >= n)
				continue;
			i++;
			if (reach_weq(x, "-load")) {
				struct reach *r = reach_add(sc, REACH_HIDDEN, prog);
				if (r != NULL)
					r->dest = xstrdup("the host its saved session names");
			} else if (reach_weq(x, "-proxycmd") && reach_lit(&w[i])) {
				reach_scan_text(sc, w[i].text, w[i].len);
			} else if (reach_weq(x, "-J") || reach_weq(x, "-nc")) {
				if (!reach_lit(&w[i]))
					reach_add_computed(sc, prog, &w[i]);
				else
					add_hostish(sc, prog, w[i].text, w[i].len, false);
			}
			continue;
		}
		if (!reach_lit(x)) {
			if (!host_done || pscp)
				reach_add_computed(sc, prog, x);
			host_done = true;
			continue;
		}
		if (pscp) {
			if (reach_remote_operand(x->text, x->len, &h, &hl))
				add_hostish(sc, prog, h, hl, false);
		} else if (!host_done) {
			add_hostish(sc, prog, x->text, x->len, false);
			host_done = true;
		}
	}
}

/* ---------------------------------------------------------------- dispatch */

static const char *const containers[] = {"docker", "podman", "nerdctl", NULL};

bool reach_more_known(const char *name)
{
	for (size_t i = 0; containers[i]; i++)
		if (strcmp(name, containers[i]) == 0)
			return true;
	return spec_of(name) != NULL || strcmp(name, "restic") == 0 || strcmp(name, "borg") == 0 ||
	       strcmp(name, "plink") == 0 || strcmp(name, "putty") == 0 ||
	       strcmp(name, "pscp") == 0 || strcmp(name, "psftp") == 0 ||
	       strcmp(name, "rclone") == 0 || strcmp(name, "openssl") == 0 ||
	       strcmp(name, "mount") == 0;
}

bool reach_more_program(struct reach_ctx *sc, const char *name, const struct sh_word *w, size_t n,
                        bool extra)
{
	const struct spec *sp;

	for (size_t i = 0; containers[i]; i++)
		if (strcmp(name, containers[i]) == 0) {
			container(sc, name, w, n);
			return true;
		}
	if (strcmp(name, "terraform") == 0 || strcmp(name, "tofu") == 0 ||
	    strcmp(name, "terragrunt") == 0 || strcmp(name, "pulumi") == 0) {
		provisioner(sc, name, w, n);
		return true;
	}
	if (strcmp(name, "restic") == 0) {
		bool hidden = false;

		reach_parse_opts(sc, name, w, n, "rop",
		                 "repo repository-file repo-file option "
		                 "password-file password-command",
		                 restic_opt, &hidden, NULL, NULL, 0);
		if (hidden) {
			struct reach *r = reach_add(sc, REACH_HIDDEN, name);
			if (r != NULL)
				r->dest = xstrdup("the repository its file names");
		}
		return true;
	}
	if (strcmp(name, "borg") == 0) {
		borg(sc, name, w, n);
		return true;
	}
	if (strcmp(name, "plink") == 0 || strcmp(name, "putty") == 0 || strcmp(name, "pscp") == 0 ||
	    strcmp(name, "psftp") == 0) {
		putty(sc, name, w, n);
		if (extra)
			reach_add_computed(sc, name, &w[0]);
		return true;
	}
	if (strcmp(name, "rclone") == 0) {
		rclone(sc, name, w, n);
		return true;
	}
	if (strcmp(name, "openssl") == 0) {
		openssl(sc, name, w, n);
		return true;
	}
	if (strcmp(name, "mount") == 0) {
		mount(sc, name, w, n);
		return true;
	}
	if (strcmp(name, "parallel") == 0 && parallel(sc, name, w, n))
		return false; /* its command is still read as a runner's */
	if ((sp = spec_of(name)) != NULL) {
		run_spec(sc, name, sp, w, n);
		if (extra)
			reach_add_computed(sc, name, &w[0]);
		return true;
	}
	return false;
}

/* ---------------------------------------------------------------- NAME=value */

/* Environment variables that tell a program where to go or what to run. */
static const struct {
	const char *name;
	enum { ENV_CODE, ENV_DEST, ENV_REPO } kind;
	bool ssh;
} env_vars[] = {
    {"GIT_SSH_COMMAND", ENV_CODE, false},   {"GIT_SSH", ENV_CODE, false},
    {"GIT_PROXY_COMMAND", ENV_CODE, false}, {"RSYNC_RSH", ENV_CODE, false},
    {"BORG_RSH", ENV_CODE, false},          {"SVN_SSH", ENV_CODE, false},
    {"CVS_RSH", ENV_CODE, false},           {"DOCKER_HOST", ENV_DEST, true},
    {"CONTAINER_HOST", ENV_DEST, true},     {"RESTIC_REPOSITORY", ENV_REPO, true},
    {"BORG_REPO", ENV_REPO, true},          {"http_proxy", ENV_DEST, false},
    {"https_proxy", ENV_DEST, false},       {"HTTP_PROXY", ENV_DEST, false},
    {"HTTPS_PROXY", ENV_DEST, false},       {"ALL_PROXY", ENV_DEST, false},
    {"all_proxy", ENV_DEST, false},         {"PROXMOX_URL", ENV_DEST, false},
    {"PM_API_URL", ENV_DEST, false},        {"PROXMOX_VE_ENDPOINT", ENV_DEST, false},
    {"PROXMOX_HOST", ENV_DEST, false},      {"PVE_HOST", ENV_DEST, false},
};

void reach_env_assignments(struct reach_ctx *sc, const char *command, size_t len)
{
	for (size_t v = 0; v < sizeof(env_vars) / sizeof(env_vars[0]); v++) {
		size_t nl = strlen(env_vars[v].name);
		const char *p = command, *end = command + len;

		while ((p = memmem(p, (size_t)(end - p), env_vars[v].name, nl)) != NULL) {
			const char *val = p + nl, *ve;
			char q = 0;
			char buf[1024];
			size_t bl = 0;

			if ((p > command && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
			    val >= end || *val != '=') {
				p += nl;
				continue;
			}
			val++;
			if (val < end && (*val == '\'' || *val == '"'))
				q = *val++;
			for (ve = val; ve < end; ve++) {
				if (q ? *ve == q
				      : (*ve == ' ' || *ve == '\t' || *ve == ';' || *ve == '\n' ||
				         *ve == '&' || *ve == '|'))
					break;
				if (bl + 1 < sizeof(buf))
					buf[bl++] = *ve;
			}
			buf[bl] = '\0';
			p = ve;
			if (bl == 0)
				continue;
			if (memchr(buf, '$', bl) != NULL || memchr(buf, '`', bl) != NULL) {
				struct reach *r = reach_add(sc, REACH_COMPUTED, env_vars[v].name);
				if (r != NULL)
					r->dest = xstrndup(buf, bl > 80 ? 80 : bl);
				continue;
			}
			switch (env_vars[v].kind) {
			case ENV_CODE:
				reach_scan_text(sc, buf, bl);
				break;
			case ENV_DEST:
				if (strncmp(buf, "unix://", 7) != 0)
					add_hostish(sc, env_vars[v].name, buf, bl, env_vars[v].ssh);
				break;
			case ENV_REPO: {
				const char *s = buf, *h;
				size_t sl = bl, hl;

				if (strncmp(s, "sftp:", 5) == 0)
					s += 5, sl -= 5;
				if (memmem(s, sl, "://", 3) != NULL)
					add_hostish(sc, env_vars[v].name, s, sl, true);
				else if (reach_remote_operand(s, sl, &h, &hl))
					add_hostish(sc, env_vars[v].name, h, hl, true);
			} break;
			}
		}
	}
}
