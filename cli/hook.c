/* hook.c -- `airlock hook`: the PreToolUse gate on the agent's host, and
 * --install / --check for its settings block (hook/hook.h). */
#include "cli/cli.h"

#include "cli/hostcheck.h"
#include "hook/hook.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One side-door finding, as --check prints its lines. */
static void show_finding(void *ctx, const struct sidedoor_finding *f)
{
	static const char *const tag[] = {"ok  ", "OPEN", "warn", "FAIL"};

	(void)ctx;
	printf("%s %s: %s\n", tag[f->status], f->subject, f->detail);
	if (f->fix != NULL && f->status != SIDEDOOR_CLOSED)
		printf("     fix: %s\n", f->fix);
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: airlock hook [--db CONNINFO] [--self NAME] [--log FILE] [--budget-ms N]\n"
	    "       airlock hook --install [--scope user|managed | --settings FILE] [--db "
	    "CONNINFO]\n"
	    "                          [--self NAME] [--claude-version X.Y.Z|none]\n"
	    "       airlock hook --check [--scope user|managed | --settings FILE] [--db CONNINFO]\n"
	    "                        [--node HOST[:PORT]]... [--claude-version X.Y.Z|none]\n"
	    "\n"
	    "Without --install or --check: reads one Claude Code PreToolUse event on stdin and\n"
	    "answers with the documented JSON.  Bash commands that reach a machine airlock\n"
	    "manages outside airlock (ssh, scp, rsync, nc, curl to a node, local qm/pct ...)\n"
	    "are denied with the airlock call to make instead; unknown destinations ask;\n"
	    "allowlisted ones get no decision.  Tools of other MCP servers follow the tool\n"
	    "catalog: read_only: no decision; exec: deny; mutating: airlockd inserts a Zerto\n"
	    "checkpoint first (airlock.guard), then allow naming it, or deny with the guard's\n"
	    "words; unknown: ask.  airlock's own tools (server NAME, default airlock) are\n"
	    "allowed.  Any failure, malformed event, unreachable database, fatal signal or\n"
	    "the budget running out (default and maximum %ld ms) is a denial.  One line per\n"
	    "decision goes to FILE (default\n"
	    "$AIRLOCK_HOOK_LOG, else ~/.airlock-hook.log; - for none); every deny and ask is\n"
	    "also recorded in airlock.hook_events.\n"
	    "\n"
	    "--install writes the PreToolUse block, with this binary's absolute path, a\n"
	    "fail-closed wrapper and timeout %d s, into the user settings\n"
	    "(~/.claude/settings.json, the default) or the managed settings\n"
	    "(/etc/claude-code/managed-settings.json), keeping the rest of the file.\n"
	    "Where Claude Code %s or later is found (claude --version, or\n"
	    "--claude-version), the hook is written with onFailure \"block\", and managed\n"
	    "settings (Claude Code %s or later) with allowManagedHooksOnly.\n"
	    "--check verifies the block is there and live (it runs it on a `qm list`),\n"
	    "onFailure and allowManagedHooksOnly as this host's Claude Code reads them, and\n"
	    "that the MCP server named NAME runs airlock-mcp; then the side door: for every\n"
	    "node airlock manages (airlock.side_door_targets with an operator's login, or\n"
	    "each --node), every SSH key of this host (~/.ssh, ~/.ssh/config, ssh's defaults,\n"
	    "the running ssh-agent) is offered to the node without ever logging in, API\n"
	    "tokens in the environment and in files are looked for, and the SSH and API\n"
	    "ports are tried.  Each open way in is printed with what to remove; the result\n"
	    "is reported to airlock (airlock.report_host_check).\n"
	    "\n"
	    "exit codes: 0 no decision, allow or ask (the JSON says which); 2 deny or usage\n"
	    "            error.  --install: 0 done, 1 not.  --check: 0 the block is in force\n"
	    "            and the side door is closed, 1 not.\n",
	    HOOK_BUDGET_MS, HOOK_SETTINGS_TIMEOUT_S, HOOK_ON_FAILURE_SINCE,
	    HOOK_MANAGED_ONLY_SINCE);
}

int cli_hook(int argc, char **argv)
{
	struct hook_opts o = {.self = "airlock", .budget_ms = HOOK_BUDGET_MS};
	const char *scope = NULL, *settings = NULL, *claude = NULL;
	const char *nodes[64];
	size_t nnodes = 0;
	bool install = false, check = false, self_given = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--install") == 0) {
			install = true;
		} else if (strcmp(a, "--check") == 0) {
			check = true;
		} else if (v != NULL && strcmp(a, "--db") == 0) {
			o.db = v, i++;
		} else if (v != NULL && strcmp(a, "--self") == 0) {
			if (v[0] == '\0' || strstr(v, "__") != NULL || strchr(v, '\'') != NULL) {
				fprintf(stderr, "airlock hook: --self must be an MCP server name "
				                "(no \"__\", no quote): denied\n");
				return 2;
			}
			o.self = v, self_given = true, i++;
		} else if (v != NULL && strcmp(a, "--claude-version") == 0) {
			claude = v, i++;
		} else if (v != NULL && strcmp(a, "--node") == 0) {
			if (nnodes == 64) {
				fprintf(stderr, "airlock hook: at most 64 --node: denied\n");
				return 2;
			}
			nodes[nnodes++] = v, i++;
		} else if (v != NULL && strcmp(a, "--log") == 0) {
			o.log_path = v, i++;
		} else if (v != NULL && strcmp(a, "--scope") == 0) {
			scope = v, i++;
		} else if (v != NULL && strcmp(a, "--settings") == 0) {
			settings = v, i++;
		} else if (v != NULL && strcmp(a, "--budget-ms") == 0) {
			char *end;
			long b = strtol(v, &end, 10);

			if (*end != '\0' || b <= 0 || b > HOOK_BUDGET_MS) {
				fprintf(stderr,
				        "airlock hook: --budget-ms must be 1..%ld (it can only be "
				        "lowered): denied\n",
				        HOOK_BUDGET_MS);
				return 2;
			}
			o.budget_ms = b, i++;
		} else {
			fprintf(stderr, "airlock hook: unknown or incomplete option '%s': denied\n",
			        a);
			usage(stderr);
			return 2;
		}
	}
	if (scope != NULL && strcmp(scope, "user") != 0 && strcmp(scope, "managed") != 0) {
		fprintf(stderr, "airlock hook: --scope must be user or managed\n");
		return 2;
	}
	if (nnodes > 0 && !check) {
		fprintf(stderr, "airlock hook: --node goes with --check\n");
		return 2;
	}
	if (install || check) {
		char *path = settings ? strdup(settings) : hook_settings_path(scope);
		char *managed_path = hook_settings_path("managed");
		char exe[PATH_MAX], err[600], version[32];
		const char *cv = NULL;
		bool managed;
		ssize_t n;
		int rc;

		if (path == NULL) {
			fprintf(stderr, "airlock hook: no settings path ($HOME unset?)\n");
			free(managed_path);
			return 1;
		}
		managed = (scope != NULL && strcmp(scope, "managed") == 0) ||
		          strcmp(path, managed_path) == 0;
		free(managed_path);
		/* which Claude Code reads the file: as stated, or the oldest found */
		if (claude != NULL && strcmp(claude, "none") != 0)
			cv = claude;
		else if (claude == NULL && hook_claude_version(version, sizeof(version)))
			cv = version;
		if (check) {
			int open;

			rc = hook_check(path, cv, managed) > 0 ? 1 : 0;
			free(path);
			printf("side door: every way this host could log in to a node or call its "
			       "API\n");
			open = hostcheck_run(&(struct hostcheck_opts){
			    .db = o.db, .nodes = nodes, .nnodes = nnodes, .show = show_finding});
			if (open != 0) {
				if (open > 0)
					printf("side door: %d way(s) in are open or cannot be told "
					       "closed\n",
					       open);
				rc = 1;
			} else {
				printf("side door: closed: no credential here logs in to a node or "
				       "calls its API\n");
			}
			return rc;
		}
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0) {
			fprintf(stderr, "airlock hook: cannot find this binary's path\n");
			free(path);
			return 1;
		}
		exe[n] = '\0';
		rc = hook_install(path,
		                  &(struct hook_install_opts){.exe = exe,
		                                              .db = o.db,
		                                              .self = self_given ? o.self : NULL,
		                                              .managed = managed,
		                                              .claude_version = cv},
		                  err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "airlock hook --install: %s\n", err);
		} else {
			printf(
			    "installed the airlock PreToolUse hook in %s (check it with `airlock "
			    "hook --check%s%s`)\n",
			    path, settings ? " --settings " : "", settings ? settings : "");
			if (hook_version_at_least(cv, HOOK_ON_FAILURE_SINCE))
				printf("Claude Code %s: onFailure \"block\" written%s\n", cv,
				       managed && hook_version_at_least(cv, HOOK_MANAGED_ONLY_SINCE)
				           ? ", and allowManagedHooksOnly"
				           : "");
			else if (cv != NULL)
				printf("Claude Code %s predates onFailure (%s): not written; the "
				       "wrapper's exit 2 fails closed%s\n",
				       cv, HOOK_ON_FAILURE_SINCE,
				       managed && hook_version_at_least(cv, HOOK_MANAGED_ONLY_SINCE)
				           ? "; allowManagedHooksOnly written"
				           : "");
			else
				printf("no Claude Code found (claude --version): onFailure and "
				       "allowManagedHooksOnly not written; run --install again "
				       "once it "
				       "is installed, or name its version with --claude-version\n");
		}
		free(path);
		return rc < 0 ? 1 : 0;
	}
	return hook_run(&o);
}
