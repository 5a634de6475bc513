#!/bin/bash
# tests/daemon/fair_bench.sh -- bench 56-fair: node beta's rows, created to
# finished, while node hubris is idle and while eight long commands fill its
# slots.  Prints p50 and max of each; asserts nothing.
# Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
N=${FAIR_BENCH_N:-20}
BUSY_S=${FAIR_BENCH_BUSY_S:-40}
R=$AIRLOCK_RIG_ROOT
$AIRLOCK_RIG_CTL node-add pverig2 >/dev/null || exit 1
. "$R/rig.env"
setup_db || exit 1
q "UPDATE airlock.gate_limits SET requests_per_minute = 100000, pending_per_agent = 100000" >/dev/null
# Node beta joins the inventory, before its relationships.
python3 - "$WORK/seeds/inventory.yaml" "$AIRLOCK_RIG_NODE_PVERIG2_SSH_PORT" "$AIRLOCK_RIG_NODE_PVERIG2_HOSTKEY_SHA256" <<'PY'
import sys
p, port, fp = sys.argv[1:4]
beta = ("  - slug: proxmox-host:beta\n    type: proxmox-host\n    pve_node: pverig2\n"
        "    address: 127.0.0.1\n    port: %s\n    ssh_user: root\n"
        "    host_key_fingerprint: \"%s\"\n\n" % (port, fp))
text = open(p).read()
at = text.index("\nrelationships:") + 1
open(p, "w").write(text[:at] + beta + text[at:])
PY
$A seed "$WORK/seeds" >/dev/null 2>&1 || exit 1
WORKERS=8 PER_NODE=4 write_config f1 >/dev/null
sed -i "s|^  known_hosts: .*|&\n  node_keys:\n    beta: $AIRLOCK_RIG_NODE_PVERIG2_SSH_KEY\n  keepalive_s: 10|; s|^  command_timeout_s: 60$|  command_timeout_s: 900|" "$WORK/f1.yaml"
GRACE=1 start_daemon f1 || exit 1
F1=$DPID

# lat PREFIX: p50 and max of created-to-finished, in ms, of the rows whose command starts so.
lat() { q "SELECT 'p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)) || ' ms, max ' || round(max(ms)) || ' ms' FROM (SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms FROM airlock.executions WHERE command LIKE '$1%') x"; }
# burst PREFIX: N rows on beta, one every 100 ms, waited for.
burst() {
	for i in $(seq 1 "$N"); do
		as_agent psql -XAtq -c "SELECT airlock.run('proxmox-host:beta', 'echo $1-$i')" >/dev/null
		sleep 0.1
	done
	wait_for 300 "SELECT count(*) = $N FROM airlock.executions WHERE command LIKE 'echo $1-%' AND state = 'succeeded'"
}
as_agent psql -XAtq -c "SELECT airlock.run('proxmox-host:beta', 'echo warm')" >/dev/null
wait_for 60 "SELECT count(*) = 1 FROM airlock.executions WHERE command = 'echo warm' AND state = 'succeeded'" || exit 1
burst idle
echo "node beta, node hubris idle:                $(lat 'echo idle-')"
as_agent psql -XAtq -c "SELECT airlock.run('proxmox-host:hubris', 'sleep $BUSY_S; echo busy-' || g) FROM generate_series(1, 8) g" >/dev/null
wait_for 60 "SELECT count(*) = 4 FROM airlock.executions WHERE command LIKE 'sleep $BUSY_S; echo busy-%' AND state = 'running'" || exit 1
burst loaded
echo "node beta, 8 x ${BUSY_S} s commands on hubris: $(lat 'echo loaded-')"
kill -TERM $F1
wait $F1 2>/dev/null
