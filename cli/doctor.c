/* doctor.c -- `airlock doctor`: the report, the configuration and database
 * checks, and the command itself (the estate's checks: doctor_estate.c). */
#include "cli/doctor.h"

#include "cli/cli.h"
#include "cli/hostcheck.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/redact.h"
#include "store/conninfo.h"
#include "lib/xalloc.h"
#include "store/schema.h"
#include "worker/durability.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct doctor_item {
	char *area, *subject, *detail, *fix;
	enum doctor_status status;
};

struct doctor_report {
	struct doctor_item *items;
	size_t n, cap;
};

struct doctor_report *doctor_report_new(void)
{
	return xcalloc(1, sizeof(struct doctor_report));
}

void doctor_report_free(struct doctor_report *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].area);
		free(r->items[i].subject);
		free(r->items[i].detail);
		free(r->items[i].fix);
	}
	free(r->items);
	free(r);
}

void doctor_add(struct doctor_report *r, const char *area, const char *subject,
                enum doctor_status st, const char *fix, const char *fmt, ...)
{
	char detail[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 32;
		r->items = xrealloc(r->items, r->cap * sizeof(*r->items));
	}
	r->items[r->n++] = (struct doctor_item){
	    .area = xstrdup(area),
	    .subject = xstrdup(subject),
	    .detail = xstrdup(detail),
	    .fix = fix ? xstrdup(fix) : NULL,
	    .status = st,
	};
}

static const char *status_name(enum doctor_status st)
{
	switch (st) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_WARN:
		return "warn";
	case DOCTOR_FAIL:
		return "fail";
	case DOCTOR_SKIP:
		return "skip";
	}
	return "fail";
}

/* ------------------------------------------------------------ configuration */

static struct config *check_config(struct doctor_report *r, const char *path)
{
	char err[1024], fix[1200];
	struct config *cfg = config_load(path, err, sizeof(err));

	if (cfg == NULL) {
		snprintf(fix, sizeof(fix),
		         "correct %s where the message points (airlockd -n -c %s checks it the "
		         "same way; every key: airlockd(8))",
		         path, path);
		doctor_add(r, "config", path, DOCTOR_FAIL, fix, "%s", err);
		return NULL;
	}
	char *zerto = cfg->zerto_url ? redact_url(cfg->zerto_url) : xstrdup("not configured");
	doctor_add(r, "config", path, DOCTOR_OK, NULL,
	           "valid: worker_id %s, %d workers, zerto %s, %d webhook(s)", cfg->worker_id,
	           cfg->workers, zerto, cfg->nwebhooks);
	free(zerto);
	return cfg;
}

/* ------------------------------------------------------------------ database */

static struct store_res *q0(struct store *s, const char *sql)
{
	return store_exec(s, sql, 0, NULL);
}

static struct store *check_connection(struct doctor_report *r, const char *db)
{
	char err[1024];
	struct store *s = store_open(db, "airlock-doctor", err, sizeof(err));
	struct store_res *res;

	if (s == NULL) {
		doctor_add(r, "database", "connection", DOCTOR_FAIL,
		           "start PostgreSQL, or point doctor at it as the database administrator "
		           "(--db 'host=... dbname=airlock user=postgres', AIRLOCK_DB or PG*); "
		           "pg_hba.conf must let that login in",
		           "%s", err);
		return NULL;
	}
	res = q0(s, "SELECT current_user, current_database(), current_setting('server_version'),"
	            " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)");
	if (res == NULL) {
		doctor_add(r, "database", "connection", DOCTOR_FAIL, NULL, "%s", store_errmsg(s));
		store_close(s);
		return NULL;
	}
	doctor_add(r, "database", "connection", DOCTOR_OK, NULL,
	           "connected as %s%s to database %s (PostgreSQL %s)", store_get(res, 0, 0),
	           strcmp(store_get(res, 0, 3), "t") == 0 ? " (superuser)" : "",
	           store_get(res, 0, 1), store_get(res, 0, 2));
	store_clear(res);
	return s;
}

/* Returns whether the schema matches (the later checks read it). */
static bool check_schema(struct doctor_report *r, struct store *s)
{
	struct schema_report rep;

	if (store_schema_check(s, "airlock", &rep) < 0) {
		doctor_add(r, "database", "schema", DOCTOR_FAIL,
		           "run doctor as the database administrator", "cannot read it: %s",
		           store_errmsg(s));
		return false;
	}
	switch (rep.state) {
	case SCHEMA_MATCH:
		doctor_add(r, "database", "schema", DOCTOR_OK, NULL, "%s", rep.message);
		return true;
	case SCHEMA_MISSING:
	case SCHEMA_OLDER:
		doctor_add(r, "database", "schema", DOCTOR_FAIL,
		           "airlock migrate (as the database administrator), then restart airlockd",
		           "%s", rep.message);
		return false;
	case SCHEMA_NEWER:
		doctor_add(r, "database", "schema", DOCTOR_FAIL,
		           "install the airlock version that applied the newer migrations "
		           "(migrations are forward-only: never run an older airlock on a newer "
		           "schema)",
		           "%s", rep.message);
		return false;
	}
	return false;
}

static void check_group_roles(struct doctor_report *r, struct store *s)
{
	struct store_res *res =
	    q0(s, "SELECT g.name, p.rolname IS NOT NULL, coalesce(p.rolcanlogin, false)"
	          " FROM unnest(ARRAY['airlock_owner', 'airlock_agent', 'airlock_operator',"
	          "  'airlock_worker', 'airlock_scheduler']) WITH ORDINALITY g(name, i)"
	          " LEFT JOIN pg_roles p ON p.rolname = g.name ORDER BY g.i");
	int bad = 0;

	if (res == NULL) {
		doctor_add(r, "database", "roles", DOCTOR_FAIL, NULL, "%s", store_errmsg(s));
		return;
	}
	for (int i = 0; i < store_nrows(res); i++) {
		const char *name = store_get(res, i, 0);
		if (strcmp(store_get(res, i, 1), "t") != 0) {
			doctor_add(r, "database", name, DOCTOR_FAIL,
			           "airlock migrate creates the group roles",
			           "group role %s does not exist", name);
			bad++;
		} else if (strcmp(store_get(res, i, 2), "t") == 0) {
			char fix[256];
			snprintf(fix, sizeof(fix),
			         "ALTER ROLE %s NOLOGIN; give each person and program a login of "
			         "its own (airlock user add NAME --operator|--agent)",
			         name);
			doctor_add(r, "database", name, DOCTOR_FAIL, fix,
			           "group role %s can log in: anyone with its password acts "
			           "as every member",
			           name);
			bad++;
		}
	}
	if (bad == 0)
		doctor_add(r, "database", "roles", DOCTOR_OK, NULL,
		           "airlock_owner, airlock_agent, airlock_operator, airlock_worker and "
		           "airlock_scheduler exist and cannot log in");
	store_clear(res);
}

/* A few grants that carry the security model: who may and may not call what. */
static const struct {
	const char *fn, *role;
	bool want;
} expected_grants[] = {
    {"airlock.run(text,text,text,text,text)", "airlock_agent", true},
    {"airlock.run(text,text,text,text,text)", "airlock_worker", false},
    {"airlock.approve(bigint,text,boolean)", "airlock_operator", true},
    {"airlock.approve(bigint,text,boolean)", "airlock_agent", false},
    {"airlock.approve(bigint,text,boolean)", "airlock_worker", false},
    {"airlock.action_link_use(text,text,boolean)", "airlock_operator", true},
    {"airlock.action_link_use(text,text,boolean)", "airlock_agent", false},
    {"airlock.web_chat_link(text,text,text)", "airlock_operator", false},
    {"airlock.reject(bigint,text)", "airlock_agent", false},
    {"airlock.worker_claim(text)", "airlock_worker", true},
    {"airlock.worker_claim(text)", "airlock_agent", false},
    {"airlock.worker_claim(text)", "airlock_operator", false},
    {"airlock.seed_policy(text,text,jsonb)", "airlock_agent", false},
    {"airlock.seed_policy(text,text,jsonb)", "airlock_operator", false},
    {"airlock.schema_version()", "airlock_worker", true},
    {"airlock.schema_version()", "airlock_scheduler", true},
};

static void check_grants(struct doctor_report *r, struct store *s)
{
	const char *fix = "the migrations set these; a manual GRANT or REVOKE changed them: "
	                  "undo it (docs/sql-api.md lists who may call what)";
	struct store_res *res;
	int bad = 0;

	res =
	    q0(s, "SELECT"
	          " (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
	          "   WHERE n.nspname = 'airlock' AND has_function_privilege('public', p.oid,"
	          "   'EXECUTE')),"
	          " (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
	          "   WHERE n.nspname = 'airlock' AND c.relkind IN ('r', 'v')"
	          "   AND c.relname <> 'schema_migrations'"
	          "   AND pg_get_userbyid(c.relowner) <> 'airlock_owner'),"
	          " (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
	          "   CROSS JOIN unnest(ARRAY['airlock_agent', 'airlock_operator',"
	          "   'airlock_worker', 'airlock_scheduler']) g(role)"
	          "   WHERE n.nspname = 'airlock' AND c.relkind = 'r'"
	          "   AND has_table_privilege(g.role, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))");
	if (res == NULL) {
		doctor_add(r, "database", "grants", DOCTOR_FAIL, NULL, "%s", store_errmsg(s));
		return;
	}
	if (strcmp(store_get(res, 0, 0), "0") != 0) {
		doctor_add(r, "database", "grants", DOCTOR_FAIL, fix,
		           "PUBLIC may execute %s airlock function(s)", store_get(res, 0, 0));
		bad++;
	}
	if (strcmp(store_get(res, 0, 1), "0") != 0) {
		doctor_add(r, "database", "grants", DOCTOR_FAIL, fix,
		           "%s airlock table(s) or view(s) are not owned by airlock_owner",
		           store_get(res, 0, 1));
		bad++;
	}
	if (strcmp(store_get(res, 0, 2), "0") != 0) {
		doctor_add(r, "database", "grants", DOCTOR_FAIL, fix,
		           "an airlock role may write %s table(s) directly (every write must go "
		           "through the SQL functions)",
		           store_get(res, 0, 2));
		bad++;
	}
	store_clear(res);
	for (size_t i = 0; i < sizeof(expected_grants) / sizeof(expected_grants[0]); i++) {
		const char *p[2] = {expected_grants[i].fn, expected_grants[i].role};
		res = store_exec(s,
		                 "SELECT to_regprocedure($1) IS NULL OR"
		                 " has_function_privilege($2, to_regprocedure($1), 'EXECUTE')",
		                 2, p);
		if (res == NULL) {
			doctor_add(r, "database", "grants", DOCTOR_FAIL, NULL, "%s",
			           store_errmsg(s));
			return;
		}
		bool has = strcmp(store_get(res, 0, 0), "t") == 0;
		store_clear(res);
		if (has != expected_grants[i].want) {
			doctor_add(r, "database", "grants", DOCTOR_FAIL, fix, "%s %s execute %s",
			           expected_grants[i].role, has ? "may" : "may not",
			           expected_grants[i].fn);
			bad++;
		}
	}
	if (bad == 0)
		doctor_add(r, "database", "grants", DOCTOR_OK, NULL,
		           "tables belong to airlock_owner, no role writes them directly, PUBLIC "
		           "executes nothing, and agents, operators and workers call only "
		           "their own functions");
}

/* The login named by user= in a conninfo; caller frees; NULL when none. */
static char *conninfo_user(const char *conninfo)
{
	return conninfo_get(conninfo, "user");
}

/* The daemon's own login (from the config) is in role and in no other. */
static void check_daemon_login(struct doctor_report *r, struct store *s, const char *conninfo,
                               const char *what, const char *role)
{
	char *user = conninfo_user(conninfo);
	char fix[512];
	struct store_res *res;
	const char *p[2];

	if (user == NULL) {
		doctor_add(r, "database", what, DOCTOR_WARN,
		           "name the login with user= in the configuration",
		           "the configuration's connection string names no user: the login is "
		           "whoever runs airlockd");
		return;
	}
	p[0] = user;
	p[1] = role;
	res = store_exec(s,
	                 "SELECT r.rolcanlogin, pg_has_role(r.oid, $2, 'MEMBER'),"
	                 " pg_has_role(r.oid, 'airlock_agent', 'MEMBER')"
	                 "  OR pg_has_role(r.oid, 'airlock_operator', 'MEMBER'), r.rolsuper"
	                 " FROM pg_roles r WHERE r.rolname = $1",
	                 2, p);
	if (res == NULL) {
		doctor_add(r, "database", what, DOCTOR_FAIL, NULL, "%s", store_errmsg(s));
		goto out;
	}
	if (store_nrows(res) == 0) {
		snprintf(fix, sizeof(fix), "CREATE ROLE %s LOGIN IN ROLE %s (as the administrator)",
		         user, role);
		doctor_add(r, "database", what, DOCTOR_FAIL, fix, "login %s does not exist", user);
	} else if (strcmp(store_get(res, 0, 3), "t") == 0) {
		snprintf(fix, sizeof(fix),
		         "use a login of its own: CREATE ROLE airlockd LOGIN IN "
		         "ROLE %s, and user=airlockd in the configuration",
		         role);
		doctor_add(r, "database", what, DOCTOR_FAIL, fix,
		           "login %s is a superuser: the daemon needs %s only", user, role);
	} else if (strcmp(store_get(res, 0, 0), "t") != 0 ||
	           strcmp(store_get(res, 0, 1), "t") != 0) {
		snprintf(fix, sizeof(fix), "ALTER ROLE %s LOGIN; GRANT %s TO %s", user, role, user);
		doctor_add(r, "database", what, DOCTOR_FAIL, fix, "login %s %s", user,
		           strcmp(store_get(res, 0, 0), "t") != 0 ? "cannot log in"
		                                                  : "is not a member of its role");
	} else if (strcmp(store_get(res, 0, 2), "t") == 0) {
		snprintf(fix, sizeof(fix),
		         "REVOKE airlock_agent, airlock_operator FROM %s: the daemon's login "
		         "must be neither",
		         user);
		doctor_add(r, "database", what, DOCTOR_FAIL, fix,
		           "login %s is also an agent or an operator", user);
	} else {
		doctor_add(r, "database", what, DOCTOR_OK, NULL, "login %s, member of %s only",
		           user, role);
	}
out:
	store_clear(res);
	free(user);
}

/* What airlockd's durability check will say of this database, and whether
 * a standby could be promoted without airlock having been told (an
 * asynchronous standby streaming, or a multi-host conninfo, with
 * durability.failover undeclared): then commands can run twice, which is a
 * failure; mutations held for want of durability are a warning (airlockd
 * says so on every held row). */
static void check_durability(struct doctor_report *r, struct store *s, const struct config *cfg)
{
	struct store_res *res = q0(s, "SELECT airlock.worker_durability()::text");
	char why[1400];
	const char *level;

	if (res == NULL) {
		doctor_add(r, "database", "durability", DOCTOR_FAIL, NULL,
		           "the durability settings could not be read: %s", store_errmsg(s));
		return;
	}
	const char *doc = store_get(res, 0, 0);
	int hosts = durability_conninfo_hosts(cfg->database);
	if (durability_failover_undeclared(cfg, doc, hosts, why, sizeof(why))) {
		doctor_add(
		    r, "database", "failover", DOCTOR_FAIL,
		    "set durability.failover: true in the daemon's config and make a standby "
		    "synchronous (synchronous_standby_names; pg_stat_replication.sync_state "
		    "sync), or never promote one (docs/operators.md, exactly once)",
		    "%s", why);
	} else if (!durability_judge(cfg, doc, why, sizeof(why), &level)) {
		doctor_add(r, "database", "durability", DOCTOR_WARN, NULL,
		           "airlockd will hold mutations: %s", why);
	} else {
		doctor_add(
		    r, "database", "durability", DOCTOR_OK, NULL,
		    "commits are durable (synchronous_commit=%s for airlockd's sessions)%s", level,
		    cfg->durability_failover ? "; failover declared, a standby is synchronous"
		                             : "; no standby streams asynchronously");
	}
	store_clear(res);
}

static void check_people(struct doctor_report *r, struct store *s)
{
	struct store_res *res = q0(s, "SELECT r.rolname,"
	                              " pg_has_role(r.oid, 'airlock_agent', 'MEMBER'),"
	                              " pg_has_role(r.oid, 'airlock_operator', 'MEMBER')"
	                              " FROM pg_roles r WHERE r.rolcanlogin AND NOT r.rolsuper"
	                              " AND (pg_has_role(r.oid, 'airlock_agent', 'MEMBER')"
	                              "  OR pg_has_role(r.oid, 'airlock_operator', 'MEMBER'))"
	                              " ORDER BY r.rolname");
	int agents = 0, operators = 0, both = 0;

	if (res == NULL) {
		doctor_add(r, "database", "logins", DOCTOR_FAIL, NULL, "%s", store_errmsg(s));
		return;
	}
	for (int i = 0; i < store_nrows(res); i++) {
		bool a = strcmp(store_get(res, i, 1), "t") == 0;
		bool o = strcmp(store_get(res, i, 2), "t") == 0;
		if (a && o) {
			char fix[256];
			snprintf(
			    fix, sizeof(fix),
			    "REVOKE airlock_agent FROM %s, or REVOKE airlock_operator FROM %s: "
			    "one login, one role",
			    store_get(res, i, 0), store_get(res, i, 0));
			doctor_add(
			    r, "database", store_get(res, i, 0), DOCTOR_FAIL, fix,
			    "login %s is both an agent and an operator (the gate refuses its "
			    "votes)",
			    store_get(res, i, 0));
			both++;
		}
		agents += a;
		operators += o;
	}
	store_clear(res);
	if (operators - both <= 0)
		doctor_add(r, "database", "logins", DOCTOR_WARN,
		           "airlock user add NAME --operator (one per person)",
		           "no operator login: nobody can approve a held request");
	else if (both == 0)
		doctor_add(r, "database", "logins", DOCTOR_OK, NULL,
		           "%d operator login(s), %d agent login(s), none both", operators, agents);
}

static void check_seeds(struct doctor_report *r, struct store *s)
{
	char *yaml = NULL;
	long long version = 0;
	struct store_res *res;

	if (store_policy_current(s, &yaml, &version) < 0)
		doctor_add(r, "database", "policy", DOCTOR_FAIL,
		           "airlock seed DIR (DIR with policy.yaml, tools.yaml, inventory.yaml, "
		           "gate.yaml)",
		           "%s", store_errmsg(s));
	else
		doctor_add(r, "database", "policy", DOCTOR_OK, NULL,
		           "classifier policy version %lld in force", version);
	free(yaml);
	res = q0(s, "SELECT count(*) FILTER (WHERE type = 'proxmox-host'),"
	            " count(*) FILTER (WHERE type = 'vm'), count(*) FILTER (WHERE type = 'lxc')"
	            " FROM airlock.entities");
	if (res == NULL) {
		doctor_add(r, "database", "inventory", DOCTOR_FAIL,
		           "run doctor as the database administrator", "%s", store_errmsg(s));
		return;
	}
	if (strcmp(store_get(res, 0, 0), "0") == 0)
		doctor_add(r, "database", "inventory", DOCTOR_FAIL,
		           "describe your nodes and guests in inventory.yaml and airlock seed DIR",
		           "the inventory has no Proxmox node");
	else
		doctor_add(r, "database", "inventory", DOCTOR_OK, NULL,
		           "%s node(s), %s VM(s), %s container(s)", store_get(res, 0, 0),
		           store_get(res, 0, 1), store_get(res, 0, 2));
	store_clear(res);
}

/* ---------------------------------------------------------------- the agent's host */

static void agent_host_finding(void *ctx, const struct sidedoor_finding *f)
{
	struct doctor_ctx *c = ctx;
	static const enum doctor_status st[] = {DOCTOR_OK, DOCTOR_FAIL, DOCTOR_WARN, DOCTOR_FAIL};

	doctor_add(c->r, "agent-host", f->subject, st[f->status], f->fix, "%s%s",
	           f->status == SIDEDOOR_OPEN ? "open: " : "", f->detail);
}

void doctor_agent_host(struct doctor_ctx *c, const char *db, const char *const *nodes,
                       size_t nnodes)
{
	int open = hostcheck_run(&(struct hostcheck_opts){
	    .db = db, .nodes = nodes, .nnodes = nnodes, .show = agent_host_finding, .ctx = c});

	if (open == 0)
		doctor_add(c->r, "agent-host", "side door", DOCTOR_OK, NULL,
		           "closed: no credential on this host logs in to a node or calls its API "
		           "(airlock hook --check verifies the hook's settings too)");
}

/* ---------------------------------------------------------------- reporting */

static void print_human(const struct doctor_report *r)
{
	int count[4] = {0};

	for (size_t i = 0; i < r->n; i++) {
		const struct doctor_item *it = &r->items[i];
		static const char *const tag[] = {"ok  ", "WARN", "FAIL", "skip"};
		count[it->status]++;
		printf("%s  %-8s  %s: %s\n", tag[it->status], it->area, it->subject, it->detail);
		if (it->fix && it->status != DOCTOR_OK)
			printf("                fix: %s\n", it->fix);
	}
	printf("doctor: %d ok, %d warning(s), %d failed, %d skipped\n", count[DOCTOR_OK],
	       count[DOCTOR_WARN], count[DOCTOR_FAIL], count[DOCTOR_SKIP]);
}

static void print_json(const struct doctor_report *r, bool ok)
{
	cJSON *root = cJSON_CreateObject(), *checks = cJSON_AddArrayToObject(root, "checks");
	char *text;

	cJSON_AddBoolToObject(root, "ok", ok);
	for (size_t i = 0; i < r->n; i++) {
		const struct doctor_item *it = &r->items[i];
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "area", it->area);
		cJSON_AddStringToObject(c, "subject", it->subject);
		cJSON_AddStringToObject(c, "status", status_name(it->status));
		cJSON_AddStringToObject(c, "detail", it->detail);
		if (it->fix && it->status != DOCTOR_OK)
			cJSON_AddStringToObject(c, "fix", it->fix);
		else
			cJSON_AddNullToObject(c, "fix");
		cJSON_AddItemToArray(checks, c);
	}
	text = cJSON_Print(root);
	printf("%s\n", text);
	free(text);
	cJSON_Delete(root);
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: airlock doctor [--config FILE] [--db CONNINFO] [--timeout-ms N] [--json]\n"
	    "       airlock doctor --agent-host [--db CONNINFO] [--node HOST[:PORT]]... [--json]\n"
	    "Checks, in order, and says what to fix for each: the configuration (FILE,\n"
	    "default $AIRLOCK_CONFIG, else %s); the database (reachable, schema\n"
	    "version against this binary's, roles, grants, the daemon's logins, no login\n"
	    "both agent and operator, policy and inventory seeded); every node (SSH with\n"
	    "the pinned host key, qm and pct present); each guest (guest agent, container\n"
	    "state); every key each node accepts for root, airlockd's, a cluster node's own,\n"
	    "or neither; the ZVM (login, TLS, each VM's VPGs); each webhook (reachable).\n"
	    "--agent-host checks the host it runs on as an agent's host instead: every SSH\n"
	    "key it holds offered to each node (never logging in), API tokens, and the\n"
	    "nodes' SSH and API ports (the nodes from the database with an operator's\n"
	    "login, or each --node).\n"
	    "URLs are shown as the daemon logs them, *** after the host.\n"
	    "Run it as root (it reads airlockd's key) with an administrator's database\n"
	    "login (--db, else $AIRLOCK_DB, else PG*).  On the nodes it runs only fixed,\n"
	    "read-only commands.  --timeout-ms bounds each network check (default 10000).\n"
	    "Exit status: 0 nothing failed (warnings allowed), 1 a check failed,\n"
	    "2 usage.\n",
	    paths_daemon_config());
}

int cli_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"db", required_argument, NULL, 'd'},
	    {"timeout-ms", required_argument, NULL, 't'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {"agent-host", no_argument, NULL, 'a'},
	    {"node", required_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	const char *path = getenv("AIRLOCK_CONFIG"), *db = NULL;
	const char *nodes[64];
	size_t nnodes = 0;
	bool agent_host = false;
	struct doctor_ctx ctx = {.timeout_ms = 10000};
	struct config *cfg = NULL;
	bool json = false, ok = true;
	int c;

	if (path == NULL || path[0] == '\0')
		path = paths_daemon_config();
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 't': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 100 || v > 600000) {
				fprintf(stderr, "airlock doctor: --timeout-ms takes 100..600000\n");
				return CLI_USAGE;
			}
			ctx.timeout_ms = (int)v;
			break;
		}
		case 'j':
			json = true;
			break;
		case 'a':
			agent_host = true;
			break;
		case 'n':
			if (nnodes == 64) {
				fprintf(stderr, "airlock doctor: at most 64 --node\n");
				return CLI_USAGE;
			}
			nodes[nnodes++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "airlock doctor: unexpected argument '%s'\n", argv[optind]);
		return CLI_USAGE;
	}
	if (nnodes > 0 && !agent_host) {
		fprintf(stderr, "airlock doctor: --node goes with --agent-host (the nodes airlockd "
		                "manages come from the inventory)\n");
		return CLI_USAGE;
	}
	log_set_level(LOG_WARN); /* the report says what happened; only warnings on stderr */
	ctx.r = doctor_report_new();
	if (agent_host) {
		doctor_agent_host(&ctx, db, nodes, nnodes);
		goto report;
	}
	cfg = check_config(ctx.r, path);
	ctx.cfg = cfg;
	ctx.db = check_connection(ctx.r, db);
	if (ctx.db && check_schema(ctx.r, ctx.db)) {
		check_group_roles(ctx.r, ctx.db);
		check_grants(ctx.r, ctx.db);
		if (cfg) {
			check_daemon_login(ctx.r, ctx.db, cfg->database, "worker login",
			                   "airlock_worker");
			if (cfg->scheduler_database)
				check_daemon_login(ctx.r, ctx.db, cfg->scheduler_database,
				                   "scheduler login", "airlock_scheduler");
			check_durability(ctx.r, ctx.db, cfg);
		}
		check_people(ctx.r, ctx.db);
		check_seeds(ctx.r, ctx.db);
	} else if (ctx.db) {
		doctor_add(ctx.r, "database", "roles and grants", DOCTOR_SKIP, NULL,
		           "skipped: the schema is not the one this airlock understands");
		store_close(ctx.db);
		ctx.db = NULL;
	}
	doctor_nodes(&ctx);
	doctor_zerto(&ctx);
	doctor_webhooks(&ctx);
	doctor_jail(&ctx);
report:
	for (size_t i = 0; i < ctx.r->n; i++)
		if (ctx.r->items[i].status == DOCTOR_FAIL)
			ok = false;
	if (json)
		print_json(ctx.r, ok);
	else
		print_human(ctx.r);
	doctor_report_free(ctx.r);
	store_close(ctx.db);
	config_free(cfg);
	return ok ? CLI_OK : CLI_ERROR;
}
