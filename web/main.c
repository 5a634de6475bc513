/* main.c -- airlock-web: the operator's console over HTTPS. */
#include "lib/log.h"
#include "lib/paths.h"
#include "web/config.h"
#include "web/server.h"

#include <curl/curl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *default_config(void)
{
	size_t n = strlen(paths_confdir()) + sizeof("/airlock-web.yaml");
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/airlock-web.yaml", paths_confdir());
	return p;
}

static void usage(FILE *f, const char *dflt)
{
	fprintf(f,
	        "usage: airlock-web [-c CONFIG] [-n]\n"
	        "  -c, --config FILE  the configuration (default $AIRLOCK_WEB_CONFIG, else\n"
	        "                     %s); every key: airlock-web(1)\n"
	        "  -n, --check        validate the configuration and exit (0 valid, 1 not)\n"
	        "Operators sign in with their own PostgreSQL login and password (and a\n"
	        "one-time code once enrolled with `airlock operator totp enroll`); every\n"
	        "action runs as that login.  HTTPS with tls_cert and tls_key; plain HTTP only\n"
	        "on a loopback address, behind a TLS proxy.  airlock-web's own login\n"
	        "(database:, a member of airlock_web) takes its password from PGPASSFILE or\n"
	        "PGPASSWORD, never the config.  SIGTERM/SIGINT stop it.\n",
	        dflt);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"check", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *dflt = default_config();
	const char *path = getenv("AIRLOCK_WEB_CONFIG");
	struct web_config cfg;
	struct web_server *srv;
	char err[1024];
	int check = 0, c, rc = 1;

	sigset_t stop;
	int sig;

	/* SIGTERM and SIGINT are blocked in every thread (the server's threads
	 * inherit the mask) and taken by sigwait() in this one, so a stop is
	 * never delivered to a thread that would ignore it. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (path == NULL)
		path = dflt;
	while ((c = getopt_long(argc, argv, "c:nh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'h':
			usage(stdout, dflt);
			free(dflt);
			return 0;
		default:
			usage(stderr, dflt);
			free(dflt);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr, dflt);
		free(dflt);
		return 2;
	}
	if (web_config_load(path, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "airlock-web: invalid configuration: %s\n", err);
		free(dflt);
		return 1;
	}
	free(dflt);
	if (check) {
		printf("airlock-web: %s is valid\n", path);
		web_config_free(&cfg);
		return 0;
	}
	log_set_level((enum log_level)cfg.log_level);
	/* Before any thread: a chat's answer goes out with libcurl. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	srv = web_server_start(&cfg, err, sizeof(err));
	if (srv == NULL) {
		log_msg(LOG_ERROR, "evt=web.start_failed error=\"%s\"", err);
		fprintf(stderr, "airlock-web: %s\n", err);
		goto out;
	}
	log_msg(LOG_INFO, "evt=web.started listen=%s:%d tls=%s", cfg.listen_host, cfg.listen_port,
	        cfg.tls_cert ? "on" : "off");
	while (sigwait(&stop, &sig) != 0)
		;
	log_msg(LOG_INFO, "evt=web.stopping signal=%d", sig);
	web_server_stop(srv);
	rc = 0;
out:
	curl_global_cleanup();
	web_config_free(&cfg);
	return rc;
}
