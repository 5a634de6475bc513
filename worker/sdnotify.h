/* sdnotify.h -- telling systemd how airlockd is doing (Type=notify).
 *
 * The sd_notify protocol, written out: one datagram per message to the unix
 * socket named by $NOTIFY_SOCKET (a path, or "@name" for the abstract
 * namespace), holding newline-separated VAR=value lines such as "READY=1".
 * Without $NOTIFY_SOCKET (not started by systemd) every call does nothing. */
#ifndef AIRLOCK_WORKER_SDNOTIFY_H
#define AIRLOCK_WORKER_SDNOTIFY_H

#include <stdint.h>

/* Sends msg.  0 when sent or when there is no $NOTIFY_SOCKET; -1 when the
 * socket is named but the datagram could not be sent (the caller logs it:
 * a service manager that misses READY=1 will stop the daemon). */
int sdnotify_send(const char *msg);

/* The watchdog interval systemd expects pings within, in ms: from
 * $WATCHDOG_USEC when $WATCHDOG_PID is unset or names this process; 0 when
 * no watchdog is configured. */
int64_t sdnotify_watchdog_ms(void);

/* Sends WATCHDOG=1 when a watchdog is configured and *next_ms (the caller's
 * state, start at 0) has come, then sets *next_ms half an interval later.
 * Call it from a loop that comes round at least every second. */
void sdnotify_watchdog(int64_t *next_ms);

#endif
