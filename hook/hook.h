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

#include <stdbool.h>
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

/* Claude Code releases that read what --install may write: a command hook's
 * "onFailure": "block" (a hook that cannot start, times out or exits with
 * another code blocks the call), and managed settings' allowManagedHooksOnly
 * (hooks from user and project settings do not run). */
#define HOOK_ON_FAILURE_SINCE   "2.1.295"
#define HOOK_MANAGED_ONLY_SINCE "2.1.49"

/* How --install writes the block. */
struct hook_install_opts {
	const char *exe;  /* the airlock binary (absolute) */
	const char *db;   /* passed on with --db, or NULL */
	const char *self; /* airlock's MCP server name, passed on with --self; NULL: "airlock" */
	bool managed;     /* the managed settings file: allowManagedHooksOnly may be set */
	/* the oldest Claude Code that reads the file ("2.1.300"), or NULL when
	 * none was found: what the version gates above allow */
	const char *claude_version;
};

/* The oldest Claude Code on this host, as "X.Y.Z" in out: `claude
 * --version` of each one found (PATH, ~/.local/bin, ~/.claude/local), at
 * most 5 s each.  false when none answers. */
bool hook_claude_version(char *out, size_t outlen);
/* Whether version (X.Y.Z) is since (X.Y.Z) or later. */
bool hook_version_at_least(const char *version, const char *since);

/* Writes the PreToolUse block into the settings file at path, keeping
 * everything else in it (an older airlock entry is replaced).  0, or -1
 * with the reason in err. */
int hook_install(const char *path, const struct hook_install_opts *io, char *err, size_t errlen);
/* Verifies the block is in force in path: present, absolute and executable,
 * timeout above the budget, fail-closed wrapper, hooks not disabled, a
 * denial actually happens, onFailure and allowManagedHooksOnly as this
 * host's Claude Code supports them (claude_version, NULL: none found), and
 * airlock's MCP server name.  Prints what it found; the number of failures. */
int hook_check(const char *path, const char *claude_version, bool managed);

#endif
