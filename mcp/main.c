/* airlock-mcp -- the agent's door to airlock: an MCP server on stdin/stdout.
 *
 *   airlock-mcp [--db CONNINFO] [--log-level debug|info|warn|error]
 *
 * Connects to PostgreSQL as the agent's own login (--db, else $AIRLOCK_DB,
 * else the PG* environment; passwords belong in PGPASSWORD or ~/.pgpass, and
 * a --db that holds one is refused: argv is visible to every local user) and
 * serves newline-delimited JSON-RPC 2.0.  stdout carries protocol only; logs
 * go to stderr.  Exits 0 at end of input, 2 on a usage error, 3 when the
 * database refuses the login at start-up for who it is (not an agent, or
 * more than one). */
#include "mcp/agent.h"
#include "mcp/server.h"

#include "store/conninfo.h"
#include "store/store.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: airlock-mcp [--db CONNINFO] [--log-level debug|info|warn|error]\n"
	           "  Serves MCP over stdio for an agent login: a member of airlock_agent and\n"
	           "  of no other airlock role, not a superuser, without BYPASSRLS or CREATEROLE.\n"
	           "  Database: --db, else $AIRLOCK_DB, else the PG* environment.  A password\n"
	           "  belongs in PGPASSWORD or ~/.pgpass; a --db holding one is refused.\n"
	           "  Exit: 0 at end of input; 1 on an I/O failure; 2 usage; 3 the login was\n"
	           "  refused at start-up (the reason is on stderr).\n");
}

int main(int argc, char **argv)
{
	cJSON_Hooks hooks = {xmalloc, free};
	struct sigaction sa;
	const char *conninfo = getenv("AIRLOCK_DB");
	struct mcp_server *srv;
	struct mcp_agent *agent;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
			conninfo = argv[++i];
			if (conninfo_has_password(conninfo)) {
				fprintf(stderr,
				        "airlock-mcp: --db must not contain a password (it would "
				        "show in the process list); use PGPASSWORD or ~/.pgpass\n");
				return 2;
			}
		} else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc &&
		           log_level_parse(argv[i + 1]) >= 0) {
			log_set_level((enum log_level)log_level_parse(argv[++i]));
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	cJSON_InitHooks(&hooks); /* out of memory inside cJSON is fatal too */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a blocked read returns */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a gone client shows up as EPIPE */

	agent = mcp_agent_new(conninfo);
	/* Connect now to report problems early.  A login refused for who it is
	 * ends the server: it must never serve with the wrong rights.  A database
	 * that cannot be reached does not: the server keeps serving the protocol,
	 * and each tool call retries and says why it failed. */
	if (mcp_agent_ready(agent) < 0 && mcp_agent_refused(agent)) {
		fprintf(stderr, "airlock-mcp: refused: %s\n", store_errmsg(mcp_agent_store(agent)));
		mcp_agent_free(agent);
		return 3;
	}
	srv = mcp_server_new(conninfo, agent, STDIN_FILENO, STDOUT_FILENO);
	mcp_server_set_stop_flag(srv, &stop_requested);
	log_msg(LOG_INFO, "evt=mcp.start version=%s", MCP_SERVER_VERSION);
	rc = mcp_server_run(srv);
	mcp_server_free(srv); /* and every session, agent's included */
	log_msg(LOG_INFO, "evt=mcp.exit status=%d", rc < 0 ? 1 : 0);
	return rc < 0 ? 1 : 0;
}
