/* jail.c -- the jail helper's remote line, install script and report (see jail.h). */
#include "transport/jail.h"

#include <stdio.h>
#include <string.h>

#include "lib/shellquote.h"
#include "lib/xalloc.h"
#include "transport/shell.h"

#define READY_PREFIX "airlock-jail: ready "
#define MISSING_LINE "airlock-jail: not installed"

/* The check in front of the helper: its SHA-256 as airlockd has it, or
 * nothing runs.  sha256sum is coreutils (every Debian, Proxmox VE and
 * ordinary Linux guest).  No single quote in it: quoting costs two bytes. */
static const char check_fmt[] =
    "s=$(sha256sum " JAIL_HELPER_PATH " 2>/dev/null) && [ \"${s%%%% *}\" = %s ] || "
    "{ echo '" MISSING_LINE "' >&2; exit 125; }; exec " JAIL_HELPER_PATH " \"$@\"";

const char *jail_name(enum transport_jail j)
{
	switch (j) {
	case TRANSPORT_JAIL_USER:
		return "user";
	case TRANSPORT_JAIL_ROOT:
		return "root";
	case TRANSPORT_JAIL_WRITE:
		return "write";
	case TRANSPORT_JAIL_NONE:
	default:
		return "none";
	}
}

int jail_parse(const char *name, enum transport_jail *out)
{
	static const enum transport_jail all[] = {TRANSPORT_JAIL_NONE, TRANSPORT_JAIL_USER,
	                                          TRANSPORT_JAIL_ROOT, TRANSPORT_JAIL_WRITE};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (name && strcmp(name, jail_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	return -1;
}

static void word(struct buf *b, const char *s)
{
	buf_putc(b, ' ');
	shellquote_append(b, s, strlen(s));
}

static void num(struct buf *b, const char *opt, long long v)
{
	if (v > 0)
		buf_printf(b, " %s %lld", opt, v);
}

void jail_command_line(struct buf *b, enum transport_jail j, const struct transport_jail_spec *spec,
                       const char *sha_hex, int64_t deadline_ms, const char *command)
{
	static const struct transport_jail_spec none = {0};
	char check[512];

	if (j == TRANSPORT_JAIL_NONE) {
		shell_command_words(b, command);
		return;
	}
	if (spec == NULL)
		spec = &none;
	/* The check runs under the one shell too; the helper then execs the
	 * command under it (jail/airlock-jail.c). */
	snprintf(check, sizeof(check), check_fmt, sha_hex);
	buf_puts(b, SHELL_EXEC_WORDS " ");
	shellquote_append(b, check, strlen(check));
	buf_printf(b, " airlock-jail -t %s", jail_name(j));
	if (spec->net_view)
		buf_puts(b, " -n");
	num(b, "-d", deadline_ms);
	num(b, "-m", spec->mem_bytes);
	num(b, "-p", spec->tasks);
	num(b, "-c", spec->cpu_pct);
	num(b, "-s", spec->scratch_bytes);
	for (size_t i = 0; i < spec->nsecrets; i++) {
		buf_puts(b, " -S");
		word(b, spec->secrets[i]);
	}
	for (size_t i = 0; j == TRANSPORT_JAIL_WRITE && i < spec->nwrites; i++) {
		buf_puts(b, " -w");
		word(b, spec->writes[i]);
	}
	buf_puts(b, " --");
	word(b, command);
}

char *jail_install_script(const char *sha_hex, const char *arch)
{
	return xasprintf(
	    "d=" JAIL_HELPER_DIR "; m=$(uname -m); [ \"$m\" = %s ] || { echo \"airlock-jail: "
	    "cannot confine: the target is $m; the jail helper is built for %s\" >&2; exit 125; "
	    "}; umask 077; { mkdir -p $d && chmod 0700 $d && cat >$d/.new.$$ && chmod 0500 "
	    "$d/.new.$$ "
	    "&& mv -f $d/.new.$$ $d/airlock-jail; } 2>/dev/null || { rm -f $d/.new.$$; echo "
	    "\"airlock-jail: cannot "
	    "confine: the jail helper cannot be installed in $d\" >&2; exit 125; }; "
	    "s=$(sha256sum $d/airlock-jail) && [ \"${s%%%% *}\" = %s ] || { echo \"airlock-jail: "
	    "cannot confine: the installed jail helper does not have the SHA-256 it was sent "
	    "with\" >&2; exit 125; }",
	    arch, arch, sha_hex);
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
                             size_t whylen, char *facts, size_t factslen)
{
	static const char refused[] = "airlock-jail: cannot confine: ";
	const char *end = err + *len, *p, *reason = NULL, *nl;
	char want[64], first[200] = "";
	size_t wl;

	if (factslen > 0)
		facts[0] = '\0';
	snprintf(want, sizeof(want), READY_PREFIX "%s", jail_name(j));
	wl = strlen(want);
	nl = memchr(err, '\n', *len);
	if (nl && (size_t)(nl - err) >= wl && memcmp(err, want, wl) == 0 &&
	    (err[wl] == '\n' || err[wl] == ' ')) {
		size_t line = (size_t)(nl - err) + 1;
		if (err[wl] == ' ' && factslen > 0)
			copy_line(facts, factslen, err + wl + 1, end);
		memmove(err, err + line, *len - line);
		*len -= line;
		err[*len] = '\0';
		return JAIL_REPORT_READY;
	}
	if (*len >= strlen(MISSING_LINE) && memcmp(err, MISSING_LINE, strlen(MISSING_LINE)) == 0) {
		snprintf(why, whylen, "the jail helper is not installed on the target");
		return JAIL_REPORT_MISSING;
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
		snprintf(why, whylen, "the jail ended without a word");
	}
	return JAIL_REPORT_FAILED;
}
