#!/bin/bash
# The read-only jail end to end: a real airlockd in the test-only mode that
# classifies every command read_only (so the jail alone stands between a
# command and its target), the rig, a throwaway database.  Runs inside
# scripts/pgtmp and `tests/rig/rigctl run` (tests/suites/52-jail.sh).
#
# For every effect, first the rig is shown to take it when nothing confines
# the command (so a check below can fail), then the same effect is asked of
# airlockd on the host, a VM and a container: the row must be a failure
# confined in the user tier that says why, and the target must show nothing
# afterwards.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
. tests/jail/lib.sh

setup_db || { echo "set-up failed"; exit 1; }
q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler" >/dev/null
# This suite sends a few hundred requests as one agent within minutes: lift
# the gate's per-agent request limits where the schema has them.
q "DO \$\$ BEGIN IF to_regclass('airlock.gate_limits') IS NOT NULL THEN
     EXECUTE 'UPDATE airlock.gate_limits SET requests_per_minute = 100000, pending_per_agent = 100000';
   END IF; END \$\$" >/dev/null
q "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"lxc:nojail\", \"type\": \"lxc\",
   \"node\": \"proxmox-host:hubris\", \"vmid\": 203, \"attributes\": {\"container_status\": \"running\"}},
   {\"slug\": \"lxc:otherarch\", \"type\": \"lxc\", \"node\": \"proxmox-host:hubris\", \"vmid\": 204,
    \"attributes\": {\"container_status\": \"running\"}}]}')" >/dev/null

probe_db="scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\""
cfg=$(write_config d1 "$probe_db" "probes:" "  interval_s: 2" "testing:" "  classify_all_read_only: true")

# ---- the test-only switch is refused outside a test rig
check_out "the switch is refused without a test rig" \
	'testing.classify_all_read_only turns the approval gate off.*refused: AIRLOCK_RIG_ROOT is not set' \
	env -u AIRLOCK_RIG_ROOT $D -n -c "$cfg"
check_rc "and airlockd -n exits 1" 1 env -u AIRLOCK_RIG_ROOT $D -n -c "$cfg"
check_out "a directory without the rig's marker is not a test rig" 'is not a test rig' \
	env AIRLOCK_RIG_ROOT="$WORK" $D -n -c "$cfg"
check_out "a marker with other content is not the rig's" "does not hold the test rig's marker" \
	env AIRLOCK_RIG_ROOT="$WORK/fake" sh -c "mkdir -p $WORK/fake; echo x >$WORK/fake/.airlock-rig; $D -n -c $cfg"
check "inside the rig it is accepted" $D -n -c "$cfg"
start_daemon d1 || { echo "airlockd did not start"; exit 1; }
check "airlockd says loudly that it is in test mode" wait_log 10 'evt=config.test_mode' d1

# ---- probes: each target's confinement, shown to agents
check "the host can be confined (probe)" wait_for 60 \
	"SELECT attributes->>'confinement' = 'full' FROM airlock.entities WHERE slug = 'proxmox-host:hubris'"
check "VM 101 can be confined (probe)" wait_for 60 \
	"SELECT attributes->>'confinement' = 'full' FROM airlock.entities WHERE slug = 'vm:web01'"
check "CT 201 can be confined (probe)" wait_for 60 \
	"SELECT attributes->>'confinement' = 'full' FROM airlock.entities WHERE slug = 'lxc:nfs-export'"
check "CT 203, whose security profile forbids namespaces, cannot (probe)" wait_for 60 \
	"SELECT attributes->>'confinement' = 'none' FROM airlock.entities WHERE slug = 'lxc:nojail'"
check "CT 204, another architecture, cannot (probe)" wait_for 60 \
	"SELECT attributes->>'confinement' = 'none' FROM airlock.entities WHERE slug = 'lxc:otherarch'"
check_out "its check row names the architecture" 'the target is aarch64' \
	as_agent psql -XAtq -c "SELECT airlock.list_checks('lxc:otherarch')"
check_out "the host's check row says which limits apply" 'jail: user and root tiers \(net=own limits=cgroup' \
	as_agent psql -XAtq -c "SELECT airlock.list_checks('proxmox-host:hubris')"
check_out "get_health_summary shows an agent the confinement" '"confinement": "none"' \
	as_agent psql -XAtq -c "SELECT airlock.get_health_summary('lxc:nojail')"
check_out "the check row says why" 'Operation not permitted' \
	as_agent psql -XAtq -c "SELECT airlock.list_checks('lxc:nojail')"
check_out "an agent cannot set confinement itself" 'scheduler-owned' \
	as_agent psql -XAtq -c "SELECT airlock.update_entity_attributes('lxc:nojail', '{\"confinement\": \"full\"}')"

# ---- escapes: host, VM, CT
for t in host vm ct; do
	escapes "$t"
done

# ---- the row is the record
id=$(as_agent $A run --target vm:web01 -- 'touch /etc/airlock-pwned-show')
wait_final "$id"
check_out "airlock show prints how it was confined" 'confinement +read-only jail, unprivileged' as_alice $A show "$id"
check_out "get_execution says it too" '"confinement": "user"' as_agent psql -XAtq -c "SELECT airlock.get_execution($id)"
check_out "the running event records the confinement" '"confinement": "user"' as_alice $A history --json "$id"

# ---- plain observations: the same output as unconfined
for t in host vm ct; do
	observations "$t"
done

# ---- an observation on a target that cannot be confined goes to a human
before=$(ct_log_count 203)
id=$(as_agent $A run --target lxc:nojail -- 'cat /etc/os-release; echo nojail-marker')
check "an unconfinable observation returns to pending_approval" wait_for 60 \
	"SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_out "its error is the reason, naming the jail's failure" \
	'^cannot confine an observation on lxc:nojail: .*new namespaces: Operation not permitted' \
	q "SELECT error FROM airlock.executions WHERE id = $id"
check_out "the history says nothing ran" '"nothing_ran": true' as_alice $A history --json "$id"
check_eq "no output was recorded: the command never started" "" \
	"$(q "SELECT coalesce(octet_length(stdout)::text, '') FROM airlock.executions WHERE id = $id")"
check_out "the operators are told, with the reason" "cannot confine an observation on lxc:nojail" \
	grep -h . "$WORK"/d1.log
check_out "the agent reads why in get_execution" '"error": "cannot confine an observation on lxc:nojail' \
	as_agent psql -XAtq -c "SELECT airlock.get_execution($id)"
check_out "alice approves it (a human has looked)" "execution $id: approved" as_alice $A approve "$id" --reason "read-only, checked"
check "the approved observation runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "unconfined, and recorded so" none "$(q "SELECT confinement FROM airlock.executions WHERE id = $id")"
check_out "with its output" 'nojail-marker' as_alice $A show "$id"
check "the pct exec happened only after approval" test "$(ct_log_count 203)" -gt "$before"

# ---- a target of another architecture: the helper is never sent there;
# the observation waits for a human.
id=$(as_agent $A run --target lxc:otherarch -- 'cat /etc/hostname')
check "on another architecture an observation returns to pending_approval" wait_for 60 \
	"SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_out "saying why" "^cannot confine an observation on lxc:otherarch: the target is aarch64; the jail helper is built for x86_64" \
	q "SELECT error FROM airlock.executions WHERE id = $id"
absent "CT 204: no helper" "$RIG/guests/ct204/root/var/lib/airlock/jail/airlock-jail"

# ---- an observation too long to travel with the jail's script
long="echo $(head -c 31500 /dev/zero | tr '\0' a)"
id=$(as_agent $A run --target proxmox-host:hubris -- "$long")
check "a 31.5 KB observation (too long beside the jail) returns to pending_approval" wait_for 60 \
	"SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_out "saying so" 'cannot confine an observation on proxmox-host:hubris: the command is too long to run in the jail' \
	q "SELECT error FROM airlock.executions WHERE id = $id"

# ---- root-tier observations (qm list, pct list, qm config): the policy says
# which programs need uid 0 (verdict.needs_root); until it does, they run in
# the user tier, where PVE's CLIs refuse to run.
if grep -qE '^[[:space:]]*tier:[[:space:]]*root' seeds/policy.yaml; then
	root_observations
else
	echo "# root-tier observations through airlockd wait for the policy's tier: root rules"
	id=$(as_agent $A run --target proxmox-host:hubris -- 'qm list')
	wait_final "$id"
	check_out "without a tier: root rule, qm list runs in the user tier and PVE refuses it" \
		'please run as root' q "SELECT convert_from(stderr, 'UTF8') FROM airlock.executions WHERE id = $id"
fi

kill -TERM "$DPID"
wait "$DPID"
check_eq "airlockd stops cleanly" 0 "$?"

# ---- the real classifier in front of the jail: observations that lie
cfg2=$(write_config d2)
start_daemon d2 || { echo "airlockd did not start"; exit 1; }
replay_lying
kill -TERM "$DPID"
wait "$DPID"

# ---- reversible_low confined to its claim (the write tier)
rl='classify_all_reversible_low: {writes: [/var/lib/airlock-rl/, /etc/airlock-rl.conf]}'
cfg3=$(write_config d3 "$probe_db" "guard:" "  reversible_low_without_rewind: run" "testing:" "  $rl")
check_out "the reversible_low switch is refused without a test rig" \
	'testing.classify_all_reversible_low turns the approval gate off.*refused: AIRLOCK_RIG_ROOT is not set' \
	env -u AIRLOCK_RIG_ROOT $D -n -c "$cfg3"
start_daemon d3 || { echo "airlockd did not start"; exit 1; }
check "airlockd says it is in the reversible_low test mode" wait_log 10 'classify_all_reversible_low: every command' d3
for t in host vm ct; do
	writes_confined "$t"
done
# A limit that stops a command is named in its result.
id=$(as_agent $A run --target proxmox-host:hubris -- "python3 -c 'x = bytearray(900 << 20)'")
wait_final "$id"
check_out "the memory limit that killed it is named on the row" '^jail: killed by the memory limit \(512 MiB\)$' \
	q "SELECT error FROM airlock.executions WHERE id = $id"
check "unconfined the same allocation succeeds" direct host "python3 -c 'x = bytearray(900 << 20)'"
kill -TERM "$DPID"
wait "$DPID"

# ---- the database's own rule: no unreviewed observation runs unconfined
# (a worker session, by hand: claim, classify, then try to start it bare).
id=$(as_agent $A run --target proxmox-host:hubris -- 'cat /etc/hostname')
out=$(PGUSER=airlockd psql -XAtq -v ON_ERROR_STOP=0 2>&1 <<SQL
SELECT id FROM airlock.worker_claim('w-sql');
SELECT airlock.worker_classified($id, 'w-sql', 'read_only', '[]',
	(SELECT max(version) FROM airlock.policies), 'test', 'none', false);
SELECT airlock.worker_confine($id, 'w-sql', 'none');
SELECT airlock.worker_confine($id, 'w-sql', 'user');
SELECT airlock.worker_start($id, 'w-sql', NULL, '{}');
SELECT airlock.worker_unconfinable($id, 'w-sql', '');
SELECT airlock.worker_unconfinable($id, 'w-sql', 'cannot confine an observation on proxmox-host:hubris: test');
SQL
)
check_out "worker_confine refuses 'none' for an observation nobody approved" \
	'an observation that no human approved runs in the jail' echo "$out"
check_out "worker_unconfinable needs a reason" 'worker_unconfinable: a reason is required' echo "$out"
check_eq "an unconfinable running row is back with a human, its start undone" \
	"pending_approval||cannot confine an observation on proxmox-host:hubris: test" \
	"$(q "SELECT state || '|' || coalesce(confinement, '') || '|' || error FROM airlock.executions WHERE id = $id")"
check_eq "its events: running (user), then pending_approval, nothing ran" "running:user pending_approval:true" \
	"$(q "SELECT string_agg(to_state || ':' || coalesce(detail->>'nothing_ran', detail->>'confinement'), ' ' ORDER BY id) FROM airlock.execution_events WHERE execution_id = $id AND to_state IN ('running', 'pending_approval')")"
check_out "the audit chain is intact" 'audit: intact' as_alice $A audit verify
finish
