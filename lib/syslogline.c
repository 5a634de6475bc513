/* syslogline.c -- the system log, behind names that do not clash with lib/log.h. */
#include "lib/syslogline.h"

#include <syslog.h>

void syslogline_open(const char *ident)
{
	openlog(ident, LOG_PID, LOG_DAEMON);
}

void syslogline_send(const char *s)
{
	syslog(LOG_NOTICE, "%s", s);
}

void syslogline_close(void)
{
	closelog();
}
