#!/bin/bash
# airlock hook decision time, per call as Claude Code makes it (a new process
# reading one event): a plain Bash call (no database needed), a Bash call to
# a managed node (one database round trip), and an MCP call (check_tool).
# Prints p50 / p95 / max over N calls each; the goal for a plain Bash call is
# p50 under 5 ms, since it runs before every tool call.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_PGTMP:-}" ]; then
	exec scripts/pgtmp --quiet -- "$0" "$@"
fi
[ -x build/bin/airlock ] || { echo "hook: build first (make)"; exit 1; }
tmp=$(mktemp -d /tmp/airlock-hook-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. tests/hook/setup.sh || exit 1
export AIRLOCK_HOOK_LOG=-
n=${HOOK_BENCH_CALLS:-300}
python3 - "$n" "${HOOK[@]}" <<'PY'
import json, subprocess, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2:]
def ev(tool, inp):
    return json.dumps({"session_id": "bench", "hook_event_name": "PreToolUse",
                       "permission_mode": "default", "tool_name": tool,
                       "tool_input": inp}).encode()
cases = [
    ("plain Bash (git status && ls -la | head)", ev("Bash", {"command": "git status && ls -la | head"}), 0),
    ("Bash ssh to a managed node (denied)", ev("Bash", {"command": "ssh root@127.0.0.1 uptime"}), 2),
    ("MCP read-only tool (check_tool)", ev("mcp__proxmox__list_vms", {}), 0),
]
for name, data, want in cases:
    ms = []
    for _ in range(n):
        t = time.perf_counter()
        p = subprocess.run(cmd, input=data, capture_output=True)
        ms.append((time.perf_counter() - t) * 1000)
        if p.returncode != want:
            sys.exit(f"hook: {name}: exit {p.returncode}, wanted {want}")
    ms.sort()
    print(f"hook: {name}: p50 {ms[len(ms)//2]:.2f} ms, p95 {ms[int(len(ms)*0.95)]:.2f} ms, "
          f"max {ms[-1]:.2f} ms over {n} calls")
PY
