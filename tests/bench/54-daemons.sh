#!/bin/bash
# Several airlockd on one database: read-only host executions per second with
# one daemon, then with four (8 workers each), in one run, and how often a
# writer waited for the audit chain's lock meanwhile.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/daemon/scaling.sh
