/* jail.c -- the read-only jail's script and its report (see jail.h). */
#include "transport/jail.h"

#include <stdio.h>
#include <string.h>

#include "lib/shellquote.h"

/* Run by the login shell (or the guest's /bin/sh) as
 * /bin/sh -c OUTER airlock-jail INNER TIER COMMAND.  New mount and IPC
 * namespaces, mounts made private first, so nothing propagates back to the
 * target.  The root tier also gets a pid namespace: uid 0 may signal any
 * root process, capabilities or not; there the command sees the target's
 * processes in /proc but can reach none (--kill-child: if unshare dies, at
 * the transport's deadline, the namespace dies with it).  The user tier
 * keeps the target's pid namespace, so ps and $$ work as unconfined: its
 * uid owns no process it could signal. */
static const char outer_script[] = "p=; [ \"$2\" = root ] && p=\"--pid --fork --kill-child\"; "
                                   "exec unshare --mount --propagation private --ipc $p "
                                   "-- /bin/sh -c \"$1\" airlock-jail \"$2\" \"$3\"";

/* Run in the new namespaces, still root with every capability.  $1 is the
 * tier, $2 the command.  No single quote in it: it is quoted twice on its way.
 *
 * 1. Every mount, as the target has them: read-only, nosuid, nodev, in one
 *    mount(8) run (libmount keeps flags such as noexec that a container may
 *    have locked).  A bind remount changes only this namespace's view, never
 *    the file system itself.  Then /proc/self/mountinfo must show every mount
 *    read-only, or the jail refuses -- except a mount that a later one hides
 *    (stacked on the same place or above it): no path reaches it.
 * 2. A private tmpfs on /tmp (and /var/tmp, /dev/shm): many tools need one;
 *    it is empty, nosuid, nodev and gone with the command.
 * 3. A new /dev (tmpfs) with only null, zero, full, random, urandom, tty and
 *    zfs bound in from the old one: no block device, no /dev/mem, no kmsg.
 * 4. Every pathname socket under /run, /var/run and /var/spool (find(1):
 *    however deep; no find, or a find that fails, refuses the jail; after
 *    step 1 /dev/null cannot be opened, so nothing here redirects to it) is
 *    covered with /dev/null, so no daemon can be asked to
 *    act (systemd's private socket, QMP, pvedaemon, ...); /tmp's and /dev's
 *    sockets are gone with the old /tmp and /dev.  The user tier keeps the D-Bus system bus:
 *    systemctl status needs it, and as an unprivileged uid polkit refuses it
 *    anything that changes the system.
 * 5. setpriv drops privileges for good (no_new_privs; the bounding set
 *    emptied); the command starts after the ready line.  The root tier
 *    needs no --ambient-caps (emptying the inheritable set empties the
 *    ambient one): it also works with a setpriv or kernel without ambient
 *    capabilities, where the user tier cannot be built. */
static const char inner_script[] =
    "set -uf\n"
    "fail() { echo \"airlock-jail: cannot confine: $*\" >&2; exit 125; }\n"
    "t=$1 d=/tmp/.airlock-dev f=/tmp/.airlock-fstab\n"
    "case $t in user|root) ;; *) fail \"unknown tier $t\" ;; esac\n"
    "mount -n -a -o remount,bind,ro,nosuid,nodev || fail \"a mount cannot be made read-only\"\n"
    "i=0 w=\n"
    "while read -r _ _ _ _ m o _; do\n"
    " i=$((i+1)); case ,$o, in *,ro,*) ;; *) w=\"$w $i:$m\" ;; esac\n"
    "done </proc/self/mountinfo\n"
    "for x in $w; do\n"
    " n=${x%%:*} m=${x#*:} i=0 c=\n"
    " while read -r _ _ _ _ p _; do\n"
    "  i=$((i+1)); [ $i -gt $n ] || continue\n"
    "  case $p in /) c=1 ;; esac; case $m/ in \"$p\"/*) c=1 ;; esac\n"
    " done </proc/self/mountinfo\n"
    " [ -n \"$c\" ] || fail \"$m is still writable\"\n"
    "done\n"
    "mount -n -t tmpfs -o nosuid,nodev,size=64m,mode=1777 airlock-tmp /tmp || fail \"private "
    "/tmp\"\n"
    "mount -n -t tmpfs -o nosuid,noexec,size=1m,mode=555,X-mount.mkdir airlock-dev $d ||"
    " fail \"private /dev\"\n"
    "echo \"airlock-shm $d/shm tmpfs nosuid,nodev,noexec,size=64m,mode=1777,X-mount.mkdir 0 0\""
    " >$f\n"
    "for n in null zero full random urandom tty zfs; do\n"
    " [ -c /dev/$n ] || continue\n"
    " : >$d/$n && echo \"/dev/$n $d/$n none bind,ro,nosuid 0 0\" >>$f || fail \"/dev/$n\"\n"
    "done\n"
    "if [ -d /var/tmp ] && ! [ -L /var/tmp ]; then\n"
    " echo \"airlock-tmp /var/tmp tmpfs nosuid,nodev,size=64m,mode=1777 0 0\" >>$f\n"
    "fi\n"
    "l=\n"
    "for x in /run /var/run /var/spool; do [ -d $x ] && ! [ -L $x ] && l=\"$l $x\"; done\n"
    ": >$f.s\n"
    "if [ -n \"$l\" ]; then find $l -type s >$f.s 2>$f.e || fail \"cannot list sockets\"; fi\n"
    "while read -r s; do\n"
    " [ $t = user ] && [ \"$s\" = /run/dbus/system_bus_socket ] && continue\n"
    " case $s in *[!A-Za-z0-9@%+=:,./_-]*) fail \"socket $s has a name the jail cannot hide\" ;;"
    " esac\n"
    " echo \"/dev/null $s none bind 0 0\" >>$f\n"
    "done <$f.s || fail \"cannot read the socket list\"\n"
    "mount -n -a -T $f || fail \"private /dev and hidden sockets\"\n"
    "l=\n"
    "for n in fd stdin stdout stderr; do [ -L /dev/$n ] && l=\"$l /dev/$n\"; done\n"
    "[ -z \"$l\" ] || cp -P $l $d/ || fail \"/dev links\"\n"
    "mount -n --move $d /dev || fail \"private /dev\"\n"
    "r=\"echo airlock-jail: ready $t >&2; exec /bin/sh -c \\\"\\$0\\\"\"\n"
    "if [ $t = user ]; then\n"
    " exec setpriv --reuid=65534 --regid=65534 --clear-groups"
    " --inh-caps=-all,+dac_read_search --ambient-caps=-all,+dac_read_search"
    " --bounding-set=-all,+dac_read_search --no-new-privs -- /bin/sh -c \"$r\" \"$2\"\n"
    "fi\n"
    "exec setpriv --inh-caps=-all --bounding-set=-all"
    " --securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,"
    "+keep_caps_locked --no-new-privs -- /bin/sh -c \"$r\" \"$2\"\n";

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
	buf_puts(b, "/bin/sh -c ");
	if (j != TRANSPORT_JAIL_NONE) {
		shellquote_append(b, outer_script, strlen(outer_script));
		buf_puts(b, " airlock-jail ");
		shellquote_append(b, inner_script, strlen(inner_script));
		buf_printf(b, " %s ", jail_name(j));
	}
	shellquote_append(b, command, strlen(command));
}

size_t jail_overhead(enum transport_jail j)
{
	if (j == TRANSPORT_JAIL_NONE)
		return 0;
	/* Neither script holds a single quote: each is its length plus two. */
	return strlen(outer_script) + 2 + strlen(" airlock-jail ") + strlen(inner_script) + 2 +
	       strlen(" root ");
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
