/* deadline.c -- the one clock for waits and intervals. */
#include "lib/deadline.h"

#include <errno.h>

int64_t deadline_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

double deadline_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int64_t deadline_wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct timespec deadline_abs_after_ms(int64_t ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

int deadline_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t until_ms)
{
	int64_t left = until_ms - deadline_now_ms();
	struct timespec abs;

	if (left <= 0)
		return ETIMEDOUT;
	abs = deadline_abs_after_ms(left);
	if (pthread_cond_timedwait(cv, mu, &abs) == ETIMEDOUT && deadline_now_ms() >= until_ms)
		return ETIMEDOUT;
	return 0;
}
