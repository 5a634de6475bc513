/* discover.c -- ask the nodes which guests the cluster has; record it (discover.h). */
#include "worker/discover.h"

#include "lib/log.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DISCOVER_TIMEOUT_MS 20000
#define DISCOVER_OUTPUT_CAP (16u << 20) /* ~100 bytes a guest: room for 100,000 */

int discover_parse(const char *json, size_t len, const char *from, cJSON *guests, cJSON *nodes,
                   char *err, size_t errlen)
{
	cJSON *doc = cJSON_ParseWithLength(json, len), *item;
	cJSON *found = cJSON_CreateArray(), *members = cJSON_CreateArray();
	int rc = -1;

	if (doc == NULL || !cJSON_IsArray(doc)) {
		snprintf(err, errlen, "the answer is not a JSON list");
		goto out;
	}
	cJSON_ArrayForEach(item, doc)
	{
		cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
		cJSON *vmid = cJSON_GetObjectItemCaseSensitive(item, "vmid");
		cJSON *node = cJSON_GetObjectItemCaseSensitive(item, "node");
		cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");
		if (!cJSON_IsObject(item) || !cJSON_IsString(type)) {
			snprintf(err, errlen, "an entry of the list has no type");
			goto out;
		}
		if (strcmp(type->valuestring, "node") == 0) {
			if (!cJSON_IsString(node) || node->valuestring[0] == '\0') {
				snprintf(err, errlen, "a node entry has no node name");
				goto out;
			}
			cJSON_AddItemToArray(members, cJSON_CreateString(node->valuestring));
			continue;
		}
		if (strcmp(type->valuestring, "qemu") != 0 && strcmp(type->valuestring, "lxc") != 0)
			continue; /* storage, sdn, pool: not guests */
		if (!cJSON_IsNumber(vmid) || vmid->valuedouble < 100 ||
		    vmid->valuedouble > 999999999 || vmid->valuedouble != (double)vmid->valueint ||
		    !cJSON_IsString(node) || node->valuestring[0] == '\0') {
			snprintf(err, errlen, "a %s entry has no valid vmid or node",
			         type->valuestring);
			goto out;
		}
		cJSON *g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "type", type->valuestring);
		cJSON_AddNumberToObject(g, "vmid", vmid->valueint);
		cJSON_AddStringToObject(g, "node", node->valuestring);
		cJSON_AddStringToObject(g, "name", cJSON_IsString(name) ? name->valuestring : "");
		cJSON_AddStringToObject(g, "from", from);
		cJSON_AddItemToArray(found, g);
	}
	while (cJSON_GetArraySize(found) > 0)
		cJSON_AddItemToArray(guests, cJSON_DetachItemFromArray(found, 0));
	while (cJSON_GetArraySize(members) > 0)
		cJSON_AddItemToArray(nodes, cJSON_DetachItemFromArray(members, 0));
	rc = 0;
out:
	cJSON_Delete(found);
	cJSON_Delete(members);
	cJSON_Delete(doc);
	return rc;
}

static bool names(const cJSON *list, const char *name)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, list)
	{
		if (cJSON_IsString(s) && strcmp(s->valuestring, name) == 0)
			return true;
	}
	return false;
}

/* Asks one node; appends its guests to guests.  0 when its answer may
 * decide what is gone from it (it names pve_name among the cluster's
 * nodes), 1 when its guests were taken but it is not the node it is said
 * to be, -1 when it could not be asked. */
static int ask_node(struct transport *t, const struct transport_node *node, const char *pve_name,
                    cJSON *guests)
{
	cJSON *nodes = cJSON_CreateArray();
	struct transport_limits lim = {.timeout_ms = DISCOVER_TIMEOUT_MS,
	                               .output_cap = DISCOVER_OUTPUT_CAP};
	struct transport_result r;
	char why[300] = "";
	int rc = -1;

	transport_exec(t, node, TARGET_PROXMOX_HOST, 0, DISCOVER_COMMAND, &lim, &r);
	if (r.status != TRANSPORT_EXITED || r.exit_code != 0) {
		const char *line = r.status == TRANSPORT_EXITED ? r.err : r.errmsg;
		snprintf(why, sizeof(why), "%s exit=%d: %.200s", transport_status_name(r.status),
		         r.exit_code, line ? line : "");
	} else if (r.out_truncated) {
		snprintf(why, sizeof(why), "the answer is larger than %u bytes",
		         DISCOVER_OUTPUT_CAP);
	} else if (discover_parse(r.out, r.out_len, pve_name, guests, nodes, why, sizeof(why)) ==
	           0) {
		rc = 0;
		if (!names(nodes, pve_name)) {
			char *list = cJSON_PrintUnformatted(nodes);
			char q[600];
			log_msg(LOG_WARN,
			        "evt=discover.node_misnamed node=%s pve_node=%s cluster_nodes=%s "
			        "note=\"the node's answer does not name it; set pve_node of "
			        "proxmox-host:%s in the inventory to its name in the cluster. Its "
			        "guests are not marked gone meanwhile\"",
			        node->name, pve_name, log_quote(list, q, sizeof(q)), node->name);
			free(list);
			rc = 1;
		}
	}
	if (rc < 0) {
		char q[600];
		log_msg(LOG_WARN, "evt=discover.node_failed node=%s error=%s", node->name,
		        log_quote(why, q, sizeof(q)));
	}
	transport_result_free(&r);
	cJSON_Delete(nodes);
	return rc;
}

/* {"a","b"} for a text[] parameter; names are quoted and escaped. */
static void add_array_item(char **arr, const char *s)
{
	size_t n = strlen(*arr), m = strlen(s);
	char *next = xmalloc(n + 2 * m + 4);
	char *p = next;

	memcpy(p, *arr, n);
	p += n;
	if (n > 1)
		*p++ = ',';
	*p++ = '"';
	for (const char *q = s; *q; q++) {
		if (*q == '"' || *q == '\\')
			*p++ = '\\';
		*p++ = *q;
	}
	*p++ = '"';
	*p = '\0';
	free(*arr);
	*arr = next;
}

static int count_of(const cJSON *result, const char *key, const char *slug_log_evt)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(result, key), *s;
	int n = 0;

	cJSON_ArrayForEach(s, list)
	{
		if (cJSON_IsString(s)) {
			char q[200];
			log_msg(LOG_INFO, "evt=%s slug=%s", slug_log_evt,
			        log_quote(s->valuestring, q, sizeof(q)));
		}
		n++;
	}
	return n;
}

int discover_round(struct store *db, struct transport *t, struct discover_stats *st)
{
	struct discover_stats local = {0};
	struct store_res *hosts = NULL, *res = NULL;
	cJSON *guests = cJSON_CreateArray(), *result = NULL;
	char *answered = xstrdup("{");
	char *text = NULL;
	bool any = false; /* some node answered, even if it decides nothing gone */
	int rc = -1;

	if (st == NULL)
		st = &local;
	memset(st, 0, sizeof(*st));
	hosts =
	    store_exec(db,
	               "SELECT slug, address, coalesce(port, 22), ssh_user, host_key_fingerprint, "
	               " coalesce(pve_node, split_part(slug, ':', 2)) "
	               "FROM airlock.entities WHERE type = 'proxmox-host' ORDER BY slug",
	               0, NULL);
	if (hosts == NULL)
		goto out;
	for (int i = 0; i < store_nrows(hosts); i++) {
		const char *slug = store_get(hosts, i, 0);
		const char *colon = strchr(slug, ':');
		struct transport_node node = {
		    .name = colon ? colon + 1 : slug,
		    .address = store_get(hosts, i, 1),
		    .port = atoi(store_get(hosts, i, 2)),
		    .user = store_isnull(hosts, i, 3) ? NULL : store_get(hosts, i, 3),
		    .host_key_sha256 = store_isnull(hosts, i, 4) ? NULL : store_get(hosts, i, 4),
		};
		const char *pve_name = store_get(hosts, i, 5);
		st->nodes++;
		int asked = ask_node(t, &node, pve_name, guests);
		if (asked == 0) {
			add_array_item(&answered, pve_name);
			st->answered++;
		}
		if (asked >= 0)
			any = true;
	}
	{
		size_t n = strlen(answered);
		answered = xrealloc(answered, n + 2);
		answered[n] = '}';
		answered[n + 1] = '\0';
	}
	st->listed = cJSON_GetArraySize(guests);
	if (!any) {
		rc = 0; /* nobody answered: nothing is known, nothing changes */
		goto out;
	}
	text = cJSON_PrintUnformatted(guests);
	res = store_exec(db, "SELECT airlock.record_discovery($1::text[], $2::jsonb)", 2,
	                 (const char *const[]){answered, text});
	if (res == NULL) {
		char q[600];
		log_msg(LOG_WARN, "evt=discover.record_failed error=%s",
		        log_quote(store_errmsg(db), q, sizeof(q)));
		goto out;
	}
	result = cJSON_Parse(store_get(res, 0, 0));
	st->appeared = count_of(result, "appeared", "discover.appeared");
	st->moved = count_of(result, "moved", "discover.moved");
	st->gone = count_of(result, "gone", "discover.gone");
	st->returned = count_of(result, "returned", "discover.returned");
	st->conflicts = count_of(result, "conflicts", "discover.conflict");
	const cJSON *unknown = cJSON_GetObjectItemCaseSensitive(result, "unknown_nodes"), *u;
	cJSON_ArrayForEach(u, unknown)
	{
		char q[200];
		if (cJSON_IsString(u))
			log_msg(LOG_WARN,
			        "evt=discover.unknown_node pve_node=%s note=\"guests on a node the "
			        "inventory does not list are not managed; add the node (pve_node: "
			        "names it) to manage them\"",
			        log_quote(u->valuestring, q, sizeof(q)));
	}
	rc = 0;
out:
	log_msg(rc == 0 ? LOG_INFO : LOG_WARN,
	        "evt=discover.round nodes=%d answered=%d listed=%d appeared=%d moved=%d gone=%d "
	        "returned=%d conflicts=%d",
	        st->nodes, st->answered, st->listed, st->appeared, st->moved, st->gone,
	        st->returned, st->conflicts);
	cJSON_Delete(result);
	cJSON_Delete(guests);
	store_clear(res);
	store_clear(hosts);
	free(answered);
	free(text);
	return rc;
}
