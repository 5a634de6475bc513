/* agentbatch.c -- one command asks every guest agent of a node (agentbatch.h). */
#include "worker/agentbatch.h"

#include "lib/buf.h"
#include "lib/log.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_SOCKETS "/var/run/qemu-server"
#define AGENT_WAIT_S  3   /* qm's own bound on `qm agent <vmid> ping` */
#define BATCH_MAX     800 /* VMIDs per command: the line stays far below SSH's limit */

/* The node program.  Arguments: the socket directory, the wait in seconds,
 * the VMIDs.  Prints one line per VMID: "<vmid> reply <JSON>" (the answer
 * to guest-info), "<vmid> nosocket", "<vmid> refused <why>", "<vmid>
 * closed" or "<vmid> timeout".  Stale sync replies (another client's) are
 * skipped by their id, as PVE's QMP client does. */
static const char PROGRAM[] =
    "use strict;use IO::Socket::UNIX;use IO::Select;use Time::HiRes qw(time);\n"
    "my($dir,$tmo,@ids)=@ARGV;my $sync=$$*1000+int(rand(1000));my(%by,%buf);\n"
    "my $sel=IO::Select->new;$|=1;\n"
    "for my $id(@ids){my $p=\"$dir/$id.qga\";\n"
    " if(!-S $p){print \"$id nosocket\\n\";next}\n"
    " my $c=IO::Socket::UNIX->new(Type=>SOCK_STREAM(),Peer=>$p,Timeout=>$tmo);\n"
    " if(!$c){print \"$id refused $!\\n\";next}\n"
    " $c->blocking(0);\n"
    " syswrite($c,\"{\\\"execute\\\":\\\"guest-sync-delimited\\\",\\\"arguments\\\":{\\\"id\\\":"
    "$sync}}\\n{\\\"execute\\\":\\\"guest-info\\\"}\\n\");\n"
    " $by{fileno($c)}=$id;$buf{$id}='';$sel->add($c)}\n"
    "my $end=time+$tmo;\n"
    "while($sel->count){my $left=$end-time;last if $left<=0;\n"
    " for my $c($sel->can_read($left)){my $id=$by{fileno($c)};\n"
    "  my $n=sysread($c,my $chunk,65536);next if !defined($n)&&$!{EAGAIN};\n"
    "  if(!$n){print \"$id closed\\n\";$sel->remove($c);close($c);next}\n"
    "  $buf{$id}.=$chunk;my $i=index($buf{$id},\"\\xff\");next if $i<0;\n"
    "  my @l=split(/\\n/,substr($buf{$id},$i+1),-1);pop(@l);\n"
    "  @l=grep{/\\S/&&!(/^\\s*\\{\\s*\"return\"\\s*:\\s*(\\d+)\\s*\\}\\s*$/&&$1!=$sync)}@l;\n"
    "  next if @l<2;my $r=$l[1];$r=~s/\\r//g;print \"$id reply $r\\n\";\n"
    "  $sel->remove($c);close($c)}}\n"
    "print \"$by{fileno($_)} timeout\\n\" for $sel->handles;\n";

static struct transport_probe *find_kind(struct transport_probe *probes, bool *done, size_t n,
                                         enum transport_probe_kind kind, int vmid, size_t *at)
{
	for (size_t i = 0; i < n; i++)
		if (probes[i].kind == kind && probes[i].vmid == vmid && !done[i]) {
			*at = i;
			return &probes[i];
		}
	return NULL;
}

static void set(struct transport_probe *p, enum transport_probe_state s, const char *detail)
{
	p->state = s;
	snprintf(p->detail, sizeof(p->detail), "%s", detail);
}

/* The agent's answer to guest-info: running, and guest-exec enabled or not
 * (both guest-exec and guest-exec-status are needed to run a command). */
static void from_info(struct transport_probe *p, const char *json)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *ret = cJSON_GetObjectItemCaseSensitive(root, "return");
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
	const cJSON *cmds = cJSON_GetObjectItemCaseSensitive(ret, "supported_commands"), *c;
	int exec = -1, status = -1;

	if (cJSON_IsObject(err)) {
		const cJSON *desc = cJSON_GetObjectItemCaseSensitive(err, "desc");
		char d[240];
		snprintf(d, sizeof(d), "guest-info failed: %s",
		         cJSON_IsString(desc) ? desc->valuestring : "no description");
		set(p, TRANSPORT_PROBE_ERROR, d);
		goto out;
	}
	if (!cJSON_IsArray(cmds)) {
		set(p, TRANSPORT_PROBE_ERROR, "guest-info: no supported_commands");
		goto out;
	}
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
		set(p, TRANSPORT_PROBE_OK, "guest agent answers; guest-exec enabled");
	else
		set(p, TRANSPORT_PROBE_EXEC_DISABLED,
		    exec == -1 ? "guest agent does not offer guest-exec"
		               : "guest agent answers but guest-exec is disabled");
out:
	cJSON_Delete(root);
}

bool agentbatch_line(const char *line, struct transport_probe *probes, bool *done, size_t n)
{
	char word[16];
	int vmid, used = 0;
	size_t at;
	struct transport_probe *p;

	if (sscanf(line, "%d %15s %n", &vmid, word, &used) < 2 || used == 0)
		return false;
	p = find_kind(probes, done, n, TRANSPORT_PROBE_AGENT, vmid, &at);
	if (p == NULL)
		return false;
	const char *rest = line + used;
	if (strcmp(word, "reply") == 0) {
		from_info(p, rest);
	} else {
		/* An agent serves one client at a time: a socket that refuses,
		 * closes or stays silent may only be busy with a command airlock
		 * itself is running (qm serialises its own use).  So only an
		 * answer is decided here; qm tells the rest, in its own words. */
		return false;
	}
	done[at] = true;
	return true;
}

/* One command for up to BATCH_MAX agents starting at probes[from]. */
static int run_batch(struct transport *t, const struct transport_node *node,
                     struct transport_probe *probes, bool *done, size_t n, int *ids, size_t nids,
                     int timeout_ms)
{
	struct buf cmd;
	struct transport_result r;
	struct transport_limits lim = {.timeout_ms = timeout_ms, .output_cap = 16u << 20};
	char num[32];
	int rc = -1;

	buf_init(&cmd, 0);
	buf_puts(&cmd, "perl -e ");
	shellquote_append(&cmd, PROGRAM, sizeof(PROGRAM) - 1);
	snprintf(num, sizeof(num), " %s %d", AGENT_SOCKETS, AGENT_WAIT_S);
	buf_puts(&cmd, num);
	for (size_t i = 0; i < nids; i++) {
		snprintf(num, sizeof(num), " %d", ids[i]);
		buf_puts(&cmd, num);
	}
	transport_exec(t, node, TARGET_PROXMOX_HOST, 0, buf_str(&cmd), &lim, &r);
	if (r.status != TRANSPORT_EXITED || r.exit_code != 0 || r.out_truncated) {
		char q[300];
		log_msg(LOG_WARN,
		        "evt=probe.batch_failed node=%s status=%s exit=%d note=\"the agents are "
		        "asked one by one with qm instead\" error=%s",
		        node->name, transport_status_name(r.status), r.exit_code,
		        log_quote(r.status == TRANSPORT_EXITED ? (r.err ? r.err : "") : r.errmsg, q,
		                  sizeof(q)));
		goto out;
	}
	for (char *line = r.out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		agentbatch_line(line, probes, done, n);
	}
	rc = 0;
out:
	transport_result_free(&r);
	buf_free(&cmd);
	return rc;
}

int agentbatch_probe(struct transport *t, const struct transport_node *node,
                     struct transport_probe *probes, bool *done, size_t n, int timeout_ms)
{
	int *ids = xcalloc(n ? n : 1, sizeof(*ids));
	size_t nids = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (probes[i].kind != TRANSPORT_PROBE_AGENT || done[i])
			continue;
		ids[nids++] = probes[i].vmid;
		if (nids == BATCH_MAX) {
			if (run_batch(t, node, probes, done, n, ids, nids, timeout_ms) < 0)
				rc = -1;
			nids = 0;
		}
	}
	if (nids > 0 && run_batch(t, node, probes, done, n, ids, nids, timeout_ms) < 0)
		rc = -1;
	free(ids);
	return rc;
}

bool agentbatch_ct_line(const char *line, struct transport_probe *probes, bool *done, size_t n)
{
	char status[32];
	int vmid;
	size_t at;
	struct transport_probe *p;

	if (sscanf(line, "%d %31s", &vmid, status) != 2)
		return false; /* the header, or not a container's line */
	p = find_kind(probes, done, n, TRANSPORT_PROBE_CT, vmid, &at);
	if (p == NULL)
		return false;
	if (strcmp(status, "running") == 0)
		set(p, TRANSPORT_PROBE_OK, "status: running");
	else if (strcmp(status, "stopped") == 0)
		set(p, TRANSPORT_PROBE_NOT_RUNNING, "status: stopped");
	else
		return false; /* another state: pct status says it in its words */
	done[at] = true;
	return true;
}

int agentbatch_cts(struct transport *t, const struct transport_node *node,
                   struct transport_probe *probes, bool *done, size_t n, int timeout_ms)
{
	struct transport_limits lim = {.timeout_ms = timeout_ms, .output_cap = 16u << 20};
	struct transport_result r;
	bool any = false;
	int rc = -1;

	for (size_t i = 0; i < n && !any; i++)
		any = probes[i].kind == TRANSPORT_PROBE_CT && !done[i];
	if (!any)
		return 0;
	transport_exec(t, node, TARGET_PROXMOX_HOST, 0, "pct list", &lim, &r);
	if (r.status != TRANSPORT_EXITED || r.exit_code != 0 || r.out_truncated) {
		log_msg(
		    LOG_WARN,
		    "evt=probe.ct_list_failed node=%s status=%s exit=%d note=\"each container is "
		    "asked with pct status instead\"",
		    node->name, transport_status_name(r.status), r.exit_code);
		goto out;
	}
	for (char *line = r.out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		agentbatch_ct_line(line, probes, done, n);
	}
	rc = 0;
out:
	transport_result_free(&r);
	return rc;
}
