/* recover.c -- `airlock recover` (ask to restore guest files from a rewind
 * point) and `airlock flr list|end` (the ZVM's file-level restore sessions,
 * for clearing a stuck one). */
#include "cli/recover.h"

#include "cli/cli.h"
#include "lib/paths.h"
#include "lib/xalloc.h"
#include "worker/config.h"
#include "worker/guard.h"
#include "zerto/api.h"
#include "zerto/flr.h"
#include "zerto/policy.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *recover_usage =
    "airlock recover --vm SLUG (--from-execution ID | --checkpoint ID_OR_TAG)\n"
    "                [--no-keep] [--change-id ID] [--json] [--db CONNINFO] PATH...";

int cli_recover(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"vm", required_argument, NULL, 'v'},
	    {"from-execution", required_argument, NULL, 'e'},
	    {"checkpoint", required_argument, NULL, 'k'},
	    {"no-keep", no_argument, NULL, 'n'},
	    {"change-id", required_argument, NULL, 'c'},
	    {"json", no_argument, NULL, 'j'},
	    {"db", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *vm = NULL, *from = NULL, *cp = NULL, *change = NULL, *db = NULL;
	bool keep = true, json = false;
	cJSON *paths = NULL;
	char *pj = NULL;
	struct store *s = NULL;
	struct store_res *res = NULL;
	int c, rc = CLI_USAGE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			vm = optarg;
			break;
		case 'e':
			from = optarg;
			break;
		case 'k':
			cp = optarg;
			break;
		case 'n':
			keep = false;
			break;
		case 'c':
			change = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'd':
			db = optarg;
			break;
		case 'h':
			printf("usage: %s\n"
			       "Asks to restore each guest PATH (absolute: /etc/app.conf) on VM "
			       "SLUG as it\n"
			       "was at a rewind point: the checkpoints taken before execution ID\n"
			       "(--from-execution; the VM is that execution's target), or a Zerto\n"
			       "checkpoint named by its id or its tag (--checkpoint).  The request "
			       "is\n"
			       "always held for an operator, who is shown the checkpoint, its "
			       "time, the\n"
			       "VPG and its recovery site; you cannot approve your own request.  "
			       "Each\n"
			       "current file is kept beside it as PATH.airlock-<id> unless "
			       "--no-keep.\n"
			       "Prints the execution id; `airlock show ID` follows it.\n",
			       recover_usage);
			return CLI_OK;
		default:
			fprintf(stderr, "usage: %s\n", recover_usage);
			return CLI_USAGE;
		}
	}
	if (optind >= argc || (from == NULL) == (cp == NULL) || (from == NULL && vm == NULL)) {
		fprintf(stderr, "usage: %s\n", recover_usage);
		return CLI_USAGE;
	}
	if (from != NULL && from[strspn(from, "0123456789")] != '\0') {
		fprintf(stderr, "airlock recover: --from-execution takes an execution id\n");
		return CLI_USAGE;
	}
	paths = cJSON_CreateArray();
	for (int i = optind; i < argc; i++)
		cJSON_AddItemToArray(paths, cJSON_CreateString(argv[i]));
	pj = cJSON_PrintUnformatted(paths);
	s = cli_connect_write(db);
	if (s == NULL) {
		rc = CLI_ERROR;
		goto out;
	}
	res = store_exec(
	    s,
	    "SELECT airlock.recover($1, ARRAY(SELECT jsonb_array_elements_text($2::jsonb)),"
	    " $3::bigint, $4, $5::boolean, $6)",
	    6, (const char *const[]){vm, pj, from, cp, keep ? "true" : "false", change});
	if (res == NULL) {
		rc = cli_fail(s, "recover");
		goto out;
	}
	if (json)
		printf("{\"id\":%s}\n", store_get(res, 0, 0));
	else
		printf("%s\n", store_get(res, 0, 0));
	rc = CLI_OK;
out:
	store_clear(res);
	store_close(s);
	cJSON_Delete(paths);
	cJSON_free(pj);
	return rc;
}

static const char *inspect_usage =
    "airlock inspect --vm SLUG (--from-execution ID | --checkpoint ID_OR_TAG)\n"
    "                (--failover-test | --clone) [--json] [--db CONNINFO]\n"
    "       airlock inspect --vm SLUG --stop-test [--json] [--db CONNINFO]";

int cli_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"vm", required_argument, NULL, 'v'},
	    {"from-execution", required_argument, NULL, 'e'},
	    {"checkpoint", required_argument, NULL, 'k'},
	    {"failover-test", no_argument, NULL, 'f'},
	    {"clone", no_argument, NULL, 'C'},
	    {"stop-test", no_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"db", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *vm = NULL, *from = NULL, *cp = NULL, *db = NULL, *action = NULL;
	bool json = false;
	struct store *s = NULL;
	struct store_res *res = NULL;
	int c, rc = CLI_USAGE, nactions = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			vm = optarg;
			break;
		case 'e':
			from = optarg;
			break;
		case 'k':
			cp = optarg;
			break;
		case 'f':
			action = "failover_test";
			nactions++;
			break;
		case 'C':
			action = "clone";
			nactions++;
			break;
		case 's':
			action = "stop_failover_test";
			nactions++;
			break;
		case 'j':
			json = true;
			break;
		case 'd':
			db = optarg;
			break;
		case 'h':
			printf("usage: %s\n"
			       "Operators only.  Asks to inspect a whole VM from a rewind point: a "
			       "Zerto\n"
			       "failover test (a test copy of the VM at its VPG's recovery site, "
			       "running\n"
			       "until --stop-test) or an offsite clone, from the checkpoints taken "
			       "before\n"
			       "execution ID or a checkpoint named by id or tag.  The protected VM "
			       "is not\n"
			       "touched.  Held for another operator's approval like any request; "
			       "`airlock\n"
			       "show ID` follows it.  Live failover and move are never offered.\n",
			       inspect_usage);
			return CLI_OK;
		default:
			fprintf(stderr, "usage: %s\n", inspect_usage);
			return CLI_USAGE;
		}
	}
	if (optind != argc || nactions != 1 || (from == NULL && vm == NULL) ||
	    (strcmp(action, "stop_failover_test") == 0) != (from == NULL && cp == NULL) ||
	    (from != NULL && cp != NULL)) {
		fprintf(stderr, "usage: %s\n", inspect_usage);
		return CLI_USAGE;
	}
	if (from != NULL && from[strspn(from, "0123456789")] != '\0') {
		fprintf(stderr, "airlock inspect: --from-execution takes an execution id\n");
		return CLI_USAGE;
	}
	s = cli_connect_write(db);
	if (s == NULL)
		return CLI_ERROR;
	res = store_exec(s, "SELECT airlock.inspect($1, $2, $3::bigint, $4)", 4,
	                 (const char *const[]){vm, action, from, cp});
	if (res == NULL) {
		rc = cli_fail(s, "inspect");
		goto out;
	}
	if (json)
		printf("{\"id\":%s}\n", store_get(res, 0, 0));
	else
		printf("%s\n", store_get(res, 0, 0));
	rc = CLI_OK;
out:
	store_clear(res);
	store_close(s);
	return rc;
}

/* ---------------------------------------------------------------- flr list|end */

static const char *flr_usage = "airlock flr list [--vm ZERTO_VM_ID] [--json] [--config FILE]\n"
                               "       airlock flr end [--config FILE] SESSION_ID";

static struct zerto_client *flr_client(const char *path, struct config **cfgp)
{
	char err[600];
	struct config *cfg = config_load(path, err, sizeof(err));
	struct zerto_config zc;
	struct zerto_client *z;

	*cfgp = cfg;
	if (cfg == NULL) {
		fprintf(stderr, "airlock flr: %s\n", err);
		return NULL;
	}
	if (cfg->zerto_url == NULL) {
		fprintf(stderr, "airlock flr: %s has no zerto section: no ZVM to ask\n", path);
		return NULL;
	}
	guard_zerto_config(cfg, &zc);
	z = zerto_client_new(&zc, err, sizeof(err));
	if (z == NULL)
		fprintf(stderr, "airlock flr: %s\n", err);
	return z;
}

static int flr_list(struct zerto_client *z, const struct config *cfg, const char *vm, bool json)
{
	struct zerto_flr_session *ss = NULL;
	size_t n = 0;
	struct zerto_err e = {0};
	int64_t now_ms = 0;

	if (zerto_flr_list(z, vm, &ss, &n, &e) < 0) {
		fprintf(stderr, "airlock flr list: %s\n", e.msg);
		return CLI_ERROR;
	}
	if (zerto_server_time(z, &now_ms, &e) < 0)
		now_ms = (int64_t)time(NULL) * 1000;
	cJSON *arr = cJSON_CreateArray();
	if (!json && n > 0)
		printf("%-60s %-27s %-10s %-8s %s\n", "SESSION", "STATUS", "CHECKPOINT", "AGE_S",
		       "VM");
	for (size_t i = 0; i < n; i++) {
		long age = ss[i].mount_ms ? (long)((now_ms - ss[i].mount_ms) / 1000) : -1;
		bool stale = age >= cfg->recover_flr_session_warn_s;

		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "id", ss[i].id);
			cJSON_AddStringToObject(o, "status", ss[i].status);
			cJSON_AddStringToObject(o, "vm_id", ss[i].vm_id);
			cJSON_AddStringToObject(o, "vpg_id", ss[i].vpg_id);
			cJSON_AddStringToObject(o, "checkpoint_id", ss[i].checkpoint_id);
			cJSON_AddNumberToObject(o, "age_s", (double)age);
			cJSON_AddBoolToObject(o, "stale", stale);
			cJSON_AddItemToArray(arr, o);
		} else {
			printf("%-60s %-27s %-10s %-8ld %s%s\n", ss[i].id, ss[i].status,
			       ss[i].checkpoint_id, age, ss[i].vm_id, stale ? "  (stale)" : "");
		}
	}
	if (json) {
		char *out = cJSON_PrintUnformatted(arr);
		printf("%s\n", out);
		cJSON_free(out);
	} else if (n == 0) {
		printf("no file-level restore sessions\n");
	}
	cJSON_Delete(arr);
	zerto_flr_sessions_free(ss, n);
	return CLI_OK;
}

static int flr_end(struct zerto_client *z, const char *id)
{
	struct zerto_err e = {0};
	struct zerto_task t;
	char *task = NULL, sn[32];
	int rc = CLI_ERROR;

	if (zerto_flr_unmount(z, id, &task, &e) < 0) {
		fprintf(stderr, "airlock flr end: %s\n", e.msg);
		return e.http_status == 404 ? CLI_NOT_FOUND : CLI_ERROR;
	}
	if (task[0] == '\0') {
		printf("session %s: unmount accepted (no task given)\n", id);
		free(task);
		return CLI_OK;
	}
	/* Bounded: the unmount task, polled up to 300 ZVM seconds. */
	double scale = zerto_client_time_scale(z);
	for (int i = 0; i < 150; i++) {
		struct zerto_err te = {0};
		if (zerto_get_task(z, task, &t, &te) < 0) {
			fprintf(stderr, "airlock flr end: %s\n", te.msg);
			goto out;
		}
		if (zerto_task_terminal(t.state)) {
			if (t.state == ZERTO_TASK_COMPLETED) {
				printf("session %s: unmounted (task %s)\n", id, task);
				rc = CLI_OK;
			} else {
				fprintf(stderr,
				        "airlock flr end: the unmount task ended %s: %s; the "
				        "session may still be listed\n",
				        zerto_task_state_name(t.state, sn, sizeof(sn)),
				        t.reason[0] ? t.reason : "no reason given");
			}
			zerto_task_clear(&t);
			goto out;
		}
		zerto_task_clear(&t);
		long ms = (long)(2000.0 / scale);
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L + 1000000L};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "airlock flr end: the unmount task %s did not end in time\n", task);
out:
	free(task);
	return rc;
}

int cli_flr(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"vm", required_argument, NULL, 'v'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *path = getenv("AIRLOCK_CONFIG"), *vm = NULL;
	struct config *cfg = NULL;
	struct zerto_client *z = NULL;
	bool json = false;
	int c, rc = CLI_USAGE;

	if (path == NULL || path[0] == '\0')
		path = paths_daemon_config();
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'v':
			vm = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			printf(
			    "usage: %s\n"
			    "Lists the ZVM's file-level restore sessions (all, or one Zerto "
			    "VM's),\n"
			    "with their age; one older than recover.flr_session_warn_s is marked\n"
			    "stale.  `end` unmounts one and waits for the unmount task.  A "
			    "session\n"
			    "left mounted (a failed unmount, a recovery that died) blocks the "
			    "next\n"
			    "recovery of that VM.  Reads the ZVM settings from airlockd's\n"
			    "configuration (FILE, default $AIRLOCK_CONFIG, else %s).\n",
			    flr_usage, paths_daemon_config());
			return CLI_OK;
		default:
			fprintf(stderr, "usage: %s\n", flr_usage);
			return CLI_USAGE;
		}
	}
	if (optind >= argc || (strcmp(argv[optind], "list") == 0 && optind + 1 != argc) ||
	    (strcmp(argv[optind], "end") == 0 && optind + 2 != argc) ||
	    (strcmp(argv[optind], "list") != 0 && strcmp(argv[optind], "end") != 0)) {
		fprintf(stderr, "usage: %s\n", flr_usage);
		return CLI_USAGE;
	}
	z = flr_client(path, &cfg);
	if (z == NULL) {
		rc = CLI_ERROR;
		goto out;
	}
	if (strcmp(argv[optind], "list") == 0)
		rc = flr_list(z, cfg, vm, json);
	else
		rc = flr_end(z, argv[optind + 1]);
out:
	zerto_client_free(z);
	config_free(cfg);
	return rc;
}
