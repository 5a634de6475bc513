/* deadline.h -- time for waits: a monotonic clock in ms, and the absolute
 * CLOCK_REALTIME instant pthread_cond_timedwait() wants. */
#ifndef AIRLOCK_DEADLINE_H
#define AIRLOCK_DEADLINE_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds: for elapsed times and deadlines. */
int64_t deadline_now_ms(void);
/* CLOCK_REALTIME plus ms, normalised: the abstime of pthread_cond_timedwait(). */
struct timespec deadline_abs_after_ms(int64_t ms);

#endif
