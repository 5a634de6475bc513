#!/bin/bash
# Several airlockd on one database: read-only host executions per second with
# one daemon, then with four (8 workers each), in one run, and how often a
# daemon's session waited for a lock meanwhile (any lock, an advisory lock of
# any kind, the audit chain's).
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/daemon/scaling.sh
