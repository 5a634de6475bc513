/* webhookfmt.c -- a notification in each receiver's shape, signed. */
#include "worker/webhookfmt.h"

#include "lib/buf.h"
#include "lib/hmac.h"
#include "lib/visible.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command as a person reads it: escapes for what hides, at most 300 bytes. */
static char *shown(const char *s, size_t max)
{
	struct visible_info vi;
	char *v;

	if (s == NULL)
		return xstrdup("");
	v = visible_text(s, strlen(s), 0, max, &vi);
	if (vi.cut) {
		char *w = xasprintf("%s [%zu more bytes]", v, vi.cut);
		free(v);
		return w;
	}
	return v;
}

const char *webhookfmt_link_token(const char *url)
{
	const char *p = url ? strstr(url, "/a/") : NULL, *q;

	while (p && (q = strstr(p + 1, "/a/")) != NULL)
		p = q;
	return p && p[3] ? p + 3 : NULL;
}

/* The one-line summary of a request's event, before any format's markup. */
static char *summary(const struct wh_event *e)
{
	char *cmd = shown(e->command, 300), *who = shown(e->requested_by, 100);
	char *tgt = shown(e->target, 200), *err = shown(e->error, 300);
	char *by = shown(e->decided_by, 100), *why = shown(e->decision_reason, 300);
	char *why_for = shown(e->action ? e->action : "no purpose given", 300);
	const char *cls = e->cls ? e->cls : "unclassified";
	const char *votes = e->votes ? e->votes : "?";
	const char *ev = e->event;
	long long id = e->execution_id;
	char *s;

	if (strcmp(ev, "pending_approval") == 0)
		s = xasprintf("airlock: %s wants to run on %s (%s) to \"%s\": %s -- request %lld "
		              "waits for approval (%s votes; `airlock show %lld`, then `airlock "
		              "approve %lld` or `airlock reject %lld --reason ...`)",
		              who, tgt, cls, why_for, cmd, id, votes, id, id, id);
	else if (strcmp(ev, "reminder") == 0)
		s = xasprintf("airlock: reminder: request %lld from %s still waits for approval "
		              "on %s (%s, %s votes) to \"%s\": %s",
		              id, who, tgt, cls, votes, why_for, cmd);
	else if (strcmp(ev, "escalation") == 0)
		s = xasprintf("airlock: ESCALATION: request %lld from %s has waited for approval "
		              "since %s with no decision, on %s (%s, %s votes) to \"%s\": %s",
		              id, who, e->pending_since ? e->pending_since : "?", tgt, cls, votes,
		              why_for, cmd);
	else if (strcmp(ev, "approved") == 0)
		s = xasprintf("airlock: request %lld on %s approved by %s: %s", id, tgt, by, cmd);
	else if (strcmp(ev, "rejected") == 0)
		s = xasprintf("airlock: request %lld on %s rejected by %s (%s): %s", id, tgt, by,
		              why, cmd);
	else if (strcmp(ev, "expired") == 0)
		s = xasprintf("airlock: request %lld on %s expired without a decision; nothing "
		              "ran: %s",
		              id, tgt, cmd);
	else if (strcmp(ev, "refused") == 0)
		s = xasprintf("airlock: request %lld on %s refused, nothing ran: %s -- %s", id, tgt,
		              err, cmd);
	else if (strcmp(ev, "output_held") == 0) {
		char *hold = shown(e->output_hold ? e->output_hold : "output held", 400);
		s = xasprintf(
		    "airlock: request %lld on %s by %s: %s Look at it with `airlock output "
		    "show %lld`, then `airlock output release %lld --reason ...` or "
		    "`airlock output discard %lld --reason ...`: %s",
		    id, tgt, who, hold, id, id, id, cmd);
		free(hold);
	} else if (strcmp(ev, "outcome_unknown") == 0)
		s = xasprintf("airlock: request %lld on %s: OUTCOME UNKNOWN (%s); it may or may "
		              "not have run and is never re-run automatically; check the target: "
		              "%s",
		              id, tgt, err, cmd);
	else if (e->has_exit_code && (strcmp(ev, "succeeded") == 0 || strcmp(ev, "failed") == 0))
		s = xasprintf("airlock: request %lld on %s %s (exit %d)%s%s: %s", id, tgt, ev,
		              e->exit_code, e->error ? " -- " : "", e->error ? err : "", cmd);
	else
		s = xasprintf("airlock: request %lld on %s %s%s%s: %s", id, tgt, ev,
		              e->error ? " -- " : "", e->error ? err : "", cmd);
	free(cmd);
	free(who);
	free(tgt);
	free(err);
	free(by);
	free(why);
	free(why_for);
	return s;
}

/* The human line: a request's summary, or a detection's own text. */
static char *human_text(const struct wh_event *e)
{
	if (e->raw) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(e->raw, "text");
		return shown(cJSON_IsString(t) ? t->valuestring : e->event, 2000);
	}
	return summary(e);
}

static char *title(const struct wh_event *e)
{
	char *tgt, *s;

	if (e->raw) {
		const cJSON *ent = cJSON_GetObjectItemCaseSensitive(e->raw, "entity");
		tgt = shown(cJSON_IsString(ent) ? ent->valuestring : "", 100);
		s = xasprintf("airlock: %s on %s", e->event, tgt);
	} else {
		tgt = shown(e->target, 100);
		s = xasprintf("airlock: %s: request %lld on %s", e->event, e->execution_id, tgt);
	}
	free(tgt);
	return s;
}

/* Chat services turn "@room", "@channel" and "@here" into everyone's alarm:
 * an at sign from an agent becomes the full-width one, which reads the same
 * and mentions nobody. */
static void put_no_mentions(struct buf *b, char c)
{
	if (c == '@')
		buf_puts(b, "\xef\xbc\xa0");
	else
		buf_putc(b, c);
}

/* Markdown (Mattermost, Discord): the summary is one line (visible_text
 * escapes newlines) starting with "airlock:", so only inline markup can act:
 * its characters are escaped, and a command cannot make a link, emphasis or
 * code span, or end one. */
static char *markdown_escape(const char *s)
{
	struct buf b = BUF_INIT;

	for (; *s; s++) {
		if (strchr("\\`*_{}[]()<>~|", *s))
			buf_putc(&b, '\\');
		put_no_mentions(&b, *s);
	}
	return buf_steal(&b);
}

/* Slack's mrkdwn: &, < and > are the only control characters. */
static char *slack_escape(const char *s)
{
	struct buf b = BUF_INIT;

	for (; *s; s++) {
		if (*s == '&')
			buf_puts(&b, "&amp;");
		else if (*s == '<')
			buf_puts(&b, "&lt;");
		else if (*s == '>')
			buf_puts(&b, "&gt;");
		else
			buf_putc(&b, *s);
	}
	return buf_steal(&b);
}

static char *plain_no_mentions(const char *s)
{
	struct buf b = BUF_INIT;

	for (; *s; s++)
		put_no_mentions(&b, *s);
	return buf_steal(&b);
}

static void add_str(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static cJSON *generic_json(const struct wh_event *e, const char *text)
{
	cJSON *m;

	if (e->raw) {
		m = cJSON_Duplicate(e->raw, 1);
		cJSON_DeleteItemFromObjectCaseSensitive(m, "text");
		cJSON_AddStringToObject(m, "text", text);
		return m;
	}
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "event", e->event);
	cJSON_AddNumberToObject(m, "execution_id", (double)e->execution_id);
	add_str(m, "url", e->request_url);
	if (e->approve_url)
		cJSON_AddStringToObject(m, "approve_url", e->approve_url);
	if (e->reject_url)
		cJSON_AddStringToObject(m, "reject_url", e->reject_url);
	add_str(m, "target", e->target);
	add_str(m, "command", e->command);
	add_str(m, "action", e->action);
	add_str(m, "votes", e->votes);
	add_str(m, "class", e->cls);
	char *reasons = shown(e->reasons, 4000);
	cJSON_AddStringToObject(m, "reasons", reasons);
	free(reasons);
	add_str(m, "requested_by", e->requested_by);
	add_str(m, "state", e->state);
	add_str(m, "rewind_status", e->rewind_status);
	add_str(m, "error", e->error);
	if (e->has_exit_code)
		cJSON_AddNumberToObject(m, "exit_code", e->exit_code);
	add_str(m, "decided_by", e->decided_by);
	add_str(m, "decision_reason", e->decision_reason);
	add_str(m, "pending_since", e->pending_since);
	add_str(m, "expires_at", e->expires_at);
	add_str(m, "at", e->at);
	if (e->output_hold)
		cJSON_AddStringToObject(m, "output_hold", e->output_hold);
	cJSON_AddStringToObject(m, "text", text);
	return m;
}

static bool urgent(const char *ev)
{
	return strcmp(ev, "pending_approval") == 0 || strcmp(ev, "escalation") == 0 ||
	       strcmp(ev, "output_held") == 0 || strcmp(ev, "outcome_unknown") == 0 ||
	       strcmp(ev, "change_outside_airlock") == 0 ||
	       strcmp(ev, "access_outside_airlock") == 0 || strcmp(ev, "side_door") == 0 ||
	       strcmp(ev, "audit_anchor_failed") == 0;
}

/* ntfy's JSON publishing goes to the server's root with the topic in the
 * body: https://ntfy.example/alerts -> POST https://ntfy.example/ {"topic":"alerts"}. */
static cJSON *ntfy_json(const struct config_webhook *h, const struct wh_event *e, const char *text,
                        char **url)
{
	cJSON *m = cJSON_CreateObject();
	const char *q = strpbrk(h->url, "?#");
	size_t end = q ? (size_t)(q - h->url) : strlen(h->url);
	size_t slash = end;
	char *t = title(e);

	while (slash > 0 && h->url[slash - 1] != '/')
		slash--;
	/* the query stays: ntfy also takes ?auth=... */
	*url = xasprintf("%.*s%s", (int)slash, h->url, q && *q == '?' ? q : "");
	char *topic = xasprintf("%.*s", (int)(end - slash), h->url + slash);
	cJSON_AddStringToObject(m, "topic", topic);
	free(topic);
	cJSON_AddStringToObject(m, "title", t);
	free(t);
	cJSON_AddStringToObject(m, "message", text);
	cJSON_AddNumberToObject(m, "priority", urgent(e->event) ? 4 : 3);
	cJSON *tags = cJSON_AddArrayToObject(m, "tags");
	cJSON_AddItemToArray(tags, cJSON_CreateString(e->event));
	if (e->request_url) {
		/* view actions open the console: none decides without a sign-in */
		const char *const links[][2] = {{"Open request", e->request_url},
		                                {"Approve...", e->approve_url},
		                                {"Reject...", e->reject_url}};
		cJSON_AddStringToObject(m, "click", e->request_url);
		cJSON *acts = cJSON_AddArrayToObject(m, "actions");
		for (size_t i = 0; i < 3; i++) {
			if (links[i][1] == NULL)
				continue;
			cJSON *a = cJSON_CreateObject();
			cJSON_AddStringToObject(a, "action", "view");
			cJSON_AddStringToObject(a, "label", links[i][0]);
			cJSON_AddStringToObject(a, "url", links[i][1]);
			cJSON_AddItemToArray(acts, a);
		}
	}
	return m;
}

/* A Slack button: with chat_callback it carries the link's token and calls
 * the console's Slack endpoint back; without, it opens the link. */
static void slack_button(cJSON *elements, const struct config_webhook *h, const char *label,
                         const char *action_id, const char *url, const char *style)
{
	cJSON *b = cJSON_CreateObject(), *t;

	if (url == NULL) {
		cJSON_Delete(b);
		return;
	}
	cJSON_AddStringToObject(b, "type", "button");
	t = cJSON_AddObjectToObject(b, "text");
	cJSON_AddStringToObject(t, "type", "plain_text");
	cJSON_AddStringToObject(t, "text", label);
	cJSON_AddStringToObject(b, "action_id", action_id);
	if (style)
		cJSON_AddStringToObject(b, "style", style);
	if (h->chat_callback && webhookfmt_link_token(url) && strcmp(action_id, "airlock-open"))
		cJSON_AddStringToObject(b, "value", webhookfmt_link_token(url));
	else
		cJSON_AddStringToObject(b, "url", url);
	cJSON_AddItemToArray(elements, b);
}

static cJSON *slack_json(const struct config_webhook *h, const struct wh_event *e, const char *text)
{
	cJSON *m = cJSON_CreateObject(), *blocks, *sec, *st, *act, *els;
	char *t = slack_escape(text), *s;

	if (e->request_url)
		s = xasprintf("%s\n<%s|Open request %lld>", t, e->request_url, e->execution_id);
	else
		s = xstrdup(t);
	cJSON_AddStringToObject(m, "text", s);
	if (e->request_url) {
		blocks = cJSON_AddArrayToObject(m, "blocks");
		sec = cJSON_CreateObject();
		cJSON_AddStringToObject(sec, "type", "section");
		st = cJSON_AddObjectToObject(sec, "text");
		cJSON_AddStringToObject(st, "type", "mrkdwn");
		cJSON_AddStringToObject(st, "text", t);
		cJSON_AddItemToArray(blocks, sec);
		act = cJSON_CreateObject();
		cJSON_AddStringToObject(act, "type", "actions");
		cJSON_AddStringToObject(act, "block_id", "airlock-decide");
		els = cJSON_AddArrayToObject(act, "elements");
		slack_button(els, h, "Open request", "airlock-open", e->request_url, NULL);
		slack_button(els, h, "Approve...", "airlock-approve", e->approve_url, "primary");
		slack_button(els, h, "Reject...", "airlock-reject", e->reject_url, "danger");
		cJSON_AddItemToArray(blocks, act);
	}
	free(t);
	free(s);
	return m;
}

/* A Mattermost interactive button: its integration calls the console back
 * with the context, which Mattermost keeps on its server; the context's
 * mac is HMAC-SHA256(secret, "mattermost." token), checked by airlock-web
 * with the same secret. */
static void mattermost_button(cJSON *actions, const struct config_webhook *h,
                              const struct wh_event *e, const char *id, const char *label,
                              const char *url)
{
	const char *token = webhookfmt_link_token(url);
	cJSON *a, *in, *ctx;
	char *mac;

	if (token == NULL || e->mattermost_callback_url == NULL || h->secret == NULL)
		return;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "id", id);
	cJSON_AddStringToObject(a, "name", label);
	in = cJSON_AddObjectToObject(a, "integration");
	cJSON_AddStringToObject(in, "url", e->mattermost_callback_url);
	ctx = cJSON_AddObjectToObject(in, "context");
	cJSON_AddStringToObject(ctx, "token", token);
	mac = webhookfmt_signature(h->secret, h->secret_len, "mattermost", token);
	cJSON_AddStringToObject(ctx, "mac", mac);
	free(mac);
	cJSON_AddItemToArray(actions, a);
}

static cJSON *mattermost_json(const struct config_webhook *h, const struct wh_event *e,
                              const char *text)
{
	cJSON *m = cJSON_CreateObject();
	char *t = markdown_escape(text);
	struct buf s = BUF_INIT;

	buf_puts(&s, t);
	if (e->request_url)
		buf_printf(&s, "\n[Open request %lld](%s)", e->execution_id, e->request_url);
	if (!h->chat_callback && e->approve_url && e->reject_url)
		buf_printf(&s, " \u00b7 [Approve...](%s) \u00b7 [Reject...](%s)", e->approve_url,
		           e->reject_url);
	cJSON_AddStringToObject(m, "text", buf_str(&s));
	if (h->chat_callback && e->approve_url && e->reject_url) {
		cJSON *atts = cJSON_AddArrayToObject(m, "attachments");
		cJSON *att = cJSON_CreateObject();
		cJSON_AddStringToObject(att, "text",
		                        "Decide on the console: the button answers you "
		                        "with a link for your own login.");
		cJSON *acts = cJSON_AddArrayToObject(att, "actions");
		mattermost_button(acts, h, e, "approve", "Approve...", e->approve_url);
		mattermost_button(acts, h, e, "reject", "Reject...", e->reject_url);
		cJSON_AddItemToArray(atts, att);
	}
	free(t);
	buf_free(&s);
	return m;
}

static cJSON *discord_json(const struct wh_event *e, const char *text)
{
	cJSON *m = cJSON_CreateObject();
	char *t = markdown_escape(text), *ti = title(e), *tt = plain_no_mentions(ti);

	/* Discord caps content at 2000 characters: the summary is kept shorter. */
	if (strlen(t) > 1900) {
		size_t n = 1900;
		while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80)
			n--;
		t[n] = '\0';
	}
	cJSON_AddStringToObject(m, "content", t);
	cJSON *embeds = cJSON_AddArrayToObject(m, "embeds");
	cJSON *em = cJSON_CreateObject();
	cJSON_AddStringToObject(em, "title", tt);
	if (e->request_url)
		cJSON_AddStringToObject(em, "url", e->request_url);
	if (e->approve_url && e->reject_url) {
		char *d = xasprintf("[Approve...](%s) \u00b7 [Reject...](%s)", e->approve_url,
		                    e->reject_url);
		cJSON_AddStringToObject(em, "description", d);
		free(d);
	}
	cJSON_AddItemToArray(embeds, em);
	cJSON *am = cJSON_AddObjectToObject(m, "allowed_mentions");
	cJSON_AddArrayToObject(am, "parse");
	free(t);
	free(ti);
	free(tt);
	return m;
}

static cJSON *matrix_json(const struct wh_event *e, const char *text)
{
	cJSON *m = cJSON_CreateObject();
	char *t = plain_no_mentions(text), *s;

	if (e->request_url && e->approve_url && e->reject_url)
		s = xasprintf("%s\n%s\nApprove: %s\nReject: %s", t, e->request_url, e->approve_url,
		              e->reject_url);
	else
		s = e->request_url ? xasprintf("%s\n%s", t, e->request_url) : xstrdup(t);
	cJSON_AddStringToObject(m, "msgtype", "m.notice");
	cJSON_AddStringToObject(m, "body", s);
	cJSON_AddObjectToObject(m, "m.mentions"); /* intentional mentions: none */
	free(t);
	free(s);
	return m;
}

static void add_header(struct wh_request *r, char *h)
{
	if (r->nheaders < WH_MAX_HEADERS)
		r->headers[r->nheaders++] = h;
	else
		free(h);
}

/* A Matrix transaction id: the delivery, so a retry is the same message. */
static char *matrix_url(const char *url, const char *delivery)
{
	const char *q = strpbrk(url, "?#");
	size_t n = q ? (size_t)(q - url) : strlen(url);

	while (n > 0 && url[n - 1] == '/')
		n--;
	return xasprintf("%.*s/airlock-%s%s", (int)n, url, delivery, q ? q : "");
}

void webhookfmt_build(const struct config_webhook *h, const struct wh_event *e,
                      const char *delivery, time_t now, struct wh_request *out)
{
	char *text = human_text(e);
	cJSON *m = NULL;

	memset(out, 0, sizeof(*out));
	out->method = xstrdup("POST");
	switch (h->format) {
	case WEBHOOK_JSON:
		m = generic_json(e, text);
		break;
	case WEBHOOK_NTFY:
		m = ntfy_json(h, e, text, &out->url);
		if (h->token)
			add_header(out, xasprintf("Authorization: Bearer %s", h->token));
		break;
	case WEBHOOK_SLACK:
		m = slack_json(h, e, text);
		break;
	case WEBHOOK_MATTERMOST:
		m = mattermost_json(h, e, text);
		break;
	case WEBHOOK_DISCORD:
		m = discord_json(e, text);
		break;
	case WEBHOOK_MATRIX:
		m = matrix_json(e, text);
		free(out->method);
		out->method = xstrdup("PUT");
		out->url = matrix_url(h->url, delivery);
		add_header(out, xasprintf("Authorization: Bearer %s", h->token ? h->token : ""));
		break;
	}
	if (out->url == NULL)
		out->url = xstrdup(h->url);
	out->body = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	add_header(out, xstrdup("Content-Type: application/json"));
	add_header(out, xasprintf("X-Airlock-Event: %s", e->event));
	add_header(out, xasprintf("X-Airlock-Delivery: %s", delivery));
	if (h->secret) {
		char ts[32];
		snprintf(ts, sizeof(ts), "%lld", (long long)now);
		char *sig = webhookfmt_signature(h->secret, h->secret_len, ts, out->body);
		add_header(out, xasprintf("X-Airlock-Timestamp: %s", ts));
		add_header(out, xasprintf("X-Airlock-Signature: %s", sig));
		free(sig);
	}
	free(text);
}

void wh_request_clear(struct wh_request *r)
{
	free(r->method);
	free(r->url);
	free(r->body);
	for (int i = 0; i < r->nheaders; i++) {
		/* The Authorization header holds a token: wiped, not just freed. */
		memset(r->headers[i], 0, strlen(r->headers[i]));
		free(r->headers[i]);
	}
	memset(r, 0, sizeof(*r));
}

char *webhookfmt_signature(const char *key, size_t keylen, const char *timestamp, const char *body)
{
	char *msg = xasprintf("%s.%s", timestamp, body);
	char *out = xmalloc(7 + HMAC_HEX_LEN + 1);

	memcpy(out, "sha256=", 7);
	hmac_sha256_hex(key, keylen, msg, strlen(msg), out + 7);
	free(msg);
	return out;
}
