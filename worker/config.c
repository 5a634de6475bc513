/* config.c -- read airlockd's YAML config into a struct config, whole or not at all. */
#include "worker/config.h"

#include "lib/anchor.h"
#include "store/conninfo.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "lib/yamltree.h"

#include <sys/stat.h>

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum field_type { F_STR, F_INT, F_BOOL, F_DOUBLE, F_SIZE, F_LOGLEVEL, F_ONOFF };

struct field {
	const char *section; /* NULL: top level */
	const char *key;
	enum field_type type;
	size_t offset;
	long min, max;
};

#define OFF(f) offsetof(struct config, f)

static const struct field fields[] = {
    {NULL, "worker_id", F_STR, OFF(worker_id), 0, 0},
    {NULL, "database", F_STR, OFF(database), 0, 0},
    {NULL, "scheduler_database", F_STR, OFF(scheduler_database), 0, 0},
    {NULL, "workers", F_INT, OFF(workers), 1, 256},
    {NULL, "per_node", F_INT, OFF(per_node), 1, 256},
    {NULL, "poll_interval_ms", F_INT, OFF(poll_interval_ms), 10, 600000},
    {NULL, "reap_interval_ms", F_INT, OFF(reap_interval_ms), 10, 600000},
    {NULL, "seal_interval_ms", F_INT, OFF(seal_interval_ms), 10, 60000},
    {NULL, "expire_interval_ms", F_INT, OFF(expire_interval_ms), 100, 3600000},
    {NULL, "log_level", F_LOGLEVEL, OFF(log_level), 0, 0},
    {"ssh", "private_key", F_STR, OFF(ssh_private_key), 0, 0},
    {"ssh", "known_hosts", F_STR, OFF(ssh_known_hosts), 0, 0},
    {"ssh", "connect_timeout_ms", F_INT, OFF(ssh_connect_timeout_ms), 100, 600000},
    {"ssh", "keepalive_s", F_INT, OFF(ssh_keepalive_s), 1, 3600},
    {"execution", "command_timeout_s", F_INT, OFF(command_timeout_s), 1, 86400},
    {"execution", "qm_timeout_s", F_INT, OFF(qm_timeout_s), 1, 3600},
    {"execution", "output_cap_bytes", F_SIZE, OFF(output_cap), 1024, 16L << 20},
    {"durability", "allow_fsync_off", F_BOOL, OFF(durability_allow_fsync_off), 0, 0},
    {"durability", "failover", F_BOOL, OFF(durability_failover), 0, 0},
    {"probes", "interval_s", F_INT, OFF(probe_interval_s), 1, 86400},
    {"probes", "discover", F_BOOL, OFF(probe_discover), 0, 0},
    {"audit", "signing_key", F_STR, OFF(audit_signing_key), 0, 0},
    {"audit", "anchor_file", F_STR, OFF(audit_anchor_file), 0, 0},
    {"audit", "every_events", F_INT, OFF(audit_every_events), 1, 1000000},
    {"audit", "every_seconds", F_INT, OFF(audit_every_seconds), 1, 86400},
    {"audit", "syslog", F_BOOL, OFF(audit_syslog), 0, 0},
    {"audit", "hold_mutations", F_BOOL, OFF(audit_hold_mutations), 0, 0},
    {"guard", "reversible_low_without_rewind", F_ONOFF, OFF(reversible_low_without_rewind), 0, 0},
    {"zerto", "url", F_STR, OFF(zerto_url), 0, 0},
    {"zerto", "token_url", F_STR, OFF(zerto_token_url), 0, 0},
    {"zerto", "realm", F_STR, OFF(zerto_realm), 0, 0},
    {"zerto", "grant", F_STR, 0, 0, 0}, /* handled specially */
    {"zerto", "client_id", F_STR, OFF(zerto_client_id), 0, 0},
    {"zerto", "username", F_STR, OFF(zerto_username), 0, 0},
    {"zerto", "secret_file", F_STR, OFF(zerto_secret_file), 0, 0},
    {"zerto", "secret_env", F_STR, OFF(zerto_secret_env), 0, 0},
    {"zerto", "ca_file", F_STR, OFF(zerto_ca_file), 0, 0},
    {"zerto", "verify_tls", F_BOOL, OFF(zerto_verify_tls), 0, 0},
    {"zerto", "connect_timeout_ms", F_INT, OFF(zerto_connect_timeout_ms), 100, 600000},
    {"zerto", "request_timeout_ms", F_INT, OFF(zerto_request_timeout_ms), 100, 600000},
    {"zerto", "time_scale", F_DOUBLE, OFF(zerto_time_scale), 1, 10000},
    {"notifications", "base_url", F_STR, OFF(notify_base_url), 0, 0},
    {"notifications", "remind_after_s", F_INT, OFF(notify_remind_after_s), 0, 604800},
    {"notifications", "escalate_after_s", F_INT, OFF(notify_escalate_after_s), 0, 604800},
    {"notifications", "max_attempts", F_INT, OFF(notify_max_attempts), 1, 100},
    {"notifications", "backoff_ms", F_INT, OFF(notify_backoff_ms), 10, 3600000},
    {"notifications", "backoff_max_ms", F_INT, OFF(notify_backoff_max_ms), 10, 86400000},
    {"notifications", "poll_ms", F_INT, OFF(notify_poll_ms), 10, 60000},
    {"notifications", "side_door_interval_s", F_INT, OFF(notify_side_door_interval_s), 0, 86400},
    {"metrics", "address", F_STR, OFF(metrics_address), 0, 0},
    {"metrics", "port", F_INT, OFF(metrics_port), 1, 65535},
    {"recover", "max_file_bytes", F_SIZE, OFF(recover_max_file_bytes), 1, 64L << 30},
    {"recover", "flr_session_warn_s", F_INT, OFF(recover_flr_session_warn_s), 60, 7 * 86400},
    {"testing", "classify_all_read_only", F_BOOL, OFF(test_classify_all_read_only), 0, 0},
    {"testing", "classify_all_reversible_low", F_STR, 0, 0, 0}, /* handled specially */
    {"jail", "helper", F_STR, OFF(jail_helper), 0, 0},
    {"jail", "memory_bytes", F_SIZE, OFF(jail_memory), 1L << 20, 1L << 40},
    {"jail", "tasks", F_INT, OFF(jail_tasks), 8, 1 << 22},
    {"jail", "cpu_percent", F_INT, OFF(jail_cpu_percent), 1, 100000},
    {"jail", "scratch_bytes", F_SIZE, OFF(jail_scratch), 1L << 20, 1L << 40},
};

/* The test rig's marker: tests/rig/rigctl writes it at the top of the rig. */
#define RIG_MARKER      ".airlock-rig"
#define RIG_MARKER_TEXT "airlock test rig\n"

/* Is this process running against a test rig?  ($AIRLOCK_RIG_ROOT/.airlock-rig) */
static bool test_rig_present(char *why, size_t whylen)
{
	const char *root = getenv("AIRLOCK_RIG_ROOT");
	char path[4096], text[64] = "";

	FILE *f;
	size_t n;

	if (root == NULL || root[0] != '/') {
		snprintf(why, whylen, "AIRLOCK_RIG_ROOT is not set to a test rig");
		return false;
	}
	snprintf(path, sizeof(path), "%s/" RIG_MARKER, root);
	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(why, whylen, "%.200s is not a test rig (no " RIG_MARKER ")", root);
		return false;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (strcmp(text, RIG_MARKER_TEXT) != 0) {
		snprintf(why, whylen, "%.200s does not hold the test rig's marker", path);
		return false;
	}
	return true;
}

static int failf(char *err, size_t errlen, const char *path, const struct yt_node *n,
                 const char *fmt, const char *a, const char *b)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a, b ? b : "");
	snprintf(err, errlen, "%s:%d:%d: %s", path, n ? n->line : 1, n ? n->col : 1, msg);
	return -1;
}

static const struct field *find_field(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field *f = &fields[i];
		if (((f->section == NULL && section == NULL) ||
		     (f->section && section && strcmp(f->section, section) == 0)) &&
		    strcmp(f->key, key) == 0)
			return f;
	}
	return NULL;
}

static int set_field(struct config *c, const struct field *f, const struct yt_node *v,
                     const char *path, char *err, size_t errlen)
{
	char *base = (char *)c;
	char *end;

	if (v->kind != YT_SCALAR)
		return failf(err, errlen, path, v, "%s must be a single value, not a %s", f->key,
		             yt_kind_name(v->kind));
	const char *s = v->scalar;
	switch (f->type) {
	case F_STR:
		if (strcmp(f->key, "grant") == 0) {
			if (strcmp(s, "password") == 0)
				c->zerto_password_grant = true;
			else if (strcmp(s, "client_credentials") == 0)
				c->zerto_password_grant = false;
			else
				return failf(err, errlen, path, v,
				             "grant \"%s\" must be client_credentials or password",
				             s, NULL);
			return 0;
		}
		if (s[0] == '\0')
			return failf(err, errlen, path, v, "%s must not be empty", f->key, NULL);
		free(*(char **)(base + f->offset));
		*(char **)(base + f->offset) = xstrdup(s);
		return 0;
	case F_INT:
	case F_SIZE: {
		errno = 0;
		long x = strtol(s, &end, 10);
		if (errno || *end || s[0] == '\0' || x < f->min || x > f->max) {
			char range[64];
			snprintf(range, sizeof(range), "%ld..%ld", f->min, f->max);
			return failf(err, errlen, path, v, "%s must be an integer in %s", f->key,
			             range);
		}
		if (f->type == F_INT)
			*(int *)(base + f->offset) = (int)x;
		else
			*(size_t *)(base + f->offset) = (size_t)x;
		return 0;
	}
	case F_DOUBLE: {
		errno = 0;
		double x = strtod(s, &end);
		if (errno || *end || s[0] == '\0' || !isfinite(x) || x < f->min || x > f->max)
			return failf(err, errlen, path, v, "%s must be a number from 1 to 10000",
			             f->key, NULL);
		*(double *)(base + f->offset) = x;
		return 0;
	}
	case F_BOOL:
		if (strcmp(s, "true") == 0)
			*(bool *)(base + f->offset) = true;
		else if (strcmp(s, "false") == 0)
			*(bool *)(base + f->offset) = false;
		else
			return failf(err, errlen, path, v, "%s must be true or false", f->key,
			             NULL);
		return 0;
	case F_ONOFF:
		if (strcmp(s, "run") == 0)
			*(bool *)(base + f->offset) = true;
		else if (strcmp(s, "refuse") == 0)
			*(bool *)(base + f->offset) = false;
		else
			return failf(err, errlen, path, v, "%s must be run or refuse", f->key,
			             NULL);
		return 0;
	case F_LOGLEVEL: {
		int lvl = log_level_parse(s);
		if (lvl < 0)
			return failf(err, errlen, path, v,
			             "log_level \"%s\" must be debug, info, warn or error", s,
			             NULL);
		*(int *)(base + f->offset) = lvl;
		return 0;
	}
	}
	return 0;
}

static const char *const format_names[] = {"json",       "ntfy",    "slack",
                                           "mattermost", "discord", "matrix"};

const char *webhook_format_name(enum webhook_format f)
{
	return (size_t)f < sizeof(format_names) / sizeof(format_names[0]) ? format_names[f] : "?";
}

int webhook_format_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcmp(s, format_names[i]) == 0)
			return (int)i;
	return -1;
}

/* What a webhook's events may name. */
static const char *const event_names[] = {"pending_approval",
                                          "approved",
                                          "rejected",
                                          "expired",
                                          "cancelled",
                                          "refused",
                                          "succeeded",
                                          "failed",
                                          "timed_out",
                                          "outcome_unknown",
                                          "reminder",
                                          "output_held",
                                          "change_outside_airlock",
                                          "access_outside_airlock",
                                          "side_door",
                                          "audit_anchor_failed"};

static bool event_known(const char *e)
{
	for (size_t i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++)
		if (strcmp(e, event_names[i]) == 0)
			return true;
	return false;
}

/* A secret from a file only its owner may read; trailing newlines dropped. */
static const char *const webhook_keys[] = {"name",       "url",          "operator",   "timeout_ms",
                                           "format",     "secret_file",  "token_file", "events",
                                           "escalation", "chat_callback"};

static int webhook_check_keys(const struct yt_node *w, const char *path, char *err, size_t errlen)
{
	for (size_t k = 0; k < w->n; k++) {
		const char *key = w->items[2 * k]->scalar;
		bool ok = false;
		for (size_t j = 0; j < sizeof(webhook_keys) / sizeof(webhook_keys[0]); j++)
			ok = ok || strcmp(key, webhook_keys[j]) == 0;
		if (!ok)
			return failf(err, errlen, path, w->items[2 * k],
			             "unknown webhook key \"%s\" (keys: name, url, format, "
			             "secret_file, token_file, events, escalation, operator, "
			             "timeout_ms, chat_callback)%s",
			             key, "");
	}
	return 0;
}

static int webhook_events(struct config_webhook *h, const struct yt_node *v, const char *path,
                          char *err, size_t errlen)
{
	if (v->kind != YT_SEQ || v->n == 0 || v->n > CONFIG_MAX_EVENTS)
		return failf(err, errlen, path, v, "events must be a list of 1..16 event names%s",
		             "", NULL);
	for (size_t i = 0; i < v->n; i++) {
		const struct yt_node *e = v->items[i];
		if (e->kind != YT_SCALAR || !event_known(e->scalar))
			return failf(err, errlen, path, e,
			             "unknown event \"%s\" (pending_approval, approved, rejected, "
			             "expired, cancelled, refused, succeeded, failed, timed_out, "
			             "outcome_unknown, reminder, output_held, "
			             "change_outside_airlock, access_outside_airlock, side_door, "
			             "audit_anchor_failed)%s",
			             e->kind == YT_SCALAR ? e->scalar : "?", "");
		h->events[h->nevents++] = xstrdup(e->scalar);
	}
	return 0;
}

static int load_webhook(struct config *c, struct config_webhook *h, const struct yt_node *w,
                        const char *path, char *err, size_t errlen)
{
	const struct yt_node *v;
	char why[400];

	h->timeout_ms = 5000;
	if (w->kind != YT_MAP)
		return failf(err, errlen, path, w, "each webhook must be a mapping%s", "", NULL);
	if (webhook_check_keys(w, path, err, errlen) < 0)
		return -1;
	v = yt_get(w, "url");
	if (v == NULL || v->kind != YT_SCALAR ||
	    (strncmp(v->scalar, "http://", 7) && strncmp(v->scalar, "https://", 8)))
		return failf(err, errlen, path, v ? v : w,
		             "a webhook needs url: http://... or https://...%s", "", NULL);
	h->url = xstrdup(v->scalar);
	v = yt_get(w, "name");
	if (v && (v->kind != YT_SCALAR || v->scalar[0] == '\0' || strlen(v->scalar) > 64 ||
	          strspn(v->scalar, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "0123456789._-") != strlen(v->scalar)))
		return failf(err, errlen, path, v,
		             "name must be 1..64 letters, digits, '.', '_' or '-'%s", "", NULL);
	h->name = v ? xstrdup(v->scalar) : xasprintf("webhook-%d", c->nwebhooks);
	for (int i = 0; i < c->nwebhooks - 1; i++)
		if (strcmp(c->webhooks[i].name, h->name) == 0)
			return failf(err, errlen, path, v ? v : w,
			             "two webhooks are named \"%s\"; names must differ", h->name,
			             NULL);
	v = yt_get(w, "operator");
	if (v && v->kind == YT_SCALAR)
		h->operator_name = xstrdup(v->scalar);
	v = yt_get(w, "timeout_ms");
	if (v) {
		char *end;
		long t = v->kind == YT_SCALAR ? strtol(v->scalar, &end, 10) : -1;
		if (v->kind != YT_SCALAR || *end || t < 100 || t > 60000)
			return failf(err, errlen, path, v,
			             "timeout_ms must be an integer in 100..60000%s", "", NULL);
		h->timeout_ms = (int)t;
	}
	v = yt_get(w, "format");
	if (v) {
		int f = v->kind == YT_SCALAR ? webhook_format_parse(v->scalar) : -1;
		if (f < 0)
			return failf(err, errlen, path, v,
			             "format \"%s\" must be json, ntfy, slack, mattermost, discord "
			             "or matrix%s",
			             v->kind == YT_SCALAR ? v->scalar : "?", "");
		h->format = (enum webhook_format)f;
	}
	v = yt_get(w, "secret_file");
	if (v) {
		if (v->kind != YT_SCALAR || (h->secret = readfile_secret(v->scalar, &h->secret_len,
		                                                         why, sizeof(why))) == NULL)
			return failf(err, errlen, path, v, "webhook secret_file: %s",
			             v->kind == YT_SCALAR ? why : "must be a path", NULL);
	}
	v = yt_get(w, "token_file");
	if (v) {
		size_t tl;
		if (h->format != WEBHOOK_MATRIX && h->format != WEBHOOK_NTFY)
			return failf(err, errlen, path, v,
			             "token_file is for format: matrix or ntfy (an access token)%s",
			             "", NULL);
		if (v->kind != YT_SCALAR ||
		    (h->token = readfile_secret(v->scalar, &tl, why, sizeof(why))) == NULL)
			return failf(err, errlen, path, v, "webhook token_file: %s",
			             v->kind == YT_SCALAR ? why : "must be a path", NULL);
		if (strpbrk(h->token, "\r\n\t ") || strlen(h->token) != tl)
			return failf(err, errlen, path, v,
			             "webhook token_file must hold one token, no spaces%s", "",
			             NULL);
	} else if (h->format == WEBHOOK_MATRIX) {
		return failf(err, errlen, path, w,
		             "format: matrix needs token_file (the bot's access token) and url "
		             "https://SERVER/_matrix/client/v3/rooms/ROOM/send/m.room.message%s",
		             "", NULL);
	}
	if (h->format == WEBHOOK_MATRIX && strstr(h->url, "/send/m.room.message") == NULL)
		return failf(err, errlen, path, yt_get(w, "url"),
		             "a matrix url ends in /rooms/ROOM/send/m.room.message%s", "", NULL);
	v = yt_get(w, "escalation");
	if (v) {
		if (v->kind != YT_SCALAR ||
		    (strcmp(v->scalar, "true") && strcmp(v->scalar, "false")))
			return failf(err, errlen, path, v, "escalation must be true or false%s", "",
			             NULL);
		h->escalation = strcmp(v->scalar, "true") == 0;
	}
	v = yt_get(w, "chat_callback");
	if (v) {
		if (v->kind != YT_SCALAR ||
		    (strcmp(v->scalar, "true") && strcmp(v->scalar, "false")))
			return failf(err, errlen, path, v, "chat_callback must be true or false%s",
			             "", NULL);
		h->chat_callback = strcmp(v->scalar, "true") == 0;
		if (h->chat_callback && h->format != WEBHOOK_SLACK &&
		    h->format != WEBHOOK_MATTERMOST)
			return failf(
			    err, errlen, path, v,
			    "chat_callback is for format: slack or mattermost (their buttons "
			    "call airlock-web back)%s",
			    "", NULL);
		if (h->chat_callback && h->format == WEBHOOK_MATTERMOST && h->secret == NULL)
			return failf(
			    err, errlen, path, v,
			    "a mattermost webhook with chat_callback needs secret_file: its "
			    "buttons carry a signature airlock-web checks with the same "
			    "secret%s",
			    "", NULL);
	}
	v = yt_get(w, "events");
	if (v) {
		if (h->escalation)
			return failf(err, errlen, path, v,
			             "an escalation webhook gets escalations only; drop events%s",
			             "", NULL);
		if (webhook_events(h, v, path, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int load_webhooks(struct config *c, const struct yt_node *list, const char *path, char *err,
                         size_t errlen)
{
	if (list->kind != YT_SEQ)
		return failf(err, errlen, path, list, "webhooks must be a list%s", "", NULL);
	if (list->n > CONFIG_MAX_WEBHOOKS)
		return failf(err, errlen, path, list, "at most 16 webhooks%s", "", NULL);
	for (size_t i = 0; i < list->n; i++) {
		struct config_webhook *h = &c->webhooks[c->nwebhooks++];
		if (load_webhook(c, h, list->items[i], path, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* ssh.node_keys: {NODE: KEYFILE, ...} -- keys of their own for some nodes. */
static int load_node_keys(struct config *c, const struct yt_node *map, const char *path, char *err,
                          size_t errlen)
{
	if (map->kind != YT_MAP)
		return failf(err, errlen, path, map,
		             "ssh node_keys must be a mapping of node name to key file%s", "",
		             NULL);
	if (map->n > CONFIG_MAX_NODE_KEYS)
		return failf(err, errlen, path, map, "at most 64 node_keys%s", "", NULL);
	for (size_t i = 0; i < map->n; i++) {
		const struct yt_node *k = map->items[2 * i], *v = map->items[2 * i + 1];
		const char *name = k->scalar;
		bool ok = name[0] != '\0' && strlen(name) <= 63;
		for (const char *p = name; ok && *p; p++)
			ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
		if (!ok)
			return failf(err, errlen, path, k,
			             "node_keys: \"%s\" is not a node name (the NAME of "
			             "proxmox-host:NAME)%s",
			             name, "");
		if (v->kind != YT_SCALAR || v->scalar[0] == '\0')
			return failf(err, errlen, path, v, "node_keys: %s needs a key file%s", name,
			             "");
		if (access(v->scalar, R_OK) != 0)
			return failf(err, errlen, path, v, "cannot read ssh key %s%s", v->scalar,
			             " (node_keys)");
		c->ssh_node_keys[c->nssh_node_keys].node = xstrdup(name);
		c->ssh_node_keys[c->nssh_node_keys].private_key = xstrdup(v->scalar);
		c->nssh_node_keys++;
	}
	return 0;
}

static void set_defaults(struct config *c)
{
	char host[256] = "airlockd";

	gethostname(host, sizeof(host) - 1);
	c->worker_id = xasprintf("%s-%d", host, (int)getpid());
	c->workers = 8;
	c->per_node = 4;
	c->poll_interval_ms = 2000;
	c->reap_interval_ms = 2000;
	c->seal_interval_ms = 200;
	c->expire_interval_ms = 10000;
	c->log_level = LOG_INFO;
	c->ssh_connect_timeout_ms = 10000;
	c->ssh_keepalive_s = 15;
	c->command_timeout_s = 600;
	c->qm_timeout_s = 30;
	c->output_cap = 1 << 20;
	c->jail_memory = 512UL << 20;
	c->jail_tasks = 256;
	c->jail_cpu_percent = 100;
	c->jail_scratch = 64UL << 20;
	c->probe_interval_s = 60;
	c->probe_discover = true;
	c->reversible_low_without_rewind = true;
	c->zerto_verify_tls = true;
	c->zerto_connect_timeout_ms = 5000;
	c->zerto_request_timeout_ms = 30000;
	c->zerto_time_scale = 1.0;
	c->recover_max_file_bytes = CONFIG_RECOVER_MAX_FILE_BYTES;
	c->recover_flr_session_warn_s = 3600;
	c->audit_every_events = 100;
	c->audit_every_seconds = 60;
	c->audit_hold_mutations = true;
	c->notify_max_attempts = 8;
	c->notify_backoff_ms = 2000;
	c->notify_backoff_max_ms = 600000;
	c->notify_poll_ms = 1000;
	c->notify_side_door_interval_s = 600;
}

/* The audit section: both files named, and the key one the daemon can sign with. */
static int check_audit(const struct config *c, const char *path, const struct yt_node *a, char *err,
                       size_t errlen)
{
	char why[300];
	struct anchor_key *k;

	if (c->audit_signing_key == NULL || c->audit_anchor_file == NULL)
		return failf(err, errlen, path, a,
		             "audit: signing_key and anchor_file are both required%s", "", NULL);
	k = anchor_key_load_private(c->audit_signing_key, why, sizeof(why));
	if (k == NULL)
		return failf(err, errlen, path, yt_get(a, "signing_key"), "audit signing_key: %s",
		             why, NULL);
	anchor_key_free(k);
	return 0;
}

/* The notifications and metrics sections, against the webhooks. */
static int check_notifications(struct config *c, const char *path, const struct yt_node *root,
                               char *err, size_t errlen)
{
	const struct yt_node *n = yt_get(root, "notifications");
	bool escalation_hook = false;

	if (c->notify_base_url && strncmp(c->notify_base_url, "http://", 7) &&
	    strncmp(c->notify_base_url, "https://", 8))
		return failf(err, errlen, path, yt_get(n, "base_url"),
		             "notifications base_url must be http://... or https://... (the "
		             "console's address; links are <base_url>/r/<id>)%s",
		             "", NULL);
	if (c->notify_backoff_max_ms < c->notify_backoff_ms)
		return failf(err, errlen, path, yt_get(n, "backoff_max_ms"),
		             "notifications backoff_max_ms must be at least backoff_ms%s", "",
		             NULL);
	for (int i = 0; i < c->nwebhooks; i++)
		escalation_hook = escalation_hook || c->webhooks[i].escalation;
	if (escalation_hook && c->notify_escalate_after_s == 0)
		return failf(err, errlen, path, n ? n : root,
		             "a webhook has escalation: true but notifications escalate_after_s "
		             "is not set%s",
		             "", NULL);
	if (c->notify_escalate_after_s > 0 && !escalation_hook)
		return failf(err, errlen, path, yt_get(n, "escalate_after_s"),
		             "escalate_after_s is set but no webhook has escalation: true%s", "",
		             NULL);
	if (c->notify_remind_after_s > 0 && c->notify_escalate_after_s > 0 &&
	    c->notify_escalate_after_s <= c->notify_remind_after_s)
		return failf(err, errlen, path, yt_get(n, "escalate_after_s"),
		             "escalate_after_s must be longer than remind_after_s%s", "", NULL);
	if (yt_get(root, "metrics") && c->metrics_port == 0)
		return failf(err, errlen, path, yt_get(root, "metrics"),
		             "metrics: port is required when the section is present%s", "", NULL);
	if (c->metrics_port && c->metrics_address == NULL)
		c->metrics_address = xstrdup("127.0.0.1");
	return 0;
}

/* testing.classify_all_reversible_low: {writes: [absolute paths]}. */
static int load_test_writes(struct config *c, const struct yt_node *v, const char *path, char *err,
                            size_t errlen)
{
	const struct yt_node *w = yt_get(v, "writes");

	if (v->kind != YT_MAP || w == NULL || w->kind != YT_SEQ || w->n == 0)
		return failf(err, errlen, path, v,
		             "testing.classify_all_reversible_low must be {writes: [path, ...]} "
		             "with at least one absolute path%s",
		             "", NULL);
	if (w->n > CONFIG_MAX_TEST_WRITES)
		return failf(err, errlen, path, w, "at most %s write paths", "32", NULL);
	for (size_t i = 0; i < w->n; i++) {
		const struct yt_node *e = w->items[i];
		if (e->kind != YT_SCALAR || e->scalar[0] != '/')
			return failf(
			    err, errlen, path, e,
			    "a write path must be an absolute path (\"dir/\" for everything "
			    "below dir)%s",
			    "", NULL);
		c->test_writes[c->ntest_writes++] = xstrdup(e->scalar);
	}
	c->test_classify_all_reversible_low = true;
	return 0;
}

/* Checks that hold between fields. */
static int cross_check(struct config *c, const char *path, const struct yt_node *root, char *err,
                       size_t errlen)
{
	const char *dbs[] = {c->database, c->scheduler_database};
	const char *dbkeys[] = {"database", "scheduler_database"};
	for (int i = 0; i < 2; i++)
		if (dbs[i] && conninfo_has_password(dbs[i]))
			return failf(err, errlen, path, yt_get(root, dbkeys[i]),
			             "%s must not contain a password: use PGPASSFILE or PGPASSWORD "
			             "in the daemon's environment%s",
			             dbkeys[i], "");
	if (yt_get(root, "per_node") == NULL && c->per_node > c->workers)
		c->per_node = c->workers; /* the default follows a small worker count */
	if (c->per_node > c->workers)
		return failf(err, errlen, path, yt_get(root, "per_node"),
		             "per_node must not exceed workers%s", "", NULL);
	if (c->ssh_private_key == NULL || c->ssh_known_hosts == NULL)
		return failf(err, errlen, path, yt_get(root, "ssh") ? yt_get(root, "ssh") : root,
		             "ssh: private_key and known_hosts are required%s", "", NULL);
	if (access(c->ssh_private_key, R_OK) != 0)
		return failf(err, errlen, path, yt_get(yt_get(root, "ssh"), "private_key"),
		             "cannot read ssh private_key %s", c->ssh_private_key, NULL);
	if (access(c->ssh_known_hosts, R_OK) != 0)
		return failf(err, errlen, path, yt_get(yt_get(root, "ssh"), "known_hosts"),
		             "cannot read ssh known_hosts %s", c->ssh_known_hosts, NULL);
	if (c->test_classify_all_read_only) {
		char why[300];
		if (!test_rig_present(why, sizeof(why)))
			return failf(
			    err, errlen, path,
			    yt_get(yt_get(root, "testing"), "classify_all_read_only"),
			    "testing.classify_all_read_only turns the approval gate off and "
			    "exists for the test rig only; refused: %s",
			    why, NULL);
	}
	if (c->test_classify_all_reversible_low) {
		char why[300];
		const struct yt_node *at =
		    yt_get(yt_get(root, "testing"), "classify_all_reversible_low");
		if (c->test_classify_all_read_only)
			return failf(
			    err, errlen, path, at,
			    "testing.classify_all_reversible_low and classify_all_read_only "
			    "cannot both be on%s",
			    "", NULL);
		if (!test_rig_present(why, sizeof(why)))
			return failf(
			    err, errlen, path, at,
			    "testing.classify_all_reversible_low turns the approval gate off "
			    "and exists for the test rig only; refused: %s",
			    why, NULL);
	}
	if (c->zerto_url) {
		const struct yt_node *z = yt_get(root, "zerto");
		if (strncmp(c->zerto_url, "https://", 8) != 0)
			return failf(err, errlen, path, yt_get(z, "url"),
			             "zerto url must be https://...%s", "", NULL);
		if (c->zerto_secret_file == NULL && c->zerto_secret_env == NULL)
			return failf(err, errlen, path, z,
			             "zerto needs secret_file or secret_env (secrets never go in "
			             "the config itself)%s",
			             "", NULL);
		if (c->zerto_secret_file && access(c->zerto_secret_file, R_OK) != 0)
			return failf(err, errlen, path, yt_get(z, "secret_file"),
			             "cannot read zerto secret_file %s", c->zerto_secret_file,
			             NULL);
		if (c->zerto_password_grant && c->zerto_username == NULL)
			return failf(err, errlen, path, z, "zerto grant: password needs username%s",
			             "", NULL);
		if (c->zerto_ca_file && access(c->zerto_ca_file, R_OK) != 0)
			return failf(err, errlen, path, yt_get(z, "ca_file"),
			             "cannot read zerto ca_file %s", c->zerto_ca_file, NULL);
	} else if (yt_get(root, "zerto")) {
		return failf(err, errlen, path, yt_get(root, "zerto"),
		             "zerto: url is required when the section is present%s", "", NULL);
	}
	if (check_notifications(c, path, root, err, errlen) < 0)
		return -1;
	if (yt_get(root, "audit"))
		return check_audit(c, path, yt_get(root, "audit"), err, errlen);
	return 0;
}

struct config *config_load(const char *path, char *err, size_t errlen)
{
	char lq[512];
	struct config *c = xcalloc(1, sizeof(*c));
	struct yt_node *root = NULL;
	size_t len;
	char *text;

	set_defaults(c);
	c->path = xstrdup(path);
	text = readfile(path, 1 << 20, &len, err, errlen);
	if (text == NULL)
		goto fail;
	root = yt_parse(text, len, path, err, errlen);
	free(text);
	if (root == NULL)
		goto fail;
	if (root->kind != YT_MAP) {
		failf(err, errlen, path, root, "the config must be a mapping%s", "", NULL);
		goto fail;
	}
	for (size_t i = 0; i < root->n; i++) {
		const struct yt_node *k = root->items[2 * i], *v = root->items[2 * i + 1];
		const struct field *f = find_field(NULL, k->scalar);
		if (f) {
			if (set_field(c, f, v, path, err, errlen) < 0)
				goto fail;
			continue;
		}
		if (strcmp(k->scalar, "webhooks") == 0) {
			if (load_webhooks(c, v, path, err, errlen) < 0)
				goto fail;
			continue;
		}
		if (v->kind == YT_MAP) {
			bool known = false;
			for (size_t j = 0; j < sizeof(fields) / sizeof(fields[0]); j++)
				if (fields[j].section && strcmp(fields[j].section, k->scalar) == 0)
					known = true;
			if (known) {
				for (size_t j = 0; j < v->n; j++) {
					const struct yt_node *sk = v->items[2 * j];
					if (strcmp(k->scalar, "testing") == 0 &&
					    strcmp(sk->scalar, "classify_all_reversible_low") ==
					        0) {
						if (load_test_writes(c, v->items[2 * j + 1], path,
						                     err, errlen) < 0)
							goto fail;
						continue;
					}
					if (strcmp(k->scalar, "ssh") == 0 &&
					    strcmp(sk->scalar, "node_keys") == 0) {
						if (load_node_keys(c, v->items[2 * j + 1], path,
						                   err, errlen) < 0)
							goto fail;
						continue;
					}
					const struct field *sf = find_field(k->scalar, sk->scalar);
					if (sf == NULL) {
						failf(err, errlen, path, sk,
						      "unknown key \"%s\" in %s", sk->scalar,
						      k->scalar);
						goto fail;
					}
					if (set_field(c, sf, v->items[2 * j + 1], path, err,
					              errlen) < 0)
						goto fail;
				}
				continue;
			}
		}
		failf(err, errlen, path, k, "unknown key \"%s\"%s", k->scalar,
		      strcmp(k->scalar, "retry_max") == 0
		          ? " (no longer used: an unreachable node is retried until the "
		            "request's own deadline, the TTL of the gate policy; remove the key)"
		          : NULL);
		goto fail;
	}
	if (cross_check(c, path, root, err, errlen) < 0)
		goto fail;
	if (c->test_classify_all_reversible_low)
		log_msg(LOG_WARN,
		        "evt=config.test_mode path=%s note=\"testing.classify_all_reversible_low: "
		        "every command is classified reversible_low with the configured write set "
		        "and runs unreviewed in the jail's write tier; for the test rig only\"",
		        log_quote(path, lq, sizeof(lq)));
	if (c->test_classify_all_read_only)
		log_msg(LOG_WARN,
		        "evt=config.test_mode path=%s note=\"testing.classify_all_read_only: "
		        "every command is classified read_only and runs unreviewed in the "
		        "jail; for the test rig only\"",
		        log_quote(path, lq, sizeof(lq)));
	yt_free(root);
	return c;
fail:
	yt_free(root);
	config_free(c);
	return NULL;
}

void config_free(struct config *c)
{
	if (c == NULL)
		return;
	char **strs[] = {&c->path,
	                 &c->worker_id,
	                 &c->database,
	                 &c->scheduler_database,
	                 &c->ssh_private_key,
	                 &c->ssh_known_hosts,
	                 &c->zerto_url,
	                 &c->zerto_token_url,
	                 &c->zerto_realm,
	                 &c->zerto_client_id,
	                 &c->zerto_username,
	                 &c->zerto_secret_file,
	                 &c->zerto_secret_env,
	                 &c->zerto_ca_file,
	                 &c->audit_signing_key,
	                 &c->audit_anchor_file,
	                 &c->notify_base_url,
	                 &c->metrics_address,
	                 &c->jail_helper};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		free(*strs[i]);
	for (int i = 0; i < c->nwebhooks; i++)
		config_webhook_clear(&c->webhooks[i]);
	for (int i = 0; i < c->ntest_writes; i++)
		free(c->test_writes[i]);
	for (int i = 0; i < c->nssh_node_keys; i++) {
		free(c->ssh_node_keys[i].node);
		free(c->ssh_node_keys[i].private_key);
	}
	free(c);
}

void config_webhook_copy(struct config_webhook *dst, const struct config_webhook *src)
{
	*dst = *src;
	dst->name = src->name ? xstrdup(src->name) : NULL;
	dst->url = src->url ? xstrdup(src->url) : NULL;
	dst->operator_name = src->operator_name ? xstrdup(src->operator_name) : NULL;
	if (src->secret) {
		dst->secret = xmalloc(src->secret_len + 1);
		memcpy(dst->secret, src->secret, src->secret_len + 1);
	}
	dst->token = src->token ? xstrdup(src->token) : NULL;
	for (int i = 0; i < src->nevents; i++)
		dst->events[i] = xstrdup(src->events[i]);
}

void config_webhook_clear(struct config_webhook *h)
{
	free(h->name);
	free(h->url);
	free(h->operator_name);
	if (h->secret) {
		memset(h->secret, 0, h->secret_len);
		free(h->secret);
	}
	if (h->token) {
		memset(h->token, 0, strlen(h->token));
		free(h->token);
	}
	for (int i = 0; i < h->nevents; i++)
		free(h->events[i]);
	memset(h, 0, sizeof(*h));
}
