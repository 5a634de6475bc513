#!/bin/bash
# Exactly once under faults (short run): PostgreSQL crash-restarts with the
# server's synchronous_commit off, kill -9, a read-only database, a table
# lock past the statement timeout, an sshd outage, a deadline, a clock step.
# `make chaos` runs the same scenarios longer.
cd "$(dirname "$0")/../.."
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/faults/run.sh
