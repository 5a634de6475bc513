/* sdnotify.c -- the sd_notify datagram protocol. */
#include "worker/sdnotify.h"

#include "lib/deadline.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int sdnotify_send(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t plen;
	socklen_t salen;
	ssize_t n;
	int fd, rc = -1;

	if (path == NULL || path[0] == '\0')
		return 0;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sa.sun_path)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace: the name is not NUL-terminated */
	salen =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + (path[0] == '@' ? 0 : 1));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	if (n == (ssize_t)strlen(msg))
		rc = 0;
	close(fd);
	return rc;
}

int64_t sdnotify_watchdog_ms(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	char *end;
	long long v;

	if (usec == NULL || usec[0] == '\0')
		return 0;
	if (pid && pid[0]) {
		long long p = strtoll(pid, &end, 10);
		if (*end != '\0' || p != (long long)getpid())
			return 0;
	}
	errno = 0;
	v = strtoll(usec, &end, 10);
	if (errno || *end != '\0' || v <= 0)
		return 0;
	return v / 1000 > 0 ? v / 1000 : 1;
}

void sdnotify_watchdog(int64_t *next_ms)
{
	int64_t interval = sdnotify_watchdog_ms();
	int64_t now;

	if (interval == 0)
		return;
	now = deadline_now_ms();
	if (now < *next_ms)
		return;
	sdnotify_send("WATCHDOG=1");
	*next_ms = now + interval / 2;
}
