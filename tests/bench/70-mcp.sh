#!/bin/bash
# airlock-mcp serving calls concurrently, over stdio against a throwaway database:
#   idle     round trip of a quick read (list_executions) with nothing else going on;
#   waiting  the same while 4 calls wait for executions (get_execution with
#            wait_seconds): it should stay as quick, since each call runs on its own
#            worker and database session;
#   burst    N reads (get_health_summary) written at once: calls answered per second.
# Prints p50 / p95 / max; no thresholds (numbers only).
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_PGTMP:-}" ]; then
	exec scripts/pgtmp --quiet -- "$0" "$@"
fi
[ -x build/bin/airlock-mcp ] || { echo "mcp: build first (make)"; exit 1; }
build/bin/airlock migrate >/dev/null && build/bin/airlock seed seeds/ >/dev/null || exit 1
psql -qc "CREATE ROLE bench_agent LOGIN IN ROLE airlock_agent" || exit 1
n=${MCP_BENCH_CALLS:-300}
burst=${MCP_BENCH_BURST:-250} # within the queue bound (MCP_QUEUE_MAX)
python3 - "$n" "$burst" build/bin/airlock-mcp --db user=bench_agent <<'PY'
import json, subprocess, sys, threading, time
n, burst, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
got, cv = {}, threading.Condition()
def reader():
    for line in p.stdout:
        m = json.loads(line)
        with cv:
            got[json.dumps(m.get("id"))] = (time.perf_counter(), m)
            cv.notify_all()
threading.Thread(target=reader, daemon=True).start()
def send(*msgs):
    p.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs)); p.stdin.flush()
def wait(id_):
    k = json.dumps(id_)
    with cv:
        while k not in got:
            if not cv.wait(60):
                sys.exit(f"mcp: no answer for {id_}")
        return got[k]
def call(id_, tool, args):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": tool, "arguments": args}}
send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
wait("init")
send(call("mk", "run", {"target": "vm:web01", "command": "uptime", "action": "bench"}))
row = wait("mk")[1]["result"]["structuredContent"]["execution"]["id"]
def quick(tag):
    ms = []
    for i in range(n):
        t = time.perf_counter()
        send(call(f"{tag}{i}", "list_executions", {"limit": 5}))
        at, m = wait(f"{tag}{i}")
        if m["result"].get("isError"):
            sys.exit(f"mcp: call failed: {m['result']['content'][0]['text']}")
        ms.append((at - t) * 1000)
    ms.sort()
    return f"p50 {ms[len(ms)//2]:.2f} ms, p95 {ms[int(len(ms)*0.95)]:.2f} ms, max {ms[-1]:.2f} ms over {n} calls"
print(f"mcp: quick read, idle: {quick('a')}")
send(*[call(f"w{i}", "get_execution", {"id": row, "wait_seconds": 300}) for i in range(4)])
time.sleep(0.5)
print(f"mcp: quick read while 4 calls wait: {quick('b')}")
t = time.perf_counter()
send(*[call(f"c{i}", "get_health_summary", {}) for i in range(burst)])
for i in range(burst):
    r = wait(f"c{i}")[1]["result"]
    if r.get("isError"):
        sys.exit(f"mcp: burst call failed: {r['content'][0]['text']}")
s = time.perf_counter() - t
print(f"mcp: burst of {burst} reads written at once: {burst / s:.0f} calls/s ({s:.2f} s)")
for i in range(4):
    send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": f"w{i}"}})
p.stdin.close()
sys.exit(p.wait(timeout=30))
PY
