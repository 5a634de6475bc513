/* settings.c -- `airlock hook --install` and `--check`: the settings block
 * that makes Claude Code run the hook, in user or managed settings.
 *
 * The command line wraps the hook so that every way it can end other than a
 * decision becomes a denial: Claude Code lets a call proceed when a hook
 * exits with anything but 2 (a missing binary's 127, a kill's 128+N), so
 * the wrapper turns every status other than 0 and 2 into 2. */
#include "hook/hook.h"

#include "lib/readfile.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <errno.h>
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

static char *command_line(const char *exe, const char *db)
{
	char *qe = shq(exe), *qd = db ? shq(db) : NULL, *cmd;

	cmd = xasprintf(": " MARK "; %s hook%s%s; s=$?; "
	                "[ $s -eq 0 ] && exit 0; "
	                "[ $s -eq 2 ] || echo \"airlock hook ended with status $s: denied (fail "
	                "closed)\" >&2; exit 2",
	                qe, qd ? " --db " : "", qd ? qd : "");
	free(qe);
	free(qd);
	return cmd;
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

int hook_install(const char *path, const char *exe, const char *db, char *err, size_t errlen)
{
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
	cmd = command_line(exe, db);
	entry = cJSON_CreateObject();
	cJSON_AddStringToObject(entry, "matcher", MATCHER);
	list = cJSON_AddArrayToObject(entry, "hooks");
	h = cJSON_CreateObject();
	cJSON_AddStringToObject(h, "type", "command");
	cJSON_AddStringToObject(h, "command", cmd);
	cJSON_AddNumberToObject(h, "timeout", HOOK_SETTINGS_TIMEOUT_S);
	cJSON_AddItemToArray(list, h);
	cJSON_AddItemToArray(pre, entry);
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

int hook_check(const char *path)
{
	char err[512], why[256];
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
	}
	cJSON_Delete(doc);
	return bad ? 1 : 0;
}
