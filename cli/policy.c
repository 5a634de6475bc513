/* policy.c -- `airlock policy show`: the classifier policy and the gate policy
 * in force, with their versions, as operators read them. */
#include "cli/cli.h"

#include "cli/seeddoor.h"
#include "cli/seedgate.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything in one statement, so the versions shown belong together. */
static const char show_sql[] =
    "SELECT jsonb_build_object("
    " 'classifier', (SELECT jsonb_build_object('version', p.version, 'sha256', p.sha256,"
    "   'origin', p.origin, 'loaded_at', p.loaded_at, 'loaded_by', p.loaded_by,"
    "   'rules', (SELECT count(*) FROM airlock.policy_rules))"
    "   FROM airlock.policies p ORDER BY p.version DESC LIMIT 1),"
    " 'gate', (SELECT jsonb_build_object('version', g.version, 'sha256', g.sha256,"
    "   'origin', g.origin, 'loaded_at', g.loaded_at, 'loaded_by', g.loaded_by,"
    "   'versions', (SELECT count(*) FROM airlock.gate_policies),"
    "   'classes', (SELECT jsonb_agg(jsonb_build_object('class', c.class,"
    "       'quorum', c.approvals_required, 'ttl_s', extract(epoch FROM c.ttl)::bigint,"
    "       'approval_valid_for_s', extract(epoch FROM c.approval_valid_for)::bigint)"
    "       ORDER BY c.class) FROM airlock.gate_policy c),"
    "   'rules', coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object("
    "       'position', r.position, 'target', r.target, 'agent', r.agent, 'class', r.class,"
    "       'quorum', r.approvals_required, 'ttl_s', extract(epoch FROM r.ttl)::bigint,"
    "       'approval_valid_for_s', extract(epoch FROM r.approval_valid_for)::bigint))"
    "       ORDER BY r.position) FROM airlock.gate_rules r), '[]'),"
    "   'limits', (SELECT to_jsonb(l) - 'one' - 'gate_version' FROM airlock.gate_limits l),"
    "   'door_limits', (SELECT to_jsonb(d) - 'one' - 'gate_version' FROM airlock.gate_door_limits "
    "d),"
    "   'scopes', coalesce((SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object("
    "       'position', s.position, 'agent', s.agent, 'targets', s.targets,"
    "       'target_types', s.target_types, 'max_class', s.max_class)) ORDER BY s.position)"
    "       FROM airlock.gate_scopes s), '[]'))"
    "   FROM airlock.gate_policies g ORDER BY g.version DESC LIMIT 1))::text";

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "-";
}

static long long num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? (long long)v->valuedouble : -1;
}

static void print_version(const char *what, const cJSON *v)
{
	if (!cJSON_IsObject(v)) {
		printf("%s: none ingested (run `airlock seed DIR`)\n", what);
		return;
	}
	printf("%s: version %lld, sha256 %.12s, from %s, loaded %s by %s\n", what,
	       num(v, "version"), str(v, "sha256"), str(v, "origin"), str(v, "loaded_at"),
	       str(v, "loaded_by"));
}

/* A JSON list of strings as "a, b", or `dflt` when there is none. */
static void print_list(const cJSON *l, const char *dflt)
{
	const cJSON *x;
	int n = 0;

	cJSON_ArrayForEach(x, l)
	    printf("%s%s", n++ ? ", " : "", cJSON_IsString(x) ? x->valuestring : "?");
	if (n == 0)
		printf("%s", dflt);
}

/* The door limits and each agent's scope. */
static void print_door(const cJSON *g)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(g, "door_limits");
	const cJSON *scopes = cJSON_GetObjectItemCaseSensitive(g, "scopes"), *s;

	if (cJSON_IsObject(d)) {
		printf("  door limits:");
		for (size_t i = 0; i < seeddoor_nlimits; i++)
			printf("%s %s=%lld", i && i % 4 == 0 ? "\n              " : "",
			       seeddoor_limits[i].name, num(d, seeddoor_limits[i].name));
		printf("\n");
	}
	if (cJSON_GetArraySize(scopes) == 0) {
		printf("  scopes: none: every agent may act on every target, up to destructive\n");
		return;
	}
	printf("  scopes (the first whose agent matches binds it; other agents: everything):\n");
	cJSON_ArrayForEach(s, scopes)
	{
		printf("    %lld. agent=%s targets=", num(s, "position"), str(s, "agent"));
		print_list(cJSON_GetObjectItemCaseSensitive(s, "targets"), "any");
		printf(" types=");
		print_list(cJSON_GetObjectItemCaseSensitive(s, "target_types"), "any");
		printf(" max_class=%s\n", cJSON_GetObjectItemCaseSensitive(s, "max_class")
		                              ? str(s, "max_class")
		                              : "destructive");
	}
}

static void print_gate(const cJSON *g)
{
	const cJSON *c, *r, *lim = cJSON_GetObjectItemCaseSensitive(g, "limits");
	char ttl[32], valid[32];

	printf("  %-16s %-7s %-10s %s\n", "class", "quorum", "ttl", "approval valid for");
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(g, "classes"))
	{
		seedgate_format_duration(num(c, "ttl_s"), ttl, sizeof(ttl));
		seedgate_format_duration(num(c, "approval_valid_for_s"), valid, sizeof(valid));
		printf("  %-16s %-7lld %-10s %s\n", str(c, "class"), num(c, "quorum"), ttl, valid);
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(g, "rules")) > 0)
		printf("  rules (each only makes the gate stricter where it matches):\n");
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(g, "rules"))
	{
		printf("    %lld.", num(r, "position"));
		if (cJSON_GetObjectItemCaseSensitive(r, "target"))
			printf(" target=%s", str(r, "target"));
		if (cJSON_GetObjectItemCaseSensitive(r, "agent"))
			printf(" agent=%s", str(r, "agent"));
		printf(" class=%s",
		       cJSON_GetObjectItemCaseSensitive(r, "class") ? str(r, "class") : "any");
		if (num(r, "quorum") > 0)
			printf(" quorum=%lld", num(r, "quorum"));
		if (num(r, "ttl_s") > 0) {
			seedgate_format_duration(num(r, "ttl_s"), ttl, sizeof(ttl));
			printf(" ttl=%s", ttl);
		}
		if (num(r, "approval_valid_for_s") > 0) {
			seedgate_format_duration(num(r, "approval_valid_for_s"), valid,
			                         sizeof(valid));
			printf(" approval_valid_for=%s", valid);
		}
		printf("\n");
	}
	if (cJSON_IsObject(lim))
		printf("  limits: requests_per_minute=%lld pending_per_agent=%lld "
		       "attribute_bytes=%lld attribute_keys=%lld relationships_per_entity=%lld\n",
		       num(lim, "requests_per_minute"), num(lim, "pending_per_agent"),
		       num(lim, "attribute_bytes"), num(lim, "attribute_keys"),
		       num(lim, "relationships_per_entity"));
	print_door(g);
}

static int show(const char *db, bool json)
{
	struct store *s = cli_connect(db);
	struct store_res *res = NULL;
	cJSON *doc = NULL;
	int rc = CLI_ERROR;

	if (s == NULL)
		return CLI_ERROR;
	res = store_exec(s, show_sql, 0, NULL);
	if (res == NULL) {
		rc = cli_fail(s, "policy show");
		goto out;
	}
	if (json) {
		printf("%s\n", store_get(res, 0, 0));
		rc = CLI_OK;
		goto out;
	}
	doc = cJSON_Parse(store_get(res, 0, 0));
	if (doc == NULL) {
		fprintf(stderr,
		        "airlock: policy show: the database answered with unreadable JSON\n");
		goto out;
	}
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(doc, "classifier");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(doc, "gate");
	print_version("classifier policy", cl);
	if (cJSON_IsObject(cl))
		printf("  %lld rules (airlock.policy_rules)\n", num(cl, "rules"));
	print_version("gate policy", g);
	if (cJSON_IsObject(g)) {
		printf("  %lld versions kept (airlock.gate_policies)\n", num(g, "versions"));
		print_gate(g);
	}
	rc = CLI_OK;
out:
	cJSON_Delete(doc);
	store_clear(res);
	store_close(s);
	return rc;
}

int cli_policy(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"db", required_argument, NULL, 'd'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const char usage[] = "usage: airlock policy show [--json] [--db CONNINFO]\n";
	const char *db = NULL;
	bool json = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd') {
			db = optarg;
		} else if (c == 'j') {
			json = true;
		} else if (c == 'h') {
			printf(
			    "%s"
			    "Shows the policies in force: the classifier policy "
			    "(seeds/policy.yaml)\n"
			    "and the gate policy (seeds/gate.yaml): each one's version, digest,\n"
			    "origin, who loaded it and when; for the gate, the quorum, pending "
			    "TTL\n"
			    "and approval validity per class, the per-target and per-agent rules,\n"
			    "the flood limits, the door limits of the agent's other functions, "
			    "and\n"
			    "each agent's scope.  Every version ever ingested is kept in\n"
			    "airlock.policies and airlock.gate_policies.  Operators may run it.\n",
			    usage);
			return CLI_OK;
		} else {
			fprintf(stderr, "%s", usage);
			return CLI_USAGE;
		}
	}
	if (optind != argc - 1 || strcmp(argv[optind], "show") != 0) {
		fprintf(stderr, "%s", usage);
		return CLI_USAGE;
	}
	return show(db, json);
}
