#!/bin/bash
# libFuzzer over the decoder of qm's JSON output (tests/fuzz/qmjson_fuzz.c)
# for about 30 s, seeded with qm's real output shapes.  Fails on a crash, a
# sanitizer report, a leak or a timeout.
set -uo pipefail
cd "$(dirname "$0")/../.."
fuzz=build/fuzz/qmjson_fuzz
secs=${QMJSON_FUZZ_SECONDS:-30}
[ -x "$fuzz" ] || { echo "qmjson-fuzz: $fuzz not built (make fuzz)"; exit 1; }
tmp=$(mktemp -d /tmp/airlock-qmjson-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/corpus" "$tmp/artifacts"
# Seeds: the shapes proxmox.md section 2.3 shows, as qm prints them.
printf '\x07{\n   "err-data" : "err\\n",\n   "err-truncated" : 0,\n   "exitcode" : 3,\n   "exited" : 1,\n   "out-data" : "hi\\n",\n   "out-truncated" : 0\n}\n' >"$tmp/corpus/finished"
printf '\x03{\n   "pid" : 25\n}\n' >"$tmp/corpus/pid"
printf '\x05{\n   "exited" : 1,\n   "signal" : 15\n}\n' >"$tmp/corpus/signal"
printf '\x09{\n   "exited" : 1,\n   "exitcode" : 0,\n   "out-data" : "gr\xc3\x83\xc2\xbcn \\u00ff\\"\\\\",\n   "out-truncated" : 1\n}\n' >"$tmp/corpus/utf8"
printf '\x01{ "exited" : 0 }' >"$tmp/corpus/running"
"$fuzz" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-artifact_prefix="$tmp/artifacts/" "$tmp/corpus" >"$tmp/log" 2>&1
rc=$?

if [ $rc -ne 0 ] || ls "$tmp/artifacts"/* >/dev/null 2>&1; then
	tail -40 "$tmp/log"
	for a in "$tmp/artifacts"/*; do [ -f "$a" ] && { echo "artifact $a:"; od -c "$a" | head -10; }; done
	echo "qmjson-fuzz: FAILED (exit $rc)"
	exit 1
fi
echo "qmjson-fuzz: ok ($(grep -oE 'stat::number_of_executed_units: [0-9]+' "$tmp/log" | awk '{print $2}') executions in ${secs} s)"
