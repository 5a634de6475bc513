/* airlock-jail -- runs one command on a target in a jail that makes its
 * verdict true: a misjudged command may fail, never act.
 *
 *   airlock-jail -t user|root|write [-n] [-d MS] [-m BYTES] [-p TASKS] [-c PERCENT]
 *                [-s BYTES] [-S GLOB]... [-w PATH]... -- COMMAND
 *
 * It is airlock's security boundary on every target: one C file, no
 * dependencies beyond the C library, built statically (docs/transport.md,
 * "The jail").  airlockd copies it to each target and checks its SHA-256
 * before every run.  It must be started as root (uid 0 with the target's
 * capabilities: a login on a node, `pct exec`, the guest agent).
 *
 * Processes, from the outside in:
 *
 *   supervisor  stays in the target's namespaces, as root.  Puts the rest in
 *               a cgroup of its own (v2, else v1 memory/pids/cpu), then
 *               waits for the first of: the command's end, the deadline (-d),
 *               SIGTERM/SIGINT/SIGHUP (the transport's kill), the reader of
 *               its stdout or stderr gone (sshd or the guest agent died).  Then
 *               it kills the pid namespace (its init), so nothing of the
 *               request survives, and names a limit that stopped the command.
 *   init        pid 1 of new user (identity-mapped), mount, pid, ipc, uts and
 *               (unless -n) network namespaces.  Builds the jail's mounts,
 *               starts the command, reaps, and reports the command's status
 *               to the supervisor; its exit kills every process left in the
 *               namespace.  PR_SET_PDEATHSIG: it dies with the supervisor.
 *   command     drops privileges for good, writes the ready line on stderr,
 *               execs COMMAND under the one shell (transport/shell.h).
 *
 * Tiers: user (a uid of its own, unique while it runs, no capabilities, the
 * log groups adm and systemd-journal), root (uid 0, no capabilities,
 * securebits locked), write (as root, with the -w paths writable: a
 * reversible_low verdict's claim).
 *
 * stderr: "airlock-jail: ready <tier> <facts>" just before the command
 * starts; or "airlock-jail: cannot confine: <why>" and exit 125 when the jail
 * could not be built as asked (the command never started); after the command,
 * "airlock-jail: <how it was stopped>" when the jail stopped it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transport/shell.h" /* SHELL_PATH, SHELL_EXEC_WORDS, SHELL_TAG_NAME: macros only */

/* The kernel's ABI constants this file needs (no kernel headers: musl builds
 * it without them). */
#define CAP_V3 0x20080522
struct cap_header {
	uint32_t version;
	int pid;
};
struct cap_data {
	uint32_t effective, permitted, inheritable;
};
#define SECBIT_NOROOT                      (1 << 0)
#define SECBIT_NOROOT_LOCKED               (1 << 1)
#define SECBIT_NO_SETUID_FIXUP             (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED      (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED            (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE        (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)

#ifndef JAIL_DIR
#define JAIL_DIR "/var/lib/airlock/jail"
#endif

#define MAX_SECRETS 256
#define MAX_WRITES  64
#define MAX_COVERS  4096
#define ARG_MAX_LEN 4096

enum tier { TIER_USER, TIER_ROOT, TIER_WRITE };

struct jopts {
	enum tier tier;
	bool net_view;
	long long deadline_ms; /* 0: none */
	long long mem;         /* bytes */
	long tasks;
	int cpu_pct;
	long long scratch; /* bytes per tmpfs */
	const char *secrets[MAX_SECRETS];
	int nsecrets;
	const char *writes[MAX_WRITES];
	int nwrites;
	const char *command;
};

/* ---- the argument parser (tests/fuzz/jailargs_fuzz.c) ------------------- */

static int parse_num(const char *s, long long lo, long long hi, long long *out)
{
	long long v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (hi - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v < lo)
		return -1;
	*out = v;
	return 0;
}

/* An absolute, normalised path: no "//", no "." or ".." part, no NUL-less
 * surprises; a trailing '/' only when trail is allowed ("dir/"). */
static bool path_ok(const char *p, bool trail, bool glob_chars)
{
	size_t n = strlen(p);

	if (n < 2 || n >= PATH_MAX || p[0] != '/')
		return false;
	if (p[n - 1] == '/' && !trail)
		return false;
	for (const char *s = p; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x21 || c == 0x7f || c == '\\' || c == '\'' || c == '"')
			return false;
		if (!glob_chars && (c == '*' || c == '?' || c == '['))
			return false;
		if (c == '/' && (s[1] == '/' || (s[1] == '.' && (s[2] == '/' || s[2] == '\0')) ||
		                 (s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == '\0'))))
			return false;
	}
	return true;
}

/* Is p equal to or below dir (both normalised, dir without a trailing /)? */
static bool path_within(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Paths a write set may never name: the kernel's views and the jail's own
 * home. */
static const char *const no_write[] = {"/proc", "/sys", "/dev", JAIL_DIR};

int jail_parse_args(int argc, char **argv, struct jopts *o, char *err, size_t errlen);
int jail_parse_args(int argc, char **argv, struct jopts *o, char *err, size_t errlen)
{
	long long v;
	int i;
	bool tier = false;

	memset(o, 0, sizeof(*o));
	o->mem = 512LL << 20;
	o->tasks = 256;
	o->cpu_pct = 100;
	o->scratch = 64LL << 20;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0' || a[2] != '\0') {
			snprintf(err, errlen, "unknown argument `%.64s`", a);
			return -1;
		}
		if (a[1] == 'n') {
			o->net_view = true;
			continue;
		}
		if (val == NULL) {
			snprintf(err, errlen, "option -%c needs a value", a[1]);
			return -1;
		}
		if (strlen(val) > ARG_MAX_LEN) {
			snprintf(err, errlen, "the value of -%c is too long", a[1]);
			return -1;
		}
		i++;
		switch (a[1]) {
		case 't':
			if (strcmp(val, "user") == 0)
				o->tier = TIER_USER;
			else if (strcmp(val, "root") == 0)
				o->tier = TIER_ROOT;
			else if (strcmp(val, "write") == 0)
				o->tier = TIER_WRITE;
			else {
				snprintf(err, errlen, "tier `%.32s` is not user, root or write",
				         val);
				return -1;
			}
			tier = true;
			break;
		case 'd':
			if (parse_num(val, 1, 7LL * 86400 * 1000, &v) < 0)
				goto bad;
			o->deadline_ms = v;
			break;
		case 'm':
			if (parse_num(val, 1 << 20, 1LL << 50, &v) < 0)
				goto bad;
			o->mem = v;
			break;
		case 'p':
			if (parse_num(val, 1, 1 << 22, &v) < 0)
				goto bad;
			o->tasks = (long)v;
			break;
		case 'c':
			if (parse_num(val, 1, 100000, &v) < 0)
				goto bad;
			o->cpu_pct = (int)v;
			break;
		case 's':
			if (parse_num(val, 1 << 20, 1LL << 40, &v) < 0)
				goto bad;
			o->scratch = v;
			break;
		case 'S':
			if (!path_ok(val, false, true)) {
				snprintf(err, errlen,
				         "secret store `%.200s` is not an absolute path or glob",
				         val);
				return -1;
			}
			if (o->nsecrets == MAX_SECRETS) {
				snprintf(err, errlen, "more than %d secret stores", MAX_SECRETS);
				return -1;
			}
			o->secrets[o->nsecrets++] = val;
			break;
		case 'w':
			if (!path_ok(val, true, false)) {
				snprintf(err, errlen,
				         "write path `%.200s` is not an absolute, normalised path "
				         "without "
				         "glob characters",
				         val);
				return -1;
			}
			for (size_t k = 0; k < sizeof(no_write) / sizeof(no_write[0]); k++)
				if (path_within(val, no_write[k]) ||
				    path_within(no_write[k], val)) {
					snprintf(err, errlen, "write path `%.200s` overlaps %s",
					         val, no_write[k]);
					return -1;
				}
			if (strcmp(val, "/") == 0) {
				snprintf(err, errlen,
				         "write path / would make everything writable");
				return -1;
			}
			if (o->nwrites == MAX_WRITES) {
				snprintf(err, errlen, "more than %d write paths", MAX_WRITES);
				return -1;
			}
			o->writes[o->nwrites++] = val;
			break;
		default:
			snprintf(err, errlen, "unknown option -%c", a[1]);
			return -1;
		}
		continue;
	bad:
		snprintf(err, errlen, "option -%c: `%.32s` is not a number in range", a[1], val);
		return -1;
	}
	if (!tier) {
		snprintf(err, errlen, "no tier (-t user|root|write)");
		return -1;
	}
	if (i != argc - 1) {
		snprintf(err, errlen, "expected exactly one command after --");
		return -1;
	}
	o->command = argv[i];
	if (o->nwrites > 0 && o->tier != TIER_WRITE) {
		snprintf(err, errlen, "write paths (-w) are for the write tier only");
		return -1;
	}
	for (int w = 0; w < o->nwrites; w++)
		for (int s = 0; s < o->nsecrets; s++)
			if (strpbrk(o->secrets[s], "*?[") == NULL &&
			    (path_within(o->writes[w], o->secrets[s]) ||
			     path_within(o->secrets[s], o->writes[w]))) {
				snprintf(err, errlen,
				         "write path `%.200s` overlaps the secret store %.200s",
				         o->writes[w], o->secrets[s]);
				return -1;
			}
	return 0;
}

#ifndef AIRLOCK_JAIL_NO_MAIN

/* ---- small helpers ----------------------------------------------------------- */

static const char *tier_name[] = {"user", "root", "write"};

static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	memcpy(line, "airlock-jail: ", 14);
	va_start(ap, fmt);
	n = vsnprintf(line + 14, sizeof(line) - 15, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	n = 14 + (n > (int)sizeof(line) - 16 ? (int)sizeof(line) - 16 : n);
	line[n++] = '\n';
	if (write(2, line, (size_t)n) < 0) {
		/* nobody to tell */
	}
}

static _Noreturn void refuse(const char *fmt, ...)
{
	char why[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	say("cannot confine: %s", why);
	_exit(125);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	while ((size_t)got + 1 < len && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- mount_setattr, where the kernel has it (5.12+) ------------------------- */

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
struct jail_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};
#define JA_RDONLY 0x1
#define JA_NOSUID 0x2
#define JA_NODEV  0x4
#define JA_NOEXEC 0x8

static int setattr(const char *path, bool recursive, uint64_t set, uint64_t clr)
{
	struct jail_mount_attr a = {set, clr, 0, 0};
	return (int)syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a,
	                    sizeof(a));
}

/* The mount table, as /proc/self/mountinfo has it: mount points (octal
 * escapes decoded) and whether each is read-only. */
struct mnt {
	char *path;
	bool ro;
};

static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

static size_t mounts_read(struct mnt **out)
{
	static char buf[1 << 20];
	size_t n = 0, cap = 64;
	struct mnt *m = malloc(cap * sizeof(*m));
	char *line, *save = NULL;

	if (m == NULL || read_file("/proc/self/mountinfo", buf, sizeof(buf)) < 0)
		refuse("cannot read /proc/self/mountinfo: %s", strerror(errno));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[6] = {0}, *p = line;
		for (int k = 0; k < 6 && p; k++) {
			f[k] = p;
			p = strchr(p, ' ');
			if (p)
				*p++ = '\0';
		}
		if (f[5] == NULL)
			continue;
		if (n == cap && (m = realloc(m, (cap *= 2) * sizeof(*m))) == NULL)
			refuse("out of memory");
		unescape(f[4]);
		m[n].path = strdup(f[4]);
		m[n].ro = strncmp(f[5], "ro", 2) == 0 && (f[5][2] == ',' || f[5][2] == '\0');
		n++;
	}
	*out = m;
	return n;
}

/* Every mount read-only, nosuid, nodev; flags a container locked (noexec,
 * atime) are kept.  One call where the kernel has mount_setattr; otherwise a
 * bind remount of each mount, its own flags kept. */
static void all_read_only(void)
{
	struct mnt *m;
	size_t n;

	if (setattr("/", true, JA_RDONLY | JA_NOSUID | JA_NODEV, 0) == 0)
		return;
	if (errno != ENOSYS)
		refuse("read-only remount of every mount: %s", strerror(errno));
	n = mounts_read(&m);
	for (size_t i = 0; i < n; i++) {
		struct statvfs sv;
		unsigned long fl = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;
		if (statvfs(m[i].path, &sv) != 0)
			continue; /* hidden by a later mount: no path reaches it */
		if (sv.f_flag & ST_NOEXEC)
			fl |= MS_NOEXEC;
		if (sv.f_flag & ST_NOATIME)
			fl |= MS_NOATIME;
		if (sv.f_flag & ST_NODIRATIME)
			fl |= MS_NODIRATIME;
		if (sv.f_flag & ST_RELATIME)
			fl |= MS_RELATIME;
		if (mount(NULL, m[i].path, NULL, fl, NULL) != 0 && errno != ENOENT &&
		    errno != EACCES)
			refuse("read-only remount of %s: %s", m[i].path, strerror(errno));
	}
}

/* ---- the jail's mounts --------------------------------------------------------- */

struct plan {
	char *covers[MAX_COVERS]; /* existing secret store matches, sorted */
	int ncovers;
	char *sockets[MAX_COVERS];
	int nsockets;
	char *writable[MAX_WRITES + 8]; /* mount points allowed to stay writable */
	int nwritable;
	int wfd[MAX_WRITES]; /* each write path, opened (O_PATH) before any mount */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Under a place the jail replaces anyway (its /tmp, /dev): no cover needed. */
static bool replaced(const char *p)
{
	return path_within(p, "/tmp") || path_within(p, "/var/tmp") || path_within(p, "/dev");
}

static void plan_secrets(const struct jopts *o, struct plan *pl)
{
	for (int i = 0; i < o->nsecrets; i++) {
		glob_t g;
		int rc = glob(o->secrets[i], GLOB_NOSORT, NULL, &g);
		if (rc == GLOB_NOMATCH)
			continue;
		if (rc != 0)
			refuse("expanding the secret store %s failed", o->secrets[i]);
		for (size_t k = 0; k < g.gl_pathc; k++) {
			char real[PATH_MAX];
			/* A link is covered where it leads (a mount follows it). */
			if (realpath(g.gl_pathv[k], real) == NULL || replaced(real))
				continue;
			if (pl->ncovers == MAX_COVERS)
				refuse("more than %d secret store matches", MAX_COVERS);
			pl->covers[pl->ncovers++] = strdup(real);
		}
		globfree(&g);
	}
	qsort(pl->covers, (size_t)pl->ncovers, sizeof(char *), cmp_str);
}

/* Every pathname socket below dir (however deep; mount points too). */
static void find_sockets(struct plan *pl, const char *dir, int depth)
{
	DIR *d;
	struct dirent *e;

	if (depth > 32 || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p))
			continue;
		if (e->d_type == DT_SOCK) {
			if (pl->nsockets == MAX_COVERS)
				refuse("more than %d sockets under %s", MAX_COVERS, dir);
			pl->sockets[pl->nsockets++] = strdup(p);
		} else if (e->d_type == DT_DIR) {
			find_sockets(pl, p, depth + 1);
		} else if (e->d_type == DT_UNKNOWN) {
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISSOCK(st.st_mode))
				pl->sockets[pl->nsockets++] = strdup(p);
			else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				find_sockets(pl, p, depth + 1);
		}
		if (pl->nsockets == MAX_COVERS)
			break;
	}
	closedir(d);
}

static void bind_at(const char *src, const char *dst, bool rec)
{
	if (mount(src, dst, NULL, MS_BIND | (rec ? MS_REC : 0), NULL) != 0)
		refuse("bind %s on %s: %s", src, dst, strerror(errno));
}

static void make_file(const char *p, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		refuse("create %s: %s", p, strerror(errno));
	close(fd);
}

#define STAGE "/tmp/.airlock-jail"

static void write_path(const struct jopts *o, int i, char *p, size_t len, bool *dir)
{
	size_t n = strlen(o->writes[i]);

	*dir = o->writes[i][n - 1] == '/';
	snprintf(p, len, "%.*s", (int)(*dir ? n - 1 : n), o->writes[i]);
}

/* The write set, checked before anything is read-only: no symbolic link on
 * the way (it would lead the write elsewhere), a missing file created empty
 * and a missing "dir/" created (the verdict says the command creates them),
 * nothing that overlaps a secret store. */
static void write_prepare(const struct jopts *o, struct plan *pl)
{
	for (int i = 0; i < o->nwrites; i++) {
		char p[PATH_MAX], real[PATH_MAX], parent[PATH_MAX];
		struct stat st;
		bool dir;

		write_path(o, i, p, sizeof(p), &dir);
		if (lstat(p, &st) != 0) {
			char *slash;
			if (errno != ENOENT)
				refuse("write path %s: %s", p, strerror(errno));
			snprintf(parent, sizeof(parent), "%s", p);
			slash = strrchr(parent, '/');
			*(slash == parent ? slash + 1 : slash) = '\0';
			if (realpath(parent, real) == NULL || strcmp(real, parent) != 0)
				refuse(
				    "write path %s: its folder %s is missing or reached through a "
				    "symbolic link",
				    p, parent);
			if (dir && mkdir(p, 0755) != 0)
				refuse("write path %s: %s", p, strerror(errno));
			if (!dir)
				make_file(p, 0644);
		} else if (realpath(p, real) == NULL || strcmp(real, p) != 0) {
			refuse("write path %s is reached through a symbolic link", p);
		} else if (dir != S_ISDIR(st.st_mode)) {
			refuse("write path %s: the verdict says %s, the target has %s",
			       o->writes[i], dir ? "a folder" : "a file",
			       S_ISDIR(st.st_mode) ? "a folder" : "a file");
		}
		for (int c = 0; c < pl->ncovers; c++)
			if (path_within(p, pl->covers[c]) || path_within(pl->covers[c], p))
				refuse("write path %s overlaps the secret store %s", p,
				       pl->covers[c]);
		/* Held open from here: what is bound is what was checked, even where
		 * the private /tmp and /var/tmp will cover the path. */
		pl->wfd[i] = open(p, O_PATH | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
		if (pl->wfd[i] < 0)
			refuse("write path %s: %s", p, strerror(errno));
	}
}

/* A mount point for a write path under the private /tmp or /var/tmp: its
 * folders and the file or folder itself, created in the fresh tmpfs. */
static void make_mountpoint(const char *p, bool dir)
{
	char q[PATH_MAX];

	snprintf(q, sizeof(q), "%s", p);
	for (char *s = strchr(q + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(q, 0755) != 0 && errno != EEXIST)
			refuse("write path %s: mkdir %s: %s", p, q, strerror(errno));
		*s = '/';
	}
	if (dir ? mkdir(q, 0755) != 0 && errno != EEXIST : access(q, F_OK) != 0) {
		if (dir)
			refuse("write path %s: %s", p, strerror(errno));
		make_file(q, 0644);
	}
}

/* Each write path bound onto itself and made writable again (the rest stays
 * read-only). */
static void write_binds(const struct jopts *o, struct plan *pl)
{
	for (int i = 0; i < o->nwrites; i++) {
		char p[PATH_MAX];
		bool dir;

		char src[64];

		write_path(o, i, p, sizeof(p), &dir);
		if (path_within(p, "/tmp") || path_within(p, "/var/tmp"))
			make_mountpoint(p, dir);
		snprintf(src, sizeof(src), "/proc/self/fd/%d", pl->wfd[i]);
		bind_at(src, p, true);
		close(pl->wfd[i]);
		if (setattr(p, false, 0, JA_RDONLY) != 0 &&
		    (errno != ENOSYS ||
		     mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, NULL) != 0))
			refuse("write path %s cannot be made writable: %s", p, strerror(errno));
		pl->writable[pl->nwritable++] = strdup(p);
	}
}

static void fs_at(const char *name, const char *type, const char *where, const char *opts,
                  unsigned long flags)
{
	if (mount(name, where, type, MS_NOSUID | MS_NODEV | flags, opts) != 0)
		refuse("%s on %s: %s", type, where, strerror(errno));
}

static void tmpfs(const char *where, const char *opts, unsigned long flags)
{
	fs_at("airlock-tmp", "tmpfs", where, opts, flags);
}

static void build_mounts(const struct jopts *o, struct plan *pl)
{
	static const char *const devs[] = {"null",    "zero", "full", "random",
	                                   "urandom", "tty",  "zfs"};
	static const char *const links[][2] = {{"fd", "/proc/self/fd"},
	                                       {"stdin", "/proc/self/fd/0"},
	                                       {"stdout", "/proc/self/fd/1"},
	                                       {"stderr", "/proc/self/fd/2"}};
	char opts[96], p[PATH_MAX];

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		refuse("private mounts: %s", strerror(errno));
	plan_secrets(o, pl);
	find_sockets(pl, "/run", 0);
	if (!is_dir("/var/run") || !path_within("/var/run", "/run"))
		find_sockets(pl, "/var/run", 0);
	find_sockets(pl, "/var/spool", 0);
	write_prepare(o, pl);
	all_read_only();

	/* A private /tmp, /var/tmp, /dev/shm: empty, bounded, gone with the command. */
	snprintf(opts, sizeof(opts), "size=%lldk,mode=1777", o->scratch >> 10);
	tmpfs("/tmp", opts, 0);
	pl->writable[pl->nwritable++] = "/tmp";
	if (is_dir("/var/tmp")) {
		tmpfs("/var/tmp", opts, 0);
		pl->writable[pl->nwritable++] = "/var/tmp";
	}
	/* The claim: real paths of the target, /tmp's and /var/tmp's too. */
	write_binds(o, pl);
	/* The staging place: an empty file and folder for the covers, the new /dev. */
	if (mkdir(STAGE, 0700) != 0)
		refuse("mkdir %s: %s", STAGE, strerror(errno));
	/* ramfs: it reports no blocks, so df leaves the covers out as it does
	 * other pseudo file systems. */
	fs_at("airlock-cover", "ramfs", STAGE, "mode=0755", MS_NOEXEC);
	make_file(STAGE "/empty", 0444);
	if (mkdir(STAGE "/emptydir", 0555) != 0)
		refuse("mkdir in %s: %s", STAGE, strerror(errno));
	if (mkdir(STAGE "/dev", 0755) != 0)
		refuse("mkdir in %s: %s", STAGE, strerror(errno));
	fs_at("airlock-dev", "tmpfs", STAGE "/dev", "size=64k,mode=0755", MS_NOEXEC);
	if (mount(NULL, STAGE, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          "mode=0755") != 0)
		refuse("read-only staging: %s", strerror(errno));

	/* /dev: a tmpfs with only harmless devices, bound from the old one
	 * (mounted above before the staging place became read-only). */
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		struct stat st;
		char src[64];
		snprintf(src, sizeof(src), "/dev/%s", devs[i]);
		if (stat(src, &st) != 0 || !S_ISCHR(st.st_mode))
			continue;
		snprintf(p, sizeof(p), STAGE "/dev/%s", devs[i]);
		make_file(p, 0666);
		bind_at(src, p, false);
		if (setattr(p, false, JA_NOSUID | JA_NOEXEC, JA_NODEV) != 0 &&
		    (errno != ENOSYS ||
		     mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC,
		           NULL) != 0))
			refuse("/dev/%s: %s", devs[i], strerror(errno));
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(p, sizeof(p), STAGE "/dev/%s", links[i][0]);
		if (symlink(links[i][1], p) != 0)
			refuse("/dev/%s: %s", links[i][0], strerror(errno));
	}
	if (mkdir(STAGE "/dev/shm", 01777) != 0 || mkdir(STAGE "/dev/pts", 0755) != 0)
		refuse("/dev/shm: %s", strerror(errno));
	tmpfs(STAGE "/dev/shm", opts, MS_NOEXEC);
	if (mount(NULL, STAGE "/dev", NULL,
	          MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
	          "size=64k,mode=0755") != 0)
		refuse("read-only /dev: %s", strerror(errno));
	if (mount(STAGE "/dev", "/dev", NULL, MS_MOVE, NULL) != 0)
		refuse("/dev: %s", strerror(errno));
	pl->writable[pl->nwritable++] = "/dev/shm";

	/* Daemons' pathname sockets: covered, so none can be asked to act.  The
	 * user tier keeps the D-Bus system bus (systemctl status): its daemon
	 * and polkit refuse an unprivileged caller every change. */
	for (int i = 0; i < pl->nsockets; i++) {
		const char *s = pl->sockets[i];
		if (o->tier == TIER_USER && (strcmp(s, "/run/dbus/system_bus_socket") == 0 ||
		                             strcmp(s, "/var/run/dbus/system_bus_socket") == 0))
			continue;
		if (mount(STAGE "/empty", s, NULL, MS_BIND, NULL) != 0 && errno != ENOENT)
			refuse("covering the socket %s: %s", s, strerror(errno));
	}
	/* Secret stores: an empty read-only file or folder over each match. */
	for (int i = 0; i < pl->ncovers; i++) {
		const char *c = pl->covers[i];
		if (i > 0 && path_within(c, pl->covers[i - 1]) && is_dir(pl->covers[i - 1]))
			continue; /* inside a folder covered already */
		if (mount(is_dir(c) ? STAGE "/emptydir" : STAGE "/empty", c, NULL, MS_BIND, NULL) !=
		        0 &&
		    errno != ENOENT)
			refuse("covering the secret store %s: %s", c, strerror(errno));
	}
	if (umount2(STAGE, MNT_DETACH) != 0 || rmdir(STAGE) != 0)
		refuse("%s: %s", STAGE, strerror(errno));
}

/* Nothing writable is left but what the jail made so: every mount that a
 * path still reaches is read-only, or one of pl->writable. */
static void verify_mounts(struct plan *pl)
{
	struct mnt *m;
	size_t n = mounts_read(&m);

	for (size_t i = 0; i < n; i++) {
		bool ok = m[i].ro;
		for (int w = 0; !ok && w < pl->nwritable; w++)
			ok = strcmp(m[i].path, pl->writable[w]) == 0;
		/* A later mount on the same place or above it hides this one. */
		for (size_t k = i + 1; !ok && k < n; k++)
			ok = path_within(m[i].path, m[k].path);
		if (!ok)
			refuse("%s is still writable", m[i].path);
	}
}

/* The network namespace's loopback, up: a command may talk to itself. */
static void loopback_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		refuse("loopback: %s", strerror(errno));
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		refuse("loopback up: %s", strerror(errno));
	close(fd);
}

/* ---- identity ------------------------------------------------------------------- */

/* gid of a group by name from /etc/group, or -1. */
static long group_gid(const char *name)
{
	static char buf[1 << 16];
	size_t n = strlen(name);

	if (read_file("/etc/group", buf, sizeof(buf)) < 0)
		return -1;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, name, n) == 0 && l[n] == ':') {
			char *c = strchr(l + n + 1, ':');
			return c ? strtol(c + 1, NULL, 10) : -1;
		}
	}
	return -1;
}

static bool passwd_has_uid(unsigned long uid)
{
	static char buf[1 << 17];
	char want[32];

	if (read_file("/etc/passwd", buf, sizeof(buf)) < 0)
		return false;
	snprintf(want, sizeof(want), ":%lu:", uid);
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *c = strchr(l, ':');
		if (c && (c = strchr(c + 1, ':')) && strncmp(c, want, strlen(want)) == 0)
			return true;
	}
	return false;
}

/* The ids mapped into the supervisor's own user namespace (the target's:
 * all of them on a host or VM, 0..65535 in an unprivileged container). */
struct idmap {
	unsigned long first[8], count[8];
	int n;
};

static void idmap_read(const char *path, struct idmap *m)
{
	char buf[1024], *l, *save = NULL;

	m->n = 0;
	if (read_file(path, buf, sizeof(buf)) < 0)
		refuse("cannot read %s: %s", path, strerror(errno));
	for (l = strtok_r(buf, "\n", &save); l && m->n < 8; l = strtok_r(NULL, "\n", &save)) {
		unsigned long in, out, cnt;
		if (sscanf(l, "%lu %lu %lu", &in, &out, &cnt) == 3) {
			m->first[m->n] = in;
			m->count[m->n++] = cnt;
		}
	}
}

static bool idmap_has(const struct idmap *m, unsigned long id)
{
	for (int i = 0; i < m->n; i++)
		if (id >= m->first[i] && id - m->first[i] < m->count[i])
			return true;
	return false;
}

/* The user tier's uid: unique on the target while the request runs, used by
 * no account.  0x60000000 + the supervisor's pid where the namespace maps it
 * (pids are unique while the supervisor lives); in a namespace that maps
 * fewer ids (an unprivileged container: 0..65535), a free one of
 * 40000..59999, held for as long as the supervisor lives by an abstract unix
 * socket named after it (one name per network namespace: the target's, where
 * the supervisor stays; no file is written). */
static unsigned long pick_uid(const struct idmap *m, int *lockfd)
{
	unsigned long base = 0x60000000UL + (unsigned long)getpid();

	*lockfd = -1;
	if (idmap_has(m, base) && !passwd_has_uid(base))
		return base;
	for (unsigned long k = 0; k < 20000; k++) {
		unsigned long uid = 40000 + ((unsigned long)getpid() + k) % 20000;
		struct sockaddr_un sa;
		socklen_t len;
		int fd;
		if (!idmap_has(m, uid) || passwd_has_uid(uid))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
		                  (size_t)snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
		                                   "airlock-jail-uid-%lu", uid));
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			refuse("cannot take a uid of its own: %s", strerror(errno));
		if (bind(fd, (struct sockaddr *)&sa, len) == 0) {
			*lockfd = fd;
			return uid;
		}
		close(fd);
	}
	refuse("no free uid for the request in this user namespace");
}

/* ---- limits ------------------------------------------------------------------------ */

enum cg { CG_NONE, CG_V2, CG_V1 };

struct limits {
	enum cg kind;
	char v2[256];
	char v1[3][256]; /* memory, pids, cpu */
};

static const char *const v1ctl[3] = {"memory", "pids", "cpu"};

static int mkdir_ok(const char *p)
{
	return mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* A cgroup v2 child of /sys/fs/cgroup/airlock with memory, pids and cpu. */
static bool cg_v2(const struct jopts *o, struct limits *l, const char *name)
{
	char buf[512], p[PATH_MAX];

	if (read_file("/sys/fs/cgroup/cgroup.controllers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "memory") || !strstr(buf, "pids") || !strstr(buf, "cpu"))
		return false;
	if (mkdir_ok("/sys/fs/cgroup/airlock") != 0)
		return false;
	read_file("/sys/fs/cgroup/cgroup.subtree_control", buf, sizeof(buf));
	if ((!strstr(buf, "memory") || !strstr(buf, "pids") || !strstr(buf, "cpu")) &&
	    write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory +pids +cpu") != 0)
		return false;
	read_file("/sys/fs/cgroup/airlock/cgroup.subtree_control", buf, sizeof(buf));
	if ((!strstr(buf, "memory") || !strstr(buf, "pids") || !strstr(buf, "cpu")) &&
	    write_file("/sys/fs/cgroup/airlock/cgroup.subtree_control", "+memory +pids +cpu") != 0)
		return false;
	snprintf(l->v2, sizeof(l->v2), "/sys/fs/cgroup/airlock/%s", name);
	if (mkdir(l->v2, 0755) != 0)
		return false;
	snprintf(p, sizeof(p), "%s/memory.max", l->v2);
	snprintf(buf, sizeof(buf), "%lld", o->mem);
	if (write_file(p, buf) != 0)
		refuse("%s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/memory.swap.max", l->v2);
	write_file(p, "0"); /* absent without swap accounting */
	snprintf(p, sizeof(p), "%s/pids.max", l->v2);
	snprintf(buf, sizeof(buf), "%ld", o->tasks);
	if (write_file(p, buf) != 0)
		refuse("%s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/cpu.max", l->v2);
	snprintf(buf, sizeof(buf), "%d 100000", o->cpu_pct * 1000);
	if (write_file(p, buf) != 0)
		refuse("%s: %s", p, strerror(errno));
	l->kind = CG_V2;
	return true;
}

static bool cg_v1(const struct jopts *o, struct limits *l, const char *name)
{
	char buf[64], p[PATH_MAX];

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/tasks", v1ctl[i]);
		if (access(p, F_OK) != 0)
			return false;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/airlock", v1ctl[i]);
		if (mkdir_ok(p) != 0)
			return false;
		snprintf(l->v1[i], sizeof(l->v1[i]), "/sys/fs/cgroup/%s/airlock/%.63s", v1ctl[i],
		         name);
		if (mkdir(l->v1[i], 0755) != 0) {
			/* Not ours to write (a user namespace): no cgroup here. */
			while (i-- > 0)
				rmdir(l->v1[i]);
			return false;
		}
	}
	l->kind = CG_V1;
	snprintf(buf, sizeof(buf), "%lld", o->mem);
	snprintf(p, sizeof(p), "%s/memory.limit_in_bytes", l->v1[0]);
	if (write_file(p, buf) != 0)
		refuse("%s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", l->v1[0]);
	write_file(p, buf); /* absent without swap accounting */
	snprintf(p, sizeof(p), "%s/pids.max", l->v1[1]);
	snprintf(buf, sizeof(buf), "%ld", o->tasks);
	if (write_file(p, buf) != 0)
		refuse("%s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/cpu.cfs_period_us", l->v1[2]);
	write_file(p, "100000");
	snprintf(p, sizeof(p), "%s/cpu.cfs_quota_us", l->v1[2]);
	snprintf(buf, sizeof(buf), "%d", o->cpu_pct * 1000);
	if (write_file(p, buf) != 0)
		refuse("%s: %s", p, strerror(errno));
	return true;
}

static void cg_enter(struct limits *l, pid_t pid)
{
	char p[PATH_MAX], s[24];

	snprintf(s, sizeof(s), "%d", (int)pid);
	if (l->kind == CG_V2) {
		snprintf(p, sizeof(p), "%s/cgroup.procs", l->v2);
		if (write_file(p, s) != 0)
			refuse("%s: %s", p, strerror(errno));
	} else if (l->kind == CG_V1) {
		for (int i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s/cgroup.procs", l->v1[i]);
			if (write_file(p, s) != 0)
				refuse("%s: %s", p, strerror(errno));
		}
	}
}

/* "oom_kill N" in a cgroup file: N, or 0. */
static long oom_kills(const char *path)
{
	char buf[2048], *s;

	if (read_file(path, buf, sizeof(buf)) < 0 || (s = strstr(buf, "oom_kill ")) == NULL)
		return 0;
	return strtol(s + 9, NULL, 10);
}

/* Kills what is left in the cgroup and removes it; whether the memory limit
 * killed anything. */
static bool cg_end(struct limits *l)
{
	char p[PATH_MAX];
	bool oom = false;

	if (l->kind == CG_V2) {
		snprintf(p, sizeof(p), "%s/memory.events", l->v2);
		oom = oom_kills(p) > 0;
		snprintf(p, sizeof(p), "%s/cgroup.kill", l->v2);
		write_file(p, "1");
		for (int k = 0; k < 200 && rmdir(l->v2) != 0 && errno == EBUSY; k++)
			usleep(5000);
	} else if (l->kind == CG_V1) {
		snprintf(p, sizeof(p), "%s/memory.oom_control", l->v1[0]);
		oom = oom_kills(p) > 0;
		for (int i = 0; i < 3; i++)
			for (int k = 0; k < 200 && rmdir(l->v1[i]) != 0 && errno == EBUSY; k++)
				usleep(5000);
	}
	return oom;
}

/* ---- the command --------------------------------------------------------------------- */

static void set_rlimit(int res, rlim_t v, const char *what)
{
	struct rlimit r = {v, v};
	if (setrlimit(res, &r) != 0)
		refuse("%s limit: %s", what, strerror(errno));
}

static int last_cap(void)
{
	char buf[16];
	if (read_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) > 0)
		return atoi(buf);
	return 40;
}

/* The bounding and ambient sets emptied (while CAP_SETPCAP is still held). */
static void drop_bounding(void)
{
	for (int c = 0; c <= last_cap(); c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL)
			refuse("dropping capability %d: %s", c, strerror(errno));
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

/* Effective, permitted and inheritable sets emptied. */
static void drop_caps(void)
{
	struct cap_header h = {CAP_V3, 0};
	struct cap_data d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) != 0)
		refuse("clearing capabilities: %s", strerror(errno));
}

/* The one shell (transport/shell.h): its words, then the command; the
 * fixed environment the remote line began with (env -i on the node), less
 * what the check's shell added (PWD, SHLVL, _). */
static _Noreturn void run_command(const struct jopts *o, unsigned long uid, const char *facts)
{
	extern char **environ;
	static char words[] = SHELL_EXEC_WORDS;
	static const char *const keep[] = {"PATH=", "HOME=", "LANG=", SHELL_TAG_NAME "="};
	char *argv[16], *envp[8];
	int n = 0, e = 0;

	for (char *w = strtok(words, " "); w && n < 14; w = strtok(NULL, " "))
		argv[n++] = w;
	argv[n++] = (char *)o->command;
	argv[n] = NULL;
	for (char **v = environ; *v && e < 7; v++)
		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			if (strncmp(*v, keep[k], strlen(keep[k])) == 0)
				envp[e++] = *v;
	envp[e] = NULL;

	if (setsid() < 0)
		refuse("setsid: %s", strerror(errno));
	/* Limits every process of the request inherits (cgroups bound the whole). */
	set_rlimit(RLIMIT_CORE, 0, "core");
	set_rlimit(RLIMIT_FSIZE, (rlim_t)o->scratch, "file size");
	if (o->tier == TIER_USER)
		set_rlimit(RLIMIT_NPROC, (rlim_t)o->tasks, "task"); /* its uid is its own */
	if (strstr(facts, "limits=rlimit")) {
		set_rlimit(RLIMIT_AS, (rlim_t)o->mem, "memory");
		if (o->deadline_ms > 0)
			set_rlimit(RLIMIT_CPU,
			           (rlim_t)(o->deadline_ms / 1000 * o->cpu_pct / 100 + 1),
			           "CPU time");
		if (setpriority(PRIO_PROCESS, 0, 10) != 0)
			refuse("nice: %s", strerror(errno));
	}
	/* Idle-ish I/O: best effort, lowest priority (class 2, level 7). */
	syscall(SYS_ioprio_set, 1, 0, (2 << 13) | 7);

	if (o->tier == TIER_USER) {
		gid_t groups[2];
		int ng = 0;
		long g;
		/* The log groups: journalctl and /var/log, which observations read. */
		if ((g = group_gid("adm")) >= 0)
			groups[ng++] = (gid_t)g;
		if ((g = group_gid("systemd-journal")) >= 0)
			groups[ng++] = (gid_t)g;
		drop_bounding();
		if (setgroups((size_t)ng, groups) != 0 || setresgid(uid, uid, uid) != 0 ||
		    setresuid(uid, uid, uid) != 0)
			refuse("dropping to uid %lu: %s", uid, strerror(errno));
		drop_caps(); /* the uid change emptied them already */
	} else {
		if (setgroups(0, NULL) != 0)
			refuse("setgroups: %s", strerror(errno));
		if (prctl(PR_SET_SECUREBITS,
		          SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		              SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
		              SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		          0, 0, 0) != 0)
			refuse("securebits: %s", strerror(errno));
		drop_bounding();
		drop_caps();
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		refuse("no_new_privs: %s", strerror(errno));
	if (access(".", X_OK) != 0 && chdir("/") != 0)
		refuse("chdir /: %s", strerror(errno));
	/* Nothing of the caller's but stdin, stdout and stderr (close_range). */
	syscall(436, 3U, ~0U, 0U);
	say("ready %s %s", tier_name[o->tier], facts);
	execve(SHELL_PATH, argv, envp);
	say("cannot run %s: %s", SHELL_PATH, strerror(errno));
	_exit(127);
}

/* ---- init: pid 1 of the request's namespaces ------------------------------------------ */

static _Noreturn void init_main(const struct jopts *o, int syncfd, int statusfd, unsigned long uid,
                                const char *facts)
{
	struct plan pl;
	pid_t cmd, outer;
	int st;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* The supervisor has written the id maps and placed us in the cgroup
	 * (or died: then EOF, and nothing ran); it sends our pid in the
	 * target's pid namespace. */
	if (read(syncfd, &outer, sizeof(outer)) != (ssize_t)sizeof(outer))
		_exit(125);
	close(syncfd);
	/* The command keeps the target's /proc, where procps looks itself up
	 * by getpid(): the namespace's pids start where the target's next ones
	 * will, so that on a quiet target each process's pid inside is its pid
	 * outside.  (Best effort: a busy target's pids move on meanwhile.) */
	{
		char v[24];
		snprintf(v, sizeof(v), "%d", (int)outer);
		write_file("/proc/sys/kernel/ns_last_pid", v);
	}
	memset(&pl, 0, sizeof(pl));
	build_mounts(o, &pl);
	verify_mounts(&pl);
	if (!o->net_view)
		loopback_up();
	cmd = fork();
	if (cmd < 0)
		refuse("fork: %s", strerror(errno));
	if (cmd == 0) {
		close(statusfd);
		run_command(o, uid, facts);
	}
	/* Reap until the command ends; then tell the supervisor and go: the
	 * kernel kills whatever is left in the namespace. */
	for (;;) {
		pid_t w = waitpid(-1, &st, 0);
		if (w == cmd)
			break;
		if (w < 0 && errno != EINTR)
			_exit(125);
	}
	if (write(statusfd, &st, sizeof(st)) != (ssize_t)sizeof(st))
		_exit(125);
	_exit(0);
}

/* ---- the supervisor ---------------------------------------------------------------------- */

static void write_idmap(pid_t pid, const char *file, const char *self)
{
	struct idmap m;
	char path[64], buf[512];
	size_t len = 0;

	idmap_read(self, &m);
	for (int i = 0; i < m.n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%lu %lu %lu\n", m.first[i],
		                        m.first[i], m.count[i]);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if (write_file(path, buf) != 0) {
		kill(pid, SIGKILL);
		refuse("writing %s: %s", path, strerror(errno));
	}
}

int main(int argc, char **argv)
{
	struct jopts o;
	struct limits lim;
	struct idmap um;
	char err[512], name[64], facts[256];
	int sync[2], status[2], sfd, lockfd, st = 0;
	unsigned long uid = 0;
	unsigned long long rnd = 0;
	sigset_t mask;
	long long deadline = 0;
	const char *ended = NULL;
	pid_t init;

	if (jail_parse_args(argc, argv, &o, err, sizeof(err)) != 0)
		refuse("%s", err);
	if (geteuid() != 0)
		refuse("the jail must be started as root (uid %d)", (int)geteuid());
	if (o.deadline_ms > 0)
		deadline = now_ms() + o.deadline_ms;
	idmap_read("/proc/self/uid_map", &um);
	if (o.tier == TIER_USER)
		uid = pick_uid(&um, &lockfd);
	/* A cgroup of its own: a name no other request, rig or target shares. */
	if (syscall(SYS_getrandom, &rnd, sizeof(rnd), 0) != (long)sizeof(rnd))
		rnd = (unsigned long long)now_ms() ^ ((unsigned long long)getpid() << 32);
	snprintf(name, sizeof(name), "r%d-%016llx", (int)getpid(), rnd);
	memset(&lim, 0, sizeof(lim));
	if (!cg_v2(&o, &lim, name))
		cg_v1(&o, &lim, name);
	if (lim.kind == CG_NONE && o.tier != TIER_USER)
		refuse("no cgroup (v2, or v1 memory, pids and cpu) to bound the %s tier's tasks; "
		       "uid 0 is exempt from the per-user process limit",
		       tier_name[o.tier]);
	snprintf(facts, sizeof(facts),
	         "uid=%lu net=%s limits=%s mem=%lldMiB tasks=%ld cpu=%d%% "
	         "scratch=%lldMiB",
	         uid, o.net_view ? "target" : "own",
	         lim.kind == CG_V2   ? "cgroup2"
	         : lim.kind == CG_V1 ? "cgroup1"
	                             : "rlimit",
	         o.mem >> 20, o.tasks, o.cpu_pct, o.scratch >> 20);

	/* Signals come through a signalfd; the rest of the request starts with
	 * the default dispositions and an empty mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((sfd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0)
		refuse("signalfd: %s", strerror(errno));
	if (pipe2(sync, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0)
		refuse("pipe: %s", strerror(errno));
	init = (pid_t)syscall(SYS_clone,
	                      SIGCHLD | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
	                          CLONE_NEWUTS | (o.net_view ? 0 : CLONE_NEWNET),
	                      0, 0, 0, 0);
	if (init < 0) {
		cg_end(&lim);
		refuse("new namespaces: %s", strerror(errno));
	}
	if (init == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		close(sfd);
		close(sync[1]);
		close(status[0]);
		init_main(&o, sync[0], status[1], uid, facts);
	}
	close(sync[0]);
	close(status[1]);
	write_idmap(init, "uid_map", "/proc/self/uid_map");
	write_idmap(init, "gid_map", "/proc/self/gid_map");
	cg_enter(&lim, init);
	if (write(sync[1], &init, sizeof(init)) != (ssize_t)sizeof(init))
		refuse("starting the jail: %s", strerror(errno));
	close(sync[1]);

	/* Wait for the first of: the command's end, the deadline, a kill, the
	 * output's reader gone. */
	for (;;) {
		struct pollfd p[3] = {{sfd, POLLIN, 0}, {1, 0, 0}, {2, 0, 0}};
		int left = -1;
		if (deadline) {
			long long l = deadline - now_ms();
			if (l <= 0) {
				ended = "stopped at the jail's deadline";
				break;
			}
			left = l > 1000000 ? 1000000 : (int)l;
		}
		if (poll(p, 3, left) < 0 && errno != EINTR)
			break;
		if ((p[1].revents | p[2].revents) & (POLLERR | POLLHUP | POLLNVAL)) {
			ended = "stopped: the reader of its output is gone";
			break;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
				continue;
			if (si.ssi_signo == SIGCHLD) {
				if (waitpid(init, &st, WNOHANG) == init) {
					init = 0;
					break;
				}
			} else if (si.ssi_signo != SIGPIPE) {
				ended = si.ssi_signo == SIGTERM
				            ? "stopped by SIGTERM (the transport's kill)"
				            : "stopped by a signal";
				break;
			}
		}
	}
	if (init > 0) {
		kill(init, SIGKILL); /* pid 1 gone: the kernel kills the whole namespace */
		while (waitpid(init, &st, 0) < 0 && errno == EINTR)
			;
	}
	{
		int cmdst = 0;
		bool have = read(status[0], &cmdst, sizeof(cmdst)) == (ssize_t)sizeof(cmdst);
		bool oom = cg_end(&lim);

		if (!have && ended == NULL) {
			/* init ended without the command's status: the jail refused
			 * (its reason is on stderr already) or was killed. */
			if (WIFEXITED(st))
				return WEXITSTATUS(st) ? WEXITSTATUS(st) : 125;
			ended = "stopped: the jail's init was killed";
		}
		if (oom)
			say("killed by the memory limit (%lld MiB)", o.mem >> 20);
		else if (have && WIFSIGNALED(cmdst) && WTERMSIG(cmdst) == SIGXCPU)
			say("killed by the CPU time limit");
		if (ended) {
			if (o.deadline_ms > 0 && strstr(ended, "deadline"))
				say("%s (%lld ms)", ended, o.deadline_ms);
			else
				say("%s", ended);
			return 124;
		}
		if (WIFSIGNALED(cmdst)) {
			/* Ended by a signal: the same signal ends this process, so
			 * sshd and the agent report it as they would unconfined. */
			int sig = WTERMSIG(cmdst);
			struct rlimit r = {0, 0};
			setrlimit(RLIMIT_CORE, &r);
			signal(sig, SIG_DFL);
			sigprocmask(SIG_UNBLOCK, &mask, NULL);
			kill(getpid(), sig);
			return 128 + sig;
		}
		return WEXITSTATUS(cmdst);
	}
}

#endif /* AIRLOCK_JAIL_NO_MAIN */
