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
 * changes.  -1 (the previous verdict stands) when they cannot be read. */
int durability_refresh(struct durability *d, struct store *s);

/* Judges a settings document as airlock.worker_durability() returns it.
 * Pure: true when mutations may be sent; otherwise why gets a sentence that
 * names the setting and what to change.  *level gets the synchronous_commit
 * level sessions must use ("on", or "remote_apply" with a synchronous
 * standby configured). */
bool durability_judge(const struct config *cfg, const char *settings_json, char *why, size_t whylen,
                      const char **level);

/* true when mutations may be sent; otherwise false with the reason in why.
 * Before the first successful refresh, false ("not checked yet"). */
bool durability_ok(struct durability *d, char *why, size_t whylen);

/* The SET statement a new session runs ("SET synchronous_commit = on"). */
const char *durability_session_sql(struct durability *d);

#endif
