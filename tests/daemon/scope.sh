# tests/daemon/scope.sh -- an agent's scope with a real airlockd (sourced by
# tests/daemon/run.sh, its daemon running): a request outside the scope is
# refused at the door with nothing written; one inside runs; one the worker
# classifies above the scope's highest class is refused before anything
# runs, while the same command from an agent without a scope is held for a
# human as always.  The gate policy is put back afterwards.
q "CREATE ROLE scoped_ivy LOGIN IN ROLE airlock_agent" >/dev/null
cp -r "$WORK/seeds" "$WORK/seeds-scoped"
python3 - "$WORK/seeds-scoped/gate.yaml" <<'EOP'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'^scopes: \[\]\s*$', 'scopes:\n  - agent: "scoped_*"\n    targets: ["vm:web01"]\n    max_class: read_only\n', s, flags=re.M)
open(p, "w").write(s)
EOP
check "a gate policy with a scope for scoped_* is seeded" $A seed "$WORK/seeds-scoped"
check_out "policy show prints it" '^    1\. agent=scoped_\* targets=vm:web01 types=any max_class=read_only$' $A policy show
as_ivy() { PGUSER=scoped_ivy "$@"; }
before=$(q "SELECT count(*) FROM airlock.executions")
check_rc "outside the scope: refused at the door (exit 3)" 3 as_ivy $A run --target proxmox-host:hubris -- uptime
check_out "... with its own words" 'run on proxmox-host:hubris refused: outside the scope of agent scoped_ivy \(gate.yaml scope 1: targets vm:web01; types any; up to read_only\)\. Nothing was written' \
	as_ivy $A run --target proxmox-host:hubris -- uptime
check_eq "... and nothing was written" "$before" "$(q "SELECT count(*) FROM airlock.executions")"
id=$(as_ivy $A run --target vm:web01 -- 'uptime')
check "inside the scope, a read-only command runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
n0=$(ran_count 'apt-get install -y scope-marker')
id=$(as_ivy $A run --target vm:web01 -- 'apt-get install -y scope-marker')
check "inside the scope, a change is refused once classified" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
check_out "... naming the class and the ceiling" 'classified config_mutation, above the highest class agent scoped_ivy may request \(read_only, gate.yaml scope 1\)\. Nothing ran' \
	q "SELECT error FROM airlock.executions WHERE id = $id"
check_eq "... and nothing ran on the guest" "$n0" "$(ran_count 'apt-get install -y scope-marker')"
id=$(as_agent $A run --target vm:web01 -- 'apt-get install -y scope-marker')
check "the same change from an agent without a scope is held for a human" \
	wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
as_alice $A reject "$id" --reason "scope test" >/dev/null
check_out "a scoped agent reads only inside its scope" 'unknown entity "proxmox-host:hubris" \(or outside your scope\)' \
	as_ivy psql -XAtq -c "SELECT airlock.get_relations('proxmox-host:hubris')"
check "the gate policy without the scope is back" $A seed "$WORK/seeds"
