#!/bin/bash
# tests/mcp/e2e.sh -- airlock-mcp with a real airlockd executing on the rig.
# Runs inside scripts/pgtmp and `tests/rig/rigctl run` (see tests/suites/70-mcp.sh);
# reuses the daemon tests' set-up (tests/daemon/lib.sh: estate, roles, config).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || { echo "e2e: set-up failed"; exit 1; }
write_config d1 >/dev/null
start_daemon d1
check "e2e: airlockd is up" wait_log 20 'evt=daemon.started' d1
check "e2e: transcript (agent over MCP, daemon on the rig, operator on the CLI)" \
	env DRIVE_STDERR="$WORK/mcp.stderr" tests/mcp/drive.py tests/mcp/transcripts/e2e.txt -- \
	build/bin/airlock-mcp --db "user=hermes"
[ "$T_FAIL" -eq 0 ] || { echo "# airlockd log:"; tail -20 "$WORK/d1.log" | sed 's/^/#   /'; }
finish
