/* store.h -- the PostgreSQL side: one connection, parameterised statements,
 * errors kept on the handle (like PQerrorMessage). */
#ifndef AIRLOCK_STORE_H
#define AIRLOCK_STORE_H

#include <libpq-fe.h>
#include <stddef.h>

struct store; /* opaque */

/* Connects with standard libpq settings: conninfo when given (from --db),
 * else $AIRLOCK_DB, else the PG* environment.  application_name is `app`.
 * NULL on failure with the reason in err.  Free with store_close(). */
struct store *store_open(const char *conninfo, const char *app, char *err, size_t errlen);
/* Like store_open, with server options for every session of the connection
 * ("-c statement_timeout=30s ..."): they hold again after a PQreset, and
 * override an `options` of the conninfo. */
struct store *store_open_with(const char *conninfo, const char *app, const char *options, char *err,
                              size_t errlen);
void store_close(struct store *s); /* NULL is a no-op */

/* The reason of the last failure ("" if none), and its SQLSTATE ("" if the
 * failure was not a server error).  Borrowed until the next call on s. */
const char *store_errmsg(const struct store *s);
const char *store_sqlstate(const struct store *s);

/* Sets the handle's error, for modules built on the store. */
void store_set_error(struct store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The connection, for code that needs libpq directly (LISTEN, COPY). */
PGconn *store_conn(struct store *s);

/* Runs one parameterised statement (text parameters, NULL for SQL NULL).
 * Returns the result on success (PGRES_COMMAND_OK or PGRES_TUPLES_OK), which
 * the caller PQclear()s; NULL on failure, reason on s. */
PGresult *store_exec(struct store *s, const char *sql, int nparams, const char *const *params);

/* Like store_exec, with per-parameter lengths and formats (1 = binary, for
 * bytea values that may hold any byte). */
PGresult *store_exec_bin(struct store *s, const char *sql, int nparams, const char *const *params,
                         const int *lengths, const int *formats);

/* Runs a script of several statements (simple query protocol, no parameters).
 * 0 on success, -1 with the reason on s. */
int store_exec_script(struct store *s, const char *sql);

/* The policy in force: its YAML text (caller frees) and version.
 * -1 with the reason on s when none was ingested yet (run `airlock seed`). */
int store_policy_current(struct store *s, char **yaml, long long *version);

/* Applies dir/NNNN_name.sql files not yet applied, in order, each in its own
 * transaction, recording name and checksum in airlock.schema_migrations,
 * under an advisory lock so concurrent runs are safe.  Refuses when an applied
 * file changed or when the database has migrations dir does not.  *applied
 * gets the count newly applied.  Progress lines go to `progress` when not
 * NULL.  0 on success, -1 with the reason on s. */
int store_migrate(struct store *s, const char *dir, int *applied,
                  void (*progress)(const char *line, void *arg), void *arg);

#endif
