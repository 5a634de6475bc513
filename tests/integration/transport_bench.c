/* transport_bench.c -- commands/s and median latency of a trivial command on
 * the rig's host, VM and CT, side by side:
 *
 *   pooled   transport_exec over the one long-lived libssh2 session
 *   fresh    a new `ssh` process (new connection) per command
 *   mux      `ssh` through an OpenSSH ControlMaster (ControlPath given)
 *
 * The remote command line is the same for all three (what the transport
 * sends).  Run by tests/bench/40-transport.sh with the rig's env exported.
 *
 *   transport_bench N CONTROL_PATH [vm]     (vm: only the VM rows)
 *   transport_bench N CONTROL_PATH jail     the jail's cost: `true` pooled,
 *       unconfined and in each tier, and through ControlMaster, on host, VM
 *       and CT, in turns */
#include "transport/shell.h"
#include "transport/transport.h"

#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classifier/policy.h"
#include "lib/buf.h"
#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	if (v == NULL) {
		fprintf(stderr, "transport_bench: %s not set\n", name);
		exit(2);
	}
	return v;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct stat_row {
	double per_s, median, p90;
};

static struct stat_row summarize(double *ms, int n, double total)
{
	struct stat_row r;
	qsort(ms, (size_t)n, sizeof(double), cmp);
	r.per_s = n / (total / 1000.0);
	r.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
	r.p90 = ms[(int)(n * 0.9)];
	return r;
}

/* One `ssh` run of cmdline; extra: NULL (fresh) or a ControlPath. */
static int ssh_once(const char *cmdline, const char *control)
{
	char cp[512];
	const char *argv[12];
	int i = 0, st;
	pid_t pid;

	argv[i++] = "ssh";
	argv[i++] = "-F";
	argv[i++] = env("AIRLOCK_RIG_SSH_CONFIG");
	if (control) {
		snprintf(cp, sizeof(cp), "ControlPath=%s", control);
		argv[i++] = "-o";
		argv[i++] = "ControlMaster=no";
		argv[i++] = "-o";
		argv[i++] = cp;
	}
	argv[i++] = env("AIRLOCK_RIG_NODE");
	argv[i++] = cmdline;
	argv[i] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", 0, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	if (posix_spawnp(&pid, "ssh", &fa, NULL, (char **)argv, environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return 0;
}

static struct transport *T;
static struct transport_node node;

static int pooled_once(enum target_type ty, int id)
{
	struct transport_limits lim = {.timeout_ms = 60000};
	struct transport_result r;
	int ok = transport_exec(T, &node, ty, id, "true", &lim, &r) == 0 &&
	         r.status == TRANSPORT_EXITED && r.exit_code == 0;
	transport_result_free(&r);
	return ok ? 0 : -1;
}

enum method { POOLED, FRESH, MUX, NMETHODS };

/* The seed policy's secret stores (what airlockd sends with every jailed
 * command), and a write set for the write tier. */
static struct transport_jail_spec jspec;
static const char *const bench_writes[] = {"/var/lib/airlock-bench/"};

static void load_spec(void)
{
	static const char **secrets;
	char err[512];
	FILE *f = fopen("seeds/policy.yaml", "r");
	static char text[1 << 20];
	size_t n = f ? fread(text, 1, sizeof(text), f) : 0;
	struct policy *p;

	if (f)
		fclose(f);
	p = n ? policy_parse(text, n, "seeds/policy.yaml", err, sizeof(err)) : NULL;
	if (p == NULL) {
		fprintf(stderr, "transport_bench: seeds/policy.yaml: %s\n", n ? err : "unreadable");
		exit(2);
	}
	jspec.nsecrets = policy_secret_store_count(p);
	secrets = xcalloc(jspec.nsecrets + 1, sizeof(*secrets));
	for (size_t i = 0; i < jspec.nsecrets; i++)
		secrets[i] = xstrdup(policy_secret_store(p, i));
	jspec.secrets = secrets;
	jspec.writes = bench_writes;
	jspec.nwrites = 1;
	policy_free(p);
}

static int jailed_once(enum target_type ty, int id, enum transport_jail j)
{
	struct transport_limits lim = {.timeout_ms = 60000, .jail = j, .jail_spec = &jspec};
	struct transport_result r;
	int ok = transport_exec(T, &node, ty, id, "true", &lim, &r) == 0 &&
	         r.status == TRANSPORT_EXITED && r.exit_code == 0;
	transport_result_free(&r);
	return ok ? 0 : -1;
}

static int ssh_once(const char *cmdline, const char *control);

/* The jail's cost per command: unconfined, each tier and OpenSSH
 * ControlMaster (unconfined, what an agent would use to go around the gate)
 * take turns, one command each per round, so the machine's swings hit them
 * alike.  The tiers carry the seed policy's secret stores. */
static int bench_jail(int n, const char *control)
{
	static const struct {
		const char *name;
		enum target_type ty;
		int id;
		const char *mux; /* the ControlMaster line: as the transport sends it unconfined */
	} tg[] = {{"host", TARGET_PROXMOX_HOST, 0, SHELL_EXEC_WORDS " 'true'"},
	          {"vm101", TARGET_VM, 101,
	           "qm agent 101 ping && qm guest exec 101 --timeout 30 -- " SHELL_EXEC_WORDS " 'true'"},
	          {"ct201", TARGET_LXC, 201,
	           "s=$(pct status 201) || exit 255; echo \"$s\"; [ \"$s\" = 'status: running' ] || "
	           "exit 255; pct exec 201 -- " SHELL_EXEC_WORDS " 'true'"}};
	static const enum transport_jail js[] = {TRANSPORT_JAIL_NONE, TRANSPORT_JAIL_USER,
	                                         TRANSPORT_JAIL_ROOT, TRANSPORT_JAIL_WRITE};
	enum { NK = 5 }; /* the four above, then ControlMaster */
	int errors = 0;

	load_spec();
	/* Once each, untimed: the first jailed run installs the helper. */
	for (size_t t = 0; t < 3; t++)
		errors += jailed_once(tg[t].ty, tg[t].id, TRANSPORT_JAIL_USER) != 0;
	printf("%-6s %-18s %10s %11s %9s %14s\n", "target", "confinement", "cmds/s", "median ms",
	       "p90 ms", "median ratio");
	for (size_t t = 0; t < 3; t++) {
		double *ms[NK], sum[NK] = {0};
		struct stat_row row[NK];
		for (int k = 0; k < NK; k++)
			ms[k] = xcalloc((size_t)n, sizeof(double));
		for (int i = 0; i < n; i++)
			for (int k = 0; k < NK; k++) {
				double a = now_ms();
				if (k < 4)
					errors += jailed_once(tg[t].ty, tg[t].id, js[k]) != 0;
				else
					errors += ssh_once(tg[t].mux, control) != 0;
				ms[k][i] = now_ms() - a;
				sum[k] += ms[k][i];
			}
		for (int k = 0; k < NK; k++) {
			row[k] = summarize(ms[k], n, sum[k]);
			free(ms[k]);
			printf("%-6s %-18s %10.1f %11.1f %9.1f %13.2fx\n", tg[t].name,
			       k < 4 ? jail_name(js[k]) : "ControlMaster", row[k].per_s, row[k].median,
			       row[k].p90, row[k].median / row[0].median);
		}
		printf("%-6s jailed user tier / ControlMaster: %.2fx (median)\n", tg[t].name,
		       row[1].median / row[4].median);
		fflush(stdout);
	}
	if (errors)
		printf("errors: %d commands failed\n", errors);
	return errors ? 1 : 0;
}

static int once(enum method m, enum target_type ty, int id, const char *cmdline,
                const char *control)
{
	switch (m) {
	case POOLED:
		return pooled_once(ty, id);
	case FRESH:
		return ssh_once(cmdline, NULL);
	default:
		return ssh_once(cmdline, control);
	}
}

/* The methods take turns, one command each per round, so that a busy
 * machine's swings hit them alike; cmds/s is n over the summed latencies. */
static void measure(enum target_type ty, int id, const char *cmdline, const char *control, int n,
                    int methods, struct stat_row *rows, int *errors)
{
	double *ms[NMETHODS], sum[NMETHODS] = {0};

	for (int m = 0; m < methods; m++)
		ms[m] = xcalloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		for (int m = 0; m < methods; m++) {
			double a = now_ms();
			*errors += once((enum method)m, ty, id, cmdline, control) != 0;
			ms[m][i] = now_ms() - a;
			sum[m] += ms[m][i];
		}
	}
	for (int m = 0; m < methods; m++) {
		rows[m] = summarize(ms[m], n, sum[m]);
		free(ms[m]);
	}
}

struct par {
	int n;
	int errors;
};

static void *par_worker(void *arg)
{
	struct par *p = arg;
	for (int i = 0; i < p->n; i++)
		p->errors += pooled_once(TARGET_PROXMOX_HOST, 0) != 0;
	return NULL;
}

/* What one read-only execution needs from the rig, and nothing else: one
 * channel running `echo` in the read-only jail's user tier on the host. */
static void *ceiling_worker(void *arg)
{
	struct par *p = arg;
	for (int i = 0; i < p->n; i++)
		p->errors += jailed_once(TARGET_PROXMOX_HOST, 0, TRANSPORT_JAIL_USER) != 0;
	return NULL;
}

/* The rig's ceiling for airlockd's read-only host executions: `threads`
 * threads over the one pooled session, n commands each. */
static int bench_ceiling(int n, int threads)
{
	struct par par[64];
	pthread_t th[64];
	int errors = 0;
	double t0 = now_ms();

	if (threads < 1 || threads > 64)
		threads = 8;
	for (int i = 0; i < threads; i++) {
		par[i].n = n;
		par[i].errors = 0;
		pthread_create(&th[i], NULL, ceiling_worker, &par[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		errors += par[i].errors;
	}
	printf("transport ceiling: %d jailed host commands, %d threads, one session: %.1f cmds/s "
	       "(%d failed)\n",
	       threads * n, threads, threads * n / ((now_ms() - t0) / 1000.0), errors);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct transport_config cfg = {.jail_helper = "build/bin/airlock-jail"};
	char err[256];
	int n = argc > 1 ? atoi(argv[1]) : 30;
	const char *control = argc > 2 ? argv[2] : NULL;
	/* The one shell's line for `true`, as the transport sends it (shell.h). */
	static char host[1024], vm[1024], ct[1024];
	struct buf one = BUF_INIT;
	shell_line(&one, "1.1.1", "true");
	snprintf(host, sizeof(host), "AIRLOCK_EXEC_ID=1.1.1 %s", buf_str(&one));
	/* as the transport sends it: the agent check, then the exec, one line */
	snprintf(vm, sizeof(vm),
	         "qm agent 101 ping || { echo 'airlock: no answer to qm agent ping; qm guest exec "
	         "was not started' >&2; exit 1; }; exec qm guest exec 101 --timeout 30 -- %s",
	         buf_str(&one));
	/* as the transport sends it: the status check, then the exec, one line */
	snprintf(ct, sizeof(ct),
	         "s=$(pct status 201) || exit 255; echo \"$s\"; [ \"$s\" = 'status: running' ] || "
	         "exit 255; AIRLOCK_EXEC_ID=1.1.1 pct exec 201 -- %s",
	         buf_str(&one));
	buf_free(&one);
	const struct {
		const char *name;
		enum target_type ty;
		int id;
		const char *cmdline;
	} targets[] = {
	    {"host", TARGET_PROXMOX_HOST, 0, host},
	    {"vm101", TARGET_VM, 101, vm},
	    {"ct201", TARGET_LXC, 201, ct},
	};
	int errors = 0;

	if (control == NULL) {
		fprintf(stderr, "usage: transport_bench N CONTROL_PATH [vm|jail]\n"
		                "       transport_bench N - ceiling THREADS\n");
		return 2;
	}
	log_set_level(LOG_ERROR);
	cfg.private_key = env("AIRLOCK_RIG_SSH_KEY");
	cfg.known_hosts = env("AIRLOCK_RIG_KNOWN_HOSTS");
	T = transport_new(&cfg, err, sizeof(err));
	if (T == NULL) {
		fprintf(stderr, "transport_bench: %s\n", err);
		return 2;
	}
	node.name = env("AIRLOCK_RIG_NODE");
	node.address = env("AIRLOCK_RIG_SSH_HOST");
	node.port = atoi(env("AIRLOCK_RIG_SSH_PORT"));
	node.user = env("AIRLOCK_RIG_SSH_USER");
	pooled_once(TARGET_PROXMOX_HOST, 0); /* the session's one handshake */

	if (argc > 4 && strcmp(argv[3], "ceiling") == 0) {
		int rc = bench_ceiling(n, atoi(argv[4]));
		transport_free(T);
		return rc;
	}
	if (argc > 3 && strcmp(argv[3], "jail") == 0) {
		int rc = bench_jail(n, control);
		transport_free(T);
		return rc;
	}
	printf("%-6s %-22s %10s %11s %9s\n", "target", "method", "cmds/s", "median ms", "p90 ms");
	bool vm_only = argc > 3 && strcmp(argv[3], "vm") == 0;
	for (size_t t = 0; t < 3; t++) {
		if (vm_only && targets[t].ty != TARGET_VM)
			continue;
		static const char *names[] = {"pooled (libssh2)", "fresh ssh per command",
		                              "ssh ControlMaster"};
		struct stat_row row[NMETHODS];
		int methods = NMETHODS;

		measure(targets[t].ty, targets[t].id, targets[t].cmdline, control, n, methods, row,
		        &errors);
		for (int m = 0; m < methods; m++)
			printf("%-6s %-22s %10.1f %11.1f %9.1f\n", targets[t].name, names[m],
			       row[m].per_s, row[m].median, row[m].p90);
		printf("%-6s ratio cmds/s: pooled/fresh %.1fx, pooled/ControlMaster %.2fx; "
		       "median latency: fresh/pooled %.1fx, ControlMaster/pooled %.2fx\n",
		       targets[t].name, row[POOLED].per_s / row[FRESH].per_s,
		       row[POOLED].per_s / row[MUX].per_s, row[FRESH].median / row[POOLED].median,
		       row[MUX].median / row[POOLED].median);
		fflush(stdout);
	}

	if (vm_only) {
		transport_free(T);
		return errors ? 1 : 0;
	}
	/* Throughput with 8 threads sharing the one session (host). */
	enum { THREADS = 8 };
	struct par par[THREADS];
	pthread_t th[THREADS];
	double t0 = now_ms();
	for (int i = 0; i < THREADS; i++) {
		par[i].n = n;
		par[i].errors = 0;
		pthread_create(&th[i], NULL, par_worker, &par[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		errors += par[i].errors;
	}
	printf("host   pooled, %d threads      %10.1f cmds/s over one session\n", THREADS,
	       THREADS * n / ((now_ms() - t0) / 1000.0));
	struct transport_stats st;
	transport_stats(T, node.name, &st);
	printf("sessions opened by the pooled transport: %ld (channels: %ld)\n", st.sessions_opened,
	       st.channels_opened);
	transport_free(T);
	if (errors) {
		printf("errors: %d commands failed\n", errors);
		return 1;
	}
	return 0;
}
