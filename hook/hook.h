/* hook.h -- `airlock hook`: the agent host's PreToolUse gate (Claude Code).
 *
 * Reads one PreToolUse event on stdin and answers on stdout with the
 * documented JSON and exit code: no output and 0 (no decision), allow/ask
 * JSON and 0, or deny JSON, the reason on stderr, and 2.  It fails closed:
 * a malformed event, an unreachable database, an internal error, its own
 * budget running out, or a fatal signal all end in deny and exit 2.
 * docs/hook.md has the decision table. */
#ifndef AIRLOCK_HOOK_HOOK_H
#define AIRLOCK_HOOK_HOOK_H

#include <stddef.h>

/* The longest a guard can take (the tag wait's 300 s ceiling plus the
 * requests around it) bounds the hook's own budget, which stays below the
 * timeout written into the settings: a hook the client cancels is a hook
 * whose answer is thrown away and whose call proceeds. */
#define HOOK_BUDGET_MS          330000L
#define HOOK_SETTINGS_TIMEOUT_S 360

struct hook_opts {
	const char *db;       /* conninfo, or NULL for $AIRLOCK_DB / PG* */
	const char *self;     /* airlock's own MCP server name ("airlock") */
	const char *log_path; /* decision log, or NULL for the default */
	long budget_ms;       /* <= HOOK_BUDGET_MS */
};

/* Runs one decision; returns the process exit code (0 or 2). */
int hook_run(const struct hook_opts *o);

/* The settings file for scope "user" or "managed" (caller frees). */
char *hook_settings_path(const char *scope);
/* Writes the PreToolUse block for the airlock binary at exe (absolute) into
 * the settings file at path, keeping everything else in it.  db, when not
 * NULL, is passed on (a conninfo without secrets, e.g. "service=airlock").
 * 0, or -1 with the reason in err. */
int hook_install(const char *path, const char *exe, const char *db, char *err, size_t errlen);
/* Verifies the block is in force in path: present, absolute and executable,
 * timeout above the budget, fail-closed wrapper, hooks not disabled, and a
 * denial actually happens.  Prints what it found; 0 when all holds. */
int hook_check(const char *path);

#endif
