#!/bin/bash
# cmocka unit tests, built with ASan and UBSan (make unit).
set -uo pipefail
cd "$(dirname "$0")/../.."
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rc=0
n=0
for t in build/unit/*_test; do
	[ -x "$t" ] || continue
	n=$((n + 1))
	"$t"
	st=$?
	if [ "$st" -ne 0 ]; then
		# How it ended, also when it died before cmocka printed a word.
		how="exit $st"
		[ "$st" -gt 128 ] && how="killed by SIG$(kill -l $((st - 128)) 2>/dev/null || echo $((st - 128)))"
		echo "not ok - unit: $t failed ($how)"
		rc=1
	fi
done
[ "$n" -gt 0 ] || { echo "unit: no unit tests were built"; exit 1; }
exit $rc
