#!/bin/bash
# tests/faults/diskfull.sh -- the database's disk fills while a command runs:
# its known result is kept and retried until it lands once there is room
# again; nothing runs twice and nothing is lost.
# Runs inside `scripts/pgtmp --tmpfs SIZE` and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

CT=lxc:nfs-export
MARKS="$AIRLOCK_RIG_ROOT/guests/ct201/root/tmp/faults.log"
FILLER=$AIRLOCK_PGTMP/filler
pgctl() { runuser -u postgres -- "$(pg_config --bindir)/pg_ctl" -D "$AIRLOCK_PGTMP/data" "$@"; }
free_kb() { df --output=avail "$AIRLOCK_PGTMP" | tail -1 | tr -d ' '; }

setup_db || exit 1
write_config d1 >/dev/null
start_daemon d1 || exit 1
D1=$DPID

id=$(as_agent $A run --target $CT -- 'sleep 4; echo diskfull-1 >> /tmp/faults.log')
check "the command is running" wait_for 30 "SELECT state = 'running' FROM airlock.executions WHERE id = $id"
dd if=/dev/zero of="$FILLER" bs=1M >/dev/null 2>&1
check "fault: the data directory's disk is full" test "$(free_kb)" -lt 1024
# A new WAL segment needs 16 MB: the next writes cannot land.
q "SELECT pg_switch_wal()" >/dev/null 2>&1
check "the result write fails for want of space" wait_log 60 'evt=exec.finish_failed' d1
check_eq "the row has not settled meanwhile" running "$(state_of $id 2>/dev/null || echo running)"
rm -f "$FILLER"
# PostgreSQL may have stopped itself (a WAL write that fails is fatal): start
# it again as an operator would, once there is room.
if ! pgctl status >/dev/null 2>&1; then
	pgctl start -w -l "$AIRLOCK_PGTMP/after-full.log" -o "-p $PGPORT -k $AIRLOCK_PGTMP \
-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
-c max_connections=200 -c shared_buffers=64MB" >/dev/null 2>&1
fi
check "with room again the row reaches a final state" wait_for 120 "SELECT state IN ('succeeded', 'outcome_unknown') FROM airlock.executions WHERE id = $id"
check_eq "the command ran once" 1 "$(grep -cx 'diskfull-1' "$MARKS")"
check_out "and the row says it succeeded, or keeps the result it could not place" \
	'succeeded|late_result' q "SELECT state || ' ' || coalesce((SELECT string_agg(detail::text, ' ') FROM airlock.execution_events WHERE execution_id = $id), '') FROM airlock.executions WHERE id = $id"
id=$(as_agent $A run --target $CT -- 'echo diskfull-2 >> /tmp/faults.log')
check "new work runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check "the daemon survived" kill -0 $D1
kill -TERM $D1
wait $D1 2>/dev/null
finish
