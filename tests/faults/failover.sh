#!/bin/bash
# tests/faults/failover.sh -- high availability on PostgreSQL's own streaming
# replication: a primary and a standby, daemons on a multi-host conninfo with
# target_session_attrs=read-write.
#   - an asynchronous standby streaming, failover not declared: airlockd
#     says what would run twice (at start and at every check), and airlock
#     doctor fails the check with the fix;
#   - declared failover with an asynchronous standby: mutations are held, and
#     released once the standby is synchronous;
#   - the primary dies mid-drain and the synchronous standby is promoted:
#     every row is final, none ran twice (counted by the marks the commands
#     leave inside the rig's container), the daemons follow on their own; a
#     daemon that declared the failover sees the other server at its
#     reconnect and holds mutations from its first statement there (the new
#     primary has no synchronous standby).
# Runs inside scripts/pgtmp (the primary) and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

N=${FAILOVER_N:-30}
CT=lxc:nfs-export
MARKS="$AIRLOCK_RIG_ROOT/guests/ct201/root/tmp/faults.log"
BIN=$(pg_config --bindir)
PRIMARY=$AIRLOCK_PGTMP/data
STANDBY=$AIRLOCK_PGTMP/standby
SOCK2=$AIRLOCK_PGTMP/s2
P1=$PGPORT
P2=$((PGPORT + 1))
OPTS="-k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=64MB"

as_pg() { runuser -u postgres -- "$@"; }
q2() { psql -XAtq -h "$SOCK2" -p "$P2" -c "$1"; }

stop_standby() {
	[ -f "$STANDBY/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$STANDBY" -m immediate stop >/dev/null 2>&1
	cleanup_daemons
}
trap stop_standby EXIT

setup_db || exit 1
# These drains are one agent's bursts, well past the gate's flood limits.
q "UPDATE airlock.gate_limits SET requests_per_minute = 100000, pending_per_agent = 100000" >/dev/null

# ---- a standby, streaming from the primary (asynchronously for now)
mkdir -p "$SOCK2" && chown postgres: "$SOCK2"
check "a standby is copied from the primary" as_pg "$BIN/pg_basebackup" -h "$AIRLOCK_PGTMP" -p "$P1" -U postgres -D "$STANDBY" -R -X stream
echo "primary_conninfo = 'host=$AIRLOCK_PGTMP port=$P1 user=postgres application_name=s1'" >>"$STANDBY/postgresql.auto.conf"
check "the standby starts" as_pg "$BIN/pg_ctl" -D "$STANDBY" -w -l "$AIRLOCK_PGTMP/standby.log" -o "-p $P2 $(printf -- "$OPTS" "$SOCK2")" start
check "it streams" wait_for 30 "SELECT count(*) = 1 FROM pg_stat_replication WHERE application_name = 's1' AND state = 'streaming'"

DB="host=127.0.0.1,127.0.0.1 port=$P1,$P2 dbname=$PGDATABASE user=airlockd target_session_attrs=read-write"
cfg() { write_config "$1" >/dev/null; sed -i "s|^database: .*|database: \"$DB\"|; s|^  allow_fsync_off: .*|  allow_fsync_off: true\n  failover: $2|" "$WORK/$1.yaml"; }

# ---- an asynchronous standby streams, failover not declared: said at start and at every check
cfg du false
start_daemon du || exit 1
DU=$DPID
check "airlockd says an undeclared failover could run commands twice" wait_log 10 'evt=durability.failover_undeclared' du
check_out "naming the asynchronous standby, the multi-host conninfo and the setting" \
	's1 streaming/async.*run a second time.*durability.failover: true.*also names 2 hosts' grep 'evt=durability.failover_undeclared' "$WORK/du.log"
kill -HUP $DU
check "and again at the next durability check" bash -c "for i in \$(seq 100); do [ \$(grep -c 'evt=durability.failover_undeclared' '$WORK/du.log') -ge 2 ] && exit 0; sleep 0.1; done; exit 1"
$A doctor --config "$WORK/du.yaml" --timeout-ms 5000 >"$WORK/doctor.out" 2>&1
check_out "airlock doctor fails the check" '^FAIL  database  failover: a standby streams asynchronously \(s1 streaming/async\)' cat "$WORK/doctor.out"
check_out "with the fix" 'fix: set durability.failover: true' cat "$WORK/doctor.out"
kill -TERM $DU
wait $DU 2>/dev/null

# ---- a commit whose wait for a synchronous standby is cancelled is not durable
psql -XAtq -c "ALTER SYSTEM SET synchronous_standby_names = 'ghost'" -c "SELECT pg_reload_conf()" >/dev/null
cfg d0 false
start_daemon d0 || exit 1
D0=$DPID
id=$(as_agent $A run --target $CT -- 'echo ghost-1 >> /tmp/faults.log')
check "fault: a worker's commit waits for a standby that does not exist" wait_for 20 "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'airlockd' AND wait_event = 'SyncRep'"
q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'airlockd' AND wait_event = 'SyncRep'" >/dev/null
check "airlockd does not take the cancelled wait as a commit" wait_log 20 'not confirmed by a synchronous standby' d0
check_eq "nothing ran on the strength of it" 0 "$(cat "$MARKS" 2>/dev/null | grep -cx 'ghost-1')"
psql -XAtq -c "ALTER SYSTEM RESET synchronous_standby_names" -c "SELECT pg_reload_conf()" >/dev/null
check "with the setting repaired the row runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "once" 1 "$(grep -cx 'ghost-1' "$MARKS")"
kill -TERM $D0
wait $D0 2>/dev/null

# ---- declared failover, asynchronous standby: mutations are held
cfg d1 true
start_daemon d1 || exit 1
D1=$DPID
check "airlockd refuses an asynchronous standby for a declared failover" wait_log 10 'no standby is synchronous' d1
id=$(as_agent $A run --target $CT -- 'echo async-1 >> /tmp/faults.log')
check "a mutation is held with the reason" wait_for 30 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $id AND detail->>'released' LIKE '%no standby is synchronous%'"
check_eq "nothing was sent" 0 "$(ran_count 'async-1')"
psql -XAtq -c "ALTER SYSTEM SET synchronous_standby_names = 's1'" -c "SELECT pg_reload_conf()" >/dev/null
check "the standby becomes synchronous" wait_for 30 "SELECT count(*) = 1 FROM pg_stat_replication WHERE application_name = 's1' AND sync_state = 'sync'"
kill -HUP $D1
check "airlockd sees it (SIGHUP re-checks at once)" wait_log 10 'evt=durability.ok synchronous_commit=remote_apply' d1
check "the held mutation runs" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "once" 1 "$(grep -cx 'async-1' "$MARKS")"
kill -TERM $D1
wait $D1 2>/dev/null

# ---- the primary dies mid-drain; the synchronous standby is promoted.
# d1 declared the failover: on the new primary no standby is synchronous,
# and d1 holds its mutations from its first statement there (its reconnect
# is checked before it claims anything).  d2 did not declare it and drains.
cfg d1 true
cfg d2 false
start_daemon d1 || exit 1
D1=$DPID
start_daemon d2 || exit 1
D2=$DPID
as_agent psql -XAtq -c "SELECT airlock.run('$CT', 'echo failover-' || g || ' >> /tmp/faults.log')
	FROM generate_series(1, $N) g" >/dev/null
sleep 1.5
check "fault: the primary dies" as_pg "$BIN/pg_ctl" -D "$PRIMARY" -m immediate stop
check "fault: the standby is promoted" as_pg "$BIN/pg_ctl" -D "$STANDBY" -w promote
check_eq "it is a primary now" f "$(q2 'SELECT pg_is_in_recovery()')"
# The drain must finish on the new primary: from here on every query goes there.
export PGHOST=$SOCK2 PGPORT=$P2
PROMOTED=$(q "SELECT now()")
as_agent psql -XAtq -c "SELECT airlock.run('$CT', 'echo failover-late-' || g || ' >> /tmp/faults.log')
	FROM generate_series(1, 10) g" >/dev/null
check "d1 sees another server after its reconnect" wait_log 60 'evt=db.server_changed' d1
check_out "and holds its mutations there: no synchronous standby" 'evt=durability.unsafe mutations=held why=.*no standby is synchronous' \
	sed -n '/evt=db.server_changed/,$p' "$WORK/d1.log"
check_eq "d1 started nothing on the new primary" 0 "$(q "SELECT count(*) FROM airlock.execution_events WHERE to_state = 'running' AND detail->>'worker' LIKE 'd1/%' AND at >= '$PROMOTED'")"
check "d1 survived and followed" kill -0 $D1
# What d1 held would wait for its recheck: d2 drains it now.
kill -TERM $D1
wait $D1 2>/dev/null
q "UPDATE airlock.executions SET run_after = now() WHERE state IN ('queued', 'approved') AND claimed_by IS NULL" >/dev/null
check "every failover row reaches a final state" wait_for 240 "SELECT count(*) = 0 FROM airlock.executions WHERE command LIKE 'echo failover-%' AND state NOT IN ('succeeded', 'failed', 'outcome_unknown', 'refused')"
check_eq "every row reached the new primary" "$((N + 10))" "$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo failover-%'")"
q "SELECT state || ' ' || substring(command from 'echo ([^ ]+) ') FROM airlock.executions WHERE command LIKE 'echo failover-%'" >"$WORK/failover.rows"
check_out "the failover drain: lost 0, twice 0, stuck 0" 'lost=0 twice=0 stuck=0' python3 - "$WORK/failover.rows" "$MARKS" <<'PY'
import collections, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
marks = collections.Counter(l.strip() for l in open(sys.argv[2]))
lost = sum(1 for s, n in rows if s in ("succeeded", "failed") and marks[n] == 0)
twice = sum(1 for s, n in rows if marks[n] > 1)
stuck = sum(1 for s, n in rows if s not in ("succeeded", "failed", "outcome_unknown", "refused"))
wrong = sum(1 for s, n in rows if s == "refused" and marks[n] != 0)
print("rows=%d lost=%d twice=%d stuck=%d ran_but_refused=%d unknown=%d" % (len(rows), lost, twice,
      stuck, wrong, sum(1 for s, n in rows if s == "outcome_unknown")))
PY
check "d2 survived and followed" kill -0 $D2
id=$(as_agent $A run --target $CT -- 'echo after-failover >> /tmp/faults.log')
check "new work runs on the new primary" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
kill -TERM $D2
wait $D2 2>/dev/null
check_out "the audit chain is intact on the new primary" 'audit: intact' as_alice $A audit verify
finish
