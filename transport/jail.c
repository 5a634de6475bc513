/* jail.c -- the read-only jail's script and its report (see jail.h). */
#include "transport/jail.h"

#include <stdio.h>
#include <string.h>

#include "lib/shellquote.h"
#include "transport/shell.h"

/* How the jail starts: new mount and IPC namespaces, mounts made private
 * first, so nothing propagates back to the target.  The root tier also gets
 * a pid namespace: uid 0 may signal any root process, capabilities or not;
 * there the command sees the target's processes in /proc but can reach none
 * (--kill-child: if unshare dies, at the transport's deadline, the namespace
 * dies with it).  The user tier keeps the target's pid namespace, so ps and
 * $$ work as unconfined: its uid owns no process it could signal. */
static const char unshare_user[] = "unshare --mount --propagation private --ipc -- /bin/sh -c ";
static const char unshare_root[] =
    "unshare --mount --propagation private --ipc --pid --fork --kill-child -- /bin/sh -c ";

/* Run in the new namespaces, still root with every capability, as
 * /bin/sh -c SCRIPT airlock-jail TIER COMMAND.  No single quote in it (it is
 * quoted once, for two bytes), and short: a jailed command may be as long as
 * an unconfined one, and the whole line must fit one SSH packet.
 *
 * 1. Every mount, as the target has them: read-only, nosuid, nodev, in one
 *    mount(8) run (libmount keeps flags such as noexec that a container may
 *    have locked; -n: no write to /run/mount/utab).  A bind remount changes
 *    only this namespace's view, never the file system itself.  Then
 *    /proc/self/mountinfo must show every mount read-only, or the jail
 *    refuses -- except a mount that a later one hides (stacked on the same
 *    place or above it): no path reaches it.
 * 2. A private tmpfs on /tmp (and /var/tmp, /dev/shm): many tools need one;
 *    it is empty, nosuid, nodev and gone with the command.
 * 3. A new /dev (tmpfs, mode 0555) with only null, zero, full, random,
 *    urandom, tty and zfs bound in from the old one (never mknod: not
 *    allowed in a user namespace), and its fd/std* links.
 * 4. Every pathname socket under /run, /var/run and /var/spool (find(1),
 *    however deep; a find that fails refuses the jail; /dev/null cannot be
 *    opened after step 1, so nothing redirects to it) is covered with
 *    /dev/null: no daemon can be asked to act.  The user tier keeps the
 *    D-Bus system bus: systemctl status needs it, and polkit refuses an
 *    unprivileged uid anything that changes the system.
 * 5. setpriv drops privileges for good (no_new_privs; the bounding set
 *    emptied); the command starts after the ready line, under the one shell
 *    (shell.h) with the environment the line began with (the shell that
 *    runs this script exports PWD: it is unset first).  The root tier needs
 *    no --ambient-caps (emptying the inheritable set empties the ambient
 *    one): it works with a setpriv or kernel without ambient capabilities. */
static const char inner_script[] =
    "set -uf\n"
    "f() { echo \"airlock-jail: cannot confine: $*\" >&2; exit 125; }\n"
    "t=$1 d=/tmp/.airlock-dev l=/tmp/.airlock-fstab o=nosuid,nodev,size=64m,mode=1777\n"
    "case $t in user|root) ;; *) f tier $t ;; esac\n"
    "mount -n -a -o remount,bind,ro,nosuid,nodev || f read-only remount\n"
    "i=0 w=\n"
    "while read -r _ _ _ _ m x _; do i=$((i+1))\n"
    " case ,$x, in *,ro,*) ;; *) w=\"$w $i:$m\" ;; esac; done </proc/self/mountinfo\n"
    "for x in $w; do n=${x%%:*} m=${x#*:} i=0 c=\n"
    " while read -r _ _ _ _ p _; do i=$((i+1))\n"
    "  [ $i -le $n ] || case $m/ in \"${p%/}\"/*) c=1 ;; esac; done </proc/self/mountinfo\n"
    " [ \"$c\" ] || f $m is writable; done\n"
    "mount -n -t tmpfs -o $o airlock-tmp /tmp || f /tmp\n"
    "mount -n -t tmpfs -o nosuid,noexec,size=1m,mode=555,X-mount.mkdir airlock-dev $d || f /dev\n"
    "echo \"airlock-shm $d/shm tmpfs $o,noexec,X-mount.mkdir\" >$l\n"
    "for n in null zero full random urandom tty zfs; do [ -c /dev/$n ] || continue\n"
    " : >$d/$n && echo \"/dev/$n $d/$n none bind,ro,nosuid\" >>$l || f /dev/$n; done\n"
    "[ -d /var/tmp ] && ! [ -L /var/tmp ] && echo \"airlock-tmp /var/tmp tmpfs $o\" >>$l\n"
    "s=\n"
    "for x in /run /var/run /var/spool; do [ -d $x ] && ! [ -L $x ] && s=\"$s $x\"; done\n"
    ": >$l.s\n"
    "[ -z \"$s\" ] || find $s -type s >$l.s 2>$l.e || f find\n"
    "while read -r s; do [ $t = user ] && [ $s = /run/dbus/system_bus_socket ] && continue\n"
    " case $s in *[!A-Za-z0-9@%+=:,./_-]*) f socket $s ;; esac\n"
    " echo \"/dev/null $s none bind\" >>$l; done <$l.s || f sockets\n"
    "mount -n -a -T $l || f mounts\n"
    "s=\n"
    "for n in fd stdin stdout stderr; do [ -L /dev/$n ] && s=\"$s /dev/$n\"; done\n"
    "[ -z \"$s\" ] || cp -P $s $d/ || f links\n"
    "mount -n --move $d /dev || f /dev\n"
    "r=\"echo airlock-jail: ready $t >&2; unset PWD; exec " SHELL_EXEC_WORDS
    " \\\"\\$0\\\"\" c=-all,+dac_read_search\n"
    "[ $t = user ] && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=$c"
    " --ambient-caps=$c --bounding-set=$c --no-new-privs -- /bin/sh -c \"$r\" \"$2\"\n"
    "exec setpriv --inh-caps=-all --bounding-set=-all --securebits=+noroot,+noroot_locked,"
    "+no_setuid_fixup,+no_setuid_fixup_locked --no-new-privs -- /bin/sh -c \"$r\" \"$2\"\n";

#define READY_PREFIX "airlock-jail: ready "

const char *jail_name(enum transport_jail j)
{
	switch (j) {
	case TRANSPORT_JAIL_USER:
		return "user";
	case TRANSPORT_JAIL_ROOT:
		return "root";
	case TRANSPORT_JAIL_NONE:
	default:
		return "none";
	}
}

int jail_parse(const char *name, enum transport_jail *out)
{
	static const enum transport_jail all[] = {TRANSPORT_JAIL_NONE, TRANSPORT_JAIL_USER,
	                                          TRANSPORT_JAIL_ROOT};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (name && strcmp(name, jail_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	return -1;
}

void jail_command_line(struct buf *b, enum transport_jail j, const char *command)
{
	if (j == TRANSPORT_JAIL_NONE) {
		shell_command_words(b, command);
		return;
	}
	buf_puts(b, j == TRANSPORT_JAIL_ROOT ? unshare_root : unshare_user);
	shellquote_append(b, inner_script, strlen(inner_script));
	buf_printf(b, " airlock-jail %s ", jail_name(j));
	shellquote_append(b, command, strlen(command));
}

size_t jail_overhead(enum transport_jail j)
{
	if (j == TRANSPORT_JAIL_NONE)
		return 0;
	/* The script holds no single quote: its length plus two; the
	 * unconfined line's shell words are replaced by the unshare prefix. */
	return (j == TRANSPORT_JAIL_ROOT ? strlen(unshare_root) : strlen(unshare_user)) -
	       strlen(SHELL_EXEC_WORDS " ") + strlen(inner_script) + 2 +
	       strlen(" airlock-jail root ");
}

/* Copies the line at s (up to a newline or end) into dst, printable bytes only. */
static size_t copy_line(char *dst, size_t dstlen, const char *s, const char *end)
{
	size_t i = 0;

	for (; s < end && *s != '\n' && i + 1 < dstlen; s++)
		dst[i++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	dst[i] = '\0';
	return i;
}

static const char *next_line(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl + 1 : end;
}

enum jail_report jail_report(enum transport_jail j, char *err, size_t *len, char *why,
                             size_t whylen)
{
	static const char refused[] = "airlock-jail: cannot confine: ";
	const char *end = err + *len, *p, *reason = NULL;
	char want[64], first[200] = "";
	size_t wl;

	snprintf(want, sizeof(want), READY_PREFIX "%s\n", jail_name(j));
	wl = strlen(want);
	if (*len >= wl && memcmp(err, want, wl) == 0) {
		memmove(err, err + wl, *len - wl);
		*len -= wl;
		err[*len] = '\0';
		return JAIL_REPORT_READY;
	}
	/* The jail's own sentence, and the first line of what failed before it. */
	for (p = err; p < end; p = next_line(p, end)) {
		if ((size_t)(end - p) >= sizeof(refused) - 1 &&
		    memcmp(p, refused, sizeof(refused) - 1) == 0) {
			reason = p + sizeof(refused) - 1;
			break;
		}
		if (first[0] == '\0')
			copy_line(first, sizeof(first), p, end);
	}
	if (reason) {
		size_t n = copy_line(why, whylen, reason, end);
		if (first[0] && n + 4 < whylen)
			snprintf(why + n, whylen - n, " (%s)", first);
	} else if (first[0]) {
		snprintf(why, whylen, "%s", first);
	} else {
		snprintf(why, whylen, "the jail ended without a word (no unshare or setpriv?)");
	}
	return JAIL_REPORT_FAILED;
}
