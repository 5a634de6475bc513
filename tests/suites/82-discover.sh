#!/bin/bash
# 82-discover: inventory from the cluster (tests/ops/discover.sh): discovery
# of guests, a live migration followed, gone guests refused, a second node
# with its own key and pinned host key; a real airlockd, the rig, a
# throwaway database.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/ops/discover.sh
