/* policy.c -- taggable VPGs, tag text, cadence, budgets, time stamps. */
#include "zerto/policy.h"

#include "lib/buf.h"
#include "lib/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const task_states[] = {
    "FirstUnusedValue", "InProgress", "WaitingForUserInput", "Paused",
    "Failed",           "Stopped",    "Completed",           "Cancelling",
};

static const char *const vpg_statuses[] = {
    "Initializing",     "MeetingSLA",  "NotMeetingSLA", "HistoryNotMeetingSLA",
    "RpoNotMeetingSLA", "FailingOver", "Moving",        "Deleting",
    "Recovered",
};

static const char *const vpg_substatuses[] = {
    "None",
    "InitialSync",
    "Creating",
    "VolumeInitialSync",
    "Sync",
    "RecoveryPossible",
    "DeltaSync",
    "NeedsConfiguration",
    "Error",
    "EmptyProtectionGroup",
    "DisconnectedFromPeerNoRecoveryPoints",
    "FullSync",
    "VolumeDeltaSync",
    "VolumeFullSync",
    "FailingOverCommitting",
    "FailingOverBeforeCommit",
    "FailingOverRollingBack",
    "Promoting",
    "MovingCommitting",
    "MovingBeforeCommit",
    "MovingRollingBack",
    "Deleting",
    "PendingRemove",
    "BitmapSync",
    "DisconnectedFromPeer",
    "ReplicationPausedUserInitiated",
    "ReplicationPausedSystemInitiated",
    "RecoveryStorageProfileError",
    "Backup",
    "RollingBack",
    "RecoveryStorageError",
    "JournalStorageError",
    "VmNotProtectedError",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *zerto_task_state_name(int state, char *buf, size_t buflen)
{
	if (state >= 0 && (size_t)state < NELEM(task_states))
		return task_states[state];
	snprintf(buf, buflen, "Unknown(%d)", state);
	return buf;
}

bool zerto_task_terminal(int state)
{
	return state == ZERTO_TASK_FAILED || state == ZERTO_TASK_STOPPED ||
	       state == ZERTO_TASK_COMPLETED;
}

const char *zerto_vpg_status_name(int status)
{
	if (status >= 0 && (size_t)status < NELEM(vpg_statuses))
		return vpg_statuses[status];
	return "Unknown";
}

const char *zerto_vpg_substatus_name(int substatus)
{
	if (substatus >= 0 && (size_t)substatus < NELEM(vpg_substatuses))
		return vpg_substatuses[substatus];
	return "Unknown";
}

bool zerto_vpg_taggable(int status, int substatus)
{
	return status >= 1 && status <= 4 && (substatus == 0 || substatus == 28);
}

static void put_field(struct buf *b, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		buf_putc(b, ch == '|' || ch < 0x20 || ch == 0x7f ? ' ' : (char)ch);
	}
}

static void put_fields(struct buf *b, const char *agent, const char *action, const char *vm,
                       const char *change, const char *utc)
{
	buf_puts(b, "ai:");
	put_field(b, agent);
	buf_puts(b, " | ");
	put_field(b, action);
	buf_puts(b, " | vm=");
	put_field(b, vm);
	buf_puts(b, " | change=");
	put_field(b, change);
	buf_puts(b, " | ");
	buf_puts(b, utc);
}

char *zerto_tag_format(const char *agent, const char *action, const char *vm, const char *change,
                       time_t now)
{
	struct buf b;
	struct tm tm;
	char utc[32];

	gmtime_r(&now, &tm);
	strftime(utc, sizeof(utc), "%Y%m%dT%H%M%SZ", &tm);
	buf_init(&b, 0);
	put_fields(&b, agent, action, vm, change, utc);
	if (b.len > ZERTO_TAG_MAX && action != NULL) {
		size_t over = b.len - ZERTO_TAG_MAX, alen = strlen(action);
		size_t keep = alen > over + 3 ? alen - over - 3 : 0;
		char *cut;

		/* Do not split a UTF-8 sequence: back up over continuation bytes. */
		while (keep > 0 && ((unsigned char)action[keep] & 0xC0) == 0x80)
			keep--;
		cut = xmalloc(keep + 4);
		memcpy(cut, action, keep);
		memcpy(cut + keep, "...", 4);
		buf_reset(&b);
		put_fields(&b, agent, cut, vm, change, utc);
		free(cut);
	}
	return buf_steal(&b);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double zerto_cadence_s(const int64_t *stamps_ms, size_t n, size_t max_gaps)
{
	int64_t *s = NULL;
	double *gaps = NULL;
	size_t ng = 0, first;
	double med = -1;

	if (n < 2 || max_gaps == 0)
		return -1;
	s = malloc(n * sizeof(*s));
	gaps = malloc(n * sizeof(*gaps));
	if (s == NULL || gaps == NULL)
		goto out;
	memcpy(s, stamps_ms, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_i64);
	first = n - 1 > max_gaps ? n - 1 - max_gaps : 0;
	for (size_t i = first + 1; i < n; i++)
		gaps[ng++] = (double)(s[i] - s[i - 1]) / 1000.0;
	qsort(gaps, ng, sizeof(*gaps), cmp_dbl);
	med = ng % 2 ? gaps[ng / 2] : (gaps[ng / 2 - 1] + gaps[ng / 2]) / 2.0;
out:
	free(s);
	free(gaps);
	return med;
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

double zerto_budget_s(double cadence_s)
{
	if (cadence_s < 0)
		return ZERTO_BUDGET_MAX_S;
	return clamp(2.0 * cadence_s + ZERTO_BUDGET_HEADROOM_S, ZERTO_BUDGET_MIN_S,
	             ZERTO_BUDGET_MAX_S);
}

double zerto_poll_s(double cadence_s)
{
	if (cadence_s < 0)
		return 2.0;
	return clamp(cadence_s / ZERTO_POLL_DIVISOR, ZERTO_POLL_MIN_S, ZERTO_POLL_MAX_S);
}

double zerto_task_poll_s(double cadence_s)
{
	double p = zerto_poll_s(cadence_s);

	return p > ZERTO_TASK_POLL_MAX_S ? ZERTO_TASK_POLL_MAX_S : p;
}

static int digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)**p))
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*out = v;
	return 0;
}

int zerto_time_parse(const char *s, int64_t *ms)
{
	struct tm tm = {0};
	int y, mo, d, hh = 0, mi = 0, ss = 0;
	int64_t frac_ms = 0, off_s = 0;
	const char *p = s;

	if (s == NULL)
		return -1;
	if (strncmp(s, "/Date(", 6) == 0) {
		char *end;
		long long v = strtoll(s + 6, &end, 10);

		if (end == s + 6 || (*end != ')' && *end != '+' && *end != '-'))
			return -1;
		*ms = v;
		return 0;
	}
	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d))
		return -1;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (digits(&p, 2, &hh) || *p++ != ':' || digits(&p, 2, &mi))
			return -1;
		if (*p == ':') {
			p++;
			if (digits(&p, 2, &ss))
				return -1;
			if (*p == '.') {
				int64_t scale = 100;

				p++;
				if (!isdigit((unsigned char)*p))
					return -1;
				for (; isdigit((unsigned char)*p); p++) {
					frac_ms += (*p - '0') * scale;
					scale /= 10;
				}
			}
		}
	}
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '+' ? 1 : -1, oh, om;

		p++;
		if (digits(&p, 2, &oh))
			return -1;
		if (*p == ':')
			p++;
		if (digits(&p, 2, &om))
			return -1;
		off_s = sign * (oh * 3600 + om * 60);
	}
	if (*p != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 60)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = hh;
	tm.tm_min = mi;
	tm.tm_sec = ss;
	*ms = ((int64_t)timegm(&tm) - off_s) * 1000 + frac_ms;
	return 0;
}

const char *zerto_time_format(int64_t ms, char *buf, size_t buflen)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char base[24];

	gmtime_r(&t, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, buflen, "%s.%03dZ", base, (int)(ms % 1000));
	return buf;
}
