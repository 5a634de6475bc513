/* jail.h -- the jail a command nobody approved runs in on its target.
 *
 * The jail is a small static program, airlock-jail (jail/airlock-jail.c),
 * that airlockd copies to each target (JAIL_HELPER_PATH, a root-only folder)
 * on first use and whenever its SHA-256 changes.  The remote line checks the
 * helper's SHA-256 and runs it:
 *
 *   <one shell> '<check>; exec <helper> "$@"' airlock-jail -t <tier> [-n] -d <ms>
 *           [-m <bytes>] [-p <tasks>] [-c <percent>] [-s <bytes>]
 *           [-S <secret store>]... [-w <write path>]... -- '<command>'
 *
 * (after AIRLOCK_EXEC_ID=<tag> on the host, after `pct exec <ctid> --` in a
 * CT, as `qm guest exec` arguments in a VM).  What the helper does and what
 * each tier guarantees: docs/transport.md, "The jail".
 *
 * The jail reports on stderr: its first line is "airlock-jail: ready <tier>
 * <facts>" just before the command starts (the transport removes it and
 * keeps the facts: uid, network, limits), "airlock-jail: not installed"
 * (exit 125) when the helper is missing or its SHA-256 differs (nothing ran:
 * the transport installs it and tries once more), or "airlock-jail: cannot
 * confine: <why>" (exit 125) when the jail could not be built as asked: the
 * command never started.  The command cannot forge the first line: it
 * starts after it was written. */
#ifndef AIRLOCK_TRANSPORT_JAIL_H
#define AIRLOCK_TRANSPORT_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

#define JAIL_HELPER_DIR  "/var/lib/airlock/jail"
#define JAIL_HELPER_PATH JAIL_HELPER_DIR "/airlock-jail"

enum transport_jail {
	TRANSPORT_JAIL_NONE,  /* unconfined: the command as it was approved */
	TRANSPORT_JAIL_USER,  /* a uid of its own, no capabilities, the log groups */
	TRANSPORT_JAIL_ROOT,  /* uid 0 with no capabilities, securebits locked */
	TRANSPORT_JAIL_WRITE, /* as root, with only the verdict's write set writable */
};

/* What the jail is built with, besides the tier.  Borrowed for the call. */
struct transport_jail_spec {
	bool net_view;             /* keep the target's network namespace */
	const char *const *writes; /* TRANSPORT_JAIL_WRITE: absolute paths, "dir/" */
	size_t nwrites;
	const char *const *secrets; /* the policy's secret_stores: covered when they exist */
	size_t nsecrets;
	long long mem_bytes;     /* 0: the helper's default (512 MiB) */
	long tasks;              /* 0: 256 */
	int cpu_pct;             /* 0: 100 (one core) */
	long long scratch_bytes; /* each private tmpfs; 0: 64 MiB */
};

/* "none", "user", "root", "write" (the SQL text of executions.confinement). */
const char *jail_name(enum transport_jail j);
/* 0 and *out for one of those names; -1 otherwise. */
int jail_parse(const char *name, enum transport_jail *out);

/* Appends to b the words a login shell runs for command after the one
 * shell's environment (shell_env_words): SHELL_EXEC_WORDS 'command'
 * unconfined, the helper's check (under the same shell) and invocation
 * otherwise, with
 * the helper's SHA-256 (hex) and its deadline (ms, 0 = none).  Every part is
 * one quoted word.  spec may be NULL (defaults, no secret stores). */
void jail_command_line(struct buf *b, enum transport_jail j, const struct transport_jail_spec *spec,
                       const char *sha_hex, int64_t deadline_ms, const char *command);

/* The shell script that installs the helper from its stdin, for /bin/sh -c:
 * refuses (exit 125, "airlock-jail: cannot confine: ...") on a target of
 * another architecture than arch (uname -m), or when the folder cannot be
 * written, or when what landed does not have sha_hex.  Caller frees. */
char *jail_install_script(const char *sha_hex, const char *arch);

enum jail_report {
	JAIL_REPORT_READY,   /* the command ran in the jail; the marker line was removed */
	JAIL_REPORT_FAILED,  /* the jail was not built; why holds its reason */
	JAIL_REPORT_MISSING, /* the helper is not on the target (or not this one) */
};

/* Reads the jail's first stderr line from err (len bytes), removing the
 * ready marker in place (*len shrinks) and copying its facts to facts.
 * Anything but the ready marker of tier j means the command never started:
 * MISSING, or FAILED with the jail's reason or the first line of what the
 * shell printed instead. */
enum jail_report jail_report(enum transport_jail j, char *err, size_t *len, char *why,
                             size_t whylen, char *facts, size_t factslen);

#endif
