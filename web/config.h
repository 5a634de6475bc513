/* config.h -- airlock-web's own small YAML file (default
 * SYSCONFDIR/airlock/airlock-web.yaml; every key in docs/web.md).  Read
 * whole and validated whole, or refused with file:line:col and the reason. */
#ifndef AIRLOCK_WEB_CONFIG_H
#define AIRLOCK_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct web_config {
	char *listen_host; /* numeric address to bind */
	int listen_port;
	char *tls_cert, *tls_key; /* both or neither; neither only on loopback */
	char *database;           /* airlock-web's own login (airlock_web) */
	char *operator_database;  /* where operators' logins connect; user/password added */
	char *public_url;         /* the console's address as people reach it; published */
	/* Chat callbacks (web/chat.c): Slack's signing secret and where its
	 * answers may go; the secret of Mattermost webhooks with chat_callback. */
	char *slack_signing_secret;
	size_t slack_signing_secret_len;
	char *slack_response_prefix; /* default https://hooks.slack.com/ */
	char *mattermost_secret;
	size_t mattermost_secret_len;
	int session_idle_s, session_max_s, max_sessions;
	int signin_max_failures, signin_window_s;
	int statement_timeout_ms;
	bool trust_proxy; /* take the client address from X-Forwarded-For (loopback proxy) */
	int log_level;
};

/* 0 and a filled c, or -1 with the reason in err (c then holds nothing). */
int web_config_load(const char *path, struct web_config *c, char *err, size_t errlen);
void web_config_free(struct web_config *c);

/* Whether host is a loopback address (127.0.0.0/8 or ::1). */
bool web_config_loopback(const char *host);

#endif
