/* agentbatch.c -- one command asks every guest agent of a node (agentbatch.h). */
#include "worker/agentbatch.h"

#include "lib/buf.h"
#include "lib/log.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_SOCKETS "/var/run/qemu-server"
/* VMIDs per command: the command line stays far below SSH's limit, and the
 * program's sockets below the usual limit of 1024 open files. */
#define BATCH_MAX 800

/* The node program.  Arguments: the socket directory, the wait in seconds,
 * the VMIDs.  Prints one line per VMID: "<vmid> reply <JSON>" (the answer
 * to guest-info), "<vmid> nosocket", "<vmid> busy" (the socket's queue is
 * full: EAGAIN on a non-blocking connect), "<vmid> refused <why>", "<vmid>
 * closed" or "<vmid> timeout".  Each socket is closed as soon as its answer
 * is in.  Replies meant for an earlier client are skipped: the answer
 * starts after the last 0xFF, with this program's own sync id. */
const char agentbatch_program[] =
    "use strict;use Socket;use Fcntl;use IO::Select;use Time::HiRes qw(time);\n"
    "my($dir,$tmo,@ids)=@ARGV;my $end=time+$tmo;my $sync=$$*1000+int(rand(1000));\n"
    "my "
    "$req=\"{\\\"execute\\\":\\\"guest-sync-delimited\\\",\\\"arguments\\\":{\\\"id\\\":$sync}}\\n{"
    "\\\"execute\\\":\\\"guest-info\\\"}\\n\";\n"
    "my $sel=IO::Select->new;my(%id,%buf);$|=1;\n"
    "for my $v(@ids){my $p=\"$dir/$v.qga\";my $c;\n"
    " if(!-S $p){print \"$v nosocket\\n\";next}\n"
    " if(!socket($c,AF_UNIX,SOCK_STREAM,0)||!fcntl($c,F_SETFL,O_NONBLOCK)){print \"$v refused "
    "$!\\n\";next}\n"
    " if(!connect($c,pack_sockaddr_un($p))){print $!{EAGAIN}?\"$v busy\\n\":\"$v refused "
    "$!\\n\";close($c);next}\n"
    " my $w=syswrite($c,$req);\n"
    " if(!defined($w)||$w!=length($req)){print \"$v closed\\n\";close($c);next}\n"
    " $id{fileno($c)}=$v;$buf{$v}='';$sel->add($c)}\n"
    "while($sel->count){my $left=$end-time;last if $left<=0;\n"
    " for my $c($sel->can_read($left)){my $v=$id{fileno($c)};\n"
    "  my $n=sysread($c,my $chunk,65536);next if !defined($n)&&($!{EAGAIN}||$!{EINTR});\n"
    "  if(!$n){print \"$v closed\\n\";$sel->remove($c);close($c);next}\n"
    "  $buf{$v}.=$chunk;my $i=rindex($buf{$v},\"\\xff\");next if $i<0;\n"
    "  my @l=grep{/\\S/}(substr($buf{$v},$i+1)=~/([^\\n]*)\\n/g);\n"
    "  next if @l<2||$l[0]!~/^\\s*\\{\\s*\"return\"\\s*:\\s*$sync\\s*\\}\\s*$/;\n"
    "  $l[1]=~s/\\r$//;print \"$v reply $l[1]\\n\";$sel->remove($c);close($c)}}\n"
    "for my $c($sel->handles){print \"$id{fileno($c)} timeout\\n\";close($c)}\n";

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

bool agentbatch_line(const char *line, struct transport_probe *probes, bool *done, bool *silent,
                     size_t n, struct agentbatch_stats *st)
{
	char word[16];
	int vmid, used = 0;
	size_t at;
	struct transport_probe *p;

	if (sscanf(line, "%d %15s%n", &vmid, word, &used) < 2 || used == 0)
		return false;
	p = find_kind(probes, done, n, TRANSPORT_PROBE_AGENT, vmid, &at);
	if (p == NULL)
		return false;
	if (strcmp(word, "reply") != 0) {
		/* Busy, silent, refusing or closing: the agent may be serving
		 * someone else (a command airlock runs among them), so nothing is
		 * decided here; qm tells, waiting its turn. */
		bool busy = strcmp(word, "busy") == 0, quiet = strcmp(word, "timeout") == 0;
		if (silent != NULL && (busy || quiet))
			silent[at] = true;
		if (st != NULL && busy)
			st->busy++;
		else if (st != NULL && strcmp(word, "nosocket") != 0)
			st->silent++;
		return false;
	}
	const char *rest = line + used;
	rest += strspn(rest, " ");
	transport_agent_info(p, rest, strlen(rest));
	done[at] = true;
	if (st != NULL)
		st->answered++;
	return true;
}

/* Applies every line of out (split in place) to the agent probes (agents)
 * or the container probes. */
static void each_line(char *out, struct transport_probe *probes, bool *done, bool *silent, size_t n,
                      struct agentbatch_stats *st, bool agents)
{
	for (char *line = out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (agents)
			agentbatch_line(line, probes, done, silent, n, st);
		else
			agentbatch_ct_line(line, probes, done, n);
	}
}

/* One command for up to BATCH_MAX agents. */
static int run_batch(struct transport *t, const struct transport_node *node,
                     struct transport_probe *probes, bool *done, bool *silent, size_t n,
                     const int *ids, size_t nids, struct agentbatch_stats *st)
{
	struct buf cmd;
	struct transport_result r;
	/* The program waits AGENTBATCH_WAIT_MS; the rest is perl's start and
	 * the session's own latency. */
	struct transport_limits lim = {.timeout_ms = AGENTBATCH_WAIT_MS + 13000,
	                               .output_cap = 16u << 20};
	char num[32];
	int rc = -1;

	buf_init(&cmd, 0);
	buf_puts(&cmd, "perl -e ");
	shellquote_append(&cmd, agentbatch_program, sizeof(agentbatch_program) - 1);
	snprintf(num, sizeof(num), " %s %d.%03d", AGENT_SOCKETS, AGENTBATCH_WAIT_MS / 1000,
	         AGENTBATCH_WAIT_MS % 1000);
	buf_puts(&cmd, num);
	for (size_t i = 0; i < nids; i++) {
		snprintf(num, sizeof(num), " %d", ids[i]);
		buf_puts(&cmd, num);
	}
	if (st != NULL)
		st->asked += (int)nids;
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
	each_line(r.out, probes, done, silent, n, st, true);
	rc = 0;
out:
	transport_result_free(&r);
	buf_free(&cmd);
	return rc;
}

int agentbatch_probe(struct transport *t, const struct transport_node *node,
                     struct transport_probe *probes, bool *done, bool *silent, size_t n,
                     struct agentbatch_stats *st)
{
	int *ids = xcalloc(n ? n : 1, sizeof(*ids));
	size_t nids = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (probes[i].kind != TRANSPORT_PROBE_AGENT || done[i])
			continue;
		ids[nids++] = probes[i].vmid;
		if (nids == BATCH_MAX) {
			if (run_batch(t, node, probes, done, silent, n, ids, nids, st) < 0)
				rc = -1;
			nids = 0;
		}
	}
	if (nids > 0 && run_batch(t, node, probes, done, silent, n, ids, nids, st) < 0)
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
	each_line(r.out, probes, done, NULL, n, NULL, false);
	rc = 0;
out:
	transport_result_free(&r);
	return rc;
}
