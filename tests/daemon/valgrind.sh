#!/bin/bash
# airlockd under valgrind through a steady stream of work: no leaks, no
# memory errors.  Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
command -v valgrind >/dev/null || { echo "valgrind is missing (scripts/install-deps installs it)"; exit 1; }
setup_db || exit 1
q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler" >/dev/null
WORKERS=2 PER_NODE=2 write_config vg "scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\"" \
	"probes:" "  interval_s: 2" >/dev/null
valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
	--error-exitcode=99 --log-file="$WORK/valgrind.log" \
	$D -c "$WORK/vg.yaml" --grace 20 >"$WORK/vg.log" 2>&1 &
vpid=$!
DAEMON_PIDS+=("$vpid")
wait_for 60 "SELECT count(*) > 0 FROM pg_stat_activity WHERE usename = 'airlockd'" || { cat "$WORK/vg.log"; exit 1; }
for i in $(seq 1 10); do
	as_agent $A run --target proxmox-host:hubris -- "echo vg-$i" >/dev/null
	as_agent $A run --target lxc:nfs-export -- "hostname" >/dev/null
done
id=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pveproxy')
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
as_alice $A approve $id >/dev/null
check "twenty-one executions finish under valgrind" wait_for 120 \
	"SELECT count(*) = 21 FROM airlock.executions WHERE state IN ('succeeded', 'failed')"
sleep 3 # at least one more probe round
kill -TERM $vpid
wait $vpid
rc=$?
check_eq "valgrind reports no memory errors and no leaks (exit status)" 0 "$rc"
check_out "no bytes definitely lost" 'definitely lost: 0 bytes|no leaks are possible' cat "$WORK/valgrind.log"
check_out "no bytes indirectly lost" 'indirectly lost: 0 bytes|no leaks are possible' cat "$WORK/valgrind.log"
check_out "ERROR SUMMARY: 0 errors" 'ERROR SUMMARY: 0 errors' cat "$WORK/valgrind.log"
[ "$T_FAIL" -gt 0 ] && grep -A30 "definitely lost in\|Invalid\|uninitialised" "$WORK/valgrind.log" | head -80
finish
