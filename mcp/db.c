/* db.c -- the agent's libpq session. */
#include "mcp/db.h"

#include "lib/log.h"
#include "lib/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mcp_db {
	char *conninfo;
	PGconn *conn;
	char login[64];
	bool listening; /* LISTEN airlock_state is wanted (and redone after a reconnect) */
	bool refused;   /* the last connect reached the server and refused the login */
	char sqlstate[6];
	char *errmsg;
	char *detail;
	char *hint;
};

static void set_error(struct mcp_db *db, const char *sqlstate, const char *msg, const char *detail,
                      const char *hint)
{
	free(db->errmsg);
	free(db->detail);
	free(db->hint);
	snprintf(db->sqlstate, sizeof(db->sqlstate), "%s", sqlstate ? sqlstate : "");
	db->errmsg = xstrdup(msg ? msg : "unknown error");
	db->detail = xstrdup(detail ? detail : "");
	db->hint = xstrdup(hint ? hint : "");
	/* libpq messages end in a newline; the agent gets one clean line. */
	db->errmsg[strcspn(db->errmsg, "\n")] = '\0';
}

static void set_result_error(struct mcp_db *db, const PGresult *res)
{
	const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	set_error(db, PQresultErrorField(res, PG_DIAG_SQLSTATE),
	          primary ? primary : PQerrorMessage(db->conn),
	          PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL),
	          PQresultErrorField(res, PG_DIAG_MESSAGE_HINT));
}

struct mcp_db *mcp_db_new(const char *conninfo)
{
	struct mcp_db *db = xcalloc(1, sizeof(*db));

	db->conninfo = xstrdup(conninfo ? conninfo : "");
	set_error(db, "", "not connected yet", NULL, NULL);
	return db;
}

void mcp_db_free(struct mcp_db *db)
{
	if (db == NULL)
		return;
	PQfinish(db->conn);
	free(db->conninfo);
	free(db->errmsg);
	free(db->detail);
	free(db->hint);
	free(db);
}

/* Server notices go to the log, never to stdout. */
static void on_notice(void *arg, const PGresult *res)
{
	char q[512];
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	(void)arg;
	log_msg(LOG_INFO, "evt=mcp.db_notice msg=%s", log_quote(msg ? msg : "", q, sizeof(q)));
}

/* Checks who we are.  airlock-mcp serves agents, and only with an agent's
 * rights: a login that could do more than an agent (a superuser, a role with
 * BYPASSRLS or CREATEROLE, a member of any other airlock role, directly or
 * through other roles) is refused, so nothing an agent sends through this
 * server can read or change what another agent's request may not. */
static const char check_login_sql[] =
    "SELECT r.rolname, r.rolsuper, r.rolbypassrls, r.rolcreaterole, "
    " pg_has_role(session_user, 'airlock_agent', 'MEMBER'), "
    " (SELECT string_agg(g.rolname, ', ' ORDER BY g.rolname) FROM pg_roles g "
    "  WHERE g.rolname LIKE 'airlock\\_%' AND g.rolname <> 'airlock_agent' "
    "    AND pg_has_role(session_user, g.oid, 'MEMBER')) "
    "FROM pg_roles r WHERE r.rolname = session_user";

static int check_login(struct mcp_db *db)
{
	PGresult *res = PQexec(db->conn, check_login_sql);
	const char *more = NULL;
	char *msg = NULL;
	int rc = -1;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
			set_error(db, "", "the login's role was not found in pg_roles", NULL, NULL);
		else
			set_result_error(db, res);
		if (strcmp(db->sqlstate, "42704") == 0)
			set_error(db, db->sqlstate,
			          "role airlock_agent does not exist: the airlock schema is not "
			          "installed in this database (run `airlock migrate`)",
			          NULL, NULL);
		goto out;
	}
	snprintf(db->login, sizeof(db->login), "%s", PQgetvalue(res, 0, 0));
	if (strcmp(PQgetvalue(res, 0, 1), "t") == 0)
		more = "is a superuser";
	else if (strcmp(PQgetvalue(res, 0, 2), "t") == 0)
		more = "has BYPASSRLS";
	else if (strcmp(PQgetvalue(res, 0, 3), "t") == 0)
		more = "has CREATEROLE";
	if (more != NULL) {
		msg = xasprintf("database login \"%s\" %s: airlock-mcp serves agent logins only, "
		                "and only with an agent's rights; use a login that is a member of "
		                "airlock_agent and nothing more",
		                db->login, more);
	} else if (strcmp(PQgetvalue(res, 0, 4), "t") != 0) {
		msg = xasprintf("database login \"%s\" is not a member of airlock_agent; "
		                "airlock-mcp serves agent logins only",
		                db->login);
	} else if (!PQgetisnull(res, 0, 5)) {
		msg = xasprintf("database login \"%s\" is also a member of %s: airlock-mcp serves "
		                "agent logins only, and only with an agent's rights; use a login "
		                "that is a member of airlock_agent and nothing more",
		                db->login, PQgetvalue(res, 0, 5));
	}
	if (msg != NULL) {
		set_error(db, "42501", msg, NULL, NULL);
		db->refused = true;
		free(msg);
		goto out;
	}
	rc = 0;
out:
	PQclear(res);
	return rc;
}

int mcp_db_connect(struct mcp_db *db)
{
	const char *keys[] = {"dbname",          "application_name", "client_encoding",
	                      "connect_timeout", "options",          NULL};
	const char *vals[] = {db->conninfo,
	                      "airlock-mcp",
	                      "UTF8",
	                      "10",
	                      "-c statement_timeout=15000 -c lock_timeout=5000",
	                      NULL};
	char q[512];

	/* A connection the server closed while we were idle (restart, terminated
	 * backend) shows up here, before anything is sent on it, so reconnecting
	 * cannot run a statement twice. */
	if (db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK && db->login[0] != '\0' &&
	    PQconsumeInput(db->conn) == 1 && PQstatus(db->conn) == CONNECTION_OK)
		return 0;
	if (db->conn != NULL)
		log_msg(LOG_INFO, "evt=mcp.db_reconnect");
	PQfinish(db->conn);
	db->login[0] = '\0';
	db->refused = false;
	db->conn = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(db->conn) != CONNECTION_OK) {
		set_error(db, "", PQerrorMessage(db->conn), NULL, NULL);
		log_msg(LOG_WARN, "evt=mcp.db_connect_failed reason=%s",
		        log_quote(db->errmsg, q, sizeof(q)));
		PQfinish(db->conn);
		db->conn = NULL;
		return -1;
	}
	PQsetNoticeReceiver(db->conn, on_notice, NULL);
	if (check_login(db) < 0) {
		log_msg(LOG_WARN, "evt=mcp.db_login_refused reason=%s",
		        log_quote(db->errmsg, q, sizeof(q)));
		PQfinish(db->conn);
		db->conn = NULL;
		db->login[0] = '\0';
		return -1;
	}
	if (db->listening) {
		/* A wait in progress: a state change on the new connection still wakes it. */
		PGresult *res = PQexec(db->conn, "LISTEN airlock_state");
		bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
		if (!ok)
			set_result_error(db, res);
		PQclear(res);
		if (!ok)
			return -1;
	}
	log_msg(LOG_INFO, "evt=mcp.db_connected login=%s", log_quote(db->login, q, sizeof(q)));
	return 0;
}

PGresult *mcp_db_query(struct mcp_db *db, const char *sql, int n, const char *const *params)
{
	PGresult *res;
	ExecStatusType st;
	bool was_connected = db->conn != NULL && db->login[0] != '\0';
	char q[512];

	if (mcp_db_connect(db) < 0)
		return NULL;
	/* Rights can be granted while a session lasts: who the login is gets
	 * checked again before every statement, not only when it connected. */
	if (was_connected && check_login(db) < 0) {
		if (db->refused) {
			log_msg(LOG_WARN, "evt=mcp.db_login_refused reason=%s",
			        log_quote(db->errmsg, q, sizeof(q)));
			PQfinish(db->conn);
			db->conn = NULL;
			db->login[0] = '\0';
		}
		return NULL;
	}
	res = PQexecParams(db->conn, sql, n, NULL, params, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
		return res;
	if (res == NULL)
		set_error(db, "", PQerrorMessage(db->conn), NULL, NULL);
	else
		set_result_error(db, res);
	PQclear(res);
	return NULL;
}

PGresult *mcp_db_read(struct mcp_db *db, const char *sql, int n, const char *const *params)
{
	PGresult *res = mcp_db_query(db, sql, n, params);

	if (res == NULL && db->conn != NULL && PQstatus(db->conn) == CONNECTION_BAD) {
		log_msg(LOG_INFO, "evt=mcp.db_retry_read");
		res = mcp_db_query(db, sql, n, params);
	}
	return res;
}

const char *mcp_db_errmsg(const struct mcp_db *db)
{
	return db->errmsg;
}

const char *mcp_db_sqlstate(const struct mcp_db *db)
{
	return db->sqlstate;
}

const char *mcp_db_detail(const struct mcp_db *db)
{
	return db->detail;
}

const char *mcp_db_hint(const struct mcp_db *db)
{
	return db->hint;
}

bool mcp_db_login_refused(const struct mcp_db *db)
{
	return db->refused;
}

const char *mcp_db_login(const struct mcp_db *db)
{
	return db->login;
}

int mcp_db_listen(struct mcp_db *db, bool on)
{
	PGresult *res =
	    mcp_db_query(db, on ? "LISTEN airlock_state" : "UNLISTEN airlock_state", 0, NULL);
	PGnotify *nf;

	db->listening = on && res != NULL;
	if (res == NULL)
		return -1;
	PQclear(res);
	if (!on)
		while ((nf = PQnotifies(db->conn)) != NULL)
			PQfreemem(nf);
	return 0;
}

int mcp_db_socket(const struct mcp_db *db)
{
	return db->conn != NULL ? PQsocket(db->conn) : -1;
}

int mcp_db_notified(struct mcp_db *db, int64_t id)
{
	PGnotify *nf;
	int hit = 0;

	if (db->conn == NULL)
		return -1;
	if (PQconsumeInput(db->conn) == 0 || PQstatus(db->conn) != CONNECTION_OK) {
		set_error(db, "", PQerrorMessage(db->conn), NULL, NULL);
		return -1;
	}
	/* airlock_state carries no payload (any login may LISTEN on it, so it
	 * must not show whose rows moved): every notification means "some row
	 * changed state", and the caller re-reads the one it waits for. */
	(void)id;
	while ((nf = PQnotifies(db->conn)) != NULL) {
		if (strcmp(nf->relname, "airlock_state") == 0)
			hit = 1;
		PQfreemem(nf);
	}
	return hit;
}
