#!/bin/bash
# airlockd end to end: wake-up latency, read-only executions per second on the
# rig's host, CPU per execution (airlockd and PostgreSQL), resident memory.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/daemon/bench.sh
