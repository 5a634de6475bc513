/* log.h -- one key=value line per event on stderr (see STYLE.md, Logging).
 *
 * Every line starts with the time, in RFC 3339 with milliseconds (UTC), and
 * the level: "ts=2026-12-01T14:15:56.123Z level=info ...".  The caller writes
 * the fields after them: log_msg(LOG_INFO, "exec=%lld evt=claimed", id).
 * Values that may hold spaces or quotes are written with log_quote(), which
 * never lets a value break the line format.  Never pass secrets. */
#ifndef AIRLOCK_LOG_H
#define AIRLOCK_LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_FATAL };

void log_set_level(enum log_level min);
/* Parses "debug", "info", "warn", "error"; -1 when unknown. */
int log_level_parse(const char *s);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes s into out as a log value: hidden characters rendered as escapes
 * (lib/visible.h, newlines as \n), then bare when safe, else double-quoted
 * with \" and \\ escaped; cut to outlen.  Returns out. */
const char *log_quote(const char *s, char *out, size_t outlen);
/* The current time as a log line's ts value ("2026-12-01T14:15:56.123Z",
 * 24 characters) into out (at least 25 bytes); returns out.  No allocation,
 * no locks: usable on the out-of-memory path. */
const char *log_timestamp(char *out, size_t outlen);
/* Logs at fatal level and exits 1.  For start-up only. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
