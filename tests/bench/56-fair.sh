#!/bin/bash
# One busy node among two: how long the other node's rows take (created to
# finished) with no load, and with eight long commands filling the busy
# node's slots (the default 8 workers, 4 per node), in one run.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/daemon/fair_bench.sh
