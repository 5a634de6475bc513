/* store.c -- connection, statements and errors. */
#include "store/store.h"

#include "lib/deadline.h"
#include "lib/sqlstate.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store {
	PGconn *conn;
	char errmsg[1024];
	char sqlstate[6];
	char detail[512];
	char hint[512];
	bool sync_wait_cancelled; /* the server reported a cancelled synchronous-replication wait */
	PGnotify *held; /* a notification taken by store_wait_notify, not yet handed out */

	/* Kept to start a session later (store_new) and again (store_ensure). */
	char *conninfo, *app, *options;
	store_hook_fn on_connect; /* runs on every new session before it is used */
	void *on_connect_arg;
	store_notice_fn on_notice; /* sees the server's notices */
	void *on_notice_arg;
	char **channels; /* LISTENed with store_listen(); store_ensure() listens again */
	size_t nchannels;
	struct store_backoff backoff; /* between failed starts in store_ensure() */
	int64_t retry_at_ms;          /* no new start before this (monotonic ms) */
	char start_err[1024];         /* why the last start failed, repeated until the next try */
	char start_state[6];
	struct prepared *prep; /* store_execp's statements, by SQL text */
	size_t nprep;
};

/* A statement store_execp() prepares once per session.  The name is the
 * store's own (airlock_p<n>); ready says whether this session has it. */
struct prepared {
	char *sql;
	char name[24];
	bool ready;
};

/* A new session (or none) has none of the statements prepared in the last. */
static void forget_prepared(struct store *s)
{
	for (size_t i = 0; i < s->nprep; i++)
		s->prep[i].ready = false;
}

/* PostgreSQL reports a commit whose wait for a synchronous standby was
 * cancelled as done, with only a WARNING: the commit is local and may be
 * lost by a failover (or lives on a primary that a promotion left behind).
 * Such a commit must not count as durable. */
static void notice_receiver(void *arg, const PGresult *res)
{
	struct store *s = arg;
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (msg && strstr(msg, "synchronous replication"))
		s->sync_wait_cancelled = true;
	if (s->on_notice != NULL)
		s->on_notice(s->on_notice_arg,
		             PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED),
		             msg ? msg : "");
}

static void set_errorv(struct store *s, const char *sqlstate, const char *fmt, va_list ap)
{
	size_t len;

	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	len = strlen(s->errmsg);
	while (len > 0 && (s->errmsg[len - 1] == '\n' || s->errmsg[len - 1] == ' '))
		s->errmsg[--len] = '\0';
	snprintf(s->sqlstate, sizeof(s->sqlstate), "%s", sqlstate ? sqlstate : "");
}

static void set_error(struct store *s, const char *sqlstate, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(struct store *s, const char *sqlstate, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_errorv(s, sqlstate, fmt, ap);
	va_end(ap);
}

void store_set_error(struct store *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_errorv(s, NULL, fmt, ap);
	va_end(ap);
}

void store_set_error_state(struct store *s, const char *sqlstate, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_errorv(s, sqlstate, fmt, ap);
	va_end(ap);
	s->detail[0] = '\0';
	s->hint[0] = '\0';
}

static void clear_error(struct store *s)
{
	s->errmsg[0] = '\0';
	s->sqlstate[0] = '\0';
	s->detail[0] = '\0';
	s->hint[0] = '\0';
}

/* Takes the error of a failed result: the primary message only, since
 * callers print it to people and agents. */
static void set_result_error(struct store *s, const PGresult *res)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;

	if (msg == NULL)
		msg = PQerrorMessage(s->conn);
	set_error(s, state, "%s", msg);
	snprintf(s->detail, sizeof(s->detail), "%s", detail ? detail : "");
	snprintf(s->hint, sizeof(s->hint), "%s", hint ? hint : "");
}

struct store *store_open(const char *conninfo, const char *app, char *err, size_t errlen)
{
	return store_open_with(conninfo, app, NULL, err, errlen);
}

struct store *store_new(const char *conninfo, const char *app, const char *options)
{
	struct store *s = xcalloc(1, sizeof(*s));

	if (conninfo == NULL || conninfo[0] == '\0')
		conninfo = getenv("AIRLOCK_DB");
	s->conninfo = xstrdup(conninfo ? conninfo : "");
	s->app = xstrdup(app ? app : "airlock");
	s->options = options ? xstrdup(options) : NULL;
	return s;
}

/* Starts a session with the settings kept on s.  -1 with the reason (one
 * line, "cannot connect to PostgreSQL: ...") in err. */
static int connect_now(struct store *s, char *err, size_t errlen)
{
	const char *keys[5];
	const char *vals[5];
	char opts[512];
	int n = 0;
	size_t len;

	/* Defaults first: a conninfo that sets them overrides (expand_dbname). */
	keys[n] = "connect_timeout";
	vals[n++] = "10";
	keys[n] = "application_name";
	vals[n++] = s->app;
	if (s->conninfo[0]) {
		keys[n] = "dbname";
		vals[n++] = s->conninfo;
	}
	/* After the conninfo: airlock's session settings win; the caller's
	 * come last, so they may set another statement_timeout. */
	snprintf(opts, sizeof(opts), "-c statement_timeout=%s%s%s", STORE_STATEMENT_TIMEOUT,
	         s->options ? " " : "", s->options ? s->options : "");
	keys[n] = "options";
	vals[n++] = opts;
	keys[n] = NULL;
	vals[n] = NULL;

	PQfinish(s->conn);
	forget_prepared(s);
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK) {
		PQsetNoticeReceiver(s->conn, notice_receiver, s);
		return 0;
	}
	snprintf(err, errlen, "cannot connect to PostgreSQL: %s",
	         s->conn ? PQerrorMessage(s->conn) : "out of memory");
	len = strlen(err);
	while (len > 0 && (err[len - 1] == '\n' || err[len - 1] == ' '))
		err[--len] = '\0';
	PQfinish(s->conn);
	s->conn = NULL;
	return -1;
}

struct store *store_open_with(const char *conninfo, const char *app, const char *options, char *err,
                              size_t errlen)
{
	struct store *s = store_new(conninfo, app, options);

	if (connect_now(s, err, errlen) < 0) {
		store_close(s);
		return NULL;
	}
	return s;
}

void store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (s->held)
		PQfreemem(s->held);
	PQfinish(s->conn);
	for (size_t i = 0; i < s->nchannels; i++)
		free(s->channels[i]);
	free(s->channels);
	for (size_t i = 0; i < s->nprep; i++)
		free(s->prep[i].sql);
	free(s->prep);
	free(s->conninfo);
	free(s->app);
	free(s->options);
	free(s);
}

const char *store_errmsg(const struct store *s)
{
	return s->errmsg;
}

const char *store_sqlstate(const struct store *s)
{
	return s->sqlstate;
}

const char *store_errdetail(const struct store *s)
{
	return s->detail;
}

const char *store_errhint(const struct store *s)
{
	return s->hint;
}

/* A result is libpq's, under another name: nothing outside store/ sees
 * libpq's types. */
static struct store_res *to_res(PGresult *res)
{
	return (struct store_res *)res;
}

static const PGresult *from_res(const struct store_res *r)
{
	return (const PGresult *)r;
}

int store_nrows(const struct store_res *r)
{
	return PQntuples(from_res(r));
}

int store_nfields(const struct store_res *r)
{
	return PQnfields(from_res(r));
}

const char *store_get(const struct store_res *r, int row, int col)
{
	return PQgetvalue(from_res(r), row, col);
}

bool store_isnull(const struct store_res *r, int row, int col)
{
	return PQgetisnull(from_res(r), row, col) != 0;
}

int store_getlen(const struct store_res *r, int row, int col)
{
	return PQgetlength(from_res(r), row, col);
}

void store_clear(struct store_res *r)
{
	PQclear((PGresult *)r);
}

/* A call on a store whose session has not started or was ended: the reason
 * is why the last start failed, when one did. */
static void not_connected(struct store *s)
{
	if (s->start_err[0] != '\0')
		set_error(s, s->start_state, "%s", s->start_err);
	else
		set_error(s, SQLSTATE_CONNECTION_DOES_NOT_EXIST, "not connected to PostgreSQL");
}

struct store_res *store_exec(struct store *s, const char *sql, int nparams,
                             const char *const *params)
{
	return store_exec_bin(s, sql, nparams, params, NULL, NULL);
}

/* The answer to a statement: its rows, or NULL with the reason on s.  A
 * commit whose synchronous-replication wait was cancelled is not durable: the
 * session is ended (its locks go with it) and the step fails as a lost
 * connection, so that nothing is done on the strength of that commit. */
static struct store_res *answer(struct store *s, PGresult *res)
{
	ExecStatusType st = PQresultStatus(res);

	if ((st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) && s->sync_wait_cancelled) {
		PQclear(res);
		PQreset(s->conn);
		forget_prepared(s);
		set_error(s, SQLSTATE_CONNECTION_FAILURE,
		          "the commit was not confirmed by a synchronous standby (its wait was "
		          "cancelled); the session was ended and the step is not taken as done");
		return NULL;
	}
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return to_res(res);
	set_result_error(s, res);
	PQclear(res);
	return NULL;
}

struct store_res *store_exec_bin(struct store *s, const char *sql, int nparams,
                                 const char *const *params, const int *lengths, const int *formats)
{
	clear_error(s);
	s->sync_wait_cancelled = false;
	if (s->conn == NULL) {
		not_connected(s);
		return NULL;
	}
	return answer(s, PQexecParams(s->conn, sql, nparams, NULL, params, lengths, formats, 0));
}

static struct prepared *prepared_for(struct store *s, const char *sql)
{
	struct prepared *p;

	for (size_t i = 0; i < s->nprep; i++)
		if (s->prep[i].sql == sql || strcmp(s->prep[i].sql, sql) == 0)
			return &s->prep[i];
	s->prep = xrealloc(s->prep, (s->nprep + 1) * sizeof(*s->prep));
	p = &s->prep[s->nprep];
	p->sql = xstrdup(sql);
	snprintf(p->name, sizeof(p->name), "airlock_p%zu", s->nprep);
	p->ready = false;
	s->nprep++;
	return p;
}

/* Did the server refuse to run the prepared statement itself, before
 * running anything: it is gone (DISCARD ALL, DEALLOCATE), or its result type
 * changed under it (a migration replaced a function)?  Outside a transaction
 * block it may then be prepared again and sent once more. */
static bool stale_statement(struct store *s, const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (state == NULL || PQtransactionStatus(s->conn) != PQTRANS_IDLE)
		return false;
	return strcmp(state, SQLSTATE_INVALID_SQL_STATEMENT_NAME) == 0 ||
	       (strcmp(state, SQLSTATE_FEATURE_NOT_SUPPORTED) == 0 && msg != NULL &&
	        strstr(msg, "cached plan must not change result type") != NULL);
}

struct store_res *store_execp_bin(struct store *s, const char *sql, int nparams,
                                  const char *const *params, const int *lengths, const int *formats)
{
	struct prepared *p;
	PGresult *res = NULL;

	clear_error(s);
	s->sync_wait_cancelled = false;
	if (s->conn == NULL) {
		not_connected(s);
		return NULL;
	}
	p = prepared_for(s, sql);
	for (int round = 0; round < 2; round++) {
		if (!p->ready) {
			res = PQprepare(s->conn, p->name, sql, nparams, NULL);
			if (PQresultStatus(res) != PGRES_COMMAND_OK) {
				set_result_error(s, res);
				PQclear(res);
				return NULL;
			}
			PQclear(res);
			p->ready = true;
		}
		res = PQexecPrepared(s->conn, p->name, nparams, params, lengths, formats, 0);
		if (round > 0 || PQresultStatus(res) != PGRES_FATAL_ERROR ||
		    !stale_statement(s, res))
			break;
		PQclear(res);
		res = NULL;
		store_exec_quiet(s, "DEALLOCATE ALL");
		forget_prepared(s);
	}
	return answer(s, res);
}

struct store_res *store_execp(struct store *s, const char *sql, int nparams,
                              const char *const *params)
{
	return store_execp_bin(s, sql, nparams, params, NULL, NULL);
}

int store_exec_script(struct store *s, const char *sql)
{
	PGresult *res;
	int rc = 0;

	clear_error(s);
	if (s->conn == NULL) {
		not_connected(s);
		return -1;
	}
	if (!PQsendQuery(s->conn, sql)) {
		set_error(s, NULL, "%s", PQerrorMessage(s->conn));
		return -1;
	}
	/* A script yields one result per statement; the first failure wins. */
	while ((res = PQgetResult(s->conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);
		if (rc == 0 && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
			set_result_error(s, res);
			rc = -1;
		}
		PQclear(res);
	}
	return rc;
}

void store_exec_quiet(struct store *s, const char *sql)
{
	if (s->conn != NULL)
		PQclear(PQexec(s->conn, sql));
}

bool store_connected(const struct store *s)
{
	return PQstatus(s->conn) == CONNECTION_OK;
}

/* The caller's hook on a session that just started; a refusal ends it. */
static int run_hook(struct store *s)
{
	if (s->on_connect == NULL || s->on_connect(s, s->on_connect_arg) == 0)
		return 0;
	if (s->errmsg[0] == '\0')
		set_error(s, NULL, "the new session was refused");
	PQfinish(s->conn);
	s->conn = NULL;
	return -1;
}

int store_reset(struct store *s)
{
	char err[1024];

	clear_error(s);
	if (s->held) {
		PQfreemem(s->held);
		s->held = NULL;
	}
	if (s->conn == NULL) {
		if (connect_now(s, err, sizeof(err)) < 0) {
			set_error(s, SQLSTATE_CONNECTION_FAILURE, "%s", err);
			return -1;
		}
	} else {
		PQreset(s->conn);
		forget_prepared(s);
		if (PQstatus(s->conn) != CONNECTION_OK) {
			set_error(s, SQLSTATE_CONNECTION_FAILURE,
			          "cannot connect to PostgreSQL: %s", PQerrorMessage(s->conn));
			return -1;
		}
	}
	return run_hook(s);
}

void store_disconnect(struct store *s)
{
	if (s->held) {
		PQfreemem(s->held);
		s->held = NULL;
	}
	PQfinish(s->conn);
	s->conn = NULL;
	forget_prepared(s);
}

void store_on_connect(struct store *s, store_hook_fn fn, void *arg)
{
	s->on_connect = fn;
	s->on_connect_arg = arg;
}

void store_on_notice(struct store *s, store_notice_fn fn, void *arg)
{
	s->on_notice = fn;
	s->on_notice_arg = arg;
}

/* Whether the session is up, found without sending anything: a session the
 * server closed while idle (a restart, a terminated backend) shows here, so
 * starting a new one cannot run a statement twice. */
static bool alive(struct store *s)
{
	/* A server that ends a session sends its reason, then closes: reading
	 * the reason leaves the socket readable, and the next read finds the
	 * end.  A few rounds suffice; notifications alone do not end it. */
	for (int i = 0; i < 4; i++) {
		struct pollfd pfd = {.events = POLLIN};
		if (s->conn == NULL || PQstatus(s->conn) != CONNECTION_OK)
			return false;
		pfd.fd = PQsocket(s->conn);
		if (pfd.fd < 0 || poll(&pfd, 1, 0) <= 0)
			return pfd.fd >= 0;
		if (PQconsumeInput(s->conn) != 1)
			return false;
	}
	return PQstatus(s->conn) == CONNECTION_OK;
}

static int listen_cmd(struct store *s, const char *verb, const char *channel);

int store_ensure(struct store *s)
{
	int64_t now;
	int rc = 0;

	clear_error(s);
	if (alive(s))
		return 0;
	now = deadline_now_ms();
	if (s->start_err[0] != '\0' && now < s->retry_at_ms) {
		not_connected(s);
		return -1;
	}
	rc = store_reset(s);
	for (size_t i = 0; rc == 0 && i < s->nchannels; i++)
		rc = listen_cmd(s, "LISTEN", s->channels[i]);
	if (rc == 0) {
		store_backoff_reset(&s->backoff);
		s->start_err[0] = '\0';
		return 0;
	}
	snprintf(s->start_err, sizeof(s->start_err), "%s", s->errmsg);
	snprintf(s->start_state, sizeof(s->start_state), "%s", s->sqlstate);
	/* Counted from the end of this try, however long it took. */
	s->retry_at_ms = deadline_now_ms() + store_backoff_next(&s->backoff);
	store_disconnect(s);
	return -1;
}

struct store_res *store_exec_read(struct store *s, const char *sql, int nparams,
                                  const char *const *params)
{
	struct store_res *r = store_exec(s, sql, nparams, params);

	/* Lost with the session: a read may be asked again, on a new one. */
	if (r == NULL && s->conn != NULL && PQstatus(s->conn) != CONNECTION_OK &&
	    store_ensure(s) == 0)
		r = store_exec(s, sql, nparams, params);
	return r;
}

enum { BACKOFF_FIRST_MS = 200, BACKOFF_MAX_MS = 5000 };

int store_backoff_next(struct store_backoff *b)
{
	int now = b->next_ms > 0 ? b->next_ms : BACKOFF_FIRST_MS;

	b->next_ms = now >= BACKOFF_MAX_MS / 2 ? BACKOFF_MAX_MS : now * 2;
	return now;
}

void store_backoff_reset(struct store_backoff *b)
{
	b->next_ms = 0;
}

static int listen_cmd(struct store *s, const char *verb, const char *channel)
{
	char *q = NULL, *sql;
	struct store_res *r;

	if (strcmp(channel, "*") != 0) {
		q = store_quote_ident(s, channel);
		if (q == NULL)
			return -1;
	}
	sql = xasprintf("%s %s", verb, q ? q : "*");
	r = store_exec(s, sql, 0, NULL);
	free(sql);
	free(q);
	if (r == NULL)
		return -1;
	store_clear(r);
	return 0;
}

/* The channels store_ensure() listens on again in a new session. */
static void remember(struct store *s, const char *channel, bool on)
{
	size_t i = 0;

	while (i < s->nchannels) {
		if (strcmp(channel, "*") == 0 || strcmp(s->channels[i], channel) == 0) {
			if (on)
				return;
			free(s->channels[i]);
			s->channels[i] = s->channels[--s->nchannels];
			continue;
		}
		i++;
	}
	if (on && strcmp(channel, "*") != 0) {
		s->channels = xrealloc(s->channels, (s->nchannels + 1) * sizeof(*s->channels));
		s->channels[s->nchannels++] = xstrdup(channel);
	}
}

int store_listen(struct store *s, const char *channel)
{
	if (listen_cmd(s, "LISTEN", channel) < 0)
		return -1;
	remember(s, channel, true);
	return 0;
}

int store_unlisten(struct store *s, const char *channel)
{
	/* Not wanted any more, even when the session that had it is gone. */
	remember(s, channel, false);
	return listen_cmd(s, "UNLISTEN", channel);
}

static int consume(struct store *s)
{
	if (!PQconsumeInput(s->conn) || PQstatus(s->conn) != CONNECTION_OK) {
		set_error(s, SQLSTATE_CONNECTION_FAILURE, "%s", PQerrorMessage(s->conn));
		return -1;
	}
	return 0;
}

static int pending(struct store *s)
{
	PGnotify *n = PQnotifies(s->conn);

	if (n == NULL)
		return 0;
	/* Put it back in front: libpq has no peek, so keep it on the handle. */
	s->held = n;
	return 1;
}

int store_wait_notify(struct store *s, int timeout_ms)
{
	return store_wait_notify_or(s, -1, timeout_ms);
}

int store_wait_notify_or(struct store *s, int wake_fd, int timeout_ms)
{
	struct pollfd pfd[2];

	clear_error(s);
	if (s->held != NULL)
		return 1;
	if (s->conn == NULL) {
		not_connected(s);
		return -1;
	}
	if (consume(s) < 0)
		return -1;
	if (pending(s))
		return 1;
	pfd[0].fd = PQsocket(s->conn);
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	pfd[1].fd = wake_fd;
	pfd[1].events = POLLIN;
	pfd[1].revents = 0;
	if (pfd[0].fd < 0) {
		set_error(s, SQLSTATE_CONNECTION_FAILURE, "the connection to PostgreSQL is closed");
		return -1;
	}
	if (timeout_ms <= 0 && wake_fd < 0)
		return 0;
	if (poll(pfd, wake_fd >= 0 ? 2 : 1, timeout_ms > 0 ? timeout_ms : 0) < 0) {
		if (errno == EINTR)
			return 0;
		set_error(s, NULL, "poll: %s", strerror(errno));
		return -1;
	}
	if (pfd[0].revents != 0) {
		if (consume(s) < 0)
			return -1;
		if (pending(s))
			return 1;
	}
	return pfd[1].revents != 0 ? 2 : 0;
}

int store_notification(struct store *s, char *channel, size_t chlen, char *payload, size_t plen)
{
	PGnotify *n = s->held;

	s->held = NULL;
	if (n == NULL)
		n = PQnotifies(s->conn);
	if (n == NULL)
		return 0;
	snprintf(channel, chlen, "%s", n->relname);
	if (payload != NULL)
		snprintf(payload, plen, "%s", n->extra ? n->extra : "");
	PQfreemem(n);
	return 1;
}

int store_drain_notifications(struct store *s)
{
	char ch[64];
	int n = 0;

	while (store_notification(s, ch, sizeof(ch), NULL, 0) == 1)
		n++;
	return n;
}

static char *escaped(struct store *s, const char *text, bool ident)
{
	char *e = ident ? PQescapeIdentifier(s->conn, text, strlen(text))
	                : PQescapeLiteral(s->conn, text, strlen(text));
	char *out;

	if (e == NULL) {
		set_error(s, NULL, "%s", PQerrorMessage(s->conn));
		return NULL;
	}
	out = xstrdup(e);
	PQfreemem(e);
	return out;
}

char *store_quote_ident(struct store *s, const char *name)
{
	return escaped(s, name, true);
}

char *store_quote_literal(struct store *s, const char *text)
{
	return escaped(s, text, false);
}

char *store_scram_verifier(struct store *s, const char *user, const char *password)
{
	char *v = PQencryptPasswordConn(s->conn, password, user, "scram-sha-256");
	char *out;

	if (v == NULL) {
		set_error(s, NULL, "%s", PQerrorMessage(s->conn));
		return NULL;
	}
	out = xstrdup(v);
	PQfreemem(v);
	return out;
}

static const char *or_empty(const char *v)
{
	return v ? v : "";
}

const char *store_host(const struct store *s)
{
	return or_empty(PQhost(s->conn));
}

const char *store_port(const struct store *s)
{
	return or_empty(PQport(s->conn));
}

const char *store_dbname(const struct store *s)
{
	return or_empty(PQdb(s->conn));
}

int store_policy_current(struct store *s, char **yaml, long long *version)
{
	struct store_res *res;

	res = store_exec(
	    s, "SELECT version, source FROM airlock.policies ORDER BY version DESC LIMIT 1", 0,
	    NULL);
	if (res == NULL)
		return -1;
	if (store_nrows(res) == 0) {
		store_clear(res);
		set_error(s, NULL,
		          "no classifier policy in the database yet; ingest one with "
		          "`airlock seed seeds/`");
		return -1;
	}
	*version = strtoll(store_get(res, 0, 0), NULL, 10);
	*yaml = xstrdup(store_get(res, 0, 1));
	store_clear(res);
	return 0;
}

int store_gate_network(struct store *s, long long *version, char ***globs, size_t *n)
{
	struct store_res *res;
	int rows;

	*version = 0;
	*globs = NULL;
	*n = 0;
	res = store_exec(s,
	                 "SELECT g.version, a FROM (SELECT version, document FROM "
	                 "airlock.gate_policies ORDER BY version DESC LIMIT 1) g LEFT JOIN LATERAL "
	                 "jsonb_array_elements_text(CASE WHEN jsonb_typeof(g.document -> 'network' "
	                 "-> 'allow') = 'array' THEN g.document -> 'network' -> 'allow' ELSE "
	                 "'[]'::jsonb END) a ON true",
	                 0, NULL);
	if (res == NULL)
		return -1;
	rows = store_nrows(res);
	if (rows > 0)
		*version = strtoll(store_get(res, 0, 0), NULL, 10);
	for (int i = 0; i < rows; i++) {
		if (store_isnull(res, i, 1))
			continue;
		if (*globs == NULL)
			*globs = xcalloc((size_t)rows, sizeof(char *));
		(*globs)[(*n)++] = xstrdup(store_get(res, i, 1));
	}
	store_clear(res);
	return 0;
}
