#!/bin/bash
# The daemon end to end: a real airlockd, the rig, a throwaway database.
# Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || { echo "set-up failed"; exit 1; }
q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler; CREATE ROLE carol LOGIN IN ROLE airlock_operator, airlock_agent;" >/dev/null
mkdir -p "$WORK/hooks"
python3 tests/daemon/webhook_sink.py "$WORK/hook.port" "$WORK/hooks" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/hook.port" ] && break; sleep 0.1; done
HP=$(cat "$WORK/hook.port")
check "airlockd -n accepts a valid config" $D -n -c "$(write_config d1 "webhooks:" \
	"  - url: http://127.0.0.1:$HP/ops" "  - url: http://127.0.0.1:$HP/hermes" "    operator: hermes" \
	"scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\"" \
	"probes:" "  interval_s: 1")"
printf 'workers: 0\n' >"$WORK/bad.yaml"
check_out "airlockd -n names the bad line" "bad.yaml:1:10: workers must be an integer in 1..256" $D -n -c "$WORK/bad.yaml"
check_rc "airlockd -n exits 1 on a bad config" 1 $D -n -c "$WORK/bad.yaml"
start_daemon d1
D1=$DPID

# ---- SIGHUP with a broken config keeps the old one
cp "$WORK/d1.yaml" "$WORK/d1.good"
printf 'workers: many\n' >>"$WORK/d1.yaml"
kill -HUP $D1
check "SIGHUP with an invalid config keeps the old one, and says so" wait_log 10 'evt=config.reload_failed kept=old' d1
cp "$WORK/d1.good" "$WORK/d1.yaml"
kill -HUP $D1
check "SIGHUP with a valid config reloads it" wait_log 10 'evt=config.reloaded' d1
check_rc "airlockd refuses a password on its command line" 2 $D -c "$WORK/d1.yaml" --db "dbname=x password=secret"

# ---- notifications carry no payload, and still wake idle workers: with the
# backstop poll at 10 minutes, only airlock_work can make this row run
sed -e 's/^poll_interval_ms: 500$/poll_interval_ms: 600000/' -e 's/^worker_id: d1$/worker_id: dwake/' \
	"$WORK/d1.yaml" >"$WORK/dwake.yaml"
kill -TERM $D1; wait $D1 2>/dev/null
start_daemon dwake; DW=$DPID
sleep 1 # let every worker find the queue empty and go idle
id=$(as_agent $A run --target proxmox-host:hubris -- 'hostname; echo wake-marker')
check "a payload-free airlock_work wakes an idle worker" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
kill -TERM $DW; wait $DW 2>/dev/null
start_daemon d1; D1=$DPID

# ---- a read-only command runs at once
id=$(as_agent $A run --target proxmox-host:hubris -- 'hostname; echo ro-marker-1')
check "a read-only host command finishes" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "it was classified read_only" read_only "$(q "SELECT class FROM airlock.executions WHERE id = $id")"
check_out "its output is recorded" 'ro-marker-1' as_agent $A show $id
check_eq "it ran exactly once on the rig" 1 "$(ran_count 'ro-marker-1')"

# ---- a forged wake-up opens no connection: its document is only compared
# with the row by the claim, so before it only a session the daemon already
# holds for exactly that node may answer.  The document names a port where
# a plain TCP listener counts connections; the row it names does not exist.
python3 - "$WORK/forged" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".port", "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    open(sys.argv[1] + ".conns", "a").write("connection\n")
    c.close()
PY
FL=$!
for _ in $(seq 50); do [ -s "$WORK/forged.port" ] && break; sleep 0.1; done
fport=$(cat "$WORK/forged.port" 2>/dev/null)
# The counter is shown to count before it is trusted to read zero: one
# connection of the test's own.
python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5).close()' \
	"${fport:-1}" 2>/dev/null
for _ in $(seq 50); do [ -s "$WORK/forged.conns" ] && break; sleep 0.1; done
check_eq "fault: the listener at the forged address counts a connection made to it" 1 \
	"$(cat "$WORK/forged.conns" 2>/dev/null | wc -l)"
chan=$(q "SELECT channel FROM airlock.worker_channels WHERE worker = 'd1' LIMIT 1")
doc="{\"id\": 999999999, \"target\": \"proxmox-host:hubris\", \"target_type\": \"proxmox-host\", \"declared_risk\": null, \"command\": \"uptime\", \"node\": \"proxmox-host:hubris\", \"address\": \"127.0.0.1\", \"port\": ${fport:-1}, \"ssh_user\": \"root\", \"host_key_fingerprint\": null, \"vmid\": 0, \"zerto_vm_identifier\": null}"
check_out "a forged wake-up goes out on the daemon's own channel" 'Asynchronous notification' \
	psql -X -c "LISTEN $chan" -c "SELECT pg_notify('$chan', '999999999 ' || \$\$$doc\$\$)" -c "SELECT 1"
id=$(as_agent $A run --target proxmox-host:hubris -- 'echo after-forged')
check "the daemon goes on working after it" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
sleep 1
check_eq "no connection reached the address the forged document named (the test's own only)" 1 \
	"$(cat "$WORK/forged.conns" 2>/dev/null | wc -l)"
kill $FL 2>/dev/null; wait $FL 2>/dev/null

# ---- a host package install waits for a human
id=$(as_agent $A run --target proxmox-host:hubris --change-id chg-412 --action "install NFS" -- apt-get install -y nfs-kernel-server)
check "apt-get install on the host is held" wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_out "the operator sees it with its reasons" "apt-get" as_alice $A pending
check_out "the reasons name the rule and the class" 'config_mutation' as_alice $A show $id
check_eq "nothing ran while it waits (its preview, apt-get -s, may)" 0 "$(ran_count 'install -y nfs-kernel-server')"
check "the operators' webhook is told" wait_hook 10 "\"execution_id\":$id," ops
check_eq "the requester is never notified as a reviewer" 0 "$(ls "$WORK"/hooks/hermes.* 2>/dev/null | wc -l)"
check_rc "the agent cannot approve it" 3 as_agent $A approve $id
check_out "the requester is told what to do" 'Waiting for operator approval' as_agent $A show $id
check_out "alice approves" "execution $id: approved" as_alice $A approve $id --reason "maintenance window"
check "the approved install runs" wait_for 30 "SELECT state IN ('succeeded', 'failed') FROM airlock.executions WHERE id = $id"
check_eq "it ran exactly once" 1 "$(ran_count 'install -y nfs-kernel-server')"
check_out "the row records that there was no rewind point" 'no rewind point' as_alice $A show $id

# ---- the queue from the command line: filters, several decisions at once
qa=$(as_agent $A run --target vm:web01 --action 'cli one' -- apt-get install -y pkg-cli-1)
qb=$(as_agent $A run --target vm:web01 --action 'cli two' -- apt-get install -y pkg-cli-2)
qc=$(as_agent $A run --target proxmox-host:hubris --action 'cli three' -- 'rm -rf /var/lib/vz/dump/cli')
qh=$(as_agent $A run --target proxmox-host:hubris --action 'cli four' -- "$(printf 'systemctl restart pveproxy \342\200\256 # fine')")
check "four requests wait" wait_for 30 "SELECT count(*) = 4 FROM airlock.executions WHERE id IN ($qa, $qb, $qc, $qh) AND state = 'pending_approval'"
pids() { python3 -c 'import json,sys; print(" ".join(str(r["id"]) for r in json.load(sys.stdin)))'; }
oneline() { "$@" 2>/dev/null | tr '\n' ' '; }
check_eq "pending --target 'vm:*' lists the VMs' requests, and only those" "$qa $qb" \
	"$(as_alice $A pending --target 'vm:*' --json 2>/dev/null | pids)"
check_out "each with what the agent said it is for" " $qa .*vm:web01 .* for: cli one " \
	oneline as_alice $A pending --target 'vm:*'
check_eq "--agent and --class: the destructive one" "$qc" \
	"$(as_alice $A pending --agent 'herm*' --class destructive --json 2>/dev/null | pids)"
check_out "--older-than: nothing has waited a day" '^nothing matches these filters$' as_alice $A pending --older-than 1d
check_eq "--state open lists what is on its way too" t \
	"$(as_alice $A pending --state open --json 2>/dev/null | python3 -c 'import json,sys; print("t" if all(r["state"] in ("received", "queued", "pending_approval", "approved", "running") for r in json.load(sys.stdin)) else "f")')"
check_rc "an age that is no duration is refused (exit 2)" 2 as_alice $A pending --older-than soon
check_out "... saying what it takes" 'older-than is a duration such as 90s, 15m, 2h or 1d' as_alice $A pending --older-than soon
check_rc "a final state is no filter of the queue (exit 2)" 2 as_alice $A pending --state succeeded
check_rc "a target glob with a space is refused (exit 2)" 2 as_alice $A pending --target 'vm: x'
check_out "approve several at once: each its own line" "^execution $qa: approved execution $qb: approved \$" \
	oneline as_alice $A approve "$qa" "$qb" --reason "cli window"
check_eq "each its own chained approval, with its own payload hash" "2 2" \
	"$(q "SELECT count(*) || ' ' || count(DISTINCT detail ->> 'payload_hash') FROM airlock.execution_events WHERE execution_id IN ($qa, $qb) AND to_state = 'approved'")"
check_rc "one refused among several: the others are decided, the exit says refused (3)" 3 \
	as_alice $A approve "$qc" "$qa"
check_eq "the destructive one has alice's vote" 1 "$(q "SELECT count(*) FROM airlock.approvals WHERE execution_id = $qc AND approver = 'alice'")"
check_out "--json answers with one object per id" "^\[\{\"id\":$qc,\"state\":\"approved\"\},\{\"id\":999999999,\"error\":\"execution 999999999 not found\",\"sqlstate\":\"AL007\"\}\]$" \
	as_bob $A approve "$qc" 999999999 --json
check_rc "--confirm-unreadable says one command was read: one id only (exit 2)" 2 \
	as_alice $A approve "$qh" "$qa" --confirm-unreadable
check_rc "a hard-to-read command without --confirm-unreadable is refused (exit 3)" 3 as_alice $A approve "$qh"
check_out "... saying why and how" 'its command is hard to read \(1 hidden character \(1 direction-changing\)\).*airlock approve [0-9]+ --confirm-unreadable' \
	as_alice $A approve "$qh"
check_out "with it, alice approves what she read" "execution $qh: approved" as_alice $A approve "$qh" --confirm-unreadable
qr1=$(as_agent $A run --target vm:web01 -- apt-get install -y pkg-cli-5)
qr2=$(as_agent $A run --target vm:web01 -- apt-get install -y pkg-cli-6)
wait_for 30 "SELECT count(*) = 2 FROM airlock.executions WHERE id IN ($qr1, $qr2) AND state = 'pending_approval'"
check_out "reject several at once" "^execution $qr1: rejected execution $qr2: rejected \$" \
	oneline as_bob $A reject "$qr1" "$qr2" --reason "not this week"
check_rc "cancel takes one id" 2 as_agent $A cancel "$qr1" "$qr2"

# ---- a command the transport cannot carry is refused at the door, naming the limit
big="echo $(head -c 20000 /dev/zero | tr '\0' "'")"
before=$(q "SELECT count(*) FROM airlock.executions")
check_rc "a command too long for SSH once quoted is refused (exit 2)" 2 as_agent $A run --target proxmox-host:hubris -- "$big"
check_out "the refusal names the limit" 'too long to carry: 80007 bytes once quoted.*the limit is 32640' \
	as_agent $A run --target proxmox-host:hubris -- "$big"
check_eq "and no row was made" "$before" "$(q "SELECT count(*) FROM airlock.executions")"

# ---- dead transports are refused, with the pre-flight's words
check_out "a VM with a dead agent is refused at the door" 'QEMU guest agent is not running' as_agent $A run --target vm:zimaos -- ls /

# ---- the scheduler's probes keep the pre-flight's facts fresh
check "the probes record the hung agent of VM 103" wait_for 30 "SELECT attributes->>'qemu_guest_agent' = 'not_running' AND attributes->>'health' = 'unhealthy' FROM airlock.entities WHERE slug = 'vm:zimaos'"
# A hung agent that was recorded running (it hung since) is asked with qm off
# the round, by the prober's qm lane: the round goes on meanwhile, and qm's
# answer, not the silence, records it not running.
# log_since LINE ERE: d1's log after line LINE has a match, within 10 s.
log_since() {
	for _ in $(seq 1 100); do
		tail -n +"$(($1 + 1))" "$WORK/d1.log" | grep -qE -- "$2" && return 0
		sleep 0.1
	done
	return 1
}
# (A round that read the estate before the UPDATE may write its old
# verdict over it: then the UPDATE is made again.)
for _ in 1 2 3 4 5; do
	mark=$(wc -l <"$WORK/d1.log")
	q "UPDATE airlock.entities SET attributes = attributes || '{\"qemu_guest_agent\": \"running\"}' WHERE slug = 'vm:zimaos'" >/dev/null
	log_since "$mark" 'evt=probe.qm_done node=hubris .* not_running=1 ' && break
done
check "a hung agent recorded running is asked by qm, off the round (evt=probe.qm_done ... not_running=1)" \
	log_since "$mark" 'evt=probe.qm_done node=hubris .* not_running=1 '
check "and recorded not running again" wait_for 30 "SELECT attributes->>'qemu_guest_agent' = 'not_running' FROM airlock.entities WHERE slug = 'vm:zimaos'"
# The round that handed it to the lane (with VM 102, which has no agent:
# qm_later=2) ended before qm answered for it: it did not wait.
handed=$(tail -n +"$((mark + 1))" "$WORK/d1.log" | grep -nE 'evt=probe.round .* qm_later=2 ' | head -1 | cut -d: -f1)
answered=$(tail -n +"$((mark + 1))" "$WORK/d1.log" | grep -nE 'evt=probe.qm_done node=hubris .* not_running=1 ' | head -1 | cut -d: -f1)
check "the round that handed it to qm ended before qm answered (line ${handed:-none} < ${answered:-none})" \
	test "${handed:-999999}" -lt "${answered:-0}"
check "and the stopped container" wait_for 30 "SELECT attributes->>'container_status' = 'stopped' FROM airlock.entities WHERE slug = 'lxc:backup'"
check_out "checks are listed for agents" '"status": "ok"' as_agent psql -XAtq -c "SELECT airlock.list_checks('vm:web01')"
# ---- one probe round on demand, reported: airlockd --probe-once
check_out "--probe-once prints each entity's health" '^vm:zimaos health=unhealthy .*detail=' $D --probe-once -c "$WORK/d1.yaml"
check_out "and the healthy ones" '^proxmox-host:hubris health=healthy' $D --probe-once -c "$WORK/d1.yaml"
check_out "and a summary of the round" '^probe round: entities=[0-9]+ unhealthy=[1-9][0-9]* ms=[0-9]+$' $D --probe-once -c "$WORK/d1.yaml"
check_rc "--probe-once exits 1 when an entity is unhealthy" 1 $D --probe-once -c "$WORK/d1.yaml"
echo "# $($D --probe-once -c "$WORK/d1.yaml" 2>/dev/null | tail -1)"
check_out "--probe-once without scheduler_database says what it needs" 'needs scheduler_database' $D --probe-once -c "$(write_config dnoprobe)"
check_rc "and exits 1" 1 $D --probe-once -c "$WORK/dnoprobe.yaml"
check_rc "-n and --probe-once together are a usage error" 2 $D -n --probe-once -c "$WORK/d1.yaml"
check "fault: VM 101's agent is stopped" $AIRLOCK_RIG_CTL vm 101 agent-stop
check "a stopped agent is seen by the next probe" wait_for 30 "SELECT attributes->>'qemu_guest_agent' = 'not_running' FROM airlock.entities WHERE slug = 'vm:web01'"
check_out "and the door then refuses vm:web01 at once" 'run on vm:web01 blocked: QEMU guest agent is not running' as_agent $A run --target vm:web01 -- uptime
check "VM 101's agent is started again" $AIRLOCK_RIG_CTL vm 101 agent-start
check "a restarted agent is seen again" wait_for 30 "SELECT attributes->>'qemu_guest_agent' = 'running' FROM airlock.entities WHERE slug = 'vm:web01'"

# ---- long commands in a VM while probe rounds go on: the batch takes turns
. tests/daemon/probeturns.sh

# ---- an unreachable node: nothing is marked running; retried until it is back
check "fault: the node's sshd is stopped" $AIRLOCK_RIG_CTL node stop
check "and its port really refuses connections" bash -c "! exec 3<>/dev/tcp/127.0.0.1/$AIRLOCK_RIG_SSH_PORT"
id=$(as_agent $A run --target proxmox-host:hubris -- 'echo unreachable-marker')
check "an unreachable node releases the row for a retry" wait_for 30 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $id AND detail->>'released' LIKE '%could not be reached%'"
check_eq "and nothing was marked running" 0 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND to_state = 'running'")"
check "the node's sshd is started again" $AIRLOCK_RIG_CTL node start
check "once the node is back the command runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "exactly once" 1 "$(ran_count 'unreachable-marker')"

# ---- the gate through the CLI
id=$(PGUSER=carol $A run --target proxmox-host:hubris -- 'systemctl restart pvedaemon')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_rc "a login that is operator and agent cannot approve (exit 3)" 3 env PGUSER=carol $A approve $id
check_out "and is told why" 'carol is a member of airlock_agent and never counts as an approver' env PGUSER=carol $A approve $id
check_rc "reject needs --reason (exit 2)" 2 as_alice $A reject $id
check_out "pending --json is JSON with the request" "\"id\": $id" as_alice $A pending --json
check_rc "the requester cancels its own pending request" 0 env PGUSER=carol $A cancel $id
check_eq "it is cancelled" cancelled "$(state_of $id)"
id=$(as_alice $A run --target proxmox-host:hubris -- 'systemctl restart pvedaemon; echo self-approval')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_out "an operator cannot approve their own request" 'nobody may approve their own request' as_alice $A approve $id
as_alice $A cancel $id >/dev/null
check_rc "show of an unknown id exits 4" 4 as_alice $A show 999999
id=$(as_agent $A run --target proxmox-host:hubris -- 'reboot')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_eq "a host reboot is destructive" destructive "$(q "SELECT class FROM airlock.executions WHERE id = $id")"
check_out "one approval of a destructive request is not enough" 'needs more approvers' as_alice $A approve $id
check_eq "it still waits" pending_approval "$(state_of $id)"
check_out "a second, different operator completes it" "execution $id: approved" as_bob $A approve $id
check "the reboot (a recording stand-in on the rig) runs once" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_out "history --json is the event list" '"to_state": "approved"' as_alice $A history --json $id

# ---- rejection reaches the agent
id=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pveproxy')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
as_alice $A reject $id --reason "not during business hours" >/dev/null
check_out "a rejection's reason reaches the requester" 'not during business hours' as_agent $A show $id

# ---- an agent's scope: refused at the door, or before it runs
. tests/daemon/scope.sh

# ---- expiry is an outcome
q "UPDATE airlock.gate_policy SET ttl = interval '1 second'" >/dev/null
id=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart corosync')
check "an unanswered request expires" wait_for 30 "SELECT state = 'expired' FROM airlock.executions WHERE id = $id"
q "UPDATE airlock.gate_policy SET ttl = interval '1 hour'" >/dev/null

# ---- an approval that lapsed while airlockd was down expires; it never runs late
q "UPDATE airlock.gate_policy SET approval_valid_for = interval '1 second'" >/dev/null
id=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pve-firewall; echo lapse-marker')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
kill -TERM $D1; wait $D1 2>/dev/null
as_alice $A approve $id >/dev/null
check "the approval's validity runs out while no daemon runs" \
	wait_for 10 "SELECT approval_valid_until < now() FROM airlock.executions WHERE id = $id"
start_daemon d1; D1=$DPID
check "the restarted daemon expires it instead of running it" \
	wait_for 30 "SELECT state = 'expired' FROM airlock.executions WHERE id = $id"
check_eq "it never ran" 0 "$(ran_count 'lapse-marker')"
check_out "the agent is told it did not start in time" 'did not start in time.*lapsed.*nothing ran' as_agent $A show $id
q "UPDATE airlock.gate_policy SET approval_valid_for = interval '15 minutes'" >/dev/null

# ---- a policy change between approval and execution voids the approval
kill -TERM $D1; wait $D1 2>/dev/null
id=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pvestatd; echo policy-marker')
# classify it with a daemon, then stop it before approving
start_daemon d1; D1=$DPID
wait_for 30 "SELECT state IN ('pending_approval', 'queued', 'succeeded') FROM airlock.executions WHERE id = $id"
cls=$(q "SELECT class FROM airlock.executions WHERE id = $id")
kill -TERM $D1; wait $D1 2>/dev/null
if [ "$(state_of $id)" = pending_approval ]; then
	as_alice $A approve $id >/dev/null
	cp -r "$WORK/seeds" "$WORK/seeds-strict"
	python3 - "$WORK/seeds-strict/policy.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
# Raise every redirect-target rule for /tmp to destructive: a stricter policy.
s = s.replace("reversible_low", "destructive").replace("config_mutation", "destructive")
open(p, "w").write(s)
PY
	$A seed "$WORK/seeds-strict" >/dev/null
	start_daemon d1; D1=$DPID
	check "a class that rose voids the approval" wait_for 30 "SELECT state = 'pending_approval' AND class = 'destructive' FROM airlock.executions WHERE id = $id"
	check_out "the history says why" 'class rose from' as_alice $A history $id
	check_eq "it did not run" 0 "$(ran_count 'policy-marker')"
	$A seed "$WORK/seeds" >/dev/null
	check "a running daemon reloads a new policy on its NOTIFY" wait_log 10 'evt=policy.loaded version=3' d1
	as_alice $A cancel $id >/dev/null
	# gate.yaml's network.allow reaches the workers' classifier on its own NOTIFY
	cp -r "$WORK/seeds" "$WORK/seeds-net"
	printf 'network:\n  allow: [allowed.airlock.test]\n' >>"$WORK/seeds-net/gate.yaml"
	$A seed "$WORK/seeds-net" >/dev/null
	gv=$(q "SELECT max(version) FROM airlock.gate_policies")
	check "a new gate version rebuilds the classifier" wait_log 10 "gate_version=$gv gate_previous=" d1
	id=$(as_agent $A run --target proxmox-host:hubris -- 'curl -s http://allowed.airlock.test/x')
	check "an allowed harmless read is an observation" wait_for 30 \
		"SELECT class = 'read_only' FROM airlock.executions WHERE id = $id"
	$A seed "$WORK/seeds" >/dev/null
	gv=$(q "SELECT max(version) FROM airlock.gate_policies")
	check "the gate without it rebuilds the classifier again" wait_log 10 "gate_version=$gv gate_previous=" d1
	id=$(as_agent $A run --target proxmox-host:hubris -- 'curl -s http://allowed.airlock.test/x')
	check "without network.allow the same read waits for an operator" wait_for 30 \
		"SELECT class = 'config_mutation' AND state = 'pending_approval' FROM airlock.executions WHERE id = $id"
	as_alice $A cancel $id >/dev/null
else
	failt "policy-change test: expected a pending row, got $(state_of $id) ($cls)"
	start_daemon d1; D1=$DPID
fi

# ---- kill -9 while a command runs: outcome_unknown, never re-run
id=$(as_agent $A run --target proxmox-host:hubris -- 'sleep 3; echo crash-marker-1')
check "the command starts" wait_for 30 "SELECT state = 'running' FROM airlock.executions WHERE id = $id"
kill -9 $D1; wait $D1 2>/dev/null
start_daemon d1; D1=$DPID
check "a command whose worker died is outcome_unknown" wait_for 30 "SELECT state = 'outcome_unknown' FROM airlock.executions WHERE id = $id"
sleep 4
check_eq "it ran exactly once, and was not re-run" 1 "$(ran_count 'crash-marker-1')"
check_out "the history names the dead worker" 'dead_worker' as_alice $A history $id

# ---- two daemons drain a backlog, each row exactly once
kill -TERM $D1; wait $D1 2>/dev/null
N=${DRAIN_N:-300}
q "SELECT airlock.run('proxmox-host:hubris', 'echo drain-' || g) FROM generate_series(1, $N) g" >/dev/null
WORKERS=4 write_config d2 >/dev/null
start_daemon d1; D1=$DPID
start_daemon d2; D2=$DPID
check "two daemons drain $N rows" wait_for 240 "SELECT count(*) = 0 FROM airlock.executions WHERE command LIKE 'echo drain-%' AND state NOT IN ('succeeded', 'failed')"
check_eq "every row succeeded" "$N" "$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo drain-%' AND state = 'succeeded'")"
node_cmds drain >"$WORK/drain.ran"
check_eq "the rig received every row's command" "$N" "$(sort -u "$WORK/drain.ran" | wc -l)"
check_eq "no row ran twice" 0 "$(sort "$WORK/drain.ran" | uniq -d | wc -l)"
check_eq "each row has one running event" 0 "$(q "SELECT count(*) FROM (SELECT execution_id FROM airlock.execution_events WHERE to_state = 'running' AND from_state <> 'running' GROUP BY 1 HAVING count(*) > 1) x")"
check_eq "both daemons took part" 2 "$(q "SELECT count(DISTINCT split_part(detail->>'worker', '/', 1)) FROM airlock.execution_events e JOIN airlock.executions x ON x.id = e.execution_id WHERE x.command LIKE 'echo drain-%' AND e.to_state = 'running'")"

# ---- PostgreSQL restarted under load: nothing lost or stuck
q "SELECT airlock.run('proxmox-host:hubris', 'echo restart-' || g) FROM generate_series(1, 100) g" >/dev/null
sleep 0.5
pg_started=$(q "SELECT pg_postmaster_start_time()")
check "fault: PostgreSQL restarted under load" runuser -u postgres -- "$(pg_config --bindir)/pg_ctl" -D "$AIRLOCK_PGTMP/data" -m fast -w restart -l "$AIRLOCK_PGTMP/restart.log" \
	-o "-p $PGPORT -k $AIRLOCK_PGTMP -c listen_addresses=127.0.0.1 -c fsync=off"
check "and it is a new postmaster" test "$(q "SELECT pg_postmaster_start_time()")" != "$pg_started"
check "after a restart every row reaches a final state" wait_for 120 "SELECT count(*) = 0 FROM airlock.executions WHERE command LIKE 'echo restart-%' AND state NOT IN ('succeeded', 'failed', 'outcome_unknown')"
node_cmds restart >"$WORK/restart.ran"
check_eq "the rig received a command for every row that succeeded" \
	"$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo restart-%' AND state = 'succeeded'")" \
	"$(sort -u "$WORK/restart.ran" | grep -cxFf <(q "SELECT command FROM airlock.executions WHERE command LIKE 'echo restart-%' AND state = 'succeeded'"))"
check_eq "no row ran twice across the restart" 0 "$(sort "$WORK/restart.ran" | uniq -d | wc -l)"
check "the daemons survived the restart" kill -0 $D1 $D2

# ---- SIGTERM: a running command finishes within the grace, then a clean exit
id=$(as_agent $A run --target proxmox-host:hubris -- 'sleep 2; echo grace-marker')
wait_for 30 "SELECT state = 'running' FROM airlock.executions WHERE id = $id"
kill -TERM $D1 $D2
wait $D1; rc1=$?
wait $D2; rc2=$?
check_eq "SIGTERM ends both daemons cleanly" "0 0" "$rc1 $rc2"
check_eq "the command running at SIGTERM finished and was recorded" succeeded "$(state_of $id)"
check_out "the audit chain is intact" 'audit: intact' as_alice $A audit verify

finish
