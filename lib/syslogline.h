/* syslogline.h -- one line to the system log, kept apart from lib/log.h.
 *
 * <syslog.h> defines LOG_INFO, LOG_DEBUG, ... as macros, which would replace
 * lib/log.h's levels of the same names in any file that included both; this
 * module is the only one that includes it. */
#ifndef AIRLOCK_SYSLOGLINE_H
#define AIRLOCK_SYSLOGLINE_H

/* Opens the system log as `ident` (borrowed for the process's life), facility daemon. */
void syslogline_open(const char *ident);
/* Sends s (one line, no newline) at notice level. */
void syslogline_send(const char *s);
void syslogline_close(void);

#endif
