#!/bin/bash
# The Zerto guard against the ZVM simulator (tests/zvmsim): every guard
# outcome, the token race under 32 concurrent guards, three VPGs for one VM, a
# syncing VPG, the 630 s cadence, an unreachable ZVM, TLS verification.
# The simulator runs its journal 20x faster; the guard is told so.
set -euo pipefail
cd "$(dirname "$0")/../.."

command -v python3 >/dev/null || { echo "60-zerto: python3 missing (scripts/install-deps)"; exit 1; }
command -v openssl >/dev/null || { echo "60-zerto: openssl missing (scripts/install-deps)"; exit 1; }
make -s build/integration/zerto_guard_test

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
log=$(mktemp /tmp/zerto-suite.XXXXXX)
trap 'rm -f "$log"' EXIT
rc=0
tests/zvmsim/zvmsimctl run --scale 20 -- build/integration/zerto_guard_test >"$log" 2>&1 || rc=$?
# The guard's key=value lines are for an operator; show the test verdicts,
# and everything when something failed.
if [ "$rc" -ne 0 ]; then
	cat "$log"
	echo "60-zerto: FAILED (exit $rc)"
	exit 1
fi
grep -E '^\[' "$log"
