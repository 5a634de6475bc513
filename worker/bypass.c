/* bypass.c -- evidence of side doors on a node: logins and changes airlock
 * did not make. */
#include "worker/bypass.h"

#include "lib/log.h"
#include "lib/xalloc.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A change within this many seconds of an airlock execution on the host
 * that could have made it counts as that execution's (dpkg's log has
 * one-second resolution; clocks are NTP-close). */
#define EXPLAIN_SLACK_S 2
/* Evidence items written into a check's detail; the rest are counted. */
#define DETAIL_ITEMS 5
#define MAX_ITEMS    2000

char *bypass_script(time_t since)
{
	return xasprintf(
	    "echo \"N $(date +%%s)\"\n"
	    "echo \"Z $(date +%%z)\"\n"
	    "if command -v journalctl >/dev/null 2>&1; then\n"
	    "  journalctl -q --no-pager -o short-unix -S @%lld _COMM=sshd 2>/dev/null |"
	    " grep -a 'Accepted ' | tail -n 500 | sed 's/^/J /'\n"
	    "  journalctl -q --no-pager -o short-unix -S @%lld _PID=1 2>/dev/null |"
	    " grep -aE ': (Started|Stopped) ' | tail -n 300 | sed 's/^/U /'\n"
	    "fi\n"
	    "if [ -r /var/log/auth.log ]; then grep -a 'Accepted ' /var/log/auth.log |"
	    " tail -n 500 | sed 's/^/A /'; fi\n"
	    "if [ -r /var/log/dpkg.log ]; then grep -aE"
	    " '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} (install|upgrade|remove|purge) '"
	    " /var/log/dpkg.log | tail -n 500 | sed 's/^/P /'; fi\n"
	    "exit 0\n",
	    (long long)since, (long long)since);
}

/* ---------------------------------------------------------------- parsing */

static void copy_word(const char *s, char *out, size_t outlen)
{
	size_t n = strcspn(s, " \t\r\n");

	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* "... Accepted publickey for root from 10.0.0.9 port 5555 ssh2: ED25519 SHA256:x" */
static bool parse_accepted(const char *line, struct bypass_login *l, int *port)
    __attribute__((nonnull));
static bool parse_accepted(const char *line, struct bypass_login *l, int *port)
{
	const char *a = strstr(line, "Accepted "), *p;
	char method[40];

	if (a == NULL)
		return false;
	copy_word(a + 9, method, sizeof(method));
	if ((p = strstr(a, " for ")) == NULL)
		return false;
	copy_word(p + 5, l->user, sizeof(l->user));
	if ((p = strstr(a, " from ")) == NULL)
		return false;
	copy_word(p + 6, l->from, sizeof(l->from));
	*port = (p = strstr(a, " port ")) ? atoi(p + 6) : 0;
	if ((p = strstr(a, "ssh2: ")) != NULL) {
		char type[32], fp[96];

		copy_word(p + 6, type, sizeof(type));
		p = strchr(p + 6, ' ');
		copy_word(p ? p + 1 : "", fp, sizeof(fp));
		snprintf(l->key, sizeof(l->key), "%s %s", type, fp);
	} else {
		snprintf(l->key, sizeof(l->key), "%s", method); /* password, keyboard-interactive */
	}
	return true;
}

/* 2026-12-01T11:00:00[.123][+00:00|Z] at the start of s; 0 when not. */
static time_t iso_time(const char *s, long node_off)
{
	struct tm tm = {0};
	const char *e = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	long off = node_off;

	if (e == NULL)
		return 0;
	while (*e == '.' || isdigit((unsigned char)*e))
		e++;
	if (*e == 'Z') {
		off = 0;
	} else if (*e == '+' || *e == '-') {
		int h = 0, m = 0;

		if (sscanf(e + 1, "%2d:%2d", &h, &m) == 2 || sscanf(e + 1, "%2d%2d", &h, &m) == 2)
			off = (*e == '-' ? -1 : 1) * (h * 3600L + m * 60L);
	}
	return timegm(&tm) - off;
}

/* "Dec  1 11:00:00 ..." (syslog without a year): the latest such time not
 * after the node's now. */
static time_t syslog_time(const char *s, time_t node_now, long node_off)
{
	struct tm tm = {0}, nowtm;
	time_t local_now = node_now + node_off, t;

	if (strptime(s, "%b %e %H:%M:%S", &tm) == NULL)
		return 0;
	gmtime_r(&local_now, &nowtm);
	tm.tm_year = nowtm.tm_year;
	t = timegm(&tm);
	if (t > local_now + 86400) {
		tm.tm_year--;
		t = timegm(&tm);
	}
	return t - node_off;
}

static long parse_offset(const char *s)
{
	int sign = *s == '-' ? -1 : 1, hh = 0, mm = 0;

	if (*s == '+' || *s == '-')
		s++;
	if (sscanf(s, "%2d%2d", &hh, &mm) != 2)
		return 0;
	return sign * (hh * 3600L + mm * 60L);
}

/* Units that start and stop by themselves all day long (sessions, timers'
 * jobs): they are not evidence of anybody's change. */
static bool routine_unit(const char *what)
{
	static const char *const noise[] = {"session-",
	                                    "user@",
	                                    "user-runtime-dir@",
	                                    "apt-daily",
	                                    "logrotate",
	                                    "man-db",
	                                    "e2scrub",
	                                    "fstrim",
	                                    "systemd-tmpfiles",
	                                    "dpkg-db-backup",
	                                    "sysstat",
	                                    "phpsessionclean",
	                                    "pve-daily-update",
	                                    "pveupdate",
	                                    "proxmox-backup-daily",
	                                    "motd-news",
	                                    "anacron",
	                                    "getty",
	                                    "ssh@",
	                                    "sshd@",
	                                    "run-",
	                                    "Session ",
	                                    "User ",
	                                    "Cleanup of",
	                                    "Daily ",
	                                    "Rotate ",
	                                    "Discard ",
	                                    "Message of",
	                                    NULL};
	const char *u = strchr(what, ' ');

	u = u ? u + 1 : what;
	for (size_t i = 0; noise[i]; i++)
		if (strncmp(u, noise[i], strlen(noise[i])) == 0)
			return true;
	return false;
}

void bypass_parse(const char *out, size_t len, struct bypass_report *r)
{
	size_t cap_l = 0, cap_c = 0;
	long off = 0;
	char *buf = xstrndup(out, len);

	memset(r, 0, sizeof(*r));
	/* first pass: the header lines (S, N, Z) come first, but read them anywhere */
	for (char *line = buf, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (line[0] == 'S' && line[1] == ' ') {
			copy_word(line + 2, r->self_addr, sizeof(r->self_addr));
			{
				const char *sp = strchr(line + 2, ' ');
				r->self_port = sp ? atoi(sp + 1) : 0;
			}
		} else if (line[0] == 'N' && line[1] == ' ') {
			r->node_now = (time_t)atoll(line + 2);
		} else if (line[0] == 'Z' && line[1] == ' ') {
			off = parse_offset(line + 2);
		}
	}
	free(buf);
	buf = xstrndup(out, len);
	if (r->node_now == 0)
		r->node_now = time(NULL);
	for (char *line = buf, *nl; line && *line; line = nl) {
		char kind = line[0];
		const char *body = line + 2;

		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (line[1] != ' ')
			continue;
		if ((kind == 'J' || kind == 'A') && r->nlogins < MAX_ITEMS) {
			struct bypass_login l = {0};

			if (!parse_accepted(body, &l, &l.port))
				continue;
			if (kind == 'J')
				l.at = (time_t)atoll(body);
			else if ((l.at = iso_time(body, off)) == 0)
				l.at = syslog_time(body, r->node_now, off);
			l.self = l.port != 0 && l.port == r->self_port &&
			         strcmp(l.from, r->self_addr) == 0;
			if (r->nlogins == cap_l) {
				cap_l = cap_l ? cap_l * 2 : 16;
				r->logins = xrealloc(r->logins, cap_l * sizeof(*r->logins));
			}
			r->logins[r->nlogins++] = l;
		} else if ((kind == 'P' || kind == 'U') && r->nchanges < MAX_ITEMS) {
			struct bypass_change c = {0};

			if (kind == 'P') {
				struct tm tm = {0};
				const char *e = strptime(body, "%Y-%m-%d %H:%M:%S", &tm);
				char op[16], pkg[120], ver[60] = "";

				if (e == NULL ||
				    sscanf(e, " %15s %119s %*s %59s", op, pkg, ver) < 2)
					continue;
				c.at = timegm(&tm) - off;
				snprintf(c.what, sizeof(c.what), "%s %s%s%s", op, pkg,
				         ver[0] ? " " : "", ver);
			} else {
				const char *colon = strstr(body, ": ");

				if (colon == NULL)
					continue;
				c.at = (time_t)atoll(body);
				snprintf(c.what, sizeof(c.what), "%s", colon + 2);
				if (routine_unit(c.what))
					continue;
			}
			if (r->nchanges == cap_c) {
				cap_c = cap_c ? cap_c * 2 : 16;
				r->changes = xrealloc(r->changes, cap_c * sizeof(*r->changes));
			}
			r->changes[r->nchanges++] = c;
		}
	}
	free(buf);
}

void bypass_report_clear(struct bypass_report *r)
{
	free(r->logins);
	free(r->changes);
	memset(r, 0, sizeof(*r));
}

/* ---------------------------------------------------------------- judging */

static void fmt_time(time_t t, char *out, size_t len)
{
	struct tm tm;

	if (t == 0) {
		snprintf(out, len, "time not logged");
		return;
	}
	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct window {
	long long from, to;
	char *command;
};

/* The host's airlock executions that ran since `since` (epoch seconds). */
static struct window *windows(struct store *db, const char *slug, time_t since, size_t *n, bool *ok)
{
	char s[32];
	struct store_res *res;
	struct window *w;

	snprintf(s, sizeof(s), "%lld", (long long)since);
	res = store_exec(
	    db, "SELECT started, finished, command FROM airlock.host_execution_windows($1, $2)", 2,
	    (const char *const[]){slug, s});
	*n = 0;
	*ok = res != NULL;
	if (res == NULL)
		return NULL;
	w = xcalloc((size_t)store_nrows(res) + 1, sizeof(*w));
	for (int i = 0; i < store_nrows(res); i++) {
		w[i].from = atoll(store_get(res, i, 0));
		w[i].to = atoll(store_get(res, i, 1));
		w[i].command = xstrdup(store_get(res, i, 2));
	}
	*n = (size_t)store_nrows(res);
	store_clear(res);
	return w;
}

static void windows_free(struct window *w, size_t n)
{
	for (size_t i = 0; w != NULL && i < n; i++)
		free(w[i].command);
	free(w);
}

/* The package or unit a change names: "install nfs-kernel-server:amd64 1.0"
 * -> "nfs-kernel-server"; "Started nginx.service - ..." -> "nginx". */
static void change_subject(const char *what, char *out, size_t len)
{
	const char *sp = strchr(what, ' ');
	size_t n;

	copy_word(sp ? sp + 1 : what, out, len);
	n = strcspn(out, ":");
	out[n] = '\0';
	if ((n = strlen(out)) > 8 && strcmp(out + n - 8, ".service") == 0)
		out[n - 8] = '\0';
}

/* Explained: an airlock execution on the host was running then, and its
 * command could have made the change (names the package or unit, or a tool
 * that changes packages or units). */
static bool explained(const struct window *w, size_t n, const struct bypass_change *c)
{
	static const char *const tools[] = {
	    "apt",    "dpkg",       "aptitude", "unattended-upgrade", "systemctl", "service",
	    "reboot", "pveupgrade", NULL};
	char subject[128];

	change_subject(c->what, subject, sizeof(subject));
	for (size_t i = 0; i < n; i++) {
		bool could = subject[0] && strstr(w[i].command, subject) != NULL;

		for (size_t k = 0; !could && tools[k]; k++)
			could = strstr(w[i].command, tools[k]) != NULL;
		if (could && c->at >= w[i].from - EXPLAIN_SLACK_S &&
		    c->at <= w[i].to + EXPLAIN_SLACK_S)
			return true;
	}
	return false;
}

static cJSON *check(const char *name, const char *status, const char *detail)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddStringToObject(c, "detail", detail);
	return c;
}

/* Posts a check that turned failing, or found new evidence, to the webhooks. */
static void alert(struct store *db, struct notifier *n, const char *slug, const char *name,
                  const char *detail)
{
	char lq[512];
	struct store_res *res;
	bool fresh = true;
	cJSON *m;
	char text[1200];

	if (n == NULL)
		return;
	res = store_exec(db,
	                 "SELECT status = 'failing' AND detail IS NOT DISTINCT FROM $3 "
	                 "FROM airlock.checks WHERE entity = $1 AND name = $2",
	                 3, (const char *const[]){slug, name, detail});
	if (res != NULL && store_nrows(res) == 1 && store_get(res, 0, 0)[0] == 't')
		fresh = false;
	store_clear(res);
	if (!fresh)
		return;
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "event", name);
	cJSON_AddStringToObject(m, "entity", slug);
	cJSON_AddStringToObject(m, "detail", detail);
	snprintf(text, sizeof(text),
	         "airlock: %s on %s: %.900s -- nobody went through airlock for this; check "
	         "`airlock pending` and get_health_summary.",
	         strcmp(name, "access_outside_airlock") == 0 ? "a login outside airlock"
	                                                     : "a change outside airlock",
	         slug, detail);
	cJSON_AddStringToObject(m, "text", text);
	notifier_post(n, NULL, m);
	log_msg(LOG_WARN, "evt=probe.%s entity=%s", name, log_quote(slug, lq, sizeof(lq)));
}

static void judge_access(const struct bypass_report *r, time_t since, char *detail, size_t len,
                         const char **status)
{
	const struct bypass_login *self = NULL;
	size_t used = 0, count = 0;

	for (size_t i = 0; i < r->nlogins; i++)
		if (r->logins[i].self)
			self = &r->logins[i];
	if (self == NULL) {
		*status = "unknown";
		snprintf(detail, len,
		         "cannot tell airlockd's logins from others: this session's own login "
		         "(%s port %d) is not in the node's sshd log (journald or "
		         "/var/log/auth.log)",
		         r->self_addr[0] ? r->self_addr : "?", r->self_port);
		return;
	}
	detail[0] = '\0';
	for (size_t i = 0; i < r->nlogins; i++) {
		const struct bypass_login *l = &r->logins[i];
		char when[32];
		int k;

		if ((l->at != 0 && l->at < since) ||
		    (strcmp(l->key, self->key) == 0 && strcmp(l->from, self->from) == 0))
			continue;
		if (count++ >= DETAIL_ITEMS)
			continue;
		fmt_time(l->at, when, sizeof(when));
		k = snprintf(detail + used, len - used, "%s%s from %s with %s (%s)",
		             used ? "; " : "", l->user, l->from, l->key, when);
		if (k > 0 && (size_t)k < len - used)
			used += (size_t)k;
	}
	if (count == 0) {
		*status = "ok";
		snprintf(detail, len,
		         "every SSH login in the last %d h was airlockd's (%s from %s)",
		         BYPASS_LOOKBACK_S / 3600, self->key, self->from);
		return;
	}
	*status = "failing";
	if (count > DETAIL_ITEMS && used < len)
		snprintf(detail + used, len - used, "; and %zu more", count - DETAIL_ITEMS);
	{
		char head[256];
		size_t hl = (size_t)snprintf(
		    head, sizeof(head), "%zu SSH login(s) not by airlockd (%s from %s): ", count,
		    self->key, self->from);

		if (hl < len) {
			memmove(detail + hl, detail, strnlen(detail, len - hl - 1) + 1);
			memcpy(detail, head, hl);
			detail[len - 1] = '\0';
		}
	}
}

static void judge_changes(const struct bypass_report *r, const struct window *w, size_t nw,
                          time_t since, char *detail, size_t len, const char **status)
{
	size_t used = 0, count = 0;

	detail[0] = '\0';
	for (size_t i = 0; i < r->nchanges; i++) {
		const struct bypass_change *c = &r->changes[i];
		char when[32];
		int k;

		if (c->at < since || explained(w, nw, c))
			continue;
		if (count++ >= DETAIL_ITEMS)
			continue;
		fmt_time(c->at, when, sizeof(when));
		k = snprintf(detail + used, len - used, "%s%s at %s", used ? "; " : "", c->what,
		             when);
		if (k > 0 && (size_t)k < len - used)
			used += (size_t)k;
	}
	if (count == 0) {
		*status = "ok";
		snprintf(detail, len,
		         "every package and unit change in the last %d h ran inside an airlock "
		         "execution",
		         BYPASS_LOOKBACK_S / 3600);
		return;
	}
	*status = "failing";
	if (count > DETAIL_ITEMS && used < len)
		snprintf(detail + used, len - used, "; and %zu more", count - DETAIL_ITEMS);
	{
		char head[128];
		size_t hl = (size_t)snprintf(
		    head, sizeof(head), "%zu change(s) no airlock execution explains: ", count);

		if (hl < len) {
			memmove(detail + hl, detail, strnlen(detail, len - hl - 1) + 1);
			memcpy(detail, head, hl);
			detail[len - 1] = '\0';
		}
	}
}

void bypass_checks(struct store *db, struct transport *t, const struct transport_node *node,
                   const char *host_slug, struct notifier *n, cJSON *checks)
{
	time_t since = time(NULL) - BYPASS_LOOKBACK_S;
	char *script = bypass_script(since);
	/* The S line (this session's $SSH_CONNECTION) comes from the node's
	 * login shell: the script itself runs with the one shell's fixed
	 * environment (transport/shell.h). */
	struct transport_limits lim = {
	    .timeout_ms = BYPASS_TIMEOUT_MS, .output_cap = 1 << 20, .print_connection = true};
	struct transport_result res;
	struct bypass_report r;
	struct window *w = NULL;
	size_t nw = 0;
	bool wok = false;
	char access[2048], change[2048];
	const char *as, *cs;

	if (transport_exec(t, node, TARGET_PROXMOX_HOST, 0, script, &lim, &res) < 0 ||
	    res.status != TRANSPORT_EXITED) {
		snprintf(access, sizeof(access), "the node's logs could not be read: %s",
		         res.errmsg[0] ? res.errmsg : transport_status_name(res.status));
		cJSON_AddItemToArray(checks, check("access_outside_airlock", "unknown", access));
		cJSON_AddItemToArray(checks, check("change_outside_airlock", "unknown", access));
		goto out_res;
	}
	bypass_parse(res.out, res.out_len, &r);
	judge_access(&r, since, access, sizeof(access), &as);
	w = windows(db, host_slug, since, &nw, &wok);
	if (!wok) {
		cs = "unknown";
		snprintf(change, sizeof(change), "airlock's executions could not be read: %s",
		         store_errmsg(db));
	} else {
		judge_changes(&r, w, nw, since, change, sizeof(change), &cs);
	}
	if (strcmp(as, "failing") == 0)
		alert(db, n, host_slug, "access_outside_airlock", access);
	if (strcmp(cs, "failing") == 0)
		alert(db, n, host_slug, "change_outside_airlock", change);
	cJSON_AddItemToArray(checks, check("access_outside_airlock", as, access));
	cJSON_AddItemToArray(checks, check("change_outside_airlock", cs, change));
	windows_free(w, nw);
	bypass_report_clear(&r);
out_res:
	transport_result_free(&res);
	free(script);
}
