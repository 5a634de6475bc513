#!/bin/bash
# Notifications and metrics: how fast airlockd drains the outbox to a local
# receiver, and what a metrics scrape costs on a large history.
# BENCH_NOTIFY_N held requests (default 500) are made by SQL on a throwaway
# database (no rig: nothing runs), then airlockd starts with 1 and then 3
# webhooks (json, signed); the time from its start until every delivery is
# recorded as delivered, and deliveries per second.  Each delivery is one
# lease statement, one HTTP POST and one result statement.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/bin/airlock build/bin/airlockd
if [ -z "${AIRLOCK_PGTMP:-}" ]; then
	exec scripts/pgtmp --quiet -- "$0" "$@"
fi
N=${BENCH_NOTIFY_N:-500}
A=build/bin/airlock
D=build/bin/airlockd
W=$(mktemp -d /tmp/airlock-notifybench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$W"' EXIT
$A migrate >/dev/null
$A seed seeds >/dev/null 2>&1
psql -Xq -c "CREATE ROLE airlockd LOGIN IN ROLE airlock_worker"
mkdir -p "$W/hooks"
python3 tests/daemon/webhook_sink.py "$W/hook.port" "$W/hooks" &
pids+=($!)
for _ in $(seq 1 50); do [ -s "$W/hook.port" ] && break; sleep 0.1; done
HP=$(cat "$W/hook.port")
: >"$W/key"
: >"$W/known_hosts"
head -c 32 /dev/urandom | base64 >"$W/secret"
chmod 600 "$W/secret"
q() { psql -XAtq -c "$1"; }

for hooks in 1 3; do
	q "TRUNCATE airlock.notification_deliveries, airlock.notifications"
	# N held requests, made as the database's owner: inserted, then moved
	# to pending_approval in one statement (the trigger fills the outbox).
	q "INSERT INTO airlock.executions (target, target_type, command, requested_by, class)
	   SELECT 'proxmox-host:hubris', 'proxmox-host', 'apt-get install -y bench-' || g, 'bench',
	          'config_mutation' FROM generate_series(1, $N) g"
	q "UPDATE airlock.executions SET state = 'pending_approval' WHERE state = 'received'"
	list=()
	for h in $(seq 1 "$hooks"); do
		list+=("  - {name: h$h, url: \"http://127.0.0.1:$HP/h$h\", secret_file: $W/secret}")
	done
	cat >"$W/d.yaml" <<EOC
worker_id: bench
database: "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=airlockd"
workers: 1
log_level: warn
ssh:
  private_key: $W/key
  known_hosts: $W/known_hosts
durability:
  allow_fsync_off: true
notifications:
  poll_ms: 100
  base_url: https://console.example
webhooks:
$(printf '%s\n' "${list[@]}")
EOC
	want=$((N * hooks))
	t0=$(date +%s.%N)
	$D -c "$W/d.yaml" >"$W/d.log" 2>&1 &
	dp=$!
	pids+=($dp)
	for _ in $(seq 1 6000); do
		[ "$(q "SELECT count(*) FROM airlock.notification_deliveries WHERE state = 'delivered'")" = "$want" ] && break
		sleep 0.05
	done
	t1=$(date +%s.%N)
	got=$(q "SELECT count(*) FROM airlock.notification_deliveries WHERE state = 'delivered'")
	kill -TERM $dp
	wait $dp 2>/dev/null || true
	[ "$got" = "$want" ] || { echo "only $got of $want delivered"; tail -5 "$W/d.log"; exit 1; }
	awk -v n="$want" -v h="$hooks" -v a="$t0" -v b="$t1" \
		'BEGIN { printf "notify: %d deliveries (%d webhooks) in %.2f s: %.0f deliveries/s\n", n, h, b - a, n / (b - a) }'
	q "UPDATE airlock.executions SET state = 'cancelled' WHERE state = 'pending_approval'" >/dev/null
done

# ---- metrics: a scrape over BENCH_METRICS_ROWS finished requests (default 100000)
M=${BENCH_METRICS_ROWS:-100000}
q "INSERT INTO airlock.executions (target, target_type, command, requested_by, class, state,
     classified_at, decided_at, duration_ms)
   SELECT 'proxmox-host:hubris', 'proxmox-host', 'echo m-' || g, 'bench',
          (ARRAY['read_only','reversible_low','config_mutation','destructive'])[1 + g % 4],
          'cancelled', now() - interval '1 hour', CASE WHEN g % 3 = 0 THEN now() END, g % 60000
   FROM generate_series(1, $M) g"
MP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'metrics:\n  port: %s\n' "$MP" >>"$W/d.yaml"
$D -c "$W/d.yaml" >"$W/d.log" 2>&1 &
dp=$!
pids+=($dp)
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$MP/metrics" && break; sleep 0.1; done
times=()
for _ in 1 2 3 4 5; do
	times+=("$(curl -s -o "$W/scrape" -w '%{time_total}' "http://127.0.0.1:$MP/metrics")")
done
kill -TERM $dp
wait $dp 2>/dev/null || true
printf '%s\n' "${times[@]}" | sort -n | awk -v m="$M" -v b="$(wc -c <"$W/scrape")" \
	'{ t[NR] = $1 } END { printf "metrics: scrape over %d requests: median %.0f ms (min %.0f, max %.0f), %d bytes\n", m, t[3] * 1000, t[1] * 1000, t[5] * 1000, b }'
