/* policy.h -- the guard's pure rules: which VPGs can be tagged, the tag text,
 * cadence and the waits derived from it, ZVM time stamps.  No I/O.
 *
 * All durations here are in ZVM seconds (seconds of the appliance's own
 * clock); the guard divides them by the client's time scale before sleeping,
 * which is 1 in production. */
#ifndef AIRLOCK_ZERTO_POLICY_H
#define AIRLOCK_ZERTO_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The tag-wait budget: 2 x cadence + headroom, clamped to [min, max]. */
#define ZERTO_BUDGET_HEADROOM_S 15.0
#define ZERTO_BUDGET_MIN_S      45.0
#define ZERTO_BUDGET_MAX_S      300.0
/* Poll interval: cadence / 16, clamped; a 630 s VPG is polled every 10 s, a
 * 5 s VPG every 0.31 s. */
#define ZERTO_POLL_DIVISOR    16.0
#define ZERTO_POLL_MIN_S      0.25
#define ZERTO_POLL_MAX_S      10.0
#define ZERTO_TASK_POLL_MAX_S 2.0

/* Task states, as the ZVM numbers them in a task's Status.State. */
enum zerto_task_state {
	ZERTO_TASK_FIRST_UNUSED = 0,
	ZERTO_TASK_IN_PROGRESS = 1,
	ZERTO_TASK_WAITING_FOR_USER_INPUT = 2,
	ZERTO_TASK_PAUSED = 3,
	ZERTO_TASK_FAILED = 4,
	ZERTO_TASK_STOPPED = 5,
	ZERTO_TASK_COMPLETED = 6,
	ZERTO_TASK_CANCELLING = 7,
};

/* "InProgress", ..., "Unknown(9)" for values outside 0..7 (buf holds that). */
const char *zerto_task_state_name(int state, char *buf, size_t buflen);
/* 4, 5 and 6 end a task. */
bool zerto_task_terminal(int state);

/* VPG status / substatus names; "Unknown" outside the known ranges. */
const char *zerto_vpg_status_name(int status);
const char *zerto_vpg_substatus_name(int substatus);

/* The whitelist: protecting (Status 1..4) and not syncing (SubStatus 0 None or
 * 28 Backup).  Everything else, including unknown values, is not taggable. */
bool zerto_vpg_taggable(int status, int substatus);

/* The longest tag we send: the ZVM's limit is not documented; the simulator
 * refuses names over 256 characters. */
#define ZERTO_TAG_MAX 250

/* The tag: "ai:<agent> | <action> | vm=<vm> | change=<change> | <utc>",
 * utc = YYYYMMDDTHHMMSSZ.  A "|" or control character inside a field is
 * replaced by a space so the fields stay parseable.  When the tag would be
 * longer than ZERTO_TAG_MAX bytes the action is cut (on a UTF-8 character
 * boundary) and ends in "..."; the other fields are kept whole.  Caller frees. */
char *zerto_tag_format(const char *agent, const char *action, const char *vm, const char *change,
                       time_t now);

/* Median gap, in seconds, between consecutive time stamps (milliseconds,
 * ascending or not); at most the last max_gaps gaps count.  -1 when fewer
 * than two stamps. */
double zerto_cadence_s(const int64_t *stamps_ms, size_t n, size_t max_gaps);

/* The tag-wait budget for a measured cadence; cadence < 0 (unknown) gives the
 * maximum. */
double zerto_budget_s(double cadence_s);
/* Poll intervals for the tag and for the insert task. */
double zerto_poll_s(double cadence_s);
double zerto_task_poll_s(double cadence_s);

/* ISO-8601 (fraction optional; Z, +hh:mm or none = UTC) or /Date(ms)/ to
 * milliseconds since the epoch.  -1 when unparseable. */
int zerto_time_parse(const char *s, int64_t *ms);
/* "2026-09-21T15:04:05.000Z" into buf (at least 25 bytes). */
const char *zerto_time_format(int64_t ms, char *buf, size_t buflen);

#endif
