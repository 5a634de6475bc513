#!/bin/bash
# The Zerto guard and the FLR client against the ZVM simulator (tests/zvmsim): every guard
# outcome, the token race under 32 concurrent guards, three VPGs for one VM, a
# syncing VPG, the 630 s cadence, an unreachable ZVM, TLS verification.
# The simulator runs its journal 20x faster; the guard is told so.
set -euo pipefail
cd "$(dirname "$0")/../.."

command -v python3 >/dev/null || { echo "60-zerto: python3 missing (scripts/install-deps)"; exit 1; }
command -v openssl >/dev/null || { echo "60-zerto: openssl missing (scripts/install-deps)"; exit 1; }
make -s build/integration/zerto_guard_test build/integration/zerto_flr_test

log=$(mktemp /tmp/zerto-suite.XXXXXX)
trap 'rm -f "$log"' EXIT
show() { # the whole log when a step failed (and stop)
	local rc=$1
	if [ "$rc" -ne 0 ]; then
		cat "$log"
		echo "60-zerto: FAILED (exit $rc)"
		exit 1
	fi
}

# The simulator itself keeps the contract (appliance mode and legacy login).
rc=0
tests/zvmsim/zvmsimctl run -- python3 tests/zvmsim/zvmsim_selftest.py >"$log" 2>&1 || rc=$?
show $rc
grep -E '^(Ran|OK)' "$log"
rc=0
ZVMSIM_SELFTEST_LEGACY=1 tests/zvmsim/zvmsimctl run --legacy -- \
	python3 tests/zvmsim/zvmsim_selftest.py >"$log" 2>&1 || rc=$?
show $rc
grep -E '^(Ran|OK)' "$log"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rc=0
# Afterwards, inside the simulator's lifetime (its secret files go with it):
# neither the client secret nor the password may appear in anything logged.
tests/zvmsim/zvmsimctl run --scale 20 -- sh -c '
	build/integration/zerto_guard_test >"$1" 2>&1
	rc=$?
	for f in "$ZVMSIM_SECRET_FILE" "$ZVMSIM_PASSWORD_FILE"; do
		if grep -qF -- "$(cat "$f")" "$1"; then
			echo "60-zerto: a secret from $f appears in the log" >>"$1"
			exit 3
		fi
	done
	exit $rc' sh "$log" || rc=$?
# The guard's key=value lines are for an operator; show the test verdicts,
# and everything when something failed.
show $rc
grep -E '^\[' "$log"

# The file-level restore client: mount, path mapping (Windows drive letters,
# ambiguity refused), the download cap, URLs off the ZVM refused, unmount.
rc=0
tests/zvmsim/zvmsimctl run --scale 20 -- build/integration/zerto_flr_test >"$log" 2>&1 || rc=$?
show $rc
grep -E '^\[' "$log"
