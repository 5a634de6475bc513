/* hostcheck.c -- the side-door check of an agent's host, with the database. */
#include "cli/hostcheck.h"

#include "lib/sqlstate.h"
#include "lib/xalloc.h"
#include "store/store.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct collect {
	const struct hostcheck_opts *o;
	cJSON *findings;
};

static void collect(void *ctx, const struct sidedoor_finding *f)
{
	struct collect *c = ctx;
	cJSON *j = cJSON_CreateObject();

	cJSON_AddStringToObject(j, "status", sidedoor_status_name(f->status));
	cJSON_AddStringToObject(j, "subject", f->subject);
	cJSON_AddStringToObject(j, "detail", f->detail);
	if (f->fix)
		cJSON_AddStringToObject(j, "fix", f->fix);
	cJSON_AddItemToArray(c->findings, j);
	c->o->show(c->o->ctx, f);
}

static void unknown(const struct hostcheck_opts *o, const char *fix, const char *detail)
{
	struct sidedoor_finding f = {SIDEDOOR_UNKNOWN, "the managed nodes", detail, fix};

	o->show(o->ctx, &f);
}

/* HOST[:PORT] or [IPv6]:PORT, as given with --node. */
static void parse_node(const char *s, struct sidedoor_target *t, char **host)
{
	const char *colon = strrchr(s, ':');
	bool v6 = s[0] == '[';

	t->ssh_port = 22;
	if (v6) {
		const char *rb = strchr(s, ']');
		*host = xstrndup(s + 1, rb ? (size_t)(rb - s - 1) : strlen(s) - 1);
		if (rb && rb[1] == ':')
			t->ssh_port = atoi(rb + 2);
	} else if (colon != NULL && strchr(s, ':') == colon) {
		*host = xstrndup(s, (size_t)(colon - s));
		t->ssh_port = atoi(colon + 1);
	} else {
		*host = xstrdup(s);
	}
	if (t->ssh_port <= 0 || t->ssh_port > 65535)
		t->ssh_port = 22;
	t->slug = *host;
	t->address = *host;
	t->ssh_user = "root";
	t->api_port = 8006;
}

int hostcheck_run(const struct hostcheck_opts *o)
{
	char err[512], host[256];
	struct store *s = store_open(o->db, "airlock-hostcheck", err, sizeof(err));
	struct store_res *res = NULL;
	struct sidedoor_target *t = NULL;
	char **hosts = NULL;
	size_t n = 0;
	struct collect c = {.o = o, .findings = cJSON_CreateArray()};
	int open = -1;

	if (o->nnodes > 0) {
		t = xcalloc(o->nnodes, sizeof(*t));
		hosts = xcalloc(o->nnodes, sizeof(*hosts));
		for (size_t i = 0; i < o->nnodes; i++)
			parse_node(o->nodes[i], &t[i], &hosts[i]);
		n = o->nnodes;
	} else if (s == NULL) {
		char msg[600];

		snprintf(msg, sizeof(msg), "cannot list the nodes airlock manages: %.500s", err);
		unknown(o,
		        "give the database (--db) with an operator's login, or name each node with "
		        "--node HOST[:PORT]",
		        msg);
		goto out;
	} else {
		res = store_exec(s,
		                 "SELECT slug, address, ssh_port::text, ssh_user, api_port::text, "
		                 "host_key_fingerprint FROM airlock.side_door_targets()",
		                 0, NULL);
		if (res == NULL) {
			char msg[700];

			snprintf(msg, sizeof(msg),
			         "cannot list the nodes airlock manages with this login: %.500s%s",
			         store_errmsg(s),
			         sqlstate_is(store_sqlstate(s), SQLSTATE_INSUFFICIENT_PRIVILEGE)
			             ? " (an agent's login may not read node addresses)"
			             : "");
			unknown(
			    o,
			    "run the check as the host's administrator with an operator's login "
			    "(--db), or name each node with --node HOST[:PORT]",
			    msg);
			goto out;
		}
		n = (size_t)store_nrows(res);
		t = xcalloc(n ? n : 1, sizeof(*t));
		for (size_t i = 0; i < n; i++) {
			t[i].slug = store_get(res, (int)i, 0);
			t[i].address = store_get(res, (int)i, 1);
			t[i].ssh_port = atoi(store_get(res, (int)i, 2));
			t[i].ssh_user = store_get(res, (int)i, 3);
			t[i].api_port = atoi(store_get(res, (int)i, 4));
			t[i].pin = store_isnull(res, (int)i, 5) ? NULL : store_get(res, (int)i, 5);
		}
		if (n == 0) {
			unknown(
			    o, "describe the nodes in the inventory (airlock seed)",
			    "the inventory lists no Proxmox node with an address: nothing to check "
			    "against");
			goto out;
		}
	}
	open = sidedoor_check(&(struct sidedoor_opts){.targets = t, .ntargets = n}, collect, &c);
	/* what operators see of it: reported by this host, not verified */
	if (s != NULL) {
		char count[16], *fj = cJSON_PrintUnformatted(c.findings);
		const char *params[3];
		struct store_res *rr;

		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		snprintf(count, sizeof(count), "%d", open);
		params[0] = host;
		params[1] = count;
		params[2] = fj;
		rr = store_exec(s, "SELECT airlock.report_host_check($1, $2::integer, $3::jsonb)",
		                3, params);
		if (rr == NULL)
			fprintf(stderr,
			        "airlock: the check's result was not reported to airlock: %s\n",
			        store_errmsg(s));
		store_clear(rr);
		free(fj);
	}
out:
	for (size_t i = 0; hosts && i < o->nnodes; i++)
		free(hosts[i]);
	free(hosts);
	free(t);
	cJSON_Delete(c.findings);
	store_clear(res);
	store_close(s);
	return open;
}
