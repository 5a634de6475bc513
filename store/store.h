/* store.h -- the PostgreSQL side: one connection, parameterised statements,
 * errors kept on the handle (like PQerrorMessage).
 *
 * store/ is the only code that talks to libpq: everything else reads rows
 * through struct store_res and waits for notifications through store_*. */
#ifndef AIRLOCK_STORE_H
#define AIRLOCK_STORE_H

#include <stdbool.h>
#include <stddef.h>

struct store;     /* a connection; opaque */
struct store_res; /* the rows of one statement; opaque */

/* Every session of every airlock client runs with this bound on one
 * statement (a caller's options may set another), and names itself with
 * application_name (the app argument). */
#define STORE_STATEMENT_TIMEOUT "30s"

/* Connects with standard libpq settings: conninfo when given (from --db),
 * else $AIRLOCK_DB, else the PG* environment.  application_name is `app`;
 * statement_timeout is STORE_STATEMENT_TIMEOUT.
 * NULL on failure with the reason in err.  Free with store_close(). */
struct store *store_open(const char *conninfo, const char *app, char *err, size_t errlen);
/* Like store_open, with more server options for every session of the
 * connection ("-c synchronous_commit=on ..."): they hold again after
 * store_reset(), follow the default statement_timeout (so may override it),
 * and override an `options` of the conninfo. */
struct store *store_open_with(const char *conninfo, const char *app, const char *options, char *err,
                              size_t errlen);
void store_close(struct store *s); /* NULL is a no-op */

/* A store with the settings of store_open_with() that has not connected
 * yet: store_ensure() starts its session (for a client that must keep
 * serving while the database is away, and say why on every call).  Statements
 * before that fail with "not connected" (or why the last start failed). */
struct store *store_new(const char *conninfo, const char *app, const char *options);

/* Runs on every new session of s (store_reset(), store_ensure(), the retry of
 * store_exec_read()) before anything else is sent on it: 0 lets the session
 * be used; -1 (with the reason set on s, e.g. with store_set_error_state())
 * ends it, and the call that started it fails with that reason.  For checks
 * of who the login is. */
typedef int (*store_hook_fn)(struct store *s, void *arg);
void store_on_connect(struct store *s, store_hook_fn fn, void *arg);
/* Sees each notice and warning the server sends (severity as "NOTICE",
 * "WARNING", "DEBUG"...; the primary message).  Not called otherwise. */
typedef void (*store_notice_fn)(void *arg, const char *severity, const char *message);
void store_on_notice(struct store *s, store_notice_fn fn, void *arg);

/* Makes sure a session is up, without sending a statement on it: a session
 * the server closed while idle is found before anything runs on it, so
 * starting a new one can never run a statement twice.  A new session gets
 * the on-connect hook and LISTENs again on every channel of store_listen()
 * (notifications sent in between are lost: re-read what they stand for).
 * After a failed start, the next one waits for the store's backoff
 * (store_backoff_next()); a call before then fails at once with the reason
 * of the last try.  0 when up, -1 with the reason on s. */
int store_ensure(struct store *s);
/* Ends the session now (a next store_ensure() starts a new one). */
void store_disconnect(struct store *s);

/* store_exec for a statement without effects (a read): when the session
 * turns out to be dead, a new one is started (store_ensure()) and the
 * statement sent once more.  Never use it for writes: a lost answer does not
 * say whether a write ran. */
struct store_res *store_exec_read(struct store *s, const char *sql, int nparams,
                                  const char *const *params);

/* The reason of the last failure ("" if none), and its SQLSTATE ("" if the
 * failure was not a server error).  Borrowed until the next call on s. */
const char *store_errmsg(const struct store *s);
const char *store_sqlstate(const struct store *s);

/* Sets the handle's error, for modules built on the store. */
void store_set_error(struct store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a SQLSTATE (NULL for none); DETAIL and HINT are cleared. */
void store_set_error_state(struct store *s, const char *sqlstate, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The server's DETAIL and HINT of the last failure ("" when absent). */
const char *store_errdetail(const struct store *s);
const char *store_errhint(const struct store *s);

/* Runs one parameterised statement (text parameters, NULL for SQL NULL).
 * Returns its rows on success (also for a statement without rows), which
 * the caller frees with store_clear(); NULL on failure, reason on s. */
struct store_res *store_exec(struct store *s, const char *sql, int nparams,
                             const char *const *params);

/* Like store_exec, with per-parameter lengths and formats (1 = binary, for
 * bytea values that may hold any byte). */
struct store_res *store_exec_bin(struct store *s, const char *sql, int nparams,
                                 const char *const *params, const int *lengths, const int *formats);

/* store_exec and store_exec_bin for a statement run again and again (the
 * worker's hot path): prepared once per session under a name of the store's
 * own, keyed by its SQL text, then only bound and run, with no parse or plan
 * per call.  A new session (store_reset, store_ensure, a lost one) prepares
 * again on first use; the statements go with store_close().  A statement the
 * server no longer has, or whose result type changed (a migration replaced
 * a function), is prepared again and sent once more, outside a transaction
 * block only: the server refused it before running anything. */
struct store_res *store_execp(struct store *s, const char *sql, int nparams,
                              const char *const *params);
struct store_res *store_execp_bin(struct store *s, const char *sql, int nparams,
                                  const char *const *params, const int *lengths,
                                  const int *formats);

/* Reading rows: counts, a value as text ("" for SQL NULL), whether it is
 * NULL, its length in bytes.  Rows and columns count from 0. */
int store_nrows(const struct store_res *r);
int store_nfields(const struct store_res *r);
const char *store_get(const struct store_res *r, int row, int col);
bool store_isnull(const struct store_res *r, int row, int col);
int store_getlen(const struct store_res *r, int row, int col);
void store_clear(struct store_res *r); /* NULL is a no-op */

/* Runs sql (no parameters) and discards its result and any failure, keeping
 * the error of the step that failed before: for ROLLBACK and unlocks on a
 * path that is already failing. */
void store_exec_quiet(struct store *s, const char *sql);

/* Whether the connection is up (a lost one stays lost until store_reset()). */
bool store_connected(const struct store *s);
/* Ends the session and starts a new one with the same settings (its
 * session locks and LISTENs are gone; the on-connect hook runs).  0 when
 * connected again, -1 with the reason on s. */
int store_reset(struct store *s);

/* One reconnect policy for every client: waits that start at 200 ms and
 * double up to 5 s, and start over after a success. */
struct store_backoff {
	int next_ms;
};
#define STORE_BACKOFF_INIT                                                                         \
	{                                                                                          \
		0                                                                                  \
	}
int store_backoff_next(struct store_backoff *b); /* the wait before the next try, in ms */
void store_backoff_reset(struct store_backoff *b);

/* Notifications.  LISTEN/UNLISTEN channel (an identifier; quoted here).
 * The store remembers the channels for store_ensure(); UNLISTEN "*" forgets
 * them all. */
int store_listen(struct store *s, const char *channel);
int store_unlisten(struct store *s, const char *channel);
/* Waits up to timeout_ms (0: do not wait) for notifications and reads what
 * arrived.  1 when at least one is queued (take them with
 * store_notification()), 0 when none came in time, -1 when the connection
 * was lost (reason on s).  An interrupted wait (EINTR) returns 0. */
int store_wait_notify(struct store *s, int timeout_ms);
/* The same, and also wakes when wake_fd (a pipe or eventfd of the caller's,
 * -1 for none) is readable: then 2 (the caller drains it).  A notification
 * queued at the same time wins (1); the caller sees 2 on its next call. */
int store_wait_notify_or(struct store *s, int wake_fd, int timeout_ms);
/* Takes one queued notification: 1 with its channel (and payload, when
 * payload is not NULL) copied, 0 when none is queued. */
int store_notification(struct store *s, char *channel, size_t chlen, char *payload, size_t plen);
/* Drops every queued notification; returns how many. */
int store_drain_notifications(struct store *s);

/* Quoting for the few statements that take no parameters (CREATE ROLE ...).
 * Caller frees; NULL with the reason on s. */
char *store_quote_ident(struct store *s, const char *name);
char *store_quote_literal(struct store *s, const char *text);
/* A SCRAM-SHA-256 verifier for user's password, computed on this side so
 * the password never reaches the server.  Caller frees; NULL on failure. */
char *store_scram_verifier(struct store *s, const char *user, const char *password);
/* Where the connection went (borrowed; "" when unknown). */
const char *store_host(const struct store *s);
const char *store_port(const struct store *s);
const char *store_dbname(const struct store *s);

/* Runs a script of several statements (simple query protocol, no parameters).
 * 0 on success, -1 with the reason on s. */
int store_exec_script(struct store *s, const char *sql);

/* The policy in force: its YAML text (caller frees) and version.
 * -1 with the reason on s when none was ingested yet (run `airlock seed`). */
int store_policy_current(struct store *s, char **yaml, long long *version);

/* The gate policy in force (`airlock seed` of gate.yaml): its version (0 when
 * none was ingested) and its network.allow host globs (*n of them in *globs;
 * the caller frees each and the array).  -1 with the reason on s. */
int store_gate_network(struct store *s, long long *version, char ***globs, size_t *n);

/* Applies dir/NNNN_name.sql files not yet applied, in order, each in its own
 * transaction, recording name and checksum in airlock.schema_migrations,
 * under an advisory lock so concurrent runs are safe.  Refuses when an applied
 * file changed or when the database has migrations dir does not.  *applied
 * gets the count newly applied.  Progress lines go to `progress` when not
 * NULL.  0 on success, -1 with the reason on s. */
int store_migrate(struct store *s, const char *dir, int *applied,
                  void (*progress)(const char *line, void *arg), void *arg);

#endif
