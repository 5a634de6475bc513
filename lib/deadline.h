/* deadline.h -- the one clock for waits and intervals.
 *
 * Elapsed times and deadlines are CLOCK_MONOTONIC milliseconds (they do not
 * jump when the wall clock is set); only timestamps meant for people or
 * other machines read the wall clock.  Condition variables here use the
 * default CLOCK_REALTIME, so deadline_cond_wait() converts a monotonic
 * deadline into the absolute time pthread_cond_timedwait() wants, one wait
 * at a time: a wall-clock step can end one wait early or late, never past
 * the monotonic deadline the caller re-checks. */
#ifndef AIRLOCK_DEADLINE_H
#define AIRLOCK_DEADLINE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds: for elapsed times and deadlines. */
int64_t deadline_now_ms(void);
/* The same clock in seconds with a fraction, for code that counts in seconds. */
double deadline_now_s(void);
/* CLOCK_REALTIME in milliseconds since the epoch: timestamps, never intervals. */
int64_t deadline_wall_ms(void);
/* CLOCK_REALTIME plus ms, normalised: the abstime of pthread_cond_timedwait(). */
struct timespec deadline_abs_after_ms(int64_t ms);
/* Waits on cv (mu held) until signalled or until the monotonic instant
 * until_ms (deadline_now_ms() + ...).  0 when woken (perhaps spuriously:
 * callers loop on their predicate), ETIMEDOUT once until_ms has passed. */
int deadline_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms);

#endif
