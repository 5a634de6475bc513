#!/bin/bash
# tests/faults/zvm.sh -- the guard and recovery tell the truth when the ZVM's
# answer comes late (the simulator acts, then answers after the client gave
# up) or an insert fails on one VPG of three:
#   - an insert answered late: its tag is looked up; the checkpoint the ZVM
#     made is the row's rewind point and the change runs;
#   - an insert task failing on one VPG: the change is refused, and the
#     checkpoints the other VPGs took are recorded on the refused row;
#   - an FLR mount answered late: the session is looked up, the file comes
#     back and the session is ended, not left mounted.
# Every fault switch is checked to have flipped, and to have been used.
# Runs inside scripts/pgtmp, `tests/rig/rigctl run` and `tests/zvmsim/zvmsimctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

sim() { curl -fsS --cacert "$ZVMSIM_CA" -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "$ZVMSIM_URL$2"; }
# fault JSON: flips a switch and checks, in the simulator's state, that it
# did ("clear" must leave none).
fault() {
	local kind
	kind=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["kind"])' "$1")
	check "fault switch $kind took effect" fault_set "$1" "$kind"
}
fault_set() {
	sim POST /_sim/fault "$1" >/dev/null || return 1
	sim GET /_sim/state | python3 -c '
import json, sys
faults = json.load(sys.stdin)["faults"]
sys.exit(0 if ((not faults) if sys.argv[1] == "clear" else any(f["kind"] == sys.argv[1] for f in faults)) else 1)' "$2"
}
# used KIND: the fault KIND (with a count) was taken by a request.
used() { sim GET /_sim/state | python3 -c 'import json,sys; fs = [f for f in json.load(sys.stdin)["faults"] if f["kind"] == sys.argv[1]]; sys.exit(0 if fs and all(f.get("count", 1) == 0 for f in fs) else 1)' "$1"; }
# tagged TAG: the checkpoint ids the simulator made for TAG, sorted.
tagged() { sim GET /_sim/tags | python3 -c 'import json,sys; print(" ".join(sorted(str(t["checkpoint"]) for t in json.load(sys.stdin) if t["tag"] == sys.argv[1] and t["checkpoint"] is not None)))' "$1"; }
on_row() { q "SELECT coalesce(string_agg(p->>'checkpoint_id', ' ' ORDER BY p->>'checkpoint_id'), '') FROM airlock.executions, jsonb_array_elements(coalesce(rewind_points, '[]')) p WHERE id = $1"; }
# tag_of ID: the tag the row's guard used (its steps and its outcome carry it).
tag_of() { q "SELECT detail->>'tag' FROM airlock.execution_events WHERE execution_id = $1 AND detail->>'tag' IS NOT NULL ORDER BY id LIMIT 1"; }
sim_flrs() { sim GET /_sim/state | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["flrs"]))'; }

G=$AIRLOCK_RIG_ROOT/guests/vm101/root
setup_db || exit 1
write_config z1 "zerto:" "  url: $ZVMSIM_URL" "  token_url: $ZVMSIM_TOKEN_URL" \
	"  client_id: $ZVMSIM_CLIENT_ID" "  secret_file: $ZVMSIM_SECRET_FILE" "  ca_file: $ZVMSIM_CA" \
	"  time_scale: $ZVMSIM_SCALE" "  request_timeout_ms: 1500" >/dev/null
start_daemon z1 || exit 1
Z1=$DPID

id=$(as_agent $A run --target vm:web01 --change-id chg-ok -- 'systemctl restart nginx; echo zl-marker-0' 2>/dev/null)
check "a guarded change takes its three rewind points" wait_for 120 "SELECT state = 'succeeded' AND jsonb_array_length(rewind_points) = 3 FROM airlock.executions WHERE id = $id"

# ---- an insert answered after the client's timeout
fault '{"kind": "latency_ms", "ms": 4000, "method": "POST", "path": "checkpoints", "count": 1}'
id=$(as_agent $A run --target vm:web01 --change-id chg-late -- 'systemctl restart nginx; echo zl-marker-1' 2>/dev/null)
check "the guarded change reaches a final state" wait_for 120 "SELECT state IN ('succeeded', 'failed', 'refused') FROM airlock.executions WHERE id = $id"
check "fault: an insert was answered late (the switch was used)" used latency_ms
tag=$(tag_of $id)
check "the simulator made a checkpoint for each of the three VPGs" test "$(tagged "$tag" | wc -w)" -eq 3
check_eq "every checkpoint the ZVM made is the row's rewind point" "$(tagged "$tag")" "$(on_row $id)"
check_eq "the change ran on them" succeeded "$(state_of $id)"
check_eq "once" 1 "$(ran_count 'zl-marker-1')"
check_eq "the late insert is marked as such" 1 "$(q "SELECT count(*) FROM airlock.executions, jsonb_array_elements(rewind_points) p WHERE id = $id AND p->>'insert_answered' = 'false'")"
fault '{"kind": "clear"}'

# ---- an insert task failing on one VPG of three: refused, what was made recorded
fault '{"kind": "insert_task_fails", "vpg": "web-aws", "state": 4}'
id=$(as_agent $A run --target vm:web01 --change-id chg-fail -- 'systemctl restart nginx; echo zl-marker-2' 2>/dev/null)
check "the change is refused" wait_for 120 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
tag=$(tag_of $id)
check_eq "fault: web-aws's insert task failed" 1 "$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $id AND detail->>'step' = 'guard.task' AND detail->>'vpg' = 'web-aws' AND detail->>'state' = '4'")"
check "the other two VPGs took a checkpoint all the same" test "$(tagged "$tag" | wc -w)" -eq 2
check_eq "both are recorded on the refused row" "$(tagged "$tag")" "$(on_row $id)"
check_out "and the refusal says so" 'recorded with it: VPG .* checkpoint [0-9]+, VPG .* checkpoint [0-9]+' q "SELECT error FROM airlock.executions WHERE id = $id"
check_eq "nothing ran" 0 "$(ran_count 'zl-marker-2')"
fault '{"kind": "clear"}'

# ---- an FLR mount answered after the client's timeout
chg=$(q "SELECT id FROM airlock.executions WHERE change_id = 'chg-ok'")
printf 'broken-host\n' >"$G/etc/hostname"
rid=$(as_agent $A recover --from-execution "$chg" /etc/hostname 2>/dev/null)
check "the recovery is held" wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $rid"
fault '{"kind": "latency_ms", "ms": 4000, "method": "POST", "path": "/v1/flrs", "count": 1}'
as_alice $A approve "$rid" >/dev/null 2>&1
check "the recovery reaches a final state" wait_for 180 "SELECT state IN ('succeeded', 'failed', 'refused') FROM airlock.executions WHERE id = $rid"
check "fault: the mount was answered late (the switch was used)" used latency_ms
check_eq "the session that was mounted is found, and the file restored" succeeded "$(state_of $rid)"
check_out "its history says the mount's answer was late and the session found" 'flr.mount_found' q "SELECT string_agg(coalesce(detail->>'step', to_state), ' ' ORDER BY id) FROM airlock.execution_events WHERE execution_id = $rid"
check_eq "the file came back" 6 "$(stat -c %s "$G/etc/hostname")"
check_eq "no session is left mounted to block the next recovery" 0 "$(sim_flrs)"
fault '{"kind": "clear"}'
check "the daemon survived" kill -0 $Z1
kill -TERM $Z1
wait $Z1 2>/dev/null
finish
