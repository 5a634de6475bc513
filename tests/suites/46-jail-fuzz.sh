#!/bin/bash
# libFuzzer over the jail helper's argument parser (tests/fuzz/jailargs_fuzz.c:
# jail/airlock-jail.c's jail_parse_args, which must never crash and must
# accept only what keeps its own rules) for about 20 s, seeded with the lines
# airlockd sends.  Fails on a crash, a sanitizer report, a failed assertion,
# a leak or a timeout.
set -uo pipefail
cd "$(dirname "$0")/../.."
fuzz=build/fuzz/jailargs_fuzz
secs=${JAILARGS_FUZZ_SECONDS:-20}
[ -x "$fuzz" ] || { echo "jailargs-fuzz: $fuzz not built (make fuzz)"; exit 1; }
tmp=$(mktemp -d /tmp/airlock-jailargs-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/corpus" "$tmp/artifacts"
printf -- '-t\0user\0-d\0602000\0--\0true' >"$tmp/corpus/user"
printf -- '-t\0root\0-n\0-m\0536870912\0-p\0256\0-c\0100\0-s\067108864\0-S\0/etc/shadow\0-S\0/home/*/.ssh\0--\0qm list' >"$tmp/corpus/root"
printf -- '-t\0write\0-w\0/etc/app.conf\0-w\0/var/lib/app/\0-S\0/root/.ssh\0--\0echo x > /etc/app.conf' >"$tmp/corpus/write"
printf -- '-t\0write\0-w\0/var/lib/airlock/jail/x\0--\0true' >"$tmp/corpus/own-dir"
"$fuzz" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
	-artifact_prefix="$tmp/artifacts/" "$tmp/corpus" >"$tmp/log" 2>&1
rc=$?

if [ $rc -ne 0 ] || ls "$tmp/artifacts"/* >/dev/null 2>&1; then
	tail -40 "$tmp/log"
	for a in "$tmp/artifacts"/*; do [ -f "$a" ] && { echo "artifact $a:"; od -c "$a" | head -10; }; done
	echo "jailargs-fuzz: FAILED (exit $rc)"
	exit 1
fi
echo "jailargs-fuzz: ok ($(grep -oE 'stat::number_of_executed_units: [0-9]+' "$tmp/log" | awk '{print $2}') executions in ${secs} s)"
