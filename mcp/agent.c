/* agent.c -- the agent's session: the login check on a store. */
#include "mcp/agent.h"

#include "store/store.h"

#include "lib/sqlstate.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* statement_timeout is the store's.  A statement that waits on a lock gives
 * up sooner: an agent gets "try again" in seconds rather than a call that
 * hangs for the whole statement bound behind a daemon's transaction. */
#define AGENT_OPTIONS "-c lock_timeout=5s"

struct mcp_agent {
	struct store *st;
	char login[64];
	bool refused; /* the last check reached the server and refused the login */
	bool checked; /* the connect hook checked the login since ready() began */
	bool ever_up; /* a session was up before: a new one is a reconnect */
};

/* airlock-mcp serves agents, and only with an agent's rights: a login that
 * could do more than an agent (a superuser, a role with BYPASSRLS or
 * CREATEROLE, a member of any other airlock role, directly or through other
 * roles) is refused, so nothing an agent sends through this server can read
 * or change what another agent's request may not. */
static const char check_login_sql[] =
    "SELECT r.rolname, r.rolsuper, r.rolbypassrls, r.rolcreaterole, "
    " pg_has_role(session_user, 'airlock_agent', 'MEMBER'), "
    " (SELECT string_agg(g.rolname, ', ' ORDER BY g.rolname) FROM pg_roles g "
    "  WHERE g.rolname LIKE 'airlock\\_%' AND g.rolname <> 'airlock_agent' "
    "    AND pg_has_role(session_user, g.oid, 'MEMBER')) "
    "FROM pg_roles r WHERE r.rolname = session_user";

static bool is_true(const struct store_res *r, int col)
{
	return strcmp(store_get(r, 0, col), "t") == 0;
}

/* read: the check may be sent again on a new session when this one turns out
 * to be dead (it is a read; the new session's hook checks on its own). */
static int check_login(struct mcp_agent *a, bool read)
{
	struct store_res *r = read ? store_exec_read(a->st, check_login_sql, 0, NULL)
	                           : store_exec(a->st, check_login_sql, 0, NULL);
	const char *more = NULL;
	char *msg = NULL;
	int rc = -1;

	if (r == NULL || store_nrows(r) != 1) {
		if (r != NULL)
			store_set_error_state(a->st, NULL,
			                      "the login's role was not found in pg_roles");
		else if (sqlstate_is(store_sqlstate(a->st), SQLSTATE_UNDEFINED_OBJECT))
			store_set_error_state(
			    a->st, SQLSTATE_UNDEFINED_OBJECT,
			    "role airlock_agent does not exist: the airlock schema is not "
			    "installed in this database (run `airlock migrate`)");
		goto out;
	}
	snprintf(a->login, sizeof(a->login), "%s", store_get(r, 0, 0));
	if (is_true(r, 1))
		more = "is a superuser";
	else if (is_true(r, 2))
		more = "has BYPASSRLS";
	else if (is_true(r, 3))
		more = "has CREATEROLE";
	if (more != NULL) {
		msg = xasprintf("database login \"%s\" %s: airlock-mcp serves agent logins only, "
		                "and only with an agent's rights; use a login that is a member of "
		                "airlock_agent and nothing more",
		                a->login, more);
	} else if (!is_true(r, 4)) {
		msg = xasprintf("database login \"%s\" is not a member of airlock_agent; "
		                "airlock-mcp serves agent logins only",
		                a->login);
	} else if (!store_isnull(r, 0, 5)) {
		msg = xasprintf("database login \"%s\" is also a member of %s: airlock-mcp serves "
		                "agent logins only, and only with an agent's rights; use a login "
		                "that is a member of airlock_agent and nothing more",
		                a->login, store_get(r, 0, 5));
	}
	if (msg != NULL) {
		store_set_error_state(a->st, SQLSTATE_INSUFFICIENT_PRIVILEGE, "%s", msg);
		a->refused = true;
		free(msg);
		goto out;
	}
	rc = 0;
out:
	store_clear(r);
	return rc;
}

/* Every new session is checked before the store lets anything else run on it. */
static int on_connect(struct store *st, void *arg)
{
	struct mcp_agent *a = arg;
	struct store_res *r;
	char q[128];

	if (a->ever_up)
		log_msg(LOG_INFO, "evt=mcp.db_reconnect");
	a->login[0] = '\0';
	/* JSON leaves as UTF-8 whatever the environment's client encoding
	 * (PGCLIENTENCODING) says. */
	r = store_exec(st, "SELECT set_config('client_encoding', 'UTF8', false)", 0, NULL);
	if (r == NULL)
		return -1;
	store_clear(r);
	if (check_login(a, false) < 0)
		return -1;
	a->checked = true;
	a->ever_up = true;
	log_msg(LOG_INFO, "evt=mcp.db_connected login=%s", log_quote(a->login, q, sizeof(q)));
	return 0;
}

/* Server notices go to the log, never to stdout. */
static void on_notice(void *arg, const char *severity, const char *message)
{
	char q[512];

	(void)arg;
	(void)severity;
	log_msg(LOG_INFO, "evt=mcp.db_notice msg=%s", log_quote(message, q, sizeof(q)));
}

struct mcp_agent *mcp_agent_new(const char *conninfo)
{
	struct mcp_agent *a = xcalloc(1, sizeof(*a));

	a->st = store_new(conninfo, "airlock-mcp", AGENT_OPTIONS);
	store_on_connect(a->st, on_connect, a);
	store_on_notice(a->st, on_notice, a);
	return a;
}

void mcp_agent_free(struct mcp_agent *a)
{
	if (a == NULL)
		return;
	store_close(a->st);
	free(a);
}

int mcp_agent_ready(struct mcp_agent *a)
{
	char q[512];

	a->refused = false;
	a->checked = false;
	if (store_ensure(a->st) < 0) {
		log_msg(LOG_WARN, "evt=%s reason=%s",
		        a->refused ? "mcp.db_login_refused" : "mcp.db_connect_failed",
		        log_quote(store_errmsg(a->st), q, sizeof(q)));
		return -1;
	}
	/* Rights can be granted while a session lasts: who the login is gets
	 * checked again before every call, not only when it connected. */
	if (!a->checked && check_login(a, true) < 0) {
		if (a->refused) {
			log_msg(LOG_WARN, "evt=mcp.db_login_refused reason=%s",
			        log_quote(store_errmsg(a->st), q, sizeof(q)));
			store_disconnect(a->st);
		}
		return -1;
	}
	return 0;
}

bool mcp_agent_refused(const struct mcp_agent *a)
{
	return a->refused;
}

struct store *mcp_agent_store(struct mcp_agent *a)
{
	return a->st;
}

const char *mcp_agent_login(const struct mcp_agent *a)
{
	return a->login;
}
