/* shelldiff_test.c -- what was parsed is what runs: a differential test of the
 * one shell against the rig (tests/rig).  Run by tests/suites/42-shell.sh,
 * which brings the rig up and exports its env file (AIRLOCK_RIG_*).
 *
 * tests/data/shelldiff.py generates commands, across every kind of construct
 * where bash and dash disagree, each running in a directory of its own.  For
 * each one, here on the machine: its effect (exit status, stdout, and every
 * file it left in its directory) under bash exactly as the transport starts
 * it (shell_argv and shell_env, transport/shell.h: the shell the classifier
 * models) and under /bin/sh (dash), which must differ, or the case could not
 * fail.  Then on the rig's host, VM and container, through the transport: a
 * command must have bash's effect, read from outside the target; the same
 * command through /bin/sh there, as every target ran commands before, must
 * have dash's.  Busybox ash is compared too, for the record (a target whose
 * only shell is ash runs nothing: transport_test, scenario noshell).
 *
 *   shelldiff_test          no timed assertions */
#include "transport/shell.h"
#include "transport/transport.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/log.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

static int failures, checks;

#define CHECK(cond, ...) check_((cond), #cond, __FILE__, __LINE__, __VA_ARGS__)

static void check_(int ok, const char *expr, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	checks++;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok) {
		failures++;
		printf("  [%s:%d: %s]", file, line, expr);
	}
	printf("\n");
	fflush(stdout);
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	if (v == NULL || v[0] == '\0') {
		fprintf(stderr, "shelldiff_test: %s is not set (run under tests/rig)\n", name);
		exit(2);
	}
	return v;
}

/* ---- cases ------------------------------------------------------------------- */

struct scase {
	const char *family, *name, *command; /* command holds @D@ for its directory */
};

static struct scase *cases;
static size_t ncases;
static char *gen_text;

/* Reads the generator's NUL-terminated fields, three per case. */
static void load_cases(void)
{
	struct buf b = BUF_INIT;
	char chunk[8192];
	size_t n, cap = 0;
	FILE *p = popen("python3 tests/data/shelldiff.py", "r");

	if (p == NULL) {
		fprintf(stderr, "shelldiff_test: cannot run tests/data/shelldiff.py: %s\n",
		        strerror(errno));
		exit(2);
	}
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		buf_append(&b, chunk, n);
	if (pclose(p) != 0 || b.len == 0) {
		fprintf(stderr, "shelldiff_test: tests/data/shelldiff.py failed\n");
		exit(2);
	}
	size_t len = b.len;
	gen_text = buf_steal(&b);
	for (size_t off = 0; off < len;) {
		const char *f[3];
		for (int k = 0; k < 3; k++) {
			f[k] = off < len ? gen_text + off : "";
			off += strlen(f[k]) + 1;
		}
		if (ncases == cap) {
			cap = cap ? 2 * cap : 256;
			cases = xrealloc(cases, cap * sizeof(*cases));
		}
		cases[ncases++] = (struct scase){f[0], f[1], f[2]};
	}
}

/* command with @D@ replaced by dir. */
static char *with_dir(const char *command, const char *dir)
{
	struct buf b = BUF_INIT;

	for (const char *p = command; *p;) {
		const char *at = strstr(p, "@D@");
		if (at == NULL) {
			buf_puts(&b, p);
			break;
		}
		buf_append(&b, p, (size_t)(at - p));
		buf_puts(&b, dir);
		p = at + 3;
	}
	return buf_steal(&b);
}

/* ---- effects ------------------------------------------------------------------- */

/* What a run did: its exit status, its stdout, and its directory's files. */
struct effect {
	int status; /* exit code; 1000 + signal; -1: did not run to an end */
	struct buf out;
	struct buf files; /* "path\0content\0" (directories: "<dir>"), sorted */
	char err[200];    /* the transport's word when it did not run */
};

static void effect_clear(struct effect *e)
{
	buf_free(&e->out);
	buf_free(&e->files);
}

static bool effect_eq(const struct effect *a, const struct effect *b)
{
	return a->status == b->status && a->out.len == b->out.len &&
	       (a->out.len == 0 || memcmp(a->out.data, b->out.data, a->out.len) == 0) &&
	       a->files.len == b->files.len &&
	       (a->files.len == 0 || memcmp(a->files.data, b->files.data, a->files.len) == 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry under dir (rel: its path below the case's directory), sorted. */
static void walk(const char *dir, const char *rel, struct buf *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;

	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		char *sub = rel[0] ? xasprintf("%s/%s", rel, names[i]) : xstrdup(names[i]);
		struct stat st;
		buf_append(out, sub, strlen(sub) + 1);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			buf_append(out, "<dir>", 6);
			walk(path, sub, out);
		} else {
			FILE *f = fopen(path, "rb");
			char chunk[4096];
			size_t k;
			while (f && (k = fread(chunk, 1, sizeof(chunk), f)) > 0)
				buf_append(out, chunk, k);
			buf_putc(out, '\0');
			if (f)
				fclose(f);
		}
		free(path);
		free(sub);
		free(names[i]);
	}
	free(names);
}

/* The environment the one shell starts with (shell.h), and a tag. */
static char **one_env(void)
{
	static char *envp[8];
	size_t i = 0;

	for (; shell_env[i] != NULL && i < 6; i++)
		envp[i] = (char *)shell_env[i];
	envp[i++] = SHELL_TAG_NAME "=1.1.1";
	envp[i] = NULL;
	return envp;
}

/* Runs argv (the command is its last element) here, in /, stdin from
 * /dev/null, stderr discarded; the effect, its directory being dir. */
static void run_local(char *const argv[], const char *dir, struct effect *e)
{
	int p[2], st;
	char chunk[4096];
	ssize_t n;
	pid_t pid;

	memset(e, 0, sizeof(*e));
	if (pipe(p) < 0) {
		e->status = -1;
		return;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(null, 2);
		close(p[0]);
		close(p[1]);
		if (chdir("/") < 0)
			_exit(98);
		alarm(30); /* a case that hangs is ended, and fails */
		execve(argv[0], argv, one_env());
		_exit(97);
	}
	close(p[1]);
	while ((n = read(p[0], chunk, sizeof(chunk))) > 0)
		buf_append(&e->out, chunk, (size_t)n);
	close(p[0]);
	waitpid(pid, &st, 0);
	e->status = WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
	walk(dir, "", &e->files);
}

static void rm_rf(const char *path)
{
	char *q = shellquote(path), *cmd = xasprintf("rm -rf -- %s", q);
	if (system(cmd) != 0)
		fprintf(stderr, "shelldiff_test: %s failed\n", cmd);
	free(cmd);
	free(q);
}

/* ---- the rig ------------------------------------------------------------------- */

static struct transport_node node;
static struct transport *T;

static const struct {
	enum target_type type;
	int id;
	const char *name;
	const char *root; /* the target's / as seen from outside, below the rig's root */
} targets[] = {
    {TARGET_PROXMOX_HOST, 0, "host", "node"},
    {TARGET_VM, 101, "vm:101", "guests/vm101/root"},
    {TARGET_LXC, 201, "ct:201", "guests/ct201/root"},
};
#define NTARGETS 3

/* Runs command on target t through the transport; the effect, its
 * directory (a path in the target) being dir. */
static void run_remote(size_t t, const char *command, const char *dir, struct effect *e)
{
	struct transport_limits lim = {.timeout_ms = 60000};
	struct transport_result r;
	char *outside = xasprintf("%s/%s%s", env("AIRLOCK_RIG_ROOT"), targets[t].root, dir);

	memset(e, 0, sizeof(*e));
	transport_exec(T, &node, targets[t].type, targets[t].id, command, &lim, &r);
	if (r.status == TRANSPORT_EXITED)
		e->status = r.exit_code;
	else if (r.status == TRANSPORT_SIGNALED)
		e->status = 1000 + r.signal;
	else
		e->status = -1;
	snprintf(e->err, sizeof(e->err), "%s %.150s", transport_status_name(r.status), r.errmsg);
	buf_append(&e->out, r.out, r.out_len);
	walk(outside, "", &e->files);
	transport_result_free(&r);
	free(outside);
}

/* Per case: the local effects, then per target whether the one shell gave
 * bash's and /bin/sh gave dash's. */
struct outcome {
	struct effect bash, dash;
	bool ash_same; /* busybox ash gave bash's effect */
	bool local_differs;
	bool remote_bash[NTARGETS], remote_sh[NTARGETS];
	char why[NTARGETS][300];
};

static struct outcome *outs;
static char base[64];

static void *target_thread(void *arg)
{
	size_t t = (size_t)arg;

	for (size_t i = 0; i < ncases; i++) {
		struct outcome *o = &outs[i];
		struct effect e;
		char dir[128];
		snprintf(dir, sizeof(dir), "%s/%zu.bash", base, i);
		char *cmd = with_dir(cases[i].command, dir);
		run_remote(t, cmd, dir, &e);
		o->remote_bash[t] = effect_eq(&e, &o->bash);
		if (!o->remote_bash[t])
			snprintf(o->why[t], sizeof(o->why[t]),
			         "one shell: status %d (want %d), %.60s", e.status, o->bash.status,
			         e.err);
		effect_clear(&e);
		free(cmd);

		/* The same command as targets ran it before: /bin/sh -c. */
		snprintf(dir, sizeof(dir), "%s/%zu.sh", base, i);
		cmd = with_dir(cases[i].command, dir);
		char *q = shellquote(cmd), *old = xasprintf("exec /bin/sh -c %s", q);
		run_remote(t, old, dir, &e);
		o->remote_sh[t] = effect_eq(&e, &o->dash) && !effect_eq(&e, &o->bash);
		if (!o->remote_sh[t] && o->why[t][0] == '\0')
			snprintf(o->why[t], sizeof(o->why[t]),
			         "/bin/sh: status %d (want %d), %.60s", e.status, o->dash.status,
			         e.err);
		effect_clear(&e);
		free(q);
		free(old);
		free(cmd);
	}
	return NULL;
}

static bool is_dash(const char *path)
{
	char real[256];
	ssize_t n = readlink(path, real, sizeof(real) - 1);

	if (n <= 0)
		return false;
	real[n] = '\0';
	return strstr(real, "dash") != NULL;
}

int main(void)
{
	bool ash = access("/bin/busybox", X_OK) == 0;
	size_t ash_same = 0;
	pthread_t th[NTARGETS];
	char err[256];

	log_set_level(LOG_ERROR);
	load_cases();
	CHECK(ncases > 200, "the generator gave %zu cases", ncases);
	CHECK(is_dash("/bin/sh"), "/bin/sh here is dash, as on Debian and Proxmox VE");
	snprintf(base, sizeof(base), "/tmp/airlock-shelldiff.%d", (int)getpid());
	outs = xcalloc(ncases, sizeof(*outs));

	/* Here: bash as the transport starts it, dash as /bin/sh, ash. */
	for (size_t i = 0; i < ncases; i++) {
		struct outcome *o = &outs[i];
		char dir[128];
		snprintf(dir, sizeof(dir), "%s/%zu.bash", base, i);
		char *cmd = with_dir(cases[i].command, dir);
		size_t k = 0, na = 0;
		while (shell_argv[na] != NULL)
			na++;
		char **bash_argv = xcalloc(na + 2, sizeof(*bash_argv));
		for (; k < na; k++)
			bash_argv[k] = (char *)shell_argv[k];
		bash_argv[k] = cmd;
		run_local(bash_argv, dir, &o->bash);
		free(bash_argv);
		free(cmd);
		snprintf(dir, sizeof(dir), "%s/%zu.sh", base, i);
		cmd = with_dir(cases[i].command, dir);
		run_local((char *[]){"/bin/sh", "-c", cmd, NULL}, dir, &o->dash);
		o->local_differs = !effect_eq(&o->bash, &o->dash);
		free(cmd);
		if (ash) {
			struct effect a;
			snprintf(dir, sizeof(dir), "%s/%zu.bash", base, i);
			rm_rf(dir);
			cmd = with_dir(cases[i].command, dir);
			run_local((char *[]){"/bin/busybox", "ash", "-c", cmd, NULL}, dir, &a);
			o->ash_same = effect_eq(&a, &o->bash);
			ash_same += o->ash_same;
			effect_clear(&a);
			free(cmd);
		}
	}
	rm_rf(base);

	node.name = env("AIRLOCK_RIG_NODE");
	node.address = env("AIRLOCK_RIG_SSH_HOST");
	node.port = atoi(env("AIRLOCK_RIG_SSH_PORT"));
	node.user = env("AIRLOCK_RIG_SSH_USER");
	struct transport_config cfg = {
	    .private_key = env("AIRLOCK_RIG_SSH_KEY"),
	    .known_hosts = env("AIRLOCK_RIG_KNOWN_HOSTS"),
	    .poll_interval_ms = 50,
	};
	T = transport_new(&cfg, err, sizeof(err));
	if (T == NULL) {
		fprintf(stderr, "shelldiff_test: %s\n", err);
		return 2;
	}
	for (size_t t = 0; t < NTARGETS; t++)
		pthread_create(&th[t], NULL, target_thread, (void *)t);
	for (size_t t = 0; t < NTARGETS; t++)
		pthread_join(th[t], NULL);

	/* One line per family here and per family and target on the rig; a
	 * failing case is named. */
	for (size_t i = 0; i < ncases;) {
		const char *fam = cases[i].family;
		size_t j = i, local_ok = 0, remote_ok[NTARGETS] = {0};
		for (; j < ncases && strcmp(cases[j].family, fam) == 0; j++) {
			local_ok += outs[j].local_differs;
			if (!outs[j].local_differs)
				printf("# %s: %s: the same effect under bash and dash\n", fam,
				       cases[j].name);
			for (size_t t = 0; t < NTARGETS; t++) {
				bool ok = outs[j].remote_bash[t] && outs[j].remote_sh[t];
				remote_ok[t] += ok;
				if (!ok)
					printf("# %s: %s on %s: %s\n", fam, cases[j].name,
					       targets[t].name, outs[j].why[t]);
			}
		}
		CHECK(local_ok == j - i,
		      "%s: %zu of %zu cases have another effect under dash than "
		      "under bash",
		      fam, local_ok, j - i);
		for (size_t t = 0; t < NTARGETS; t++)
			CHECK(remote_ok[t] == j - i,
			      "%s on %s: %zu of %zu cases have bash's effect, and dash's through "
			      "/bin/sh",
			      fam, targets[t].name, remote_ok[t], j - i);
		i = j;
	}
	if (ash)
		printf("# busybox ash gives bash's effect in %zu of %zu cases, another in %zu\n",
		       ash_same, ncases, ncases - ash_same);
	for (size_t i = 0; i < ncases; i++) {
		effect_clear(&outs[i].bash);
		effect_clear(&outs[i].dash);
	}
	free(outs);
	free(cases);
	free(gen_text);
	transport_free(T);
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
