#!/bin/bash
# One shell end to end: the differential test on the rig, then a real
# airlockd and a throwaway database with a container whose root holds only
# busybox.  Runs inside scripts/pgtmp and `tests/rig/rigctl run`
# (tests/suites/42-shell.sh).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/daemon/lib.sh

# ---- the differential test: host, VM and container through the transport
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
t0=$(date +%s)
if build/integration/shelldiff_test >"$WORK/shelldiff.log" 2>&1; then
	pass "shelldiff: every case has bash's effect on host, VM and CT, and dash's through /bin/sh ($(($(date +%s) - t0)) s)"
else
	failt "shelldiff: every case has bash's effect on host, VM and CT, and dash's through /bin/sh" \
		"$(grep -v '^ok' "$WORK/shelldiff.log")"
fi
grep '^# busybox' "$WORK/shelldiff.log"

# ---- airlockd: each target's shell, and nothing on the one without bash
setup_db || { echo "set-up failed"; exit 1; }
q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler" >/dev/null
tests/rig/rigctl ct-add 205 --busybox >/dev/null || { echo "ct-add failed"; exit 1; }
q "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"lxc:bbox\", \"type\": \"lxc\",
   \"node\": \"proxmox-host:hubris\", \"vmid\": 205, \"attributes\": {\"container_status\": \"running\"}}]}')" >/dev/null
probe_db="scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\""
cfg=$(write_config d1 "$probe_db" "probes:" "  interval_s: 2")
start_daemon d1 || { echo "airlockd did not start"; exit 1; }

shell_check() { q "SELECT status || ' ' || detail FROM airlock.checks WHERE entity = '$1' AND name = 'shell'"; }
for slug in proxmox-host:hubris vm:web01 lxc:nfs-export; do
	check "$slug: the probe records its shell" wait_for 60 \
		"SELECT status = 'ok' FROM airlock.checks WHERE entity = '$slug' AND name = 'shell'"
	check_out "$slug: bash's version and path, and what /bin/sh is" \
		'^ok bash [0-9]+\.[0-9.]+.* at /[a-z/]*bash runs every command .*; /bin/sh is /[a-z/]*dash$' shell_check "$slug"
done
check "lxc:bbox: the probe records that it has no bash" wait_for 60 \
	"SELECT status = 'failing' FROM airlock.checks WHERE entity = 'lxc:bbox' AND name = 'shell'"
check_out "  what is missing, what it has instead, and what to do" \
	"^failing no bash: no /bin/bash \(env: can't execute '/bin/bash'.*/bin/sh is /bin/busybox\. Nothing runs here.*Install bash" \
	shell_check lxc:bbox
check_out "an agent sees it as a failing check in get_health_summary" '"checks_failing": [1-9]' \
	as_agent psql -XAtq -c "SELECT airlock.get_health_summary('lxc:bbox')"
check_out "  and reads why in list_checks" '"name": "shell".*no bash' \
	as_agent psql -XAtq -c "SELECT airlock.list_checks('lxc:bbox')"
check_out "  and its shell attribute says none" '"shell": \{"sh": "/bin/busybox", "state": "none"\}' \
	as_agent psql -XAtq -c "SELECT airlock.get_health_summary('lxc:bbox')"
check_out "the host's shell attribute names bash, its path and version" \
	'"shell": \{"sh": "/[a-z/]*dash", "path": "/[a-z/]*bash", "state": "bash", "version": "[0-9]' \
	as_agent psql -XAtq -c "SELECT airlock.get_health_summary('proxmox-host:hubris')"
check_out "an agent cannot set the shell attribute itself" 'shell is scheduler-owned' \
	as_agent psql -XAtq -c "SELECT airlock.update_entity_attributes('lxc:bbox', '{\"shell\": {\"state\": \"bash\"}}')"
check "  and it stays none" test "$(q "SELECT attributes->'shell'->>'state' FROM airlock.entities WHERE slug = 'lxc:bbox'")" = none
check "  it got no jail check (nothing can run there)" \
	test "$(q "SELECT count(*) FROM airlock.checks WHERE entity = 'lxc:bbox' AND name = 'confinement'")" = 0

# What busybox's sh would do with it, asked directly (so the checks below can fail).
ct=$AIRLOCK_RIG_ROOT/guests/ct205/root
ssh -F "$AIRLOCK_RIG_SSH_CONFIG" "$AIRLOCK_RIG_NODE" "pct exec 205 -- /bin/sh -c 'echo ran > /tmp/airlock-ash-direct'"
check "busybox's own sh runs a command asked directly" test -e "$ct/tmp/airlock-ash-direct"
before=$(grep -cF "$(printf '\tct:205\t')" "$AIRLOCK_RIG_LOG" || true)

# An observation: refused at its live check, before it is marked running.
id=$(as_agent $A run --target lxc:bbox -- 'cat /etc/os-release > /tmp/airlock-e2e-obs; echo bbox-marker')
check "an observation on lxc:bbox is refused" wait_for 60 \
	"SELECT state = 'refused' FROM airlock.executions WHERE id = $id"
check_out "  saying what is missing and what to do" \
	'run on lxc:bbox refused: container 205 on node [a-z]+ has no bash: no /bin/bash.*Install bash there' \
	q "SELECT error FROM airlock.executions WHERE id = $id"
check_out "  the agent reads it in get_execution" '"state": "refused".*has no bash' \
	as_agent psql -XAtq -c "SELECT airlock.get_execution($id)"
check_eq "  it never started" "" "$(q "SELECT started_at FROM airlock.executions WHERE id = $id")"

# A change a human approved: refused too, before any checkpoint.
id=$(as_agent $A run --target lxc:bbox -- 'touch /etc/airlock-e2e-change')
check "a change on lxc:bbox waits for a human" wait_for 60 \
	"SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
check_out "alice approves it" "execution $id: approved" as_alice $A approve "$id" --reason "checked"
check "the approved change is refused: no shell the classifier models is there" wait_for 60 \
	"SELECT state = 'refused' AND error LIKE '%has no bash%' FROM airlock.executions WHERE id = $id"

check_eq "nothing reached the container" "$before" "$(grep -cF "$(printf '\tct:205\t')" "$AIRLOCK_RIG_LOG" || true)"
check "and nothing is left in it" test ! -e "$ct/tmp/airlock-e2e-obs" -a ! -e "$ct/etc/airlock-e2e-change"

# airlock doctor says the same, with the fix.
$A doctor --config "$cfg" --timeout-ms 5000 --json >"$WORK/doc.json" 2>"$WORK/doc.err"
doc() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" | ".join(str(c[sys.argv[3]]) for c in d["checks"] if c["subject"] == sys.argv[2]) or "absent")' \
		"$WORK/doc.json" "$1" "$2"
}
check_eq "doctor: lxc:bbox's shell fails" fail "$(doc "lxc:bbox shell" status)"
check_out "  with the fix" 'install bash in it' doc "lxc:bbox shell" fix
check_eq "doctor: the host's shell is ok" ok "$(doc "proxmox-host:hubris shell" status)"
finish
