/* shell.c -- the one shell's argv, environment and command line (see shell.h). */
#include "transport/shell.h"

#include <stdio.h>
#include <string.h>

#include "lib/shellquote.h"

/* --noprofile --norc: no startup file.  +O extglob, +O xpg_echo: bash's
 * defaults for the two may be built in either way; extglob changes how
 * bash parses !(...) and @(...), xpg_echo what echo does with backslashes.
 * Pinned off, as the classifier reads a command; and dash and busybox ash
 * refuse +O, so no other shell runs it. */
const char *const shell_argv[] = {SHELL_PATH, "--noprofile", "--norc", "+O", "extglob",
                                  "+O",       "xpg_echo",    "-c",     NULL};

/* Root's PATH on Debian and Proxmox VE; HOME: airlock logs in as root (qm
 * and pct need it) and qemu-ga and pct exec run commands as root; LANG:
 * UTF-8 text and English messages, in the one locale every current glibc
 * has built in.  LC_ALL is left unset: an LC_ALL naming a locale the
 * target lacks makes bash warn on stderr, and a command may set LC_*
 * itself. */
const char *const shell_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME=/root",
    "LANG=C.UTF-8",
    NULL,
};

bool shell_tag_valid(const char *tag)
{
	size_t n = tag ? strlen(tag) : 0;

	if (n == 0 || n >= SHELL_TAG_MAX)
		return false;
	return strspn(tag, "0123456789.") == n;
}

void shell_tag(char *out, int pid, long seq, long long ms)
{
	snprintf(out, SHELL_TAG_MAX, "%d.%ld.%lld", pid < 0 ? 0 : pid, seq < 0 ? 0 : seq,
	         ms < 0 ? 0 : ms);
}

void shell_env_words(struct buf *b, const char *tag)
{
	buf_puts(b, SHELL_ENV_PROGRAM " -i ");
	for (size_t i = 0; shell_env[i] != NULL; i++) {
		buf_puts(b, shell_env[i]);
		buf_putc(b, ' ');
	}
	/* A tag is digits and dots (shell_tag): one word for any shell,
	 * unquoted.  Nothing else is copied, whatever the caller passed. */
	buf_puts(b, SHELL_TAG_NAME "=");
	for (const char *p = tag ? tag : ""; *p && p - tag < SHELL_TAG_MAX - 1; p++)
		if ((*p >= '0' && *p <= '9') || *p == '.')
			buf_putc(b, *p);
	buf_putc(b, ' ');
}

void shell_command_words(struct buf *b, const char *command)
{
	buf_puts(b, SHELL_EXEC_WORDS " ");
	shellquote_append(b, command, strlen(command));
}

void shell_line(struct buf *b, const char *tag, const char *command)
{
	shell_env_words(b, tag);
	shell_command_words(b, command);
}
