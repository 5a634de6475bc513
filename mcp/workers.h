/* workers.h -- airlock-mcp's tool calls, run concurrently on a small pool of threads.
 *
 * The reader thread validates each tools/call and queues it; one of
 * MCP_WORKERS threads runs it on its own database session (struct
 * mcp_agent), including a wait for the execution to settle, so a call that
 * waits never holds up the calls behind it.  Answers and progress
 * notifications go back through the caller's functions, each a whole line.
 * A call the client cancels (notifications/cancelled) gets no answer: a
 * queued one never runs, a waiting one stops waiting, a running statement
 * finishes and its answer is dropped. */
#ifndef AIRLOCK_MCP_WORKERS_H
#define AIRLOCK_MCP_WORKERS_H

#include "mcp/executions.h"

#include <cjson/cJSON.h>
#include <stdint.h>

struct mcp_agent;
struct mcp_workers;

/* Threads (and at most that many database sessions per server). */
#define MCP_WORKERS 8
/* Calls that may wait for a free thread; more are refused at once. */
#define MCP_QUEUE_MAX 256

/* An answer for the call submitted with slot: reply (a JSON-RPC response,
 * taken over), or NULL when the call was cancelled and gets none.  Called
 * from a worker thread. */
typedef void (*mcp_answer_fn)(void *arg, void *slot, cJSON *reply);
/* A notification to send now (taken over).  Called from a worker thread. */
typedef void (*mcp_notify_fn)(void *arg, cJSON *msg);

/* Starts the threads.  Sessions connect on their first call, to conninfo
 * (NULL or "": $AIRLOCK_DB or the PG* environment); first, when not NULL, is
 * a session already open (taken over) for the first thread. */
struct mcp_workers *mcp_workers_new(const char *conninfo, struct mcp_agent *first,
                                    mcp_answer_fn answer, mcp_notify_fn notify, void *arg);

/* Queues tools/call `tool` (which exists; args passed mcp_tools_check()) for
 * request id (copied); params (copied) may carry _meta.progressToken.
 * 0 when queued, -1 when MCP_QUEUE_MAX calls already wait. */
int mcp_workers_submit(struct mcp_workers *w, const cJSON *id, const char *tool, const cJSON *args,
                       const cJSON *params, void *slot);
/* notifications/cancelled for request id requestId: every queued or running
 * call with that id (compared as JSON text) is cancelled. */
void mcp_workers_cancel(struct mcp_workers *w, const cJSON *request_id);
/* No more input: waits in progress end now with why (MCP_WAIT_INPUT_END or
 * MCP_WAIT_STOPPED) and are answered; calls still queued run, and their waits
 * end at once. */
void mcp_workers_close_input(struct mcp_workers *w, enum mcp_wait_end why);
/* Waits until no call is queued or running, at most timeout_ms (< 0: no
 * bound).  0 when all are done; -1 when calls are still in flight. */
int mcp_workers_drain(struct mcp_workers *w, int64_t timeout_ms);
/* Calls queued or running now. */
int mcp_workers_in_flight(struct mcp_workers *w);
/* Stops the threads and closes the sessions.  Only after a drain that
 * returned 0 (a thread still in a statement would be waited for). */
void mcp_workers_free(struct mcp_workers *w); /* NULL is a no-op */

#endif
