/* config.c -- airlock-web's config file. */
#include "web/config.h"

#include "store/conninfo.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "lib/yamltree.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ftype { F_STR, F_INT, F_BOOL, F_LOG, F_SECRET };

struct field {
	const char *key;
	enum ftype type;
	size_t off;
	long min, max;
};

#define OFF(f) offsetof(struct web_config, f)

static const struct field fields[] = {
    {"listen", F_STR, 0, 0, 0}, /* host:port, split below */
    {"tls_cert", F_STR, OFF(tls_cert), 0, 0},
    {"tls_key", F_STR, OFF(tls_key), 0, 0},
    {"database", F_STR, OFF(database), 0, 0},
    {"operator_database", F_STR, OFF(operator_database), 0, 0},
    {"public_url", F_STR, OFF(public_url), 0, 0},
    {"session_idle_s", F_INT, OFF(session_idle_s), 1, 86400},
    {"session_max_s", F_INT, OFF(session_max_s), 1, 7 * 86400},
    {"max_sessions", F_INT, OFF(max_sessions), 1, 10000},
    {"signin_max_failures", F_INT, OFF(signin_max_failures), 1, 64},
    {"signin_window_s", F_INT, OFF(signin_window_s), 1, 86400},
    {"statement_timeout_ms", F_INT, OFF(statement_timeout_ms), 100, 600000},
    {"trust_proxy", F_BOOL, OFF(trust_proxy), 0, 0},
    {"log_level", F_LOG, OFF(log_level), 0, 0},
    {"slack_signing_secret_file", F_SECRET, OFF(slack_signing_secret),
     OFF(slack_signing_secret_len), 0},
    {"slack_response_prefix", F_STR, OFF(slack_response_prefix), 0, 0},
    {"mattermost_secret_file", F_SECRET, OFF(mattermost_secret), OFF(mattermost_secret_len), 0},
};

static int failf(char *err, size_t errlen, const char *path, const struct yt_node *n,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int failf(char *err, size_t errlen, const char *path, const struct yt_node *n,
                 const char *fmt, ...)
{
	va_list ap;
	int k = n ? snprintf(err, errlen, "%s:%d:%d: ", path, n->line, n->col)
	          : snprintf(err, errlen, "%s: ", path);

	if (k < 0 || (size_t)k >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

bool web_config_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return memcmp(&a6, &in6addr_loopback, sizeof(a6)) == 0;
	return false;
}

/* "host:port" or "[v6]:port", numeric addresses only. */
static int parse_listen(struct web_config *c, const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end;

	if (colon == NULL || colon == s)
		return -1;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -1;
	const char *h = s;
	size_t hl = (size_t)(colon - s);
	if (*h == '[') {
		if (hl < 3 || h[hl - 1] != ']')
			return -1;
		h++;
		hl -= 2;
	}
	char *host = xstrndup(h, hl);
	struct in6_addr tmp;
	if (inet_pton(AF_INET, host, &tmp) != 1 && inet_pton(AF_INET6, host, &tmp) != 1) {
		free(host);
		return -1;
	}
	c->listen_host = host;
	c->listen_port = (int)port;
	return 0;
}

static int set_field(struct web_config *c, const struct field *f, const struct yt_node *v,
                     const char *path, char *err, size_t errlen)
{
	char *end;

	if (v->kind != YT_SCALAR)
		return failf(err, errlen, path, v, "%s: wanted a scalar, got a %s", f->key,
		             yt_kind_name(v->kind));
	switch (f->type) {
	case F_STR:
		if (strcmp(f->key, "listen") == 0) {
			if (parse_listen(c, v->scalar) < 0)
				return failf(err, errlen, path, v,
				             "listen: wanted a numeric ADDRESS:PORT such as "
				             "127.0.0.1:8443 or [::1]:8443, got \"%s\"",
				             v->scalar);
			return 0;
		}
		if (v->scalar[0] == '\0')
			return failf(err, errlen, path, v, "%s: empty", f->key);
		*(char **)((char *)c + f->off) = xstrdup(v->scalar);
		return 0;
	case F_INT: {
		errno = 0;
		long n = strtol(v->scalar, &end, 10);
		if (errno || *end || end == v->scalar || n < f->min || n > f->max)
			return failf(err, errlen, path, v,
			             "%s: wanted a whole number %ld..%ld, got \"%s\"", f->key,
			             f->min, f->max, v->scalar);
		*(int *)((char *)c + f->off) = (int)n;
		return 0;
	}
	case F_BOOL:
		if (strcmp(v->scalar, "true") == 0 || strcmp(v->scalar, "false") == 0) {
			*(bool *)((char *)c + f->off) = v->scalar[0] == 't';
			return 0;
		}
		return failf(err, errlen, path, v, "%s: wanted true or false, got \"%s\"", f->key,
		             v->scalar);
	case F_SECRET: {
		char why[400];
		size_t *len = (size_t *)((char *)c + f->min);
		char *sec = readfile_secret(v->scalar, len, why, sizeof(why));
		if (sec == NULL)
			return failf(err, errlen, path, v, "%s: %s", f->key, why);
		*(char **)((char *)c + f->off) = sec;
		return 0;
	}
	case F_LOG: {
		int l = log_level_parse(v->scalar);
		if (l < 0)
			return failf(err, errlen, path, v,
			             "log_level: wanted debug, info, warn or error, got \"%s\"",
			             v->scalar);
		*(int *)((char *)c + f->off) = l;
		return 0;
	}
	}
	return -1;
}

int web_config_load(const char *path, struct web_config *c, char *err, size_t errlen)
{
	char rerr[256];
	size_t len = 0;
	struct yt_node *root = NULL;
	int rc = -1;
	char *text = readfile(path, 1 << 20, &len, rerr, sizeof(rerr));

	memset(c, 0, sizeof(*c));
	c->session_idle_s = 900;
	c->session_max_s = 8 * 3600;
	c->max_sessions = 200;
	c->signin_max_failures = 5;
	c->signin_window_s = 300;
	c->statement_timeout_ms = 10000;
	c->log_level = LOG_INFO;
	if (text == NULL) {
		snprintf(err, errlen, "%s", rerr);
		goto out;
	}
	root = yt_parse(text, len, path, err, errlen);
	if (root == NULL)
		goto out;
	if (root->kind != YT_MAP) {
		failf(err, errlen, path, root, "wanted a mapping of keys");
		goto out;
	}
	for (size_t i = 0; i < root->n; i++) {
		const struct yt_node *k = root->items[2 * i], *v = root->items[2 * i + 1];
		const struct field *f = NULL;
		for (size_t j = 0; j < sizeof(fields) / sizeof(fields[0]); j++)
			if (k->kind == YT_SCALAR && strcmp(k->scalar, fields[j].key) == 0)
				f = &fields[j];
		if (f == NULL) {
			failf(err, errlen, path, k, "unknown key \"%s\" (docs/web.md lists them)",
			      k->kind == YT_SCALAR ? k->scalar : "?");
			goto out;
		}
		if (set_field(c, f, v, path, err, errlen) < 0)
			goto out;
	}
	if (c->listen_host == NULL) {
		failf(err, errlen, path, root, "listen is required (ADDRESS:PORT)");
		goto out;
	}
	if ((c->tls_cert == NULL) != (c->tls_key == NULL)) {
		failf(err, errlen, path, yt_get(root, c->tls_cert ? "tls_cert" : "tls_key"),
		      "tls_cert and tls_key go together: give both, or neither on loopback");
		goto out;
	}
	if (c->tls_cert == NULL && !web_config_loopback(c->listen_host)) {
		failf(err, errlen, path, yt_get(root, "listen"),
		      "plain HTTP is refused on %s: it is not a loopback address. Give tls_cert "
		      "and tls_key, or listen on 127.0.0.1 behind a TLS proxy",
		      c->listen_host);
		goto out;
	}
	if (c->database == NULL || c->operator_database == NULL) {
		failf(err, errlen, path, root,
		      "database (airlock-web's own login) and operator_database (where "
		      "operators sign in) are required");
		goto out;
	}
	if (conninfo_has_password(c->database) || conninfo_has_password(c->operator_database)) {
		failf(err, errlen, path,
		      yt_get(root,
		             conninfo_has_password(c->database) ? "database" : "operator_database"),
		      "a connection string must not hold a password; use PGPASSFILE or a client "
		      "certificate for airlock-web's own login");
		goto out;
	}
	if (c->public_url && (strncmp(c->public_url, "https://", 8) != 0 &&
	                      strncmp(c->public_url, "http://", 7) != 0)) {
		failf(err, errlen, path, yt_get(root, "public_url"),
		      "public_url must be the console's address, http://... or https://... (links "
		      "in notifications and answers are built from it)");
		goto out;
	}
	if (c->slack_response_prefix == NULL)
		c->slack_response_prefix = xstrdup("https://hooks.slack.com/");
	else if (strncmp(c->slack_response_prefix, "https://", 8) != 0 &&
	         strncmp(c->slack_response_prefix, "http://", 7) != 0) {
		failf(err, errlen, path, yt_get(root, "slack_response_prefix"),
		      "slack_response_prefix must be http://... or https://... (where Slack's "
		      "response_url may point)");
		goto out;
	}
	if (c->session_idle_s > c->session_max_s) {
		failf(err, errlen, path, yt_get(root, "session_idle_s"),
		      "session_idle_s (%d) is longer than session_max_s (%d)", c->session_idle_s,
		      c->session_max_s);
		goto out;
	}
	rc = 0;
out:
	yt_free(root);
	free(text);
	if (rc < 0)
		web_config_free(c);
	return rc;
}

void web_config_free(struct web_config *c)
{
	free(c->listen_host);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->database);
	free(c->operator_database);
	free(c->public_url);
	if (c->slack_signing_secret)
		explicit_bzero(c->slack_signing_secret, c->slack_signing_secret_len);
	free(c->slack_signing_secret);
	free(c->slack_response_prefix);
	if (c->mattermost_secret)
		explicit_bzero(c->mattermost_secret, c->mattermost_secret_len);
	free(c->mattermost_secret);
	memset(c, 0, sizeof(*c));
}
