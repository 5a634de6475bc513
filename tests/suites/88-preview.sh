#!/bin/bash
# Previews: a held request gets the read-only commands its policy rule names,
# run by a real airlockd on the rig (transport, read-only jail) and stored in
# airlock.execution_previews for the approver: apt-get -s for an install,
# qm config/status for a destroy, systemctl status and reverse dependencies
# for a restart.  Hostile operands stay one word; a preview that is not
# read_only is recorded and not run; a command that is not one simple
# command gets a recorded "no preview"; approval goes on whatever the
# preview did; agents do not read previews.
set -uo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_RIG_SSH_PORT:-}" ]; then
	exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
fi
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || { echo "set-up failed"; exit 1; }
write_config p1 >/dev/null
start_daemon p1 || { echo "airlockd did not start"; cat "$WORK/p1.log"; exit 1; }
pv() { q "SELECT $2 FROM airlock.execution_previews WHERE execution_id = $1 AND ord = ${3:-1}"; }
held() { wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $1"; }
previews_done() { wait_for 60 "SELECT count(*) >= $2 FROM airlock.execution_previews WHERE execution_id = $1"; }
node_lines() { grep -F "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" | grep -F -- "$1"; }

# ---- apt-get install on the host: apt-get -s install, in the jail
id=$(as_agent $A run --target proxmox-host:hubris -- apt-get install -y nfs-kernel-server)
check "the install is held" held "$id"
check "its preview is recorded" previews_done "$id" 1
check_eq "the preview is apt-get -s with the same words" "'apt-get' '-s' 'install' '-y' 'nfs-kernel-server'" "$(pv "$id" command)"
check_eq "it ran and exited 0" 0 "$(pv "$id" exit_code)"
check_out "its output says what would be installed" 'Inst nfs-kernel-server' pv "$id" stdout
check_eq "no error, not truncated" "|false" "$(pv "$id" "coalesce(error, '') || '|' || truncated")"
check_eq "the simulation reached the node" 1 "$(node_lines nfs-kernel-server | grep -c -- -s)"
check_eq "nothing else did" 0 "$(node_lines nfs-kernel-server | grep -vc -- -s)"
check_out "the preview ran in the read-only jail" "exec=$id evt=preview.ran ord=1 state=succeeded exit=0 ms=[0-9]+ jail=user" cat "$WORK/p1.log"
check_out "airlock previews shows it to an operator" "^preview 1: 'apt-get' '-s' 'install' '-y' 'nfs-kernel-server'" as_alice $A previews "$id"
check_out "with its output" '^Inst nfs-kernel-server' as_alice $A previews "$id"
check_out "--json keeps the exact rows" '"command": "'"'"'apt-get'"'"' '"'"'-s'"'"'' as_alice $A previews "$id" --json
check_rc "an agent may not read them (exit 3)" 3 as_agent $A previews "$id"
check_out "the history records the preview, with its output's digest" '"step": "preview".*"stdout_sha256": "[0-9a-f]{64}"' \
	q "SELECT detail::text FROM airlock.execution_events WHERE execution_id = $id AND detail->>'step' = 'preview'"
check_eq "and the digest is the output's" "$(pv "$id" "encode(sha256(convert_to(stdout, 'UTF8')), 'hex')")" \
	"$(q "SELECT detail->>'stdout_sha256' FROM airlock.execution_events WHERE execution_id = $id AND detail->>'step' = 'preview'")"
check_out "approval goes on: alice approves" "approved" as_alice $A approve "$id" --reason ok
check "and the install itself runs" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"

# ---- qm destroy 102: the guest it destroys, shown
id=$(as_agent $A run --target proxmox-host:hubris -- qm destroy 102 --purge)
check "qm destroy is held" held "$id"
check "both previews are recorded" previews_done "$id" 2
check_eq "first: qm config of the guest" "'qm' 'config' '102'" "$(pv "$id" command 1)"
check_out "it shows the guest's config" 'name: ' pv "$id" stdout 1
check_eq "second: qm status" "'qm' 'status' '102'" "$(pv "$id" command 2)"
check_out "it shows the guest is running" 'status: running' pv "$id" stdout 2
as_alice $A reject "$id" --reason "not today" >/dev/null

# ---- systemctl restart: status and what depends on the unit
id=$(as_agent $A run --target proxmox-host:hubris -- systemctl restart pveproxy)
check "the restart is held" held "$id"
check "both previews are recorded" previews_done "$id" 2
check_eq "status of the unit" "'systemctl' 'status' '--no-pager' 'pveproxy'" "$(pv "$id" command 1)"
check_eq "its reverse dependencies" "'systemctl' 'list-dependencies' '--reverse' '--no-pager' 'pveproxy'" "$(pv "$id" command 2)"
check_eq "each has an outcome: an exit code or an error" 2 \
	"$(q "SELECT count(*) FROM airlock.execution_previews WHERE execution_id = $id AND (exit_code IS NOT NULL OR error IS NOT NULL)")"

# ---- hostile operands stay one word
id=$(as_agent $A run --target proxmox-host:hubris -- "apt-get install -y 'pkg;echo INJECTED-1' 'x\$(echo INJECTED-2)' '\`echo INJECTED-3\`' \"q'; echo INJECTED-4; '\"")
check "the hostile install is held" held "$id"
check "its preview is recorded" previews_done "$id" 1
out=$(pv "$id" stdout)
check_out "each operand reached apt-get as one literal word" 'Inst pkg;echo INJECTED-1 .*Inst x\$\(echo INJECTED-2\) .*Inst `echo INJECTED-3` .*Inst q'"'"'; echo INJECTED-4; '"'"' ' echo $out
check_eq "no operand ran as a command" 0 "$(grep -cE '^INJECTED-[0-9]' <<<"$out")"

# ---- generated hostile operands: each preview's argv is exactly the template
# with the operands as given (read back with a POSIX shell's quoting rules)
python3 - "$WORK" <<'PY'
import json, random, shlex, sys
random.seed(8801)
pieces = [";", "&&", "|", "$(", ")", "`", "'", '"', "\\", "\n", "*", "?", "[", "]", "{a,b}", "<", ">",
          "$HOME", "${IFS}", "#", "~", " ", "\t", "!", "&", "reboot", "touch /tmp/airlock-pwned", "x", "é"]
cases = []
for i in range(5):
    ops = []
    for _ in range(random.randint(1, 3)):
        w = "u" + "".join(random.choice(pieces) for _ in range(random.randint(1, 6)))
        ops.append(w.encode().decode("unicode_escape").encode("latin-1").decode("utf-8"))
    cases.append(ops)
    with open("%s/op%d.cmd" % (sys.argv[1], i), "w", newline="") as f:
        f.write("systemctl restart " + " ".join(shlex.quote(o) for o in ops))
json.dump(cases, open(sys.argv[1] + "/ops.json", "w"))
PY
op_ids=()
for i in 0 1 2 3 4; do op_ids+=("$(as_agent $A run --target proxmox-host:hubris -- "$(cat "$WORK/op$i.cmd")" 2>/dev/null)"); done
for i in 0 1 2 3 4; do previews_done "${op_ids[$i]}" 2 || true; done
check "generated operands: every preview is the template with the operands, each one word" python3 - "$WORK/ops.json" "${op_ids[@]}" <<'PY'
import json, shlex, subprocess, sys
cases = json.load(open(sys.argv[1]))
for ops, eid in zip(cases, sys.argv[2:]):
    rows = subprocess.run(["psql", "-XAtq", "-c",
        "SELECT coalesce(json_agg(command ORDER BY ord), '[]') FROM airlock.execution_previews WHERE execution_id = %d" % int(eid)],
        capture_output=True, text=True, check=True).stdout
    got = [shlex.split(c) for c in json.loads(rows)]
    want = [["systemctl", "status", "--no-pager"] + ops] + \
           [["systemctl", "list-dependencies", "--reverse", "--no-pager", o] for o in ops]
    assert got == want, (eid, got, want)
PY

# ---- not one simple command: a recorded "no preview"
id=$(as_agent $A run --target proxmox-host:hubris -- 'apt-get install -y a && apt-get install -y b')
check "the chained install is held" held "$id"
check "a preview row says why there is none" previews_done "$id" 1
check_out "no preview: only one simple command" 'no preview: only one simple command' pv "$id" error
check_eq "and nothing ran for it" "" "$(pv "$id" "coalesce(exit_code::text, '')")"

# ---- a preview that is not read-only is recorded, not run
cp -r "$WORK/seeds" "$WORK/seeds2"
python3 - "$WORK/seeds2/policy.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = '        run: ["{program}", status, "{operand1}"]\n'
assert s.count(old) == 1
s = s.replace(old, '        run: ["{program}", start, "{operand1}"]\n')
open(p, "w").write(s)
PY
$A seed "$WORK/seeds2" >/dev/null 2>&1
check "the daemon loads the edited policy" wait_log 20 "evt=policy.loaded" p1
id=$(as_agent $A run --target proxmox-host:hubris -- qm stop 101)
check "qm stop is held" held "$id"
check "both previews are recorded" previews_done "$id" 2
check_eq "the read-only one ran" 0 "$(pv "$id" exit_code 1)"
check_eq "the other is the mutating command" "'qm' 'start' '101'" "$(pv "$id" command 2)"
check_out "it is refused, naming its class" 'not run: the preview itself classifies as config_mutation.*qm start \(rule guest-start\)' pv "$id" error 2
check_eq "and it never reached the node" 0 "$(grep -cE "qm'? '?start'? '?101" "$AIRLOCK_RIG_LOG")"

# ---- who reads previews
check_out "operators read previews" 'apt-get' psql -XAtq -U alice -c "SELECT command FROM airlock.execution_previews LIMIT 1"
check_out "agents do not" 'permission denied' psql -XAtq -U hermes -c "SELECT * FROM airlock.execution_previews"
check_out "agents cannot write them" 'permission denied' psql -XAtq -U hermes -c "SELECT airlock.worker_preview(1, 1, 'x', 0, '', '', false, NULL)"
check "the audit chain still verifies (exit 0)" as_alice $A audit verify
check_eq "the daemon is still up" 0 "$(kill -0 "$DPID" 2>/dev/null; echo $?)"
finish
