/* doctor_keys.c -- `airlock doctor`'s look at every key each node accepts
 * for its SSH user (root): the authorized_keys files sshd reads (its own
 * AuthorizedKeysFile, and Proxmox's cluster file /etc/pve/priv/authorized_keys
 * that /root/.ssh/authorized_keys links to on a PVE node), each key judged
 * airlockd's (the configuration's keys), a cluster node's own (the root
 * keys the managed nodes hold), or neither: a way in that airlock does not
 * hold.  One fixed, read-only command per node. */
#include "cli/doctor.h"

#include "classifier/classes.h"
#include "lib/readfile.h"
#include "lib/sshkey.h"
#include "lib/xalloc.h"
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What the node says: C <sshd -T line>, F <file> <real path>, K <file>:<n>:<line>, O <own key>. */
static const char keys_script[] =
    "H=$(getent passwd root 2>/dev/null | cut -d: -f6); H=${H:-/root}\n"
    "T=$(sshd -T -C user=root,host=localhost,addr=127.0.0.1,laddr=127.0.0.1,lport=22 "
    "2>/dev/null)\n"
    "printf '%s\\n' \"$T\" | grep -iE "
    "'^(authorizedkeysfile|authorizedkeyscommand|trustedusercakeys|authorizedprincipalsfile) ' "
    "| sed 's/^/C /'\n"
    "files=$(printf '%s\\n' \"$T\" | awk 'tolower($1)==\"authorizedkeysfile\"{for(i=2;i<=NF;i++)"
    "print $i}')\n"
    "[ -n \"$files\" ] || files='.ssh/authorized_keys .ssh/authorized_keys2'\n"
    "seen=\n"
    "for f in $files /etc/pve/priv/authorized_keys; do\n"
    "  f=$(printf '%s' \"$f\" | sed \"s#%h#$H#g; s#%u#root#g; s#%%#%#g\")\n"
    "  case $f in /*) ;; *) f=$H/$f;; esac\n"
    "  [ -e \"$f\" ] || continue\n"
    "  r=$(readlink -f \"$f\")\n"
    "  echo \"F $f $r\"\n"
    "  case \" $seen \" in *\" $r \"*) continue;; esac\n"
    "  seen=\"$seen $r\"\n"
    "  grep -n '' \"$r\" | head -n 2000 | sed \"s#^#K $r:#\"\n"
    "done\n"
    "for p in $H/.ssh/id_*.pub; do [ -r \"$p\" ] && sed 's/^/O /' \"$p\"; done\n"
    "exit 0\n";

struct node_keys {
	char slug[200];
	struct transport_result res;
	bool ok;
};

/* airlockd's public keys: each configured private key's public half (the
 * key file itself for OpenSSH's format, else KEY.pub beside it). */
static size_t daemon_keys(const struct config *cfg, struct sshkey_pub *out, size_t max,
                          struct doctor_report *r)
{
	const char *paths[CONFIG_MAX_NODE_KEYS + 1];
	size_t np = 0, n = 0;

	paths[np++] = cfg->ssh_private_key;
	for (int i = 0; i < cfg->nssh_node_keys && np < CONFIG_MAX_NODE_KEYS + 1; i++)
		paths[np++] = cfg->ssh_node_keys[i].private_key;
	for (size_t i = 0; i < np && n < max; i++) {
		char err[256];
		size_t len;
		char *text = paths[i] ? readfile(paths[i], 1 << 20, &len, err, sizeof(err)) : NULL;
		char *pub = NULL;

		if (text != NULL &&
		    sshkey_public_of_private(text, len, &out[n], err, sizeof(err)) == 0) {
			n++;
		} else if (paths[i] != NULL) {
			char *pp = xasprintf("%s.pub", paths[i]);

			pub = readfile(pp, 1 << 20, &len, err, sizeof(err));
			if (pub != NULL && sshkey_parse_line(pub, len, &out[n]) == 0)
				n++;
			else
				doctor_add(
				    r, "keys", "root keys", DOCTOR_WARN,
				    "put the key's public half beside it (KEY.pub)",
				    "cannot read the public half of airlockd's key %s: its line in "
				    "the nodes' authorized_keys cannot be told from another",
				    paths[i]);
			free(pp);
		}
		free(text);
		free(pub);
	}
	return n;
}

static void judge_node(struct doctor_ctx *c, const struct node_keys *nk,
                       const struct sshkey_pub *mine, size_t nmine,
                       const struct sshkey_pub *cluster, const char *const *cluster_of,
                       size_t ncluster)
{
	char *text = xstrndup(nk->res.out ? nk->res.out : "", nk->res.out_len);
	char subject[260];
	int keys = 0, foreign = 0;

	snprintf(subject, sizeof(subject), "%s root keys", nk->slug);
	for (char *line = text, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (line[0] == 'C' && line[1] == ' ') {
			char *v = strchr(line + 2, ' ');

			if (v == NULL || strcmp(v + 1, "none") == 0)
				continue;
			if (strncasecmp(line + 2, "authorizedkeyscommand", 21) == 0)
				doctor_add(
				    c->r, "keys", subject, DOCTOR_WARN,
				    "list its keys yourself, or remove the AuthorizedKeysCommand",
				    "sshd also takes keys from a command (%s): doctor cannot list "
				    "them",
				    v + 1);
			else if (strncasecmp(line + 2, "trustedusercakeys", 17) == 0)
				doctor_add(
				    c->r, "keys", subject, DOCTOR_WARN,
				    "make sure no certificate for root is signed for a host that "
				    "is not airlockd's",
				    "sshd accepts certificates signed by the CA keys in %s: any "
				    "key with such a certificate logs in",
				    v + 1);
		} else if (line[0] == 'F' && line[1] == ' ') {
			char *real = strchr(line + 2, ' ');

			if (real == NULL)
				continue;
			*real = '\0';
			if (strcmp(real + 1, line + 2) != 0) {
				doctor_add(
				    c->r, "keys", subject, DOCTOR_OK, NULL,
				    "%s links to %s (as on a Proxmox VE node): its keys are the "
				    "cluster's",
				    line + 2, real + 1);
			}
		} else if (line[0] == 'K' && line[1] == ' ') {
			char *file = line + 2, *c1, *c2;
			struct sshkey_pub k;
			char fp[128];
			const char *whose = NULL;

			/* K file:N:line, the file holding no ':' of its own after the path */
			c1 = strchr(file, ':');
			c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (c1 == NULL || c2 == NULL)
				continue;
			*c1 = *c2 = '\0';
			if (sshkey_parse_line(c2 + 1, strlen(c2 + 1), &k) < 0)
				continue;
			keys++;
			sshkey_fingerprint(&k, fp, sizeof(fp));
			for (size_t i = 0; i < nmine && whose == NULL; i++)
				if (sshkey_same(&k, &mine[i]))
					whose = "airlockd's";
			for (size_t i = 0; i < ncluster && whose == NULL; i++)
				if (sshkey_same(&k, &cluster[i]))
					whose = cluster_of[i];
			if (whose == NULL) {
				char fix[700];

				foreign++;
				snprintf(
				    fix, sizeof(fix),
				    "remove line %s of %s on %s, unless it is the key of a cluster "
				    "node airlock does not manage (then add that node to the "
				    "inventory): whoever holds it logs in as root outside airlock",
				    c1 + 1, file, nk->slug);
				doctor_add(
				    c->r, "keys", subject, DOCTOR_FAIL, fix,
				    "%s%s%s%s in %s:%s is neither airlockd's nor a cluster node's",
				    fp, k.comment[0] ? " (" : "", k.comment,
				    k.comment[0] ? ")" : "", file, c1 + 1);
			} else {
				doctor_add(c->r, "keys", subject,
				           strcmp(whose, "airlockd's") == 0 &&
				                   (k.options == NULL ||
				                    strstr(k.options, "from=") == NULL)
				               ? DOCTOR_WARN
				               : DOCTOR_OK,
				           strcmp(whose, "airlockd's") == 0
				               ? "restrict it: restrict,from=\"<airlockd's "
				                 "address>\" before "
				                 "the key (docs/deploy.md)"
				               : NULL,
				           "%s in %s:%s is %s%s", fp, file, c1 + 1, whose,
				           strcmp(whose, "airlockd's") == 0 &&
				                   (k.options == NULL ||
				                    strstr(k.options, "from=") == NULL)
				               ? ", and it logs in from any address"
				               : "");
			}
			sshkey_clear(&k);
		}
	}
	if (keys == 0)
		doctor_add(c->r, "keys", subject, DOCTOR_WARN,
		           "check that airlockd's key is in the node's authorized_keys",
		           "no key found in the node's authorized_keys files");
	else if (foreign == 0)
		doctor_add(c->r, "keys", subject, DOCTOR_OK, NULL,
		           "%d key(s) accepted for root, each airlockd's or a cluster node's",
		           keys);
	free(text);
}

void doctor_root_keys(struct doctor_ctx *c, struct transport *t, const struct transport_node *nodes,
                      const char *const *slugs, size_t n)
{
	struct sshkey_pub mine[CONFIG_MAX_NODE_KEYS + 1], *cluster = NULL;
	const char **cluster_of = NULL;
	size_t nmine, ncluster = 0;
	struct node_keys *nk = xcalloc(n ? n : 1, sizeof(*nk));

	if (n == 0) {
		free(nk);
		return;
	}
	nmine = daemon_keys(c->cfg, mine, CONFIG_MAX_NODE_KEYS + 1, c->r);
	/* every node's answer first: a node's own keys vouch for it on the others */
	for (size_t i = 0; i < n; i++) {
		struct transport_limits lim = {.timeout_ms = c->timeout_ms, .output_cap = 1 << 20};

		snprintf(nk[i].slug, sizeof(nk[i].slug), "%s", slugs[i]);
		transport_exec(t, &nodes[i], TARGET_PROXMOX_HOST, 0, keys_script, &lim, &nk[i].res);
		nk[i].ok = nk[i].res.status == TRANSPORT_EXITED && nk[i].res.exit_code == 0;
		if (!nk[i].ok) {
			char subject[260];

			snprintf(subject, sizeof(subject), "%s root keys", slugs[i]);
			doctor_add(c->r, "keys", subject, DOCTOR_FAIL, "see the node's sshd log",
			           "the node could not list the keys it accepts (%s): %.200s",
			           transport_status_name(nk[i].res.status), nk[i].res.errmsg);
			continue;
		}
		{
			char *text =
			    xstrndup(nk[i].res.out ? nk[i].res.out : "", nk[i].res.out_len);

			for (char *line = text, *nl; line && *line; line = nl) {
				nl = strchr(line, '\n');
				if (nl)
					*nl++ = '\0';
				if (line[0] != 'O' || line[1] != ' ')
					continue;
				cluster = xrealloc(cluster, (ncluster + 1) * sizeof(*cluster));
				cluster_of =
				    xrealloc(cluster_of, (ncluster + 1) * sizeof(*cluster_of));
				if (sshkey_parse_line(line + 2, strlen(line + 2),
				                      &cluster[ncluster]) == 0)
					cluster_of[ncluster++] = xasprintf(
					    "%s's own root key (the cluster's)", slugs[i]);
			}
			free(text);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (nk[i].ok)
			judge_node(c, &nk[i], mine, nmine, cluster, cluster_of, ncluster);
	for (size_t i = 0; i < n; i++)
		transport_result_free(&nk[i].res);
	for (size_t i = 0; i < nmine; i++)
		sshkey_clear(&mine[i]);
	for (size_t i = 0; i < ncluster; i++) {
		sshkey_clear(&cluster[i]);
		free((char *)cluster_of[i]);
	}
	free(cluster);
	free(cluster_of);
	free(nk);
}
