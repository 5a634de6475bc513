/* doctor_estate.c -- `airlock doctor`'s checks of what airlockd talks to:
 * the nodes and their guests over SSH, the ZVM, the webhooks. */
#include "cli/doctor.h"
#include "lib/paths.h"

#include "classifier/classes.h"
#include "lib/xalloc.h"
#include "transport/transport.h"
#include "worker/discover.h"
#include "worker/guard.h"
#include "lib/buf.h"
#include "lib/redact.h"
#include "zerto/api.h"
#include "zerto/client.h"
#include "zerto/flr.h"
#include "zerto/protection.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Columns of the estate query. */
enum {
	E_SLUG,
	E_TYPE,
	E_NODE,
	E_VMID,
	E_ADDR,
	E_PORT,
	E_USER,
	E_PIN,
	E_ZVM,
	E_AGENT,
	E_CT,
	E_GONE,
	E_PVE_NODE
};

static struct store_res *estate(struct store *db)
{
	return store_exec(db,
	                  "SELECT e.slug, e.type, e.node, e.vmid, e.address, coalesce(e.port, 22),"
	                  " coalesce(e.ssh_user, 'root'), e.host_key_fingerprint,"
	                  " e.zerto_vm_identifier, e.attributes ->> 'qemu_guest_agent',"
	                  " e.attributes ->> 'container_status',"
	                  /* through to_jsonb: NULL on a schema without discovery */
	                  " to_jsonb(e) ->> 'gone_at',"
	                  " coalesce(to_jsonb(e) ->> 'pve_node', split_part(e.slug, ':', 2))"
	                  " FROM airlock.entities e"
	                  " ORDER BY e.type <> 'proxmox-host', e.slug",
	                  0, NULL);
}

static const char *val(const struct store_res *res, int row, int col)
{
	return store_isnull(res, row, col) ? NULL : store_get(res, row, col);
}

/* The name an entity is known by in logs: the slug without its type. */
static const char *short_name(const char *slug)
{
	const char *c = strchr(slug, ':');

	return c ? c + 1 : slug;
}

/* The key the daemon uses for a node: its own (ssh.node_keys) or the shared one. */
static const char *node_key(const struct config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nssh_node_keys; i++)
		if (strcmp(cfg->ssh_node_keys[i].node, name) == 0)
			return cfg->ssh_node_keys[i].private_key;
	return cfg->ssh_private_key;
}

/* The shell the target's commands get (transport_shell_probe): bash, as
 * the classifier judges them, or why nothing runs there.  Reported in the
 * target's own area (node or guest) as "<slug> shell". */
static void check_shell(struct doctor_ctx *c, struct transport *t, const struct transport_node *n,
                        const char *slug, enum target_type type, int vmid)
{
	const char *area = type == TARGET_PROXMOX_HOST ? "node" : "guest";
	struct transport_shell sh;
	char subject[300];

	snprintf(subject, sizeof(subject), "%s shell", slug);
	transport_shell_probe(t, n, type, vmid, c->timeout_ms, &sh);
	switch (sh.state) {
	case TRANSPORT_SHELL_BASH:
		doctor_add(c->r, area, subject, DOCTOR_OK, NULL, "%s", sh.detail);
		break;
	case TRANSPORT_SHELL_NONE:
		doctor_add(
		    c->r, area, subject, DOCTOR_FAIL,
		    "install bash in it (apt-get install bash; Alpine: apk add bash): airlock "
		    "runs every command under /bin/bash, the shell its classifier judges, and "
		    "runs nothing on a target without it",
		    "no bash: %s", sh.detail);
		break;
	case TRANSPORT_SHELL_UNKNOWN:
		doctor_add(c->r, area, subject, DOCTOR_SKIP, NULL, "skipped: %s", sh.detail);
		break;
	}
}

static void node_failed(struct doctor_report *r, const char *slug, const struct transport_node *n,
                        const struct transport_result *res, const struct config *cfg)
{
	char fix[1024];

	switch (res->error) {
	case TRANSPORT_ERR_HOSTKEY:
		snprintf(fix, sizeof(fix),
		         "compare `ssh-keyscan -p %d %s | ssh-keygen -lf -` with the key the node "
		         "shows on its console (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub); "
		         "when they match, put the keyscan line in %s (or pin "
		         "host_key_fingerprint in the inventory)",
		         n->port, n->address, cfg->ssh_known_hosts);
		break;
	case TRANSPORT_ERR_AUTH:
		snprintf(fix, sizeof(fix),
		         "add %s.pub to ~%s/.ssh/authorized_keys on the node, restricted with "
		         "from=\"<this host's address>\" (docs/deploy.md)",
		         node_key(cfg, n->name), n->user);
		break;
	case TRANSPORT_ERR_CONNECT:
		snprintf(fix, sizeof(fix),
		         "check address and port of %s in the inventory, that sshd runs on the "
		         "node, and the network path from this host to %s:%d",
		         slug, n->address, n->port);
		break;
	default:
		snprintf(fix, sizeof(fix), "see the node's sshd log (journalctl -u ssh)");
		break;
	}
	doctor_add(r, "node", slug, DOCTOR_FAIL, fix, "%s@%s:%d: %s (%s)", n->user, n->address,
	           n->port, res->errmsg, transport_error_name(res->error));
}

/* Logs in, checks the host key, finds qm and pct.  Returns whether the node
 * can be asked about its guests. */
/* Does the node's own answer about the cluster name it as the inventory
 * does?  Discovery needs it (a node that does not is never trusted to say
 * which of its guests are gone). */
static void check_cluster_name(struct doctor_ctx *c, struct transport *t,
                               const struct transport_node *n, const char *slug,
                               const char *pve_name)
{
	struct transport_limits lim = {.timeout_ms = c->timeout_ms, .output_cap = 16u << 20};
	struct transport_result res;
	cJSON *guests = cJSON_CreateArray(), *nodes = cJSON_CreateArray(), *x;
	char subject[200], why[300] = "", names[300] = "";
	bool named = false;

	snprintf(subject, sizeof(subject), "%s cluster name", slug);
	transport_exec(t, n, TARGET_PROXMOX_HOST, 0, DISCOVER_COMMAND, &lim, &res);
	if (res.status != TRANSPORT_EXITED || res.exit_code != 0) {
		doctor_add(c->r, "node", subject, DOCTOR_WARN,
		           "run `" DISCOVER_COMMAND "` as root on the node: discovery needs it",
		           "the node could not list the cluster's resources (%s, exit %d): %.200s",
		           transport_status_name(res.status), res.exit_code,
		           res.status == TRANSPORT_EXITED ? (res.err ? res.err : "") : res.errmsg);
		goto out;
	}
	if (discover_parse(res.out, res.out_len, pve_name, guests, nodes, why, sizeof(why)) < 0) {
		doctor_add(c->r, "node", subject, DOCTOR_WARN, "check the node's pvesh",
		           "the node's list of the cluster's resources is unreadable: %s", why);
		goto out;
	}
	cJSON_ArrayForEach(x, nodes)
	{
		if (!cJSON_IsString(x))
			continue;
		if (strcmp(x->valuestring, pve_name) == 0)
			named = true;
		size_t len = strlen(names);
		snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "", x->valuestring);
	}
	if (named)
		doctor_add(c->r, "node", subject, DOCTOR_OK, NULL,
		           "the cluster knows it as %s; it lists %d guests", pve_name,
		           cJSON_GetArraySize(guests));
	else
		doctor_add(
		    c->r, "node", subject, DOCTOR_WARN,
		    "set pve_node: to this node's name among them on its entity in the "
		    "inventory, then airlock seed",
		    "the cluster has no node named %s (its nodes: %s): discovery will not mark "
		    "any of its guests gone, nor follow them here",
		    pve_name, names[0] ? names : "none listed");
out:
	cJSON_Delete(guests);
	cJSON_Delete(nodes);
	transport_result_free(&res);
}

static bool check_node(struct doctor_ctx *c, struct transport *t, const struct store_res *e,
                       int row)
{
	const char *slug = val(e, row, E_SLUG);
	struct transport_node n = {
	    .name = short_name(slug),
	    .address = val(e, row, E_ADDR),
	    .port = atoi(val(e, row, E_PORT)),
	    .user = val(e, row, E_USER),
	    .host_key_sha256 = val(e, row, E_PIN),
	};
	struct transport_limits lim = {.timeout_ms = c->timeout_ms};
	struct transport_result res;
	bool ok = false;

	transport_exec(t, &n, TARGET_PROXMOX_HOST, 0,
	               "command -v qm >/dev/null && command -v pct >/dev/null && echo pve", &lim,
	               &res);
	if (res.status == TRANSPORT_EXITED && res.exit_code == 0 && strstr(res.out, "pve")) {
		doctor_add(c->r, "node", slug, DOCTOR_OK, NULL,
		           "%s@%s:%d reachable, host key matches %s, qm and pct present", n.user,
		           n.address, n.port,
		           n.host_key_sha256 ? "the pinned fingerprint" : "known_hosts");
		ok = true;
		check_cluster_name(c, t, &n, slug, val(e, row, E_PVE_NODE));
		check_shell(c, t, &n, slug, TARGET_PROXMOX_HOST, 0);
	} else if (res.status == TRANSPORT_EXITED) {
		doctor_add(c->r, "node", slug, DOCTOR_FAIL,
		           "point the entity at a Proxmox VE node (qm and pct must be on root's "
		           "PATH)",
		           "%s@%s:%d reachable, but qm or pct is missing (exit %d)", n.user,
		           n.address, n.port, res.exit_code);
		ok = true; /* reachable: its guests' checks will say more */
	} else if (res.status == TRANSPORT_FAILED || res.status == TRANSPORT_UNKNOWN) {
		node_failed(c->r, slug, &n, &res, c->cfg);
	} else {
		doctor_add(c->r, "node", slug, DOCTOR_FAIL, "see the node's sshd log",
		           "%s@%s:%d: the check command did not finish (%s)", n.user, n.address,
		           n.port, transport_status_name(res.status));
	}
	transport_result_free(&res);
	return ok;
}

static void guest_result(struct doctor_report *r, const struct store_res *e, int row,
                         const struct transport_probe *p)
{
	const char *slug = val(e, row, E_SLUG), *vmid = val(e, row, E_VMID);
	bool vm = strcmp(val(e, row, E_TYPE), "vm") == 0;
	const char *recorded = vm ? val(e, row, E_AGENT) : val(e, row, E_CT);
	const char *seen = vm ? transport_agent_attr(p->state)
	                      : (p->state == TRANSPORT_PROBE_OK            ? "running"
	                         : p->state == TRANSPORT_PROBE_NOT_RUNNING ? "stopped"
	                                                                   : NULL);
	char note[160] = "", fix[512];

	if (seen && recorded && strcmp(seen, recorded) != 0)
		snprintf(note, sizeof(note), " (the database still says %s; the probes correct it)",
		         recorded);
	switch (p->state) {
	case TRANSPORT_PROBE_OK:
		doctor_add(r, "guest", slug, DOCTOR_OK, NULL, "%s%s",
		           vm ? "guest agent running, guest-exec enabled" : "container running",
		           note);
		return;
	case TRANSPORT_PROBE_NOT_RUNNING:
		if (vm)
			snprintf(fix, sizeof(fix),
			         "start the QEMU guest agent inside the VM (systemctl start "
			         "qemu-guest-agent); until then runs on %s are refused",
			         slug);
		else
			snprintf(fix, sizeof(fix),
			         "pct start %s on the node if it should run; until then runs on %s "
			         "are refused",
			         vmid, slug);
		doctor_add(r, "guest", slug, DOCTOR_WARN, fix, "%s%s",
		           vm ? "guest agent not answering" : "container stopped", note);
		return;
	case TRANSPORT_PROBE_NOT_CONFIGURED:
		snprintf(fix, sizeof(fix),
		         "qm set %s --agent enabled=1 on the node, install qemu-guest-agent in the "
		         "guest, then stop and start the VM",
		         vmid);
		doctor_add(r, "guest", slug, DOCTOR_WARN, fix, "no guest agent configured%s", note);
		return;
	case TRANSPORT_PROBE_EXEC_DISABLED:
		doctor_add(r, "guest", slug, DOCTOR_WARN,
		           "allow guest-exec in the guest agent's configuration (it is blocked "
		           "by --block-rpcs or --allow-rpcs)",
		           "the guest agent answers but guest-exec is disabled%s", note);
		return;
	case TRANSPORT_PROBE_VM_STOPPED:
		snprintf(fix, sizeof(fix), "qm start %s on the node if it should run", vmid);
		doctor_add(r, "guest", slug, DOCTOR_WARN, fix, "the VM is not running%s", note);
		return;
	case TRANSPORT_PROBE_NO_SUCH_GUEST:
		snprintf(fix, sizeof(fix),
		         "correct vmid or node of %s in inventory.yaml and airlock seed it (a "
		         "migrated guest lives on another node)",
		         slug);
		doctor_add(r, "guest", slug, DOCTOR_FAIL, fix, "the node has no %s %s: %s",
		           vm ? "VM" : "container", vmid, p->detail);
		return;
	case TRANSPORT_PROBE_UNREACHABLE:
		doctor_add(r, "guest", slug, DOCTOR_SKIP, NULL,
		           "skipped: its node could not be asked (%s)", p->detail);
		return;
	case TRANSPORT_PROBE_ERROR:
		doctor_add(r, "guest", slug, DOCTOR_FAIL, "see the node's qm/pct output",
		           "an answer doctor does not understand: %s", p->detail);
		return;
	}
}

/* Probes the guests in rows [from, to) that live on node `host`. */
static void check_guests(struct doctor_ctx *c, struct transport *t, const struct store_res *e,
                         int hrow, bool reachable)
{
	const char *host = val(e, hrow, E_SLUG);
	struct transport_node n = {
	    .name = short_name(host),
	    .address = val(e, hrow, E_ADDR),
	    .port = atoi(val(e, hrow, E_PORT)),
	    .user = val(e, hrow, E_USER),
	    .host_key_sha256 = val(e, hrow, E_PIN),
	};
	int rows = store_nrows(e), n_guests = 0;
	struct transport_probe *pr = xcalloc((size_t)rows, sizeof(*pr));
	int *row_of = xcalloc((size_t)rows, sizeof(*row_of));

	for (int i = 0; i < rows; i++) {
		const char *node = val(e, i, E_NODE);
		if (node == NULL || strcmp(node, host) != 0)
			continue;
		if (val(e, i, E_GONE)) {
			doctor_add(
			    c->r, "guest", val(e, i, E_SLUG), DOCTOR_WARN,
			    "remove it from the inventory if it was deleted, or add the node it "
			    "moved to (docs/operators.md, Discovery)",
			    "gone since %s: no node airlock manages lists it; requests on it "
			    "are refused",
			    val(e, i, E_GONE));
			continue;
		}
		if (!reachable) {
			doctor_add(c->r, "guest", val(e, i, E_SLUG), DOCTOR_SKIP, NULL,
			           "skipped: its node %s is not reachable", host);
			continue;
		}
		pr[n_guests].kind = strcmp(val(e, i, E_TYPE), "vm") == 0 ? TRANSPORT_PROBE_AGENT
		                                                         : TRANSPORT_PROBE_CT;
		pr[n_guests].vmid = atoi(val(e, i, E_VMID));
		row_of[n_guests++] = i;
	}
	if (n_guests > 0) {
		transport_probe(t, &n, pr, (size_t)n_guests, c->timeout_ms);
		for (int k = 0; k < n_guests; k++) {
			guest_result(c->r, e, row_of[k], &pr[k]);
			/* A guest that can run commands: which shell they get. */
			if (pr[k].state == TRANSPORT_PROBE_OK)
				check_shell(c, t, &n, val(e, row_of[k], E_SLUG),
				            pr[k].kind == TRANSPORT_PROBE_AGENT ? TARGET_VM
				                                                : TARGET_LXC,
				            pr[k].vmid);
		}
	}
	free(pr);
	free(row_of);
}

void doctor_nodes(struct doctor_ctx *c)
{
	struct transport_config tc = {0};
	struct transport_node_key keys[CONFIG_MAX_NODE_KEYS];
	struct transport *t = NULL;
	struct store_res *e = NULL;
	char err[512];

	if (c->cfg == NULL || c->db == NULL) {
		doctor_add(c->r, "node", "all nodes", DOCTOR_SKIP, NULL, "skipped: %s",
		           c->cfg == NULL ? "no valid configuration (the SSH key and "
		                            "known_hosts come from it)"
		                          : "the database (the inventory) is not usable");
		return;
	}
	e = estate(c->db);
	if (e == NULL) {
		doctor_add(c->r, "node", "all nodes", DOCTOR_FAIL,
		           "run doctor as the database administrator",
		           "cannot read the inventory: %s", store_errmsg(c->db));
		return;
	}
	tc.private_key = c->cfg->ssh_private_key;
	tc.known_hosts = c->cfg->ssh_known_hosts;
	for (int i = 0; i < c->cfg->nssh_node_keys; i++)
		keys[i] = (struct transport_node_key){c->cfg->ssh_node_keys[i].node,
		                                      c->cfg->ssh_node_keys[i].private_key};
	tc.node_keys = keys;
	tc.nnode_keys = (size_t)c->cfg->nssh_node_keys;
	tc.connect_timeout_ms = c->cfg->ssh_connect_timeout_ms;
	tc.keepalive_s = c->cfg->ssh_keepalive_s;
	tc.qm_timeout_s = c->cfg->qm_timeout_s;
	t = transport_new(&tc, err, sizeof(err));
	if (t == NULL) {
		doctor_add(c->r, "node", "all nodes", DOCTOR_FAIL,
		           "check ssh.private_key and ssh.known_hosts in the configuration", "%s",
		           err);
		goto out;
	}
	{
		struct transport_node *up = xcalloc((size_t)store_nrows(e) + 1, sizeof(*up));
		const char **slugs = xcalloc((size_t)store_nrows(e) + 1, sizeof(*slugs));
		size_t nup = 0;

		for (int i = 0; i < store_nrows(e); i++) {
			if (strcmp(val(e, i, E_TYPE), "proxmox-host") != 0)
				continue;
			bool reachable = check_node(c, t, e, i);
			check_guests(c, t, e, i, reachable);
			if (reachable) {
				up[nup] = (struct transport_node){
				    .name = short_name(val(e, i, E_SLUG)),
				    .address = val(e, i, E_ADDR),
				    .port = atoi(val(e, i, E_PORT)),
				    .user = val(e, i, E_USER),
				    .host_key_sha256 = val(e, i, E_PIN),
				};
				slugs[nup++] = val(e, i, E_SLUG);
			}
		}
		/* every key the nodes accept, once all have said which are their own */
		doctor_root_keys(c, t, up, slugs, nup);
		free(up);
		free(slugs);
	}
out:
	transport_free(t);
	store_clear(e);
}

/* ------------------------------------------------------------------- zerto */

static bool tls_problem(const struct zerto_err *ze)
{
	return ze->kind == ZERTO_ERR_UNREACHABLE &&
	       (strstr(ze->msg, "SSL") || strstr(ze->msg, "certificate") || strstr(ze->msg, "TLS"));
}

static void check_protection(struct doctor_ctx *c, struct zerto_client *z,
                             const struct store_res *e)
{
	for (int i = 0; i < store_nrows(e); i++) {
		const char *slug = val(e, i, E_SLUG), *zid = val(e, i, E_ZVM);
		struct zerto_protection p;
		char fix[512];

		if (strcmp(val(e, i, E_TYPE), "vm") != 0)
			continue;
		zerto_protection(z, zid, short_name(slug), &p);
		switch (p.state) {
		case ZERTO_PROT_PROTECTED:
			if (p.ntaggable < p.nvpgs)
				doctor_add(
				    c->r, "zerto", slug, DOCTOR_WARN,
				    "check those VPGs' state in the ZVM (a VPG that is not "
				    "meeting its SLA or is being changed cannot take a checkpoint)",
				    "in %d VPG(s), %d of which can take a checkpoint now: %s",
				    p.nvpgs, p.ntaggable, p.summary);
			else
				doctor_add(c->r, "zerto", slug, DOCTOR_OK, NULL, "%s", p.summary);
			break;
		case ZERTO_PROT_NOT_PROTECTED:
			if (zid) {
				snprintf(fix, sizeof(fix),
				         "the inventory maps %s to Zerto VM %s: correct "
				         "zerto_vm_identifier, or protect the VM in a VPG",
				         slug, zid);
				doctor_add(c->r, "zerto", slug, DOCTOR_FAIL, fix, "%s", p.summary);
			} else {
				doctor_add(
				    c->r, "zerto", slug, DOCTOR_WARN,
				    "protect it in a VPG if its changes should be rewindable "
				    "(until then a mutating change needs an approval given "
				    "knowing there is no rewind point)",
				    "%s", p.summary);
			}
			break;
		case ZERTO_PROT_AMBIGUOUS:
			snprintf(fix, sizeof(fix),
			         "set zerto_vm_identifier for %s in inventory.yaml (the VM's "
			         "identifier in Zerto) and airlock seed it",
			         slug);
			doctor_add(c->r, "zerto", slug, DOCTOR_FAIL, fix, "%s", p.summary);
			break;
		case ZERTO_PROT_UNREACHABLE:
			doctor_add(c->r, "zerto", slug, DOCTOR_FAIL, "see the zerto login check",
			           "%s", p.summary);
			break;
		}
	}
}

/* File-level restore sessions left mounted longer than the configured age:
 * each blocks the next recovery of its VM. */
static void doctor_flr_sessions(struct doctor_ctx *c, struct zerto_client *z,
                                const struct config *cfg)
{
	struct zerto_flr_session *ss = NULL;
	size_t n = 0, stale = 0;
	struct zerto_err e = {0};
	int64_t now_ms = 0;
	struct buf ids = BUF_INIT;

	buf_init(&ids, 2048);
	if (zerto_flr_list(z, NULL, &ss, &n, &e) < 0 || zerto_server_time(z, &now_ms, &e) < 0) {
		doctor_add(c->r, "zerto", "FLR sessions", DOCTOR_WARN,
		           "check the ZVM user's file-level restore rights", "cannot list them: %s",
		           e.msg);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		long age = ss[i].mount_ms ? (long)((now_ms - ss[i].mount_ms) / 1000) : -1;

		if (age < cfg->recover_flr_session_warn_s)
			continue;
		buf_printf(&ids, "%s%s (%ld s)", stale++ ? ", " : "", ss[i].id, age);
	}
	if (stale > 0)
		doctor_add(c->r, "zerto", "FLR sessions", DOCTOR_WARN,
		           "end each with `airlock flr end ID` once nobody uses it: a session left "
		           "mounted blocks the next recovery of its VM",
		           "%zu file-level restore session(s) mounted longer than %d s: %s", stale,
		           cfg->recover_flr_session_warn_s, buf_str(&ids));
	else
		doctor_add(c->r, "zerto", "FLR sessions", DOCTOR_OK, NULL,
		           "%zu file-level restore session(s), none older than %d s", n,
		           cfg->recover_flr_session_warn_s);
out:
	zerto_flr_sessions_free(ss, n);
	buf_free(&ids);
}

void doctor_zerto(struct doctor_ctx *c)
{
	const struct config *cfg = c->cfg;
	struct zerto_client *z = NULL;
	struct zerto_err ze = {0};
	cJSON *site = NULL;
	struct store_res *e = NULL;
	char *shown = NULL; /* the ZVM's URL as logs show it (lib/redact.h) */
	char err[512];

	if (cfg == NULL) {
		doctor_add(c->r, "zerto", "ZVM", DOCTOR_SKIP, NULL,
		           "skipped: no valid configuration");
		return;
	}
	if (cfg->zerto_url == NULL) {
		doctor_add(c->r, "zerto", "ZVM", DOCTOR_WARN,
		           "add a zerto: section to the configuration for rewind points",
		           "not configured: no change gets a rewind point");
		return;
	}
	shown = redact_url(cfg->zerto_url);
	struct zerto_config zc;
	guard_zerto_config(cfg, &zc); /* as airlockd builds it, within doctor's own bound */
	if (c->timeout_ms < zc.request_timeout_ms)
		zc.request_timeout_ms = c->timeout_ms;
	z = zerto_client_new(&zc, err, sizeof(err));
	if (z == NULL) {
		doctor_add(c->r, "zerto", shown, DOCTOR_FAIL,
		           "check the zerto section (secret_file readable by root, secret_env set "
		           "in the environment)",
		           "%s", err);
		goto out;
	}
	if (zerto_client_get(z, "/v1/localsite", &site, &ze) < 0) {
		const char *fix =
		    tls_problem(&ze)
		        ? "ca_file must hold the CA that signed the ZVM's certificate, "
		          "and url must use the name in that certificate"
		    : ze.kind == ZERTO_ERR_AUTH
		        ? "check client_id and the secret (and username for the password grant) "
		          "against the Keycloak client of the ZVM"
		        : "check url, DNS and the network path to the ZVM (port 443)";
		doctor_add(c->r, "zerto", tls_problem(&ze) ? "tls" : "login", DOCTOR_FAIL, fix,
		           "%s: %s", shown, ze.msg);
		goto out;
	}
	doctor_add(c->r, "zerto", "login", DOCTOR_OK, NULL, "logged in to %s", shown);
	if (cfg->zerto_verify_tls)
		doctor_add(c->r, "zerto", "tls", DOCTOR_OK, NULL, "certificate verified against %s",
		           cfg->zerto_ca_file ? cfg->zerto_ca_file : "the system's CA store");
	else
		doctor_add(c->r, "zerto", "tls", DOCTOR_WARN,
		           "set verify_tls: true and ca_file to the CA that signed the ZVM's "
		           "certificate",
		           "verification is off: anyone on the path can pose as the ZVM");
	doctor_flr_sessions(c, z, cfg);
	if (c->db == NULL) {
		doctor_add(c->r, "zerto", "VMs", DOCTOR_SKIP, NULL,
		           "skipped: the database (the inventory) is not usable");
		goto out;
	}
	e = estate(c->db);
	if (e == NULL) {
		doctor_add(c->r, "zerto", "VMs", DOCTOR_FAIL, NULL, "cannot read the inventory: %s",
		           store_errmsg(c->db));
		goto out;
	}
	check_protection(c, z, e);
out:
	store_clear(e);
	cJSON_Delete(site);
	zerto_client_free(z);
	free(shown);
}

/* ---------------------------------------------------------------- webhooks */

void doctor_webhooks(struct doctor_ctx *c)
{
	if (c->cfg == NULL) {
		doctor_add(c->r, "webhook", "all webhooks", DOCTOR_SKIP, NULL,
		           "skipped: no valid configuration");
		return;
	}
	for (int i = 0; i < c->cfg->nwebhooks; i++) {
		const struct config_webhook *w = &c->cfg->webhooks[i];
		CURL *h = curl_easy_init();
		char cerr[CURL_ERROR_SIZE] = "";
		long timeout = w->timeout_ms < c->timeout_ms ? w->timeout_ms : c->timeout_ms;
		CURLcode rc;
		/* Named as the delivery records and the logs name it: a webhook's
		 * URL carries its secret after the host (lib/redact.h), and a
		 * report gets pasted into tickets. */
		char *url = redact_url(w->url);
		char subject[512];

		snprintf(subject, sizeof(subject), "%s %s", w->name ? w->name : "webhook", url);
		free(url);
		if (h == NULL) {
			doctor_add(c->r, "webhook", subject, DOCTOR_FAIL, NULL,
			           "curl_easy_init failed");
			continue;
		}
		/* A connection (and TLS handshake) only: a POST would notify people. */
		curl_easy_setopt(h, CURLOPT_URL, w->url);
		curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout);
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
		curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
		rc = curl_easy_perform(h);
		if (rc == CURLE_OK)
			doctor_add(c->r, "webhook", subject, DOCTOR_OK, NULL, "reachable%s%s",
			           strncmp(w->url, "https:", 6) == 0 ? " (TLS verified)" : "",
			           w->operator_name ? ", skipped for its operator's own requests"
			                            : "");
		else
			doctor_add(c->r, "webhook", subject, DOCTOR_FAIL,
			           "check the URL and the network path from this host (approval "
			           "notifications go nowhere until it answers)",
			           "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
		curl_easy_cleanup(h);
	}
	if (c->cfg->nwebhooks == 0)
		doctor_add(c->r, "webhook", "webhooks", DOCTOR_WARN,
		           "add webhooks: to the configuration so operators hear of held requests",
		           "none configured: operators learn of held requests only from airlock "
		           "pending");
}

/* ---- the jail ---------------------------------------------------------------- */

void doctor_jail(struct doctor_ctx *c)
{
	char *path = c->cfg && c->cfg->jail_helper ? xstrdup(c->cfg->jail_helper) : NULL;
	struct store_res *res;
	struct stat st;

	if (path == NULL) {
		path = paths_share_sub("airlock-jail");
		if (access(path, R_OK) != 0) {
			free(path);
			path = paths_share_sub("build/bin/airlock-jail");
		}
	}
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    st.st_size <= 1024 * 1024)
		doctor_add(c->r, "jail", "helper", DOCTOR_OK, NULL,
		           "%s (%lld bytes): copied to each target on first use", path,
		           (long long)st.st_size);
	else
		doctor_add(c->r, "jail", "helper", DOCTOR_FAIL,
		           "build it (make) or install the package; set jail.helper in "
		           "airlockd.yaml if it lives elsewhere",
		           "%s is missing or not a file under 1 MiB: every command nobody approved "
		           "goes to a human",
		           path);
	free(path);
	if (c->db == NULL) {
		doctor_add(c->r, "jail", "targets", DOCTOR_SKIP, NULL,
		           "skipped: the database could not be asked");
		return;
	}
	res =
	    store_exec(c->db,
	               "SELECT e.slug, coalesce(e.attributes ->> 'confinement', 'unknown'),"
	               " coalesce(k.detail, '') FROM airlock.entities e"
	               " LEFT JOIN airlock.checks k ON k.entity = e.slug AND k.name = 'confinement'"
	               " WHERE to_jsonb(e) ->> 'gone_at' IS NULL ORDER BY e.slug",
	               0, NULL);
	for (int i = 0; res && i < store_nrows(res); i++) {
		const char *slug = store_get(res, i, 0), *conf = store_get(res, i, 1),
		           *detail = store_get(res, i, 2);
		if (strcmp(conf, "full") == 0)
			doctor_add(c->r, "jail", slug, DOCTOR_OK, NULL, "%s", detail);
		else if (strcmp(conf, "unknown") == 0)
			doctor_add(
			    c->r, "jail", slug, DOCTOR_SKIP, NULL,
			    "not probed yet: airlockd builds the jail there on its first rounds");
		else
			doctor_add(
			    c->r, "jail", slug, DOCTOR_WARN,
			    strcmp(conf, "none") == 0
			        ? "every command nobody approved on this target waits for a "
			          "human; see the reason"
			        : "observations run; reversible_low changes and root-tier "
			          "observations there wait for a human (give the target a cgroup)",
			    "%s: %s", conf, detail);
	}
	store_clear(res);
}
