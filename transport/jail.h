/* jail.h -- the read-only jail an unreviewed command runs in on its target.
 *
 * The jail is built on the target, for each command, by a short POSIX shell
 * script and util-linux (unshare, mount, setpriv): nothing is installed on a
 * target.  The transport runs
 *
 *   unshare --mount --propagation private --ipc [--pid --fork --kill-child] --
 *           /bin/sh -c '<script>' airlock-jail <tier> '<command>'
 *
 * (the pid namespace for the root tier only), where <script> makes every
 * mount read-only, nosuid and nodev, gives the command a private /tmp,
 * /var/tmp, /dev/shm and a /dev holding only harmless character devices,
 * hides the pathname sockets of privileged daemons, then drops privileges
 * (setpriv) and runs the command under the one shell (shell.h), as it runs
 * unconfined.
 * See docs/transport.md for what each tier prevents and what it cannot.
 *
 * The jail reports on stderr: its first line is "airlock-jail: ready <tier>"
 * once privileges are dropped and just before the command starts (the
 * transport removes that line), or "airlock-jail: cannot confine: <why>"
 * (exit 125) when it could not be built: then the command never started.  The
 * command cannot forge the first line: it starts after it was written. */
#ifndef AIRLOCK_TRANSPORT_JAIL_H
#define AIRLOCK_TRANSPORT_JAIL_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

enum transport_jail {
	TRANSPORT_JAIL_NONE, /* unconfined: the command as it was approved */
	TRANSPORT_JAIL_USER, /* uid 65534, no groups, only CAP_DAC_READ_SEARCH (read anything) */
	TRANSPORT_JAIL_ROOT, /* uid 0 with no capabilities, daemons' sockets hidden */
};

/* "none", "user", "root" (the SQL text of executions.confinement). */
const char *jail_name(enum transport_jail j);
/* 0 and *out for one of those names; -1 otherwise. */
int jail_parse(const char *name, enum transport_jail *out);

/* Appends to b the words a login shell runs for command after the one
 * shell's environment (shell_env_words): SHELL_EXEC_WORDS 'command'
 * unconfined, the jail's invocation otherwise.  Every part is one
 * quoted word. */
void jail_command_line(struct buf *b, enum transport_jail j, const char *command);
/* Bytes the jail adds to the unconfined line (0 for TRANSPORT_JAIL_NONE). */
size_t jail_overhead(enum transport_jail j);

enum jail_report {
	JAIL_REPORT_READY,  /* the command ran in the jail; the marker line was removed */
	JAIL_REPORT_FAILED, /* the jail was not built; why holds its reason */
};

/* Reads the jail's first stderr line from err (len bytes), removing the
 * ready marker in place (*len shrinks).  Anything but the ready marker of
 * tier j means the command never started: FAILED, with the jail's reason, or
 * the first line of what the shell printed instead (unshare missing, ...). */
enum jail_report jail_report(enum transport_jail j, char *err, size_t *len, char *why,
                             size_t whylen);

#endif
