/* db.h -- airlock-mcp's PostgreSQL session: one libpq connection as an airlock_agent login.
 *
 * Identity is the login: the server never sets a role or passes a "who" to
 * SQL, so nothing an agent sends can claim to be someone else.  Every query is
 * parameterised and bounded by statement_timeout; a lost connection is
 * re-established on the next call. */
#ifndef AIRLOCK_MCP_DB_H
#define AIRLOCK_MCP_DB_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

struct mcp_db;

/* conninfo: a libpq connection string or URI; NULL or "" uses the PG*
 * environment.  Copies it; does not connect yet. */
struct mcp_db *mcp_db_new(const char *conninfo);
void mcp_db_free(struct mcp_db *db); /* NULL is a no-op */

/* Connects (or reconnects) if needed and checks that the login is an agent
 * and no more: a member of airlock_agent; not a superuser, not BYPASSRLS or
 * CREATEROLE, not a member of any other airlock_* role.  0 on success, -1
 * with the reason in mcp_db_errmsg(). */
int mcp_db_connect(struct mcp_db *db);
/* Whether the last failed connect reached the server and refused the login
 * for who it is (then mcp_db_sqlstate() is 42501), rather than failing to
 * connect at all. */
bool mcp_db_login_refused(const struct mcp_db *db);

/* Runs sql with n text parameters (a NULL value is SQL NULL), connecting
 * first if needed and checking the login again (as mcp_db_connect() does:
 * rights granted since it connected make it refused).  Returns the result (tuples or command ok;
 * the caller PQclear()s it) or NULL with the reason on the handle. */
PGresult *mcp_db_query(struct mcp_db *db, const char *sql, int n, const char *const *params);

/* The same for a statement without effects (a read): when the connection
 * turns out to be dead, it is re-established and the statement sent once
 * more.  Writes never are: a lost answer does not say whether they ran. */
PGresult *mcp_db_read(struct mcp_db *db, const char *sql, int n, const char *const *params);

/* Why the last call failed.  Borrowed until the next call on db.
 * errmsg: the server's primary message exactly as sent (or libpq's reason);
 * sqlstate: the five-character SQLSTATE, or "" when the server was not
 * reached; detail/hint: "" when absent. */
const char *mcp_db_errmsg(const struct mcp_db *db);
const char *mcp_db_sqlstate(const struct mcp_db *db);
const char *mcp_db_detail(const struct mcp_db *db);
const char *mcp_db_hint(const struct mcp_db *db);
/* The session_user once connected, else "". */
const char *mcp_db_login(const struct mcp_db *db);

/* LISTEN / UNLISTEN on channel airlock_state (no payload: any state change).
 * Unlistening also drops any queued notifications. */
int mcp_db_listen(struct mcp_db *db, bool on);
/* The socket to poll() for notifications, -1 when not connected. */
int mcp_db_socket(const struct mcp_db *db);
/* Reads what the socket holds and drains queued notifications.  Returns 1 if
 * any row changed state (notifications carry no ids, so the caller re-reads
 * execution id to see whether it moved), 0 if none did, -1 if the connection
 * was lost. */
int mcp_db_notified(struct mcp_db *db, int64_t id);

#endif
