/* slots.h -- a counting limit per key (concurrent executions per node). */
#ifndef AIRLOCK_WORKER_SLOTS_H
#define AIRLOCK_WORKER_SLOTS_H

#include <stdatomic.h>
#include <stdbool.h>

struct slots;

struct slots *slots_new(int per_key);
/* Waits until key has a free slot and takes it.  Gives up (returns false)
 * when *abort becomes true; checks it at least every 200 ms. */
bool slots_take(struct slots *s, const char *key, const atomic_bool *abort);
void slots_give(struct slots *s, const char *key);
void slots_free(struct slots *s); /* NULL is a no-op */

#endif
