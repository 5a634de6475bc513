#!/bin/bash
# 42-shell: what was parsed is what runs.  The differential test
# (tests/integration/shelldiff_test.c over tests/data/shelldiff.py): every
# kind of construct where bash and dash disagree, run on the rig's host, VM
# and container, must have bash's effect, the one the classifier saw, and
# dash's through /bin/sh.  Then airlockd end to end with a container of
# busybox alone: the probes record each target's shell, and nothing runs on
# the one without bash.  See tests/shell/run.sh.
cd "$(dirname "$0")/../.." || exit 1
for tool in /bin/bash /bin/dash /bin/busybox python3; do
	command -v "$tool" >/dev/null || { echo "42-shell: $tool missing (scripts/install-deps)"; exit 1; }
done
make -s build/integration/shelldiff_test || exit 1
# The rig's qm polls every 50 ms (qm.pm's 1 s sleep would make each of the
# few hundred VM commands here last a second).
export PVE_SHIM_POLL_INTERVAL=0.05
exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/shell/run.sh
