/* agent.h -- airlock-mcp's database sessions: a store whose login is an agent and no more.
 *
 * Identity is the login: the server never sets a role or passes a "who" to
 * SQL, so nothing an agent sends can claim to be someone else.  The login is
 * checked on every new session and again before every tool call (rights
 * granted while a session lasts count from the next call).  Sessions come
 * and go with the store's reconnect policy (store_ensure()). */
#ifndef AIRLOCK_MCP_AGENT_H
#define AIRLOCK_MCP_AGENT_H

#include <stdbool.h>

struct store;
struct mcp_agent;

/* One session for conninfo (a libpq connection string or URI; NULL or ""
 * uses $AIRLOCK_DB, else the PG* environment).  Does not connect yet. */
struct mcp_agent *mcp_agent_new(const char *conninfo);
void mcp_agent_free(struct mcp_agent *a); /* NULL is a no-op */

/* Connects (or reconnects) if needed and checks that the login is an agent
 * and no more: a member of airlock_agent; not a superuser, not BYPASSRLS or
 * CREATEROLE, not a member of any other airlock_* role.  0 on success, -1
 * with the reason on the store (store_errmsg(), SQLSTATE 42501 when refused
 * for who the login is). */
int mcp_agent_ready(struct mcp_agent *a);
/* Whether the last mcp_agent_ready() reached the server and refused the
 * login for who it is, rather than failing to connect at all. */
bool mcp_agent_refused(const struct mcp_agent *a);
/* The session's store (borrowed, lives as long as a). */
struct store *mcp_agent_store(struct mcp_agent *a);
/* The session_user once checked, else "". */
const char *mcp_agent_login(const struct mcp_agent *a);

#endif
