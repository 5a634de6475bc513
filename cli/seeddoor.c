/* seeddoor.c -- gate.yaml's door_limits and scopes, checked into the
 * document seed_gate() takes. */
#include "cli/seeddoor.h"

#include "classifier/classes.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct seeddoor_limit seeddoor_limits[] = {
    {"hook_match_candidates", 64, 1, 256},           {"hook_match_per_minute", 300, 1, 100000},
    {"report_bytes", 16384, 1024, 1048576},          {"hook_events_per_minute", 60, 1, 100000},
    {"host_checks_per_minute", 6, 1, 100000},        {"tool_requests_per_minute", 5, 1, 100000},
    {"tool_requests_pending", 20, 1, 100000},        {"guards_per_minute", 10, 1, 100000},
    {"attribute_updates_per_minute", 60, 1, 100000}, {"relationships_per_minute", 60, 1, 100000},
};
const size_t seeddoor_nlimits = sizeof(seeddoor_limits) / sizeof(seeddoor_limits[0]);

static const char *const target_types[] = {"proxmox-host", "vm", "lxc", NULL};

static int fail(const char *path, const struct yt_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(const char *path, const struct yt_node *n, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "airlock seed: %s:%d:%d: ", path, n ? n->line : 1, n ? n->col : 1);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return -1;
}

static int check_door_limits(const char *path, const struct yt_node *doc, cJSON *out)
{
	const struct yt_node *lim = yt_get(doc, "door_limits");
	cJSON *o;

	if (lim != NULL && lim->kind != YT_MAP)
		return fail(path, lim, "\"door_limits\" must be a mapping, not a %s",
		            yt_kind_name(lim->kind));
	for (size_t i = 0; lim != NULL && i < lim->n; i++) {
		const struct yt_node *k = lim->items[2 * i];
		bool known = false;

		for (size_t l = 0; l < seeddoor_nlimits; l++)
			known = known || strcmp(k->scalar, seeddoor_limits[l].name) == 0;
		if (!known)
			return fail(path, k, "unknown key \"%s\" in door_limits", k->scalar);
	}
	o = cJSON_AddObjectToObject(out, "door_limits");
	for (size_t l = 0; l < seeddoor_nlimits; l++) {
		const struct seeddoor_limit *d = &seeddoor_limits[l];
		const struct yt_node *v = lim ? yt_get(lim, d->name) : NULL;
		long long x = d->dflt;

		if (v != NULL) {
			char *end;

			if (v->kind != YT_SCALAR)
				return fail(path, v, "\"%s\" must be a single value, not a %s",
				            d->name, yt_kind_name(v->kind));
			errno = 0;
			x = strtoll(v->scalar, &end, 10);
			if (!isdigit((unsigned char)v->scalar[0]) || *end != '\0' || errno != 0 ||
			    x < d->min || x > d->max)
				return fail(path, v, "\"%s\" must be an integer in %lld..%lld",
				            d->name, d->min, d->max);
		}
		cJSON_AddNumberToObject(o, d->name, (double)x);
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

/* targets: a list of slug globs; target_types: a list of entity types. */
static int check_list(const char *path, const struct yt_node *v, const char *key, cJSON *scope)
{
	cJSON *arr;

	if (v->kind != YT_SEQ || v->n == 0)
		return fail(path, v, "\"%s\" must be a non-empty list", key);
	arr = cJSON_AddArrayToObject(scope, key);
	for (size_t i = 0; i < v->n; i++) {
		const struct yt_node *x = v->items[i];
		bool ok = false;

		if (x->kind != YT_SCALAR)
			return fail(path, x, "each of \"%s\" must be a single value, not a %s", key,
			            yt_kind_name(x->kind));
		if (strcmp(key, "targets") == 0) {
			if (!glob_ok(x->scalar, ":"))
				return fail(
				    path, x,
				    "target \"%s\" must be an entity slug or a glob of one, "
				    "such as vm:web*",
				    x->scalar);
		} else {
			for (const char *const *t = target_types; *t; t++)
				ok = ok || strcmp(*t, x->scalar) == 0;
			if (!ok)
				return fail(path, x,
				            "target type \"%s\" must be proxmox-host, vm or lxc",
				            x->scalar);
		}
		cJSON_AddItemToArray(arr, cJSON_CreateString(x->scalar));
	}
	return 0;
}

static int check_scope(const char *path, const struct yt_node *s, cJSON *scopes)
{
	static const char *const keys[] = {"agent", "targets", "target_types", "max_class", NULL};
	const struct yt_node *agent, *v;
	enum risk_class c;
	cJSON *scope;

	if (s->kind != YT_MAP)
		return fail(path, s,
		            "each scope must be a mapping of agent, targets, "
		            "target_types, max_class");
	for (size_t i = 0; i < s->n; i++) {
		const struct yt_node *k = s->items[2 * i];
		bool known = false;

		for (const char *const *p = keys; *p; p++)
			known = known || strcmp(k->scalar, *p) == 0;
		if (!known)
			return fail(path, k, "unknown key \"%s\" in a scope", k->scalar);
	}
	agent = yt_get(s, "agent");
	if (agent == NULL)
		return fail(path, s, "a scope needs \"agent\" (a login name or a glob of one)");
	if (agent->kind != YT_SCALAR || !glob_ok(agent->scalar, "@"))
		return fail(path, agent, "agent \"%s\" must be a login name or a glob of one",
		            agent->kind == YT_SCALAR ? agent->scalar : "(not a value)");
	scope = cJSON_CreateObject();
	cJSON_AddItemToArray(scopes, scope);
	cJSON_AddStringToObject(scope, "agent", agent->scalar);
	if ((v = yt_get(s, "targets")) != NULL && check_list(path, v, "targets", scope) < 0)
		return -1;
	if ((v = yt_get(s, "target_types")) != NULL &&
	    check_list(path, v, "target_types", scope) < 0)
		return -1;
	if ((v = yt_get(s, "max_class")) != NULL) {
		if (v->kind != YT_SCALAR || risk_class_parse(v->scalar, &c) < 0)
			return fail(
			    path, v,
			    "max_class must be read_only, reversible_low, config_mutation or "
			    "destructive");
		cJSON_AddStringToObject(scope, "max_class", risk_class_name(c));
	}
	return 0;
}

int seeddoor_check(const char *path, const struct yt_node *doc, cJSON *out)
{
	const struct yt_node *scopes = yt_get(doc, "scopes");
	cJSON *arr;

	if (check_door_limits(path, doc, out) < 0)
		return -1;
	if (scopes != NULL && scopes->kind != YT_SEQ)
		return fail(path, scopes, "\"scopes\" must be a list, not a %s",
		            yt_kind_name(scopes->kind));
	arr = cJSON_AddArrayToObject(out, "scopes");
	for (size_t i = 0; scopes != NULL && i < scopes->n; i++)
		if (check_scope(path, scopes->items[i], arr) < 0)
			return -1;
	return 0;
}
