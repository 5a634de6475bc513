/* slots.h -- a counting limit per key (concurrent executions per node).
 *
 * The claim asks which keys are full (slots_full) and claims only rows of
 * the others, so a worker takes a slot at once (slots_try_take) or gives
 * the row back; it never waits for a busy node while another has work.
 * When a full key frees a slot the on_free callback runs (outside the
 * lock): the daemon wakes a worker to claim that node's waiting rows. */
#ifndef AIRLOCK_WORKER_SLOTS_H
#define AIRLOCK_WORKER_SLOTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct slots;

struct slots *slots_new(int per_key);
/* fn(arg) runs each time a key that was full frees a slot.  Set it before
 * any thread uses s. */
void slots_on_free(struct slots *s, void (*fn)(void *arg), void *arg);
/* Takes a slot of key when one is free now; false when the key is full. */
bool slots_try_take(struct slots *s, const char *key);
/* Waits up to wait_ms for a free slot of key and takes it; false when none
 * came in time or *abort became true (checked at least every 200 ms). */
bool slots_take_within(struct slots *s, const char *key, int wait_ms, const atomic_bool *abort);
void slots_give(struct slots *s, const char *key);
/* The keys with no free slot now: *keys gets an array of n copies (the
 * caller frees each and the array; NULL when n is 0). */
size_t slots_full(struct slots *s, char ***keys);
void slots_free(struct slots *s); /* NULL is a no-op */

#endif
