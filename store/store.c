/* store.c -- connection, statements and errors. */
#include "store/store.h"

#include "lib/sqlstate.h"
#include "lib/xalloc.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store {
	PGconn *conn;
	char errmsg[1024];
	char sqlstate[6];
	bool sync_wait_cancelled; /* the server reported a cancelled synchronous-replication wait */
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
}

/* Takes the error of a failed result: the primary message only, since
 * callers print it to people and agents. */
static void set_result_error(struct store *s, const PGresult *res)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (msg == NULL)
		msg = PQerrorMessage(s->conn);
	set_error(s, state, "%s", msg);
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
	/* After the conninfo: the caller's session settings win. */
	if (options) {
		keys[n] = "options";
		vals[n++] = options;
	}
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

PGconn *store_conn(struct store *s)
{
	return s->conn;
}

PGresult *store_exec(struct store *s, const char *sql, int nparams, const char *const *params)
{
	return store_exec_bin(s, sql, nparams, params, NULL, NULL);
}

PGresult *store_exec_bin(struct store *s, const char *sql, int nparams, const char *const *params,
                         const int *lengths, const int *formats)
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
		set_error(s, SQLSTATE_CONNECTION_FAILURE,
		          "the commit was not confirmed by a synchronous standby (its wait was "
		          "cancelled); the session was ended and the step is not taken as done");
		return NULL;
	}
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
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

int store_policy_current(struct store *s, char **yaml, long long *version)
{
	PGresult *res;

	res = store_exec(
	    s, "SELECT version, source FROM airlock.policies ORDER BY version DESC LIMIT 1", 0,
	    NULL);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0) {
		PQclear(res);
		set_error(s, NULL,
		          "no classifier policy in the database yet; ingest one with "
		          "`airlock seed seeds/`");
		return -1;
	}
	*version = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	*yaml = xstrdup(PQgetvalue(res, 0, 1));
	PQclear(res);
	return 0;
}
