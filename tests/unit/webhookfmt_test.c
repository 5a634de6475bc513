/* webhookfmt_test.c -- each receiver's shape, the signature, and hostile
 * text from an agent that must not turn into markup, mentions or controls. */
#include "worker/webhookfmt.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define APPROVE_TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define REJECT_TOKEN  "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static struct config_webhook hook(enum webhook_format f, const char *url)
{
	struct config_webhook h = {
	    .name = "h", .url = (char *)url, .format = f, .timeout_ms = 1000};
	return h;
}

static struct wh_event event(const char *ev, const char *cmd)
{
	struct wh_event e = {.event = ev,
	                     .execution_id = 42,
	                     .target = "proxmox-host:hubris",
	                     .command = cmd,
	                     .cls = "config_mutation",
	                     .reasons = "r1: apt-get install (config_mutation)",
	                     .requested_by = "hermes",
	                     .state = "pending_approval",
	                     .action = "install the NFS server",
	                     .votes = "0/1",
	                     .request_url = "https://c.example/r/42",
	                     .approve_url = "https://c.example/a/" APPROVE_TOKEN,
	                     .reject_url = "https://c.example/a/" REJECT_TOKEN,
	                     .mattermost_callback_url = "https://c.example/chat/mattermost",
	                     .at = "2026-12-01 10:00:00+00"};
	return e;
}

static const char *header(const struct wh_request *r, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < r->nheaders; i++)
		if (strncmp(r->headers[i], name, n) == 0 && r->headers[i][n] == ':')
			return r->headers[i] + n + 2;
	return NULL;
}

static void test_signature_vector(void **state)
{
	(void)state;
	/* Computed independently (Python's hmac module). */
	char *s = webhookfmt_signature("k3y", 3, "1700000000", "{\"a\":1}");
	assert_string_equal(
	    s, "sha256=fd5a70e965043f7df6309c2c3b5ff5a8ffa99b1f5175e9a311459e73c4634d4a");
	free(s);
}

static void test_link_token(void **state)
{
	(void)state;
	assert_string_equal(webhookfmt_link_token("https://c.example/airlock/a/" APPROVE_TOKEN),
	                    APPROVE_TOKEN);
	/* the last /a/ of the address: a base path may hold one too */
	assert_string_equal(webhookfmt_link_token("https://c.example/a/b/a/" REJECT_TOKEN),
	                    REJECT_TOKEN);
	assert_null(webhookfmt_link_token("https://c.example/r/42"));
	assert_null(webhookfmt_link_token("https://c.example/a/"));
	assert_null(webhookfmt_link_token(NULL));
}

static void test_signed_headers(void **state)
{
	(void)state;
	struct config_webhook h = hook(WEBHOOK_JSON, "http://r.example/x");
	struct wh_event e = event("pending_approval", "apt-get install nfs");
	struct wh_request r;

	h.secret = "s3cret";
	h.secret_len = 6;
	webhookfmt_build(&h, &e, "9", 1700000000, &r);
	assert_string_equal(header(&r, "X-Airlock-Timestamp"), "1700000000");
	char *want = webhookfmt_signature("s3cret", 6, "1700000000", r.body);
	assert_string_equal(header(&r, "X-Airlock-Signature"), want);
	free(want);
	assert_string_equal(header(&r, "X-Airlock-Event"), "pending_approval");
	assert_string_equal(r.method, "POST");
	cJSON *b = cJSON_Parse(r.body);
	assert_non_null(b);
	assert_string_equal(cJSON_GetObjectItem(b, "url")->valuestring, "https://c.example/r/42");
	assert_string_equal(cJSON_GetObjectItem(b, "approve_url")->valuestring,
	                    "https://c.example/a/" APPROVE_TOKEN);
	assert_string_equal(cJSON_GetObjectItem(b, "reject_url")->valuestring,
	                    "https://c.example/a/" REJECT_TOKEN);
	assert_string_equal(cJSON_GetObjectItem(b, "command")->valuestring, "apt-get install nfs");
	assert_string_equal(cJSON_GetObjectItem(b, "action")->valuestring,
	                    "install the NFS server");
	assert_string_equal(cJSON_GetObjectItem(b, "votes")->valuestring, "0/1");
	assert_non_null(
	    strstr(cJSON_GetObjectItem(b, "text")->valuestring, "to \"install the NFS server\""));
	cJSON_Delete(b);
	wh_request_clear(&r);
	h.secret = NULL;
	webhookfmt_build(&h, &e, "9", 1700000000, &r);
	assert_null(header(&r, "X-Airlock-Signature"));
	wh_request_clear(&r);
}

/* An output_held event: its text says what was held, where, and how to
 * decide it, in every format; the json format adds output_hold. */
static void test_output_held(void **state)
{
	static const enum webhook_format formats[] = {WEBHOOK_JSON,    WEBHOOK_SLACK,
	                                              WEBHOOK_NTFY,    WEBHOOK_MATTERMOST,
	                                              WEBHOOK_DISCORD, WEBHOOK_MATRIX};
	struct wh_event e = event("output_held", "cat /srv/app/deploy_key");
	struct wh_request r;

	(void)state;
	e.output_hold = "output held: it contains an OpenSSH private key at line 1 of stdout; an "
	                "operator can release it.";
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct config_webhook h = {.url = "https://hooks.example/x", .format = formats[i]};
		webhookfmt_build(&h, &e, "3", 1, &r);
		assert_non_null(strstr(r.body, "an OpenSSH private key at line 1 of stdout"));
		assert_non_null(strstr(r.body, "airlock output release 42"));
		assert_string_equal(header(&r, "X-Airlock-Event"), "output_held");
		if (formats[i] == WEBHOOK_JSON)
			assert_non_null(
			    strstr(r.body, "\"output_hold\":\"output held: it contains"));
		wh_request_clear(&r);
	}
}

static void test_ntfy_and_matrix_addresses(void **state)
{
	(void)state;
	struct config_webhook h = hook(WEBHOOK_NTFY, "https://ntfy.example/sub/alerts?x=1");
	struct wh_event e = event("approved", "ls");
	struct wh_request r;

	h.token = "tk_1";
	webhookfmt_build(&h, &e, "5", 1, &r);
	assert_string_equal(r.url, "https://ntfy.example/sub/?x=1");
	assert_string_equal(header(&r, "Authorization"), "Bearer tk_1");
	cJSON *b = cJSON_Parse(r.body);
	assert_string_equal(cJSON_GetObjectItem(b, "topic")->valuestring, "alerts");
	assert_string_equal(cJSON_GetObjectItem(b, "click")->valuestring, "https://c.example/r/42");
	/* three view actions: open, and the two confirmation pages */
	cJSON *acts = cJSON_GetObjectItem(b, "actions");
	assert_int_equal(cJSON_GetArraySize(acts), 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(
		    cJSON_GetObjectItem(cJSON_GetArrayItem(acts, i), "action")->valuestring,
		    "view");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(acts, 1), "url")->valuestring,
	                    "https://c.example/a/" APPROVE_TOKEN);
	cJSON_Delete(b);
	wh_request_clear(&r);

	h = hook(WEBHOOK_MATRIX,
	         "https://m.example/_matrix/client/v3/rooms/!r:m/send/m.room.message");
	h.token = "syt_tok";
	webhookfmt_build(&h, &e, "77", 1, &r);
	assert_string_equal(r.method, "PUT");
	assert_string_equal(
	    r.url, "https://m.example/_matrix/client/v3/rooms/!r:m/send/m.room.message/airlock-77");
	assert_string_equal(header(&r, "Authorization"), "Bearer syt_tok");
	wh_request_clear(&r);
}

/* Random hostile commands (valid UTF-8, as the database keeps them): markup
 * characters, mentions, controls and bidi, in every format and event: the body is valid JSON, and
 * the human text carries no live markup for its receiver. */
static void test_hostile_generated(void **state)
{
	static const char *const pieces[] = {"@room",
	                                     "@channel",
	                                     "@here",
	                                     "@everyone",
	                                     "<!channel>",
	                                     "<!here>",
	                                     "[x](http://e/)",
	                                     "`",
	                                     "**",
	                                     "_",
	                                     "\x1b]0;t\x07",
	                                     "\r",
	                                     "\n",
	                                     "\xe2\x80\xae",
	                                     "\x01",
	                                     "\\",
	                                     "\"",
	                                     "<",
	                                     ">",
	                                     "&",
	                                     "|",
	                                     "#",
	                                     "apt-get",
	                                     " ",
	                                     "\xc3\xa9",
	                                     "]",
	                                     "(",
	                                     ")"};
	static const char *const events[] = {"pending_approval", "approved",   "rejected",
	                                     "reminder",         "escalation", "failed"};
	(void)state;
	srand(1234);
	for (int round = 0; round < 300; round++) {
		char cmd[600] = "";
		int n = 1 + rand() % 20;
		for (int i = 0; i < n; i++)
			strcat(cmd, pieces[rand() % (sizeof(pieces) / sizeof(pieces[0]))]);
		for (int f = WEBHOOK_JSON; f <= WEBHOOK_MATRIX; f++) {
			struct config_webhook h = hook(
			    (enum webhook_format)f,
			    "https://x.example/_matrix/client/v3/rooms/!r:x/send/m.room.message");
			struct wh_event e = event(events[round % 6], cmd);
			struct wh_request r;
			h.token = "t";
			e.action = cmd; /* what the agent says it is for is the agent's text too */
			webhookfmt_build(&h, &e, "1", 1, &r);
			cJSON *b = cJSON_Parse(r.body);
			assert_non_null(b);
			const char *text = NULL;
			if (f == WEBHOOK_JSON)
				text = cJSON_GetObjectItem(b, "text")->valuestring;
			else if (f == WEBHOOK_NTFY)
				text = cJSON_GetObjectItem(b, "message")->valuestring;
			else if (f == WEBHOOK_SLACK || f == WEBHOOK_MATTERMOST)
				text = cJSON_GetObjectItem(b, "text")->valuestring;
			else if (f == WEBHOOK_DISCORD)
				text = cJSON_GetObjectItem(b, "content")->valuestring;
			else
				text = cJSON_GetObjectItem(b, "body")->valuestring;
			for (const char *p = text; *p; p++)
				if (*p != '\n')
					assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
			assert_null(strstr(text, "\xe2\x80\xae"));
			if (f == WEBHOOK_SLACK) {
				assert_null(strstr(text, "<!"));
				const char *lt = strchr(text, '<');
				/* the only '<' opens the link */
				assert_non_null(lt);
				assert_int_equal(strncmp(lt, "<https://c.example/r/42|", 24), 0);
				assert_null(strchr(lt + 1, '<'));
			}
			if (f == WEBHOOK_MATTERMOST || f == WEBHOOK_DISCORD || f == WEBHOOK_MATRIX)
				assert_null(strchr(text, '@'));
			if (f == WEBHOOK_DISCORD) {
				assert_non_null(cJSON_GetObjectItem(b, "allowed_mentions"));
				assert_null(strstr(text, "](")); /* no unescaped link */
			}
			if (f == WEBHOOK_JSON) {
				assert_string_equal(cJSON_GetObjectItem(b, "command")->valuestring,
				                    cmd);
				assert_string_equal(cJSON_GetObjectItem(b, "action")->valuestring,
				                    cmd);
			}
			cJSON_Delete(b);
			wh_request_clear(&r);
		}
	}
}

/* The action links in each format: links to the confirmation page, or,
 * with chat_callback, buttons that call the console back (Slack: the token
 * as the button's value; Mattermost: the token and its HMAC in the
 * integration's context).  None is an HTTP action that would decide. */
static void test_action_links(void **state)
{
	struct wh_event e = event("pending_approval", "apt-get install nfs");
	struct wh_request r;
	cJSON *b, *els, *acts;

	(void)state;
	struct config_webhook h = hook(WEBHOOK_SLACK, "https://hooks.slack.example/T/B/x");
	webhookfmt_build(&h, &e, "1", 1, &r);
	b = cJSON_Parse(r.body);
	els = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "blocks"), 1),
	                          "elements");
	assert_int_equal(cJSON_GetArraySize(els), 3);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(els, 1), "url")->valuestring,
	                    "https://c.example/a/" APPROVE_TOKEN);
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(els, 1), "value"));
	assert_string_equal(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(els, 2), "action_id")->valuestring,
	    "airlock-reject");
	cJSON_Delete(b);
	wh_request_clear(&r);

	h.chat_callback = true;
	webhookfmt_build(&h, &e, "1", 1, &r);
	b = cJSON_Parse(r.body);
	els = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "blocks"), 1),
	                          "elements");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(els, 0), "url")->valuestring,
	                    "https://c.example/r/42");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(els, 1), "value")->valuestring,
	                    APPROVE_TOKEN);
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(els, 1), "url"));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(els, 2), "value")->valuestring,
	                    REJECT_TOKEN);
	cJSON_Delete(b);
	wh_request_clear(&r);

	h = hook(WEBHOOK_MATTERMOST, "https://mm.example/hooks/x");
	webhookfmt_build(&h, &e, "1", 1, &r);
	b = cJSON_Parse(r.body);
	assert_non_null(strstr(cJSON_GetObjectItem(b, "text")->valuestring,
	                       "[Approve...](https://c.example/a/" APPROVE_TOKEN ")"));
	assert_null(cJSON_GetObjectItem(b, "attachments"));
	cJSON_Delete(b);
	wh_request_clear(&r);
	h.chat_callback = true;
	h.secret = "mm-secret";
	h.secret_len = 9;
	webhookfmt_build(&h, &e, "1", 1, &r);
	b = cJSON_Parse(r.body);
	acts = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "attachments"), 0),
	                           "actions");
	assert_int_equal(cJSON_GetArraySize(acts), 2);
	cJSON *in = cJSON_GetObjectItem(cJSON_GetArrayItem(acts, 0), "integration");
	assert_string_equal(cJSON_GetObjectItem(in, "url")->valuestring,
	                    "https://c.example/chat/mattermost");
	cJSON *ctx = cJSON_GetObjectItem(in, "context");
	assert_string_equal(cJSON_GetObjectItem(ctx, "token")->valuestring, APPROVE_TOKEN);
	char *mac = webhookfmt_signature("mm-secret", 9, "mattermost", APPROVE_TOKEN);
	assert_string_equal(cJSON_GetObjectItem(ctx, "mac")->valuestring, mac);
	free(mac);
	assert_null(strstr(cJSON_GetObjectItem(b, "text")->valuestring, "/a/"));
	cJSON_Delete(b);
	wh_request_clear(&r);

	/* a request no longer waiting (approved): no action link anywhere */
	e = event("approved", "ls");
	e.approve_url = e.reject_url = NULL;
	for (int f = WEBHOOK_JSON; f <= WEBHOOK_MATRIX; f++) {
		struct config_webhook k =
		    hook((enum webhook_format)f,
		         "https://x.example/_matrix/client/v3/rooms/!r:x/send/m.room.message");
		k.token = "t";
		webhookfmt_build(&k, &e, "1", 1, &r);
		assert_null(strstr(r.body, "/a/"));
		assert_non_null(strstr(r.body, "https://c.example/r/42"));
		wh_request_clear(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_signature_vector),
	    cmocka_unit_test(test_link_token),
	    cmocka_unit_test(test_action_links),
	    cmocka_unit_test(test_output_held),
	    cmocka_unit_test(test_signed_headers),
	    cmocka_unit_test(test_ntfy_and_matrix_addresses),
	    cmocka_unit_test(test_hostile_generated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
