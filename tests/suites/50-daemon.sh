#!/bin/bash
# airlockd end to end on the rig and a throwaway database.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/daemon/run.sh
