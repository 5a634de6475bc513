#!/bin/bash
# Recovery requests (file-level restore from a rewind point) with airlockd, on
# the rig and the ZVM simulator.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/zvmsim/zvmsimctl run --scale 50 -- tests/daemon/recover.sh
