#!/bin/bash
# airlock hook (the agent host's PreToolUse gate) against a real throwaway
# PostgreSQL: recorded events for every row of the decision table in every
# permission_mode; generated evasions of the SSH rule (and allowlisted calls
# that must be left alone); fail-closed behaviour (database down or silent,
# garbage on stdin, budget exhausted, killed by signals, binary missing);
# --install/--check; the SQL side (least knowledge for agents, the
# destination oracle, the append-only hook history, remembering a tool);
# detection of side doors on the rig (tests/hook/detect.sh), the side door
# proven closed by hook --check and doctor (sidedoor.sh) and guard-first
# for mutating tools with a real airlockd and ZVM simulator (guard.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_PGTMP:-}" ]; then
	exec scripts/pgtmp --quiet -- "$0" "$@"
fi
. tests/lib.sh

for tool in python3 psql ssh; do
	command -v "$tool" >/dev/null || { echo "75-hook: $tool is missing (scripts/install-deps)"; exit 1; }
done
[ -x build/bin/airlock ] || { echo "75-hook: build first (make)"; exit 1; }

tmp=$(mktemp -d /tmp/airlock-hook-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if . tests/hook/setup.sh; then pass "setup: migrate, seed, logins, destinations"; else failt "setup"; finish; exit 1; fi

bash_event() { python3 -c 'import json,sys; print(json.dumps({"session_id":"s75","hook_event_name":"PreToolUse","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":sys.argv[1]}}))' "$1"; }

# ---- the decision table, every permission_mode
check "transcript: every decision row, identical in all six permission modes" \
	tests/hook/drive.py tests/hook/decisions.txt -- "${HOOK[@]}"

# ---- generated evasions of the SSH rule, and the same programs to an allowlisted host
check "evasions: 600 generated attempts on the node are denied (seed 7)" \
	tests/hook/evasions.py --count 600 --seed 7 --ssh-config "$HOOK_SSH_CONFIG" -- "${HOOK[@]}"
check "evasions: 400 more (seed 11)" \
	tests/hook/evasions.py --count 400 --seed 11 --ssh-config "$HOOK_SSH_CONFIG" -- "${HOOK[@]}"
check "allowlisted: 150 calls to an allowlisted address get no decision" \
	tests/hook/evasions.py --count 150 --seed 3 --negative --ssh-config "$HOOK_SSH_CONFIG" -- "${HOOK[@]}"

# ---- code the hook cannot read: interpreters, generated text, git transports,
# containers, fleet runners, tunnels and mounts (deny / ask / none each)
check "unreadable: every category's generated commands get their decision (seed 5)" \
	tests/hook/unreadable.py --count 40 --seed 5 -- "${HOOK[@]}"
check "unreadable: more of them (seed 13)" \
	tests/hook/unreadable.py --count 40 --seed 13 -- "${HOOK[@]}"

# ---- everyday commands get no decision (benign.txt: one command per line;
# a here-doc's lines belong to the command above them)
benign() {
	python3 - "$@" <<'PY'
import json, subprocess, sys
cmd = sys.argv[1:]
lines = [l for l in open("tests/hook/benign.txt").read().split("\n") if l and not l.startswith("#")]
cmds, i = [], 0
while i < len(lines):
    c = lines[i]
    if "<<'EOF2'" in c:
        while not lines[i].startswith("EOF2"):
            i += 1
            c += "\n" + lines[i]
    cmds.append(c)
    i += 1
bad = 0
for c in cmds:
    ev = {"hook_event_name": "PreToolUse", "permission_mode": "default", "tool_name": "Bash",
          "tool_input": {"command": c}}
    p = subprocess.run(cmd, input=json.dumps(ev).encode(), capture_output=True)
    if p.returncode != 0 or p.stdout.strip():
        bad += 1
        print(f"decided on {c!r}: exit {p.returncode} {p.stdout.decode().strip()}")
print(f"{len(cmds) - bad} of {len(cmds)} everyday commands left alone")
sys.exit(1 if bad else 0)
PY
}
check "everyday commands: no decision (tests/hook/benign.txt)" benign "${HOOK[@]}"

# ---- the same under AddressSanitizer and UndefinedBehaviorSanitizer (leaks too);
# a report exits 99 (not a signal, which the hook's failsafe would turn into
# a plausible deny), so any report changes the answer
make -s build/libairlock-asan.a >/dev/null # up to date with the sources
PKGS="libpq libcurl libcjson openssl libssh2 yaml-0.1"
if cc -std=c11 -D_GNU_SOURCE -g -O1 -I. $(pkg-config --cflags $PKGS) \
	-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
	-o "$tmp/airlock-asan" cli/main.c build/libairlock-asan.a $(pkg-config --libs $PKGS) \
	-lpthread -lm 2>"$tmp/asan-build.log"; then
	pass "asan: build airlock with ASan+UBSan"
else
	failt "asan: build airlock with ASan+UBSan" "$(cat "$tmp/asan-build.log")"
fi
HA=("$tmp/airlock-asan" hook --db "user=hermes")
check "asan: every decision row (a sanitizer report would change the answer)" env \
	ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99 \
	tests/hook/drive.py tests/hook/decisions.txt -- "${HA[@]}"
check "asan: generated unreadable code, every category" env \
	ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99 \
	tests/hook/unreadable.py --count 25 --seed 17 -- "${HA[@]}"
check "asan: 300 generated evasions" env \
	ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99 \
	tests/hook/evasions.py --count 300 --seed 9 --ssh-config "$HOOK_SSH_CONFIG" -- "${HA[@]}"

# ---- the history: every deny and ask is a row, agent = the login
psql -qc "SELECT count(*) FROM airlock.hook_events" >/dev/null
before=$(psql -tAc "SELECT count(*) FROM airlock.hook_events")
bash_event "ssh -p 2222 root@127.0.0.1 apt-get install -y nfs-kernel-server" | "${HOOK[@]}" >/dev/null 2>&1
check_eq "history: the denial is one new row" $((before + 1)) "$(psql -tAc "SELECT count(*) FROM airlock.hook_events")"
check_out "history: agent, tool, decision, reason, the command and the mode" \
	'^hermes\|Bash\|deny\|t\|ssh -p 2222 root@127.0.0.1 apt-get install -y nfs-kernel-server\|bypassPermissions$' \
	psql -tAc "SELECT agent, tool, decision, reason LIKE '%proxmox-host:hubris%', detail->>'command', detail->>'permission_mode'
		FROM airlock.hook_events ORDER BY id DESC LIMIT 1"
python3 -c 'import json; print(json.dumps({"session_id":"s75","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ssh hubris " + "x" * 200000}}))' | "${HOOK[@]}" >/dev/null 2>&1
check_eq "history: a 200 kB command is recorded too, its first 8 KiB" '8192|200011' \
	"$(psql -tAc "SELECT length(detail->>'command') || '|' || (detail->>'command_bytes') FROM airlock.hook_events ORDER BY id DESC LIMIT 1")"
before=$((before + 1))
bash_event "ls" | "${HOOK[@]}" >/dev/null 2>&1
check_eq "history: no decision is not recorded" $((before + 1)) "$(psql -tAc "SELECT count(*) FROM airlock.hook_events")"
check_out "log: one key=value line per decision" 'evt=hook.decision session=s75 tool=Bash decision=deny why=managed_destination ms=[0-9]+ recorded=1' \
	tail -2 "$AIRLOCK_HOOK_LOG"

# ---- fail closed
closed_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
down=($A hook --db "host=127.0.0.1 port=$closed_port user=hermes connect_timeout=3")
fc() { # fc NAME WHY-REGEX EVENT-JSON CMD...: exit 2, a deny JSON, the reason on stderr
	local name=$1 re=$2 ev=$3; shift 3
	local out err rc
	out=$(printf '%s' "$ev" | "$@" 2>"$tmp/fc.err"); rc=$?
	err=$(cat "$tmp/fc.err")
	if [ "$rc" = 2 ] && grep -q '"permissionDecision":"deny"' <<<"$out" && grep -qE -- "$re" <<<"$err"; then
		pass "$name"
	else
		failt "$name" "exit $rc; stdout: $out; stderr: $err"
	fi
}
fc "database down: a Bash call that needs it is denied" "cannot check the destinations.*$closed_port" \
	"$(bash_event 'ssh hubris')" "${down[@]}"
check_out "database down: the fault happened (connection refused, logged as such)" \
	"why=db_unreachable .*recorded=0" tail -1 "$AIRLOCK_HOOK_LOG"
fc "database down: an MCP call is denied" "cannot ask airlock's catalog" \
	'{"hook_event_name":"PreToolUse","tool_name":"mcp__proxmox__stop_vm","tool_input":{"vmid":101}}' "${down[@]}"
check_rc "database down: a call that needs no database still gets its answer (local qm denied)" 2 \
	bash -c "$(declare -p down); printf '%s' '$(bash_event "qm list")' | \"\${down[@]}\""
# a server that accepts and never answers: the budget ends it
python3 - "$tmp/silent.port" "$tmp/silent.seen" <<'PY' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
c, _ = s.accept(); open(sys.argv[2], "w").write("connected")
time.sleep(60)
PY
silent_pid=$!
for _ in $(seq 100); do [ -s "$tmp/silent.port" ] && break; sleep 0.1; done
fc "budget: a database that never answers ends in deny when the budget runs out" "could not finish its check" \
	"$(bash_event 'ssh hubris')" $A hook --budget-ms 1500 --db "host=127.0.0.1 port=$(cat "$tmp/silent.port") user=hermes connect_timeout=30"
check "budget: the fault happened (the silent server was connected to)" test -s "$tmp/silent.seen"
kill "$silent_pid" 2>/dev/null; wait "$silent_pid" 2>/dev/null
for g in '' 'not json' '[1,2]' '{"tool_name":"Bash"}' \
	'{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' \
	'{"hook_event_name":"PreToolUse","tool_name":7,"tool_input":{}}' \
	'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ssh hubris"}' \
	'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["ssh","hubris"]}}'; do
	fc "garbage on stdin is denied: ${g:0:60}" "denied \\(fail closed\\)" "$g" "${HOOK[@]}"
done
check_rc "garbage: 5 MiB of input is denied" 2 bash -c "head -c 5242880 /dev/zero | tr '\\0' x | ${HOOK[*]@Q}"
check_rc "usage: an unknown option is a denial, not a pass" 2 $A hook --frobnicate
check_rc "usage: a budget above the maximum is refused" 2 $A hook --budget-ms 999999999
# killed by a signal while it waits: its own handler answers deny
signal_test() { # signal_test SIG: the hook blocks reading stdin, then gets SIG
	local sig=$1 fifo=$tmp/sig.fifo pid rc
	rm -f "$fifo"; mkfifo "$fifo"
	$A hook --log - <"$fifo" >"$tmp/sig.out" 2>"$tmp/sig.err" &
	pid=$!
	exec 3>"$fifo"
	sleep 0.3
	kill -"$sig" "$pid"
	wait "$pid"; rc=$?
	exec 3>&-
	[ "$rc" = 2 ] || { echo "exit $rc after SIG$sig"; return 1; }
	grep -q '"permissionDecision":"deny"' "$tmp/sig.out" || { echo "no deny: $(cat "$tmp/sig.out")"; return 1; }
}
for sig in TERM INT HUP SEGV ABRT; do
	check "killed by SIG$sig: deny, exit 2" signal_test "$sig"
done

# ---- --install / --check, and the wrapper that turns a kill or a missing binary into a denial
mkdir -p "$tmp/bin" && cp $A "$tmp/bin/airlock"
settings=$tmp/claude/settings.json
mkdir -p "$tmp/claude"
cat >"$settings" <<'JSON'
{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "/usr/local/bin/lint-edit"}]}]}}
JSON
check "install: writes the block into existing settings" "$tmp/bin/airlock" hook --install --settings "$settings" --db "user=hermes"
check "install: twice is still one airlock entry" "$tmp/bin/airlock" hook --install --settings "$settings" --db "user=hermes"
check_eq "install: the other settings and hooks are kept, one airlock entry, timeout 360" "opus 2 1 360 Bash|WebFetch|mcp__.*" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["hooks"]["PreToolUse"]; o=[e for e in p if "airlock-hook-v1" in e["hooks"][0]["command"]]; print(d["model"], len(p), len(o), o[0]["hooks"][0]["timeout"], o[0]["matcher"])' "$settings")"
check_out "check: the block is in force" 'ok   the installed command denies a local `qm list` with exit 2' \
	$A hook --check --settings "$settings" --claude-version none
check_eq "install: no Claude Code found: no onFailure written (an older client's hooks keep working)" "None" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([e for e in d["hooks"]["PreToolUse"] if "airlock-hook-v1" in e["hooks"][0]["command"]][0]["hooks"][0].get("onFailure"))' "$settings")"
# a Claude Code on PATH that reads onFailure (a stand-in answering --version as claude does)
mkdir -p "$tmp/cc"
printf '#!/bin/sh\necho "2.1.296 (Claude Code)"\n' >"$tmp/cc/claude" && chmod +x "$tmp/cc/claude"
check_out "install: Claude Code 2.1.296 on PATH: onFailure block is written" 'Claude Code 2.1.296: onFailure "block" written' \
	env PATH="$tmp/cc:$PATH" "$tmp/bin/airlock" hook --install --settings "$settings" --db "user=hermes"
check_eq "install: ... into the hook's entry" "block" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([e for e in d["hooks"]["PreToolUse"] if "airlock-hook-v1" in e["hooks"][0]["command"]][0]["hooks"][0].get("onFailure"))' "$settings")"
check_out "check: reports onFailure as in force for that Claude Code" 'ok   onFailure "block"' \
	env PATH="$tmp/cc:$PATH" $A hook --check --settings "$settings"
check "install: an older Claude Code (stated) gets no onFailure" "$tmp/bin/airlock" hook --install --settings "$tmp/claude/old.json" --claude-version 2.1.100
check_out "check: a Claude Code that reads onFailure, and a block without it, is reported" \
	'FAIL onFailure is not "block" although Claude Code 2.1.300 reads it' $A hook --check --settings "$tmp/claude/old.json" --claude-version 2.1.300
check_rc "check: ... and is not in force" 1 $A hook --check --settings "$tmp/claude/old.json" --claude-version 2.1.300
check_out "check: an older Claude Code is told the wrapper is what fails closed" 'warn Claude Code 2.1.100 predates onFailure' \
	$A hook --check --settings "$tmp/claude/old.json" --claude-version 2.1.100
check_out "install: managed settings get allowManagedHooksOnly from a Claude Code that reads it" \
	'onFailure "block" written, and allowManagedHooksOnly' \
	"$tmp/bin/airlock" hook --install --scope managed --settings "$tmp/claude/managed.json" --claude-version 2.1.300
check_eq "install: ... at the settings' top level" True \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("allowManagedHooksOnly"))' "$tmp/claude/managed.json")"
check_out "check: reports allowManagedHooksOnly" 'ok   allowManagedHooksOnly' \
	$A hook --check --scope managed --settings "$tmp/claude/managed.json" --claude-version 2.1.300
check "install: user settings never get allowManagedHooksOnly" test "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("allowManagedHooksOnly"))' "$settings")" = None
# airlock's MCP server name: its tools pass only when the server is airlock-mcp
printf '{"mcpServers": {"airlock": {"command": "/usr/local/bin/other-mcp"}}}\n' >"$HOME/.claude.json"
check_out "check: a server named airlock that is not airlock-mcp is reported" 'FAIL the MCP server airlock in .*runs /usr/local/bin/other-mcp, not airlock-mcp' \
	$A hook --check --settings "$settings" --claude-version none
printf '{"projects": {"/w": {"mcpServers": {"airlock": {"command": "/usr/bin/airlock-mcp"}}}}}\n' >"$HOME/.claude.json"
check_out "check: airlock-mcp under airlock's name (a project's entry) is in force" 'ok   the MCP server airlock in .* runs airlock-mcp' \
	$A hook --check --settings "$settings" --claude-version none
rm -f "$HOME/.claude.json"
check_rc "install: --self with a double underscore is refused" 2 $A hook --install --settings "$tmp/claude/x.json" --self 'air__lock'
check "install: --self NAME is passed to the hook" "$tmp/bin/airlock" hook --install --settings "$tmp/claude/self.json" --self ops-airlock --claude-version none
self_cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["PreToolUse"][0]["hooks"][0]["command"])' "$tmp/claude/self.json")
run_installed() { printf '%s' "$1" | AIRLOCK_HOOK_LOG=- sh -c "$2"; } # EVENT COMMAND-LINE
check_out "... and the installed hook allows exactly airlock's tools under that name" '"permissionDecision":"allow"' \
	run_installed '{"hook_event_name":"PreToolUse","tool_name":"mcp__ops-airlock__get_execution","tool_input":{"id":1}}' "$self_cmd"
check_out "... and denies another name under it" '"permissionDecision":"deny".*not one of airlock.s tools' \
	run_installed '{"hook_event_name":"PreToolUse","tool_name":"mcp__ops-airlock__shell","tool_input":{}}' "$self_cmd"
installed_cmd=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([e for e in d["hooks"]["PreToolUse"] if "airlock-hook-v1" in e["hooks"][0]["command"]][0]["hooks"][0]["command"])' "$settings")
kill_wrapped() { # the installed command line; SIGKILL to the airlock process inside it
	local fifo=$tmp/kill.fifo sh_pid inner rc
	rm -f "$fifo"; mkfifo "$fifo"
	AIRLOCK_HOOK_LOG=- sh -c "$installed_cmd" <"$fifo" >"$tmp/kill.out" 2>"$tmp/kill.err" &
	sh_pid=$!
	exec 4>"$fifo"
	for _ in $(seq 50); do inner=$(pgrep -P "$sh_pid" -x airlock); [ -n "$inner" ] && break; sleep 0.1; done
	[ -n "$inner" ] || { echo "no airlock process under the wrapper"; exec 4>&-; return 1; }
	kill -KILL "$inner"
	wait "$sh_pid"; rc=$?
	exec 4>&-
	[ "$rc" = 2 ] || { echo "wrapper exit $rc"; return 1; }
	grep -q 'ended with status 137: denied' "$tmp/kill.err" || { echo "stderr: $(cat "$tmp/kill.err")"; return 1; }
}
check "killed by SIGKILL under the installed wrapper: exit 2 with the reason" kill_wrapped
check_out "the wrapper passes a real denial through (exit 2, the hook's reason)" 'reaches proxmox-host:hubris' \
	bash -c "printf '%s' '$(bash_event "ssh hubris")' | sh -c '$installed_cmd'; echo rc=\$?"
check_out "the wrapper passes no decision through (exit 0)" '^rc=0$' \
	bash -c "printf '%s' '$(bash_event "ls")' | AIRLOCK_HOOK_LOG=- sh -c '$installed_cmd'; echo rc=\$?"
rm -f "$tmp/bin/airlock"
check_out "binary missing: the installed command denies with the reason" 'ended with status 127: denied \(fail closed\)' \
	bash -c "printf '%s' '$(bash_event "ls")' | sh -c '$installed_cmd' 2>&1"
check_rc "binary missing: ... and exit 2" 2 bash -c "printf '%s' '$(bash_event "ls")' | sh -c '$installed_cmd'"
check_rc "check: a missing binary is not in force" 1 $A hook --check --settings "$settings" --claude-version none
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["disableAllHooks"]=True; json.dump(d, open(sys.argv[1],"w"))' "$settings"
check_out "check: disableAllHooks is reported" 'FAIL .*disableAllHooks' $A hook --check --settings "$settings" --claude-version none
echo '{"hooks": {}}' >"$tmp/claude/empty.json"
check_rc "check: settings without the block are not in force" 1 $A hook --check --settings "$tmp/claude/empty.json" --claude-version none
echo '{not json' >"$tmp/claude/broken.json"
check_out "install: refuses to overwrite settings that are not JSON" 'not a JSON object' \
	$A hook --install --settings "$tmp/claude/broken.json"
check_eq "install: the broken file is left as it was" '{not json' "$(cat "$tmp/claude/broken.json")"

# ---- SQL: least knowledge, the oracle, the append-only history, remembering a tool
H=(psql -X -qtA -U hermes)
for col in address port ssh_user host_key_fingerprint zerto_vm_identifier; do
	check_out "least knowledge: an agent cannot read entities.$col" 'permission denied' \
		"${H[@]}" -c "SELECT $col FROM airlock.entities"
done
check_out "least knowledge: SELECT * as an agent is refused" 'permission denied' "${H[@]}" -c "SELECT * FROM airlock.entities"
check_out "least knowledge: slugs, types, nodes, attributes stay readable" '^proxmox-host:hubris\|proxmox-host\|\|' \
	"${H[@]}" -c "SELECT slug, type, node, attributes->>'x' FROM airlock.entities WHERE slug = 'proxmox-host:hubris'"
check_out "least knowledge: the destinations table is not readable" 'permission denied' \
	"${H[@]}" -c "SELECT * FROM airlock.destinations"
check_eq "oracle: answers only for the candidates asked, with the slug" '127.0.0.1|managed|proxmox-host:hubris' \
	"$("${H[@]}" -c "SELECT candidate, kind, slug FROM airlock.hook_match('{127.0.0.1,192.0.2.9,HUBRIS.example}')")"
check_eq "oracle: names, operator aliases, allowlist patterns" 'a.git.example|allowed|
hubris|managed|proxmox-host:hubris
nodealias|managed|proxmox-host:hubris' \
	"$("${H[@]}" -c "SELECT candidate, kind, coalesce(slug,'') FROM airlock.hook_match('{hubris,nodealias,a.git.example,git.example}') ORDER BY 1")"
psql -qtA -U alice -c "SELECT airlock.set_destination('[FE80:0:0::5]', 'managed', 'proxmox-host:hubris')" >/dev/null
check_eq "oracle: an operator's IPv6 spelling is matched in canonical form" 'fe80::5|managed|proxmox-host:hubris' \
	"$("${H[@]}" -c "SELECT candidate, kind, slug FROM airlock.hook_match('{fe80::5}')")"
check_out "oracle: the hook denies that address however it is spelled" '"permissionDecision":"deny"' \
	bash -c "printf '%s' '$(bash_event "ssh root@[fe80:0000::0005]")' | ${HOOK[*]@Q}"
check_out "oracle: more than 256 candidates is refused" 'between 0 and 256' \
	"${H[@]}" -c "SELECT * FROM airlock.hook_match(array_fill('x'::text, ARRAY[257]))"
check_out "an agent cannot change the destinations" 'permission denied' \
	"${H[@]}" -c "SELECT airlock.set_destination('hubris', 'allowed')"
check_out "operators: an allowed destination names no entity" 'names no entity' \
	psql -qtA -U alice -c "SELECT airlock.set_destination('x.example', 'allowed', 'proxmox-host:hubris')"
check_out "history: an agent cannot rewrite its hook events" 'permission denied' \
	"${H[@]}" -c "UPDATE airlock.hook_events SET decision = 'allow'"
check_out "history: not even the owner can (append-only)" 'append-only|not allowed|cannot' \
	psql -qtA -c "DELETE FROM airlock.hook_events"
check_out "history: a decision outside deny/ask/allow is refused" 'decision must be' \
	"${H[@]}" -c "SELECT airlock.hook_event('Bash', 'maybe', 'x')"
req=$("${H[@]}" -c "SELECT airlock.remember_tool('winrm', 'restart_iis', 'mutating', 'host', 'the human confirmed it restarts IIS')")
check_eq "remember: the agent's request changes nothing by itself" unknown \
	"$("${H[@]}" -c "SELECT airlock.check_tool('winrm', 'restart_iis')->>'verdict'")"
check_out "remember: the agent cannot approve it" 'permission denied' "${H[@]}" -c "SELECT airlock.decide_tool($req, true)"
own=$(psql -qtA -U alice -c "SELECT airlock.remember_tool('x', 'y', 'read_only')")
check_out "remember: nobody approves their own request" 'made by you' psql -qtA -U alice -c "SELECT airlock.decide_tool($own, true)"
check_eq "remember: another operator's approval writes the catalog" approved \
	"$(psql -qtA -U bob -c "SELECT airlock.decide_tool($req, true)")"
check_eq "remember: now known as mutating" mutating \
	"$("${H[@]}" -c "SELECT airlock.check_tool('winrm', 'restart_iis')->>'verdict'")"
check "remember: a later seed keeps what an operator approved" $A seed "$HOOK_SEEDS"
check_eq "remember: still known after the seed" mutating \
	"$("${H[@]}" -c "SELECT airlock.check_tool('winrm', 'restart_iis')->>'verdict'")"
check_eq "catalog: exec-style tools route through airlock run" 'exec|exec' \
	"$("${H[@]}" -c "SELECT airlock.check_tool('ssh', 'exec')->>'verdict', airlock.check_tool('proxmox', 'execute_vm_command')->>'verdict'" | tr -d ' ')"
check_out "help: airlock hook --help" 'PreToolUse' $A hook --help

# ---- detection: the incident replayed on the rig through plain ssh
check "detection: side-door logins and changes raised by the probes (tests/hook/detect.sh)" \
	env -u AIRLOCK_PGTMP -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u HOME \
	scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/hook/detect.sh

# ---- the side door proven open, then closed: hook --check and doctor on the rig
check "side door: hook --check and doctor see the agent host's key, then none (tests/hook/sidedoor.sh)" \
	env -u AIRLOCK_PGTMP -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u HOME \
	scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/hook/sidedoor.sh

# ---- mutating tools: a guard request carried out by a real airlockd with the ZVM simulator
check "guard first: airlockd, the rig and the ZVM simulator (tests/hook/guard.sh)" \
	env -u AIRLOCK_PGTMP -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u HOME \
	scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/zvmsim/zvmsimctl run --scale 50 -- tests/hook/guard.sh

finish
