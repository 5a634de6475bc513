#!/bin/bash
# tests/faults/fair.sh -- one busy or stalled node delays only its own rows.
# The rig grows a second node (rigctl node-add), airlockd runs with the
# default 8 workers and 4 per node:
#   - node hubris busy: eight long commands on it (four run, four wait for a
#     slot); node beta's rows run meanwhile, before any of hubris's ends;
#   - node beta stalled: every process of it stopped while four commands
#     run there and four more wait; hubris's rows run meanwhile, before the
#     stall is noticed; then the stalled session is dropped within its
#     bound (three keepalive intervals) and beta's rows are settled as
#     today (outcome_unknown: they may have run).
# Whether a row ran before another ended is read from the rows, not timed.
# Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

R=$AIRLOCK_RIG_ROOT
check "a second node joins the rig" $AIRLOCK_RIG_CTL node-add pverig2
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
check "the inventory with node beta seeds" $A seed "$WORK/seeds"
WORKERS=8 PER_NODE=4 write_config f1 >/dev/null
sed -i "s|^  known_hosts: .*|&\n  node_keys:\n    beta: $AIRLOCK_RIG_NODE_PVERIG2_SSH_KEY\n  keepalive_s: 10|; s|^  command_timeout_s: 60$|  command_timeout_s: 900|" "$WORK/f1.yaml"
GRACE=1 start_daemon f1 || exit 1
F1=$DPID

# states_of PREFIX: how many of those rows are running, queued, and anything else.
states_of() { q "SELECT count(*) FILTER (WHERE state = 'running') || ' running, ' || count(*) FILTER (WHERE state = 'queued') || ' queued, ' || count(*) FILTER (WHERE state NOT IN ('running', 'queued')) || ' other' FROM airlock.executions WHERE command LIKE '$1%'"; }
enqueue() { # enqueue TARGET COMMAND-PREFIX COUNT [SUFFIX]
	as_agent psql -XAtq -c "SELECT airlock.run('$1', '$2' || g || '${4:-}') FROM generate_series(1, $3) g" >/dev/null
}
# node_tree PIDFILE: every process of a rig node, from the pid the rig recorded.
node_tree() {
	local all new kids p
	all=$(cut -d' ' -f1 "$1")
	new=$all
	while [ -n "$new" ]; do
		kids=""
		for p in $new; do kids="$kids $(pgrep -P "$p" | tr '\n' ' ')"; done
		new=$(echo $kids)
		all="$all $new"
	done
	echo $all
}
node_frozen() {
	local p
	for p in $(node_tree "$1"); do
		[ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" = T ] || return 1
	done
}

# ---- a busy node: eight long commands on hubris
id=$(as_agent $A run --target proxmox-host:beta -- 'echo warm-beta')
check "node beta answers" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
enqueue proxmox-host:hubris 'sleep 600; echo busy-a-' 8
check "fault: four of hubris's commands run, filling its slots" wait_for 60 "SELECT count(*) = 4 FROM airlock.executions WHERE command LIKE 'sleep 600; echo busy-a-%' AND state = 'running'"
check "and the other four wait for a slot" wait_for 30 "SELECT count(*) = 4 FROM airlock.executions WHERE command LIKE 'sleep 600; echo busy-a-%' AND state = 'queued'"
enqueue proxmox-host:beta 'echo fair-b-' 3
check "node beta's rows run while hubris is busy" wait_for 60 "SELECT count(*) = 3 FROM airlock.executions WHERE command LIKE 'echo fair-b-%' AND state = 'succeeded'"
check_eq "before any of hubris's commands ended" "4 running, 4 queued, 0 other" "$(states_of 'sleep 600; echo busy-a-')"
echo "# beta's rows with hubris busy, created to finished: $(q "SELECT string_agg(round(extract(epoch FROM finished_at - created_at) * 1000)::text || ' ms', ', ' ORDER BY id) FROM airlock.executions WHERE command LIKE 'echo fair-b-%'")"
check_eq "no worker waits for hubris's slots: its waiting rows are not claimed" 0 "$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'sleep 600; echo busy-a-%' AND state = 'queued' AND claimed_by IS NOT NULL")"
# Clean up: the waiting rows are withdrawn, the running ones cancelled by a short grace.
for i in $(q "SELECT id FROM airlock.executions WHERE command LIKE 'sleep 600; echo busy-a-%' AND state = 'queued'"); do
	as_agent $A cancel "$i" >/dev/null
done
kill -TERM $F1
wait $F1 2>/dev/null
check_eq "the busy rows are settled" 0 "$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'sleep 600; echo busy-a-%' AND state IN ('queued', 'running')")"
GRACE=1 start_daemon f1 || exit 1
F1=$DPID

# ---- a stalled node: beta stops answering with commands running there
id=$(as_agent $A run --target proxmox-host:beta -- 'echo warm-beta-2')
check "node beta answers again" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
enqueue proxmox-host:beta 'sleep 600; echo stall-b-' 8
check "four of beta's commands run" wait_for 60 "SELECT count(*) = 4 FROM airlock.executions WHERE command LIKE 'sleep 600; echo stall-b-%' AND state = 'running'"
kill -STOP $(node_tree "$R/pids/node-pverig2.pid")
check "fault: every process of node beta is stopped (its session stays open)" node_frozen "$R/pids/node-pverig2.pid"
enqueue proxmox-host:hubris 'echo fair-a-' 3
check "hubris's rows run while beta is stalled" wait_for 60 "SELECT count(*) = 3 FROM airlock.executions WHERE command LIKE 'echo fair-a-%' AND state = 'succeeded'"
check_eq "before the stall was noticed" "4 running, 4 queued, 0 other" "$(states_of 'sleep 600; echo stall-b-')"
echo "# hubris's rows with beta stalled, created to finished: $(q "SELECT string_agg(round(extract(epoch FROM finished_at - created_at) * 1000)::text || ' ms', ', ' ORDER BY id) FROM airlock.executions WHERE command LIKE 'echo fair-a-%'")"
check "the stalled session is dropped within three keepalive intervals (30 s)" wait_log 45 'node=beta evt=ssh.lost' f1
check "beta's running rows are settled as today: they may have run" wait_for 60 "SELECT count(*) = 4 FROM airlock.executions WHERE command LIKE 'sleep 600; echo stall-b-%' AND state = 'outcome_unknown'"
# The waiting rows cannot pass their live check on a stopped node: withdrawn
# before it answers again, none of them starts.
for i in $(q "SELECT id FROM airlock.executions WHERE command LIKE 'sleep 600; echo stall-b-%' AND state IN ('queued', 'received')"); do
	as_agent $A cancel "$i" >/dev/null 2>&1
done
kill -CONT $(node_tree "$R/pids/node-pverig2.pid")
id=$(as_agent $A run --target proxmox-host:beta -- 'echo after-stall')
check "beta runs again once it answers" wait_for 90 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check "the daemon survived" kill -0 $F1
kill -TERM $F1
wait $F1 2>/dev/null
finish
