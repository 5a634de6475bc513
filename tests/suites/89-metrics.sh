#!/bin/bash
# Metrics: airlockd's Prometheus endpoint on the rig, scraped with curl and
# read by a strict text-format parser written for the test
# (tests/metrics/promparse.py, itself checked against broken inputs first).
# The numbers agree with the database; the endpoint listens on loopback by
# default, answers only GET /metrics, and a client that stalls it does not
# hold up the workers.
set -uo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_RIG_SSH_PORT:-}" ]; then
	exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
fi
. tests/lib.sh
. tests/daemon/lib.sh
PARSE=tests/metrics/promparse.py

# ---- the parser refuses what is not the format
bad() { printf '%b' "$2" >"$WORK/bad.prom"; check_out "parser refuses $1" '^promparse: ' python3 $PARSE "$WORK/bad.prom"; }
mkdir -p "$WORK"
bad "a sample before its TYPE" '# HELP a_x x\na_x 1\n'
bad "a bad label escape" '# HELP a x\n# TYPE a gauge\na{l="\\q"} 1\n'
bad "a non-number" '# HELP a x\n# TYPE a gauge\na 1,5\n'
bad "decreasing buckets" '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n'
bad "+Inf not _count" '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'
bad "a series twice" '# HELP a x\n# TYPE a gauge\na{l="1"} 1\na{l="1"} 2\n'
bad "a negative counter" '# HELP a_total x\n# TYPE a_total counter\na_total -1\n'
bad "families interleaved" '# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\nb 1\na 1\n'
bad "_count without buckets" '# HELP h x\n# TYPE h histogram\nh_sum 1\nh_count 3\n'
printf '# HELP a x\n# TYPE a gauge\na{l="q\\"\\\\"} 1\n' >"$WORK/good.prom"
check_out "parser reads a good text" '"a\{l=q\\"\\\\\}": 1.0' python3 $PARSE "$WORK/good.prom"

setup_db || { echo "set-up failed"; exit 1; }
q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler;" >/dev/null
MP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
write_config m1 "metrics:" "  port: $MP" \
	"scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\"" "probes:" "  interval_s: 1" \
	"notifications:" "  backoff_ms: 100" "  max_attempts: 2" "  poll_ms: 200" \
	"webhooks:" "  - {name: down, url: \"http://127.0.0.1:1/x\", events: [pending_approval], timeout_ms: 300}" >/dev/null
write_config bad "metrics:" "  address: 127.0.0.1" >/dev/null
check_out "a metrics section needs a port" 'metrics: port is required' $D -n -c "$WORK/bad.yaml"
start_daemon m1 || { echo "airlockd did not start"; cat "$WORK/m1.log"; exit 1; }
check "it says where it listens: loopback by default" wait_log 5 "evt=metrics.listening address=127.0.0.1 port=$MP path=/metrics" m1
check "the socket is bound to 127.0.0.1 only" python3 - "$MP" <<'PY'
import sys
port = int(sys.argv[1])
rows = [l.split() for l in open("/proc/net/tcp").read().splitlines()[1:]]
mine = [r for r in rows if int(r[1].split(":")[1], 16) == port and r[3] == "0A"]
assert mine and all(r[1].split(":")[0] == "0100007F" for r in mine), mine
rows6 = [l.split() for l in open("/proc/net/tcp6").read().splitlines()[1:]]
assert not [r for r in rows6 if int(r[1].split(":")[1], 16) == port and r[3] == "0A"]
PY

check "before any request, a scrape parses too" bash -c "curl -sS --max-time 10 http://127.0.0.1:$MP/metrics >$WORK/empty.prom && python3 $PARSE $WORK/empty.prom >/dev/null"
check_out "with the families announced and no series yet" '^# TYPE airlock_execution_duration_seconds histogram' cat "$WORK/empty.prom"

# ---- some life to count
ro=$(as_agent $A run --target proxmox-host:hubris -- 'hostname; echo metrics-ro')
wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $ro"
h1=$(as_agent $A run --target proxmox-host:hubris -- apt-get install -y pkg-metrics-1)
h2=$(as_agent $A run --target proxmox-host:hubris -- apt-get install -y pkg-metrics-2)
wait_for 30 "SELECT count(*) = 2 FROM airlock.executions WHERE id IN ($h1, $h2) AND state = 'pending_approval'"
as_alice $A approve "$h1" --reason ok >/dev/null
check "the approved install finishes" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $h1"
check "the dead webhook has failed for good (the fault happened)" wait_for 20 \
	"SELECT count(*) >= 1 FROM airlock.notification_deliveries WHERE hook = 'down' AND state = 'failed'"
check "the scheduler has probed the node" wait_for 20 "SELECT count(*) > 0 FROM airlock.checks WHERE entity = 'proxmox-host:hubris'"

scrape() { curl -sS --max-time 10 "http://127.0.0.1:$MP/metrics" >"$WORK/scrape.prom"; }
check "a scrape answers" scrape
check_out "it is served as the text format" 'Content-Type: text/plain; version=0.0.4' curl -sS -D - -o /dev/null "http://127.0.0.1:$MP/metrics"
python3 $PARSE "$WORK/scrape.prom" >"$WORK/scrape.json"
check "the strict parser reads every line of it" test -s "$WORK/scrape.json" -a "$(head -c 10 "$WORK/scrape.json")" != "promparse:"
m() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d.get(sys.argv[2]); print("absent" if v is None else ("%g" % v))' "$WORK/scrape.json" "$1"; }
check_eq "the database part is in" 1 "$(m 'airlock_database_up{}')"
check_eq "pending count matches the database" "$(q "SELECT count(*) FROM airlock.executions WHERE state = 'pending_approval'")" "$(m 'airlock_pending_requests{}')"
check_eq "requests by state and class match" "$(q "SELECT count(*) FROM airlock.executions WHERE state = 'succeeded' AND class = 'read_only'")" \
	"$(m 'airlock_requests{class=read_only,state=succeeded}')"
check "the oldest pending request has an age" python3 -c "import sys; assert float(sys.argv[1]) > 0" "$(m 'airlock_pending_oldest_age_seconds{}')"
check_eq "approval latency counts every decision" "$(q "SELECT count(*) FROM airlock.executions WHERE decided_at IS NOT NULL")" \
	"$(m 'airlock_approval_latency_seconds_count{}')"
check_eq "execution durations count every finished read_only command" \
	"$(q "SELECT count(*) FROM airlock.executions WHERE duration_ms IS NOT NULL AND class = 'read_only'")" \
	"$(m 'airlock_execution_duration_seconds_count{class=read_only}')"
check "the node's probe age is recent" python3 -c "import sys; assert 0 <= float(sys.argv[1]) < 60" "$(m 'airlock_probe_age_seconds{entity=proxmox-host:hubris}')"
check "the transport opened a session to the node" python3 -c "import sys; assert float(sys.argv[1]) >= 1" "$(m 'airlock_transport_sessions_opened_total{node=proxmox-host:hubris}')"
check_eq "transport failures per node are reported" 0 "$(m 'airlock_transport_failures{kind=outcome_unknown,node=proxmox-host:hubris}')"
check "the guard step of the approved change was timed" python3 -c "import sys; assert float(sys.argv[1]) >= 1" "$(m 'airlock_guard_duration_seconds_count{}')"
check_eq "no guard refusal" 0 "$(m 'airlock_guard_refusals_total{}')"
check "webhook failures are counted" python3 -c "import sys; assert float(sys.argv[1]) >= 2" "$(m 'airlock_webhook_failures_total{}')"
check_eq "and the failed deliveries are shown per webhook" \
	"$(q "SELECT count(*) FROM airlock.notification_deliveries WHERE hook = 'down' AND state = 'failed'")" \
	"$(m 'airlock_webhook_deliveries{hook=down,state=failed}')"

# ---- only GET /metrics
check_out "another path is 404" '^404$' curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MP/other"
check_out "POST is 405" '^405$' curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$MP/metrics"

# ---- a client that stalls the endpoint does not hold up the workers
python3 -c 'import socket,sys,time; s=socket.create_connection(("127.0.0.1", int(sys.argv[1]))); time.sleep(8)' "$MP" &
STALL=$!
sleep 0.5
id=$(as_agent $A run --target proxmox-host:hubris -- 'hostname; echo while-stalled')
check "a command runs while a client stalls the endpoint" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check "the endpoint answers again after its read timeout" scrape
kill "$STALL" 2>/dev/null
wait "$STALL" 2>/dev/null
check_eq "the daemon is still up" 0 "$(kill -0 "$DPID" 2>/dev/null; echo $?)"
finish
