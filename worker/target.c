/* target.c -- targets over transport/: live checks and runs. */
#include "worker/target.h"

#include "classifier/classes.h"
#include "lib/paths.h"
#include "lib/xalloc.h"
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct targets {
	struct transport *t;
	int command_timeout_ms;
	size_t output_cap;
	long long jail_memory, jail_scratch;
	int jail_tasks, jail_cpu;
};

/* The helper as installed (SHAREDIR/airlock-jail), or as built in a checkout
 * (build/bin/airlock-jail beside the share directory's migrations). */
static char *jail_helper_default(void)
{
	char *p = paths_share_sub("airlock-jail");

	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return paths_share_sub("build/bin/airlock-jail");
}

struct targets *targets_new(const struct config *cfg, char *err, size_t errlen)
{
	struct transport_config tc = {
	    .private_key = cfg->ssh_private_key,
	    .known_hosts = cfg->ssh_known_hosts,
	    .connect_timeout_ms = cfg->ssh_connect_timeout_ms,
	    .keepalive_s = cfg->ssh_keepalive_s,
	    .output_cap = cfg->output_cap,
	    .qm_timeout_s = cfg->qm_timeout_s,
	};
	char *helper = cfg->jail_helper ? xstrdup(cfg->jail_helper) : jail_helper_default();
	struct transport_node_key keys[CONFIG_MAX_NODE_KEYS];
	struct targets *t = xcalloc(1, sizeof(*t));

	for (int i = 0; i < cfg->nssh_node_keys; i++)
		keys[i] = (struct transport_node_key){cfg->ssh_node_keys[i].node,
		                                      cfg->ssh_node_keys[i].private_key};
	tc.node_keys = keys;
	tc.nnode_keys = (size_t)cfg->nssh_node_keys;
	tc.jail_helper = helper;
	t->t = transport_new(&tc, err, errlen);
	free(helper);
	if (t->t == NULL) {
		free(t);
		return NULL;
	}
	t->jail_memory = (long long)cfg->jail_memory;
	t->jail_tasks = cfg->jail_tasks;
	t->jail_cpu = cfg->jail_cpu_percent;
	t->jail_scratch = (long long)cfg->jail_scratch;
	t->command_timeout_ms = cfg->command_timeout_s * 1000;
	t->output_cap = cfg->output_cap;
	return t;
}

void targets_free(struct targets *t)
{
	if (t == NULL)
		return;
	transport_free(t->t);
	free(t);
}

struct transport *targets_transport(struct targets *t)
{
	return t->t;
}

/* The node part of the slug ("proxmox-host:hubris" -> "hubris"). */
static const char *slug_name(const char *slug)
{
	const char *c = strchr(slug, ':');

	return c ? c + 1 : slug;
}

static void node_of(const struct queue_item *it, struct transport_node *n)
{
	n->name = slug_name(it->node);
	n->address = it->address;
	n->port = it->port;
	n->user = it->ssh_user;
	n->host_key_sha256 = it->host_key_fingerprint;
}

static enum target_type type_of(const struct queue_item *it)
{
	enum target_type tt = TARGET_PROXMOX_HOST;

	target_type_parse(it->target_type, &tt);
	return tt;
}

/* The sentence for a target that cannot run anything now (the pre-flight's
 * words): -1 to refuse the row, -2 when the node could not be reached. */
static int not_usable(const struct queue_item *it, enum target_type tt,
                      enum transport_probe_state st, const char *detail, char *reason,
                      size_t reasonlen)
{
	switch (st) {
	case TRANSPORT_PROBE_OK:
		return 0;
	case TRANSPORT_PROBE_UNREACHABLE:
		snprintf(reason, reasonlen, "node %s could not be reached to run on %s: %s",
		         it->node, it->target, detail);
		return -2;
	case TRANSPORT_PROBE_EXEC_DISABLED:
		snprintf(
		    reason, reasonlen,
		    "run on %s blocked: the QEMU guest agent answers but guest-exec is disabled "
		    "in the guest (qm guest exec unavailable). Enable guest-exec in the agent's "
		    "configuration or use a different target. Nothing ran.",
		    it->target);
		return -1;
	case TRANSPORT_PROBE_NOT_CONFIGURED:
		snprintf(
		    reason, reasonlen,
		    "run on %s blocked: no QEMU guest agent is configured for VM %d (qm guest exec "
		    "unavailable). Configure and start the agent first or use a different target. "
		    "Nothing ran.",
		    it->target, it->vmid);
		return -1;
	default:
		break;
	}
	if (tt == TARGET_VM)
		snprintf(reason, reasonlen,
		         "run on %s blocked: QEMU guest agent is not running (qm guest exec "
		         "unavailable). "
		         "Start the agent first or use a different target. (%s; nothing ran)",
		         it->target, detail[0] ? detail : transport_probe_state_name(st));
	else if (tt == TARGET_LXC)
		snprintf(
		    reason, reasonlen,
		    "run on %s blocked: container is not running (pct exec unavailable). Start the "
		    "container first or use a different target. (%s; nothing ran)",
		    it->target, detail[0] ? detail : transport_probe_state_name(st));
	else
		snprintf(reason, reasonlen, "run on %s blocked: %s (%s). Nothing ran.", it->target,
		         transport_probe_state_name(st), detail);
	return -1;
}

int targets_check(struct targets *t, const struct queue_item *it, bool full, char *reason,
                  size_t reasonlen)
{
	struct transport_node node;
	struct transport_probe p = {0};
	enum target_type tt = type_of(it);
	enum transport_error e;
	char why[256], why2[600];

	if (transport_check_command(tt, it->vmid, it->command, why, sizeof(why)) < 0) {
		snprintf(reason, reasonlen,
		         "run on %s refused: %s. Shorten the command (or put it in "
		         "a script on the target) and submit it again.",
		         it->target, why);
		return -1;
	}

	node_of(it, &node);
	/* A target without bash runs nothing (transport_shell_probe). */
	if (transport_shell_refused(t->t, &node, tt, it->vmid, why2, sizeof(why2)) < 0) {
		snprintf(reason, reasonlen, "run on %s refused: %s.", it->target, why2);
		return -1;
	}
	if (!full) {
		/* The rest of the check rides on the command's own channel. */
		if (transport_reachable(t->t, &node, 15000, &e, why, sizeof(why)) == 0)
			return 0;
		return not_usable(it, tt, TRANSPORT_PROBE_UNREACHABLE, why, reason, reasonlen);
	}
	p.kind = tt == TARGET_VM    ? TRANSPORT_PROBE_AGENT
	         : tt == TARGET_LXC ? TRANSPORT_PROBE_CT
	                            : TRANSPORT_PROBE_HOST;
	p.vmid = it->vmid;
	transport_probe(t->t, &node, &p, 1, 15000);
	return not_usable(it, tt, p.state, p.detail, reason, reasonlen);
}

bool targets_pooled_up(struct targets *t, const struct queue_item *it)
{
	struct transport_node node;

	node_of(it, &node);
	return transport_pooled_up(t->t, &node);
}

/* A command that never started, in the check's terms: did the check in
 * front of it on its channel refuse (container not running, guest agent
 * not answering, guest-exec disabled), or the node not take it at all?
 * TRANSPORT_PROBE_ERROR when it is neither (a plain failure). */
static enum transport_probe_state refusal_of(enum target_type tt, const struct transport_result *r)
{
	const char *m = r->errmsg;

	switch (r->error) {
	case TRANSPORT_ERR_CONNECT:
	case TRANSPORT_ERR_HOSTKEY:
	case TRANSPORT_ERR_AUTH:
	case TRANSPORT_ERR_SSH:
		return TRANSPORT_PROBE_UNREACHABLE; /* no exec request reached the node */
	case TRANSPORT_ERR_PVE:
		break;
	default:
		return TRANSPORT_PROBE_ERROR;
	}
	/* qm's and pct's parameter errors are not the target's state. */
	if (strncmp(m, "400 ", 4) == 0 || strncmp(m, "Unknown option", 14) == 0 ||
	    strncmp(m, "missing command", 15) == 0)
		return TRANSPORT_PROBE_ERROR;
	if (tt == TARGET_LXC)
		return strstr(m, "not running") || strncmp(m, "Configuration file '", 20) == 0
		           ? TRANSPORT_PROBE_NOT_RUNNING
		           : TRANSPORT_PROBE_ERROR;
	if (tt != TARGET_VM)
		return TRANSPORT_PROBE_ERROR;
	if (strncmp(m, "No QEMU guest agent configured", 30) == 0)
		return TRANSPORT_PROBE_NOT_CONFIGURED;
	if (strstr(m, "has been disabled") || strstr(m, "not allowed"))
		return TRANSPORT_PROBE_EXEC_DISABLED;
	return TRANSPORT_PROBE_NOT_RUNNING; /* the ping, a stopped or missing VM */
}

void targets_run(struct targets *t, const struct queue_item *it, enum transport_jail j,
                 atomic_bool *cancel, struct target_result *out)
{
	struct target_jail tj = {.tier = j};

	targets_run_jailed(t, it, &tj, cancel, out);
}

/* The jail's last stderr line when it names how it stopped the command
 * ("airlock-jail: killed by the memory limit (512 MiB)"), else NULL. */
static const char *jail_stop_line(const char *err, size_t len, size_t *linelen)
{
	static const char mark[] = "airlock-jail: ";
	size_t end = len;
	const char *s;

	while (end > 0 && err[end - 1] == '\n')
		end--;
	s = err + end;
	while (s > err && s[-1] != '\n')
		s--;
	if ((size_t)(err + end - s) <= strlen(mark) || strncmp(s, mark, strlen(mark)) != 0)
		return NULL;
	*linelen = (size_t)(err + end - s) - strlen(mark);
	return s + strlen(mark);
}

void targets_run_jailed(struct targets *t, const struct queue_item *it, const struct target_jail *j,
                        atomic_bool *cancel, struct target_result *out)
{
	struct transport_node node;
	size_t nsec = j && j->policy ? policy_secret_store_count(j->policy) : 0;
	const char **secrets = nsec ? xcalloc(nsec, sizeof(*secrets)) : NULL;
	struct transport_jail_spec spec = {
	    .net_view = j && j->net_view,
	    .writes = j ? j->writes : NULL,
	    .nwrites = j ? j->nwrites : 0,
	    .secrets = secrets,
	    .nsecrets = nsec,
	    .mem_bytes = t->jail_memory,
	    .tasks = t->jail_tasks,
	    .cpu_pct = t->jail_cpu,
	    .scratch_bytes = t->jail_scratch,
	};
	struct transport_limits lim = {
	    .timeout_ms = t->command_timeout_ms,
	    .output_cap = t->output_cap,
	    .cancel = cancel,
	    .jail = j ? j->tier : TRANSPORT_JAIL_NONE,
	    .jail_spec = &spec,
	};
	struct transport_result r = {0};

	for (size_t i = 0; i < nsec; i++)
		secrets[i] = policy_secret_store(j->policy, i);

	memset(out, 0, sizeof(*out));
	buf_init(&out->out, 0);
	buf_init(&out->err, 0);
	node_of(it, &node);
	transport_exec(t->t, &node, type_of(it), it->vmid, it->command, &lim, &r);
	out->exit_code = -1;
	out->started = true;
	switch (r.status) {
	case TRANSPORT_EXITED:
		out->state = r.exit_code == 0 ? EXEC_SUCCEEDED : EXEC_FAILED;
		out->exit_code = r.exit_code;
		break;
	case TRANSPORT_SIGNALED:
		out->state = EXEC_FAILED;
		out->signal = r.signal;
		break;
	case TRANSPORT_TIMED_OUT:
		out->state = EXEC_TIMED_OUT;
		out->signal = r.signal;
		snprintf(out->error, sizeof(out->error), "stopped at airlock's deadline of %d s%s",
		         t->command_timeout_ms / 1000, r.errmsg[0] ? "; " : "");
		break;
	case TRANSPORT_CANCELLED:
		out->state = EXEC_TIMED_OUT;
		out->signal = r.signal;
		snprintf(out->error, sizeof(out->error),
		         "cancelled when airlockd shut down after its grace period");
		break;
	case TRANSPORT_FAILED: {
		enum transport_probe_state st = refusal_of(type_of(it), &r);
		out->state = EXEC_FAILED;
		out->started = false;
		if (r.error == TRANSPORT_ERR_SHELL) {
			/* The target has no bash: nothing was sent, nothing will run
			 * there until it has (the sentence says what to do). */
			out->not_sent = TARGET_NOT_SENT_REFUSED;
			snprintf(out->error, sizeof(out->error), "run on %s refused: %.900s.",
			         it->target, r.errmsg);
			break;
		}
		if (r.error == TRANSPORT_ERR_JAIL) {
			out->unconfinable = true;
			snprintf(out->error, sizeof(out->error), "cannot confine %s on %s: %.400s",
			         lim.jail == TRANSPORT_JAIL_WRITE ? "a reversible_low change"
			                                          : "an observation",
			         it->target, r.errmsg);
			break;
		}
		if (st != TRANSPORT_PROBE_ERROR) {
			out->not_sent = not_usable(it, type_of(it), st, r.errmsg, out->error,
			                           sizeof(out->error)) == -2
			                    ? TARGET_NOT_SENT_RETRY
			                    : TARGET_NOT_SENT_REFUSED;
			break;
		}
		snprintf(out->error, sizeof(out->error), "nothing ran: %.400s (%s)", r.errmsg,
		         transport_error_name(r.error));
		break;
	}
	case TRANSPORT_UNKNOWN:
		out->state = EXEC_OUTCOME_UNKNOWN;
		snprintf(
		    out->error, sizeof(out->error),
		    "the transport failed after the command may have started: %.400s (%s); it will "
		    "not be re-run automatically",
		    r.errmsg, transport_error_name(r.error));
		break;
	}
	if (r.status == TRANSPORT_TIMED_OUT && r.errmsg[0])
		strncat(out->error, r.errmsg, sizeof(out->error) - strlen(out->error) - 1);
	if (r.out_len)
		buf_append(&out->out, r.out, r.out_len);
	if (r.err_len)
		buf_append(&out->err, r.err, r.err_len);
	out->out.truncated = r.out_truncated;
	out->err.truncated = r.err_truncated;
	out->duration_ms = r.duration_ms;
	snprintf(out->jail_facts, sizeof(out->jail_facts), "%s", r.jail_facts);
	if (lim.jail != TRANSPORT_JAIL_NONE && r.jail_facts[0] && r.err_len) {
		/* A limit or the jail's own deadline stopped it: named in the result. */
		size_t n = 0;
		const char *line = jail_stop_line(r.err, r.err_len, &n);
		if (line && out->error[0] == '\0')
			snprintf(out->error, sizeof(out->error), "jail: %.*s", (int)n, line);
	}
	transport_result_free(&r);
	free(secrets);
}

void target_result_clear(struct target_result *r)
{
	buf_free(&r->out);
	buf_free(&r->err);
}
