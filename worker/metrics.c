/* metrics.c -- the Prometheus endpoint: a small HTTP responder and the scrape. */
#include "worker/metrics.h"

#include "lib/buf.h"
#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "store/store.h"
#include "transport/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define METRICS_IO_TIMEOUT_MS 2000
#define METRICS_REQUEST_MAX   8192
#define METRICS_SESSION       "-c statement_timeout=5s -c default_transaction_read_only=on"

/* Guard durations (seconds): a checkpoint takes tens of seconds to minutes. */
static const double guard_bounds[] = {0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600};
#define NGUARD (sizeof(guard_bounds) / sizeof(guard_bounds[0])) /* == NBOUNDS */
/* Approval latency (seconds): a person, minutes to hours. */
static const char *const approval_bounds[] = {"10",   "30",   "60",   "300",   "900",
                                              "1800", "3600", "7200", "21600", "86400"};
/* Execution durations (seconds). */
static const char *const exec_bounds[] = {"0.1", "0.5", "1",  "2.5", "5",
                                          "10",  "30",  "60", "300", "1800"};
#define NBOUNDS 10

struct metrics {
	struct transport *t;
	struct notifier *n;
	char *database;
	int fd;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	struct store *db; /* the endpoint's own connection; NULL until a scrape connects */
	atomic_llong guard_bucket[NGUARD];
	atomic_llong guard_count, guard_sum_ms, guard_refusals;
	atomic_llong scrapes, scrape_db_errors;
	atomic_llong anchor_failures;
	atomic_bool anchor_failing;
};

void metrics_anchor(struct metrics *m, bool failing)
{
	if (m == NULL)
		return;
	atomic_store(&m->anchor_failing, failing);
	if (failing)
		atomic_fetch_add(&m->anchor_failures, 1);
}

void metrics_guard(struct metrics *m, int64_t ms, bool refused)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < NGUARD; i++)
		if ((double)ms / 1000.0 <= guard_bounds[i])
			atomic_fetch_add(&m->guard_bucket[i], 1);
	atomic_fetch_add(&m->guard_count, 1);
	atomic_fetch_add(&m->guard_sum_ms, ms);
	if (refused)
		atomic_fetch_add(&m->guard_refusals, 1);
}

/* ---- the exposition format ----------------------------------------------- */

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(struct buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			buf_puts(b, "\\\\");
		else if (*v == '"')
			buf_puts(b, "\\\"");
		else if (*v == '\n')
			buf_puts(b, "\\n");
		else
			buf_putc(b, *v);
	}
}

/* name{k1="v1",k2="v2"} value -- labels as NULL-terminated k, v pairs. */
static void sample(struct buf *b, const char *name, const char *const *labels, const char *value)
{
	buf_puts(b, name);
	if (labels && labels[0]) {
		buf_putc(b, '{');
		for (size_t i = 0; labels[i]; i += 2) {
			buf_printf(b, "%s%s=\"", i ? "," : "", labels[i]);
			label_value(b, labels[i + 1]);
			buf_putc(b, '"');
		}
		buf_putc(b, '}');
	}
	buf_printf(b, " %s\n", value);
}

static void sample_ll(struct buf *b, const char *name, const char *const *labels, long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", v);
	sample(b, name, labels, s);
}

/* A histogram's series from cumulative counts per bound, the count and sum.
 * extra: one more label pair (or NULL). */
static void histogram(struct buf *b, const char *name, const char *const *bounds,
                      const long long *cum, long long count, const char *sum, const char *lk,
                      const char *lv)
{
	char n[128];

	snprintf(n, sizeof(n), "%s_bucket", name);
	for (size_t i = 0; i < NBOUNDS; i++)
		sample_ll(b, n,
		          (const char *const[]){lk ? lk : "le", lk ? lv : bounds[i],
		                                lk ? "le" : NULL, bounds[i], NULL},
		          cum[i]);
	sample_ll(
	    b, n,
	    (const char *const[]){lk ? lk : "le", lk ? lv : "+Inf", lk ? "le" : NULL, "+Inf", NULL},
	    count);
	snprintf(n, sizeof(n), "%s_sum", name);
	sample(b, n, (const char *const[]){lk, lv, NULL}, sum);
	snprintf(n, sizeof(n), "%s_count", name);
	sample_ll(b, n, (const char *const[]){lk, lv, NULL}, count);
}

/* ---- from the database ----------------------------------------------------- */

static int requests(struct buf *b, struct store *db)
{
	struct store_res *r = store_exec(
	    db,
	    "SELECT state, coalesce(class, 'unclassified'), count(*) FROM airlock.executions "
	    "GROUP BY 1, 2 ORDER BY 1, 2",
	    0, NULL);
	if (r == NULL)
		return -1;
	family(b, "airlock_requests", "gauge", "Requests by state and class.");
	for (int i = 0; i < store_nrows(r); i++)
		sample(b, "airlock_requests",
		       (const char *const[]){"state", store_get(r, i, 0), "class",
		                             store_get(r, i, 1), NULL},
		       store_get(r, i, 2));
	store_clear(r);
	r = store_exec(db,
	               "SELECT count(*), coalesce(extract(epoch FROM now() - "
	               "min(coalesce(classified_at, created_at))), 0)::float8 "
	               "FROM airlock.executions WHERE state = 'pending_approval'",
	               0, NULL);
	if (r == NULL)
		return -1;
	family(b, "airlock_pending_requests", "gauge", "Requests waiting for an operator.");
	sample(b, "airlock_pending_requests", NULL, store_get(r, 0, 0));
	family(b, "airlock_pending_oldest_age_seconds", "gauge",
	       "How long the oldest waiting request has waited (0 when none waits).");
	sample(b, "airlock_pending_oldest_age_seconds", NULL, store_get(r, 0, 1));
	store_clear(r);
	return 0;
}

/* SELECT [label,] count(v <= bound)..., count(*), sum(v) over `from`. */
static struct store_res *buckets(struct store *db, const char *label, const char *value,
                                 const char *from, const char *const *bounds)
{
	struct buf q = BUF_INIT;
	struct store_res *r;

	buf_printf(&q, "SELECT %s", label ? label : "''");
	for (int i = 0; i < NBOUNDS; i++)
		buf_printf(&q, ", count(*) FILTER (WHERE %s <= $%d::float8)", value, i + 1);
	buf_printf(&q, ", count(*), coalesce(sum(%s), 0)::float8 FROM %s", value, from);
	if (label)
		buf_printf(&q, " GROUP BY 1 ORDER BY 1");
	r = store_exec(db, buf_str(&q), NBOUNDS, bounds);
	buf_free(&q);
	return r;
}

static void histogram_rows(struct buf *b, struct store_res *r, const char *name,
                           const char *const *bounds, const char *lk)
{
	for (int i = 0; i < store_nrows(r); i++) {
		long long cum[NBOUNDS];
		for (int k = 0; k < NBOUNDS; k++)
			cum[k] = atoll(store_get(r, i, 1 + k));
		histogram(b, name, bounds, cum, atoll(store_get(r, i, 1 + NBOUNDS)),
		          store_get(r, i, 2 + NBOUNDS), lk, lk ? store_get(r, i, 0) : NULL);
	}
}

static int durations(struct buf *b, struct store *db)
{
	struct store_res *r =
	    buckets(db, NULL, "extract(epoch FROM decided_at - classified_at)",
	            "airlock.executions WHERE decided_at IS NOT NULL AND classified_at IS NOT NULL",
	            approval_bounds);
	if (r == NULL)
		return -1;
	family(b, "airlock_approval_latency_seconds", "histogram",
	       "From held for approval to an operator's decision (approved or rejected).");
	histogram_rows(b, r, "airlock_approval_latency_seconds", approval_bounds, NULL);
	store_clear(r);
	r = buckets(db, "coalesce(class, 'unclassified')", "duration_ms / 1000.0",
	            "airlock.executions WHERE duration_ms IS NOT NULL", exec_bounds);
	if (r == NULL)
		return -1;
	family(b, "airlock_execution_duration_seconds", "histogram",
	       "How long commands ran on their targets, by class.");
	histogram_rows(b, r, "airlock_execution_duration_seconds", exec_bounds, "class");
	store_clear(r);
	return 0;
}

/* The transport names a node by its slug's part after the type ("hubris"). */
static const char *node_name(const char *slug)
{
	const char *c = strchr(slug, ':');

	return c ? c + 1 : slug;
}

static int estate(struct buf *b, struct store *db, struct transport *t)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT entity, extract(epoch FROM now() - max(probed_at))::float8 "
	               "FROM airlock.checks GROUP BY entity ORDER BY entity",
	               0, NULL);
	if (r == NULL)
		return -1;
	family(b, "airlock_probe_age_seconds", "gauge",
	       "Seconds since the scheduler last probed each entity.");
	for (int i = 0; i < store_nrows(r); i++)
		sample(b, "airlock_probe_age_seconds",
		       (const char *const[]){"entity", store_get(r, i, 0), NULL},
		       store_get(r, i, 1));
	store_clear(r);
	r = store_exec(db,
	               "SELECT n.slug, "
	               "  (SELECT count(*) FROM airlock.executions x JOIN airlock.entities e "
	               "     ON e.slug = x.target WHERE coalesce(e.node, e.slug) = n.slug "
	               "     AND x.state = 'outcome_unknown'), "
	               "  (SELECT count(*) FROM airlock.executions x JOIN airlock.entities e "
	               "     ON e.slug = x.target WHERE coalesce(e.node, e.slug) = n.slug "
	               "     AND x.state = 'failed' AND x.exit_code IS NULL) "
	               "FROM airlock.entities n WHERE n.type = 'proxmox-host' ORDER BY 1",
	               0, NULL);
	if (r == NULL)
		return -1;
	family(b, "airlock_transport_failures", "gauge",
	       "Requests whose link failed, per node: outcome_unknown (the session died "
	       "mid-run) and failed_no_exit (no exit status came back).");
	for (int i = 0; i < store_nrows(r); i++) {
		sample(b, "airlock_transport_failures",
		       (const char *const[]){"node", store_get(r, i, 0), "kind", "outcome_unknown",
		                             NULL},
		       store_get(r, i, 1));
		sample(b, "airlock_transport_failures",
		       (const char *const[]){"node", store_get(r, i, 0), "kind", "failed_no_exit",
		                             NULL},
		       store_get(r, i, 2));
	}
	family(b, "airlock_transport_sessions_opened_total", "counter",
	       "SSH sessions this daemon opened to each node (1 + reconnects).");
	for (int i = 0; i < store_nrows(r); i++) {
		struct transport_stats st;
		transport_stats(t, node_name(store_get(r, i, 0)), &st);
		sample_ll(b, "airlock_transport_sessions_opened_total",
		          (const char *const[]){"node", store_get(r, i, 0), NULL},
		          st.sessions_opened);
	}
	family(b, "airlock_transport_channels_opened_total", "counter",
	       "SSH channels (one per command) this daemon opened on each node.");
	for (int i = 0; i < store_nrows(r); i++) {
		struct transport_stats st;
		transport_stats(t, node_name(store_get(r, i, 0)), &st);
		sample_ll(b, "airlock_transport_channels_opened_total",
		          (const char *const[]){"node", store_get(r, i, 0), NULL},
		          st.channels_opened);
	}
	store_clear(r);
	return 0;
}

static int webhooks(struct buf *b, struct store *db)
{
	struct store_res *r =
	    store_exec(db,
	               "SELECT hook, state, count(*) FROM airlock.notification_deliveries "
	               "GROUP BY 1, 2 ORDER BY 1, 2",
	               0, NULL);
	if (r == NULL)
		return -1;
	family(b, "airlock_webhook_deliveries", "gauge",
	       "Webhook deliveries by webhook and state (pending, delivered, failed).");
	for (int i = 0; i < store_nrows(r); i++)
		sample(b, "airlock_webhook_deliveries",
		       (const char *const[]){"hook", store_get(r, i, 0), "state",
		                             store_get(r, i, 1), NULL},
		       store_get(r, i, 2));
	store_clear(r);
	r = store_exec(db, "SELECT count(*) FROM airlock.notifications WHERE expanded_at IS NULL",
	               0, NULL);
	if (r == NULL)
		return -1;
	family(b, "airlock_notification_outbox_unsent", "gauge",
	       "Notifications no daemon has turned into deliveries yet.");
	sample(b, "airlock_notification_outbox_unsent", NULL, store_get(r, 0, 0));
	store_clear(r);
	return 0;
}

static int from_database(struct metrics *m, struct buf *b)
{
	char err[512];

	if (m->db == NULL) {
		m->db = store_open_with(m->database, "airlockd-metrics", METRICS_SESSION, err,
		                        sizeof(err));
		if (m->db == NULL) {
			char q[512];
			log_msg(LOG_WARN, "evt=metrics.connect_failed error=%s",
			        log_quote(err, q, sizeof(q)));
			return -1;
		}
	}
	if (requests(b, m->db) < 0 || durations(b, m->db) < 0 || estate(b, m->db, m->t) < 0 ||
	    webhooks(b, m->db) < 0) {
		char q[512];
		log_msg(LOG_WARN, "evt=metrics.query_failed error=%s",
		        log_quote(store_errmsg(m->db), q, sizeof(q)));
		store_close(m->db); /* a fresh session next scrape */
		m->db = NULL;
		return -1;
	}
	return 0;
}

/* ---- in the process ----------------------------------------------------------- */

static void in_process(struct metrics *m, struct buf *b)
{
	char bounds[NGUARD][16];
	const char *gb[NGUARD];
	long long cum[NBOUNDS];
	char sum[32];
	struct notifier_stats ns = {0};

	for (size_t i = 0; i < NGUARD; i++) {
		snprintf(bounds[i], sizeof(bounds[i]), "%g", guard_bounds[i]);
		gb[i] = bounds[i];
		cum[i] = atomic_load(&m->guard_bucket[i]);
	}
	snprintf(sum, sizeof(sum), "%.3f", (double)atomic_load(&m->guard_sum_ms) / 1000.0);
	family(b, "airlock_guard_duration_seconds", "histogram",
	       "The guard step (checkpoint before a change) of mutating requests, in this daemon.");
	histogram(b, "airlock_guard_duration_seconds", gb, cum, atomic_load(&m->guard_count), sum,
	          NULL, NULL);
	family(b, "airlock_guard_refusals_total", "counter",
	       "Mutating requests the guard refused (nothing ran), in this daemon.");
	sample_ll(b, "airlock_guard_refusals_total", NULL, atomic_load(&m->guard_refusals));
	if (m->n)
		notifier_stats(m->n, &ns);
	family(b, "airlock_webhook_sent_total", "counter", "Webhook attempts answered 2xx.");
	sample_ll(b, "airlock_webhook_sent_total", NULL, ns.sent);
	family(b, "airlock_webhook_failures_total", "counter",
	       "Webhook attempts that failed (each retry counts).");
	sample_ll(b, "airlock_webhook_failures_total", NULL, ns.failed);
	family(b, "airlock_webhook_gave_up_total", "counter",
	       "Webhook deliveries given up after their last attempt.");
	sample_ll(b, "airlock_webhook_gave_up_total", NULL, ns.gave_up);
	family(b, "airlock_audit_anchor_failing", "gauge",
	       "1 while the last audit anchor could not be written to the anchor file.");
	sample(b, "airlock_audit_anchor_failing", NULL,
	       atomic_load(&m->anchor_failing) ? "1" : "0");
	family(b, "airlock_audit_anchor_failures_total", "counter",
	       "Attempts to write an audit anchor that failed (each retry counts).");
	sample_ll(b, "airlock_audit_anchor_failures_total", NULL, atomic_load(&m->anchor_failures));
	family(b, "airlock_metrics_scrapes_total", "counter", "Scrapes this endpoint answered.");
	sample_ll(b, "airlock_metrics_scrapes_total", NULL, atomic_load(&m->scrapes));
	family(b, "airlock_metrics_database_errors_total", "counter",
	       "Scrapes whose database part failed (those series were left out).");
	sample_ll(b, "airlock_metrics_database_errors_total", NULL,
	          atomic_load(&m->scrape_db_errors));
}

static char *scrape(struct metrics *m)
{
	struct buf b = BUF_INIT, dbb = BUF_INIT;
	bool up;

	atomic_fetch_add(&m->scrapes, 1);
	up = from_database(m, &dbb) == 0;
	if (!up)
		atomic_fetch_add(&m->scrape_db_errors, 1);
	family(
	    &b, "airlock_database_up", "gauge",
	    "1 when this scrape read the database; 0 when it could not (its series are absent).");
	sample(&b, "airlock_database_up", NULL, up ? "1" : "0");
	if (up)
		buf_puts(&b, buf_str(&dbb));
	buf_free(&dbb);
	in_process(m, &b);
	return buf_steal(&b);
}

/* ---- HTTP ------------------------------------------------------------------ */

static void send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return; /* the send timeout bounds a client that does not read */
		p += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, const char *status, const char *type, const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
	                 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	                 "Connection: close\r\n\r\n",
	                 status, type, strlen(body));
	send_all(fd, head, (size_t)n);
	send_all(fd, body, strlen(body));
}

/* Reads the request head (bounded in size and time) and answers it. */
static void serve(struct metrics *m, int fd)
{
	char req[METRICS_REQUEST_MAX + 1];
	size_t len = 0;
	struct timeval tv = {.tv_sec = METRICS_IO_TIMEOUT_MS / 1000,
	                     .tv_usec = (METRICS_IO_TIMEOUT_MS % 1000) * 1000};
	int64_t deadline = deadline_now_ms() + METRICS_IO_TIMEOUT_MS;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < METRICS_REQUEST_MAX && deadline_now_ms() < deadline) {
		ssize_t r = recv(fd, req + len, METRICS_REQUEST_MAX - len, 0);
		if (r <= 0)
			break;
		len += (size_t)r;
		req[len] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[len] = '\0';
	if (strstr(req, "\r\n\r\n") == NULL && strstr(req, "\n\n") == NULL) {
		respond(fd, "400 Bad Request", "text/plain", "incomplete request\n");
		return;
	}
	if (strncmp(req, "GET ", 4) != 0) {
		respond(fd, "405 Method Not Allowed", "text/plain", "only GET /metrics\n");
		return;
	}
	if (strncmp(req + 4, "/metrics ", 9) != 0 && strncmp(req + 4, "/metrics?", 9) != 0) {
		respond(fd, "404 Not Found", "text/plain", "only GET /metrics\n");
		return;
	}
	char *body = scrape(m);
	respond(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body);
	free(body);
}

static void *run(void *arg)
{
	struct metrics *m = arg;

	while (!atomic_load(&m->stop)) {
		struct pollfd p = {.fd = m->fd, .events = POLLIN};
		if (poll(&p, 1, 500) <= 0)
			continue;
		int c = accept(m->fd, NULL, NULL);
		if (c < 0)
			continue;
		serve(m, c);
		close(c);
	}
	return NULL;
}

struct metrics *metrics_new(const struct config *cfg, struct transport *t, struct notifier *n,
                            char *err, size_t errlen)
{
	struct metrics *m = xcalloc(1, sizeof(*m));
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int one = 1;

	m->t = t;
	m->n = n;
	m->fd = -1;
	m->database = cfg->database ? xstrdup(cfg->database) : NULL;
	if (inet_pton(AF_INET, cfg->metrics_address, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)cfg->metrics_port);
		sl = sizeof(*a);
	} else if (inet_pton(AF_INET6, cfg->metrics_address,
	                     &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)cfg->metrics_port);
		sl = sizeof(*a);
	} else {
		snprintf(err, errlen, "metrics address \"%s\" is not an IPv4 or IPv6 address",
		         cfg->metrics_address);
		goto fail;
	}
	m->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (m->fd < 0 || setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(m->fd, (struct sockaddr *)&ss, sl) < 0 || listen(m->fd, 16) < 0) {
		snprintf(err, errlen, "metrics: cannot listen on %s port %d: %s",
		         cfg->metrics_address, cfg->metrics_port, strerror(errno));
		goto fail;
	}
	m->started = pthread_create(&m->thread, NULL, run, m) == 0;
	if (!m->started) {
		snprintf(err, errlen, "metrics: cannot start its thread");
		goto fail;
	}
	log_msg(LOG_INFO, "evt=metrics.listening address=%s port=%d path=/metrics",
	        cfg->metrics_address, cfg->metrics_port);
	return m;
fail:
	if (m->fd >= 0)
		close(m->fd);
	free(m->database);
	free(m);
	return NULL;
}

void metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	atomic_store(&m->stop, true);
	if (m->started)
		pthread_join(m->thread, NULL);
	close(m->fd);
	store_close(m->db);
	free(m->database);
	free(m);
}
