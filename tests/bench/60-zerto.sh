#!/bin/bash
# Zerto guard overhead per cadence profile (vSphere 5 s, Azure 60 s, AWS 630 s),
# side by side in one run against the ZVM simulator in real time: lag from the
# tag being listed (the simulator knows when) to the guard returning, and the
# whole guard time over the simulator's insert-to-listed time.  ~2.5 minutes,
# bounded by the AWS profile's 128 s visibility.  ZERTO_BENCH_SCALE=N runs the
# journal N times faster (quicker, but HTTP latency then weighs N times more).
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/bench/zerto_bench
scale=${ZERTO_BENCH_SCALE:-1}
export ZERTO_BENCH_SCALE=$scale
tests/zvmsim/zvmsimctl run --scale "$scale" -- build/bench/zerto_bench 2> >(grep -v '^ts=[^ ]* level=info' >&2)
