/* probes.c -- the transport's probes: many targets of one node, batched
 * over its one session (see transport_probe in transport.h). */
#include "transport/transport_int.h"

#include "lib/deadline.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

static void probe_set(struct transport_probe *p, enum transport_probe_state s, const char *detail)
{
	p->state = s;
	transport_set_text(p->detail, sizeof(p->detail), detail);
}

/* qm's refusal line to a state. */
static enum transport_probe_state agent_state(const char *line, int vmid)
{
	char vm[64];

	snprintf(vm, sizeof(vm), "VM %d is not running", vmid);
	if (strncmp(line, "No QEMU guest agent configured", 30) == 0)
		return TRANSPORT_PROBE_NOT_CONFIGURED;
	if (strncmp(line, "QEMU guest agent is not running", 31) == 0)
		return TRANSPORT_PROBE_NOT_RUNNING;
	if (strncmp(line, vm, strlen(vm)) == 0)
		return TRANSPORT_PROBE_VM_STOPPED;
	if (strncmp(line, "Configuration file '", 20) == 0)
		return TRANSPORT_PROBE_NO_SUCH_GUEST;
	if (strstr(line, "has been disabled") || strstr(line, "not allowed"))
		return TRANSPORT_PROBE_EXEC_DISABLED;
	return TRANSPORT_PROBE_ERROR;
}

void transport_agent_info(struct transport_probe *p, const char *json, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
	const cJSON *ret = cJSON_GetObjectItemCaseSensitive(root, "return");
	const cJSON *info = ret ? ret : root;
	const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(info, "supported_commands");
	const cJSON *c;
	int exec = -1, status = -1;

	if (cJSON_IsObject(err)) {
		/* qm guest cmd prints an error reply as JSON and exits 0. */
		const cJSON *desc = cJSON_GetObjectItemCaseSensitive(err, "desc");
		char d[240];
		snprintf(d, sizeof(d), "guest-info failed: %.200s",
		         cJSON_IsString(desc) ? desc->valuestring : "no description");
		probe_set(p, TRANSPORT_PROBE_ERROR, d);
		goto out;
	}
	if (!cJSON_IsArray(cmds)) {
		probe_set(p, TRANSPORT_PROBE_ERROR, "guest-info: no supported_commands");
		goto out;
	}
	/* Running a command needs both guest-exec and guest-exec-status. */
	cJSON_ArrayForEach(c, cmds)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
		const cJSON *en = cJSON_GetObjectItemCaseSensitive(c, "enabled");
		int on = cJSON_IsTrue(en) || (cJSON_IsNumber(en) && en->valueint != 0);
		if (!cJSON_IsString(name))
			continue;
		if (strcmp(name->valuestring, "guest-exec") == 0)
			exec = on;
		else if (strcmp(name->valuestring, "guest-exec-status") == 0)
			status = on;
	}
	if (exec == 1 && status == 1)
		probe_set(p, TRANSPORT_PROBE_OK, "guest agent answers; guest-exec enabled");
	else
		probe_set(p, TRANSPORT_PROBE_EXEC_DISABLED,
		          exec == -1 ? "guest agent does not offer guest-exec"
		                     : "guest agent answers but guest-exec is disabled");
out:
	cJSON_Delete(root);
}

static void probe_answer(struct transport_probe *p, struct sshop *op, bool info)
{
	char line[400];

	transport_stderr_line(&op->err, line, sizeof(line));
	if (op->outcome != SSHOP_EXITED) {
		probe_set(p, TRANSPORT_PROBE_UNREACHABLE, op->errmsg[0] ? op->errmsg : "timed out");
		return;
	}
	switch (p->kind) {
	case TRANSPORT_PROBE_HOST:
		if (op->exit_status == 0)
			probe_set(p, TRANSPORT_PROBE_OK, "ssh login and command ok");
		else
			probe_set(p, TRANSPORT_PROBE_ERROR, line);
		return;
	case TRANSPORT_PROBE_CT:
		if (op->exit_status != 0) {
			probe_set(p,
			          strncmp(line, "Configuration file '", 20) == 0
			              ? TRANSPORT_PROBE_NO_SUCH_GUEST
			              : TRANSPORT_PROBE_ERROR,
			          line);
		} else if (strncmp(buf_str(&op->out), "status: running", 15) == 0) {
			probe_set(p, TRANSPORT_PROBE_OK, "status: running");
		} else if (strncmp(buf_str(&op->out), "status: stopped", 15) == 0) {
			probe_set(p, TRANSPORT_PROBE_NOT_RUNNING, "status: stopped");
		} else {
			transport_stderr_line(&op->out, line, sizeof(line));
			probe_set(p, TRANSPORT_PROBE_ERROR, line);
		}
		return;
	case TRANSPORT_PROBE_AGENT:
		if (op->exit_status != 0)
			probe_set(p, agent_state(line, p->vmid), line);
		else if (info)
			transport_agent_info(p, buf_str(&op->out), op->out.len);
		else
			probe_set(p, TRANSPORT_PROBE_OK, "guest agent answers ping");
		return;
	}
}

int transport_probe(struct transport *t, const struct transport_node *node,
                    struct transport_probe *probes, size_t n, int timeout_ms)
{
	struct sshnode *sn;
	struct sshop *ops = NULL, **ptrs = NULL;
	char **cmds = NULL;
	int64_t t0 = deadline_now_ms();
	int64_t deadline = t0 + (timeout_ms > 0 ? timeout_ms : 30000);
	size_t unreachable = 0, k;
	int rc = 0;

	if (n == 0)
		return 0;
	sn = transport_pool_get(t, node);
	ops = xcalloc(n, sizeof(*ops));
	ptrs = xcalloc(n, sizeof(*ptrs));
	cmds = xcalloc(n, sizeof(*cmds));
	/* Round 1: ping / status / login, all at once on the one session. */
	for (size_t i = 0; i < n; i++) {
		struct transport_probe *p = &probes[i];
		cmds[i] = p->kind == TRANSPORT_PROBE_AGENT ? xasprintf("qm agent %d ping", p->vmid)
		          : p->kind == TRANSPORT_PROBE_CT  ? xasprintf("pct status %d", p->vmid)
		                                           : xstrdup("true");
		transport_op_setup(&ops[i], cmds[i], deadline, 65536);
		ptrs[i] = &ops[i];
	}
	sshnode_run(sn, ptrs, n);
	for (size_t i = 0; i < n; i++) {
		probe_answer(&probes[i], &ops[i], false);
		if (ops[i].outcome == SSHOP_FAILED &&
		    (ops[i].error == SSHOP_ERR_CONNECT || ops[i].error == SSHOP_ERR_HOSTKEY ||
		     ops[i].error == SSHOP_ERR_AUTH))
			unreachable++;
	}
	/* Round 2: agents that answered -- is guest-exec allowed? */
	k = 0;
	for (size_t i = 0; i < n; i++) {
		sshop_clear(&ops[i]);
		free(cmds[i]);
		cmds[i] = NULL;
		if (probes[i].kind != TRANSPORT_PROBE_AGENT ||
		    probes[i].state != TRANSPORT_PROBE_OK)
			continue;
		cmds[i] = xasprintf("qm guest cmd %d info", probes[i].vmid);
		transport_op_setup(&ops[i], cmds[i], deadline, 1024 * 1024);
		ptrs[k++] = &ops[i];
	}
	if (k > 0)
		sshnode_run(sn, ptrs, k);
	for (size_t i = 0; i < n; i++) {
		if (cmds[i] != NULL) {
			probe_answer(&probes[i], &ops[i], true);
			sshop_clear(&ops[i]);
			free(cmds[i]);
		}
		probes[i].duration_ms = deadline_now_ms() - t0;
	}
	if (unreachable == n)
		rc = -1;
	log_msg(LOG_DEBUG, "node=%s evt=transport.probe n=%zu ms=%lld", node->name, n,
	        (long long)(deadline_now_ms() - t0));
	free(ops);
	free(ptrs);
	free(cmds);
	return rc;
}
