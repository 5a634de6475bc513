/* main.c -- airlockd: the daemon that moves rows from received to final. */
#include "lib/deadline.h"
#include "store/conninfo.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/redact.h"
#include "lib/xalloc.h"
#include "worker/config.h"
#include "worker/daemon.h"
#include "worker/probe.h"
#include "worker/target.h"

#include <curl/curl.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set by the handlers, which may run on any thread: lock-free atomics, which
 * a handler may store to and the main loop reads without a race. */
static atomic_bool stop_requested;
static atomic_bool reload_requested;
_Static_assert(ATOMIC_BOOL_LOCK_FREE == 2, "signal flags must be lock-free atomics");

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&stop_requested, true);
}

static void on_hup(int sig)
{
	(void)sig;
	atomic_store(&reload_requested, true);
}

/* --probe-once: one round of the scheduler's probes on this thread. */
static int probe_round(const struct config *cfg)
{
	char err[1024];
	struct targets *t;
	int64_t t0 = deadline_now_ms();
	int n, unhealthy = 0;

	if (cfg->scheduler_database == NULL) {
		fprintf(stderr, "airlockd: --probe-once needs scheduler_database in the config\n");
		return 1;
	}
	t = targets_new(cfg, err, sizeof(err));
	if (t == NULL) {
		fprintf(stderr, "airlockd: %s\n", err);
		return 1;
	}
	n = prober_round_report(cfg->scheduler_database, targets_transport(t), stdout, &unhealthy);
	targets_free(t);
	if (n < 0) {
		fprintf(stderr, "airlockd: the probe round could not use scheduler_database (see "
		                "the log)\n");
		return 1;
	}
	printf("probe round: entities=%d unhealthy=%d ms=%lld\n", n, unhealthy,
	       (long long)(deadline_now_ms() - t0));
	return unhealthy == 0 ? 0 : 1;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: airlockd [-c CONFIG] [-n | --probe-once] [--grace SECONDS] [--db CONNINFO]\n"
	    "  -c, --config FILE  the configuration (default $AIRLOCK_CONFIG, else\n"
	    "                     %s); every key: airlockd(8)\n"
	    "  -n, --check        validate the configuration and exit (0 valid, 1 not)\n"
	    "      --probe-once   run one round of the scheduler's probes (needs\n"
	    "                     scheduler_database), record it as the daemon would,\n"
	    "                     print one line per entity, and exit: 0 all healthy,\n"
	    "                     1 a failure or an unhealthy entity\n"
	    "      --grace S      on SIGTERM/SIGINT, let running commands finish for S\n"
	    "                     seconds (default 30), then cancel and record them\n"
	    "      --db CONNINFO  the worker's database (overrides database: in the\n"
	    "                     config; else AIRLOCK_DB, else the PG* environment)\n"
	    "Signals: SIGHUP re-reads the config (the old one stays if the new one is\n"
	    "invalid); SIGTERM/SIGINT stop claiming and shut down cleanly.\n"
	    "The database password comes from PGPASSFILE or PGPASSWORD, never the config.\n"
	    "Under systemd (Type=notify) it reports READY=1, STOPPING=1 and the watchdog.\n"
	    "At start it refuses a database schema older or newer than it understands.\n"
	    "Notifications go to the config's webhooks (signed, retried); a metrics:\n"
	    "section serves Prometheus metrics on GET /metrics (loopback by default).\n",
	    paths_daemon_config());
}

int main(int argc, char **argv)
{
	char lq[512];
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"check", no_argument, NULL, 'n'},
	    {"grace", required_argument, NULL, 'g'},
	    {"db", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {"probe-once", no_argument, NULL, 'p'},
	    {NULL, 0, NULL, 0},
	};
	const char *path = getenv("AIRLOCK_CONFIG");
	const char *db = NULL;
	int check = 0, probe_once = 0, grace = 30, c;
	char err[1024];

	/* First of all: the handlers only set flags, and a SIGHUP or SIGTERM that
	 * arrives while the daemon is still starting must not end it. */
	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (path == NULL)
		path = paths_daemon_config();
	while ((c = getopt_long(argc, argv, "c:nh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'd':
			db = optarg;
			break;
		case 'p':
			probe_once = 1;
			break;
		case 'g':
			grace = atoi(optarg);
			if (grace < 0 || grace > 86400) {
				fprintf(stderr, "airlockd: --grace takes 0..86400 seconds\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || (check && probe_once)) {
		usage(stderr);
		return 2;
	}
	struct config *cfg = config_load(path, err, sizeof(err));
	if (cfg == NULL) {
		fprintf(stderr, "airlockd: invalid configuration: %s\n", err);
		return 1;
	}
	if (db && conninfo_has_password(db)) {
		fprintf(stderr, "airlockd: --db must not contain a password (it would show in the "
		                "process list); use PGPASSFILE or PGPASSWORD\n");
		config_free(cfg);
		return 2;
	}
	if (db) {
		free(cfg->database);
		cfg->database = xstrdup(db);
	}
	/* URLs go to the terminal and the log without what may be secret. */
	char *zurl = cfg->zerto_url ? redact_url(cfg->zerto_url) : xstrdup("not configured");
	if (check) {
		printf("airlockd: %s is valid (worker_id %s, %d workers, zerto %s, %d webhooks)\n",
		       path, cfg->worker_id, cfg->workers, zurl, cfg->nwebhooks);
		free(zurl);
		config_free(cfg);
		return 0;
	}
	/* verify_tls: false is logged as evt=zerto.tls_unverified by the ZVM
	 * client the daemon makes at start (zerto/client.c): one name, one line. */
	free(zurl);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (probe_once) {
		int rc = probe_round(cfg);
		config_free(cfg);
		curl_global_cleanup();
		return rc;
	}

	struct daemon *d = daemon_new(cfg, err, sizeof(err));
	if (d == NULL)
		fatal("evt=daemon.start_failed error=%s", log_quote(err, lq, sizeof(lq)));
	int rc = daemon_run(d, &stop_requested, &reload_requested, grace);
	daemon_free(d);
	curl_global_cleanup();
	return rc == 0 ? 0 : 1;
}
