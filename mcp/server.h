/* server.h -- the MCP lifecycle and method dispatch of airlock-mcp over stdio.
 *
 * Single-threaded: lines are handled in order, one answer each (none for
 * notifications).  While a tool waits for an execution (run/get_execution
 * with wait_seconds), the server keeps reading input: ping is answered at
 * once, notifications/cancelled for the waiting request ends the wait
 * without an answer, end of input ends it early, and anything else is handled
 * after the answer. */
#ifndef AIRLOCK_MCP_SERVER_H
#define AIRLOCK_MCP_SERVER_H

#include <signal.h>
#include <stddef.h>

struct mcp_agent;
struct mcp_server;

#define MCP_SERVER_NAME    "airlock-mcp"
#define MCP_SERVER_VERSION "0.1.0"

/* agent is borrowed and may stay unconnected (tool calls then say why).
 * Reads in_fd, writes only protocol lines to out_fd. */
struct mcp_server *mcp_server_new(struct mcp_agent *agent, int in_fd, int out_fd);
void mcp_server_free(struct mcp_server *s); /* NULL is a no-op */
/* A signal flag (set by the caller's handler) that ends mcp_server_run. */
void mcp_server_set_stop_flag(struct mcp_server *s, const volatile sig_atomic_t *flag);
/* Serves until end of input (returns 0), the output is gone or a read fails
 * (returns -1), or the stop flag is set (returns 0). */
int mcp_server_run(struct mcp_server *s);
/* Handles one line as if read from input (tests drive the server with it). */
void mcp_server_handle_line(struct mcp_server *s, const char *line, size_t len);
/* The version negotiated by initialize, or NULL before it. */
const char *mcp_server_version(const struct mcp_server *s);

#endif
