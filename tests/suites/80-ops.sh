#!/bin/bash
# 80-ops: operating airlock (tests/ops/run.sh): airlockd under a service
# manager (sd_notify, the systemd unit), the schema check at start, airlock
# doctor, airlock user, make install and the docs' shell blocks; against a
# throwaway database, the rig and the ZVM simulator.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/zvmsim/zvmsimctl run --scale 50 -- \
	tests/ops/run.sh
