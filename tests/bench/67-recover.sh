#!/bin/bash
# File recovery from a rewind point on the rig: time per file size, ZVM side
# against guest side (tests/daemon/recover_bench.sh).  About a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/zvmsim/zvmsimctl run --scale 50 -- \
	tests/daemon/recover_bench.sh
