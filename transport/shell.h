/* shell.h -- the one shell every command runs under on a target.
 *
 * The classifier parses bash (classifier/shparse.h).  So every command
 * airlock runs on a target -- an agent's, a preview, a recovery helper, a
 * probe, the kill of a command past its deadline, on a host, through
 * `qm guest exec` and through `pct exec`, confined or not -- runs under
 * bash, with no startup file and a fixed environment:
 *
 *   argv: /bin/bash --noprofile --norc +O extglob +O xpg_echo -c <command>
 *   envp: PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
 *         HOME=/root
 *         LANG=C.UTF-8
 *         AIRLOCK_EXEC_ID=<tag>
 *
 * and nothing else: no BASH_ENV, ENV, BASHOPTS, SHELLOPTS, POSIXLY_CORRECT
 * or anything else from the node's login session or the guest agent, so
 * bash reads no file before the command, starts in its own (not POSIX)
 * mode, and the command is the bash program the classifier judged.  The two
 * shell options whose default depends on how bash was built and that change
 * how a command is read or what echo writes are pinned off (+O extglob, +O
 * xpg_echo); no other shell accepts +O, so a /bin/bash that is dash or
 * busybox ash refuses to run anything.  The
 * tag is unique per command; the kill of a host or container command finds
 * its processes by it (docs/transport.md).  Nothing here falls back to
 * another shell: a target without /bin/bash runs nothing.
 *
 * A program that execs the command itself (the jail's helper) uses the
 * words and strings below as they are: execve(SHELL_PATH, {shell_argv...,
 * command, NULL}, {shell_env..., "AIRLOCK_EXEC_ID=<tag>", NULL}).  A line
 * that a shell parses (the node's login shell; `qm guest exec` and `pct
 * exec` pass the words on as argv) starts the command with
 *
 *   /usr/bin/env -i <shell_env...> AIRLOCK_EXEC_ID=<tag> \
 *       /bin/bash --noprofile --norc +O extglob +O xpg_echo -c '<command>'
 *
 * (shell_line): env(1) empties the environment and executes bash with
 * exactly these strings.  No word but the quoted command needs quoting. */
#ifndef AIRLOCK_TRANSPORT_SHELL_H
#define AIRLOCK_TRANSPORT_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

#define SHELL_PATH "/bin/bash"
/* The words before the command, as one string for scripts that exec it
 * (the command follows as one more word). */
#define SHELL_EXEC_WORDS "/bin/bash --noprofile --norc +O extglob +O xpg_echo -c"
/* What empties the environment on a line a shell parses. */
#define SHELL_ENV_PROGRAM "/usr/bin/env"
/* The environment variable that tags every process of one command. */
#define SHELL_TAG_NAME "AIRLOCK_EXEC_ID"
/* The longest tag (digits and dots); shell_tag makes shorter ones. */
#define SHELL_TAG_MAX 64

/* {"/bin/bash", "--noprofile", "--norc", "+O", "extglob", "+O", "xpg_echo",
 * "-c", NULL}: the command is the next argv element. */
extern const char *const shell_argv[];
/* {"PATH=...", "HOME=/root", "LANG=C.UTF-8", NULL}: then the tag, then the
 * end of the environment. */
extern const char *const shell_env[];

/* Whether tag may be one: 1..SHELL_TAG_MAX-1 digits and dots. */
bool shell_tag_valid(const char *tag);
/* Writes a new tag into out (SHELL_TAG_MAX bytes): pid.seq.ms, unique per
 * daemon and command. */
void shell_tag(char *out, int pid, long seq, long long ms);

/* Appends "/usr/bin/env -i PATH=... HOME=/root LANG=C.UTF-8
 * AIRLOCK_EXEC_ID=<tag> ".  tag is one shell_tag made (only its digits and
 * dots are copied). */
void shell_env_words(struct buf *b, const char *tag);
/* Appends SHELL_EXEC_WORDS and the quoted command. */
void shell_command_words(struct buf *b, const char *command);
/* Both: the whole line that runs command under the one shell. */
void shell_line(struct buf *b, const char *tag, const char *command);

#endif
