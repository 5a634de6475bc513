#!/bin/bash
# Failover on PostgreSQL's own streaming replication: a declared failover
# holds mutations until the standby is synchronous; the primary dies mid-drain
# and the synchronous standby is promoted: every row final, none twice.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/failover.sh
