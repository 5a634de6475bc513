#!/bin/bash
# airlockd under valgrind through a steady stream of work, with webhooks in
# every format and the metrics endpoint: no leaks, no memory errors.  Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
command -v valgrind >/dev/null || { echo "valgrind is missing (scripts/install-deps installs it)"; exit 1; }
setup_db || exit 1
q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler" >/dev/null
# The notifier (every format, signed, a receiver that is down) and the
# metrics endpoint run under valgrind too.
mkdir -p "$WORK/hooks"
python3 tests/daemon/webhook_sink.py "$WORK/hook.port" "$WORK/hooks" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/hook.port" ] && break; sleep 0.1; done
HP=$(cat "$WORK/hook.port")
MP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 32 /dev/urandom | base64 >"$WORK/hook.secret"
echo "syt_vgtoken" >"$WORK/mx.token"
chmod 600 "$WORK/hook.secret" "$WORK/mx.token"
hooks=("webhooks:")
for f in json ntfy slack mattermost discord; do
	hooks+=("  - {name: $f, url: \"http://127.0.0.1:$HP/$f/t\", format: $f, secret_file: $WORK/hook.secret}")
done
hooks+=("  - {name: matrix, url: \"http://127.0.0.1:$HP/_matrix/client/v3/rooms/!r:x/send/m.room.message\", format: matrix, token_file: $WORK/mx.token}")
hooks+=("  - {name: down, url: \"http://127.0.0.1:1/x\", timeout_ms: 300}")
WORKERS=2 PER_NODE=2 write_config vg "scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\"" \
	"probes:" "  interval_s: 2" "metrics:" "  port: $MP" \
	"notifications:" "  base_url: https://console.example" "  backoff_ms: 100" "  max_attempts: 2" "  poll_ms: 200" \
	"${hooks[@]}" >/dev/null
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
check "the webhooks are told" wait_for 60 \
	"SELECT count(*) >= 6 FROM airlock.notification_deliveries WHERE state = 'delivered'"
check "the dead webhook is given up on" wait_for 60 \
	"SELECT count(*) >= 1 FROM airlock.notification_deliveries WHERE hook = 'down' AND state = 'failed'"
check_out "the metrics endpoint answers" '^airlock_database_up 1' curl -sS --max-time 60 "http://127.0.0.1:$MP/metrics"
check_out "and again" '^airlock_guard_duration_seconds_count 1' curl -sS --max-time 60 "http://127.0.0.1:$MP/metrics"
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
