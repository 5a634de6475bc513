#!/bin/bash
# tests/ops/discover.sh -- suite 82-discover: the estate follows the cluster.
# A real airlockd and its scheduler against the rig grown to two nodes
# (rigctl node-add), each with its own SSH key and pinned host key, and a
# throwaway database.  Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

R=$AIRLOCK_RIG_ROOT
check "a second node joins the rig's cluster" $AIRLOCK_RIG_CTL node-add pverig2
. "$R/rig.env"
B_PORT=$AIRLOCK_RIG_NODE_PVERIG2_SSH_PORT
B_KEY=$AIRLOCK_RIG_NODE_PVERIG2_SSH_KEY
B_FP=$AIRLOCK_RIG_NODE_PVERIG2_HOSTKEY_SHA256
node_a() { ssh -F "$AIRLOCK_RIG_SSH_CONFIG" pverig "$@"; }
check_rc "node B accepts only its own key, not the shared one" 255 \
	ssh -i "$AIRLOCK_RIG_SSH_KEY" -o IdentitiesOnly=yes -o BatchMode=yes \
	-o UserKnownHostsFile="$AIRLOCK_RIG_KNOWN_HOSTS" -o StrictHostKeyChecking=yes \
	-p "$B_PORT" root@127.0.0.1 true

# ---- the inventory: what discovery cannot know
$A migrate >/dev/null || { echo "82-discover: migrate failed"; exit 1; }
mkdir -p "$WORK/seeds"
cp seeds/policy.yaml "$WORK/seeds/"
[ -f seeds/tools.yaml ] && cp seeds/tools.yaml "$WORK/seeds/"
[ -f seeds/gate.yaml ] && cp seeds/gate.yaml "$WORK/seeds/"
inventory() {
	cat <<EOF
entities:
  - slug: proxmox-host:alpha
    type: proxmox-host
    pve_node: pverig
    address: 127.0.0.1
    port: $AIRLOCK_RIG_SSH_PORT
    ssh_user: root
  - slug: proxmox-host:beta
    type: proxmox-host
    pve_node: pverig2
    address: 127.0.0.1
    port: $B_PORT
    ssh_user: root
    host_key_fingerprint: "$B_FP"
  # the same sshd as alpha, under a name the cluster does not know
  - slug: proxmox-host:gamma
    type: proxmox-host
    pve_node: nosuchnode
    address: 127.0.0.1
    port: $AIRLOCK_RIG_SSH_PORT
  - slug: vm:web
    type: vm
    node: proxmox-host:alpha
    vmid: 101
    zerto_vm_identifier: vm-101-id
    attributes: {role: frontend}
  - slug: vm:ghost
    type: vm
    node: proxmox-host:alpha
    vmid: 150
  - slug: vm:orphan
    type: vm
    node: proxmox-host:gamma
    vmid: 160
$*
relationships:
  - {source: vm:web, target: vm:ghost, type: depends-on}
EOF
}
inventory >"$WORK/seeds/inventory.yaml"
check "the inventory seeds" $A seed "$WORK/seeds"
q "CREATE ROLE airlockd LOGIN IN ROLE airlock_worker;
   CREATE ROLE probe LOGIN IN ROLE airlock_scheduler;
   CREATE ROLE hermes LOGIN IN ROLE airlock_agent;" >/dev/null

# ---- configuration: node B's own key
cfg=$(write_config disc \
	"scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\"" \
	"probes:" "  interval_s: 1")
sed -i "s|^  known_hosts: .*|&\n  node_keys:\n    beta: $B_KEY|" "$cfg"
check "airlockd -n accepts a per-node key" $D -n -c "$cfg"
sed "s|^    beta: .*|    beta: $WORK/no-such-key|" "$cfg" >"$WORK/badkey.yaml"
check_out "an unreadable per-node key is refused, naming the line" \
	'badkey.yaml:[0-9]+:[0-9]+: cannot read ssh key .*/no-such-key \(node_keys\)' $D -n -c "$WORK/badkey.yaml"
sed "s|^    beta: .*|    be/ta: $B_KEY|" "$cfg" >"$WORK/badname.yaml"
check_out "a node_keys entry that is no node name is refused" 'node_keys: "be/ta" is not a node name' \
	$D -n -c "$WORK/badname.yaml"
start_daemon disc || { echo "82-discover: the daemon did not start"; cat "$WORK/disc.log"; exit 1; }

# ---- discovery: new guests appear, aliases hold, removed guests are gone
check "the scheduler records vm:web as discovered" \
	wait_for 60 "SELECT discovered_at IS NOT NULL FROM airlock.entities WHERE slug = 'vm:web'"
check "guests the inventory does not list appear under their names" \
	wait_for 30 "SELECT count(*) = 6 FROM airlock.entities WHERE slug IN ('vm:vm102', 'vm:vm103', 'lxc:ct201', 'lxc:ct202', 'lxc:ct203', 'lxc:ct204') AND node = 'proxmox-host:alpha'"
check_eq "the inventory's alias, Zerto id and attributes are kept" "vm:web|vm-101-id|frontend" \
	"$(q "SELECT slug, zerto_vm_identifier, attributes->>'role' FROM airlock.entities WHERE vmid = 101")"
check_eq "one entity per guest" 0 "$(q "SELECT count(*) FROM (SELECT vmid FROM airlock.entities WHERE vmid IS NOT NULL GROUP BY type, vmid HAVING count(*) > 1) x")"
check "a guest the cluster does not have is marked gone" \
	wait_for 30 "SELECT gone_at IS NOT NULL FROM airlock.entities WHERE slug = 'vm:ghost'"
check_eq "and kept, with its relationship" 1 "$(q "SELECT count(*) FROM airlock.relationships WHERE target = 'vm:ghost'")"
check_eq "each change is recorded" "appeared|6" \
	"$(q "SELECT change, count(*) FROM airlock.estate_changes WHERE change = 'appeared' GROUP BY change")"
check_eq "vm:ghost was never probed: no agent state" "" \
	"$(q "SELECT attributes->>'qemu_guest_agent' FROM airlock.entities WHERE slug = 'vm:ghost'")"
check_out "a request on a gone guest that was never probed is refused as gone (AL016), before any row" \
	'AL016: run on vm:ghost refused: the guest is gone: no node airlock manages lists it \(vmid 150 was last on proxmox-host:alpha' \
	env PGUSER=hermes psql -XAtq -v VERBOSITY=verbose -c "SELECT airlock.run('vm:ghost', 'hostname')"
check_eq "no row was written for it" 0 "$(q "SELECT count(*) FROM airlock.executions WHERE target = 'vm:ghost'")"
check_out "a recovery on it is refused as gone too, not as an agent that is not running" \
	'AL016: recover on vm:ghost refused: the guest is gone' \
	env PGUSER=hermes psql -XAtq -v VERBOSITY=verbose -c "SELECT airlock.recover('vm:ghost', ARRAY['/etc/hosts'], checkpoint => 'cp-1')"
check_out "the agent sees that it is gone" '^t$' \
	env PGUSER=hermes psql -XAtq -c "SELECT gone_at IS NOT NULL FROM airlock.entities WHERE slug = 'vm:ghost'"
check_rc "the agent may not record discoveries itself" 1 \
	env PGUSER=hermes psql -XAtq -v ON_ERROR_STOP=1 -c "SELECT airlock.record_discovery('{pverig}', '[]')"

# a node whose answer does not name it decides nothing about its guests
check "a misnamed node is reported" wait_log 30 'evt=discover.node_misnamed node=gamma pve_node=nosuchnode' disc
check_eq "and its guest is not marked gone" "" \
	"$(q "SELECT gone_at FROM airlock.entities WHERE slug = 'vm:orphan'")"

# a container removed from the cluster, then back
check "CT 204 is probed running first" \
	wait_for 60 "SELECT attributes->>'container_status' = 'running' FROM airlock.entities WHERE slug = 'lxc:ct204'"
check "CT 204's config is removed from node A" rm "$R/pve/nodes/pverig/lxc/204.conf"
check "the removed container is marked gone" \
	wait_for 30 "SELECT gone_at IS NOT NULL FROM airlock.entities WHERE slug = 'lxc:ct204'"
check_eq "its last probe said running" running \
	"$(q "SELECT attributes->>'container_status' FROM airlock.entities WHERE slug = 'lxc:ct204'")"
check_out "a request on it is refused: it is gone" \
	'run on lxc:ct204 refused: the guest is gone: no node airlock manages lists it \(vmid 204 was last on proxmox-host:alpha' \
	env PGUSER=hermes psql -XAtq -c "SELECT airlock.run('lxc:ct204', 'hostname')"
check_eq "no row was written for it" 0 "$(q "SELECT count(*) FROM airlock.executions WHERE target = 'lxc:ct204'")"
printf 'arch: amd64\nhostname: ct204\nmemory: 512\nostype: debian\n' >"$R/pve/nodes/pverig/lxc/204.conf"
check "and present again when it is back" \
	wait_for 30 "SELECT gone_at IS NULL FROM airlock.entities WHERE slug = 'lxc:ct204'"
check_eq "both changes are recorded" "gone returned" \
	"$(q "SELECT string_agg(change, ' ' ORDER BY id) FROM airlock.estate_changes WHERE entity = 'lxc:ct204' AND change IN ('gone', 'returned')")"

# ---- a command on vm:web runs on node A
check "vm:web's agent is probed running" \
	wait_for 30 "SELECT attributes->>'qemu_guest_agent' = 'running' FROM airlock.entities WHERE slug = 'vm:web'"
id=$(as_agent $A run --target vm:web -- 'echo before-migration')
check "a command on vm:web succeeds" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
on_node() { grep -F "$(printf '\t%s\t' "$1")" "$AIRLOCK_RIG_LOG" | grep -F 'qm guest exec 101' | grep -cF -- "$2" || true; }
check_eq "node A ran it" 1 "$(on_node node before-migration)"
check_eq "node B did not" 0 "$(on_node node:pverig2 before-migration)"

# ---- live migration A -> B: discovery follows, the next command runs on B
check_out "VM 101 migrates live to node B" "migration finished successfully" node_a qm migrate 101 pverig2 --online
check "the VM's config really moved to node B's directory" \
	sh -c "[ -f '$R/pve/nodes/pverig2/qemu-server/101.conf' ] && [ ! -e '$R/pve/nodes/pverig/qemu-server/101.conf' ]"
check "discovery moves vm:web to node B" \
	wait_for 30 "SELECT node = 'proxmox-host:beta' FROM airlock.entities WHERE slug = 'vm:web'"
check_eq "the move is recorded" '{"to": "proxmox-host:beta", "from": "proxmox-host:alpha"}' \
	"$(q "SELECT detail FROM airlock.estate_changes WHERE entity = 'vm:web' AND change = 'moved'")"
id=$(as_agent $A run --target vm:web -- 'echo after-migration')
check "the next command on vm:web succeeds" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "node B ran it (with its own key)" 1 "$(on_node node:pverig2 after-migration)"
check_eq "node A did not" 0 "$(on_node node after-migration)"
check_out "its output is the VM's" 'after-migration' as_agent $A show $id

# ---- airlock doctor: each node with its own key; a gone guest is a warning
$A doctor --config "$cfg" --timeout-ms 5000 --json >"$WORK/doc.json" 2>"$WORK/doc.err"
doc() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" | ".join(str(c[sys.argv[4]]) for c in d["checks"] if c["area"] == sys.argv[2] and c["subject"] == sys.argv[3]))' \
		"$WORK/doc.json" "$1" "$2" "$3"
}
check_eq "doctor logs in to node B with node B's own key" ok "$(doc node proxmox-host:beta status)"
check_eq "doctor: vm:web is checked on node B" ok "$(doc guest vm:web status)"
check_eq "doctor: the gone guest is a warning" warn "$(doc guest vm:ghost status)"
check_out "  saying it is gone, and what to do" 'gone since .*requests on it are refused' doc guest vm:ghost detail
check_eq "doctor: node B's cluster name matches its pve_node" ok "$(doc node 'proxmox-host:beta cluster name' status)"
check_eq "doctor: a host whose pve_node the cluster does not know is a warning" warn \
	"$(doc node 'proxmox-host:gamma cluster name' status)"
check_out "  naming the cluster's nodes" 'no node named nosuchnode \(its nodes: pverig, pverig2' \
	doc node 'proxmox-host:gamma cluster name' detail
check_out "  and the fix" 'set pve_node' doc node 'proxmox-host:gamma cluster name' fix

# ---- answers that disagree on a guest's node move nothing
conflict='[{"type": "qemu", "vmid": 101, "node": "pverig2", "from": "pverig2"},
           {"type": "qemu", "vmid": 101, "node": "pverig", "from": "pverig"}]'
check_out "two nodes that both claim VM 101: a conflict" '"conflicts": \["vm:web"\]' \
	env PGUSER=probe psql -XAtq -c "SELECT airlock.record_discovery('{pverig,pverig2}', '$conflict')"
check_eq "vm:web stays where it was, and is not gone" "proxmox-host:beta|" \
	"$(q "SELECT node, gone_at FROM airlock.entities WHERE slug = 'vm:web'")"

# ---- a guest that moves to a node the inventory does not list is out of reach
check "a third node joins the cluster, not in the inventory" $AIRLOCK_RIG_CTL node-add pverig3
check_out "VM 103 migrates there" "migration finished successfully" node_a qm migrate 103 pverig3 --online
check "discovery reports the unknown node" wait_log 30 'evt=discover.unknown_node pve_node=pverig3' disc
check "vm:vm103 is marked gone: airlock cannot reach it there" \
	wait_for 30 "SELECT gone_at IS NOT NULL FROM airlock.entities WHERE slug = 'vm:vm103'"
check_eq "no entity was made on the unknown node" 0 "$(q "SELECT count(*) FROM airlock.entities WHERE vmid = 103 AND gone_at IS NULL")"

# ---- the inventory does not move a discovered guest back
check "the inventory is seeded again (it still says node A)" $A seed "$WORK/seeds"
check_eq "vm:web stays on node B: the scheduler owns its node" proxmox-host:beta \
	"$(q "SELECT node FROM airlock.entities WHERE slug = 'vm:web'")"

# ---- the inventory's rules around discovery
inventory "  - {slug: vm:frontend, type: vm, vmid: 102, node: proxmox-host:beta}" >"$WORK/seeds/inventory.yaml"
check_out "a new slug for a guest discovery named is refused, naming its slug" \
	'vm:frontend has vmid 102, which discovery already recorded as vm:vm102' $A seed "$WORK/seeds"
check_eq "and nothing was written" 0 "$(q "SELECT count(*) FROM airlock.entities WHERE slug = 'vm:frontend'")"
inventory "  - {slug: vm:vm102, type: vm, vmid: 102, node: proxmox-host:beta, attributes: {owner: db-team}}" \
	>"$WORK/seeds/inventory.yaml"
check "a discovered guest is annotated by its slug" $A seed "$WORK/seeds"
check_eq "its attributes are merged, its discovered node kept" "db-team|proxmox-host:alpha" \
	"$(q "SELECT attributes->>'owner', node FROM airlock.entities WHERE slug = 'vm:vm102'")"
check_out "seed_inventory called directly refuses a new guest without a node" \
	'vm:later has no node, and discovery has not listed it yet' \
	psql -XAtq -c "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"vm:later\", \"type\": \"vm\", \"vmid\": 170}]}')"
inventory "  - {slug: vm:x, type: vm, vmid: 171, node: proxmox-host:alpha, pve_node: pverig}" >"$WORK/seeds/inventory.yaml"
check_out "pve_node on a guest is refused" 'only a proxmox-host has a pve_node' $A seed "$WORK/seeds"

kill -TERM "$DPID"
wait "$DPID" 2>/dev/null
check "the daemon logged the round" grep -qE 'evt=discover.round nodes=3 answered=2 ' "$WORK/disc.log"

# ---- the same under valgrind: new guests appear, node B's key, a command there
command -v valgrind >/dev/null || { echo "valgrind is missing (scripts/install-deps installs it)"; exit 1; }
check "five cheap guests join node B" $AIRLOCK_RIG_CTL guests-add 5 --node pverig2
valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
	--error-exitcode=99 --log-file="$WORK/valgrind.log" \
	$D -c "$cfg" --grace 20 >"$WORK/vg.log" 2>&1 &
vpid=$!
DAEMON_PIDS+=("$vpid")
check "under valgrind, discovery finds them" \
	wait_for 120 "SELECT count(*) = 5 FROM airlock.entities WHERE slug LIKE 'vm:cheap%' AND node = 'proxmox-host:beta'"
check "and the probes see their agents" \
	wait_for 120 "SELECT count(*) = 5 FROM airlock.entities WHERE slug LIKE 'vm:cheap%' AND attributes->>'qemu_guest_agent' = 'running'"
id=$(as_agent $A run --target vm:web -- 'echo under-valgrind')
check "a command on node B succeeds under valgrind" wait_for 120 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
kill -TERM $vpid
wait $vpid
rc=$?
check_eq "valgrind reports no memory errors and no leaks (exit status)" 0 "$rc"
check_out "no bytes definitely lost" 'definitely lost: 0 bytes|no leaks are possible' cat "$WORK/valgrind.log"
check_out "ERROR SUMMARY: 0 errors" 'ERROR SUMMARY: 0 errors' cat "$WORK/valgrind.log"
[ "$rc" = 0 ] || grep -A30 "definitely lost in\|Invalid\|uninitialised" "$WORK/valgrind.log" | head -60
finish
