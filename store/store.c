/* store.c -- connection, statements and errors. */
#include "store/store.h"

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
};

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

struct store *store_open_with(const char *conninfo, const char *app, const char *options, char *err,
                              size_t errlen)
{
	const char *keys[5];
	const char *vals[5];
	char opts[512];
	struct store *s;
	int n = 0;

	if (conninfo == NULL || conninfo[0] == '\0')
		conninfo = getenv("AIRLOCK_DB");
	/* Defaults first: a conninfo that sets them overrides (expand_dbname). */
	keys[n] = "connect_timeout";
	vals[n++] = "10";
	keys[n] = "application_name";
	vals[n++] = app ? app : "airlock";
	if (conninfo && conninfo[0]) {
		keys[n] = "dbname";
		vals[n++] = conninfo;
	}
	/* After the conninfo: airlock's session settings win; the caller's
	 * come last, so they may set another statement_timeout. */
	snprintf(opts, sizeof(opts), "-c statement_timeout=%s%s%s", STORE_STATEMENT_TIMEOUT,
	         options ? " " : "", options ? options : "");
	keys[n] = "options";
	vals[n++] = opts;
	keys[n] = NULL;
	vals[n] = NULL;

	s = xcalloc(1, sizeof(*s));
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (s->conn == NULL || PQstatus(s->conn) != CONNECTION_OK) {
		const char *why = s->conn ? PQerrorMessage(s->conn) : "out of memory";
		snprintf(err, errlen, "cannot connect to PostgreSQL: %s", why);
		size_t len = strlen(err);
		while (len > 0 && (err[len - 1] == '\n' || err[len - 1] == ' '))
			err[--len] = '\0';
		store_close(s);
		return NULL;
	}
	PQsetNoticeReceiver(s->conn, notice_receiver, s);
	return s;
}

void store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (s->held)
		PQfreemem(s->held);
	PQfinish(s->conn);
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

struct store_res *store_exec(struct store *s, const char *sql, int nparams,
                             const char *const *params)
{
	return store_exec_bin(s, sql, nparams, params, NULL, NULL);
}

struct store_res *store_exec_bin(struct store *s, const char *sql, int nparams,
                                 const char *const *params, const int *lengths, const int *formats)
{
	PGresult *res;
	ExecStatusType st;

	clear_error(s);
	s->sync_wait_cancelled = false;
	res = PQexecParams(s->conn, sql, nparams, NULL, params, lengths, formats, 0);
	st = PQresultStatus(res);
	if ((st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) && s->sync_wait_cancelled) {
		/* Not durable: end the session (its locks go with it) and fail as
		 * a lost connection, so that nothing is done on the strength of
		 * this commit. */
		PQclear(res);
		PQreset(s->conn);
		set_error(s, "08006",
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

int store_exec_script(struct store *s, const char *sql)
{
	PGresult *res;
	int rc = 0;

	clear_error(s);
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
	PQclear(PQexec(s->conn, sql));
}

bool store_connected(const struct store *s)
{
	return PQstatus(s->conn) == CONNECTION_OK;
}

int store_reset(struct store *s)
{
	clear_error(s);
	if (s->held) {
		PQfreemem(s->held);
		s->held = NULL;
	}
	PQreset(s->conn);
	if (PQstatus(s->conn) != CONNECTION_OK) {
		set_error(s, "08006", "cannot connect to PostgreSQL: %s", PQerrorMessage(s->conn));
		return -1;
	}
	return 0;
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

int store_listen(struct store *s, const char *channel)
{
	return listen_cmd(s, "LISTEN", channel);
}

int store_unlisten(struct store *s, const char *channel)
{
	return listen_cmd(s, "UNLISTEN", channel);
}

static int consume(struct store *s)
{
	if (!PQconsumeInput(s->conn) || PQstatus(s->conn) != CONNECTION_OK) {
		set_error(s, "08006", "%s", PQerrorMessage(s->conn));
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
	struct pollfd pfd;

	clear_error(s);
	if (s->held != NULL)
		return 1;
	if (consume(s) < 0)
		return -1;
	if (pending(s))
		return 1;
	if (timeout_ms <= 0)
		return 0;
	pfd.fd = PQsocket(s->conn);
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (pfd.fd < 0) {
		set_error(s, "08006", "the connection to PostgreSQL is closed");
		return -1;
	}
	if (poll(&pfd, 1, timeout_ms) < 0) {
		if (errno == EINTR)
			return 0;
		set_error(s, NULL, "poll: %s", strerror(errno));
		return -1;
	}
	if (pfd.revents == 0)
		return 0;
	if (consume(s) < 0)
		return -1;
	return pending(s);
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
