#!/bin/bash
# The audit chain's cost: run() with the record triggers (per call), sealing
# the events run() wrote (seal_events, in batches), airlockd draining N
# read-only runs while it seals and anchors, what the seals leave for vacuum,
# and `airlock audit verify` both ways (in the database; --anchors,
# recomputed in C) over the resulting chain.
#   N=2000 tests/bench/25-audit.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_RIG_SSH_PORT:-}" ]; then
	exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
fi
. tests/lib.sh
. tests/daemon/lib.sh
N=${N:-2000}
setup_db >/dev/null 2>&1 || { echo "set-up failed"; exit 1; }
$A audit keygen --out "$WORK/k" >/dev/null
write_config b "audit:" "  signing_key: $WORK/k" "  anchor_file: $WORK/anchors" "  every_events: 100" \
	"  every_seconds: 1" >/dev/null
secs() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$@"; }

# run() alone (no daemon yet): N calls in one statement, as the agent.
t0=$(date +%s.%N)
PGUSER=hermes q "SELECT count(airlock.run('proxmox-host:hubris', 'echo bench-' || g)) FROM generate_series(1, $N) g" >/dev/null
t1=$(date +%s.%N)
echo "run(): $N calls in $(secs $t0 $t1) s ($(python3 -c "print('%.3f' % (($t1 - $t0) * 1000 / $N))") ms per call, each writing a record and an event)"

# Sealing what run() wrote, as airlockd does: batches of 2,000, one transaction each.
unsealed=$(q "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL")
t0=$(date +%s.%N)
while [ "$(q "SELECT airlock.seal_events(2000)")" = 2000 ]; do :; done
t1=$(date +%s.%N)
echo "seal_events: $unsealed events in $(secs $t0 $t1) s ($(python3 -c "print('%.1f' % (($t1 - $t0) * 1e6 / max($unsealed, 1)))") us per event, batches of 2000)"

start_daemon b || { echo "airlockd did not start"; exit 1; }
t0=$(date +%s.%N)
wait_for 900 "SELECT count(*) = $N FROM airlock.executions WHERE state IN ('succeeded', 'failed', 'refused', 'outcome_unknown')" >/dev/null
t1=$(date +%s.%N)
kill -TERM $DPID; wait $DPID 2>/dev/null
events=$(q "SELECT count(*) FROM airlock.execution_events")
records=$(q "SELECT count(*) FROM airlock.execution_events WHERE from_state = 'record'")
echo "airlockd (workers=${WORKERS:-4}, sealing, anchoring): $N read-only runs drained in $(secs $t0 $t1) s; chain: $events events ($records records), $(wc -l <"$WORK/anchors") anchors, $(q "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL") left unsealed"
q "SELECT pg_stat_force_next_flush()" >/dev/null 2>&1
echo "execution_events after the drain: $(q "SELECT pg_size_pretty(pg_total_relation_size('airlock.execution_events')) || ' with indexes; ' || n_live_tup || ' live, ' || n_dead_tup || ' dead tuples (the unsealed versions, for vacuum); ' || n_tup_upd || ' updates, ' || n_tup_hot_upd || ' HOT' FROM pg_stat_user_tables WHERE relid = 'airlock.execution_events'::regclass")"

t0=$(date +%s.%N); PGUSER=alice $A audit verify >/dev/null; rc1=$?; t1=$(date +%s.%N)
echo "audit verify (in the database): $events events in $(secs $t0 $t1) s (exit $rc1)"
t0=$(date +%s.%N); PGUSER=alice $A audit verify --anchors "$WORK/anchors" --pubkey "$WORK/k.pub" >/dev/null; rc2=$?; t1=$(date +%s.%N)
echo "audit verify --anchors (recomputed in C): $events events in $(secs $t0 $t1) s (exit $rc2)"
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
