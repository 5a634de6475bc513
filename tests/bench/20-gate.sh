#!/bin/bash
# What the gate's checks cost an agent's calls, side by side in one run on one
# throwaway PostgreSQL: run() and update_entity_attributes() as an agent, with
# the schema before the hardened gate (migrations 0001-0002) and with all
# migrations (flood limits counted under a per-agent lock, the carry check,
# key normalisation).  The calls are spread over agents of 50 calls each, so
# that the default limits (60 a minute, 100 open) refuse nothing; each call is
# its own statement, as an agent's would be.  BENCH_GATE_N calls each (default
# 2000).  One session switches between the agents (SET SESSION
# AUTHORIZATION), so no connection cost is measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/bin/airlock

if [ -z "${AIRLOCK_PGTMP:-}" ]; then
	exec scripts/pgtmp --quiet -- "$0" "$@"
fi
N=${BENCH_GATE_N:-2000}
A=build/bin/airlock
tmp=$(mktemp -d /tmp/airlock-gatebench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/before"
cp migrations/0001_*.sql migrations/0002_*.sql "$tmp/before/"
$A migrate >/dev/null
AGENTS=$(((N + 49) / 50))
for g in $(seq "$AGENTS"); do echo "CREATE ROLE bench_agent$g LOGIN IN ROLE airlock_agent;"; done | psql -Xq
inventory='{"entities": [{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1"},
  {"slug": "vm:web01", "type": "vm", "node": "proxmox-host:hubris", "vmid": 101, "attributes": {"qemu_guest_agent": "running"}}]}'
for db in before after; do
	createdb "$db"
	if [ "$db" = before ]; then
		$A migrate --db "dbname=$db" --dir "$tmp/before" >/dev/null
	else
		$A migrate --db "dbname=$db" >/dev/null
	fi
	psql -Xq -d "$db" -c "SELECT airlock.seed_inventory('$inventory')" >/dev/null
done
for g in $(seq "$AGENTS"); do
	echo "SET SESSION AUTHORIZATION bench_agent$g;"
	for i in $(seq 50); do
		echo "SELECT airlock.run('vm:web01', 'systemctl status nginx --no-pager; echo $i');"
	done
	echo "RESET SESSION AUTHORIZATION;"
done >"$tmp/run.sql"
for g in $(seq "$AGENTS"); do
	echo "SET SESSION AUTHORIZATION bench_agent$g;"
	for i in $(seq 50); do
		echo "SELECT airlock.update_entity_attributes('vm:web01', '{\"owner\": \"team-$i\", \"Rack \": \"r$((i % 40))\", \"role\": \"web\", \"tier\": $i}');"
	done
	echo "RESET SESSION AUTHORIZATION;"
done >"$tmp/attr.sql"

ms() { date +%s%3N; }
measure() { # DB FILE -> calls per second
	local t0 t1
	t0=$(ms)
	psql -Xq -d "$1" -v ON_ERROR_STOP=1 -f "$2" >/dev/null
	t1=$(ms)
	echo $((AGENTS * 50 * 1000 / (t1 - t0 > 0 ? t1 - t0 : 1)))
}
declare -A rate
for what in run attr; do
	for db in before after; do
		rate[$what.$db]=$(measure "$db" "$tmp/$what.sql")
	done
done
for what in run attr; do
	name=$([ "$what" = run ] && echo "run()" || echo "update_entity_attributes()")
	b=${rate[$what.before]} a=${rate[$what.after]}
	printf '%-28s before %6d calls/s   after %6d calls/s   after/before %s\n' "$name" "$b" "$a" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
done
