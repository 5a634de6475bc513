/* previewtpl.h -- the read-only previews a policy names for a command.
 *
 * A command rule may carry `preview:` templates (docs/classifier.md): argv
 * lists, or {run: argv, when: [subcommands], programs: [...]}.  For a held
 * command, previewtpl_build() finds the rule the verdict names that has
 * previews and fills its templates with the command's own words:
 *   {subcommand}  the operands the rule's subcommand matched (install, "pool destroy")
 *   {operands}    every operand after the subcommand, each one word
 *   {operand}     one preview per operand (at most PREVIEWTPL_MAX in all)
 *   {operand1}    the first operand (qm rollback 102 snap: 102)
 *   {program}     the program's name (qm or pct), as the first word
 *   {options}     the command's options that take no value (-r, --purge)
 * Carried words are never re-parsed by a shell: every word of a preview,
 * literal or carried, is single-quoted (lib/shellquote.h), so an operand such
 * as "x; reboot" or "$(reboot)" stays one inert word.  Only commands the
 * classifier's parser reads as one simple command of literal words get a
 * preview (no expansions, substitutions, redirections, pipes or lists), and
 * no carried operand may start with '-' (it would become an option).
 *
 * Pure: no I/O.  The previews are commands like any other: the daemon
 * classifies each and runs it only when it is read_only. */
#ifndef AIRLOCK_PREVIEWTPL_H
#define AIRLOCK_PREVIEWTPL_H

#include "classifier/policy.h"
#include "classifier/verdict.h"

#include <stddef.h>

#define PREVIEWTPL_MAX 8

struct previewtpl {
	char *commands[PREVIEWTPL_MAX]; /* shell command lines, the caller's (previewtpl_clear) */
	size_t n;
	char rule[128]; /* the rule whose previews these are */
};

/* 0: no rule of the verdict has previews for this command (out->n == 0);
 * 1: out holds 1..PREVIEWTPL_MAX previews;
 * -1: a rule has previews but they cannot be built for this command: why says
 *     so (out->rule names the rule). */
int previewtpl_build(const struct policy *p, const struct verdict *v, const char *command,
                     size_t len, struct previewtpl *out, char *why, size_t whylen);
void previewtpl_clear(struct previewtpl *t);

#endif
