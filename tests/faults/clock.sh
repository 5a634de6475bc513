#!/bin/bash
# tests/faults/clock.sh -- the database's clock steps two hours forward
# (PostgreSQL runs under libfaketime, whose offset file is changed while it
# runs) with a request waiting for approval and an approved one waiting
# for its busy target: airlockd notices the step against its own monotonic
# clock, and neither request is voided by it without a reason saying so
# (their deadlines move with the clock: no time passed).
# Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

CT=lxc:nfs-export
FT=$AIRLOCK_PGTMP/faketime.rc
LIBFT=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -f "$LIBFT" ] || { echo "clock: $LIBFT missing (scripts/install-deps installs libfaketime)"; exit 1; }
BIN=$(pg_config --bindir)
echo "+0" >"$FT"
chmod 0644 "$FT"
runuser -u postgres -- "$BIN/pg_ctl" -D "$AIRLOCK_PGTMP/data" -m fast stop >/dev/null
runuser -u postgres -- env LD_PRELOAD="$LIBFT" FAKETIME_TIMESTAMP_FILE="$FT" FAKETIME_NO_CACHE=1 \
	FAKETIME_DONT_FAKE_MONOTONIC=1 "$BIN/pg_ctl" -D "$AIRLOCK_PGTMP/data" -w -l "$AIRLOCK_PGTMP/ft.log" \
	-o "-p $PGPORT -k $AIRLOCK_PGTMP -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=200" \
	start >/dev/null || { echo "clock: PostgreSQL did not start under libfaketime"; exit 1; }
check "PostgreSQL runs with libfaketime loaded" grep -q libfaketime "/proc/$(head -1 "$AIRLOCK_PGTMP/data/postmaster.pid")/maps"
# ahead_s: how far the database's clock is ahead of this machine's.
ahead_s() { q "SELECT round(extract(epoch FROM clock_timestamp()) - $(date +%s))"; }

setup_db || exit 1
write_config c1 >/dev/null
GRACE=1 start_daemon c1 || exit 1
C1=$DPID

hold=$(as_agent $A run --target $CT -- 'sleep 30; echo clock-hold >> /tmp/faults.log' 2>/dev/null)
check "a long change holds the container" wait_for 30 "SELECT state = 'running' FROM airlock.executions WHERE id = $hold"
appr=$(as_agent $A run --target $CT -- 'echo clock-a >> /etc/motd' 2>/dev/null)
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $appr" >/dev/null
as_alice $A approve "$appr" >/dev/null 2>&1
check "an approved change waits for the busy container" wait_for 30 "SELECT state = 'approved' AND count(*) > 0 FROM airlock.executions e JOIN airlock.execution_events v ON v.execution_id = e.id AND v.to_state = 'approved' WHERE e.id = $appr GROUP BY e.state"
pend=$(as_agent $A run --target $CT -- 'echo clock-p >> /etc/motd' 2>/dev/null)
check "another change waits for approval" wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $pend"

echo "+7200" >"$FT"
check "fault: the database's clock is two hours ahead" test "$(ahead_s)" -ge 7100
check "airlockd notices the step" wait_log 10 'evt=clock.stepped_forward' c1
check "the request waiting for approval still waits" wait_for 10 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $pend"
check_eq "its expiry moved with the clock, saying why" 1 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $pend AND detail ? 'clock_stepped_forward_ms' AND detail->>'moved' = 'expires_at'")"
# The approved one: its validity moved with the clock, or, when a worker
# looked at it between the step and the daemon noticing, it expired with a
# reason naming the step.  Never voided without one.
check "the approved change is not voided without a reason naming the step" wait_for 10 "SELECT (state IN ('approved', 'running', 'succeeded') AND EXISTS (SELECT 1 FROM airlock.execution_events v WHERE v.execution_id = $appr AND v.detail->>'moved' = 'approval_valid_until')) OR (state = 'expired' AND error LIKE '%clock stepped forward%') FROM airlock.executions WHERE id = $appr"
echo "# the approved change: $(state_of $appr)"
check_eq "the step is acted on once" 1 "$(q "SELECT count(*) FROM airlock.clock_steps")"
check "the daemon survived" kill -0 $C1
kill -TERM $C1
wait $C1 2>/dev/null
finish
