#!/bin/bash
# Recovery throughput on the rig: how long a file takes to come back from a
# rewind point, split into the ZVM side (mount, find, download) and the guest
# side (the bytes carried in base64 chunks through qm guest exec), for a few
# sizes.  Prints numbers; asserts nothing about time.  Run by
# tests/bench/67-recover.sh inside pgtmp, the rig and the ZVM simulator.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

sim_file() {
	printf '{"vm": "web01", "path": "%s", "data_b64": "%s"}' "$1" "$(base64 -w0 "$2")" >"$WORK/flr_file.json"
	curl -fsS --cacert "$ZVMSIM_CA" -H 'Content-Type: application/json' --data-binary @"$WORK/flr_file.json" \
		"$ZVMSIM_URL/_sim/flr_file" >/dev/null
}
# ms between two events of a row (steps or states)
gap() {
	q "SELECT round(extract(epoch FROM (SELECT at FROM airlock.execution_events WHERE execution_id = $1 AND coalesce(detail->>'step', to_state) = '$3' ORDER BY id DESC LIMIT 1)
	     - (SELECT at FROM airlock.execution_events WHERE execution_id = $1 AND coalesce(detail->>'step', to_state) = '$2' ORDER BY id LIMIT 1)) * 1000)"
}

G=$AIRLOCK_RIG_ROOT/guests/vm101/root
setup_db || exit 1
write_config rb "zerto:" "  url: $ZVMSIM_URL" "  token_url: $ZVMSIM_TOKEN_URL" \
	"  client_id: $ZVMSIM_CLIENT_ID" "  secret_file: $ZVMSIM_SECRET_FILE" "  ca_file: $ZVMSIM_CA" \
	"  time_scale: $ZVMSIM_SCALE" >/dev/null
start_daemon rb || exit 1
mkdir -p "$G/etc/bench"
sizes="4096 65536 1048576"
for n in $sizes; do
	head -c "$n" /dev/urandom >"$WORK/f$n"
	cp "$WORK/f$n" "$G/etc/bench/f$n"
	sim_file "/etc/bench/f$n" "$WORK/f$n"
done
chg=$(as_agent $A run --target vm:web01 --action bench -- 'for f in /etc/bench/f*; do printf x > "$f"; done' 2>/dev/null)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $chg"
as_alice $A approve $chg >/dev/null 2>&1
wait_for 180 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $chg" || { echo "the change did not run"; exit 1; }
printf '%10s %10s %12s %12s %10s %10s\n' bytes total_ms zvm_side_ms guest_side_ms unmount_ms KiB/s
for n in $sizes; do
	id=$(as_agent $A recover --from-execution $chg "/etc/bench/f$n" 2>/dev/null)
	wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
	as_alice $A approve $id >/dev/null 2>&1
	wait_for 900 "SELECT state IN ('succeeded', 'failed') FROM airlock.executions WHERE id = $id"
	cmp -s "$WORK/f$n" "$G/etc/bench/f$n" || { echo "f$n was not restored: $(state_of $id)"; exit 1; }
	total=$(q "SELECT duration_ms FROM airlock.executions WHERE id = $id")
	printf '%10s %10s %12s %12s %10s %10s\n' "$n" "$total" "$(gap $id running flr.downloaded)" \
		"$(gap $id flr.downloaded recover.written)" "$(gap $id recover.written flr.unmount)" \
		"$(python3 -c "print(round($n / 1024 / ($total / 1000), 1))")"
done
echo "(ZVM simulator at ${ZVMSIM_SCALE}x; the guest side carries about 22 KiB per qm guest exec)"
kill -TERM $DPID
wait $DPID
