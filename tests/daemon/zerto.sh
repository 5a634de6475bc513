#!/bin/bash
# airlockd's guard step with the ZVM simulator: rewind points on the row, a
# failed checkpoint means nothing ran, the ZVM unreachable is a refusal, and a
# daemon killed mid-guard retries and runs the command once.
# Runs inside scripts/pgtmp, `tests/rig/rigctl run` and `tests/zvmsim/zvmsimctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

sim() { curl -fsS --cacert "$ZVMSIM_CA" -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "$ZVMSIM_URL$2"; }
# fault JSON: flips one of the simulator's fault switches and checks, by reading
# the simulator's state back, that it took effect ("clear" must leave none).  A
# switch that did not flip fails the suite: a scenario must never pass without
# its fault.
fault() {
	local kind
	kind=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["kind"])' "$1")
	check "fault switch $kind took effect" fault_set "$1" "$kind"
}
fault_set() {
	sim POST /_sim/fault "$1" >/dev/null || return 1
	sim GET /_sim/state | python3 -c '
import json, sys
kind = sys.argv[1]
faults = json.load(sys.stdin)["faults"]
ok = (not faults) if kind == "clear" else any(f.get("kind") == kind for f in faults)
print("faults now:", faults)
sys.exit(0 if ok else 1)' "$2"
}
inserts() { sim GET /_sim/requests | python3 -c '
import json, sys
d = json.load(sys.stdin)
reqs = d.get("requests", d) if isinstance(d, dict) else d
print(sum(1 for r in reqs if r.get("method") == "POST" and r.get("path", "").lower().endswith("/checkpoints")))'; }

setup_db || exit 1
# vm:db02 is the rig's VM 101 under a name Zerto does not protect.
q "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"vm:db02\", \"type\": \"vm\", \"node\": \"proxmox-host:hubris\", \"vmid\": 101, \"attributes\": {\"qemu_guest_agent\": \"running\"}}]}')" >/dev/null
ZCFG=("zerto:" "  url: $ZVMSIM_URL" "  token_url: $ZVMSIM_TOKEN_URL" "  client_id: $ZVMSIM_CLIENT_ID"
	"  secret_file: $ZVMSIM_SECRET_FILE" "  ca_file: $ZVMSIM_CA" "  time_scale: $ZVMSIM_SCALE"
	"  request_timeout_ms: 5000")
check "airlockd -n accepts the zerto config" $D -n -c "$(write_config z1 "${ZCFG[@]}")"
start_daemon z1
Z1=$DPID

# ---- a protected VM: every VPG tagged with one tag, then the command runs
id=$(as_agent $A run --target vm:web01 --change-id chg-9 --action "restart nginx" -- 'systemctl restart nginx; echo zr-marker-1')
check "a guarded change on web01 finishes" wait_for 120 "SELECT state IN ('succeeded', 'failed', 'refused') FROM airlock.executions WHERE id = $id"
check_eq "it succeeded" succeeded "$(state_of $id)"
check_eq "three rewind points, one per VPG" 3 "$(q "SELECT jsonb_array_length(rewind_points) FROM airlock.executions WHERE id = $id")"
check_eq "all three VPGs carry the same tag" 1 "$(q "SELECT count(DISTINCT p->>'tag') FROM airlock.executions, jsonb_array_elements(rewind_points) p WHERE id = $id")"
check_out "the tag names agent, action, vm and change" '^ai:hermes \| restart nginx \| vm=web01 \| change=chg-9 \| [0-9]{8}T[0-9]{6}Z$' \
	q "SELECT DISTINCT p->>'tag' FROM airlock.executions, jsonb_array_elements(rewind_points) p WHERE id = $id"
check_eq "each point has a checkpoint and a completed task" 3 "$(q "SELECT count(*) FROM airlock.executions, jsonb_array_elements(rewind_points) p WHERE id = $id AND p->>'checkpoint_id' IS NOT NULL AND p->>'task_state' = '6'")"
check_eq "it ran once" 1 "$(ran_count 'zr-marker-1')"
check_out "the guard's steps are events" 'guard' as_alice $A history $id

# ---- an approved config change on a protected VM shows and gets its rewind point
id=$(as_agent $A run --target vm:web01 -- 'echo zr-marker-2 >> /etc/motd')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_out "the operator sees the protection with the request" 'protect' as_alice $A show $id
check_out "and each VPG by name, with whether it can take a checkpoint now" 'VPG web-aws: taggable' as_alice $A show $id
as_alice $A approve $id >/dev/null
check "the approved change runs after its checkpoints" wait_for 120 "SELECT state = 'succeeded' AND jsonb_array_length(rewind_points) = 3 FROM airlock.executions WHERE id = $id"

# ---- a failed insert task: refused, nothing ran
fault '{"kind": "insert_task_fails", "vpg": "web-azure", "state": 4}'
id=$(as_agent $A run --target vm:web01 -- 'systemctl restart nginx; echo zr-marker-3')
check "a failed checkpoint task refuses the change" wait_for 120 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
check_out "the refusal says the task failed and nothing ran" 'ask|task' as_agent $A show $id
check_eq "nothing ran" 0 "$(ran_count 'zr-marker-3')"
fault '{"kind": "clear"}'

# ---- an unprotected VM: reversible_low runs and records that there was no rewind point
id=$(as_agent $A run --target vm:db02 -- 'systemctl restart nginx; echo zr-marker-4')
check "an unprotected VM's reversible change runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_out "and records that it had no rewind point" 'no_rewind_point' as_alice $A history $id

# ---- cancelled while being guarded: nothing runs, the worker lets go of it
fault '{"kind": "tag_never_listed", "vpg": "web-aws"}'
id=$(as_agent $A run --target vm:web01 -- 'systemctl restart nginx; echo zr-marker-c')
wait_for 60 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $id AND detail ? 'step'"
check_rc "the requester cancels it mid-guard" 0 as_agent $A cancel $id
fault '{"kind": "clear"}'
check "its worker lets go of the row" wait_for 120 "SELECT count(*) = 0 FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $id AND objsubid = 1"
check_eq "it stays cancelled" cancelled "$(state_of $id)"
check_eq "nothing ran" 0 "$(ran_count 'zr-marker-c')"

# ---- kill -9 mid-guard: retried, runs once
fault '{"kind": "tag_never_listed", "vpg": "web-aws"}'
id=$(as_agent $A run --target vm:web01 -- 'systemctl restart nginx; echo zr-marker-5')
check "the guard is under way" wait_for 60 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $id AND detail ? 'step'"
check_eq "the command has not started" queued "$(state_of $id)"
kill -9 $Z1; wait $Z1 2>/dev/null
fault '{"kind": "clear"}'
start_daemon z1; Z1=$DPID
check "after the crash the row is retried and finishes" wait_for 180 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "the command ran exactly once" 1 "$(ran_count 'zr-marker-5')"
check_out "the history shows the dead worker's release" 'dead_worker' as_alice $A history $id

# ---- the ZVM unreachable: refused, the agent told why, nothing ran
check "the ZVM simulator is frozen" bash -c "kill -STOP $ZVMSIM_PID && sleep 0.2 && grep -q '^State:.*T' /proc/$ZVMSIM_PID/status"
id=$(as_agent $A run --target vm:web01 -- 'systemctl restart nginx; echo zr-marker-6')
check "with the ZVM unreachable the change is refused" wait_for 120 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
kill -CONT "$ZVMSIM_PID"
check_eq "nothing ran" 0 "$(ran_count 'zr-marker-6')"
check_out "the agent is told why" 'Zerto|ZVM|zvm' as_agent $A show $id

kill -TERM $Z1; wait $Z1
check_out "the audit chain is intact" 'audit: intact' as_alice $A audit verify
finish
