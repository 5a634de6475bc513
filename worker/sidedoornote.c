/* sidedoornote.c -- side_door notices, rate-limited per agent host. */
#include "worker/sidedoornote.h"

#include "lib/buf.h"
#include "lib/log.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *sidedoor_notice(const char *host_key, const char *hosts, const char *agents, int denials,
                       int asks, int open_reports, const char *last_at, const char *last_detail)
{
	cJSON *m = cJSON_CreateObject();
	struct buf t = BUF_INIT, who = BUF_INIT;
	bool local = strcmp(host_key, "local") == 0;

	/* "agent host web-ci (10.0.0.5)": the name it gave, the address seen */
	buf_puts(&who, "agent host ");
	if (hosts[0] != '\0')
		buf_printf(&who, "%.200s (%s)", hosts, local ? "local socket" : host_key);
	else
		buf_puts(&who, local ? "on a local socket" : host_key);
	cJSON_AddStringToObject(m, "event", "side_door");
	cJSON_AddStringToObject(m, "entity", buf_str(&who));
	cJSON_AddStringToObject(m, "client_addr", local ? "" : host_key);
	cJSON_AddStringToObject(m, "hosts", hosts);
	cJSON_AddStringToObject(m, "agents", agents);
	cJSON_AddNumberToObject(m, "denials", denials);
	cJSON_AddNumberToObject(m, "asks", asks);
	cJSON_AddNumberToObject(m, "open_reports", open_reports);
	cJSON_AddStringToObject(m, "at", last_at);
	cJSON_AddStringToObject(m, "detail", last_detail ? last_detail : "");
	cJSON_AddStringToObject(m, "provenance", "reported by the agent's host, not verified");
	buf_printf(&t, "airlock: side door on %s", buf_str(&who));
	if (agents[0] != '\0')
		buf_printf(&t, ", login %.200s", agents);
	buf_puts(&t, ":");
	if (denials > 0)
		buf_printf(&t, " %d hook denial(s)", denials);
	if (asks > 0)
		buf_printf(&t, "%s %d ask(s)", denials > 0 ? "," : "", asks);
	if (open_reports > 0)
		buf_printf(&t, "%s %d side-door check(s) with an open door",
		           denials + asks > 0 ? "," : "", open_reports);
	buf_puts(&t, " since the last notice");
	if (last_detail != NULL && last_detail[0] != '\0')
		buf_printf(&t, "; latest: %.400s", last_detail);
	buf_puts(&t, " -- reported by the agent's host, not verified; see `airlock side-door`.");
	cJSON_AddStringToObject(m, "text", buf_str(&t));
	buf_free(&t);
	buf_free(&who);
	return m;
}

int sidedoor_notify(struct store *db, struct notifier *n)
{
	char iv[16], lq[300], lq2[300];
	struct store_res *r;
	int posted = 0;

	snprintf(iv, sizeof(iv), "%d", notifier_side_door_interval_s(n));
	r = store_exec(db,
	               "SELECT host_key, hosts, agents, denials, asks, open_reports, "
	               " to_char(last_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
	               " coalesce(last_detail, '') "
	               "FROM airlock.side_door_due($1::integer)",
	               1, (const char *const[]){iv});
	if (r == NULL) {
		log_msg(LOG_WARN, "evt=probe.side_door_failed error=%s",
		        log_quote(store_errmsg(db), lq, sizeof(lq)));
		return -1;
	}
	for (int i = 0; i < store_nrows(r); i++) {
		int denials = atoi(store_get(r, i, 3)), asks = atoi(store_get(r, i, 4)),
		    open = atoi(store_get(r, i, 5));

		notifier_post(n, NULL,
		              sidedoor_notice(store_get(r, i, 0), store_get(r, i, 1),
		                              store_get(r, i, 2), denials, asks, open,
		                              store_get(r, i, 6), store_get(r, i, 7)));
		log_msg(LOG_WARN,
		        "evt=probe.side_door host=%s reported_as=%s denials=%d asks=%d open=%d",
		        log_quote(store_get(r, i, 0), lq, sizeof(lq)),
		        log_quote(store_get(r, i, 1), lq2, sizeof(lq2)), denials, asks, open);
		posted++;
	}
	store_clear(r);
	return posted;
}
