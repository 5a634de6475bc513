#!/bin/bash
# airlockd's guard step against the ZVM simulator, on the rig.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/zvmsim/zvmsimctl run --scale 50 -- tests/daemon/zerto.sh
