/* server.c -- libmicrohttpd glue: routing, sessions, CSRF, responses, the
 * server-sent-event stream. */
#include "web/server.h"

#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "web/assets.h"
#include "web/links.h"
#include "web/pages.h"
#include "web/web.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BODY_MAX         (64 * 1024) /* a form body; more is refused */
#define SSE_KEEPALIVE_MS 15000       /* a comment line this often keeps proxies from closing */
#define CONN_LIMIT       256
#define CONN_PER_ADDR    32

struct web_server {
	struct web w;
	struct MHD_Daemon *d;
	char *cert, *key;
};

/* Per request: the body as it arrives; the POST to make once the answer is
 * sent (a chat's callback). */
struct req {
	struct buf body;
	char *after_url, *after_body;
};

static void reply_init(struct reply *rp)
{
	memset(rp, 0, sizeof(*rp));
	rp->status = 200;
	buf_init(&rp->body, 0);
	buf_init(&rp->cookie, 0);
	buf_init(&rp->where, 0);
	rp->content_type = "text/html; charset=utf-8";
}

static void reply_free(struct reply *rp)
{
	buf_free(&rp->body);
	buf_free(&rp->cookie);
	buf_free(&rp->where);
	free(rp->after_url);
	free(rp->after_body);
}

static void security_headers(const struct web *w, struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy",
	                        "default-src 'none'; script-src 'self'; style-src 'self'; "
	                        "connect-src 'self'; img-src 'self'; form-action 'self'; "
	                        "frame-ancestors 'none'; base-uri 'none'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "same-origin");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (w->tls)
		MHD_add_response_header(r, "Strict-Transport-Security", "max-age=31536000");
}

static enum MHD_Result send_reply(struct web *w, struct MHD_Connection *c, struct reply *rp)
{
	const char *body = buf_str(&rp->body);
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(rp->body.len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (r == NULL)
		return MHD_NO;
	security_headers(w, r);
	MHD_add_response_header(r, "Content-Type", rp->content_type);
	if (rp->location)
		MHD_add_response_header(r, "Location", rp->location);
	if (rp->cookie.len)
		MHD_add_response_header(r, "Set-Cookie", buf_str(&rp->cookie));
	ret = MHD_queue_response(c, (unsigned)rp->status, r);
	MHD_destroy_response(r);
	return ret;
}

static void redirect(struct reply *rp, const char *to)
{
	rp->status = 303;
	rp->location = to;
}

void web_message(struct reply *rp, int status, const char *title, const char *text)
{
	rp->status = status;
	buf_reset(&rp->body);
	page_message(&rp->body, title, text);
}

/* The client's address: the peer, or with trust_proxy, when the peer is
 * on loopback, the last hop that proxy put in X-Forwarded-For. */
static void client_addr(const struct web *w, struct MHD_Connection *c, char *out, size_t outlen)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	snprintf(out, outlen, "unknown");
	if (ci && ci->client_addr) {
		socklen_t len = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		                                                       : sizeof(struct sockaddr_in);
		getnameinfo(ci->client_addr, len, out, (socklen_t)outlen, NULL, 0, NI_NUMERICHOST);
	}
	/* Only a proxy on this machine is believed about the client's address. */
	if (w->cfg->trust_proxy && web_config_loopback(out)) {
		const char *xff =
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-For");
		if (xff && *xff) {
			const char *last = strrchr(xff, ',');
			last = last ? last + 1 : xff;
			while (*last == ' ')
				last++;
			struct in6_addr tmp;
			char cand[64];
			snprintf(cand, sizeof(cand), "%.*s", (int)strcspn(last, " "), last);
			if (inet_pton(AF_INET, cand, &tmp) == 1 ||
			    inet_pton(AF_INET6, cand, &tmp) == 1)
				snprintf(out, outlen, "%s", cand);
		}
	}
}

static struct session *find_session(struct web *w, struct MHD_Connection *c)
{
	const char *hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Cookie");
	char id[SESSION_TOKEN_LEN + 1];

	if (hdr == NULL || !session_cookie_get(hdr, w->cookie, id, sizeof(id)))
		return NULL;
	return session_find(w->sessions, id, time(NULL));
}

/* "/r/123" + rest: the id and what follows it; 0 when path is not one. */
static long long request_path(const char *url, const char **rest)
{
	char *end;

	if (strncmp(url, "/r/", 3) != 0 || url[3] < '1' || url[3] > '9')
		return 0;
	long long id = strtoll(url + 3, &end, 10);
	if (id <= 0 || (*end != '\0' && *end != '/'))
		return 0;
	*rest = end;
	return id;
}

/* A database failure on a session's connection.  One without an SQLSTATE
 * means the connection itself is gone: the session ends with it. */
void web_db_failed(struct web *w, struct session *s, struct reply *rp)
{
	struct store *db = s->db;
	char q[600];

	log_msg(LOG_WARN, "evt=web.db_error login=%s sqlstate=%s error=%s", s->login,
	        store_sqlstate(db)[0] ? store_sqlstate(db) : "-",
	        log_quote(store_errmsg(db), q, sizeof(q)));
	if (store_sqlstate(db)[0] == '\0') {
		session_end(w->sessions, s);
		web_message(
		    rp, 503, "Database connection lost",
		    "The connection to the database for your login was lost. Sign in again.");
		return;
	}
	web_message(rp, 500, "Database error", store_errmsg(db));
}

/* ---------------------------------------------------------------- server-sent events */

struct sse {
	struct web *w;
	struct session *s;
	uint64_t seen;
	int phase; /* 0 hello, 1 streaming, 2 done */
};

static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct sse *e = cls;
	int n;

	(void)pos;
	if (e->phase == 0) {
		e->phase = 1;
		n = snprintf(out, max, "retry: 3000\n: airlock\n\n");
		return n;
	}
	if (e->phase == 2)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (!session_live(e->w->sessions, e->s, time(NULL))) {
		e->phase = 2;
		return snprintf(out, max, "event: end\ndata: session\n\n");
	}
	int r = hub_wait(e->w->hub, &e->seen, SSE_KEEPALIVE_MS);
	if (r < 0) {
		e->phase = 2;
		return snprintf(out, max, "event: end\ndata: shutdown\n\n");
	}
	if (r == 0)
		return snprintf(out, max, ": keep-alive\n\n");
	return snprintf(out, max, "event: change\ndata: %llu\n\n", (unsigned long long)e->seen);
}

static void sse_free(void *cls)
{
	struct sse *e = cls;

	session_put(e->w->sessions, e->s);
	free(e);
}

static enum MHD_Result sse_start(struct web *w, struct MHD_Connection *c, struct session *s)
{
	struct sse *e = xcalloc(1, sizeof(*e));
	struct MHD_Response *r;
	enum MHD_Result ret;

	e->w = w;
	e->s = s; /* the stream keeps the caller's reference */
	e->seen = hub_generation(w->hub);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, sse_read, e, sse_free);
	if (r == NULL) {
		sse_free(e);
		return MHD_NO;
	}
	security_headers(w, r);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---------------------------------------------------------------- routes */

static const char *arg(struct MHD_Connection *c, const char *key)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

static struct queue_filter filter_of(struct MHD_Connection *c)
{
	struct queue_filter f = {.target = arg(c, "target"),
	                         .agent = arg(c, "agent"),
	                         .cls = arg(c, "class"),
	                         .state = arg(c, "state"),
	                         .older = arg(c, "older")};
	return f;
}

/* An agent's login from /agents/LOGIN (already percent-decoded); NULL when
 * it cannot be one. */
static const char *agent_path(const char *url)
{
	const char *login = url + strlen("/agents/");

	if (strncmp(url, "/agents/", 8) != 0 || login[0] == '\0' || strlen(login) > 63)
		return NULL;
	for (const char *p = login; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '/')
			return NULL;
	return login;
}

/* "/a/TOKEN": the token; NULL when url is not one. */
static const char *action_path(const char *url)
{
	return strncmp(url, "/a/", 3) == 0 && links_token_ok(url + 3) ? url + 3 : NULL;
}

static void get_page(struct web *w, struct MHD_Connection *c, struct session *s, const char *url,
                     struct reply *rp)
{
	struct page_ctx pc = {.login = s->login, .csrf = s->csrf};
	struct queue_filter qf = filter_of(c);
	const char *rest = NULL, *login;
	long long id = request_path(url, &rest);
	int rc;

	if (action_path(url)) {
		action_get(w, s, action_path(url), rp);
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (strcmp(url, "/") == 0) {
		rc = page_pending(&rp->body, s->db, &pc, &qf);
	} else if (strcmp(url, "/pending.frag") == 0) {
		rc = queue_filter_problem(&qf) ? 0 : page_pending_list(&rp->body, s->db, &qf);
	} else if (id > 0 && *rest == '\0') {
		rc = page_request(&rp->body, s->db, &pc, id, NULL, false);
		if (rc == 1) {
			web_message(rp, 404, "Not found", "There is no request with that number.");
			rc = 0;
		}
	} else if (id > 0 && strcmp(rest, "/state.frag") == 0) {
		rc = page_request_state(&rp->body, s->db, id);
	} else if (id > 0 && strcmp(rest, "/events.frag") == 0) {
		rc = page_request_events(&rp->body, s->db, id);
	} else if ((login = agent_path(url)) != NULL) {
		rc = page_agent(&rp->body, s->db, &pc, login);
	} else if (strcmp(url, "/history") == 0) {
		rc = page_history(&rp->body, s->db, &pc, arg(c, "q"), arg(c, "state"));
	} else if (strcmp(url, "/audit") == 0) {
		rc = page_audit(&rp->body, s->db, &pc);
	} else if (strcmp(url, "/side-door") == 0) {
		rc = page_side_door(&rp->body, s->db, &pc);
	} else {
		web_message(rp, 404, "Not found", "There is no such page.");
		rc = 0;
	}
	if (rc < 0)
		web_db_failed(w, s, rp);
	pthread_mutex_unlock(&s->lock);
}

/* A write from another site carries no Origin of ours; a browser always
 * sends Origin on a POST, so a different one is refused outright. */
static bool origin_ok(struct MHD_Connection *c)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");

	if (origin == NULL)
		return true; /* not a browser, or an old one: the CSRF token decides */
	if (host == NULL)
		return false;
	const char *p = strstr(origin, "://");
	return p && strcmp(p + 3, host) == 0;
}

static void post(struct web *w, struct MHD_Connection *c, const char *url, const char *addr,
                 struct req *rq, struct reply *rp)
{
	struct form f;
	struct session *s = NULL;
	const char *rest = NULL;
	long long id;

	if (rq->body.truncated) {
		web_message(rp, 413, "Too large", "The form was larger than airlock-web accepts.");
		return;
	}
	/* A chat's server calls back with its own proof, not a session. */
	if (strcmp(url, "/chat/slack") == 0) {
		chat_slack_post(
		    w, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Slack-Request-Timestamp"),
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Slack-Signature"), &rq->body,
		    rp);
		return;
	}
	if (strcmp(url, "/chat/mattermost") == 0) {
		chat_mattermost_post(w, &rq->body, rp);
		return;
	}
	if (!origin_ok(c)) {
		web_message(rp, 403, "Refused", "This form was sent from another site.");
		return;
	}
	if (form_parse(&f, buf_str(&rq->body), rq->body.len) < 0) {
		web_message(rp, 400, "Bad form",
		            "The form could not be read (malformed encoding).");
		return;
	}
	if (strcmp(url, "/login") == 0) {
		signin_post(w, addr, &f, rp);
		goto out;
	}
	s = find_session(w, c);
	if (s == NULL) {
		web_message(
		    rp, 403, "Session ended",
		    "Your session has ended (expired, signed out, or never started). Nothing "
		    "was done. Sign in again.");
		log_msg(LOG_INFO, "evt=web.refused why=no_session addr=%s path=%s", addr, url);
		goto out;
	}
	if (!session_csrf_ok(s, form_get(&f, "csrf"))) {
		web_message(
		    rp, 403, "Refused",
		    "This form carried no valid CSRF token, so nothing was done. Reload the page "
		    "and try again.");
		log_msg(LOG_WARN, "evt=web.refused why=csrf login=%s addr=%s", s->login, addr);
		goto out;
	}
	if (strcmp(url, "/logout") == 0) {
		signin_out(w, s, addr, rp);
	} else if (strcmp(url, "/bulk") == 0) {
		decide_bulk_post(w, s, addr, &f, rp);
	} else if (action_path(url)) {
		action_post(w, s, addr, action_path(url), &f, rp);
	} else if ((id = request_path(url, &rest)) > 0 &&
	           (strcmp(rest, "/approve") == 0 || strcmp(rest, "/reject") == 0)) {
		decide_post(w, s, addr, id, strcmp(rest, "/approve") == 0, &f, rp);
	} else if (id > 0 &&
	           (strcmp(rest, "/release-output") == 0 || strcmp(rest, "/discard-output") == 0)) {
		decide_output_post(w, s, addr, id, strcmp(rest, "/release-output") == 0, &f, rp);
	} else {
		web_message(rp, 404, "Not found", "There is no such action.");
	}
out:
	session_put(w->sessions, s);
	form_free(&f);
}

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
	struct buf *b = cls;

	(void)kind;
	buf_putc(b, b->len && strchr(buf_str(b), '?') ? '&' : '?');
	links_encode(b, key);
	if (value) {
		buf_putc(b, '=');
		links_encode(b, value);
	}
	return MHD_YES;
}

/* The sign-in form's address for a page asked for without a session: the
 * page (path and query) comes back as next. */
static void to_signin(struct MHD_Connection *c, const char *url, struct reply *rp)
{
	struct buf here = BUF_INIT;

	buf_puts(&here, url);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_query, &here);
	buf_puts(&rp->where, "/login");
	if (strcmp(url, "/") != 0 || strchr(buf_str(&here), '?')) {
		buf_puts(&rp->where, "?next=");
		links_encode(&rp->where, buf_str(&here));
	}
	buf_free(&here);
	redirect(rp, buf_str(&rp->where));
}

static void get(struct web *w, struct MHD_Connection *c, const char *url, struct reply *rp)
{
	const char *type, *rest = NULL, *next;
	size_t len;
	const char *asset = assets_get(url, &type, &len);
	struct session *s;
	long long id;

	if (asset) {
		rp->content_type = type;
		buf_append(&rp->body, asset, len);
	} else if ((id = request_path(url, &rest)) == 0 && strncmp(url, "/requests/", 10) == 0) {
		/* the address older notifications carry: the request's page */
		char *end;
		long long old = strtoll(url + 10, &end, 10);
		if (old > 0 && *end == '\0' && url[10] >= '1' && url[10] <= '9') {
			buf_printf(&rp->where, "/r/%lld", old);
			redirect(rp, buf_str(&rp->where));
		} else {
			web_message(rp, 404, "Not found", "There is no such page.");
		}
	} else if (strcmp(url, "/login") == 0) {
		next = arg(c, "next");
		s = find_session(w, c);
		if (s && links_safe_next(next)) {
			buf_puts(&rp->where, next);
			redirect(rp, buf_str(&rp->where));
		} else if (s) {
			redirect(rp, "/");
		} else {
			page_signin(&rp->body, NULL, next);
		}
		session_put(w->sessions, s);
	} else if ((s = find_session(w, c)) == NULL) {
		bool partial = strcmp(url, "/events") == 0 || strstr(url, ".frag") != NULL;
		if (partial)
			web_message(rp, 401, "Session ended", "Sign in again.");
		else
			to_signin(c, url, rp);
	} else {
		get_page(w, c, s, url, rp);
		session_put(w->sessions, s);
	}
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **ctx)
{
	struct web *w = cls;
	struct req *rq = *ctx;
	struct reply rp;
	char addr[64];
	enum MHD_Result ret;

	(void)version;
	if (rq == NULL) {
		rq = xcalloc(1, sizeof(*rq));
		buf_init(&rq->body, BODY_MAX);
		*ctx = rq;
		return MHD_YES;
	}
	if (*upload_size) {
		buf_append(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	reply_init(&rp);
	client_addr(w, c, addr, sizeof(addr));
	bool is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	if (strcmp(method, "POST") == 0) {
		post(w, c, url, addr, rq, &rp);
	} else if (!is_get) {
		web_message(&rp, 405, "Method not allowed", "Only GET and POST are served.");
	} else if (strcmp(url, "/events") == 0) {
		struct session *s = find_session(w, c);
		if (s != NULL) {
			reply_free(&rp);
			return sse_start(w, c, s); /* the stream owns s's reference */
		}
		web_message(&rp, 401, "Session ended", "Sign in again.");
	} else {
		get(w, c, url, &rp);
	}
	ret = send_reply(w, c, &rp);
	rq->after_url = rp.after_url;
	rq->after_body = rp.after_body;
	rp.after_url = rp.after_body = NULL;
	reply_free(&rp);
	return ret;
}

static size_t discard(void *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* The POST a chat's callback asked for, once its answer is sent: bounded,
 * logged, never retried (the chat user presses the button again). */
static void after_post(const char *url, const char *body)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	long status = 0;
	CURLcode rc = CURLE_FAILED_INIT;

	if (h) {
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
		rc = curl_easy_perform(h);
		if (rc == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_cleanup(h);
	}
	curl_slist_free_all(hdr);
	if (rc == CURLE_OK && status / 100 == 2)
		log_msg(LOG_INFO, "evt=web.chat_answered status=%ld", status);
	else
		log_msg(LOG_WARN, "evt=web.chat_answer_failed status=%ld error=\"%s\"", status,
		        rc == CURLE_OK ? "not 2xx" : curl_easy_strerror(rc));
}

static void completed(void *cls, struct MHD_Connection *c, void **ctx,
                      enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *ctx;

	(void)cls;
	(void)c;
	if (rq) {
		if (rq->after_url && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
			after_post(rq->after_url, rq->after_body ? rq->after_body : "{}");
		free(rq->after_url);
		free(rq->after_body);
		buf_free(&rq->body);
		free(rq);
		*ctx = NULL;
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512], q[600];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_msg(LOG_WARN, "evt=web.http error=%s", log_quote(line, q, sizeof(q)));
}

struct web_server *web_server_start(const struct web_config *cfg, char *err, size_t errlen)
{
	struct web_server *s = xcalloc(1, sizeof(*s));
	struct web *w = &s->w;
	struct sockaddr_storage sa;
	char rerr[256];
	size_t len;
	unsigned flags =
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	memset(&sa, 0, sizeof(sa));
	w->cfg = cfg;
	w->tls = cfg->tls_cert != NULL;
	w->cookie = w->tls ? "__Host-airlock" : "airlock";
	pthread_mutex_init(&w->svc_mu, NULL);
	if (w->tls) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, errlen, "this libmicrohttpd was built without TLS");
			goto fail;
		}
		s->cert = readfile(cfg->tls_cert, 1 << 20, &len, rerr, sizeof(rerr));
		if (s->cert == NULL) {
			snprintf(err, errlen, "tls_cert: %s", rerr);
			goto fail;
		}
		s->key = readfile(cfg->tls_key, 1 << 20, &len, rerr, sizeof(rerr));
		if (s->key == NULL) {
			snprintf(err, errlen, "tls_key: %s", rerr);
			goto fail;
		}
		flags |= MHD_USE_TLS;
	}
	if (strchr(cfg->listen_host, ':')) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&sa;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)cfg->listen_port);
		inet_pton(AF_INET6, cfg->listen_host, &a6->sin6_addr);
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&sa;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)cfg->listen_port);
		inet_pton(AF_INET, cfg->listen_host, &a4->sin_addr);
	}
	w->svc = store_open_with(cfg->database, "airlock-web", "-c statement_timeout=10000", rerr,
	                         sizeof(rerr));
	if (w->svc == NULL) {
		snprintf(err, errlen, "database (airlock-web's own login): %s", rerr);
		goto fail;
	}
	if (cfg->public_url) {
		/* The links airlock hands out (notifications, next_step, agents'
		 * answers) are built from the address the console publishes. */
		struct store_res *r = store_exec(w->svc, "SELECT airlock.web_publish_url($1)", 1,
		                                 (const char *const[]){cfg->public_url});
		char q[600];
		if (r == NULL)
			log_msg(LOG_WARN, "evt=web.publish_failed url=%s error=%s", cfg->public_url,
			        log_quote(store_errmsg(w->svc), q, sizeof(q)));
		else
			log_msg(LOG_INFO, "evt=web.published url=%s", cfg->public_url);
		store_clear(r);
	}
	w->hub = hub_start(cfg->database, rerr, sizeof(rerr));
	if (w->hub == NULL) {
		snprintf(err, errlen, "LISTEN: %s", rerr);
		goto fail;
	}
	w->sessions = session_table_new(cfg->max_sessions, cfg->session_idle_s, cfg->session_max_s,
	                                signin_release);
	w->failures = ratelimit_new(cfg->signin_max_failures, cfg->signin_window_s, 4096);
	s->d = MHD_start_daemon(
	    flags, 0, NULL, NULL, handle, w, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)CONN_LIMIT, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONN_PER_ADDR,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60, MHD_OPTION_NOTIFY_COMPLETED, completed,
	    NULL, w->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, s->key,
	    MHD_OPTION_HTTPS_MEM_CERT, s->cert, MHD_OPTION_END);
	if (s->d == NULL) {
		snprintf(err, errlen,
		         "could not listen on %s:%d (in use, not an address of this machine, or "
		         "the certificate and key do not load)",
		         cfg->listen_host, cfg->listen_port);
		goto fail;
	}
	return s;
fail:
	web_server_stop(s);
	return NULL;
}

void web_server_stop(struct web_server *s)
{
	if (s == NULL)
		return;
	hub_stop(s->w.hub); /* streams end ... */
	if (s->d)
		MHD_stop_daemon(s->d); /* ... so their threads can be joined */
	hub_free(s->w.hub);
	session_table_free(s->w.sessions);
	ratelimit_free(s->w.failures);
	store_close(s->w.svc);
	pthread_mutex_destroy(&s->w.svc_mu);
	if (s->key)
		explicit_bzero(s->key, strlen(s->key));
	free(s->key);
	free(s->cert);
	free(s);
}
