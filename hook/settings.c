/* settings.c -- `airlock hook --install` and `--check`: the settings block
 * that makes Claude Code run the hook, in user or managed settings.
 *
 * The command line wraps the hook so that every way it can end other than a
 * decision becomes a denial: Claude Code lets a call proceed when a hook
 * exits with anything but 2 (a missing binary's 127, a kill's 128+N), so
 * the wrapper turns every status other than 0 and 2 into 2. */
#include "hook/hook.h"

#include "lib/deadline.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETTINGS_MAX ((size_t)1 << 20)
#define MATCHER      "Bash|WebFetch|mcp__.*"
#define MARK         "airlock-hook-v1"

char *hook_settings_path(const char *scope)
{
	const char *home = getenv("HOME");

	if (scope != NULL && strcmp(scope, "managed") == 0)
		return xstrdup("/etc/claude-code/managed-settings.json");
	if (scope == NULL || strcmp(scope, "user") == 0)
		return home ? xasprintf("%s/.claude/settings.json", home) : NULL;
	return NULL;
}

/* Single-quotes s for /bin/sh. */
static char *shq(const char *s)
{
	size_t n = 3;
	char *out, *q;

	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 4 : 1;
	out = xmalloc(n);
	q = out;
	*q++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(q, "'\\''", 4);
			q += 4;
		} else {
			*q++ = *p;
		}
	}
	*q++ = '\'';
	*q = '\0';
	return out;
}

static char *command_line(const char *exe, const char *db, const char *self)
{
	char *qe = shq(exe), *qd = db ? shq(db) : NULL, *cmd;
	char *qs = self && strcmp(self, "airlock") != 0 ? shq(self) : NULL;

	cmd = xasprintf(": " MARK "; %s hook%s%s%s%s; s=$?; "
	                "[ $s -eq 0 ] && exit 0; "
	                "[ $s -eq 2 ] || echo \"airlock hook ended with status $s: denied (fail "
	                "closed)\" >&2; exit 2",
	                qe, qd ? " --db " : "", qd ? qd : "", qs ? " --self " : "", qs ? qs : "");
	free(qe);
	free(qd);
	free(qs);
	return cmd;
}

/* ---------------------------------------------------------------- Claude Code's version */

static bool parse_version(const char *s, int v[3])
{
	for (; *s; s++)
		if (isdigit((unsigned char)*s) && sscanf(s, "%d.%d.%d", &v[0], &v[1], &v[2]) == 3)
			return true;
	return false;
}

bool hook_version_at_least(const char *version, const char *since)
{
	int a[3], b[3];

	if (version == NULL || !parse_version(version, a) || !parse_version(since, b))
		return false;
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] > b[i];
	return true;
}

/* `prog --version`'s first line, within 5 s; false when it does not answer. */
static bool version_of(const char *prog, char *out, size_t outlen)
{
	int pfd[2], status;
	pid_t pid;
	char buf[256];
	size_t used = 0;
	int64_t deadline = deadline_now_ms() + 5000;

	if (access(prog, X_OK) != 0 || pipe2(pfd, O_CLOEXEC) < 0)
		return false;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return false;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(devnull, 2);
		execl(prog, prog, "--version", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		long left = (long)(deadline - deadline_now_ms());
		struct pollfd p = {pfd[0], POLLIN, 0};
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		got = read(pfd[0], buf + used, sizeof(buf) - 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || (used += (size_t)got) >= sizeof(buf) - 1)
			break;
	}
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	buf[used] = '\0';
	{
		int v[3];

		if (!parse_version(buf, v))
			return false;
		snprintf(out, outlen, "%d.%d.%d", v[0], v[1], v[2]);
	}
	return true;
}

bool hook_claude_version(char *out, size_t outlen)
{
	const char *path = getenv("PATH"), *home = getenv("HOME");
	char cand[4096], v[32];
	bool found = false;

	/* every claude this host has: the oldest decides what may be written */
	for (const char *p = path ? path : "", *e; *p; p = e ? e + 1 : p + strlen(p)) {
		e = strchr(p, ':');
		snprintf(cand, sizeof(cand), "%.*s/claude", (int)(e ? e - p : (long)strlen(p)), p);
		if (version_of(cand, v, sizeof(v)) && (!found || !hook_version_at_least(v, out))) {
			snprintf(out, outlen, "%s", v);
			found = true;
		}
	}
	for (int i = 0; home != NULL && i < 2; i++) {
		snprintf(cand, sizeof(cand), "%s/%s", home,
		         i == 0 ? ".local/bin/claude" : ".claude/local/claude");
		if (version_of(cand, v, sizeof(v)) && (!found || !hook_version_at_least(v, out))) {
			snprintf(out, outlen, "%s", v);
			found = true;
		}
	}
	return found;
}

static bool is_ours(const cJSON *h)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(h, "command");

	return cJSON_IsString(c) && strstr(c->valuestring, MARK) != NULL;
}

static cJSON *load(const char *path, char *err, size_t errlen, bool *missing)
{
	char rerr[256];
	size_t len;
	char *text = readfile(path, SETTINGS_MAX, &len, rerr, sizeof(rerr));
	cJSON *doc;

	*missing = false;
	if (text == NULL) {
		if (access(path, F_OK) != 0 && errno == ENOENT) {
			*missing = true;
			return cJSON_CreateObject();
		}
		snprintf(err, errlen, "%s", rerr);
		return NULL;
	}
	doc = cJSON_ParseWithLength(text, len);
	free(text);
	if (doc == NULL || !cJSON_IsObject(doc)) {
		snprintf(err, errlen, "%s is not a JSON object; fix or move it first", path);
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

static int mkdirs(const char *path)
{
	char *d = xstrdup(path);
	int rc = 0;

	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0755) < 0 && errno != EEXIST)
			rc = -1;
		*p = '/';
	}
	free(d);
	return rc;
}

int hook_install(const char *path, const struct hook_install_opts *io, char *err, size_t errlen)
{
	const char *exe = io->exe;
	bool missing;
	cJSON *doc = load(path, err, errlen, &missing), *hooks, *pre, *entry, *list, *h;
	char *cmd = NULL, *text = NULL, *tmp = NULL;
	int rc = -1, fd = -1;

	if (doc == NULL)
		return -1;
	if (exe[0] != '/' || access(exe, X_OK) != 0) {
		snprintf(err, errlen, "%s is not an absolute path to an executable airlock", exe);
		goto out;
	}
	hooks = cJSON_GetObjectItemCaseSensitive(doc, "hooks");
	if (hooks == NULL)
		hooks = cJSON_AddObjectToObject(doc, "hooks");
	if (!cJSON_IsObject(hooks)) {
		snprintf(err, errlen, "%s: \"hooks\" is not an object", path);
		goto out;
	}
	pre = cJSON_GetObjectItemCaseSensitive(hooks, "PreToolUse");
	if (pre == NULL)
		pre = cJSON_AddArrayToObject(hooks, "PreToolUse");
	if (!cJSON_IsArray(pre)) {
		snprintf(err, errlen, "%s: \"hooks.PreToolUse\" is not an array", path);
		goto out;
	}
	/* drop an older airlock entry, keep everyone else's */
	for (int i = cJSON_GetArraySize(pre) - 1; i >= 0; i--) {
		cJSON *e = cJSON_GetArrayItem(pre, i);
		const cJSON *hl = cJSON_GetObjectItemCaseSensitive(e, "hooks");
		const cJSON *x;

		cJSON_ArrayForEach(x, hl) if (is_ours(x))
		{
			cJSON_DeleteItemFromArray(pre, i);
			break;
		}
	}
	cmd = command_line(exe, io->db, io->self);
	entry = cJSON_CreateObject();
	cJSON_AddStringToObject(entry, "matcher", MATCHER);
	list = cJSON_AddArrayToObject(entry, "hooks");
	h = cJSON_CreateObject();
	cJSON_AddStringToObject(h, "type", "command");
	cJSON_AddStringToObject(h, "command", cmd);
	cJSON_AddNumberToObject(h, "timeout", HOOK_SETTINGS_TIMEOUT_S);
	/* only for a client that reads them: a key an older one does not know
	 * could make it refuse the file, and every hook in it with the file */
	if (hook_version_at_least(io->claude_version, HOOK_ON_FAILURE_SINCE))
		cJSON_AddStringToObject(h, "onFailure", "block");
	cJSON_AddItemToArray(list, h);
	cJSON_AddItemToArray(pre, entry);
	if (io->managed && hook_version_at_least(io->claude_version, HOOK_MANAGED_ONLY_SINCE)) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "allowManagedHooksOnly");
		cJSON_AddTrueToObject(doc, "allowManagedHooksOnly");
	}
	text = cJSON_Print(doc);
	if (mkdirs(path) < 0) {
		snprintf(err, errlen, "cannot create the directory of %s: %s", path,
		         strerror(errno));
		goto out;
	}
	tmp = xasprintf("%s.airlock-tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    write(fd, "\n", 1) != 1 || fsync(fd) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot replace %s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(tmp);
	free(text);
	free(cmd);
	cJSON_Delete(doc);
	return rc;
}

/* Runs the installed command line with a Bash event that must be denied
 * without any database (a local qm): exit 2 proves the block is live. */
static int live_denial(const char *cmd, char *why, size_t whylen)
{
	static const char event[] =
	    "{\"session_id\":\"airlock-hook-check\",\"hook_event_name\":\"PreToolUse\","
	    "\"permission_mode\":\"bypassPermissions\",\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"qm list\"},\"tool_use_id\":\"check\"}";
	int in[2];
	pid_t pid;
	int status;

	if (pipe(in) < 0)
		return -1;
	/* the command may exit before reading (a missing binary): a write to
	 * its closed stdin must not kill the check */
	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(in[0], 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		close(in[1]);
		setenv("AIRLOCK_HOOK_LOG", "-", 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	if (write(in[1], event, sizeof(event) - 1) < 0) {
		/* the hook may not read: its status says the rest */
	}
	close(in[1]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		return 0;
	snprintf(why, whylen, "the installed command did not deny a local `qm list` (status %d)",
	         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return -1;
}

/* The --self NAME the installed command passes, or "airlock". */
static void installed_self(const char *cmd, char *out, size_t outlen)
{
	const char *p = strstr(cmd, " --self '"), *e;

	snprintf(out, outlen, "airlock");
	if (p == NULL)
		return;
	p += 9;
	e = strchr(p, '\'');
	if (e != NULL && (size_t)(e - p) < outlen)
		snprintf(out, outlen, "%.*s", (int)(e - p), p);
}

/* Where Claude Code finds MCP servers: managed-mcp.json, the user's
 * ~/.claude.json (top level and each project), the project's .mcp.json.
 * For the server named self in any of them: its command must be
 * airlock-mcp, or the hook would let another server's tools pass as
 * airlock's.  Returns the number of failures. */
static int check_mcp_server(const char *self)
{
	const char *home = getenv("HOME");
	char *files[3] = {xstrdup("/etc/claude-code/managed-mcp.json"),
	                  home ? xasprintf("%s/.claude.json", home) : NULL, xstrdup(".mcp.json")};
	int bad = 0, seen = 0;

	for (int f = 0; f < 3; f++) {
		bool missing;
		char err[300];
		cJSON *doc = files[f] ? load(files[f], err, sizeof(err), &missing) : NULL;
		const cJSON *servers[64];
		int ns = 0;
		const cJSON *pj;

		if (doc == NULL || missing) {
			cJSON_Delete(doc);
			continue;
		}
		servers[ns++] = cJSON_GetObjectItemCaseSensitive(doc, "mcpServers");
		cJSON_ArrayForEach(pj,
		                   cJSON_GetObjectItemCaseSensitive(doc, "projects")) if (ns < 64)
		    servers[ns++] = cJSON_GetObjectItemCaseSensitive(pj, "mcpServers");
		for (int i = 0; i < ns; i++) {
			const cJSON *srv = cJSON_GetObjectItemCaseSensitive(servers[i], self);
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(srv, "command");
			const char *base;

			if (srv == NULL)
				continue;
			seen++;
			base = cJSON_IsString(c) ? strrchr(c->valuestring, '/') : NULL;
			base = base ? base + 1 : cJSON_IsString(c) ? c->valuestring : "";
			if (strcmp(base, "airlock-mcp") == 0) {
				printf("ok   the MCP server %s in %s runs airlock-mcp\n", self,
				       files[f]);
			} else {
				printf("FAIL the MCP server %s in %s runs %s, not airlock-mcp: the "
				       "hook "
				       "would allow its tools as airlock's; name that server "
				       "otherwise, "
				       "or install the hook with --self and airlock-mcp's name\n",
				       self, files[f],
				       cJSON_IsString(c) ? c->valuestring : "no command");
				bad++;
			}
		}
		cJSON_Delete(doc);
	}
	if (seen == 0)
		printf(
		    "warn no MCP server named %s is configured (managed-mcp.json, ~/.claude.json, "
		    ".mcp.json): mcp__%s__* tools are allowed only as airlock-mcp's own names\n",
		    self, self);
	for (int f = 0; f < 3; f++)
		free(files[f]);
	return bad;
}

/* onFailure and allowManagedHooksOnly, as this host's Claude Code reads them. */
static int check_versioned(const cJSON *doc, const cJSON *hook, const char *claude_version,
                           bool managed)
{
	const cJSON *of = cJSON_GetObjectItemCaseSensitive(hook, "onFailure");
	const cJSON *amo = cJSON_GetObjectItemCaseSensitive(doc, "allowManagedHooksOnly");
	bool block = cJSON_IsString(of) && strcmp(of->valuestring, "block") == 0;
	int bad = 0;

	if (claude_version == NULL)
		printf(
		    "warn no Claude Code found on this host (claude --version): onFailure is %s; "
		    "the wrapper's exit 2 is what fails closed\n",
		    block ? "set" : "not set");
	else
		printf("ok   Claude Code %s found\n", claude_version);
	if (hook_version_at_least(claude_version, HOOK_ON_FAILURE_SINCE)) {
		if (block) {
			printf("ok   onFailure \"block\": a hook that cannot start, times out or "
			       "crashes blocks the call (Claude Code %s or later reads it)\n",
			       HOOK_ON_FAILURE_SINCE);
		} else {
			printf(
			    "FAIL onFailure is not \"block\" although Claude Code %s reads it: run "
			    "--install again\n",
			    claude_version);
			bad++;
		}
	} else if (claude_version != NULL) {
		printf("warn Claude Code %s predates onFailure (%s): the wrapper's exit 2 is what "
		       "fails closed; upgrade it, then run --install again\n",
		       claude_version, HOOK_ON_FAILURE_SINCE);
	}
	if (!managed)
		return bad;
	if (cJSON_IsTrue(amo))
		printf(
		    "ok   allowManagedHooksOnly: hooks of user and project settings do not run\n");
	else if (hook_version_at_least(claude_version, HOOK_MANAGED_ONLY_SINCE))
		printf("warn allowManagedHooksOnly is not set: hooks of user and project settings "
		       "run beside this one (--install sets it)\n");
	return bad;
}

int hook_check(const char *path, const char *claude_version, bool managed)
{
	char err[512], why[256], self[128];
	bool missing;
	cJSON *doc = load(path, err, sizeof(err), &missing);
	const cJSON *pre, *e, *found = NULL, *matcher = NULL, *dis;
	int bad = 0;

	if (doc == NULL) {
		printf("FAIL %s\n", err);
		return 1;
	}
	if (missing) {
		printf("FAIL %s does not exist: run `airlock hook --install`\n", path);
		cJSON_Delete(doc);
		return 1;
	}
	dis = cJSON_GetObjectItemCaseSensitive(doc, "disableAllHooks");
	if (cJSON_IsTrue(dis)) {
		printf("FAIL %s sets disableAllHooks: no hook runs\n", path);
		bad++;
	}
	pre = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "hooks"),
	                                       "PreToolUse");
	cJSON_ArrayForEach(e, pre)
	{
		const cJSON *h;

		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(e, "hooks")) if (is_ours(h))
		{
			found = h;
			matcher = cJSON_GetObjectItemCaseSensitive(e, "matcher");
		}
	}
	if (found == NULL) {
		printf("FAIL no airlock PreToolUse hook in %s: run `airlock hook --install`\n",
		       path);
		cJSON_Delete(doc);
		return 1;
	}
	printf("ok   airlock PreToolUse hook present in %s\n", path);
	if (!cJSON_IsString(matcher) || strcmp(matcher->valuestring, MATCHER) != 0) {
		printf(
		    "FAIL matcher is not \"%s\": Bash, WebFetch or MCP calls may pass unchecked\n",
		    MATCHER);
		bad++;
	} else {
		printf("ok   matcher \"%s\" covers Bash, WebFetch and every MCP tool\n", MATCHER);
	}
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(found, "timeout");

		if (!cJSON_IsNumber(t) || t->valuedouble * 1000 <= (double)HOOK_BUDGET_MS) {
			printf("FAIL timeout must be above the hook's budget (%ld s): the client "
			       "would cancel it and let the call proceed\n",
			       HOOK_BUDGET_MS / 1000);
			bad++;
		} else {
			printf("ok   timeout %.0f s is above the hook's own budget of %ld s\n",
			       t->valuedouble, HOOK_BUDGET_MS / 1000);
		}
	}
	{
		const char *cmd = cJSON_GetObjectItemCaseSensitive(found, "command")->valuestring;

		const char *q = strstr(cmd, MARK "; '");

		if (q != NULL) {
			/* the binary the command runs: absolute and executable */
			char exe[4096];
			const char *st = q + strlen(MARK "; '"), *end = strchr(st, '\'');
			size_t l = end ? (size_t)(end - st) : 0;

			if (l == 0 || l >= sizeof(exe)) {
				printf("FAIL cannot read the binary's path in the command\n");
				bad++;
			} else {
				memcpy(exe, st, l);
				exe[l] = '\0';
				if (exe[0] != '/' || access(exe, X_OK) != 0) {
					printf("FAIL %s is missing or not executable: every call "
					       "would be "
					       "denied; run --install again\n",
					       exe);
					bad++;
				} else {
					printf("ok   %s is executable\n", exe);
				}
			}
		}
		if (strstr(cmd, "exit 2") == NULL) {
			printf("FAIL the command has no fail-closed wrapper\n");
			bad++;
		}
		if (live_denial(cmd, why, sizeof(why)) < 0) {
			printf("FAIL %s\n", why);
			bad++;
		} else {
			printf("ok   the installed command denies a local `qm list` with exit 2\n");
		}
		installed_self(cmd, self, sizeof(self));
	}
	bad += check_versioned(doc, found, claude_version, managed);
	bad += check_mcp_server(self);
	cJSON_Delete(doc);
	return bad;
}
