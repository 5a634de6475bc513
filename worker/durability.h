/* durability.h -- can the database keep airlockd's exactly-once promise?
 *
 * A mutation is sent only after the commit that marked its row `running` is
 * durable: if that commit could be lost (a crash with fsync off, a promoted
 * standby that never received it), the row would be claimed again and the
 * command would run twice.  airlockd reads the database's settings at start
 * and then periodically, sets the commit level its sessions need, and holds
 * mutations (read-only commands still run) while the database cannot keep
 * the promise, saying exactly what to change.  Thread-safe. */
#ifndef AIRLOCK_WORKER_DURABILITY_H
#define AIRLOCK_WORKER_DURABILITY_H

#include "store/store.h"
#include "worker/config.h"

#include <stdbool.h>
#include <stddef.h>

/* How often the main loop reads the settings again. */
#define DURABILITY_RECHECK_S 30

struct durability;

/* cfg is borrowed and must outlive the result. */
struct durability *durability_new(const struct config *cfg);
void durability_free(struct durability *d); /* NULL is a no-op */

/* Reads the settings over s and updates the verdict, logging when it
 * changes; an undeclared failover (durability_failover_undeclared) is
 * logged at every refresh (evt=durability.failover_undeclared).  -1 (the
 * previous verdict stands) when they cannot be read. */
int durability_refresh(struct durability *d, struct store *s);

/* Judges a settings document as airlock.worker_durability() returns it.
 * Pure: true when mutations may be sent; otherwise why gets a sentence that
 * names the setting and what to change.  *level gets the synchronous_commit
 * level sessions must use ("on", or "remote_apply" with a synchronous
 * standby configured). */
bool durability_judge(const struct config *cfg, const char *settings_json, char *why, size_t whylen,
                      const char **level);

/* Whether a standby could be promoted without airlock having been told:
 * durability.failover is not declared, yet a standby streams
 * asynchronously (settings_json as airlock.worker_durability() returns it)
 * or the conninfo names several hosts (conninfo_hosts > 1).  Pure: true with
 * a sentence in why that says what would run twice after such a failover
 * and what to set; false (why "") otherwise. */
bool durability_failover_undeclared(const struct config *cfg, const char *settings_json,
                                    int conninfo_hosts, char *why, size_t whylen);

/* How many hosts a libpq conninfo names (host=a,b or a URI's a,b): 1 for
 * one, or none (libpq's default).  NULL is read as the daemon reads it:
 * $AIRLOCK_DB, else $PGHOST. */
int durability_conninfo_hosts(const char *conninfo);

/* A session of the daemon's has just (re)connected: its server is checked
 * now, on that session, before anything is claimed on it.  Until a check
 * passes after a reconnect, mutations are held.  A server other than the
 * one checked last (its system identifier or timeline changed: a failover,
 * a restore) is logged (evt=db.server_changed).  -1 when the check could not
 * be read (mutations stay held). */
int durability_session_check(struct durability *d, struct store *s);

/* Another reason to hold mutations than the database's durability, kept
 * until cleared (why NULL): the audit anchor file cannot be written, with
 * audit.hold_mutations on.  The reason is what held rows record. */
void durability_hold(struct durability *d, const char *why);

/* true when mutations may be sent; otherwise false with the reason in why.
 * Before the first successful refresh, false ("not checked yet"). */
bool durability_ok(struct durability *d, char *why, size_t whylen);
/* How long a row held by durability_ok() waits before it is tried again:
 * one second while a check is only pending, else the recheck interval. */
int durability_retry_ms(struct durability *d);

/* The SET statement a new session runs ("SET synchronous_commit = on"). */
const char *durability_session_sql(struct durability *d);

#endif
