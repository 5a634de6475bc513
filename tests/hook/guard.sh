#!/bin/bash
# airlock hook's guard-first path for a catalog "mutating" tool, end to end:
# a real airlockd with the ZVM simulator on the rig carries out the guard
# request.  Runs inside scripts/pgtmp, `tests/rig/rigctl run` and
# `tests/zvmsim/zvmsimctl run` (see tests/suites/75-hook.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

sim() { curl -sS --cacert "$ZVMSIM_CA" -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "$ZVMSIM_URL$2"; }
mcp_event() { python3 -c 'import json,sys; print(json.dumps({"session_id":"chg-g1","hook_event_name":"PreToolUse","permission_mode":"bypassPermissions","tool_name":sys.argv[1],"tool_input":json.loads(sys.argv[2])}))' "$1" "$2"; }
HOOK=($A hook --db "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=hermes" --log "$WORK/hook.log")

setup_db || exit 1
# vm:db02 is the rig's VM under a name Zerto does not protect.
q "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"vm:db02\", \"type\": \"vm\", \"node\": \"proxmox-host:hubris\", \"vmid\": 150, \"attributes\": {\"qemu_guest_agent\": \"running\"}}]}')" >/dev/null
ZCFG=("zerto:" "  url: $ZVMSIM_URL" "  token_url: $ZVMSIM_TOKEN_URL" "  client_id: $ZVMSIM_CLIENT_ID"
	"  secret_file: $ZVMSIM_SECRET_FILE" "  ca_file: $ZVMSIM_CA" "  time_scale: $ZVMSIM_SCALE"
	"  request_timeout_ms: 5000")
write_config g1 "${ZCFG[@]}" >/dev/null
start_daemon g1 || { failt "airlockd starts"; finish; exit 1; }
nodelog_before=$(grep -cF "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" 2>/dev/null || true)

# ---- a protected VM: checkpoint on every VPG, then allow, naming it
out=$(mcp_event mcp__proxmox__stop_vm '{"vmid": 101}' | "${HOOK[@]}"); rc=$?
check_eq "mutating tool on a protected VM: exit 0" 0 "$rc"
check_out "... allowed, naming the VM's slug" '"permissionDecision":"allow","permissionDecisionReason":"airlock inserted a Zerto tagged checkpoint of vm:web01 before proxmox/stop_vm' echo "$out"
check_out "... additionalContext names the checkpoints and their tag" \
	'"additionalContext":"checkpoint [^ ]+ on VPG [^ ]+ \(tag \\"ai:hermes \| before proxmox/stop_vm \| vm=web01 \| change=chg-g1 \| [0-9TZ]+\\"\);' echo "$out"
id=$(q "SELECT max(id) FROM airlock.executions WHERE kind = 'guard'")
check_eq "the guard request is a row: kind guard, succeeded, three rewind points" 'guard|succeeded|3' \
	"$(q "SELECT kind, state, jsonb_array_length(rewind_points) FROM airlock.executions WHERE id = $id")"
check_out "its history: received, queued, the guard's steps, running, succeeded" 'received.*queued.*running.*succeeded' \
	bash -c "q() { psql -XAtq -c \"\$1\"; }; q \"SELECT string_agg(coalesce(to_state,''), ' ' ORDER BY id) FROM airlock.execution_events WHERE execution_id = $id\""
check "its guard steps are events" test "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND detail ? 'step'")" -gt 0
check_eq "nothing was sent to the node" "$nodelog_before" "$(grep -cF "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" 2>/dev/null || true)"

# ---- an unprotected VM: the guard's words, deny
out=$(mcp_event mcp__proxmox__set_vm_config '{"vmid": "vm:db02", "memory": 4096}' | "${HOOK[@]}" 2>/dev/null); rc=$?
check_eq "unprotected VM: exit 2" 2 "$rc"
check_out "... denied with the guard's words" '"permissionDecision":"deny".*no checkpoint before proxmox/set_vm_config, so it is denied: refused: no checkpoint could be made' echo "$out"

# ---- a failed insert task: deny, nothing else
sim POST /_sim/fault '{"kind": "insert_task_fails", "vpg": "web-azure", "state": 4}' >/dev/null
out=$(mcp_event mcp__proxmox__stop_vm '{"vmid": 101}' | "${HOOK[@]}" 2>/dev/null); rc=$?
check_eq "failed checkpoint task: exit 2" 2 "$rc"
check_out "... denied, saying the task failed" '"permissionDecision":"deny".*(task|Task)' echo "$out"
sim POST /_sim/fault '{"kind": "clear"}' >/dev/null

# ---- a guard slower than the hook's budget: deny, the request cancelled
# every checkpoint insert hangs 8 s, past the client's 5 s request timeout:
# the guard cannot finish before the hook's deadline (budget 6 s - 2 s margin)
sim POST /_sim/fault '{"kind": "latency_ms", "ms": 8000, "method": "POST", "path": "/checkpoints"}' >/dev/null
out=$(mcp_event mcp__proxmox__stop_vm '{"vmid": 101}' | "${HOOK[@]}" --budget-ms 6000 2>/dev/null); rc=$?
id=$(q "SELECT max(id) FROM airlock.executions WHERE kind = 'guard'")
check "slow guard: the fault happened (the guard was under way)" \
	test "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND detail ? 'step'")" -gt 0
check_eq "slow guard: exit 2" 2 "$rc"
check_out "... denied: not confirmed within the budget" '"permissionDecision":"deny".*not confirmed within the hook.s budget' echo "$out"
check "... and the request was cancelled" wait_for 60 "SELECT state = 'cancelled' FROM airlock.executions WHERE id = $id"
check "... and the worker let go of it when its guard ended" wait_for 60 \
	"SELECT count(*) = 0 FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $id AND objsubid = 1"
sim POST /_sim/fault '{"kind": "clear"}' >/dev/null

# ---- a VM airlock does not know: ask
out=$(mcp_event mcp__proxmox__stop_vm '{"vmid": 999}' | "${HOOK[@]}"); rc=$?
check_eq "unknown VM: exit 0" 0 "$rc"
check_out "... ask, saying it cannot be checkpointed" '"permissionDecision":"ask".*cannot checkpoint' echo "$out"
check_out "the log has one line per decision" 'why=guarded' cat "$WORK/hook.log"
finish
