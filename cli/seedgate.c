/* seedgate.c -- seeds/gate.yaml checked into the document seed_gate() takes.
 * Every error names file, line and column; nothing is ingested unless the
 * whole file is right (the caller sends nothing on NULL). */
#include "cli/seedgate.h"

#include "classifier/classes.h"
#include "classifier/classifier.h"
#include "cli/seeddoor.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DURATION_S (30LL * 86400)

/* The classes an operator approves: config_mutation and destructive, in
 * that order (index 0 and 1 of the gate's tables). */
#define FIRST_GATED RISK_CONFIG_MUTATION

struct limit {
	const char *name;
	long long dflt, min, max;
};

static const struct limit limits[] = {
    {"requests_per_minute", 60, 1, 100000},       {"pending_per_agent", 100, 1, 100000},
    {"attribute_bytes", 65536, 256, 16777216},    {"attribute_keys", 256, 1, 10000},
    {"relationships_per_entity", 256, 1, 100000},
};

static void *fail(const char *path, const struct yt_node *n, const char *fmt, const char *a,
                  const char *b)
{
	fprintf(stderr, "airlock seed: %s:%d:%d: ", path, n ? n->line : 1, n ? n->col : 1);
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	return NULL;
}

static bool only_keys(const char *path, const struct yt_node *map, const char *const *keys)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct yt_node *k = map->items[2 * i];
		bool ok = false;
		for (const char *const *p = keys; *p; p++)
			ok = ok || strcmp(k->scalar, *p) == 0;
		if (!ok) {
			fail(path, k, "unknown key \"%s\"%s", k->scalar, "");
			return false;
		}
	}
	return true;
}

static const struct yt_node *scalar(const char *path, const struct yt_node *map, const char *key)
{
	const struct yt_node *v = yt_get(map, key);

	if (v != NULL && v->kind != YT_SCALAR)
		return fail(path, v, "\"%s\" must be a single value, not a %s", key,
		            yt_kind_name(v->kind));
	return v;
}

static const struct yt_node *mapping(const char *path, const struct yt_node *map, const char *key)
{
	const struct yt_node *v = yt_get(map, key);

	if (v != NULL && v->kind != YT_MAP)
		return fail(path, v, "\"%s\" must be a mapping, not a %s", key,
		            yt_kind_name(v->kind));
	return v;
}

/* An integer in [min, max]; -1 after reporting otherwise. */
static int integer(const char *path, const struct yt_node *v, const char *key, long long min,
                   long long max, long long *out)
{
	char *end;
	char range[64];

	errno = 0;
	long long x = strtoll(v->scalar, &end, 10);
	if (v->scalar[0] == '\0' || *end != '\0' || errno != 0 || x < min || x > max ||
	    !isdigit((unsigned char)v->scalar[0])) {
		snprintf(range, sizeof(range), "%lld..%lld", min, max);
		fail(path, v, "\"%s\" must be an integer in %s", key, range);
		return -1;
	}
	*out = x;
	return 0;
}

int seedgate_duration(const char *text, long long *seconds)
{
	const char *p = text;
	long long total = 0;

	if (*p == '\0')
		return -1;
	while (*p) {
		long long n = 0, unit;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p)) {
			n = n * 10 + (*p++ - '0');
			if (n > MAX_DURATION_S)
				return -1;
		}
		switch (*p++) {
		case 's':
			unit = 1;
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		default:
			return -1;
		}
		total += n * unit;
		if (total > MAX_DURATION_S)
			return -1;
	}
	if (total <= 0)
		return -1;
	*seconds = total;
	return 0;
}

void seedgate_format_duration(long long s, char *out, size_t outlen)
{
	static const struct {
		char unit;
		long long secs;
	} units[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < 4 && s > 0 && used < outlen; i++) {
		if (s < units[i].secs)
			continue;
		int w =
		    snprintf(out + used, outlen - used, "%lld%c", s / units[i].secs, units[i].unit);
		if (w < 0)
			break;
		used += (size_t)w;
		s %= units[i].secs;
	}
	if (out[0] == '\0')
		snprintf(out, outlen, "0s");
}

static int duration(const char *path, const struct yt_node *v, const char *key, long long *out)
{
	if (seedgate_duration(v->scalar, out) < 0) {
		fail(path, v,
		     "\"%s\" must be a duration such as 90s, 15m, 1h or 1h30m (at most %s)", key,
		     "30d");
		return -1;
	}
	return 0;
}

static int class_index(const char *name)
{
	enum risk_class c;

	if (risk_class_parse(name, &c) < 0 || c < FIRST_GATED)
		return -1;
	return (int)(c - FIRST_GATED);
}

struct class_gate {
	long long quorum, ttl_s, valid_s;
};

/* classes: {config_mutation: {quorum, ttl, approval_valid_for}, destructive: ...} */
static int check_classes(const char *path, const struct yt_node *doc, struct class_gate g[2])
{
	static const char *const keys[] = {"quorum", "ttl", "approval_valid_for", NULL};
	const struct yt_node *classes = mapping(path, doc, "classes"), *v;

	g[0] = (struct class_gate){SEEDGATE_QUORUM_CONFIG_MUTATION, SEEDGATE_TTL_S,
	                           SEEDGATE_APPROVAL_VALID_FOR_S};
	g[1] = (struct class_gate){SEEDGATE_QUORUM_DESTRUCTIVE, SEEDGATE_TTL_S,
	                           SEEDGATE_APPROVAL_VALID_FOR_S};
	if (yt_get(doc, "classes") && classes == NULL)
		return -1;
	for (size_t i = 0; classes && i < classes->n; i++) {
		const struct yt_node *k = classes->items[2 * i], *c = classes->items[2 * i + 1];
		int ci = class_index(k->scalar);
		if (ci < 0) {
			fail(path, k,
			     "class \"%s\" is not gated: only config_mutation and destructive wait "
			     "for approval%s",
			     k->scalar, "");
			return -1;
		}
		if (c->kind != YT_MAP) {
			fail(path, c, "class \"%s\" must be a mapping of %s", k->scalar,
			     "quorum, ttl, approval_valid_for");
			return -1;
		}
		if (!only_keys(path, c, keys))
			return -1;
		for (const char *const *key = keys; *key; key++)
			if (yt_get(c, *key) && scalar(path, c, *key) == NULL)
				return -1;
		if ((v = yt_get(c, "quorum")) &&
		    integer(path, v, "quorum", 1, 5, &g[ci].quorum) < 0)
			return -1;
		if ((v = yt_get(c, "ttl")) && duration(path, v, "ttl", &g[ci].ttl_s) < 0)
			return -1;
		if ((v = yt_get(c, "approval_valid_for")) &&
		    duration(path, v, "approval_valid_for", &g[ci].valid_s) < 0)
			return -1;
	}
	return 0;
}

/* A glob of the characters a slug or login name may hold, plus * and ?. */
static bool glob_ok(const char *s, const char *extra)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("*?._-", *s) == NULL &&
		    strchr(extra, *s) == NULL)
			return false;
	return true;
}

static cJSON *check_rule(const char *path, const struct yt_node *r, const struct class_gate g[2])
{
	static const char *const keys[] = {
	    "target", "agent", "class", "quorum", "ttl", "approval_valid_for", NULL};
	const struct yt_node *target, *agent, *cls, *v;
	long long x;
	int ci = -1;
	char have[32], want[32];
	cJSON *out;

	if (r->kind != YT_MAP)
		return fail(path, r, "each rule must be a mapping%s%s", "", "");
	if (!only_keys(path, r, keys))
		return NULL;
	for (const char *const *key = keys; *key; key++)
		if (yt_get(r, *key) && scalar(path, r, *key) == NULL)
			return NULL;
	target = yt_get(r, "target");
	agent = yt_get(r, "agent");
	cls = yt_get(r, "class");
	if (target == NULL && agent == NULL)
		return fail(path, r, "a rule needs \"target\" or \"agent\" (or both)%s%s", "", "");
	if (target && !glob_ok(target->scalar, ":"))
		return fail(path, target,
		            "target \"%s\" must be an entity slug or a glob of one, such as "
		            "proxmox-host:*%s",
		            target->scalar, "");
	if (agent && !glob_ok(agent->scalar, "@"))
		return fail(path, agent, "agent \"%s\" must be a login name or a glob of one%s",
		            agent->scalar, "");
	if (cls && (ci = class_index(cls->scalar)) < 0)
		return fail(path, cls, "class \"%s\" must be config_mutation or destructive%s",
		            cls->scalar, "");
	if (!yt_get(r, "quorum") && !yt_get(r, "ttl") && !yt_get(r, "approval_valid_for"))
		return fail(path, r,
		            "a rule needs \"quorum\", \"ttl\" or \"approval_valid_for\"%s%s", "",
		            "");
	out = cJSON_CreateObject();
	if (target)
		cJSON_AddStringToObject(out, "target", target->scalar);
	if (agent)
		cJSON_AddStringToObject(out, "agent", agent->scalar);
	if (cls)
		cJSON_AddStringToObject(out, "class", cls->scalar);
	/* Rules only make the gate stricter; one that could not is a mistake. */
	if ((v = yt_get(r, "quorum"))) {
		long long floor = ci >= 0 ? g[ci].quorum
		                          : (g[0].quorum < g[1].quorum ? g[0].quorum : g[1].quorum);
		if (integer(path, v, "quorum", 1, 5, &x) < 0)
			goto bad;
		if (x <= floor) {
			snprintf(have, sizeof(have), "%lld", x);
			snprintf(want, sizeof(want), "%lld", floor);
			fail(
			    path, v,
			    "quorum %s does not raise the class's quorum (%s): rules can only make "
			    "the gate stricter",
			    have, want);
			goto bad;
		}
		cJSON_AddNumberToObject(out, "quorum", (double)x);
	}
	static const char *const times[] = {"ttl", "approval_valid_for"};
	for (int t = 0; t < 2; t++) {
		if ((v = yt_get(r, times[t])) == NULL)
			continue;
		long long c0 = t == 0 ? g[0].ttl_s : g[0].valid_s,
		          c1 = t == 0 ? g[1].ttl_s : g[1].valid_s;
		long long ceil = ci == 0 ? c0 : ci == 1 ? c1 : (c0 > c1 ? c0 : c1);
		if (duration(path, v, times[t], &x) < 0)
			goto bad;
		if (x >= ceil) {
			seedgate_format_duration(ceil, want, sizeof(want));
			fail(path, v,
			     "%s does not shorten the class's %s: rules can only make the gate "
			     "stricter",
			     times[t], want);
			goto bad;
		}
		cJSON_AddNumberToObject(out, t == 0 ? "ttl_s" : "approval_valid_for_s", (double)x);
	}
	return out;
bad:
	cJSON_Delete(out);
	return NULL;
}

static cJSON *check_limits(const char *path, const struct yt_node *doc)
{
	const struct yt_node *lim = mapping(path, doc, "limits"), *v;
	const char *names[sizeof(limits) / sizeof(limits[0]) + 1];
	cJSON *out;
	long long x;

	if (yt_get(doc, "limits") && lim == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		names[i] = limits[i].name;
	names[sizeof(limits) / sizeof(limits[0])] = NULL;
	if (lim && !only_keys(path, lim, names))
		return NULL;
	out = cJSON_CreateObject();
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		x = limits[i].dflt;
		if (lim && (v = yt_get(lim, limits[i].name)) &&
		    (scalar(path, lim, limits[i].name) == NULL ||
		     integer(path, v, limits[i].name, limits[i].min, limits[i].max, &x) < 0)) {
			cJSON_Delete(out);
			return NULL;
		}
		cJSON_AddNumberToObject(out, limits[i].name, (double)x);
	}
	return out;
}

/* network: {allow: [host globs]}: the destinations a proven harmless
 * network read (HTTP GET/HEAD, ping, a DNS lookup, an SQL query) may reach
 * without an operator; default none. */
static cJSON *check_network(const char *path, const struct yt_node *doc)
{
	static const char *const keys[] = {"allow", NULL};
	const struct yt_node *net = mapping(path, doc, "network"), *allow;
	cJSON *out, *arr;

	if (yt_get(doc, "network") && net == NULL)
		return NULL;
	if (net && !only_keys(path, net, keys))
		return NULL;
	allow = net ? yt_get(net, "allow") : NULL;
	if (allow != NULL && allow->kind != YT_SEQ)
		return fail(path, allow, "\"allow\" must be a list of host globs, not a %s%s",
		            yt_kind_name(allow->kind), "");
	out = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(out, "allow");
	for (size_t i = 0; allow != NULL && i < allow->n; i++) {
		const struct yt_node *g = allow->items[i];
		const char *why;

		if (g->kind != YT_SCALAR) {
			cJSON_Delete(out);
			return fail(path, g, "each \"allow\" entry must be a host glob, not a %s%s",
			            yt_kind_name(g->kind), "");
		}
		why = classifier_network_glob_problem(g->scalar);
		if (why != NULL) {
			cJSON_Delete(out);
			return fail(path, g, "network.allow \"%s\": %s", g->scalar, why);
		}
		cJSON_AddItemToArray(arr, cJSON_CreateString(g->scalar));
	}
	return out;
}

/* hard_to_read: {action: confirm|quorum, max_lines, max_bytes}: what a
 * command with hidden characters, or longer than a screen, needs. */
static cJSON *check_hard_to_read(const char *path, const struct yt_node *doc)
{
	static const char *const keys[] = {"action", "max_lines", "max_bytes", NULL};
	const struct yt_node *h = mapping(path, doc, "hard_to_read"), *v;
	long long lines = SEEDGATE_HARD_MAX_LINES, bytes = SEEDGATE_HARD_MAX_BYTES;
	const char *action = "confirm";
	cJSON *out;

	if (yt_get(doc, "hard_to_read") && h == NULL)
		return NULL;
	if (h && !only_keys(path, h, keys))
		return NULL;
	for (const char *const *k = keys; h && *k; k++)
		if (yt_get(h, *k) && scalar(path, h, *k) == NULL)
			return NULL;
	if (h && (v = yt_get(h, "action"))) {
		if (strcmp(v->scalar, "confirm") != 0 && strcmp(v->scalar, "quorum") != 0)
			return fail(
			    path, v,
			    "\"action\" must be confirm (each approver confirms having read "
			    "it) or quorum (one more approver), not \"%s\"%s",
			    v->scalar, "");
		action = v->scalar;
	}
	if (h && (v = yt_get(h, "max_lines")) &&
	    integer(path, v, "max_lines", 1, 100000, &lines) < 0)
		return NULL;
	if (h && (v = yt_get(h, "max_bytes")) &&
	    integer(path, v, "max_bytes", 80, 1000000, &bytes) < 0)
		return NULL;
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "action", action);
	cJSON_AddNumberToObject(out, "max_lines", (double)lines);
	cJSON_AddNumberToObject(out, "max_bytes", (double)bytes);
	return out;
}

cJSON *seedgate_check(const char *path, const struct yt_node *doc)
{
	static const char *const top[] = {"classes",     "rules",  "limits",       "network",
	                                  "door_limits", "scopes", "hard_to_read", NULL};
	struct class_gate g[2];
	const struct yt_node *rules;
	cJSON *out = NULL, *classes, *rl, *lim, *net, *hard;

	if (doc->kind != YT_MAP)
		return fail(path, doc, "the document must be a mapping, not a %s%s",
		            yt_kind_name(doc->kind), "");
	if (!only_keys(path, doc, top) || check_classes(path, doc, g) < 0)
		return NULL;
	rules = yt_get(doc, "rules");
	if (rules && rules->kind != YT_SEQ)
		return fail(path, rules, "\"rules\" must be a list, not a %s%s",
		            yt_kind_name(rules->kind), "");
	lim = check_limits(path, doc);
	if (lim == NULL)
		return NULL;
	net = check_network(path, doc);
	if (net == NULL) {
		cJSON_Delete(lim);
		return NULL;
	}
	hard = check_hard_to_read(path, doc);
	if (hard == NULL) {
		cJSON_Delete(lim);
		cJSON_Delete(net);
		return NULL;
	}
	out = cJSON_CreateObject();
	classes = cJSON_AddObjectToObject(out, "classes");
	for (int i = 0; i < 2; i++) {
		cJSON *c = cJSON_AddObjectToObject(
		    classes, risk_class_name((enum risk_class)(FIRST_GATED + i)));
		cJSON_AddNumberToObject(c, "quorum", (double)g[i].quorum);
		cJSON_AddNumberToObject(c, "ttl_s", (double)g[i].ttl_s);
		cJSON_AddNumberToObject(c, "approval_valid_for_s", (double)g[i].valid_s);
	}
	rl = cJSON_AddArrayToObject(out, "rules");
	for (size_t i = 0; rules && i < rules->n; i++) {
		cJSON *r = check_rule(path, rules->items[i], g);
		if (r == NULL) {
			cJSON_Delete(out);
			cJSON_Delete(lim);
			cJSON_Delete(net);
			cJSON_Delete(hard);
			return NULL;
		}
		cJSON_AddItemToArray(rl, r);
	}
	cJSON_AddItemToObject(out, "limits", lim);
	cJSON_AddItemToObject(out, "network", net);
	cJSON_AddItemToObject(out, "hard_to_read", hard);
	if (seeddoor_check(path, doc, out) < 0) { /* door_limits, scopes */
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}
