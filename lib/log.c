/* log.c -- key=value log lines on stderr. */
#include "lib/log.h"

#include "lib/visible.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Set by one thread (start-up, SIGHUP reload), read by all. */
static _Atomic int min_level = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error", "fatal"};

void log_set_level(enum log_level min)
{
	min_level = min;
}

int log_level_parse(const char *s)
{
	for (int i = LOG_DEBUG; i <= LOG_ERROR; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

const char *log_timestamp(char *out, size_t outlen)
{
	struct timespec now;
	struct tm tm;
	char day[24];

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, outlen, "%s.%03ldZ", day, now.tv_nsec / 1000000);
	return out;
}

static void vlog(enum log_level lvl, const char *fmt, va_list ap)
{
	char line[4096], ts[32];
	int n = snprintf(line, sizeof(line), "ts=%s level=%s ", log_timestamp(ts, sizeof(ts)),
	                 level_names[lvl]);

	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	size_t len = strlen(line);
	line[len] = '\n';
	fwrite(line, 1, len + 1, stderr);
	fflush(stderr);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if ((int)lvl < min_level)
		return;
	va_start(ap, fmt);
	vlog(lvl, fmt, ap);
	va_end(ap);
}

const char *log_quote(const char *s, char *out, size_t outlen)
{
	size_t o = 0;
	char *v;
	int bare;

	if (outlen == 0)
		return out;
	/* First what a person may see (control, format and other invisible
	 * characters as escapes, as on every human view), then the line's own
	 * quoting: a log line can neither be split nor act on a terminal. */
	v = visible_str(s, 0);
	bare = *v != '\0';
	for (const char *p = v; *p; p++)
		if (*p == ' ' || *p == '"' || *p == '=' || *p == '\\')
			bare = 0;
	if (bare) {
		snprintf(out, outlen, "%s", v);
		free(v);
		return out;
	}
	if (o + 1 < outlen)
		out[o++] = '"';
	for (const char *p = v; *p && o + 3 < outlen; p++) {
		if (*p == '"' || *p == '\\')
			out[o++] = '\\';
		out[o++] = *p;
	}
	if (o + 1 < outlen)
		out[o++] = '"';
	out[o] = '\0';
	free(v);
	return out;
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_FATAL, fmt, ap);
	va_end(ap);
	exit(1);
}
