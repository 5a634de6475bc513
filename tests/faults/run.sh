#!/bin/bash
# tests/faults/run.sh -- exactly once under faults: every command is accounted
# for by its side effect inside the rig's container (a line it appends to a
# file there), not by the database's word.  A command ran exactly once, or
# its row is outcome_unknown and it ran at most once; lost = 0, twice = 0,
# stuck = 0.  Every fault is checked to have taken effect before its
# scenario is judged.
#
# Runs inside scripts/pgtmp and `tests/rig/rigctl run`.  FAULTS_N rows per
# drain and FAULTS_ROUNDS crash rounds: `make test` runs the short default,
# `make chaos` a long one.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

N=${FAULTS_N:-40}
ROUNDS=${FAULTS_ROUNDS:-3}
CT=lxc:nfs-export
# CT 201's /tmp as the node sees it: where the commands leave their marks.
MARKS="$AIRLOCK_RIG_ROOT/guests/ct201/root/tmp/faults.log"
# The throwaway cluster's own settings, synchronous_commit = off among them:
# airlockd must keep its promise whatever the server's default is.
PG_OPTS="-p $PGPORT -k $AIRLOCK_PGTMP -c listen_addresses=127.0.0.1 -c fsync=off \
-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=64MB"

pgctl() { runuser -u postgres -- "$(pg_config --bindir)/pg_ctl" -D "$AIRLOCK_PGTMP/data" "$@"; }
started_at() { q "SELECT pg_postmaster_start_time()" 2>/dev/null; }

# crash_pg LEVEL: PostgreSQL dies without a shutdown checkpoint and comes back
# with the server's synchronous_commit at LEVEL (airlockd accepts them all:
# its own sessions set theirs).
crash_pg() {
	local before
	before=$(started_at)
	pgctl stop -m immediate >/dev/null 2>&1
	pgctl start -w -l "$AIRLOCK_PGTMP/crash.log" \
		-o "${PG_OPTS/synchronous_commit=off/synchronous_commit=$1}" >/dev/null 2>&1 || return 1
	[ -n "$before" ] && [ "$(started_at)" != "$before" ] &&
		[ "$(q 'SHOW synchronous_commit')" = "$1" ]
}
LEVELS=(off local remote_write on)

# enqueue PREFIX COUNT: COUNT mutations on the container, each appending
# PREFIX-i to the marks file.
enqueue() {
	as_agent psql -XAtq -c "SELECT airlock.run('$CT', 'echo $1-' || g || ' >> /tmp/faults.log')
		FROM generate_series(1, $2) g" >/dev/null
}

# account PREFIX: checks every row whose command carries PREFIX against the
# marks it left.  Prints one line of counts.
account() {
	q "SELECT state || ' ' || substring(command from 'echo ([^ ]+) ') FROM airlock.executions
	   WHERE command LIKE 'echo $1-%'" >"$WORK/$1.rows"
	python3 - "$WORK/$1.rows" "$MARKS" "$1" <<'PY'
import collections, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
try:
    marks = collections.Counter(l.strip() for l in open(sys.argv[2]))
except FileNotFoundError:
    marks = collections.Counter()
final_ran = {"succeeded", "failed", "timed_out"}
final_not_ran = {"refused", "rejected", "expired", "cancelled"}
lost = twice = stuck = unknown = wrong = 0
for state, name in rows:
    n = marks.get(name, 0)
    if n > 1:
        twice += 1
    if state in final_ran:
        lost += n == 0
    elif state == "outcome_unknown":
        unknown += 1
    elif state in final_not_ran:
        wrong += n != 0
    else:
        stuck += 1
print("rows=%d lost=%d twice=%d stuck=%d unknown=%d ran_but_refused=%d" %
      (len(rows), lost, twice, stuck, unknown, wrong))
sys.exit(0 if rows and lost == twice == stuck == wrong == 0 else 1)
PY
}

# wait_logs SECONDS TEXT: until either daemon's log contains TEXT.
wait_logs() { wait_log "$1" "$2" d1 || wait_log 1 "$2" d2; }

all_final() {
	wait_for "$2" "SELECT count(*) = 0 FROM airlock.executions WHERE command LIKE 'echo $1-%'
		AND state NOT IN ('succeeded', 'failed', 'timed_out', 'outcome_unknown', 'refused')"
}

setup_db || exit 1
# These drains are one agent's bursts, well past the gate's flood limits.
q "UPDATE airlock.gate_limits SET requests_per_minute = 100000, pending_per_agent = 100000" >/dev/null

# ---- a database that cannot keep the promise: mutations held, observations run
ALLOW_FSYNC_OFF=false write_config d1 >/dev/null
start_daemon d1 || exit 1
D1=$DPID
check "airlockd says fsync = off breaks its promise" wait_log 10 'evt=durability.unsafe' d1
check_out "and what to change" 'Set fsync = on' grep 'evt=durability.unsafe' "$WORK/d1.log"
id_m=$(as_agent $A run --target $CT -- 'echo durable-1 >> /tmp/faults.log')
id_r=$(as_agent $A run --target $CT -- 'echo an observation still runs')
check "an observation still runs" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id_r"
check "a mutation is held, the reason on its row" wait_for 30 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $id_m AND detail->>'released' LIKE 'held, nothing sent: the database runs with fsync = off%'"
check_eq "it is still queued" queued "$(state_of $id_m)"
check_eq "the reason is recorded once, not at every retry" 1 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id_m AND detail ? 'released'")"
check_eq "nothing was sent" 0 "$(ran_count 'durable-1')"
kill -TERM $D1; wait $D1 2>/dev/null
write_config d1 >/dev/null # the throwaway cluster: allow_fsync_off, as every other suite
start_daemon d1 || exit 1
D1=$DPID
check "with the test setting the held mutation runs" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id_m"
check_eq "once" 1 "$(grep -cx 'durable-1' "$MARKS")"
check_out "its sessions commit synchronously whatever the server's default" 'evt=durability.ok synchronous_commit=on' cat "$WORK/d1.log"

# ---- PostgreSQL crash-restarts (server synchronous_commit = off) and a kill -9 while two daemons drain
write_config d2 >/dev/null
start_daemon d2 || exit 1
D2=$DPID
enqueue crash "$N"
for r in $(seq 1 "$ROUNDS"); do
	sleep 1.$((RANDOM % 9))
	level=${LEVELS[$(((r - 1) % ${#LEVELS[@]}))]}
	check "fault: PostgreSQL crashed, back with synchronous_commit = $level (round $r)" crash_pg "$level"
	# A kill -9 of a random daemon in the second round, and at random after it.
	if [ "$r" = 2 ] || { [ "$r" -gt 2 ] && [ $((RANDOM % 2)) = 0 ]; }; then
		if [ $((RANDOM % 2)) = 0 ]; then victim=d1 vpid=$D1; else victim=d2 vpid=$D2; fi
		kill -9 $vpid
		wait $vpid 2>/dev/null
		check "fault: daemon $victim killed with -9 (round $r)" bash -c "! kill -0 $vpid 2>/dev/null"
		start_daemon $victim || exit 1
		if [ $victim = d1 ]; then D1=$DPID; else D2=$DPID; fi
	fi
done
check "every crash-drain row reaches a final state" all_final crash 300
check_out "the crash drain: lost 0, twice 0, stuck 0" 'lost=0 twice=0 stuck=0' account crash
echo "# crash: $(account crash)"
check "the daemons survived" kill -0 $D1 $D2

# ---- a result write refused by a read-only database is retried until it lands
id=$(as_agent $A run --target $CT -- 'sleep 3; echo readonly-1 >> /tmp/faults.log')
wait_for 30 "SELECT state = 'running' FROM airlock.executions WHERE id = $id"
psql -XAtq -c "ALTER SYSTEM SET default_transaction_read_only = on" -c "SELECT pg_reload_conf()" >/dev/null
check_eq "fault: the database is read-only" on "$(q 'SHOW default_transaction_read_only')"
check "the result write fails as read-only" wait_logs 30 'evt=exec.finish_failed sqlstate=25006'
check "claims stop on a read-only database" wait_logs 10 'evt=worker.claim_failed sqlstate=25006'
psql -XAtq -c "SET default_transaction_read_only = off" -c "ALTER SYSTEM RESET default_transaction_read_only" \
	-c "SELECT pg_reload_conf()" >/dev/null
check "once writable again the known result lands" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "it ran once" 1 "$(grep -cx 'readonly-1' "$MARKS")"
id=$(as_agent $A run --target $CT -- 'echo readonly-2 >> /tmp/faults.log')
check "claims resume on their own" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"

# ---- a table lock held past the statement timeout while a result is written
id=$(as_agent $A run --target $CT -- 'sleep 2; echo locked-1 >> /tmp/faults.log')
wait_for 30 "SELECT state = 'running' FROM airlock.executions WHERE id = $id"
psql -XAtq -c "BEGIN; LOCK TABLE airlock.executions IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(40); COMMIT" >/dev/null 2>&1 &
LOCKER=$!
check "fault: the executions table is locked" wait_for 10 "SELECT count(*) > 0 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'executions' AND l.mode = 'AccessExclusiveLock' AND l.granted"
check "the result write times out" wait_logs 50 'evt=exec.finish_failed sqlstate=57014'
wait $LOCKER
check "after the lock the known result lands" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "it ran once" 1 "$(grep -cx 'locked-1' "$MARKS")"

# ---- the node's sshd down for 2 s while mutations queue on one busy target
enqueue outage 20
sleep 0.3
check "fault: the node's sshd is stopped" $AIRLOCK_RIG_CTL node stop
check "and its port refuses connections" bash -c "! exec 3<>/dev/tcp/127.0.0.1/$AIRLOCK_RIG_SSH_PORT"
sleep 2
check "the node's sshd is back" $AIRLOCK_RIG_CTL node start
check "every outage row reaches a final state" all_final outage 180
check_eq "none was refused for a blip" 0 "$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo outage-%' AND state = 'refused'")"
check_out "the outage drain: lost 0, twice 0, stuck 0" 'lost=0 twice=0 stuck=0' account outage
echo "# outage: $(account outage)"
check_eq "waiting for the busy target was not an attempt" 0 "$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo outage-%' AND attempts > 5")"

# ---- a node down past the request's deadline: refused, naming the outage
q "UPDATE airlock.gate_policy SET ttl = interval '5 seconds' WHERE class = 'config_mutation'" >/dev/null
check "fault: the node's sshd is stopped" $AIRLOCK_RIG_CTL node stop
id=$(as_agent $A run --target $CT -- 'echo deadline-1 >> /tmp/faults.log')
check "it is retried until its deadline, then refused" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
check_out "the refusal names the outage and the deadline" 'could not be reached.*deadline passed' q "SELECT error FROM airlock.executions WHERE id = $id"
check "more than one attempt was made" test "$(q "SELECT attempts FROM airlock.executions WHERE id = $id")" -ge 2
check_eq "nothing ran" 0 "$(grep -cx 'deadline-1' "$MARKS")"
check "the node's sshd is back" $AIRLOCK_RIG_CTL node start
q "UPDATE airlock.gate_policy SET ttl = interval '1 hour' WHERE class = 'config_mutation'" >/dev/null

# ---- rows scheduled an hour ahead (the database's clock stepped back) are not frozen
kill -TERM $D1 $D2
wait $D1 $D2 2>/dev/null
enqueue clock 5
q "UPDATE airlock.executions SET run_after = now() + interval '1 hour' WHERE command LIKE 'echo clock-%'" >/dev/null
check_eq "fault: the rows are scheduled an hour ahead" 5 "$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo clock-%' AND run_after > now() + interval '50 minutes'")"
start_daemon d1 || exit 1
D1=$DPID
check "they run at once" all_final clock 30
check "and airlockd says why" wait_log 5 'evt=clock.stepped_back rows=5' d1
check_out "the clock rows: lost 0, twice 0, stuck 0" 'lost=0 twice=0 stuck=0' account clock
echo "# clock: $(account clock)"

# ---- the live check rides on the command's channel.  A row is marked
# running before its channel is opened; when the transport is certain its
# command never left (the node went silent after the check), the row goes
# back and runs later, once; a container found stopped on the command's
# channel is refused; a command that may have been sent is never run again.
kill -TERM $D1
wait $D1 2>/dev/null
write_config d3 >/dev/null
# A silent node is dropped after 3 keepalive intervals (3 s here).
sed -i 's/^  connect_timeout_ms: 5000$/  connect_timeout_ms: 3000\n  keepalive_s: 1/' "$WORK/d3.yaml"
start_daemon d3 || exit 1
D3=$DPID
# node_tree: every process of the rig's node (its sandbox, sshd, each
# session and command), from the pid the rig recorded.
node_tree() {
	local all new kids p
	all=$(cut -d' ' -f1 "$AIRLOCK_RIG_ROOT/pids/node.pid")
	new=$all
	while [ -n "$new" ]; do
		kids=""
		for p in $new; do kids="$kids $(pgrep -P "$p" | tr '\n' ' ')"; done
		new=$(echo $kids)
		all="$all $new"
	done
	echo $all
}
# node_frozen: is every process of the node stopped (state T)?
node_frozen() {
	local p
	for p in $(node_tree); do
		[ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" = T ] || return 1
	done
}
node_thawed() {
	local p
	for p in $(node_tree); do
		[ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != T ] || return 1
	done
}
node_ran() { grep -F "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" | grep -cF -- "$1" || true; }
id=$(as_agent $A run --target proxmox-host:hubris -- 'echo warm-session')
check "a command opens the node's session" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
kill -STOP $(node_tree)
check "fault: every process of the node is stopped (the session stays open)" node_frozen
id=$(as_agent $A run --target proxmox-host:hubris -- 'echo notsent-1')
check "a row whose command never left goes back from running" wait_for 60 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $id AND from_state = 'running' AND to_state = 'queued' AND detail->>'not_sent' = 'true' AND detail->>'nothing_ran' = 'true'"
check_out "saying the node could not be reached" 'node proxmox-host:hubris could not be reached to run on proxmox-host:hubris' \
	q "SELECT detail->>'released' FROM airlock.execution_events WHERE execution_id = $id AND detail->>'not_sent' = 'true'"
check_eq "nothing reached the node" 0 "$(node_ran notsent-1)"
kill -CONT $(node_tree)
check "fault over: the node runs again" node_thawed
check "the row runs once the node is back" wait_for 90 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "exactly once" 1 "$(node_ran notsent-1)"
check "the attempt that sent nothing was counted" test "$(q "SELECT attempts FROM airlock.executions WHERE id = $id")" -ge 1

id=$(as_agent $A run --target proxmox-host:hubris -- 'sleep 6; echo maybe-1')
check "a command reaches the node" bash -c "for i in \$(seq 300); do [ \"\$(grep -cF 'sleep 6; echo maybe-1' '$AIRLOCK_RIG_LOG')\" = 1 ] && exit 0; sleep 0.1; done; exit 1"
kill -STOP $(node_tree)
check "fault: the node is stopped while it runs" node_frozen
check "a command that may have been sent ends outcome_unknown" wait_for 60 "SELECT state = 'outcome_unknown' FROM airlock.executions WHERE id = $id"
kill -CONT $(node_tree)
check "the node runs again" node_thawed
check_eq "it was not handed back as not sent" 0 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND detail ? 'not_sent'")"
check_eq "and has one running event" 1 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND to_state = 'running'")"
sleep 8
check_eq "it reached the node once and was never re-run" 1 "$(node_ran 'sleep 6; echo maybe-1')"
check_eq "its row stays outcome_unknown" outcome_unknown "$(state_of $id)"

check "fault: CT 201 is stopped while its record says running" $AIRLOCK_RIG_CTL ct 201 stop
id=$(as_agent $A run --target $CT -- 'cat /etc/hostname; echo ctstopped-1')
check "an observation on it is refused by the check on its channel" wait_for 30 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
check_out "with the check's sentence" "run on $CT blocked: container is not running \(pct exec unavailable\).*status: stopped.*nothing ran" \
	q "SELECT error FROM airlock.executions WHERE id = $id"
check_eq "from running, recorded as not sent" 1 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND from_state = 'running' AND to_state = 'refused' AND detail->>'not_sent' = 'true'")"
check_eq "nothing reached the container" 0 "$(grep -F "$(printf '\tct:201\t')" "$AIRLOCK_RIG_LOG" | grep -cF ctstopped-1)"
check "CT 201 is started again" $AIRLOCK_RIG_CTL ct 201 start
# The same for a VM: the agent ping (and guest-exec itself) on the command's channel.
check "fault: VM 101's agent is stopped while its record says running" $AIRLOCK_RIG_CTL vm 101 agent-stop
id=$(as_agent $A run --target vm:web01 -- 'uptime; echo vmdead-1')
check "an observation on it is refused by the ping on its channel" wait_for 30 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
check_out "with the pre-flight's words" 'run on vm:web01 blocked: QEMU guest agent is not running \(qm guest exec unavailable\).*nothing ran' \
	q "SELECT error FROM airlock.executions WHERE id = $id"
check_eq "from running, recorded as not sent" 1 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND from_state = 'running' AND to_state = 'refused' AND detail->>'not_sent' = 'true'")"
check "fault: VM 101's agent answers but refuses guest-exec" $AIRLOCK_RIG_CTL vm 101 agent-lockdown
id=$(as_agent $A run --target vm:web01 -- 'uptime; echo vmlocked-1')
check "an observation on it is refused" wait_for 30 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
check_out "saying guest-exec is disabled" 'run on vm:web01 blocked: the QEMU guest agent answers but guest-exec is disabled' \
	q "SELECT error FROM airlock.executions WHERE id = $id"
check_eq "nothing reached the VM" 0 "$(grep -F "$(printf '\tvm:101\t')" "$AIRLOCK_RIG_LOG" | grep -cE 'vmdead-1|vmlocked-1')"
check "VM 101's agent is started again" $AIRLOCK_RIG_CTL vm 101 agent-start

kill -TERM $D3
wait $D3 2>/dev/null
check_out "the audit chain is intact" 'audit: intact' as_alice $A audit verify

# ---- the sealer killed mid-batch: its transaction goes whole, nothing is half-sealed
q "INSERT INTO airlock.executions (target, target_type, command, requested_by, state)
   SELECT 'proxmox-host:hubris', 'proxmox-host', 'echo seal-' || g, 'hermes', 'cancelled' FROM generate_series(1, 50) g" >/dev/null
counts() { q "SELECT count(*) FILTER (WHERE seq IS NULL) || ' ' || count(*) FILTER (WHERE seq IS NOT NULL) FROM airlock.execution_events"; }
before=$(counts)
held=$(q "SELECT max(id) FROM airlock.execution_events WHERE seq IS NULL")
# Another session holds the newest unsealed event's row: the sealer stops inside its batch.
psql -XAtq -c "BEGIN" -c "SELECT 1 FROM airlock.execution_events WHERE id = $held FOR UPDATE" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
LOCKER=$!
wait_for 10 "SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND state = 'active'" >/dev/null
psql -XAtq -c "SELECT airlock.seal_events(1000)" >"$WORK/sealer.out" 2>&1 &
SEALER=$!
check "fault: the sealer holds the chain's lock and waits inside its batch" wait_for 10 \
	"SELECT count(*) = 1 FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
	 WHERE a.query LIKE '%seal_events(1000)%' AND a.wait_event_type = 'Lock'
	   AND l.locktype = 'advisory' AND l.classid = 74287730 AND l.objid = 1 AND l.granted"
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%seal_events(1000)%' AND pid <> pg_backend_pid()" >/dev/null
wait $SEALER
check_out "fault: the sealer's session was killed" 'terminating connection' cat "$WORK/sealer.out"
check_eq "killed mid-batch: nothing was sealed, nothing half-sealed" "$before 0" \
	"$(counts) $(q "SELECT count(*) FROM airlock.execution_events WHERE (seq IS NULL) <> (hash IS NULL) OR (seq IS NULL) <> (prev_hash IS NULL)")"
check_eq "the chain's lock went with it" 0 "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 74287730")"
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
wait $LOCKER 2>/dev/null
check_out "the next verify seals them all, and the chain is intact" 'audit: intact' as_alice $A audit verify
check_eq "... with nothing left unsealed" 0 "$(q "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL")"

# ---- through every fault above, each daemon log line said when it happened
check "every log line of every daemon starts with its RFC 3339 time and level" log_shape "$WORK"/d[0-9].log
finish
