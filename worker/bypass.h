/* bypass.h -- detecting what went around the gate on a Proxmox node.
 *
 * With the scheduler's probe, over the node's existing session, airlockd
 * reads the evidence a side door leaves on the node: SSH logins accepted in
 * the node's log (journald's sshd entries, /var/log/auth.log), package
 * changes (/var/log/dpkg.log) and units systemd started or stopped.  Two
 * scheduler-owned checks on the host's entity come of it:
 *
 *   access_outside_airlock  a login with another key, or from another
 *                           address, than airlockd's own session (which the
 *                           node's log names: the probe finds its own login
 *                           by its session's $SSH_CONNECTION, which the
 *                           node's login shell prints before the script:
 *                           transport_limits.print_connection)
 *   change_outside_airlock  a package or unit change at a time no airlock
 *                           execution on that host was running
 *
 * each "failing" with the evidence in its detail while the evidence is
 * younger than BYPASS_LOOKBACK_S, else "ok" (or "unknown" when the node's
 * logs could not tell).  A check that turns failing, or finds new evidence,
 * is also posted to the webhooks. */
#ifndef AIRLOCK_WORKER_BYPASS_H
#define AIRLOCK_WORKER_BYPASS_H

#include "store/store.h"
#include "transport/transport.h"
#include "worker/notify.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define BYPASS_LOOKBACK_S (24 * 3600)
#define BYPASS_TIMEOUT_MS 15000

/* What the node's logs said, parsed (see bypass_parse). */
struct bypass_login {
	time_t at; /* 0: the log line has no time (counted as recent) */
	char user[64], from[64], key[128];
	int port;
	bool self; /* this very session ($SSH_CONNECTION): airlockd's own login */
};

struct bypass_change {
	time_t at;
	char what[200]; /* "install nfs-kernel-server:amd64 1:2.6.2-4", "Started foo.service" */
};

struct bypass_report {
	char self_addr[64]; /* this session's client address ($SSH_CONNECTION) */
	int self_port;
	time_t node_now;
	struct bypass_login *logins;
	size_t nlogins;
	struct bypass_change *changes;
	size_t nchanges;
};

/* The shell script the probe runs on the node (under the one shell,
 * transport/shell.h; bounded output); since: the epoch to read journald
 * from.  Its output is read with the "S" line the transport prints first. */
char *bypass_script(time_t since);
/* Parses the script's output into r (free with bypass_report_clear). */
void bypass_parse(const char *out, size_t len, struct bypass_report *r);
void bypass_report_clear(struct bypass_report *r);

/* Reads the node's evidence and appends the two checks to `checks` (the
 * host entity's record_probe rows).  db: the scheduler's connection (reads
 * the host's execution windows and the checks' previous state).  n may be
 * NULL (no webhooks). */
void bypass_checks(struct store *db, struct transport *t, const struct transport_node *node,
                   const char *host_slug, struct notifier *n, cJSON *checks);

#endif
