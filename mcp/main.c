/* airlock-mcp -- the agent's door to airlock: an MCP server on stdin/stdout.
 *
 *   airlock-mcp [--db CONNINFO] [--log-level debug|info|warn|error]
 *
 * Connects to PostgreSQL as the agent's own login (--db, else $AIRLOCK_DB,
 * else the PG* environment; passwords belong in PGPASSWORD or ~/.pgpass, not
 * in argv) and serves newline-delimited JSON-RPC 2.0.  stdout carries protocol
 * only; logs go to stderr.  Exits 0 at end of input. */
#include "mcp/db.h"
#include "mcp/server.h"

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
	           "  Serves MCP over stdio for an agent login (member of airlock_agent).\n"
	           "  Database: --db, else $AIRLOCK_DB, else the PG* environment.\n");
}

int main(int argc, char **argv)
{
	cJSON_Hooks hooks = {xmalloc, free};
	struct sigaction sa;
	const char *conninfo = getenv("AIRLOCK_DB");
	struct mcp_server *srv;
	struct mcp_db *db;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
			conninfo = argv[++i];
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

	db = mcp_db_new(conninfo);
	/* Connect now to report problems early; the server keeps serving the
	 * protocol either way, and each tool call retries and says why it failed. */
	mcp_db_connect(db);
	srv = mcp_server_new(db, STDIN_FILENO, STDOUT_FILENO);
	mcp_server_set_stop_flag(srv, &stop_requested);
	log_msg(LOG_INFO, "evt=mcp.start version=%s", MCP_SERVER_VERSION);
	rc = mcp_server_run(srv);
	mcp_server_free(srv);
	mcp_db_free(db);
	log_msg(LOG_INFO, "evt=mcp.exit status=%d", rc < 0 ? 1 : 0);
	return rc < 0 ? 1 : 0;
}
