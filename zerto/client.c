/* client.c -- ZVM REST over libcurl: token cache, TLS, timeouts, 401 retry. */
#include "zerto/client.h"

#include "lib/deadline.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define BODY_CAP         (8u << 20) /* largest answer we accept from the ZVM */
#define SECRET_CAP       4096       /* largest secret file */
#define TOKEN_WAIT_SLACK 2.0        /* a waiter gives up this long after a fetch's own timeout */

struct zerto_client {
	char *base_url;
	char *token_url;
	enum zerto_grant grant;
	char *client_id;
	char *username;
	char *secret; /* never logged */
	char *ca_file;
	bool insecure;
	long connect_ms;
	long total_ms;
	double time_scale;
	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

	/* The token cache: everything below is guarded by mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *token;
	double refresh_at;     /* monotonic seconds: fetch a new token from here on */
	double expires_at;     /* monotonic seconds: the ZVM stops accepting it */
	bool fetching;         /* one thread is at the token endpoint */
	long fetch_seq;        /* completed fetches, successful or not */
	struct zerto_err last; /* outcome of the latest failed fetch */
	struct zerto_client_stats stats;
};

/* One answer: JSON bodies go to body (capped at BODY_CAP); a download goes to
 * fd (fd >= 0), at most max bytes. */
struct http_answer {
	long status;
	struct buf body;
	int fd;
	long long max, got;
	bool over;
	int write_errno;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

/* The time-scale warning is said once per process and scale: airlockd makes
 * a client for the guard, one for recovery requests and one for the FLR
 * watch, all from the same setting.  A client at scale 1 (production) says
 * nothing, and a later one at another scale says it again. */
static pthread_mutex_t scale_warn_mu = PTHREAD_MUTEX_INITIALIZER;
static double scale_warned = 1.0;

static void warn_time_scale(double scale)
{
	bool say;

	pthread_mutex_lock(&scale_warn_mu);
	say = scale != 1.0 && scale != scale_warned;
	scale_warned = scale;
	pthread_mutex_unlock(&scale_warn_mu);
	if (say)
		log_msg(LOG_WARN,
		        "evt=zerto.time_scale scale=%g msg=\"ZVM time runs %g times "
		        "real time: test simulators only\"",
		        scale, scale);
}

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void zerto_err_set(struct zerto_err *e, enum zerto_errkind kind, long http_status, const char *fmt,
                   ...)
{
	va_list ap;

	e->kind = kind;
	e->http_status = http_status;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *userp)
{
	struct zerto_client *c = userp;

	(void)h;
	(void)access;
	pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *userp)
{
	struct zerto_client *c = userp;

	(void)h;
	pthread_mutex_unlock(&c->share_locks[data]);
}

static char *strip_slash(const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '/')
		n--;
	return xstrndup(s, n);
}

/* The secret's first line, from the file or the environment. */
static char *load_secret(const struct zerto_config *cfg, char *err, size_t errlen)
{
	char *s = NULL;

	if (cfg->secret_file != NULL && cfg->secret_file[0] != '\0') {
		FILE *fp = fopen(cfg->secret_file, "r");
		char line[SECRET_CAP];

		if (fp == NULL) {
			snprintf(err, errlen, "zerto: cannot read the secret file %s: %s",
			         cfg->secret_file, strerror(errno));
			return NULL;
		}
		if (fgets(line, sizeof(line), fp) == NULL)
			line[0] = '\0';
		fclose(fp);
		s = xstrdup(line);
		memset(line, 0, sizeof(line));
	} else if (cfg->secret_env != NULL && cfg->secret_env[0] != '\0') {
		const char *v = getenv(cfg->secret_env);

		if (v == NULL || v[0] == '\0') {
			snprintf(err, errlen,
			         "zerto: environment variable %s (the secret) is not set",
			         cfg->secret_env);
			return NULL;
		}
		s = xstrdup(v);
	} else {
		snprintf(err, errlen, "zerto: no secret configured (secret_file or secret_env)");
		return NULL;
	}
	s[strcspn(s, "\r\n")] = '\0';
	if (s[0] == '\0') {
		snprintf(err, errlen, "zerto: the configured secret is empty");
		free(s);
		return NULL;
	}
	return s;
}

struct zerto_client *zerto_client_new(const struct zerto_config *cfg, char *err, size_t errlen)
{
	struct zerto_client *c = NULL;
	char *secret = NULL;

	if (cfg->base_url == NULL || strncmp(cfg->base_url, "https://", 8) != 0) {
		snprintf(err, errlen, "zerto: base_url must be an https:// URL");
		return NULL;
	}
	if (cfg->grant == ZERTO_GRANT_PASSWORD && (cfg->username == NULL || !cfg->username[0])) {
		snprintf(err, errlen, "zerto: the password grant needs a username");
		return NULL;
	}
	if (cfg->time_scale < 0) {
		snprintf(err, errlen, "zerto: time_scale must be positive");
		return NULL;
	}
	secret = load_secret(cfg, err, errlen);
	if (secret == NULL)
		return NULL;
	pthread_once(&curl_once, curl_init_once);

	c = xcalloc(1, sizeof(*c));
	c->base_url = strip_slash(cfg->base_url);
	if (cfg->token_url != NULL && cfg->token_url[0] != '\0')
		c->token_url = xstrdup(cfg->token_url);
	else
		c->token_url = xasprintf("%s/auth/realms/%s/protocol/openid-connect/token",
		                         c->base_url, cfg->realm ? cfg->realm : "zerto");
	c->grant = cfg->grant;
	c->client_id = xstrdup(cfg->client_id                       ? cfg->client_id
	                       : cfg->grant == ZERTO_GRANT_PASSWORD ? "zerto-client"
	                                                            : "airlock");
	c->username = cfg->username ? xstrdup(cfg->username) : NULL;
	c->secret = secret;
	c->ca_file = cfg->ca_file ? xstrdup(cfg->ca_file) : NULL;
	c->insecure = cfg->insecure_skip_verify;
	c->connect_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 5000;
	c->total_ms = cfg->request_timeout_ms > 0 ? cfg->request_timeout_ms : 30000;
	c->time_scale = cfg->time_scale > 0 ? cfg->time_scale : 1.0;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&c->share_locks[i], NULL);
	c->share = curl_share_init();
	curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	if (c->insecure)
		log_msg(LOG_WARN,
		        "evt=zerto.tls_unverified url=%s msg=\"TLS certificate "
		        "verification of the ZVM is OFF (verify_tls: false); anyone on "
		        "the path can impersonate it\"",
		        c->base_url);
	warn_time_scale(c->time_scale);
	return c;
}

void zerto_client_free(struct zerto_client *c)
{
	if (c == NULL)
		return;
	curl_share_cleanup(c->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&c->share_locks[i]);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	if (c->secret != NULL)
		memset(c->secret, 0, strlen(c->secret));
	free(c->secret);
	free(c->token);
	free(c->base_url);
	free(c->token_url);
	free(c->client_id);
	free(c->username);
	free(c->ca_file);
	free(c);
}

const char *zerto_client_base_url(const struct zerto_client *c)
{
	return c->base_url;
}

double zerto_client_time_scale(const struct zerto_client *c)
{
	return c->time_scale;
}

long zerto_client_request_ms(const struct zerto_client *c)
{
	return c->connect_ms + c->total_ms;
}

void zerto_client_get_stats(struct zerto_client *c, struct zerto_client_stats *out)
{
	pthread_mutex_lock(&c->mu);
	*out = c->stats;
	pthread_mutex_unlock(&c->mu);
}

static size_t write_cb(char *p, size_t size, size_t n, void *userp)
{
	struct http_answer *a = userp;
	size_t len = size * n;

	if (a->fd < 0) {
		buf_append(&a->body, p, len);
		return a->body.truncated ? 0 : len; /* over the cap: abort the transfer */
	}
	if (a->got + (long long)len > a->max) {
		a->over = true;
		return 0;
	}
	for (size_t done = 0; done < len;) {
		ssize_t w = write(a->fd, p + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			a->write_errno = w < 0 ? errno : EIO;
			return 0;
		}
		done += (size_t)w;
	}
	a->got += (long long)len;
	return len;
}

/* One HTTPS exchange.  0 with the status in a->status (any status), -1 when
 * there was no answer (e says why). */
static int http_do(struct zerto_client *c, const char *method, const char *url,
                   struct curl_slist *headers, const char *body, struct http_answer *a,
                   struct zerto_err *e)
{
	CURL *h = curl_easy_init();
	char cerr[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	int ret = -1;

	buf_init(&a->body, BODY_CAP);
	a->status = 0;
	if (h == NULL) {
		zerto_err_set(e, ZERTO_ERR_UNREACHABLE, 0, "curl_easy_init failed");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_SHARE, c->share);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->total_ms);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
	if (a->fd >= 0)
		curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)a->max);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
	if (c->ca_file != NULL)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	rc = curl_easy_perform(h);
	if (a->fd >= 0 && (a->over || rc == CURLE_FILESIZE_EXCEEDED)) {
		a->over = true;
		zerto_err_set(e, ZERTO_ERR_SHAPE, 0,
		              "%s %s: the file is larger than the %lld-byte cap", method, url,
		              a->max);
		goto out;
	}
	if (a->fd >= 0 && a->write_errno != 0) {
		zerto_err_set(e, ZERTO_ERR_CONFIG, 0, "%s %s: cannot store the download: %s",
		              method, url, strerror(a->write_errno));
		goto out;
	}
	if (rc == CURLE_WRITE_ERROR && a->body.truncated) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 0, "%s %s: answer larger than %u bytes", method,
		              url, BODY_CAP);
		goto out;
	}
	if (rc != CURLE_OK) {
		zerto_err_set(e, ZERTO_ERR_UNREACHABLE, 0, "%s %s: %s", method, url,
		              cerr[0] ? cerr : curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
	ret = 0;
out:
	curl_easy_cleanup(h);
	return ret;
}

/* What a failed answer says, for messages: {"Message"}, {"title"},
 * {"error_description"}, else the start of the raw text. */
static void answer_reason(const struct http_answer *a, char *out, size_t outlen)
{
	cJSON *j = cJSON_Parse(buf_str(&a->body));
	const char *keys[] = {"Message", "title", "error_description", "error", "message"};

	out[0] = '\0';
	for (size_t i = 0; j != NULL && i < sizeof(keys) / sizeof(keys[0]); i++) {
		const cJSON *v = cJSON_GetObjectItem(j, keys[i]);

		if (cJSON_IsString(v) && v->valuestring[0]) {
			snprintf(out, outlen, "%s", v->valuestring);
			break;
		}
	}
	cJSON_Delete(j);
	if (out[0] == '\0')
		snprintf(out, outlen, "%.160s", buf_str(&a->body));
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* One call to the token endpoint.  On success *token and *expires_in are set. */
static int fetch_token(struct zerto_client *c, char **token, double *expires_in,
                       struct zerto_err *e)
{
	struct http_answer a = {.fd = -1};
	struct curl_slist *hdr = NULL;
	struct buf form = BUF_INIT;
	cJSON *j = NULL;
	char *esc = NULL;
	int rc = -1;

	buf_init(&form, 0);
	esc = curl_easy_escape(NULL, c->client_id, 0);
	if (c->grant == ZERTO_GRANT_PASSWORD) {
		char *u = curl_easy_escape(NULL, c->username, 0);
		char *p = curl_easy_escape(NULL, c->secret, 0);

		buf_printf(&form, "grant_type=password&client_id=%s&username=%s&password=%s", esc,
		           u, p);
		curl_free(u);
		memset(p, 0, strlen(p));
		curl_free(p);
	} else {
		char *s = curl_easy_escape(NULL, c->secret, 0);

		buf_printf(&form, "grant_type=client_credentials&client_id=%s&client_secret=%s",
		           esc, s);
		memset(s, 0, strlen(s));
		curl_free(s);
	}
	/* Zerto's cloud appliances require openid; ZVMA accepts it. */
	buf_puts(&form, "&scope=openid");
	hdr = curl_slist_append(hdr, "Content-Type: application/x-www-form-urlencoded");
	hdr = curl_slist_append(hdr, "Accept: application/json");
	if (http_do(c, "POST", c->token_url, hdr, buf_str(&form), &a, e) < 0)
		goto out;
	if (a.status != 200) {
		char why[200];

		answer_reason(&a, why, sizeof(why));
		zerto_err_set(e, a.status >= 500 ? ZERTO_ERR_HTTP : ZERTO_ERR_AUTH, a.status,
		              "token endpoint %s: HTTP %ld: %s", c->token_url, a.status, why);
		goto out;
	}
	j = cJSON_Parse(buf_str(&a.body));
	const cJSON *at = cJSON_GetObjectItem(j, "access_token");
	const cJSON *ex = cJSON_GetObjectItem(j, "expires_in");
	if (!cJSON_IsString(at) || at->valuestring[0] == '\0') {
		zerto_err_set(e, ZERTO_ERR_SHAPE, a.status,
		              "POST token endpoint: field access_token missing or not a string");
		goto out;
	}
	if (!cJSON_IsNumber(ex) || ex->valuedouble <= 0) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, a.status,
		              "POST token endpoint: field expires_in missing or not a positive "
		              "number");
		goto out;
	}
	*token = xstrdup(at->valuestring);
	*expires_in = ex->valuedouble;
	rc = 0;
out:
	if (form.data != NULL)
		memset(form.data, 0, form.len);
	buf_free(&form);
	buf_free(&a.body);
	curl_free(esc);
	curl_slist_free_all(hdr);
	cJSON_Delete(j);
	return rc;
}

/* A token to use, as a copy the caller frees.  stale: the token that just got
 * a 401 (or NULL).  Single flight: one thread fetches, the others wait on cv
 * and take its result, success or failure. */
static char *get_token(struct zerto_client *c, const char *stale, struct zerto_err *e)
{
	char *tok = NULL;
	double wait_s = (double)(c->connect_ms + c->total_ms) / 1000.0 + TOKEN_WAIT_SLACK;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		double now = deadline_now_s();
		bool fresh = c->token != NULL && (stale == NULL || strcmp(stale, c->token) != 0);

		if (fresh && now < c->refresh_at) {
			tok = xstrdup(c->token);
			break;
		}
		if (c->fetching) {
			/* Still inside its lifetime: use it while another thread renews. */
			if (fresh && now < c->expires_at - 1.0) {
				tok = xstrdup(c->token);
				break;
			}
			long seq = c->fetch_seq;
			int64_t until = deadline_now_ms() + (int64_t)(wait_s * 1000.0);
			while (c->fetching && c->fetch_seq == seq) {
				if (deadline_cond_wait(&c->cv, &c->mu, until) == ETIMEDOUT)
					break;
			}
			if (c->fetch_seq == seq) {
				zerto_err_set(e, ZERTO_ERR_UNREACHABLE, 0,
				              "timed out waiting for another thread's token fetch");
				break;
			}
			if (c->token == NULL || (stale != NULL && strcmp(stale, c->token) == 0)) {
				*e = c->last; /* that fetch failed: share its reason */
				break;
			}
			continue;
		}
		/* This thread fetches. */
		c->fetching = true;
		c->stats.token_fetches++;
		pthread_mutex_unlock(&c->mu);
		char *nt = NULL;
		double exp_in = 0;
		struct zerto_err fe = {0};
		int rc = fetch_token(c, &nt, &exp_in, &fe);
		double t = deadline_now_s();
		pthread_mutex_lock(&c->mu);
		c->fetching = false;
		c->fetch_seq++;
		if (rc == 0) {
			free(c->token);
			c->token = nt;
			c->expires_at = t + exp_in;
			c->refresh_at = t + 0.8 * exp_in;
			log_msg(LOG_DEBUG, "evt=zerto.token expires_in=%.0f", exp_in);
		} else {
			free(c->token);
			c->token = NULL;
			c->last = fe;
			*e = fe;
		}
		pthread_cond_broadcast(&c->cv);
		if (rc == 0)
			tok = xstrdup(c->token);
		break;
	}
	pthread_mutex_unlock(&c->mu);
	return tok;
}

/* One authenticated exchange with url (path names it in messages): the
 * token, one retry after a 401, any other non-2xx an error.  0 with the
 * answer in *a (the caller frees a->body). */
static int exchange(struct zerto_client *c, const char *method, const char *url, const char *path,
                    const char *json, struct http_answer *a, struct zerto_err *e)
{
	char *tok = NULL;
	int rc = -1;

	e->kind = ZERTO_ERR_NONE;
	for (int attempt = 0; attempt < 2; attempt++) {
		struct curl_slist *hdr = NULL;
		char *auth;
		char *used = tok;

		tok = get_token(c, used, e);
		free(used);
		if (tok == NULL)
			goto out;
		auth = xasprintf("Authorization: Bearer %s", tok);
		hdr = curl_slist_append(hdr, auth);
		hdr =
		    curl_slist_append(hdr, a->fd >= 0 ? "Accept: */*" : "Accept: application/json");
		if (json != NULL)
			hdr = curl_slist_append(hdr, "Content-Type: application/json");
		buf_free(&a->body);
		if (a->fd >= 0 && (ftruncate(a->fd, 0) < 0 || lseek(a->fd, 0, SEEK_SET) < 0)) {
			zerto_err_set(e, ZERTO_ERR_CONFIG, 0,
			              "%s %s: cannot reset the download file: %s", method, path,
			              strerror(errno));
			memset(auth, 0, strlen(auth));
			free(auth);
			curl_slist_free_all(hdr);
			goto out;
		}
		a->got = 0;
		pthread_mutex_lock(&c->mu);
		c->stats.requests++;
		pthread_mutex_unlock(&c->mu);
		int hr = http_do(c, method, url, hdr, json, a, e);
		memset(auth, 0, strlen(auth));
		free(auth);
		curl_slist_free_all(hdr);
		if (hr < 0)
			goto out;
		if (a->status != 401)
			break;
		pthread_mutex_lock(&c->mu);
		c->stats.unauthorized++;
		pthread_mutex_unlock(&c->mu);
		log_msg(LOG_INFO, "evt=zerto.unauthorized method=%s path=%s attempt=%d", method,
		        path, attempt + 1);
	}
	if (a->status == 401) {
		zerto_err_set(e, ZERTO_ERR_AUTH, 401,
		              "%s %s: HTTP 401 with a freshly fetched token (check the client's "
		              "roles in Keycloak)",
		              method, path);
		goto out;
	}
	if (a->status < 200 || a->status > 299) {
		char why[240];

		answer_reason(a, why, sizeof(why));
		zerto_err_set(e, a->status == 403 ? ZERTO_ERR_AUTH : ZERTO_ERR_HTTP, a->status,
		              "%s %s: HTTP %ld: %s", method, path, a->status, why);
		goto out;
	}
	rc = 0;
out:
	if (tok != NULL)
		memset(tok, 0, strlen(tok));
	free(tok);
	return rc;
}

static int request(struct zerto_client *c, const char *method, const char *path, const cJSON *body,
                   cJSON **out, struct zerto_err *e)
{
	char *url = xasprintf("%s%s", c->base_url, path);
	char *json = body ? cJSON_PrintUnformatted(body) : NULL;
	struct http_answer a = {.fd = -1};
	int rc = -1;

	*out = NULL;
	if (exchange(c, method, url, path, json, &a, e) < 0)
		goto out;
	*out = cJSON_Parse(buf_str(&a.body));
	if (*out == NULL) {
		/* Defensive: a POST action may answer with an unquoted task id. */
		const char *s = buf_str(&a.body);
		size_t n = strlen(s);

		while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
			n--;
		if (n == 0 || strchr(s, '{') != NULL || strchr(s, '[') != NULL) {
			zerto_err_set(e, ZERTO_ERR_SHAPE, a.status, "%s %s: answer is not JSON",
			              method, path);
			goto out;
		}
		char *bare = xstrndup(s, n);
		*out = cJSON_CreateString(bare);
		free(bare);
	}
	rc = 0;
out:
	free(url);
	cJSON_free(json);
	buf_free(&a.body);
	return rc;
}

/* The scheme://host[:port] part of an https URL, as a new string, or NULL. */
static char *url_origin(const char *url)
{
	const char *p;

	if (strncasecmp(url, "https://", 8) != 0)
		return NULL;
	p = url + 8;
	p += strcspn(p, "/?#");
	return xstrndup(url, (size_t)(p - url));
}

int zerto_client_download(struct zerto_client *c, const char *url, long long max_bytes, int fd,
                          long long *size, struct zerto_err *e)
{
	char *full = NULL, *origin = NULL, *base = NULL;
	struct http_answer a = {.fd = fd, .max = max_bytes};
	int rc = -1;

	*size = 0;
	e->kind = ZERTO_ERR_NONE;
	if (url == NULL || url[0] == '\0') {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 0, "download: the ZVM gave an empty URL");
		return -1;
	}
	if (strncasecmp(url, "https://", 8) == 0)
		full = xstrdup(url);
	else if (strstr(url, "://") != NULL) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 0,
		              "download: the ZVM gave a URL that is not https (%.120s); refused",
		              url);
		return -1;
	} else
		full = xasprintf("%s%s%s", c->base_url, url[0] == '/' ? "" : "/", url);
	/* The bearer token goes only to the ZVM it was issued by. */
	origin = url_origin(full);
	base = url_origin(c->base_url);
	if (origin == NULL || base == NULL || strcasecmp(origin, base) != 0) {
		zerto_err_set(e, ZERTO_ERR_SHAPE, 0,
		              "download: the URL %.160s is not on the ZVM %s; refused (the token "
		              "is not sent elsewhere)",
		              full, c->base_url);
		goto out;
	}
	if (exchange(c, "GET", full, full, NULL, &a, e) < 0)
		goto out;
	*size = a.got;
	rc = 0;
out:
	buf_free(&a.body);
	free(full);
	free(origin);
	free(base);
	return rc;
}

int zerto_client_get(struct zerto_client *c, const char *path, cJSON **out, struct zerto_err *e)
{
	return request(c, "GET", path, NULL, out, e);
}

int zerto_client_post(struct zerto_client *c, const char *path, const cJSON *body, cJSON **out,
                      struct zerto_err *e)
{
	return request(c, "POST", path, body, out, e);
}

int zerto_client_delete(struct zerto_client *c, const char *path, cJSON **out, struct zerto_err *e)
{
	return request(c, "DELETE", path, NULL, out, e);
}
