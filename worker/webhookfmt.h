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
 * has no request (raw set: the message as the prober posted it).  The links
 * come from the database (airlock.console_url() builds every console
 * address); NULL when no console address is known. */
struct wh_event {
	const char *event;      /* pending_approval, approved, ..., reminder, escalation */
	long long execution_id; /* 0: none */
	const char *target, *command, *cls, *reasons, *requested_by, *state;
	const char *rewind_status, *error, *decided_by, *decision_reason;
	const char *pending_since, *expires_at, *at;
	const char *output_hold; /* output_held: what was held and where (no output bytes) */
	const char *action;      /* what the agent said the change is for */
	const char *votes;       /* "1/2": approvals that count, of those needed */
	const char *request_url; /* the request's page on the console */
	/* While the request waits for a decision: the signed single-use links to
	 * the console's confirmation page (/a/TOKEN), bound to the hook's
	 * operator; and where a Mattermost button calls the console back. */
	const char *approve_url, *reject_url, *mattermost_callback_url;
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

/* Builds the request for webhook h.  delivery names the attempt's delivery
 * (a Matrix transaction id, so a retry is not posted twice); now is the
 * signature's timestamp.  Always succeeds; free with wh_request_clear().
 *
 * Action links never decide by themselves: each opens the console's
 * confirmation page, which needs the operator's own sign-in.  A Slack or
 * Mattermost webhook with chat_callback gets buttons that call airlock-web
 * back instead (Slack: the button's value is the link's token; Mattermost:
 * the integration context holds the token and its HMAC-SHA256 under the
 * webhook's secret), so that the console can answer the chat user who
 * pressed it with a link for their own login. */
void webhookfmt_build(const struct config_webhook *h, const struct wh_event *e,
                      const char *delivery, time_t now, struct wh_request *out);
void wh_request_clear(struct wh_request *r);

/* "sha256=<64 hex>" of HMAC-SHA256(key, timestamp "." body); caller frees. */
char *webhookfmt_signature(const char *key, size_t keylen, const char *timestamp, const char *body);

/* The token of an action link (what follows its last "/a/"), or NULL;
 * borrowed from url. */
const char *webhookfmt_link_token(const char *url);

#endif
