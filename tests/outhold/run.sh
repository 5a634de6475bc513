#!/bin/bash
# Output that carries secret material, end to end: a real airlockd in the
# test-only mode that classifies every command read_only (so nothing but the
# hold stands between a secret and the agent), the rig's host, VM and
# container, a throwaway database, local webhook receivers.  Runs inside
# scripts/pgtmp and `tests/rig/rigctl run` (tests/suites/53-outhold.sh).
#
# Every kind of secret tests/outhold/secretgen.py makes (fresh, real formats)
# is planted on the targets, in every spelling on the host (plain, CRLF,
# inside JSON, split over stdout and stderr, cut by the output cap) and plain
# on the VM and the container, and read with an observation.  Each must be
# held, and no byte of it may reach the agent (its functions, the CLI as the
# agent, airlock-mcp, webhooks) or the chain and log; harmless output, and the
# spellings the scanner does not claim to see, must not be held.  Then the
# operators' side: they see and release or discard it; a released secret
# reaches the agent (the leak checks can fail), so does the output of a
# command a human approved (approved rows are not scanned), and the same
# commands once the files hold harmless text are not held.
set -uo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
. tests/jail/lib.sh

# check_has NAME TEXT CMD...: CMD's stdout+stderr holds TEXT (a fixed string:
# secrets hold regular expressions' metacharacters).
check_has() {
	local name=$1 text=$2 out
	shift 2
	out=$("$@" 2>&1)
	if grep -qF -- "$text" <<<"$out"; then pass "$name"; else failt "$name" "wanted '$text', got: ${out:0:400}"; fi
}

setup_db || { echo "set-up failed"; exit 1; }
q "UPDATE airlock.gate_limits SET requests_per_minute = 100000, pending_per_agent = 100000" >/dev/null
RLOG="$WORK/received.jsonl"
python3 tests/notify/receiver.py "$WORK/recv.port" "$RLOG" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/recv.port" ] && break; sleep 0.1; done
P=$(cat "$WORK/recv.port")
CAP=65536
cfg=$(write_config d1 "testing:" "  classify_all_read_only: true" \
	"notifications:" "  poll_ms: 100" "  backoff_ms: 100" \
	"webhooks:" \
	"  - {name: json, url: \"http://127.0.0.1:$P/json\"}" \
	"  - {name: slack, url: \"http://127.0.0.1:$P/slack/T0/B1/x\", format: slack, events: [output_held]}")
check "the config names output_held as a webhook event" $D -n -c "$cfg"
start_daemon d1 || { echo "airlockd did not start"; tail -5 "$WORK/d1.log"; exit 1; }

# ---- the samples, fresh, planted
check "secretgen makes every sample (ssh-keygen, openssl, puttygen, gpg, argon2, crypt)" \
	sh -c "tests/outhold/secretgen.py --variants --cap $CAP >'$WORK/samples.jsonl'"
check "they are planted on the host, the VM and the container" sh -c \
	"tests/outhold/leak.py plan '$WORK/samples.jsonl' '$(root_of host)' '$(root_of vm)' '$(root_of ct)' >'$WORK/manifest.jsonl'"
check_out "unconfined, the rig shows a planted key as it is" 'BEGIN OPENSSH PRIVATE KEY' direct vm 'cat /srv/outhold/*.out'

# ---- read each with an observation, as the agent
: >"$WORK/ids"
while IFS=$'\t' read -r n target; do
	id=$(as_agent $A run --target "$(slug_of "$target")" -- "cat /srv/outhold/$n.out; cat /srv/outhold/$n.err >&2" 2>>"$WORK/submit.err") ||
		{ failt "submit $n on $target" "$(tail -2 "$WORK/submit.err")"; continue; }
	printf '%s\t%s\n' "$n" "$id" >>"$WORK/ids"
done < <(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    m = json.loads(l); print("%s\t%s" % (m["n"], m["target"]))' "$WORK/manifest.jsonl")
last=$(tail -1 "$WORK/ids" | cut -f2)
check "every observation ran ($(wc -l <"$WORK/ids") of them)" wait_for 300 \
	"SELECT count(*) = 0 FROM airlock.executions WHERE id <= $last AND state NOT IN ('succeeded', 'failed', 'timed_out', 'outcome_unknown', 'refused')"
check_eq "all in the jail, none refused" "" \
	"$(q "SELECT string_agg(id || ' ' || state || ' ' || coalesce(confinement, '-'), ', ') FROM airlock.executions WHERE id <= $last AND (state NOT IN ('succeeded', 'failed') OR confinement NOT IN ('user', 'root'))")"

# ---- held, and not a byte of it anywhere an agent reads
while read -r verdict name; do
	case $verdict in
	PASS) pass "$name" ;;
	FAIL) failt "$name" ;;
	\#) echo "#   $name" ;;
	esac
done < <(tests/outhold/leak.py check "$WORK/manifest.jsonl" "$WORK/ids" "$RLOG" "$WORK/d1.log" 2>&1 |
	sed 's/^# /# /')

# ---- a container command that dresses its stderr as pct's own refusal: run
# unconfined (approved; in the jail its ready line comes first), the
# transport takes the command's first stderr line for pct's words and records
# a refusal quoting it; the quote must not carry the secret, nor the log.
forged="aws_secret_access_key=Wk7mQ2xR9vT4bN8cL1pZ6yH3jF5dS0aG2eU7iO4"
printf "Configuration file '%s' does not exist\n" "$forged" >"$(root_of ct)/srv/outhold/forged.txt"
chmod 644 "$(root_of ct)/srv/outhold/forged.txt"
fid=$(as_agent $A run --declared-risk config_mutation --target lxc:nfs-export -- \
	'cat /srv/outhold/forged.txt >&2; exit 255' 2>/dev/null)
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $fid"
as_alice $A approve "$fid" --reason "forged refusal test" >/dev/null 2>&1
check "the forged refusal is recorded as one" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $fid"
check_out "its reason says a secret was cut out" '\[withheld: the rest contained a password or secret setting\]' \
	as_agent psql -XAtq -c "SELECT airlock.get_execution($fid) ->> 'error'"
check_eq "no byte of it reaches the agent" 0 \
	"$(as_agent psql -XAtq -c "SELECT airlock.get_execution($fid)" | grep -cF "$forged")"
check_eq "nor the log" 0 "$(grep -cF "$forged" "$WORK/d1.log")"
check "the log says what was withheld" grep -q "exec=$fid evt=exec.message_withheld kind=password_setting" "$WORK/d1.log"

# ---- the operators' side
key=$(python3 -c 'import json,sys
ids = dict(l.split() for l in open(sys.argv[2]))
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m["id"] == "openssh-ed25519" and m["variant"] == "plain" and m["target"] == "vm":
        print(ids[str(m["n"])], m["secret"])' "$WORK/manifest.jsonl" "$WORK/ids")
kid=${key%% *}
ksecret=${key#* }
check_out "airlock pending lists the held output beside the held requests" \
	"^$kid +[0-9:]+ +vm:web01 +hermes +an OpenSSH private key at line 1 of stdout" as_alice $A pending
check_out "airlock output list names it" "^$kid .*an OpenSSH private key at line 1 of stdout \\(succeeded\\)" as_alice $A output list
check_has "an operator reads the held key" "$ksecret" as_alice $A output show "$kid"
check_out "the agent may not read it there" 'permission denied' as_agent $A output show "$kid"
check_rc "the agent may not release it: permission denied (exit 3)" 3 as_agent $A output release "$kid" --reason mine
check_out "... and says so" 'permission denied for function output_release' as_agent $A output release "$kid" --reason mine
check_rc "a release needs a reason" 2 as_alice $A output release "$kid"
check_out "alice releases it" "execution $kid: output released" as_alice $A output release "$kid" --reason "a test key, checked"
check_has "now the agent reads the key (the leak checks above could fail)" "$ksecret" \
	as_agent psql -XAtq -c "SELECT airlock.get_execution($kid)"
check_has "and airlock-mcp shows it too" "$ksecret" bash -c \
	"printf '%s\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}' \
	'{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"get_execution\",\"arguments\":{\"id\":$kid}}}' |
	PGUSER=hermes build/bin/airlock-mcp --db user=hermes 2>/dev/null"
check_out "the history shows who released it and why" 'output_release.*a test key, checked' as_alice $A history --json "$kid"
check_rc "a decided hold cannot be discarded after" 3 as_alice $A output discard "$kid" --reason late
other=$(q "SELECT min(execution_id) FROM airlock.output_holds WHERE state = 'held'")
check_out "bob discards another" "execution $other: output discarded" as_bob $A output discard "$other" --reason "not needed"
check_out "the agent reads that it was discarded, by whom and why" 'discarded by bob: not needed' \
	as_agent psql -XAtq -c "SELECT airlock.get_execution($other) ->> 'next_step'"
check_eq "its bytes are erased" "t" "$(q "SELECT stdout IS NULL AND stderr IS NULL FROM airlock.output_holds WHERE execution_id = $other")"
check_out "the audit chain is intact, holds and decisions included" 'audit: intact' as_alice $A audit verify

# ---- a command a human approved is not scanned: its output reaches the agent
n1=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m["id"] == "pgpass" and m["variant"] == "plain" and m["target"] == "host": print(m["n"], m["secret"])' "$WORK/manifest.jsonl")
pgsecret=${n1#* }
aid=$(as_agent $A run --declared-risk config_mutation --target proxmox-host:hubris -- "cat /srv/outhold/${n1%% *}.out" 2>/dev/null)
check "declared config_mutation, it waits for a human" wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $aid"
as_alice $A approve "$aid" --reason "reads the pgpass on purpose" >/dev/null
check "approved, it runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $aid"
check_eq "nothing is held" 0 "$(q "SELECT count(*) FROM airlock.output_holds WHERE execution_id = $aid")"
check_has "the agent reads it: a human looked" "$pgsecret" as_agent psql -XAtq -c "SELECT airlock.get_execution($aid) ->> 'stdout'"

# ---- the same commands, the files now harmless: nothing is held
: >"$WORK/ids2"
while IFS=$'\t' read -r n target; do
	printf 'harmless output %s\n' "$n" >"$(root_of "$target")/srv/outhold/$n.out"
	: >"$(root_of "$target")/srv/outhold/$n.err"
	id=$(as_agent $A run --target "$(slug_of "$target")" -- "cat /srv/outhold/$n.out; cat /srv/outhold/$n.err >&2" 2>>"$WORK/submit.err")
	printf '%s\t%s\n' "$n" "$id" >>"$WORK/ids2"
done < <(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m["kind"] and m["claimed"] and m["variant"] == "plain": print("%s\t%s" % (m["n"], m["target"]))' "$WORK/manifest.jsonl")
last2=$(tail -1 "$WORK/ids2" | cut -f2)
first2=$(head -1 "$WORK/ids2" | cut -f2)
check "they ran" wait_for 300 "SELECT count(*) = 0 FROM airlock.executions WHERE id BETWEEN $first2 AND $last2 AND state NOT IN ('succeeded', 'failed')"
check_eq "the same $(wc -l <"$WORK/ids2") commands with harmless output hold nothing" 0 \
	"$(q "SELECT count(*) FROM airlock.output_holds WHERE execution_id BETWEEN $first2 AND $last2")"
check_eq "and the agent reads their output" "$(wc -l <"$WORK/ids2")" \
	"$(as_agent psql -XAtq -c "SELECT count(*) FROM generate_series($first2, $last2) x WHERE airlock.get_execution(x) ->> 'stdout' LIKE 'harmless output %'")"

kill -TERM "$DPID"
wait "$DPID"
check_eq "airlockd stops cleanly" 0 "$?"
finish
