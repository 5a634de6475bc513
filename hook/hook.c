/* hook.c -- one PreToolUse decision: read the event, decide, answer, record.
 *
 * Fail closed: the deny answer for "the hook itself failed" is prepared
 * before anything else, and every way out that is not a decision writes it
 * (budget timer, fatal signals, errors).  Only async-signal-safe calls run in
 * the handler: write() of prepared bytes and _exit(). */
#include "hook/hook.h"

#include "classifier/classifier.h"
#include "hook/dest.h"
#include "hook/reach.h"
#include "lib/deadline.h"
#include "lib/execstate.h"
#include "lib/sqlstate.h"
#include "lib/log.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"
#include "mcp/tools.h"
#include "store/store.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EVENT_MAX  ((size_t)4 << 20) /* bytes of stdin read at most */
#define REASON_MAX 2000
/* A guard request is polled this often, and given up this long before the
 * budget ends, so the answer is a specific denial, not the failsafe's. */
#define GUARD_POLL_MS   200
#define GUARD_MARGIN_MS 2000

enum decision { DEC_NONE, DEC_ALLOW, DEC_ASK, DEC_DENY };

static const char *decision_name(enum decision d)
{
	return d == DEC_ALLOW ? "allow" : d == DEC_ASK ? "ask" : d == DEC_DENY ? "deny" : "none";
}

struct answer {
	enum decision d;
	char reason[REASON_MAX];
	char context[600]; /* additionalContext (allow only) */
	char why[64];      /* short key for the log */
};

/* ---------------------------------------------------------------- fail closed */

static char failsafe_out[512];
static size_t failsafe_out_len;
static char failsafe_err[256];
static size_t failsafe_err_len;

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void failsafe(int sig)
{
	(void)sig;
	write_all(1, failsafe_out, failsafe_out_len);
	write_all(2, failsafe_err, failsafe_err_len);
	_exit(2);
}

static void arm_failsafe(long budget_ms)
{
	static const int sigs[] = {SIGALRM, SIGTERM, SIGINT,  SIGHUP,  SIGQUIT, SIGSEGV, SIGBUS,
	                           SIGFPE,  SIGILL,  SIGABRT, SIGXCPU, SIGUSR1, SIGUSR2};
	const char *why = "airlock hook could not finish its check (budget exhausted, killed, or "
	                  "crashed): denied, because a check that did not finish is not a pass. "
	                  "Use mcp__airlock__run for commands on managed machines.";
	struct sigaction sa;
	struct itimerval it = {0};

	failsafe_out_len = (size_t)snprintf(
	    failsafe_out, sizeof(failsafe_out),
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":"
	    "\"deny\",\"permissionDecisionReason\":\"%s\"}}\n",
	    why);
	failsafe_err_len = (size_t)snprintf(failsafe_err, sizeof(failsafe_err), "%s\n", why);
	if (failsafe_out_len >= sizeof(failsafe_out))
		failsafe_out_len = sizeof(failsafe_out) - 1;
	if (failsafe_err_len >= sizeof(failsafe_err))
		failsafe_err_len = sizeof(failsafe_err) - 1;
	/* its own stack, so a stack overflow still ends in the deny */
	{
		static char altstack[65536];
		stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};

		sigaltstack(&ss, NULL);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = failsafe;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	it.it_value.tv_sec = budget_ms / 1000;
	it.it_value.tv_usec = (budget_ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* ---------------------------------------------------------------- answers */

static void set(struct answer *a, enum decision d, const char *why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set(struct answer *a, enum decision d, const char *why, const char *fmt, ...)
{
	va_list ap;

	a->d = d;
	snprintf(a->why, sizeof(a->why), "%s", why);
	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
}

static int emit(const struct answer *a)
{
	cJSON *root, *h;
	char *txt;

	if (a->d == DEC_NONE)
		return 0;
	root = cJSON_CreateObject();
	h = cJSON_AddObjectToObject(root, "hookSpecificOutput");
	cJSON_AddStringToObject(h, "hookEventName", "PreToolUse");
	cJSON_AddStringToObject(h, "permissionDecision", decision_name(a->d));
	cJSON_AddStringToObject(h, "permissionDecisionReason", a->reason);
	if (a->context[0])
		cJSON_AddStringToObject(h, "additionalContext", a->context);
	txt = cJSON_PrintUnformatted(root);
	/* the answer is out: the failsafe must not print a second one */
	setitimer(ITIMER_REAL, &(struct itimerval){0}, NULL);
	fputs(txt, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	free(txt);
	cJSON_Delete(root);
	if (a->d == DEC_DENY) {
		fprintf(stderr, "%s\n", a->reason);
		return 2;
	}
	return 0;
}

/* ---------------------------------------------------------------- event */

struct event {
	cJSON *root;
	const char *tool;
	const cJSON *input;
	const char *session, *mode;
};

static char *read_stdin(size_t *len, bool *toolong)
{
	size_t cap = 8192, n = 0;
	char *buf = xmalloc(cap);

	*toolong = false;
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			if (cap >= EVENT_MAX) {
				*toolong = true;
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(0, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int parse_event(const char *buf, size_t len, struct event *ev, struct answer *a)
{
	const cJSON *name, *tool, *input, *x;

	memset(ev, 0, sizeof(ev[0]));
	ev->root = cJSON_ParseWithLength(buf, len);
	if (ev->root == NULL || !cJSON_IsObject(ev->root)) {
		set(a, DEC_DENY, "malformed_event",
		    "airlock hook: the PreToolUse event on stdin is not a JSON object: denied "
		    "(fail closed).");
		return -1;
	}
	name = cJSON_GetObjectItemCaseSensitive(ev->root, "hook_event_name");
	tool = cJSON_GetObjectItemCaseSensitive(ev->root, "tool_name");
	input = cJSON_GetObjectItemCaseSensitive(ev->root, "tool_input");
	if (!cJSON_IsString(name) || strcmp(name->valuestring, "PreToolUse") != 0) {
		set(a, DEC_DENY, "malformed_event",
		    "airlock hook: the event is not a PreToolUse event (hook_event_name missing or "
		    "different): denied (fail closed). Install it for PreToolUse only.");
		return -1;
	}
	if (!cJSON_IsString(tool) || tool->valuestring[0] == '\0' || !cJSON_IsObject(input)) {
		set(a, DEC_DENY, "malformed_event",
		    "airlock hook: the event lacks tool_name (a string) or tool_input (an object): "
		    "denied (fail closed).");
		return -1;
	}
	ev->tool = tool->valuestring;
	ev->input = input;
	x = cJSON_GetObjectItemCaseSensitive(ev->root, "session_id");
	ev->session = cJSON_IsString(x) ? x->valuestring : "";
	x = cJSON_GetObjectItemCaseSensitive(ev->root, "permission_mode");
	ev->mode = cJSON_IsString(x) ? x->valuestring : "";
	return 0;
}

/* ---------------------------------------------------------------- database */

struct db {
	const char *conninfo;
	struct store *s;
	bool tried;
	char err[512];
};

static struct store *db_get(struct db *d)
{
	if (!d->tried) {
		d->tried = true;
		d->s = store_open(d->conninfo, "airlock-hook", d->err, sizeof(d->err));
	}
	return d->s;
}

/* ---------------------------------------------------------------- Bash */

static const char run_hint[] =
    "use mcp__airlock__run (or SELECT airlock.run(...)) with the target's slug";

static void deny_managed(struct answer *a, const struct reach *r, const struct dest_match *m)
{
	if (r->kind == REACH_NAMED) /* inline code, a computed program or command */
		set(a, DEC_DENY, "managed_destination",
		    "airlock hook: %s in this command names %s, which reaches %s, a machine "
		    "airlock manages: denied, because airlock cannot tell what it does there. "
		    "Use mcp__airlock__run with target %s instead; it is classified, gated, "
		    "checkpointed and recorded there. Do not look for another way around.",
		    r->program, r->dest ? r->dest : "?", m->slug[0] ? m->slug : m->label,
		    m->slug[0] ? m->slug : "the target's slug");
	else if (m->slug[0])
		set(a, DEC_DENY, "managed_destination",
		    "airlock hook: %s to %s reaches %s, a machine airlock manages, outside "
		    "airlock: denied. Use mcp__airlock__run with target %s instead (or SELECT "
		    "airlock.run('%s', '<command>')); it is classified, gated, checkpointed and "
		    "recorded there. Do not look for another way around.",
		    r->program, r->dest ? r->dest : "?", m->slug, m->slug, m->slug);
	else
		set(a, DEC_DENY, "managed_destination",
		    "airlock hook: %s to %s reaches %s, which airlock manages, outside airlock: "
		    "denied. Changes there go through airlock (mcp__airlock__run with the "
		    "target's slug; the Zerto guard is airlock's own step). Do not look for "
		    "another way around.",
		    r->program, r->dest ? r->dest : "?", m->label[0] ? m->label : m->candidate);
}

static void decide_command(const char *command, struct db *db, struct answer *a, cJSON *detail);

static void decide_bash(const struct event *ev, struct db *db, struct answer *a, cJSON *detail)
{
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(ev->input, "command");

	if (!cJSON_IsString(cmd)) {
		set(a, DEC_DENY, "malformed_event",
		    "airlock hook: Bash event without tool_input.command: denied (fail closed).");
		return;
	}
	{
		/* the history keeps the first 8 KiB (hook_event takes 64 KiB of detail) */
		size_t n = strlen(cmd->valuestring);
		char *head = xstrndup(cmd->valuestring, n > 8192 ? 8192 : n);

		cJSON_AddStringToObject(detail, "command", head);
		if (n > 8192)
			cJSON_AddNumberToObject(detail, "command_bytes", (double)n);
		free(head);
	}
	decide_command(cmd->valuestring, db, a, detail);
}

/* WebFetch reaches a URL from this host too: a managed machine's API (8006,
 * the ZVM) is denied like curl to it; any other URL is the client's
 * ordinary business (no decision). */
static void decide_webfetch(const struct event *ev, struct db *db, struct answer *a, cJSON *detail)
{
	const cJSON *url = cJSON_GetObjectItemCaseSensitive(ev->input, "url");
	char *q, *cmd;

	if (!cJSON_IsString(url)) {
		set(a, DEC_DENY, "malformed_event",
		    "airlock hook: WebFetch event without tool_input.url: denied (fail closed).");
		return;
	}
	cJSON_AddStringToObject(detail, "url", url->valuestring);
	q = shellquote(url->valuestring);
	cmd = xasprintf("WebFetch -- %s", q); /* reach.c reads it as an HTTP client */
	decide_command(cmd, db, a, detail);
	if (a->d == DEC_ASK) {
		a->d = DEC_NONE;
		a->reason[0] = '\0';
		snprintf(a->why, sizeof(a->why), "unmanaged_url");
	}
	free(cmd);
	free(q);
}

/* Code nobody can read may go wherever the environment it inherits says:
 * the host-like values of this process's environment (the one the command
 * starts with) are checked too.  Names that hold paths, terminal and locale
 * settings, and airlock's own connection are not looked at. */
static void environment_names(struct reach_list *rl)
{
	extern char **environ;
	static const char *const skip[] = {"PATH",   "PWD",   "OLDPWD",    "HOME", "SHELL",
	                                   "TERM",   "LANG",  "SHLVL",     "MAIL", "DISPLAY",
	                                   "EDITOR", "PAGER", "LS_COLORS", "_",    NULL};
	static const char *const skip_prefix[] = {"LC_",  "XDG_",  "PG",    "AIRLOCK_", "PS",
	                                          "HIST", "COLOR", "TERM_", "CLAUDE",   NULL};
	int looked = 0;

	for (char **e = environ; e && *e && looked < 16; e++) {
		const char *eq = strchr(*e, '='), *v;
		size_t nl, vl;
		bool skipped = false;

		if (eq == NULL)
			continue;
		nl = (size_t)(eq - *e);
		v = eq + 1;
		vl = strlen(v);
		for (size_t i = 0; skip[i] && !skipped; i++)
			skipped = strlen(skip[i]) == nl && strncmp(*e, skip[i], nl) == 0;
		for (size_t i = 0; skip_prefix[i] && !skipped; i++)
			skipped = strncmp(*e, skip_prefix[i], strlen(skip_prefix[i])) == 0;
		if (skipped || (nl >= 4 && strncmp(eq - 4, "PATH", 4) == 0) || vl == 0 || vl > 512)
			continue;
		/* a value that is a path is no host */
		if (memchr(v, '/', vl) != NULL && strstr(v, "://") == NULL)
			continue;
		if (strpbrk(v, ".:@") == NULL)
			continue; /* a bare word: a setting, not an address */
		reach_add_named_text(rl, "the environment", v, vl);
		looked++;
	}
}

static void decide_command(const char *command, struct db *db, struct answer *a, cJSON *detail)
{
	struct reach_list rl = {0};
	struct dest_set ds = {0};
	struct policy *p = NULL;
	struct classifier *c = NULL;
	char err[256];
	const struct reach *ask = NULL;

	p = policy_parse(reach_policy_yaml, strlen(reach_policy_yaml), "airlock hook", err,
	                 sizeof(err));
	c = p ? classifier_new(p, err, sizeof(err)) : NULL;
	if (c == NULL) {
		set(a, DEC_DENY, "internal_error", "airlock hook: internal error (%s): denied.",
		    err);
		goto out;
	}
	if (reach_scan(c, command, strlen(command), &rl) < 0) {
		set(a, DEC_DENY, "unreadable",
		    "airlock hook: %s: denied, because a command airlock cannot read may reach a "
		    "managed machine. For commands on managed machines, %s.",
		    rl.err, run_hint);
		goto out;
	}
	if (rl.overflow) {
		set(a, DEC_DENY, "too_large",
		    "airlock hook: the command has more network parts than airlock checks (%d): "
		    "denied. Split it, or %s.",
		    REACH_MAX, run_hint);
		goto out;
	}
	if (reach_any_opaque(&rl))
		environment_names(&rl);
	if (rl.n == 0)
		goto out; /* nothing reaches another machine: no decision */
	for (size_t i = 0; i < rl.n; i++) {
		const struct reach *r = &rl.v[i];

		if (r->kind == REACH_LOCAL_PVE) {
			set(a, DEC_DENY, "local_pve",
			    "airlock hook: %s acts on Proxmox guests directly, outside airlock: "
			    "denied. Instead, %s (proxmox-host:<node> for the node itself, "
			    "vm:<name> or "
			    "lxc:<name> for a guest; get_health_summary lists them).",
			    r->program, run_hint);
			goto out;
		}
		if (r->kind == REACH_COMPUTED) {
			set(a, DEC_DENY, "computed_destination",
			    "airlock hook: %s connects to a destination known only at run time "
			    "(%s): denied, because airlock cannot tell it is not a managed "
			    "machine. Spell the destination out, or %s.",
			    r->program, r->dest ? r->dest : "?", run_hint);
			goto out;
		}
	}
	if (dest_resolve(&rl, &ds) < 0 || db_get(db) == NULL ||
	    dest_match(&ds, db->s, err, sizeof(err)) < 0) {
		if (db->s != NULL && sqlstate_is(store_sqlstate(db->s), SQLSTATE_FLOOD_LIMIT)) {
			set(a, DEC_DENY, "over_limit",
			    "airlock hook: airlock's database checks no more destinations for you "
			    "now "
			    "(%s): denied. Wait a minute or split the command; for commands on "
			    "managed machines, %s.",
			    err, run_hint);
			goto out;
		}
		set(a, DEC_DENY, "db_unreachable",
		    "airlock hook: cannot check the destinations with airlock's database (%s): "
		    "denied (fail closed). For managed machines, %s.",
		    db->s == NULL ? db->err : err, run_hint);
		goto out;
	}
	{
		/* what the history keeps of them: at most 32, each shortened */
		cJSON *dl = cJSON_AddArrayToObject(detail, "destinations");
		int kept = 0;

		for (size_t i = 0; i < rl.n && kept < 32; i++)
			if (rl.v[i].dest) {
				char *d = xstrndup(rl.v[i].dest, 128);
				cJSON_AddItemToArray(dl, cJSON_CreateString(d));
				free(d);
				kept++;
			}
	}
	for (size_t i = 0; i < rl.n; i++) {
		const struct reach *r = &rl.v[i];
		const struct dest_match *m = dest_managed(&ds, i);

		if (m != NULL) {
			deny_managed(a, r, m);
			goto out;
		}
		if (r->kind == REACH_OPAQUE && (ask == NULL || ask->kind != REACH_OPAQUE))
			ask = r; /* the widest question comes first */
		else if (ask == NULL && (r->kind == REACH_HIDDEN ||
		                         (r->kind == REACH_DEST && !dest_allowed(&ds, i))))
			ask = r;
	}
	if (ask == NULL && rl.named_overflow)
		set(a, DEC_ASK, "unchecked_words",
		    "airlock hook: the command's code names more words than airlock checks (%d); "
		    "one of the rest may be a machine airlock manages. Allow it only if none is.",
		    REACH_NAMED_MAX);
	else if (ask != NULL && ask->kind == REACH_OPAQUE)
		set(a, DEC_ASK, "unreadable_code",
		    "airlock hook: %s. airlock cannot read what it does, and it can reach any "
		    "machine this host can reach, the ones airlock manages included. Allow it only "
		    "if it reaches none of them; for commands on managed machines, %s.",
		    ask->why ? ask->why : ask->program, run_hint);
	else if (ask != NULL && ask->kind == REACH_HIDDEN)
		set(a, DEC_ASK, "hidden_destination",
		    "airlock hook: %s connects to %s, which airlock cannot see; it may be "
		    "a "
		    "machine airlock manages. Allow it only if none of them is.",
		    ask->program, ask->dest ? ask->dest : "hosts it reads elsewhere");
	else if (ask != NULL)
		set(a, DEC_ASK, "unknown_destination",
		    "airlock hook: %s connects to %s, which is neither a machine airlock "
		    "manages nor on the operator's allowlist. Allow it only if it is not a "
		    "way around airlock.",
		    ask->program, ask->dest);
out:
	dest_set_clear(&ds);
	reach_list_clear(&rl);
	classifier_free(c);
	policy_free(p);
}

/* ---------------------------------------------------------------- MCP tools */

/* The VM a tool call is about, from the catalog's vm_arg or usual names. */
static const char *tool_vm(const cJSON *input, const char *vm_arg, char *buf, size_t len)
{
	static const char *const names[] = {"vm",     "vmid",     "vm_name", "vmname",
	                                    "host",   "hostname", "target",  "node",
	                                    "server", "name",     NULL};
	const cJSON *x = NULL;

	if (vm_arg != NULL && vm_arg[0])
		x = cJSON_GetObjectItemCaseSensitive(input, vm_arg);
	for (size_t i = 0; x == NULL && names[i]; i++)
		x = cJSON_GetObjectItemCaseSensitive(input, names[i]);
	if (cJSON_IsString(x) && x->valuestring[0]) {
		snprintf(buf, len, "%s", x->valuestring);
		return buf;
	}
	if (cJSON_IsNumber(x)) {
		snprintf(buf, len, "%.0f", x->valuedouble);
		return buf;
	}
	return NULL;
}

/* The rewind points of a finished guard, for the model: "checkpoint 186 on
 * VPG CMH-AWS-1 (tag ...)". */
static void describe_points(const cJSON *points, char *out, size_t len)
{
	const cJSON *p;
	size_t used = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(p, points)
	{
		const cJSON *cp = cJSON_GetObjectItemCaseSensitive(p, "checkpoint_id");
		const cJSON *vpg = cJSON_GetObjectItemCaseSensitive(p, "vpg");
		const cJSON *tag = cJSON_GetObjectItemCaseSensitive(p, "tag");
		int n;

		if (vpg == NULL)
			vpg = cJSON_GetObjectItemCaseSensitive(p, "vpg_name");
		n = snprintf(out + used, len - used, "%scheckpoint %s on VPG %s (tag \"%s\")",
		             used ? "; " : "", cJSON_IsString(cp) ? cp->valuestring : "?",
		             cJSON_IsString(vpg) ? vpg->valuestring : "?",
		             cJSON_IsString(tag) ? tag->valuestring : "?");
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

/* A catalog "mutating" tool: ask airlockd for a tagged checkpoint of the VM
 * first (airlock.guard), wait for it within the budget, then allow naming
 * the checkpoint, or deny with the guard's words. */
static void guard_first(const struct event *ev, struct db *db, const char *server, const char *tool,
                        const char *vm, long deadline_ms, struct answer *a)
{
	char what[400], idbuf[32];
	const char *params[4];
	struct store_res *res = NULL;
	cJSON *row = NULL;

	if (vm == NULL) {
		set(a, DEC_ASK, "mutating_no_vm",
		    "%s/%s is known to change a guest, but its arguments name no VM, so airlock "
		    "cannot insert a Zerto tagged checkpoint first. Allow it only if a rewind "
		    "point is not needed.",
		    server, tool);
		return;
	}
	snprintf(what, sizeof(what), "%s/%s", server, tool);
	params[0] = vm;
	params[1] = what;
	params[2] = ev->session[0] ? ev->session : NULL;
	params[3] = NULL;
	res = store_exec(db->s, "SELECT airlock.guard($1, $2, $3, $4)", 4, params);
	if (res == NULL) {
		if (sqlstate_is(store_sqlstate(db->s), SQLSTATE_OUT_OF_SCOPE) ||
		    sqlstate_is(store_sqlstate(db->s), SQLSTATE_FLOOD_LIMIT))
			set(a, DEC_DENY, "guard_refused",
			    "airlock hook: no checkpoint before %s, so it is denied: %s", what,
			    store_errmsg(db->s));
		else if (sqlstate_is(store_sqlstate(db->s), SQLSTATE_UNKNOWN_ENTITY))
			set(a, DEC_ASK, "mutating_unknown_vm",
			    "%s is known to change %s, which airlock cannot checkpoint (%s). Allow "
			    "it only if a rewind point is not needed.",
			    what, vm, store_errmsg(db->s));
		else
			set(a, DEC_DENY, "guard_failed",
			    "airlock hook: could not ask for a checkpoint before %s (%s): denied "
			    "(fail closed).",
			    what, store_errmsg(db->s));
		return;
	}
	snprintf(idbuf, sizeof(idbuf), "%s", store_get(res, 0, 0));
	store_clear(res);
	for (;;) {
		const cJSON *st;
		enum exec_state state;

		cJSON_Delete(row);
		row = NULL;
		params[0] = idbuf;
		res =
		    store_exec(db->s, "SELECT airlock.get_execution($1::bigint)::text", 1, params);
		if (res == NULL || store_nrows(res) != 1 ||
		    (row = cJSON_Parse(store_get(res, 0, 0))) == NULL) {
			set(a, DEC_DENY, "guard_failed",
			    "airlock hook: lost track of checkpoint request %s (%s): denied (fail "
			    "closed).",
			    idbuf, db->s ? store_errmsg(db->s) : "no database");
			break;
		}
		store_clear(res);
		res = NULL;
		st = cJSON_GetObjectItemCaseSensitive(row, "state");
		if (!cJSON_IsString(st) || exec_state_parse(st->valuestring, &state) < 0) {
			set(a, DEC_DENY, "guard_failed",
			    "airlock hook: checkpoint request %s is in a state this hook does not "
			    "know: denied (fail closed).",
			    idbuf);
			break;
		}
		if (state == EXEC_SUCCEEDED) {
			const cJSON *tg = cJSON_GetObjectItemCaseSensitive(row, "target");

			describe_points(cJSON_GetObjectItemCaseSensitive(row, "rewind_points"),
			                a->context, sizeof(a->context));
			set(a, DEC_ALLOW, "guarded",
			    "airlock inserted a Zerto tagged checkpoint of %s before %s (request "
			    "%s).",
			    cJSON_IsString(tg) ? tg->valuestring : vm, what, idbuf);
			snprintf(a->context + strlen(a->context),
			         sizeof(a->context) - strlen(a->context),
			         ". airlock request %s recorded it; to undo this change, ask your "
			         "operator to recover from that checkpoint.",
			         idbuf);
			break;
		}
		if (exec_state_is_final(state)) {
			const cJSON *err = cJSON_GetObjectItemCaseSensitive(row, "error");

			set(a, DEC_DENY, "guard_refused",
			    "airlock hook: no checkpoint before %s, so it is denied: %s", what,
			    cJSON_IsString(err) ? err->valuestring : st->valuestring);
			break;
		}
		if (deadline_now_ms() >= deadline_ms) {
			params[0] = idbuf;
			store_clear(
			    store_exec(db->s, "SELECT airlock.cancel($1::bigint)", 1, params));
			set(a, DEC_DENY, "guard_timeout",
			    "airlock hook: the checkpoint before %s (request %s) was not confirmed "
			    "within the hook's budget: denied. Try again later or ask your "
			    "operator.",
			    what, idbuf);
			break;
		}
		usleep(GUARD_POLL_MS * 1000);
	}
	store_clear(res);
	cJSON_Delete(row);
}

static void decide_mcp(const struct event *ev, const char *self, struct db *db, long deadline_ms,
                       struct answer *a)
{
	const char *s = ev->tool + 5, *sep = strstr(s, "__");
	char server[128], tool[256], vmbuf[128];
	const char *vm, *params[3];
	struct store_res *res = NULL;
	cJSON *ans = NULL;
	const cJSON *verdict, *x;

	if (sep == NULL || sep == s || sep[2] == '\0' || (size_t)(sep - s) >= sizeof(server) ||
	    strlen(sep + 2) >= sizeof(tool)) {
		set(a, DEC_DENY, "malformed_event",
		    "airlock hook: tool name %.200s is not mcp__<server>__<tool>: denied (fail "
		    "closed).",
		    ev->tool);
		return;
	}
	memcpy(server, s, (size_t)(sep - s));
	server[sep - s] = '\0';
	snprintf(tool, sizeof(tool), "%s", sep + 2);
	{
		/* airlock's own tools are exactly mcp__<self>__<tool> for the tools
		 * airlock-mcp has; any other name under that server (another server
		 * that took airlock's name, or mcp__airlock__x__y) is not airlock's */
		size_t sl = strlen(self);

		if (strncmp(s, self, sl) == 0 && strncmp(s + sl, "__", 2) == 0) {
			if (mcp_tools_exists(s + sl + 2)) {
				set(a, DEC_ALLOW, "airlock_tool",
				    "airlock's own tool: it goes through airlock's gate and "
				    "history.");
				return;
			}
			set(a, DEC_DENY, "not_airlock_tool",
			    "airlock hook: %.200s names the MCP server %s, but %.100s is not one "
			    "of "
			    "airlock's tools: denied. airlock's tools are run, get_execution, "
			    "list_executions, cancel_execution, update_entity_attributes, "
			    "create_relationship, get_relations, get_health_summary, list_checks, "
			    "check_tool and recover_file.",
			    ev->tool, self, s + sl + 2);
			return;
		}
	}
	vm = tool_vm(ev->input, NULL, vmbuf, sizeof(vmbuf));
	params[0] = server;
	params[1] = tool;
	params[2] = vm;
	if (db_get(db) == NULL ||
	    (res = store_exec(db->s, "SELECT airlock.check_tool($1, $2, $3)::text", 3, params)) ==
	        NULL ||
	    store_nrows(res) != 1 || (ans = cJSON_Parse(store_get(res, 0, 0))) == NULL) {
		set(a, DEC_DENY, "db_unreachable",
		    "airlock hook: cannot ask airlock's catalog about %s/%s (%s): denied (fail "
		    "closed).",
		    server, tool, db->s == NULL ? db->err : store_errmsg(db->s));
		goto out;
	}
	verdict = cJSON_GetObjectItemCaseSensitive(ans, "verdict");
	x = cJSON_GetObjectItemCaseSensitive(ans, "vm_arg");
	if (cJSON_IsString(x))
		vm = tool_vm(ev->input, x->valuestring, vmbuf, sizeof(vmbuf));
	if (!cJSON_IsString(verdict)) {
		set(a, DEC_DENY, "internal_error",
		    "airlock hook: check_tool gave no verdict for %s/%s: denied.", server, tool);
	} else if (strcmp(verdict->valuestring, "read_only") == 0) {
		a->d = DEC_NONE;
		snprintf(a->why, sizeof(a->why), "read_only_tool");
	} else if (strcmp(verdict->valuestring, "exec") == 0) {
		set(a, DEC_DENY, "exec_tool",
		    "airlock hook: %s/%s runs commands on %s outside airlock: denied. Send the "
		    "command through mcp__airlock__run with the target's slug instead; it is "
		    "classified, gated, checkpointed and recorded there.",
		    server, tool, vm ? vm : "a machine");
	} else if (strcmp(verdict->valuestring, "mutating") == 0) {
		guard_first(ev, db, server, tool, vm, deadline_ms, a);
	} else {
		x = cJSON_GetObjectItemCaseSensitive(ans, "question");
		if (cJSON_IsString(x))
			set(a, DEC_ASK, "unknown_tool", "%s", x->valuestring);
		else
			set(a, DEC_ASK, "unknown_tool",
			    "%s/%s is not a known read-only command. It may change %s. Insert a "
			    "Zerto tagged checkpoint first so this is reversible?",
			    server, tool, vm ? vm : "the guest");
	}
out:
	cJSON_Delete(ans);
	store_clear(res);
}

/* ---------------------------------------------------------------- record */

/* What a hook event may hold (the gate's report_bytes is 16 KiB by
 * default): the command's head is cut further while the record is larger. */
#define RECORD_MAX 15000

static void record(const struct event *ev, struct db *db, const struct answer *a, cJSON *detail,
                   bool *recorded)
{
	char *dj, host[256];
	const char *params[4];
	struct store_res *res;
	const cJSON *cmd;

	*recorded = false;
	if (a->d != DEC_DENY && a->d != DEC_ASK)
		return;
	if (ev->session[0])
		cJSON_AddStringToObject(detail, "session_id", ev->session);
	if (ev->mode[0])
		cJSON_AddStringToObject(detail, "permission_mode", ev->mode);
	cJSON_AddStringToObject(detail, "why", a->why);
	/* where the agent says it runs; the database adds the address it saw */
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		cJSON_AddStringToObject(detail, "host", host);
	}
	dj = cJSON_PrintUnformatted(detail);
	while (strlen(dj) + strlen(a->reason) > RECORD_MAX &&
	       cJSON_IsString(cmd = cJSON_GetObjectItemCaseSensitive(detail, "command")) &&
	       strlen(cmd->valuestring) > 64) {
		char *head = xstrndup(cmd->valuestring, strlen(cmd->valuestring) / 2);

		cJSON_ReplaceItemInObjectCaseSensitive(detail, "command", cJSON_CreateString(head));
		free(head);
		free(dj);
		dj = cJSON_PrintUnformatted(detail);
	}
	params[0] = ev->tool;
	params[1] = decision_name(a->d);
	params[2] = a->reason;
	params[3] = dj;
	if (db_get(db) != NULL) {
		res = store_exec(db->s, "SELECT airlock.hook_event($1, $2, $3, $4::jsonb)", 4,
		                 params);
		*recorded = res != NULL;
		store_clear(res);
	}
	free(dj);
}

static void log_line(const struct hook_opts *o, const struct event *ev, const struct answer *a,
                     long ms, bool recorded)
{
	char path[1024], tq[300], rq[700], ts[32];
	const char *p = o->log_path;
	FILE *f;

	if (p == NULL && (p = getenv("AIRLOCK_HOOK_LOG")) == NULL) {
		const char *home = getenv("HOME");

		if (home == NULL)
			return;
		snprintf(path, sizeof(path), "%s/.airlock-hook.log", home);
		p = path;
	}
	if (strcmp(p, "-") == 0)
		return;
	f = fopen(p, "a");
	if (f == NULL)
		return;
	fprintf(f,
	        "ts=%s level=info evt=hook.decision session=%s tool=%s decision=%s why=%s ms=%ld "
	        "recorded=%d reason=%s\n",
	        log_timestamp(ts, sizeof(ts)), ev && ev->session[0] ? ev->session : "-",
	        log_quote(ev && ev->tool ? ev->tool : "-", tq, sizeof(tq)), decision_name(a->d),
	        a->why[0] ? a->why : "-", ms, recorded ? 1 : 0,
	        log_quote(a->reason[0] ? a->reason : "-", rq, sizeof(rq)));
	fclose(f);
}

int hook_run(const struct hook_opts *o)
{
	int64_t t0 = deadline_now_ms();
	struct answer a = {.d = DEC_NONE};
	struct event ev = {0};
	struct db db = {.conninfo = o->db};
	cJSON *detail = cJSON_CreateObject();
	size_t len = 0;
	bool toolong = false, recorded = false, parsed = false;
	char *buf;
	int rc;

	arm_failsafe(o->budget_ms);
	buf = read_stdin(&len, &toolong);
	if (buf == NULL || toolong) {
		set(&a, DEC_DENY, "malformed_event", "airlock hook: %s: denied (fail closed).",
		    buf == NULL ? "cannot read the event on stdin" : "the event is over 4 MiB");
	} else if (parse_event(buf, len, &ev, &a) == 0) {
		parsed = true;
		if (strcmp(ev.tool, "Bash") == 0)
			decide_bash(&ev, &db, &a, detail);
		else if (strcmp(ev.tool, "WebFetch") == 0)
			decide_webfetch(&ev, &db, &a, detail);
		else if (strncmp(ev.tool, "mcp__", 5) == 0)
			decide_mcp(&ev, o->self, &db, t0 + o->budget_ms - GUARD_MARGIN_MS, &a);
		else
			snprintf(a.why, sizeof(a.why), "not_gated");
	}
	if (parsed)
		record(&ev, &db, &a, detail, &recorded);
	rc = emit(&a);
	log_line(o, parsed ? &ev : NULL, &a, (long)(deadline_now_ms() - t0), recorded);
	store_close(db.s);
	cJSON_Delete(detail);
	cJSON_Delete(ev.root);
	free(buf);
	return rc;
}
