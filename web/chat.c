/* chat.c -- chat buttons that call the console back.
 *
 * A button in Slack or Mattermost carries an action link's token.  The
 * console believes the chat about who pressed it only once the request is
 * proven to come from the chat (Slack's signing secret; the HMAC airlockd
 * put in the Mattermost button's context), then asks the database which
 * login that chat user is (airlock.chat_identities, mapped by an
 * administrator) and answers that user alone with a link for that login to
 * the confirmation page.  Nothing is decided here: the link still needs
 * the operator's own sign-in, and every step is recorded
 * (airlock.web_chat_link). */
#include "web/chat.h"

#include "lib/hmac.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "web/links.h"
#include "web/web.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool chat_slack_verified(const char *secret, size_t secretlen, const char *timestamp,
                         const char *body, size_t bodylen, const char *signature, time_t now)
{
	char mac[HMAC_HEX_LEN + 1], *end, want[4 + HMAC_HEX_LEN];
	struct buf base = BUF_INIT;
	long long ts;
	bool ok;

	if (secret == NULL || timestamp == NULL || signature == NULL || timestamp[0] == '\0')
		return false;
	ts = strtoll(timestamp, &end, 10);
	if (*end != '\0' || ts <= 0 || llabs((long long)now - ts) > CHAT_SLACK_SKEW_S)
		return false;
	buf_printf(&base, "v0:%s:", timestamp);
	buf_append(&base, body, bodylen);
	hmac_sha256_hex(secret, secretlen, base.data, base.len, mac);
	buf_free(&base);
	snprintf(want, sizeof(want), "v0=%s", mac);
	ok = hmac_equal(want, signature);
	return ok;
}

bool chat_mattermost_verified(const char *secret, size_t secretlen, const char *token,
                              const char *mac)
{
	char hex[HMAC_HEX_LEN + 1], want[8 + HMAC_HEX_LEN];
	char *msg;

	if (secret == NULL || token == NULL || mac == NULL)
		return false;
	msg = xasprintf("mattermost.%s", token);
	hmac_sha256_hex(secret, secretlen, msg, strlen(msg), hex);
	free(msg);
	snprintf(want, sizeof(want), "sha256=%s", hex);
	return hmac_equal(want, mac);
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The database's answer for chat user `who` of service pressing the button
 * with token: text for that user (caller frees). */
static char *answer(struct web *w, const char *service, const char *who, const char *token,
                    bool slack)
{
	struct store_res *r;
	char *text, q[600];

	pthread_mutex_lock(&w->svc_mu);
	r = web_svc_exec(w, "SELECT login, url, problem FROM airlock.web_chat_link($1, $2, $3)", 3,
	                 (const char *const[]){service, who, token});
	if (r == NULL) {
		log_msg(LOG_WARN, "evt=web.chat_failed service=%s error=%s", service,
		        log_quote(store_errmsg(w->svc), q, sizeof(q)));
		text = xstrdup("airlock: the console could not reach its database; nothing was "
		               "done. Open the request on the console instead.");
	} else if (!store_isnull(r, 0, 2)) {
		log_msg(LOG_INFO, "evt=web.chat_refused service=%s chat_user=%s why=%s", service,
		        who, log_quote(store_get(r, 0, 2), q, sizeof(q)));
		text = xasprintf("airlock: %s. Nothing was decided.", store_get(r, 0, 2));
	} else {
		log_msg(LOG_INFO, "evt=web.chat_link service=%s chat_user=%s login=%s", service,
		        who, store_get(r, 0, 0));
		text =
		    slack ? xasprintf("<%s|Open the confirmation page> as %s: it shows the request "
		                      "and asks you to sign in as %s before anything is decided.",
		                      store_get(r, 0, 1), store_get(r, 0, 0), store_get(r, 0, 0))
		          : xasprintf("[Open the confirmation page](%s) as %s: it shows the "
		                      "request and asks you to sign in as %s before anything is "
		                      "decided.",
		                      store_get(r, 0, 1), store_get(r, 0, 0), store_get(r, 0, 0));
	}
	store_clear(r);
	pthread_mutex_unlock(&w->svc_mu);
	return text;
}

void chat_slack_post(struct web *w, const char *timestamp, const char *signature,
                     const struct buf *body, struct reply *rp)
{
	struct form f;
	cJSON *p = NULL, *msg;
	const cJSON *user, *acts, *act;
	const char *who, *token, *resp;

	rp->content_type = "text/plain; charset=utf-8";
	if (w->cfg->slack_signing_secret == NULL) {
		rp->status = 404;
		buf_puts(&rp->body, "Slack buttons are not set up on this console "
		                    "(slack_signing_secret_file).\n");
		return;
	}
	if (!chat_slack_verified(w->cfg->slack_signing_secret, w->cfg->slack_signing_secret_len,
	                         timestamp, body->data ? body->data : "", body->len, signature,
	                         time(NULL))) {
		log_msg(LOG_WARN, "evt=web.refused why=slack_signature");
		rp->status = 401;
		buf_puts(&rp->body,
		         "The request's Slack signature does not verify (or is older than "
		         "5 minutes): refused.\n");
		return;
	}
	if (form_parse(&f, body->data ? body->data : "", body->len) < 0 ||
	    (p = cJSON_Parse(form_get(&f, "payload") ? form_get(&f, "payload") : "")) == NULL) {
		form_free(&f);
		rp->status = 400;
		buf_puts(&rp->body, "The request carries no interaction payload.\n");
		return;
	}
	form_free(&f);
	user = cJSON_GetObjectItemCaseSensitive(p, "user");
	acts = cJSON_GetObjectItemCaseSensitive(p, "actions");
	act = cJSON_GetArrayItem(acts, 0);
	who = jstr(user, "id");
	token = jstr(act, "value");
	resp = jstr(p, "response_url");
	if (who == NULL || resp == NULL || jstr(act, "action_id") == NULL ||
	    strncmp(jstr(act, "action_id"), "airlock-", 8) != 0) {
		rp->status = 400;
		buf_puts(&rp->body, "The payload is not an airlock button's.\n");
		goto out;
	}
	if (strncmp(resp, w->cfg->slack_response_prefix, strlen(w->cfg->slack_response_prefix)) !=
	    0) {
		log_msg(LOG_WARN, "evt=web.refused why=slack_response_url");
		rp->status = 400;
		buf_puts(&rp->body, "The payload's response_url is not Slack's "
		                    "(slack_response_prefix).\n");
		goto out;
	}
	/* Slack waits 3 s for the answer, which says nothing; the text goes
	 * to the user who pressed the button, through response_url, once it
	 * is sent. */
	char *text = answer(w, "slack", who, token ? token : "", true);
	msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "response_type", "ephemeral");
	cJSON_AddBoolToObject(msg, "replace_original", false);
	cJSON_AddStringToObject(msg, "text", text);
	free(text);
	rp->after_url = xstrdup(resp);
	rp->after_body = cJSON_PrintUnformatted(msg);
	cJSON_Delete(msg);
	rp->status = 200;
out:
	cJSON_Delete(p);
}

void chat_mattermost_post(struct web *w, const struct buf *body, struct reply *rp)
{
	cJSON *p = cJSON_ParseWithLength(body->data ? body->data : "", body->len), *msg;
	const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(p, "context");
	const char *who = jstr(p, "user_id"), *token = jstr(ctx, "token");
	char *text;

	rp->content_type = "application/json";
	if (w->cfg->mattermost_secret == NULL) {
		rp->status = 404;
		buf_puts(&rp->body,
		         "{\"ephemeral_text\":\"Mattermost buttons are not set up on this "
		         "console (mattermost_secret_file).\"}");
		goto out;
	}
	if (!chat_mattermost_verified(w->cfg->mattermost_secret, w->cfg->mattermost_secret_len,
	                              token, jstr(ctx, "mac")) ||
	    who == NULL) {
		log_msg(LOG_WARN, "evt=web.refused why=mattermost_mac");
		rp->status = 401;
		buf_puts(&rp->body, "{\"ephemeral_text\":\"This button's signature does not "
		                    "verify: refused.\"}");
		goto out;
	}
	text = answer(w, "mattermost", who, token, false);
	msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "ephemeral_text", text);
	free(text);
	char *json = cJSON_PrintUnformatted(msg);
	buf_puts(&rp->body, json);
	free(json);
	cJSON_Delete(msg);
	rp->status = 200;
out:
	cJSON_Delete(p);
}
