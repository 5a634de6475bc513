/* client.h -- a Zerto ZVM Appliance REST client, safe to share between threads.
 *
 * One client per ZVM.  It holds one Keycloak access token for all threads and
 * refreshes it single-flight: when the token is missing or past 80 % of its
 * expires_in, exactly one caller fetches a new one while the others wait for
 * it (a concurrent caller never races to a 401).  A 401 on an API call
 * refreshes once (or adopts a token another thread already refreshed) and
 * retries once.  TLS is verified against cfg->ca_file unless
 * cfg->insecure_skip_verify, which is logged at warn on every client_new.
 * Every request has a connect timeout and a total timeout.  The secret (client
 * secret or password) comes from a file or an environment variable, is never
 * logged and never put on a command line.
 *
 * Errors: because one client serves many threads, each call reports its
 * failure in a caller-owned struct zerto_err rather than on the handle. */
#ifndef AIRLOCK_ZERTO_CLIENT_H
#define AIRLOCK_ZERTO_CLIENT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

enum zerto_grant {
	ZERTO_GRANT_CLIENT_CREDENTIALS, /* client_id + client_secret (service account) */
	ZERTO_GRANT_PASSWORD,           /* client_id + username + password */
};

/* Filled by the daemon from its config file; strings are borrowed for the
 * duration of zerto_client_new() only (the client copies what it keeps). */
struct zerto_config {
	const char *base_url;      /* "https://zvm.example" or "https://zvm:443"; no /v1 */
	const char *token_url;     /* full token URL; NULL: base_url + realm's Keycloak path */
	const char *realm;         /* NULL: "zerto" */
	enum zerto_grant grant;    /* default (0): client credentials */
	const char *client_id;     /* NULL: "airlock" (client credentials), "zerto-client" */
	const char *username;      /* password grant only */
	const char *secret_file;   /* the client secret or password: first line of this file */
	const char *secret_env;    /* ... or the value of this environment variable */
	const char *ca_file;       /* CA bundle for the ZVM certificate; NULL: system store */
	bool insecure_skip_verify; /* true turns TLS verification off (logged loudly) */
	long connect_timeout_ms;   /* 0: 5000 */
	long request_timeout_ms;   /* 0: 30000, for the whole request */
	double time_scale;         /* ZVM seconds per real second; 0 or 1 = production.
	                            * Only a test ZVM simulator runs faster; see guard.h. */
};

enum zerto_errkind {
	ZERTO_ERR_NONE,
	ZERTO_ERR_UNREACHABLE, /* DNS, connect, TLS, timeout: no answer from the ZVM */
	ZERTO_ERR_AUTH,        /* the token endpoint refused us, or /v1 said 401 twice */
	ZERTO_ERR_HTTP,        /* any other non-2xx answer */
	ZERTO_ERR_SHAPE,       /* an answer we cannot use: names endpoint and field */
	ZERTO_ERR_CONFIG,      /* bad configuration or unreadable secret */
};

struct zerto_err {
	enum zerto_errkind kind;
	long http_status; /* 0 when there was no HTTP answer */
	char msg[512];    /* one line, no secrets */
};

/* Counters for tests and the operator's doctor. */
struct zerto_client_stats {
	long token_fetches; /* token endpoint calls, successful or not */
	long unauthorized;  /* 401 answers on /v1 */
	long requests;      /* /v1 requests sent */
};

struct zerto_client;

/* NULL on failure with the reason in err (bad config, unreadable secret). */
struct zerto_client *zerto_client_new(const struct zerto_config *cfg, char *err, size_t errlen);
void zerto_client_free(struct zerto_client *c); /* NULL is a no-op */

/* GET or POST path (e.g. "/v1/vms?vmName=web01") on the ZVM.  On success *out
 * is the parsed JSON answer (a bare, unquoted body becomes a JSON string), the
 * caller's to cJSON_Delete.  body may be NULL (POST sends nothing then). */
int zerto_client_get(struct zerto_client *c, const char *path, cJSON **out, struct zerto_err *e);
int zerto_client_post(struct zerto_client *c, const char *path, const cJSON *body, cJSON **out,
                      struct zerto_err *e);

/* DELETE path; the answer as for zerto_client_get. */
int zerto_client_delete(struct zerto_client *c, const char *path, cJSON **out, struct zerto_err *e);

/* GET a download URL the ZVM handed out (absolute https on the ZVM itself, or
 * relative to base_url; any other host is refused so the token never leaves
 * the ZVM), TLS verified as every call, into fd from its start (truncated
 * first), at most max_bytes: a larger file is refused (ZERTO_ERR_SHAPE, "larger
 * than the ... cap") without keeping more than max_bytes.  *size gets the
 * bytes written. */
int zerto_client_download(struct zerto_client *c, const char *url, long long max_bytes, int fd,
                          long long *size, struct zerto_err *e);

/* Borrowed, valid until zerto_client_free(). */
const char *zerto_client_base_url(const struct zerto_client *c);
/* The configured time scale (1.0 in production). */
double zerto_client_time_scale(const struct zerto_client *c);
/* Connect + total timeout of one request, real milliseconds. */
long zerto_client_request_ms(const struct zerto_client *c);
void zerto_client_get_stats(struct zerto_client *c, struct zerto_client_stats *out);

/* Sets e to kind and a printf-formatted message. */
void zerto_err_set(struct zerto_err *e, enum zerto_errkind kind, long http_status, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

#endif
