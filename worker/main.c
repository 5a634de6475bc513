/* main.c -- airlockd: the daemon that moves rows from received to final. */
#include "store/conninfo.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/redact.h"
#include "lib/xalloc.h"
#include "worker/config.h"
#include "worker/daemon.h"

#include <curl/curl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t reload_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: airlockd [-c CONFIG] [-n] [--grace SECONDS] [--db CONNINFO]\n"
	        "  -c, --config FILE  the configuration (default $AIRLOCK_CONFIG, else\n"
	        "                     %s); every key: airlockd(8)\n"
	        "  -n, --check        validate the configuration and exit (0 valid, 1 not)\n"
	        "      --grace S      on SIGTERM/SIGINT, let running commands finish for S\n"
	        "                     seconds (default 30), then cancel and record them\n"
	        "      --db CONNINFO  the worker's database (overrides database: in the\n"
	        "                     config; else AIRLOCK_DB, else the PG* environment)\n"
	        "Signals: SIGHUP re-reads the config (the old one stays if the new one is\n"
	        "invalid); SIGTERM/SIGINT stop claiming and shut down cleanly.\n"
	        "The database password comes from PGPASSFILE or PGPASSWORD, never the config.\n"
	        "Under systemd (Type=notify) it reports READY=1, STOPPING=1 and the watchdog.\n"
	        "At start it refuses a database schema older or newer than it understands.\n",
	        paths_daemon_config());
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 'n'},
	    {"grace", required_argument, NULL, 'g'},  {"db", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *path = getenv("AIRLOCK_CONFIG");
	const char *db = NULL;
	int check = 0, grace = 30, c;
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
	if (optind != argc) {
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
	if (!cfg->zerto_verify_tls && cfg->zerto_url)
		log_msg(LOG_WARN,
		        "evt=zerto.tls_verification_off url=%s note=\"verify_tls: false in "
		        "the config; the ZVM's certificate is NOT checked\"",
		        zurl);
	free(zurl);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	struct daemon *d = daemon_new(cfg, err, sizeof(err));
	if (d == NULL)
		fatal("evt=start_failed error=\"%s\"", err);
	int rc = daemon_run(d, &stop_requested, &reload_requested, grace);
	daemon_free(d);
	curl_global_cleanup();
	return rc == 0 ? 0 : 1;
}
