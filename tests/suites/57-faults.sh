#!/bin/bash
# Exactly once under faults (short run): PostgreSQL crash-restarts with the
# server's synchronous_commit off, kill -9, a read-only database, a table
# lock past the statement timeout, an sshd outage, a deadline, a clock step;
# then the database's disk filling up (its cluster on a small tmpfs); one
# busy or stalled node among two (fair claiming); a start cancelled by a
# lock, a row's write cancelled by a table lock, PostgreSQL restarted under
# a running command (nothing stuck, nothing refused, no result lost); the
# audit anchor file torn by a crash and on a full disk; the ZVM answering
# an insert or a mount late, and an insert failing on one VPG of three; the
# database's clock stepping forward (libfaketime).
# `make chaos` runs the first part longer.
cd "$(dirname "$0")/../.."
rc=0
scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/run.sh || rc=1
scripts/pgtmp --quiet --tmpfs 200m -- tests/rig/rigctl run -- tests/faults/diskfull.sh || rc=1
scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/fair.sh || rc=1
scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/settle.sh || rc=1
scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/anchors.sh || rc=1
scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/zvmsim/zvmsimctl run --scale 50 -- tests/faults/zvm.sh || rc=1
scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/clock.sh || rc=1
exit $rc
