/* server.h -- the MCP lifecycle and method dispatch of airlock-mcp over stdio.
 *
 * One reader thread takes the input line by line: protocol messages
 * (initialize, ping, tools/list, notifications, malformed input, tool calls
 * with invalid arguments) are answered at once, in order; valid tool calls
 * run concurrently on a pool of workers (mcp/workers.h) and are answered when
 * done, so a call that waits for its execution never holds up the others.
 * Answers may therefore come in another order than the requests; each is
 * one whole line.  notifications/cancelled drops a call's answer (a waiting
 * call stops waiting).  At end of input, waits end and are answered, queued
 * calls still run, and the server exits once all are answered (bounded). */
#ifndef AIRLOCK_MCP_SERVER_H
#define AIRLOCK_MCP_SERVER_H

#include <signal.h>
#include <stddef.h>

struct mcp_agent;
struct mcp_server;

#define MCP_SERVER_NAME    "airlock-mcp"
#define MCP_SERVER_VERSION "0.1.0"

/* Sessions connect to conninfo (NULL or "": $AIRLOCK_DB, else the PG*
 * environment) when a worker first needs one, and may stay unconnected (tool
 * calls then say why); first, when not NULL, is a session already open
 * (taken over).  Reads in_fd, writes only protocol lines to out_fd. */
struct mcp_server *mcp_server_new(const char *conninfo, struct mcp_agent *first, int in_fd,
                                  int out_fd);
void mcp_server_free(struct mcp_server *s); /* NULL is a no-op */
/* A signal flag (set by the caller's handler for SIGTERM or SIGINT) that
 * ends mcp_server_run.  Those two signals are blocked in the server's
 * threads except while the reader waits for input, so none is missed. */
void mcp_server_set_stop_flag(struct mcp_server *s, const volatile sig_atomic_t *flag);
/* Serves until end of input (returns 0), the output is gone or a read fails
 * (returns -1), or the stop flag is set (returns 0); then answers the calls
 * in flight (their waits end at once) and returns when all are answered, or
 * -1 when some are still running after a bound (10 s). */
int mcp_server_run(struct mcp_server *s);
/* Handles one line as if read from input (tests drive the server with it);
 * tool calls are answered later, by a worker. */
void mcp_server_handle_line(struct mcp_server *s, const char *line, size_t len);
/* Waits until every tool call handed to the workers is answered (tests). */
void mcp_server_settle(struct mcp_server *s);
/* The version negotiated by initialize, or NULL before it. */
const char *mcp_server_version(const struct mcp_server *s);

#endif
