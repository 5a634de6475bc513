#!/bin/bash
# tests/faults/settle.sh -- nothing stuck, nothing refused for a passing
# error, no known result thrown away:
#   - a statement timeout at start (a lock on the events table, the start's
#     statement cancelled): the request is not refused; it runs once;
#   - a lock on the requests table while a row's next write is on the way
#     (its node stalled in the row's live check, the write cancelled): the
#     row is given back and runs once the node answers, without a restart;
#   - PostgreSQL restarted while a command runs, two daemons up: the live
#     worker records its known result; no reaper calls it dead.
# Every fault is checked to have happened before its outcome is judged.
# Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

CT=lxc:nfs-export
MARKS="$AIRLOCK_RIG_ROOT/guests/ct201/root/tmp/faults.log"
PG_OPTS="-p $PGPORT -k $AIRLOCK_PGTMP -c listen_addresses=127.0.0.1 -c fsync=off \
-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=64MB"
pgctl() { runuser -u postgres -- "$(pg_config --bindir)/pg_ctl" -D "$AIRLOCK_PGTMP/data" "$@"; }
marks() { grep -cx "$1" "$MARKS" 2>/dev/null || true; }
# blocked SQL-LIKE: the daemon's sessions whose statement matches and waits for a lock.
blocked() { q "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE application_name = 'airlockd' AND wait_event_type = 'Lock' AND query SIMILAR TO '$1'"; }

setup_db || exit 1
q "UPDATE airlock.gate_limits SET requests_per_minute = 100000, pending_per_agent = 100000" >/dev/null

# ---- a statement timeout at start: retried, never refused
# Mutations held by a database that cannot keep the promise are classified
# and queued; then the events table is locked, and a daemon that may send
# them starts them: each start waits for the lock, and is cancelled (57014).
ALLOW_FSYNC_OFF=false write_config held >/dev/null
start_daemon held || exit 1
HELD=$DPID
for i in 1 2 3; do as_agent $A run --target $CT -- "echo starts-$i >> /tmp/faults.log" >/dev/null; done
check "three mutations are held, queued, nothing sent" wait_for 30 "SELECT count(*) = 3 FROM airlock.executions e WHERE command LIKE 'echo starts-%' AND state = 'queued' AND claimed_by IS NULL AND EXISTS (SELECT 1 FROM airlock.execution_events v WHERE v.execution_id = e.id AND v.detail->>'released' LIKE 'held, nothing sent:%')"
kill -TERM $HELD
wait $HELD 2>/dev/null
psql -XAtq -c "BEGIN" -c "LOCK TABLE airlock.execution_events IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(60)" -c "COMMIT" >/dev/null 2>&1 &
LOCKER=$!
check "fault: the events table is locked" wait_for 10 "SELECT count(*) > 0 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'execution_events' AND l.mode = 'AccessExclusiveLock' AND l.granted"
q "UPDATE airlock.executions SET run_after = now() WHERE command LIKE 'echo starts-%'" >/dev/null
write_config s1 >/dev/null
start_daemon s1 || exit 1
S1=$DPID
check "fault: a start waits for the lock" wait_for 30 "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'airlockd' AND wait_event_type = 'Lock' AND query LIKE '%worker_start%'"
q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'airlockd' AND wait_event_type = 'Lock' AND query LIKE '%worker_start%'" >/dev/null
check "fault: the start failed with a statement cancel" wait_log 10 'evt=exec.start_failed sqlstate=57014' s1
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
wait $LOCKER 2>/dev/null
check "after the lock every held mutation runs" wait_for 60 "SELECT count(*) = 3 FROM airlock.executions WHERE command LIKE 'echo starts-%' AND state = 'succeeded'"
check_eq "none was refused for a passing database error" 0 "$(q "SELECT count(*) FROM airlock.execution_events v JOIN airlock.executions e ON e.id = v.execution_id WHERE e.command LIKE 'echo starts-%' AND v.to_state = 'refused'")"
check_eq "each ran once" "1 1 1" "$(marks starts-1) $(marks starts-2) $(marks starts-3)"

# ---- a lock on the requests table while a row's next write is on the way
kill -TERM $S1
wait $S1 2>/dev/null
write_config s2 >/dev/null
sed -i 's/^  connect_timeout_ms: 5000$/  connect_timeout_ms: 3000\n  keepalive_s: 2/' "$WORK/s2.yaml"
start_daemon s2 || exit 1
S2=$DPID
id=$(as_agent $A run --target $CT -- 'echo warm-1 >> /tmp/faults.log')
check "a mutation opens the node's session" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
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
node_frozen() {
	local p
	for p in $(node_tree); do [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" = T ] || return 1; done
}
kill -STOP $(node_tree)
check "fault: every process of the node is stopped" node_frozen
id=$(as_agent $A run --target $CT -- 'echo stuck-1 >> /tmp/faults.log')
check "the mutation is claimed and checks its stalled node" wait_for 30 "SELECT state = 'queued' AND claimed_by IS NOT NULL FROM airlock.executions WHERE id = $id"
psql -XAtq -c "BEGIN" -c "LOCK TABLE airlock.executions IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(60)" -c "COMMIT" >/dev/null 2>&1 &
LOCKER=$!
check "fault: the requests table is locked" wait_for 10 "SELECT count(*) > 0 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'executions' AND l.mode = 'AccessExclusiveLock' AND l.granted"
check "fault: the row's next write waits for the lock" wait_for 30 "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'airlockd' AND wait_event_type = 'Lock' AND query SIMILAR TO '%worker_(revalidate|unreachable|settle|release)%'"
q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'airlockd' AND wait_event_type = 'Lock' AND query SIMILAR TO '%worker_(revalidate|unreachable|settle|release)%'" >/dev/null
check "fault: that write failed with a statement cancel" bash -c "for i in \$(seq 100); do grep -qE 'evt=exec\.(revalidate|unreachable|release)_failed sqlstate=57014' '$WORK/s2.log' && exit 0; sleep 0.1; done; exit 1"
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
wait $LOCKER 2>/dev/null
kill -CONT $(node_tree)
check "the row is not left claimed: it runs once the node answers, no restart" wait_for 90 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "it ran once" 1 "$(marks stuck-1)"
check_eq "no row stays claimed by a daemon that works on nothing" 0 "$(q "SELECT count(*) FROM airlock.executions WHERE claimed_by IS NOT NULL")"
check "the daemon survived" kill -0 $S2

# ---- PostgreSQL restarted under a running command, two daemons up
write_config s3 >/dev/null
start_daemon s3 || exit 1
S3=$DPID
id=$(as_agent $A run --target $CT -- 'sleep 6; echo known-1 >> /tmp/faults.log')
check "the command runs" wait_for 30 "SELECT state = 'running' FROM airlock.executions WHERE id = $id"
before=$(q "SELECT pg_postmaster_start_time()")
pgctl stop -m immediate >/dev/null 2>&1
pgctl start -w -l "$AIRLOCK_PGTMP/restart.log" -o "$PG_OPTS" >/dev/null 2>&1
check "fault: PostgreSQL restarted while it ran" test "$(q "SELECT pg_postmaster_start_time()")" != "$before"
check "the live worker records its known result" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "it ran once" 1 "$(marks known-1)"
check_eq "no reaper called its worker dead, no result came late" 0 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND (detail ? 'dead_worker' OR detail ? 'late_result' OR to_state = 'outcome_unknown')")"
check_out "the worker took the row's lock again on its new session" "exec=$id evt=exec.rehold" cat "$WORK"/s2.log "$WORK"/s3.log
check "both daemons survived" kill -0 $S2 $S3
kill -TERM $S2 $S3
wait $S2 $S3 2>/dev/null
check "every log line of every daemon starts with its RFC 3339 time and level" log_shape "$WORK"/*.log
finish
