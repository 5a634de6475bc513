/* webhookfmt.h -- one notification, in the shape a webhook's receiver takes.
 *
 * Pure: builds the HTTP request (method, URL, headers, body) and signs it;
 * notify.c sends it.  Every text a person reads (the chat line, a title) came
 * partly from an agent, so it is rendered with visible_text() first: no
 * terminal control, bidi override or invisible character reaches a screen,
 * and a chat's own markup in a command (Slack's <!channel>, Markdown links,
 * @-mentions) is neutralised per format.  The data fields of the generic
 * JSON format keep the exact values for programs.
 *
 * Signature: when the webhook has a secret, the request carries
 *   X-Airlock-Timestamp: <unix seconds>
 *   X-Airlock-Signature: sha256=<hex HMAC-SHA256(secret, timestamp "." body)>
 * (docs/operators.md says how a receiver verifies it). */
#ifndef AIRLOCK_WORKER_WEBHOOKFMT_H
#define AIRLOCK_WORKER_WEBHOOKFMT_H

#include "worker/config.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

/* One event about a request (fields NULL when unknown), or a detection that
 * has no request (raw set: the message as the prober posted it). */
struct wh_event {
	const char *event;      /* pending_approval, approved, ..., reminder, escalation */
	long long execution_id; /* 0: none */
	const char *target, *command, *cls, *reasons, *requested_by, *state;
	const char *rewind_status, *error, *decided_by, *decision_reason;
	const char *pending_since, *expires_at, *at;
	const char *output_hold; /* output_held: what was held and where (no output bytes) */
	int exit_code;
	int has_exit_code;
	const cJSON *raw;
};

#define WH_MAX_HEADERS 8

struct wh_request {
	char *method; /* "POST" or "PUT" */
	char *url;
	char *body;
	char *headers[WH_MAX_HEADERS]; /* "Name: value" */
	int nheaders;
};

/* Builds the request for webhook h.  base_url may be NULL (no link);
 * delivery names the attempt's delivery (a Matrix transaction id, so a retry
 * is not posted twice); now is the signature's timestamp.  Always succeeds;
 * free with wh_request_clear(). */
void webhookfmt_build(const struct config_webhook *h, const char *base_url,
                      const struct wh_event *e, const char *delivery, time_t now,
                      struct wh_request *out);
void wh_request_clear(struct wh_request *r);

/* "sha256=<64 hex>" of HMAC-SHA256(key, timestamp "." body); caller frees. */
char *webhookfmt_signature(const char *key, size_t keylen, const char *timestamp, const char *body);

/* The request page's address, <base_url>/requests/<id> (one slash between);
 * NULL when base_url is NULL or id is 0.  Caller frees. */
char *webhookfmt_link(const char *base_url, long long id);

#endif
