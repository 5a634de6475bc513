/* pool.c -- the transport's per-node SSH sessions, made on first use and
 * shared by every command and probe on that node (see transport.h). */
#include "transport/transport_int.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/sha256.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libssh2.h>

/* The guest agent takes at most 1 MiB of stdin (qm's input-data limit). */
#define JAIL_HELPER_MAX (1024 * 1024)

/* Reads the jail helper once: its bytes and SHA-256, or why there is none. */
static void jail_helper_load(struct transport *t, const char *path)
{
	struct utsname u;
	FILE *f;
	size_t cap = JAIL_HELPER_MAX + 1;

	if (uname(&u) == 0)
		snprintf(t->arch, sizeof(t->arch), "%.64s", u.machine);
	if (path == NULL || path[0] == '\0') {
		snprintf(t->jail_why, sizeof(t->jail_why),
		         "airlockd has no jail helper configured");
		return;
	}
	if ((f = fopen(path, "rb")) == NULL) {
		snprintf(t->jail_why, sizeof(t->jail_why), "the jail helper %s cannot be read: %s",
		         path, strerror(errno));
		return;
	}
	t->jail_bytes = xmalloc(cap);
	t->jail_len = fread(t->jail_bytes, 1, cap, f);
	fclose(f);
	if (t->jail_len == 0 || t->jail_len > JAIL_HELPER_MAX) {
		snprintf(t->jail_why, sizeof(t->jail_why),
		         "the jail helper %s is empty or larger than 1 MiB", path);
		free(t->jail_bytes);
		t->jail_bytes = NULL;
		t->jail_len = 0;
		return;
	}
	sha256_hex(t->jail_bytes, t->jail_len, t->jail_sha);
	log_msg(LOG_INFO, "evt=transport.jail_helper path=%s bytes=%zu sha256=%s", path,
	        t->jail_len, t->jail_sha);
}

static pthread_once_t libssh2_once = PTHREAD_ONCE_INIT;
static void libssh2_start(void)
{
	if (libssh2_init(0) != 0)
		fatal("libssh2_init failed");
}

struct transport *transport_new(const struct transport_config *cfg, char *err, size_t errlen)
{
	struct transport *t;

	if (cfg->private_key == NULL || access(cfg->private_key, R_OK) != 0) {
		snprintf(err, errlen, "transport: private key %s is not readable: %s",
		         cfg->private_key ? cfg->private_key : "(none)", strerror(errno));
		return NULL;
	}
	if (cfg->known_hosts && cfg->known_hosts[0] && access(cfg->known_hosts, R_OK) != 0) {
		snprintf(err, errlen, "transport: known_hosts %s is not readable: %s",
		         cfg->known_hosts, strerror(errno));
		return NULL;
	}
	for (size_t i = 0; i < cfg->nnode_keys; i++) {
		const struct transport_node_key *k = &cfg->node_keys[i];
		if (k->node == NULL || k->node[0] == '\0' || k->private_key == NULL ||
		    access(k->private_key, R_OK) != 0) {
			snprintf(err, errlen,
			         "transport: private key %s of node %s is not readable: %s",
			         k->private_key ? k->private_key : "(none)",
			         k->node ? k->node : "(none)", strerror(errno));
			return NULL;
		}
	}
	pthread_once(&libssh2_once, libssh2_start);
	t = xcalloc(1, sizeof(*t));
	t->cfg = *cfg;
	t->pid = (int)getpid();
	t->private_key = xstrdup(cfg->private_key);
	t->public_key = cfg->public_key ? xstrdup(cfg->public_key) : NULL;
	t->known_hosts = cfg->known_hosts && cfg->known_hosts[0] ? xstrdup(cfg->known_hosts) : NULL;
	t->cfg.private_key = t->private_key;
	t->cfg.public_key = t->public_key;
	t->cfg.known_hosts = t->known_hosts;
	if (cfg->nnode_keys > 0) {
		t->node_keys = xcalloc(cfg->nnode_keys, sizeof(*t->node_keys));
		t->key_text = xcalloc(2 * cfg->nnode_keys, sizeof(*t->key_text));
		for (size_t i = 0; i < cfg->nnode_keys; i++) {
			t->key_text[2 * i] = xstrdup(cfg->node_keys[i].node);
			t->key_text[2 * i + 1] = xstrdup(cfg->node_keys[i].private_key);
			t->node_keys[i].node = t->key_text[2 * i];
			t->node_keys[i].private_key = t->key_text[2 * i + 1];
		}
	}
	t->cfg.node_keys = t->node_keys;
	if (t->cfg.connect_timeout_ms <= 0)
		t->cfg.connect_timeout_ms = 10000;
	if (t->cfg.keepalive_s <= 0)
		t->cfg.keepalive_s = 15;
	if (t->cfg.max_channels <= 0)
		t->cfg.max_channels = 8;
	if (t->cfg.output_cap == 0)
		t->cfg.output_cap = 1024 * 1024;
	if (t->cfg.qm_timeout_s <= 0)
		t->cfg.qm_timeout_s = 30;
	if (t->cfg.poll_interval_ms <= 0)
		t->cfg.poll_interval_ms = 1000;
	pthread_mutex_init(&t->mu, NULL);
	jail_helper_load(t, cfg->jail_helper);
	t->cfg.jail_helper = NULL; /* not kept: the bytes are */
	return t;
}

void transport_free(struct transport *t)
{
	if (t == NULL)
		return;
	while (t->pool) {
		struct pool_entry *e = t->pool;
		t->pool = e->next;
		sshnode_free(e->node);
		free(e->key);
		free(e->name);
		free(e);
	}
	transport_shell_forget(t);
	pthread_mutex_destroy(&t->mu);
	for (size_t i = 0; i < 2 * t->cfg.nnode_keys; i++)
		free(t->key_text[i]);
	free(t->key_text);
	free(t->node_keys);
	free(t->private_key);
	free(t->public_key);
	free(t->known_hosts);
	free(t->jail_bytes);
	for (size_t i = 0; i < t->njail_seen; i++)
		free(t->jail_seen[i]);
	free(t->jail_seen);
	free(t);
}

/* The private key for a node: its own, else the one every node shares.  The
 * node's own key also means no public key file: it is derived from it. */
static const char *key_for(const struct transport *t, const char *name, const char **public_key)
{
	for (size_t i = 0; i < t->cfg.nnode_keys; i++)
		if (strcmp(t->cfg.node_keys[i].node, name) == 0) {
			*public_key = NULL;
			return t->cfg.node_keys[i].private_key;
		}
	*public_key = t->cfg.public_key;
	return t->cfg.private_key;
}

/* What a session is pooled under: every fact it was opened with. */
static char *pool_key(const struct transport_node *node, const char **user, int *port)
{
	*user = node->user && node->user[0] ? node->user : "root";
	*port = node->port > 0 ? node->port : 22;
	return xasprintf("%s\n%s\n%d\n%s\n%s", node->name, node->address, *port, *user,
	                 node->host_key_sha256 ? node->host_key_sha256 : "");
}

/* The pooled entry under `key`, or NULL; with t->mu held. */
static struct pool_entry *pool_find(struct transport *t, const char *key)
{
	struct pool_entry *e;

	for (e = t->pool; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			break;
	return e;
}

/* The node's session, created on first use.  New connection facts for a
 * name (address, port, user, pin) make a new session. */
struct sshnode *transport_pool_get(struct transport *t, const struct transport_node *node)
{
	const char *user;
	int port;
	char *key = pool_key(node, &user, &port);
	struct pool_entry *e;

	pthread_mutex_lock(&t->mu);
	e = pool_find(t, key);
	if (e == NULL) {
		const char *public_key;
		const char *private_key = key_for(t, node->name, &public_key);
		struct sshnode_params p = {
		    .name = node->name,
		    .address = node->address,
		    .port = port,
		    .user = user,
		    .pinned = node->host_key_sha256,
		    .private_key = private_key,
		    .public_key = public_key,
		    .known_hosts = t->cfg.known_hosts,
		    .connect_timeout_ms = t->cfg.connect_timeout_ms,
		    .keepalive_s = t->cfg.keepalive_s,
		    .max_channels = t->cfg.max_channels,
		};
		e = xcalloc(1, sizeof(*e));
		e->key = key;
		key = NULL;
		e->name = xstrdup(node->name);
		e->node = sshnode_new(&p);
		e->next = t->pool;
		t->pool = e;
	}
	pthread_mutex_unlock(&t->mu);
	free(key);
	return e->node;
}

void transport_stats(struct transport *t, const char *node_name, struct transport_stats *out)
{
	struct sshnode_stats st = {0};

	pthread_mutex_lock(&t->mu);
	for (struct pool_entry *e = t->pool; e; e = e->next)
		if (strcmp(e->name, node_name) == 0) {
			sshnode_stats(e->node, &st);
			break;
		}
	pthread_mutex_unlock(&t->mu);
	out->sessions_opened = st.sessions_opened;
	out->channels_opened = st.channels_opened;
	out->peak_channels = st.peak_channels;
}

bool transport_pooled_up(struct transport *t, const struct transport_node *node)
{
	const char *user;
	int port;
	char *key;
	struct pool_entry *e;

	if (node == NULL || node->name == NULL || node->address == NULL)
		return false;
	key = pool_key(node, &user, &port);
	pthread_mutex_lock(&t->mu);
	e = pool_find(t, key);
	/* An entry is never freed before the transport is: its session may be
	 * asked outside the lock. */
	pthread_mutex_unlock(&t->mu);
	free(key);
	return e != NULL && sshnode_up(e->node);
}

int transport_reachable(struct transport *t, const struct transport_node *node, int timeout_ms,
                        enum transport_error *err, char *msg, size_t msglen)
{
	struct sshop op;
	struct sshnode *n;
	int rc = 0;

	*err = TRANSPORT_ERR_NONE;
	msg[0] = '\0';
	if (node == NULL || node->name == NULL || node->address == NULL) {
		*err = TRANSPORT_ERR_INVALID;
		snprintf(msg, msglen, "no node");
		return -1;
	}
	n = transport_pool_get(t, node);
	/* The usual case, a pooled session that is up, is seen without
	 * waking the node's thread; anything else is for the thread to settle
	 * (connect, or find the closed session and open a new one). */
	if (sshnode_up(n))
		return 0;
	transport_op_setup(&op, NULL, deadline_now_ms() + (timeout_ms > 0 ? timeout_ms : 15000), 0);
	transport_run1(n, &op);
	if (op.outcome != SSHOP_EXITED) {
		*err = op.error == SSHOP_ERR_HOSTKEY || op.error == SSHOP_ERR_AUTH
		           ? transport_map_error(op.error)
		           : TRANSPORT_ERR_CONNECT;
		snprintf(msg, msglen, "%s",
		         op.errmsg[0] ? op.errmsg : "the node could not be reached");
		rc = -1;
	}
	sshop_clear(&op);
	return rc;
}
