#!/bin/bash
# tests/faults/anchors.sh -- the audit anchor file survives a crash mid-write
# and a full disk:
#   - a piece of a line left at the file's end (a write cut short) is cut
#     back before the next anchor, which is never glued to it;
#   - the anchor file's disk fills up: the anchor that cannot be written is
#     retried, an alarm is raised (log, metric, webhook), mutations are held
#     (audit.hold_mutations, the default) while observations run; once there
#     is room the anchor lands, the held mutation runs once, and the file
#     verifies;
#   - `airlock audit verify --anchors` tells a torn line (a piece of an
#     anchor, alone or glued to the next) from an edited one.
# Runs inside scripts/pgtmp and `tests/rig/rigctl run`, as root (a tmpfs).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

CT=lxc:nfs-export
MARKS="$AIRLOCK_RIG_ROOT/guests/ct201/root/tmp/faults.log"
FS=$WORK/anchorfs
FILE=$FS/anchors.log
KEY=$WORK/anchor.key
mkdir -p "$FS" "$WORK/hooks"
mount -t tmpfs -o size=64k tmpfs "$FS" || { echo "anchors: cannot mount a tmpfs (root needed)"; exit 1; }
cleanup() {
	for p in "${DAEMON_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount "$FS" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

setup_db || exit 1
$A audit keygen --out "$KEY" >/dev/null || exit 1
python3 tests/daemon/webhook_sink.py "$WORK/hook.port" "$WORK/hooks" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/hook.port" ] && break; sleep 0.1; done
MP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
write_config a1 "audit:" "  signing_key: $KEY" "  anchor_file: $FILE" "  every_events: 1" \
	"  every_seconds: 1" "metrics:" "  port: $MP" "webhooks:" \
	"  - url: http://127.0.0.1:$(cat "$WORK/hook.port")/ops" >/dev/null
start_daemon a1 || exit 1
A1=$DPID

observe() { # observe NAME: one observation, waited for
	local id
	id=$(as_agent $A run --target proxmox-host:hubris -- "echo $1" 2>/dev/null)
	wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
}
verify() { as_alice $A audit verify --anchors "$1" --pubkey "$KEY.pub" 2>&1; }
anchors_in() { grep -c '^airlock-anchor v1 ' "$1" 2>/dev/null || true; }
metric() { curl -s "http://127.0.0.1:$MP/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

check "an observation runs" observe warm-1
check "an anchor is written" bash -c "for i in \$(seq 100); do [ \$(grep -c '^airlock-anchor v1 ' '$FILE' 2>/dev/null || echo 0) -ge 1 ] && exit 0; sleep 0.1; done; exit 1"
check_out "the file verifies" '^audit: intact' verify "$FILE"

# ---- a write cut short (a crash mid-write): the next anchor is not glued to it
before=$(anchors_in "$FILE")
printf '%s' "$(tail -1 "$FILE" | cut -c1-120)" >>"$FILE"
check "fault: the file ends in a piece of a line" test "$(tail -c1 "$FILE" | od -An -c | tr -d ' ')" != '\n'
check "another observation runs" observe warm-2
check "the piece is ended before the next anchor" wait_log 10 'evt=audit.anchor_tail_repaired file=' a1
whole() { grep -cE '^airlock-anchor v1 event=[0-9]+ hash=[0-9a-f]{64} at=[0-9TZ:-]{20} key=[0-9a-f]{16} sig=[0-9a-f]{128}$' "$1"; }
check "the next anchor is written whole on a line of its own" bash -c "for i in \$(seq 100); do [ \$(grep -cE '^airlock-anchor v1 event=[0-9]+ hash=[0-9a-f]{64} at=[0-9TZ:-]{20} key=[0-9a-f]{16} sig=[0-9a-f]{128}\$' '$FILE') -gt $((before - 0)) ] && exit 0; sleep 0.1; done; exit 1"
check_eq "the piece stays as one line of its own, nothing glued to it" 1 "$(($(wc -l <"$FILE") - $(whole "$FILE")))"
check_out "the file verifies" '^audit: intact' verify "$FILE"
check_out "... reporting the piece as torn" '1 line of the anchor file was cut short' verify "$FILE"

# ---- the anchor file's disk fills up
dd if=/dev/zero of="$FS/filler" bs=1k >/dev/null 2>&1
check "fault: the anchor file's disk is full" test "$(df --output=avail "$FS" | tail -1 | tr -d ' ')" -eq 0
# The page the file ends in still takes a few anchors: one each second.
for i in $(seq 1 40); do
	observe "full-$i" >/dev/null
	sleep 1
	grep -q 'evt=audit.anchor_failed' "$WORK/a1.log" && break
done
check "fault: an anchor cannot be written" grep -q 'evt=audit.anchor_failed' "$WORK/a1.log"
echo "# the write failed as: $(grep -o 'evt=audit.anchor_failed .*' "$WORK/a1.log" | head -1 | grep -oE 'short write[^;]*|No space left on device' | head -1)"
check_out "the alarm names the file and what is held" "evt=audit.anchor_failed file=$FILE attempts=1 mutations=held" cat "$WORK/a1.log"
check "the metric says so" bash -c "for i in \$(seq 50); do [ \"\$(curl -s http://127.0.0.1:$MP/metrics | awk '\$1 == \"airlock_audit_anchor_failing\" {print \$2}')\" = 1 ] && exit 0; sleep 0.1; done; exit 1"
check "the webhook is told" wait_hook 30 '"event":"audit_anchor_failed"' ops
check "the anchor is retried, not given up" bash -c "for i in \$(seq 100); do [ \"\$(curl -s http://127.0.0.1:$MP/metrics | awk '\$1 == \"airlock_audit_anchor_failures_total\" {print \$2}')\" -ge 3 ] && exit 0; sleep 0.1; done; exit 1"
check_eq "no piece of a line is left at the file's end" '\n' "$(tail -c1 "$FILE" | od -An -c | tr -d ' ')"
check "observations still run" observe full-observation
id=$(as_agent $A run --target $CT -- 'echo anchored-1 >> /tmp/faults.log' 2>/dev/null)
check "a mutation is held, with the reason" wait_for 30 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $id AND detail->>'released' LIKE 'held, nothing sent: the audit anchor file % cannot be written%'"
check_eq "nothing of it ran" 0 "$(cat "$MARKS" 2>/dev/null | grep -cx anchored-1)"

# ---- room again
rm -f "$FS/filler"
check "the anchor lands once there is room" wait_log 30 'evt=audit.anchor_recovered' a1
check_eq "the metric clears" 0 "$(metric airlock_audit_anchor_failing)"
check "the held mutation runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_eq "once" 1 "$(grep -cx anchored-1 "$MARKS")"
kill -TERM $A1
wait $A1 2>/dev/null
check_eq "the full disk left no piece: the one line not whole is the crash's" 1 "$(($(wc -l <"$FILE") - $(whole "$FILE")))"
check_out "the file verifies after the full disk" '^audit: intact' verify "$FILE"

# ---- verify tells a torn line from an edit
grep -E '^airlock-anchor v1 event=[0-9]+ hash=[0-9a-f]{64} at=[0-9TZ:-]{20} key=[0-9a-f]{16} sig=[0-9a-f]{128}$' "$FILE" >"$WORK/whole.log"
cp "$WORK/whole.log" "$WORK/torn.log"
printf '%s' "$(tail -1 "$FILE" | cut -c1-200)" >>"$WORK/torn.log"
check_out "a piece of a line at the end is said, and is no fault" 'cut short by an interrupted write.*at the file.s end' verify "$WORK/torn.log"
check_rc "... verify passes" 0 as_alice $A audit verify --anchors "$WORK/torn.log" --pubkey "$KEY.pub"
{ head -1 "$WORK/whole.log" | cut -c1-90 | tr -d '\n'; sed -n '2,$p' "$WORK/whole.log"; } >"$WORK/glued.log"
check_out "a piece glued to the next anchor is said too, and that anchor counts" '^audit: intact.*' verify "$WORK/glued.log"
check_out "... as a torn line" '1 line of the anchor file was cut short' verify "$WORK/glued.log"
sed '2s/hash=\(.\)/hash=X\1/; 2s/hash=X0/hash=1/; 2s/hash=X[1-9a-f]/hash=0/' "$WORK/whole.log" >"$WORK/edited.log"
check "fault: the second anchor's hash was edited" bash -c "! cmp -s '$WORK/whole.log' '$WORK/edited.log'"
check_out "an edited anchor is a fault" '^audit: BROKEN.*' verify "$WORK/edited.log"
check_out "... named as such" 'line 2: the signature does not match' verify "$WORK/edited.log"
check_rc "... verify fails" 3 as_alice $A audit verify --anchors "$WORK/edited.log" --pubkey "$KEY.pub"
finish
