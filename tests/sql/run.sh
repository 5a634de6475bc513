#!/bin/bash
# Runs inside scripts/pgtmp: PG* point at an empty database "airlock".
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
A=build/bin/airlock
tmp=$(mktemp -d /tmp/airlock-sqltest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ---- migrate
check_out "migrate applies 0001 on an empty database" 'applied 0001_schema.sql' $A migrate
check_out "a second migrate does nothing" 'up to date \(0 applied\)' $A migrate
check_eq "the migration is recorded with its checksum" "1" \
	"$(psql -Atc "SELECT count(*) FROM airlock.schema_migrations WHERE name = '0001_schema.sql' AND length(sha256) = 64")"
cp -r migrations "$tmp/changed"
echo "-- an edit after landing" >>"$tmp/changed/0001_schema.sql"
check_rc "a changed applied migration is refused" 1 $A migrate --dir "$tmp/changed"
check_out "the refusal names the file and says what to do" \
	'0001_schema.sql was changed after it was applied.*new migration' $A migrate --dir "$tmp/changed"
mkdir -p "$tmp/newer"
cp migrations/*.sql "$tmp/newer/"
printf 'CREATE TABLE airlock.extra (x int);\n' >"$tmp/newer/9000_extra.sql"
check_out "a new migration is applied after the old ones" 'applied 9000_extra.sql' $A migrate --dir "$tmp/newer"
check_out "a database newer than the files is refused" 'has migration 9000_extra.sql.*upgrade' $A migrate
printf 'CREATE TABLE airlock.broken (x int);\nSELECT no_such_function();\n' >"$tmp/newer/9001_broken.sql"
check_rc "a failing migration fails the run" 1 $A migrate --dir "$tmp/newer"
check_eq "a failing migration is rolled back whole" "0|0" \
	"$(psql -Atc "SELECT count(*) FROM airlock.schema_migrations WHERE name = '9001_broken.sql'")|$(psql -Atc "SELECT count(*) FROM pg_tables WHERE tablename = 'broken'")"
rm "$tmp/newer/9001_broken.sql"

# Concurrent runs on a fresh database: every run succeeds, 0001 applies once.
createdb conc
pids=()
for i in 1 2 3 4 5 6; do
	$A migrate --db "dbname=conc" >"$tmp/conc.$i" 2>&1 &
	pids+=($!)
done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
check_eq "six concurrent migrates all succeed" 1 $ok
check_eq "exactly one of them applied 0001" 1 "$(cat "$tmp"/conc.* | grep -c 'applied 0001_schema.sql')"

# ---- advisory locks: one registry, no kind colliding with another
check_out "every advisory lock uses an execution id or a registered kind" \
	'^[0-9]+ advisory locks checked, [0-9]+ kinds registered$' tests/sql/lockkeys.py
mkdir -p "$tmp/locks"
cp -r migrations store worker "$tmp/locks/"
printf "SELECT pg_advisory_lock(7428773000);\n" >>"$tmp/locks/migrations/0002_worker.sql"
check_out "a one-key lock on anything but an execution id is refused" \
	'0002_worker.sql:[0-9]+: one-key lock on .7428773000.' tests/sql/lockkeys.py "$tmp/locks"
cp migrations/0002_worker.sql "$tmp/locks/migrations/"
printf 'SELECT pg_try_advisory_lock(74287799, hashtext($1))\n' >>"$tmp/locks/worker/guard.c"
check_out "a two-key lock of an unregistered kind is refused" \
	"guard.c:[0-9]+: two-key lock of kind '74287799'" tests/sql/lockkeys.py "$tmp/locks"
cp worker/guard.c "$tmp/locks/worker/"
sed -i 's/^#define LOCK_KIND_MIGRATE "74287735"/#define LOCK_KIND_MIGRATE "74287730"/' "$tmp/locks/store/lockkeys.h"
check_out "two kinds with one number are refused" 'two kinds share a number' tests/sql/lockkeys.py "$tmp/locks"
# A session holding execution 7428773000's liveness lock (the one-key space)
# does not stop a migrate; one holding the migrate kind does.
holdlock() { psql -XAtq -c "SELECT pg_advisory_lock($1); SELECT pg_sleep(30)" >/dev/null 2>&1 & HOLDER=$!; }
waitheld() { for _ in $(seq 100); do [ "$(psql -XAtc "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")" -gt 0 ] && return; sleep 0.1; done; }
psql -XAtq -c "ALTER DATABASE $PGDATABASE SET lock_timeout = '2s'"
holdlock 7428773000
waitheld
check_out "a migrate is not blocked by an execution's lock, whatever its id" 'up to date' \
	$A migrate --dir "$tmp/newer"
kill $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null
psql -XAtq -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()" >/dev/null
holdlock "74287735, 0"
waitheld
check_out "a migrate waits for the one holding the migrate lock" 'lock timeout' \
	$A migrate --dir "$tmp/newer"
kill $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null
psql -XAtq -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()" >/dev/null
psql -XAtq -c "ALTER DATABASE $PGDATABASE RESET lock_timeout"

# ---- seed
check_out "seed ingests policy, tools and inventory" 'policy: version 1 ingested' $A seed seeds
check_out "a second seed changes nothing" 'policy: version 1 unchanged.*' $A seed seeds
out=$($A seed seeds 2>&1)
check_out "a second seed changes no tool or entity" 'tools: [0-9]+ entries, 0 changed' echo "$out"
check_out "a second seed changes no entity" 'inventory: [0-9]+ entities, 0 rows changed' echo "$out"
check_eq "the policy's rules are listed" 1 \
	"$(psql -Atc "SELECT (count(*) > 0)::int FROM airlock.policy_rules WHERE policy_version = 1")"
check_eq "the incident's estate is there" "not_running" \
	"$(psql -Atc "SELECT attributes->>'qemu_guest_agent' FROM airlock.entities WHERE slug = 'vm:zimaos'")"

cp -r seeds "$tmp/seeds2"
first_rule=$(psql -Atc "SELECT rule_id FROM airlock.policy_rules ORDER BY rule_id LIMIT 1")
python3 - "$tmp/seeds2/policy.yaml" "$first_rule" <<'PY'
import sys, re
path, rule = sys.argv[1], sys.argv[2]
lines = open(path).read().split('\n')
# Drop the list item whose "id:" is the rule, up to the next item at the same indent.
out, skip, indent = [], False, None
for line in lines:
    stripped = line.lstrip()
    ind = len(line) - len(stripped)
    if stripped.startswith('- ') and re.search(r'\bid:\s*["\']?' + re.escape(rule) + r'["\']?\s*(,|}|$)', stripped):
        skip, indent = True, ind
        continue
    if skip and (stripped == '' or ind > indent):
        continue
    skip = False
    out.append(line)
open(path, 'w').write('\n'.join(out))
PY
check_out "a changed policy becomes version 2" 'policy: version 2 ingested' $A seed "$tmp/seeds2"
check_eq "a removed rule disappears" 0 \
	"$(psql -Atc "SELECT count(*) FROM airlock.policy_rules WHERE rule_id = '$first_rule'")"
check_eq "the old version is kept for history" 2 "$(psql -Atc "SELECT count(*) FROM airlock.policies")"

cp -r seeds "$tmp/bad"
printf 'entities:\n  - slug: vm:x\n    type: vm\n    node: [unclosed\n' >"$tmp/bad/inventory.yaml"
before=$(psql -Atc "SELECT count(*) FROM airlock.entities")
check_rc "malformed YAML is refused" 2 $A seed "$tmp/bad"
check_out "the error names file, line and column" "$tmp/bad/inventory.yaml:[0-9]+:[0-9]+: " $A seed "$tmp/bad"
check_eq "nothing was ingested" "$before" "$(psql -Atc "SELECT count(*) FROM airlock.entities")"
printf 'entities:\n  - slug: vm:x\n    type: vm\n    vmid: 900\n' >"$tmp/bad/inventory.yaml"
check_out "a guest without its node is refused with its position" 'inventory.yaml:2:5: missing required key "node"' $A seed "$tmp/bad"
# Seeding says where: two guests of one node with one VMID, a node that is
# no host, a relationship to no entity, a malformed slug: file:line:col,
# and nothing written.
printf 'entities:\n  - {slug: "proxmox-host:hubris", type: proxmox-host, address: 127.0.0.1}\n  - slug: vm:one\n    type: vm\n    node: proxmox-host:hubris\n    vmid: 150\n  - slug: lxc:two\n    type: lxc\n    node: proxmox-host:hubris\n    vmid: 150\n' >"$tmp/bad/inventory.yaml"
check_rc "two guests with one VMID on one node are refused (exit 2)" 2 $A seed "$tmp/bad"
check_out "... at the second one's vmid, naming the first" \
	'inventory.yaml:10:11: lxc:two has vmid 150, which vm:one \(line 3\) already has on proxmox-host:hubris' \
	$A seed "$tmp/bad"
printf 'entities:\n  - slug: vm:three\n    type: vm\n    node: proxmox-host:atlantis\n    vmid: 151\n' >"$tmp/bad/inventory.yaml"
check_rc "a guest on a node neither the file nor the database has is refused (exit 2)" 2 $A seed "$tmp/bad"
check_out "... by the database, at the node, with file:line:col" \
	'inventory.yaml:4:11: inventory: the node of vm:three is proxmox-host:atlantis, which is no proxmox-host of this inventory or of the database' \
	$A seed "$tmp/bad"
printf 'entities:\n  - slug: vm:four\n    type: vm\n    node: hubris\n    vmid: 152\n' >"$tmp/bad/inventory.yaml"
check_out "a node that is not a host's slug is refused before the database" \
	'inventory.yaml:4:11: node "hubris" must be the slug of a proxmox-host' $A seed "$tmp/bad"
printf 'entities:\n  - slug: vm:five\n    type: vm\n    node: proxmox-host:hubris\n    vmid: 153\nrelationships:\n  - {source: vm:five, target: lxc:ghost, type: depends-on}\n' >"$tmp/bad/inventory.yaml"
check_rc "a relationship to no entity is refused (exit 4)" 4 $A seed "$tmp/bad"
check_out "... at its target" 'inventory.yaml:7:31: inventory: the relationship vm:five depends-on lxc:ghost names lxc:ghost' \
	$A seed "$tmp/bad"
printf 'entities:\n  - slug: "vm:bad slug"\n    type: vm\n    node: proxmox-host:hubris\n    vmid: 154\n' >"$tmp/bad/inventory.yaml"
check_out "a database-side check refusal names the slug's place" \
	'inventory.yaml:2:11: inventory: vm:bad slug refused: a slug is TYPE:NAME' $A seed "$tmp/bad"
check_out "... and says nothing was ingested" 'nothing was ingested' $A seed "$tmp/bad"
check_eq "nothing of those inventories was written" "$before" "$(psql -Atc "SELECT count(*) FROM airlock.entities")"
cp seeds/inventory.yaml "$tmp/bad/inventory.yaml"
printf 'tools:\n  - {server: a, tool: b, verdict: maybe}\n' >"$tmp/bad/tools.yaml"
check_out "a bad tool verdict is refused with its position" 'tools.yaml:2:[0-9]+: verdict "maybe"' $A seed "$tmp/bad"
cp seeds/tools.yaml "$tmp/bad/tools.yaml"
printf 'this: is: not: yaml\n' >"$tmp/bad/policy.yaml"
check_rc "a malformed policy is refused" 2 $A seed "$tmp/bad"
check_eq "the policy in force did not change" 2 "$(psql -Atc "SELECT max(version) FROM airlock.policies")"

# ---- gate.yaml: the gate policy as a seed, versioned
gv() { psql -Atc "SELECT max(version) FROM airlock.gate_policies"; }
classes() { psql -Atc "SELECT string_agg(class || ' ' || approvals_required || ' ' || ttl || ' ' || approval_valid_for, '|' ORDER BY class) FROM airlock.gate_policy"; }
check_eq "the seed's gate.yaml is version 2 (1 is what the migration found)" 2 "$(gv)"
check_out "a second seed leaves the gate unchanged" 'gate: version 2 unchanged' $A seed seeds
check_eq "destructive needs two approvers by default" \
	"config_mutation 1 01:00:00 00:15:00|destructive 2 01:00:00 00:15:00" "$(classes)"
mkdir -p "$tmp/gate"
cp "$tmp/seeds2/policy.yaml" seeds/tools.yaml seeds/inventory.yaml "$tmp/gate/"
printf '%s\n' 'classes:' '  config_mutation: {approval_valid_for: 10m}' 'rules:' \
	'  - target: "proxmox-host:*"' '    class: config_mutation' '    quorum: 2' \
	'  - agent: "intern-?"' '    ttl: 5m' 'limits:' '  requests_per_minute: 30' >"$tmp/gate/gate.yaml"
check_out "a gate.yaml with rules becomes version 3" 'gate: version 3 ingested' $A seed "$tmp/gate"
check_eq "what it leaves out takes the defaults; destructive stays at 2" \
	"config_mutation 1 01:00:00 00:10:00|destructive 2 01:00:00 00:15:00" "$(classes)"
check_eq "its rules are in force" "1 proxmox-host:* config_mutation 2|2 intern-? 00:05:00" \
	"$(psql -Atc "SELECT string_agg(concat_ws(' ', position, target, agent, class, approvals_required, ttl), '|' ORDER BY position) FROM airlock.gate_rules")"
check_eq "limits it sets, and defaults for the rest" "30 100 65536 256 256" \
	"$(psql -Atc "SELECT concat_ws(' ', requests_per_minute, pending_per_agent, attribute_bytes, attribute_keys, relationships_per_entity) FROM airlock.gate_limits")"
psql -qc "CREATE ROLE gate_op LOGIN IN ROLE airlock_operator; CREATE ROLE gate_agent LOGIN IN ROLE airlock_agent"
check_out "policy show names the classifier policy in force" 'classifier policy: version [0-9]+, sha256 [0-9a-f]{12}, from ' \
	env PGUSER=gate_op $A policy show
check_out "policy show names the gate version in force" 'gate policy: version 3, .*gate.yaml' env PGUSER=gate_op $A policy show
check_out "policy show lists the gate's rules" '1\. target=proxmox-host:\* class=config_mutation quorum=2' \
	env PGUSER=gate_op $A policy show
check_out "policy show lists the limits" 'limits: requests_per_minute=30 pending_per_agent=100' env PGUSER=gate_op $A policy show
check_out "policy show --json, for machines" '"gate": \{.*"version": 3' env PGUSER=gate_op $A policy show --json
check_rc "an agent may not read the gate's per-agent rules" 3 env PGUSER=gate_agent $A policy show
printf 'classes:\n  destructive:\n    quorum: 1\n' >"$tmp/gate/gate.yaml"
check_out "a one-operator site sets destructive quorum 1 explicitly" 'gate: version 4 ingested' $A seed "$tmp/gate"
check_eq "and it is 1" 1 "$(psql -Atc "SELECT approvals_required FROM airlock.gate_policy WHERE class = 'destructive'")"
check_eq "every version is kept" "1 2 3 4" "$(psql -Atc "SELECT string_agg(version::text, ' ' ORDER BY version) FROM airlock.gate_policies")"
# Mistakes: each names file:line:col, and nothing at all is ingested.
state3() { echo "$(gv)/$(psql -Atc "SELECT count(*) FROM airlock.entities")/$(psql -Atc "SELECT max(version) FROM airlock.policies")"; }
bad_gate() { # NAME REGEX YAML
	local before
	printf '%b' "$3" >"$tmp/gate/gate.yaml"
	before=$(state3)
	check_out "gate.yaml: $1" "gate.yaml:$2" $A seed "$tmp/gate"
	check_eq "gate.yaml: $1: nothing was ingested" "$before" "$(state3)"
}
printf 'entities:\n  - {slug: "proxmox-host:extra", type: proxmox-host, address: 10.0.0.9}\n' >"$tmp/gate/inventory.yaml"
bad_gate "quorum 0" '3:13: "quorum" must be an integer in 1\.\.5' 'classes:\n  destructive:\n    quorum: 0\n'
bad_gate "quorum in words" '3:13: "quorum" must be an integer in 1\.\.5' 'classes:\n  destructive:\n    quorum: two\n'
bad_gate "an ungated class" '2:3: class "read_only" is not gated' 'classes:\n  read_only: {quorum: 1}\n'
bad_gate "an unknown key" '1:1: unknown key "quorums"' 'quorums: {}\n'
bad_gate "a duration in words" '3:10: "ttl" must be a duration' 'classes:\n  destructive:\n    ttl: 5 minutes\n'
bad_gate "a duration over 30 days" '3:10: "ttl" must be a duration' 'classes:\n  destructive:\n    ttl: 31d\n'
bad_gate "a rule for nobody" '2:5: a rule needs "target" or "agent"' 'rules:\n  - quorum: 3\n'
bad_gate "a rule that changes nothing" '2:5: a rule needs "quorum", "ttl" or "approval_valid_for"' 'rules:\n  - target: "vm:*"\n'
bad_gate "a rule that would lower the quorum" '4:13: quorum 1 does not raise the class.s quorum \(2\)' \
	'rules:\n  - target: "vm:*"\n    class: destructive\n    quorum: 1\n'
bad_gate "a rule that would lengthen the TTL" '3:10: ttl does not shorten the class.s 1h' 'rules:\n  - agent: hermes\n    ttl: 2h\n'
bad_gate "a target glob with a space" '2:13: target "vm: x" must be an entity slug' 'rules:\n  - target: "vm: x"\n    quorum: 3\n'
bad_gate "a limit out of range" '2:24: "requests_per_minute" must be an integer in 1\.\.100000' 'limits:\n  requests_per_minute: 0\n'
bad_gate "an unknown limit" '2:3: unknown key "runs_per_hour"' 'limits:\n  runs_per_hour: 5\n'
bad_gate "rules that are not a list" '1:8: "rules" must be a list' 'rules: {target: x}\n'
bad_gate "an unknown hard_to_read action" '2:11: "action" must be confirm' 'hard_to_read:\n  action: warn\n'
bad_gate "a hard_to_read screen of no lines" '2:14: "max_lines" must be an integer in 1\.\.100000' 'hard_to_read:\n  max_lines: 0\n'
bad_gate "an unknown hard_to_read key" '2:3: unknown key "bidi"' 'hard_to_read:\n  bidi: refuse\n'
rm "$tmp/gate/gate.yaml"
cp seeds/inventory.yaml "$tmp/gate/"
check_out "without gate.yaml the version in force stays" 'gate: no gate.yaml; version 4 stays in force' $A seed "$tmp/gate"
printf 'hard_to_read:\n  action: quorum\n  max_lines: 10\n' >"$tmp/gate/gate.yaml"
check_out "hard_to_read: quorum is ingested" 'gate: version [0-9]+ ingested' $A seed "$tmp/gate"
check_eq "and in force" "quorum 10 2000" "$(psql -Atc "SELECT concat_ws(' ', action, max_lines, max_bytes) FROM airlock.gate_legibility")"

# ---- the API and its rules, per role (pgTAP), each file on a clean database
pgtap() { # pgtap FILE DB
	local out plan nok okc
	createdb "$2"
	$A migrate --db "dbname=$2" >/dev/null
	out=$(psql -X -q -d "$2" -f "$1" 2>&1)
	plan=$(printf '%s\n' "$out" | grep -E '^1\.\.[0-9]+$' | tail -1)
	nok=$(printf '%s\n' "$out" | grep -c '^not ok')
	okc=$(printf '%s\n' "$out" | grep -c '^ok ')
	if [ -n "$plan" ] && [ "$nok" -eq 0 ] && [ "1..$okc" = "$plan" ]; then
		pass "pgTAP $1: $okc assertions"
	else
		failt "pgTAP $1 ($okc ok, $nok not ok, plan '$plan')" "$(printf '%s\n' "$out" | grep -v '^ok ' | head -40)"
	fi
	[ "$nok" -eq 0 ] && [ "$okc" -gt 0 ] && T_PASS=$((T_PASS + okc - 1))
}
pgtap tests/sql/api.sql api
pgtap tests/sql/probes.sql probes
pgtap tests/sql/gate.sql gate
pgtap tests/sql/queue.sql queue
pgtap tests/sql/onecall.sql onecall
pgtap tests/sql/notsent.sql notsent
pgtap tests/sql/fairclaim.sql fairclaim
pgtap tests/sql/seal.sql seal
pgtap tests/sql/records.sql records
pgtap tests/sql/outhold.sql outhold
pgtap tests/sql/sidedoor.sql sidedoor
pgtap tests/sql/console.sql console

# ---- a hard-to-read command: the database counts the characters the console marks
if cc -std=c11 -D_GNU_SOURCE -O1 -I. -o "$tmp/hiddencheck" tests/sql/hiddencheck.c build/libairlock.a \
	2>"$tmp/hcc.log"; then
	pass "build the console's hidden-character check"
else
	failt "build the console's hidden-character check" "$(cat "$tmp/hcc.log")"
fi
"$tmp/hiddencheck" >"$tmp/hidden.c"
psql -XAtq -d console -c "SELECT cp FROM generate_series(1, 1114111) cp
	WHERE (cp < 55296 OR cp > 57343) AND chr(cp) ~ airlock._hidden_class() ORDER BY cp" >"$tmp/hidden.sql"
check_eq "the C list of hidden code points is not empty (precondition)" t \
	"$([ "$(wc -l <"$tmp/hidden.c")" -gt 1000 ] && echo t)"
check_eq "the database counts as hidden exactly the code points the console marks ($(wc -l <"$tmp/hidden.c"))" \
	"$(md5sum <"$tmp/hidden.c")" "$(md5sum <"$tmp/hidden.sql")"

# ---- the sealer: one at a time, under concurrent writers, after events chained the old way
sealdb() { createdb "$1" && $A migrate --db "dbname=$1" >/dev/null &&
	psql -XAtq -d "$1" -c "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"proxmox-host:hubris\", \"type\": \"proxmox-host\", \"address\": \"127.0.0.1\"}]}')" >/dev/null; }
newrows() { # newrows DB N: N executions, one transaction each (each writes a record event)
	for _ in $(seq "$2"); do
		echo "INSERT INTO airlock.executions (target, target_type, command, requested_by, state) VALUES ('proxmox-host:hubris', 'proxmox-host', 'uptime', 'w', 'received');"
	done | psql -XAtq -d "$1" >/dev/null
}
sealdb busy
newrows busy 3
PGDATABASE=busy holdlock "74287730, 1"
PGDATABASE=busy waitheld
check_eq "a sealer finds the chain's lock taken: it seals nothing and does not wait" "0|3" \
	"$(psql -XAtq -d busy -c "SET lock_timeout = '1s'" -c "SELECT airlock.seal_events(10)")|$(psql -XAtc "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL" -d busy)"
kill $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null
psql -XAtq -d busy -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()" >/dev/null
check_eq "with the lock free, it seals them" 3 "$(psql -XAtc "SELECT airlock.seal_events(10)" -d busy)"

# Six writers and a sealer at once; the writers' ids interleave with the seals.
sealdb conc_seal
sealer_loop() { while [ ! -e "$tmp/writers.done" ]; do psql -XAtq -d conc_seal -c "SELECT airlock.seal_events(40)" >/dev/null; done; }
sealer_loop &
SEALER=$!
wpids=()
for w in 1 2 3 4 5 6; do newrows conc_seal 80 & wpids+=($!); done
for p in "${wpids[@]}"; do wait "$p"; done
touch "$tmp/writers.done"
wait $SEALER
check_eq "the sealer ran while the writers wrote (precondition)" t \
	"$(psql -XAtc "SELECT count(*) > 0 AND count(*) < 480 FROM airlock.execution_events WHERE seq IS NOT NULL" -d conc_seal)"
psql -XAtq -d conc_seal -c "SELECT airlock.seal_events(100000)" >/dev/null
check_eq "six concurrent writers: every event sealed, the chain verifies, positions 1..n" "480|480||0|480" \
	"$(psql -XAtc "SELECT (SELECT count(*) FROM airlock.execution_events), checked, first_broken, unsealed, (SELECT max(seq) FROM airlock.execution_events) FROM airlock.audit_verify()" -d conc_seal)"

# Events chained before 0018 keep their hashes and take their ids as positions.
mkdir -p "$tmp/pre0018"
for f in migrations/*.sql; do if [[ "$(basename "$f")" < 0018 ]]; then cp "$f" "$tmp/pre0018/"; fi; done
createdb legacy
$A migrate --db "dbname=legacy" --dir "$tmp/pre0018" >/dev/null
psql -XAtq -d legacy -c "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"proxmox-host:hubris\", \"type\": \"proxmox-host\", \"address\": \"127.0.0.1\"}]}')" >/dev/null
newrows legacy 5
psql -XAtq -d legacy -c "CREATE TABLE public.before0018 AS SELECT id, prev_hash, hash FROM airlock.execution_events" >/dev/null
check_out "0018 applies to a database with chained events" 'applied 0018_seal.sql' $A migrate --db "dbname=legacy"
check_eq "old events keep their hashes and links, and their ids are their positions" "5|5" \
	"$(psql -XAtc "SELECT count(*), count(*) FILTER (WHERE e.seq = e.id AND e.hash = b.hash AND e.prev_hash = b.prev_hash) FROM public.before0018 b JOIN airlock.execution_events e USING (id)" -d legacy)"
newrows legacy 4
psql -XAtq -d legacy -c "SELECT airlock.seal_events(100)" >/dev/null
check_eq "new events chain on from the old head" t \
	"$(psql -XAtc "SELECT (SELECT prev_hash FROM airlock.execution_events WHERE seq = (SELECT max(id) + 1 FROM public.before0018)) = (SELECT hash FROM public.before0018 ORDER BY id DESC LIMIT 1)" -d legacy)"
check_eq "old and new together verify" "9|" \
	"$(psql -XAtc "SELECT checked, first_broken FROM airlock.audit_verify()" -d legacy)"

# ---- run() refuses what the transport cannot carry: the same rule as the C side
PKGS="libpq libcurl libcjson openssl libssh2 yaml-0.1"
if cc -std=c11 -D_GNU_SOURCE -O1 -I. $(pkg-config --cflags $PKGS) -o "$tmp/carrycheck" \
	tests/sql/carrycheck.c build/libairlock.a $(pkg-config --libs $PKGS) -lpthread -lm 2>"$tmp/cc.log"; then
	pass "build the transport's carry check"
else
	failt "build the transport's carry check" "$(cat "$tmp/cc.log")"
fi
tests/sql/carrygen.py 600 2>"$tmp/carrygen.log" >"$tmp/carry.hex"
createdb carry
$A migrate --db "dbname=carry" >/dev/null
"$tmp/carrycheck" <"$tmp/carry.hex" >"$tmp/carry.c"
psql -XAtq -d carry -v ON_ERROR_STOP=1 >"$tmp/carry.sql" 2>&1 <<SQL
SELECT airlock.seed_inventory('{"entities": [{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1"}]}') \\g /dev/null
CREATE TEMP TABLE cmds (n serial, hex text);
\\copy cmds (hex) FROM '$tmp/carry.hex'
CREATE FUNCTION pg_temp.try(cmd text) RETURNS text LANGUAGE plpgsql AS \$\$
BEGIN
	PERFORM airlock.run('proxmox-host:hubris', cmd);
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN CASE WHEN SQLSTATE = 'AL002' AND SQLERRM LIKE '%too long to carry%the limit is 32640%' THEN 'refused'
		    ELSE SQLSTATE || ' ' || SQLERRM END;
END
\$\$;
BEGIN;
SELECT pg_temp.try(convert_from(decode(hex, 'hex'), 'UTF8')) FROM cmds ORDER BY n;
ROLLBACK;
SQL
check_eq "the generator made commands on both sides of the limit" "yes" \
	"$(grep -qE '^[0-9]+ commands, [1-9][0-9]* over' "$tmp/carrygen.log" && grep -c ok "$tmp/carry.sql" | grep -qv '^0$' && echo yes)"
check_eq "the C rule agrees for a host and a VM" 0 "$(awk '$1 != $2' "$tmp/carry.c" | wc -l)"
check_eq "run() accepts and refuses exactly what the transport does ($(wc -l <"$tmp/carry.hex") generated commands)" \
	"$(cut -d' ' -f1 "$tmp/carry.c" | md5sum)" "$(md5sum <"$tmp/carry.sql")"
check_eq "no accepted command was left behind" 0 "$(psql -XAtq -d carry -c "SELECT count(*) FROM airlock.executions")"

# ---- notifications reveal nothing: any login may LISTEN on any channel
createdb notify
$A migrate --db "dbname=notify" >/dev/null
psql -Xq -d notify >"$tmp/notify.out" 2>&1 <<'SQL'
SELECT airlock.seed_inventory('{"entities": [{"slug": "proxmox-host:hubris", "type": "proxmox-host", "address": "127.0.0.1"}]}');
SELECT airlock.seed_policy('rules: []', 'notify test', '[]');
SET SESSION AUTHORIZATION gate_agent;
LISTEN airlock_state; LISTEN airlock_work; LISTEN airlock_pending; LISTEN airlock_policy;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION gate_agent;
SELECT airlock.run('proxmox-host:hubris', 'systemctl restart pveproxy', NULL, 'secret-change', 'secret action');
RESET SESSION AUTHORIZATION;
SELECT airlock.worker_claim('w1') \g /dev/null
SELECT airlock.worker_classified(1, 'w1', 'config_mutation', '[]', 1, 'test', 'none', false);
SET SESSION AUTHORIZATION gate_op;
SELECT airlock.approve(1, 'ok');
RESET SESSION AUTHORIZATION;
SELECT airlock.worker_claim('w1') \g /dev/null
SELECT airlock.worker_release(1, 'w1', 0, 'test');
SELECT pg_sleep(0.2);
SQL
for ch in airlock_state airlock_work airlock_pending; do
	check_out "an agent LISTENing on $ch is woken" "Asynchronous notification \"$ch\" received" cat "$tmp/notify.out"
done
check_eq "no notification on those channels carries a payload (ids, states, names)" 0 \
	"$(grep -E 'Asynchronous notification "airlock_(state|work|pending)" with payload' "$tmp/notify.out" | wc -l)"

# A daemon's own wake-up channel carries the row id; agents can neither find
# its name nor hear it.  A worker session registers and LISTENs (as airlockd's
# listen connection does) while an agent LISTENs on every airlock channel,
# looks for the name and enqueues.
psql -qc "CREATE ROLE gate_worker LOGIN IN ROLE airlock_worker"
cat >"$tmp/wlisten.sql" <<'SQL'
SELECT airlock.worker_channel('bench-w') AS ch \gset
SELECT :'ch' ~ '^airlock_w_[0-9a-f]{32}$' AS well_formed;
LISTEN :"ch";
\! touch "$WREADY"
-- The waiting statement names the channel, as the daemon's last statement
-- (its LISTEN) does.
SELECT pg_sleep(0.1), :'ch' FROM generate_series(1, 100) WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = 'agent-done');
SELECT 1;
SQL
WREADY="$tmp/wready" PGUSER=gate_worker psql -X -d notify -f "$tmp/wlisten.sql" >"$tmp/wlisten.out" 2>&1 &
wl=$!
for _ in $(seq 100); do [ -e "$tmp/wready" ] && break; sleep 0.1; done
ch=$(psql -XAtq -d notify -c "SELECT channel FROM airlock.worker_channels WHERE worker = 'bench-w'")
check_eq "a superuser sees the worker session's statement, channel name and all" 1 \
	"$(psql -XAtq -d notify -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%$ch%' AND pid <> pg_backend_pid()")"
PGUSER=gate_agent PGAPPNAME=agent psql -X -d notify >"$tmp/agent.out" 2>&1 <<SQL
LISTEN airlock_state; LISTEN airlock_work; LISTEN airlock_pending; LISTEN airlock_policy;
SELECT count(*) FROM airlock.worker_channels;
SELECT 'seen:' || count(*) FROM pg_stat_activity WHERE query LIKE '%airlock\\_w\\_%' AND pid <> pg_backend_pid();
SELECT 'pid:' || count(*) FROM pg_stat_activity WHERE usename = 'gate_worker';
SELECT airlock.worker_channel('agent');
SELECT id AS wid FROM airlock.run('proxmox-host:hubris', 'uptime') id \gset
SELECT pg_sleep(0.3);
SET application_name = 'agent-done';
SELECT pg_sleep(0.5);
SQL
wait $wl
wid=$(psql -XAtq -d notify -c "SELECT max(id) FROM airlock.executions WHERE command = 'uptime'")
check_eq "a worker session registers a well-formed secret channel" "1" "$(grep -c '^ t$' "$tmp/wlisten.out")"
check_out "the daemon's channel hears the new row's id and its wake-up document (command and all)" \
	"Asynchronous notification \"$ch\" with payload \"$wid \\{\"id\": $wid, .*\"target\": \"proxmox-host:hubris\".*\"command\": \"uptime\".*\" received" \
	cat "$tmp/wlisten.out"
check_out "an agent cannot read the channel names" 'permission denied for table worker_channels' cat "$tmp/agent.out"
check_out "an agent cannot register a channel" 'permission denied for function worker_channel' cat "$tmp/agent.out"
check_out "the worker's session is there for the agent to see" 'pid:1' cat "$tmp/agent.out"
check_out "but not its LISTEN: pg_stat_activity hides other logins' statements" 'seen:0' cat "$tmp/agent.out"
check_eq "the agent, LISTENing on every airlock channel, heard no payload and not the daemon's channel" 0 \
	"$(grep -cE 'with payload|airlock_w_' "$tmp/agent.out")"
check_eq "the channel was not even named to the agent" 0 "$(grep -c "$ch" "$tmp/agent.out")"
# A document that would not fit in a notification (8000 bytes) is left out:
# the wake-up names the row only, and its worker claims it the usual way.
long=$(printf 'x%.0s' $(seq 7890))
psql -X -d notify >"$tmp/long.out" 2>&1 <<SQL
SELECT airlock.worker_channel('long-w') AS ch \gset
LISTEN :"ch";
SELECT airlock.run('proxmox-host:hubris', 'echo $long') AS lid \gset
SELECT airlock.run('proxmox-host:hubris', 'echo short') AS sid \gset
SELECT 'ids:' || :lid || ':' || :sid;
SQL
lid=$(sed -n 's/^ ids:\([0-9]*\):.*/\1/p' "$tmp/long.out")
sid=$(sed -n 's/^ ids:[0-9]*:\([0-9]*\)/\1/p' "$tmp/long.out")
check_out "a row whose document is too long for a notification is named by its id alone" \
	"with payload \"$lid\" received" cat "$tmp/long.out"
check_out "the next row's wake-up carries its document again" \
	"with payload \"$sid \\{\"id\": $sid, .*\"command\": \"echo short\"" cat "$tmp/long.out"

# ---- the flood limit holds under concurrent sessions (4 x 25 calls, 60 allowed)
psql -qc "CREATE ROLE gate_flood LOGIN IN ROLE airlock_agent"
for i in $(seq 25); do echo "SELECT airlock.run('proxmox-host:hubris', 'echo $i');"; done >"$tmp/flood.sql"
pids=()
for s in 1 2 3 4; do
	PGUSER=gate_flood psql -Xq -d notify -f "$tmp/flood.sql" >/dev/null 2>"$tmp/flood.$s" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
check_eq "four concurrent sessions get exactly 60 requests in, not more" 60 \
	"$(psql -XAtq -d notify -c "SELECT count(*) FROM airlock.executions WHERE requested_by = 'gate_flood'")"
check_eq "the other 40 were refused with AL010's words" 40 "$(cat "$tmp"/flood.* | grep -c 'requests in the last minute; the gate policy allows 60 per minute')"

# ---- the claim stays an index scan on a large backlog, stale statistics or not
psql -XAtq -d api -c "INSERT INTO airlock.executions (target, target_type, command, requested_by, state)
	SELECT 'proxmox-host:hubris', 'proxmox-host', 'echo ' || g, 'bulk', 'received' FROM generate_series(1, 20000) g"
claim_sql="SELECT e.id FROM airlock.executions e WHERE e.state IN ('received', 'queued', 'approved')
	AND e.claimed_by IS NULL AND e.run_after <= now() ORDER BY e.run_after, e.id LIMIT 1 FOR UPDATE SKIP LOCKED"
check_out "the claim uses executions_claim on 20k rows before ANALYZE" 'Index Scan using executions_claim' \
	psql -XAtq -d api -c "EXPLAIN $claim_sql"
psql -XAtq -d api -c "ANALYZE airlock.executions"
check_out "and after ANALYZE" 'Index Scan using executions_claim' psql -XAtq -d api -c "EXPLAIN $claim_sql"
check_out "the operators' pending list uses executions_pending" 'executions_pending' \
	psql -XAtq -d api -c "EXPLAIN SELECT * FROM airlock.pending"
check_eq "worker_claim takes the oldest row" \
	"$(psql -XAtq -d api -c "$claim_sql")" \
	"$(psql -XAtq -d api -c "SELECT id FROM airlock.worker_claim('w1')")"

finish
