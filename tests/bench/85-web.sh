#!/bin/bash
# What the operators' console costs, on one throwaway PostgreSQL whose
# loopback logins need SCRAM: a sign-in (two SCRAM connections -- the real
# one and the check that a wrong password fails -- and web_signed_in()), the
# pending page with BENCH_WEB_PENDING requests waiting (default 200), one
# request's page (blast radius, reasons, events), and the delay from a
# NOTIFY on airlock_pending to the "change" event on an open stream.
# BENCH_WEB_N rounds each (default 50).  The client is one Python process
# keeping its connection open, so no process start-up is measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/bin/airlock build/bin/airlock-web

if [ -z "${AIRLOCK_PGTMP:-}" ]; then
	exec scripts/pgtmp --quiet -- "$0" "$@"
fi
N=${BENCH_WEB_N:-50}
P=${BENCH_WEB_PENDING:-200}
A=build/bin/airlock
tmp=$(mktemp -d /tmp/airlock-webbench.XXXXXX)
wpid=""
trap '[ -n "$wpid" ] && kill "$wpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
$A migrate >/dev/null 2>&1
$A seed seeds >/dev/null 2>&1
psql -Xq -c "CREATE ROLE web LOGIN IN ROLE airlock_web;
	CREATE ROLE hermes LOGIN IN ROLE airlock_agent;
	CREATE ROLE alice LOGIN PASSWORD 'alice-bench-pw' IN ROLE airlock_operator;" 2>/dev/null || true
hba=$(psql -XAtq -c "SHOW data_directory")/pg_hba.conf
{ echo "host all all 127.0.0.1/32 scram-sha-256"; cat "$hba"; } >"$tmp/hba" && cp "$tmp/hba" "$hba"
psql -XAtq -c "SELECT pg_reload_conf()" >/dev/null
# P requests held for approval, as a worker would leave them, from agents of
# 50 requests each (the flood limit allows 60 a minute per agent).
for g in $(seq $(((P + 49) / 50))); do
	echo "CREATE ROLE bench_agent$g LOGIN IN ROLE airlock_agent;"
	echo "SET SESSION AUTHORIZATION bench_agent$g;"
	for i in $(seq $(((g - 1) * 50 + 1)) $((g * 50 < P ? g * 50 : P))); do
		echo "SELECT airlock.run('proxmox-host:hubris', 'qm set 102 --memory $((1024 + i)) && systemctl restart pveproxy');"
	done
	echo "RESET SESSION AUTHORIZATION;"
done | psql -Xq -v ON_ERROR_STOP=1 >/dev/null
psql -Xq -c "UPDATE airlock.executions SET state = 'pending_approval', class = 'config_mutation',
	payload_hash = md5(id::text), expires_at = now() + interval '1 hour',
	reasons = '[{\"class\": \"config_mutation\", \"rule\": \"bench\", \"text\": \"qm set\", \"words\": \"qm set\"}]'"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$tmp/web.yaml" <<EOC
listen: 127.0.0.1:$port
database: "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=web"
operator_database: "host=127.0.0.1 port=$PGPORT dbname=$PGDATABASE"
signin_max_failures: 64
log_level: warn
EOC
build/bin/airlock-web -c "$tmp/web.yaml" 2>"$tmp/web.log" &
wpid=$!
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break; sleep 0.1; done

python3 - "$port" "$N" "$P" <<'EOF'
import http.client, statistics, subprocess, sys, threading, time
port, n, pending = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

def conn():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30)

def signin(c):
    c.request("POST", "/login", "login=alice&password=alice-bench-pw",
              {"Content-Type": "application/x-www-form-urlencoded"})
    r = c.getresponse(); r.read()
    assert r.status == 303, r.status
    return r.getheader("Set-Cookie").split(";")[0]

def timed(fn, k):
    xs = []
    for _ in range(k):
        t = time.perf_counter(); fn(); xs.append((time.perf_counter() - t) * 1000)
    xs.sort()
    return statistics.median(xs), xs[int(len(xs) * 0.95) - 1]

c = conn()
cookie = signin(c)
med, p95 = timed(lambda: signin(c), n)
print(f"sign-in (SCRAM as the operator, wrong-password check, web_signed_in): median {med:.1f} ms, p95 {p95:.1f} ms")

def get(path):
    c.request("GET", path, headers={"Cookie": cookie})
    r = c.getresponse(); body = r.read()
    assert r.status == 200, (path, r.status)
    return body

body = get("/")
assert body.count(b'class="req"') == pending, body.count(b'class="req"')
med, p95 = timed(lambda: get("/"), n)
print(f"pending page with {pending} requests ({len(body)} bytes): median {med:.1f} ms, p95 {p95:.1f} ms")
rid = subprocess.check_output(["psql", "-XAtqc", "SELECT min(id) FROM airlock.executions"]).decode().strip()
body = get(f"/r/{rid}")
med, p95 = timed(lambda: get(f"/r/{rid}"), n)
print(f"request page (reasons, blast radius, events; {len(body)} bytes): median {med:.1f} ms, p95 {p95:.1f} ms")

# NOTIFY -> "event: change" on an open stream.
s = conn()
s.request("GET", "/events", headers={"Cookie": cookie})
r = s.getresponse()
assert r.status == 200
got = threading.Event()
def reader():
    line = b""
    while True:
        ch = r.read(1)
        if not ch:
            return
        line += ch
        if line.endswith(b"\n"):
            if line.startswith(b"event: change"):
                got.set()
            line = b""
threading.Thread(target=reader, daemon=True).start()
time.sleep(0.5)
xs, ys = [], []
for _ in range(n):
    got.clear()
    t = time.perf_counter()
    subprocess.check_call(["psql", "-XAtqc", "SELECT pg_notify('airlock_pending', '')"], stdout=subprocess.DEVNULL)
    t_sent = time.perf_counter()
    assert got.wait(10), "no change event"
    t_got = time.perf_counter()
    xs.append((t_got - t) * 1000)
    ys.append(max(0.0, t_got - t_sent) * 1000)
xs.sort(); ys.sort()
print(f"psql started to NOTIFY -> change event on the stream: median {statistics.median(xs):.1f} ms, p95 {xs[int(len(xs) * 0.95) - 1]:.1f} ms "
      f"(after psql exited: median {statistics.median(ys):.1f} ms, p95 {ys[int(len(ys) * 0.95) - 1]:.1f} ms)")
EOF
