# tests/lib.sh -- small assertion helpers for the shell test suites.
# Source it; call `check NAME CMD...`, `check_out NAME PATTERN CMD...`, and end
# with `finish`, which prints "N passed, N failed" and sets the exit status.
T_PASS=0
T_FAIL=0

pass() { T_PASS=$((T_PASS + 1)); echo "ok - $1"; }
failt() { T_FAIL=$((T_FAIL + 1)); echo "not ok - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/#   /' | head -20; }

# check NAME CMD... : CMD must exit 0.
check() {
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then pass "$name"; else failt "$name" "$out"; fi
}

# check_fails NAME EXPECTED_RC CMD... : CMD must exit with EXPECTED_RC.
check_rc() {
	local name=$1 want=$2; shift 2
	local out rc
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ]; then pass "$name"; else failt "$name" "exit $rc, wanted $want: $out"; fi
}

# check_out NAME REGEX CMD... : CMD's stdout+stderr must match REGEX (grep -E).
check_out() {
	local name=$1 re=$2; shift 2
	local out
	out=$("$@" 2>&1)
	if grep -qE -- "$re" <<<"$out"; then pass "$name"; else failt "$name" "wanted /$re/, got: $out"; fi
}

# check_eq NAME WANT GOT
check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else failt "$1" "wanted '$2', got '$3'"; fi
}

finish() {
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" -eq 0 ] && [ "$T_PASS" -gt 0 ]
}
