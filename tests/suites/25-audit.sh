#!/bin/bash
# The audit trail survives its owner: airlockd signs the chain's head into an
# anchor file; `airlock audit verify --anchors --pubkey` finds truncation
# (newest events deleted) and rewrites (an approval's actor edited and every
# later event re-hashed, as a superuser) that the database's own check cannot
# see; approvals and outcomes are covered by chained records; airlock_owner
# cannot switch the append-only rules off.  A real airlockd on the rig.
set -uo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_RIG_SSH_PORT:-}" ]; then
	exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
fi
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || { echo "set-up failed"; exit 1; }
KEY=$WORK/anchor.key
ANCHORS=$WORK/anchors.log

# ---- keys
check_out "keygen writes a key pair" 'public key .*anchor.key.pub' $A audit keygen --out "$KEY"
check_eq "the private key is 0600" 600 "$(stat -c %a "$KEY")"
check_out "the public key is PEM" 'BEGIN PUBLIC KEY' cat "$KEY.pub"
check_rc "keygen never overwrites a key" 1 $A audit keygen --out "$KEY"
check_out "... and says so" 'never overwritten' $A audit keygen --out "$KEY"
$A audit keygen --out "$WORK/other.key" >/dev/null

cp "$KEY" "$WORK/loose.key" && chmod 644 "$WORK/loose.key"
check_out "airlockd -n refuses a signing key others can read" 'chmod 600' \
	$D -n -c "$(write_config loose "audit:" "  signing_key: $WORK/loose.key" "  anchor_file: $ANCHORS")"
check_out "airlockd -n wants both audit files" 'signing_key and anchor_file are both required' \
	$D -n -c "$(write_config half "audit:" "  signing_key: $KEY")"
write_config d1 "audit:" "  signing_key: $KEY" "  anchor_file: $ANCHORS" "  every_events: 7" \
	"  every_seconds: 1" >/dev/null
check "airlockd -n accepts the audit section" $D -n -c "$WORK/d1.yaml"
start_daemon d1 || { echo "airlockd did not start"; cat "$WORK/d1.log"; exit 1; }
D1=$DPID

# ---- activity: runs that succeed, a destructive one with two approvals, a rejection, a cancel
head_covered() { # the newest anchor names the newest event, sealed
	[ -s "$ANCHORS" ] && [ "$(q "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL")" = 0 ] &&
		[ "$(tail -1 "$ANCHORS" | sed -E 's/.* event=([0-9]+) .*/\1/')" = "$(q "SELECT max(seq) FROM airlock.execution_events")" ]
}
wait_covered() { local i; for i in $(seq 150); do head_covered && return 0; sleep 0.2; done; return 1; }
for i in 1 2 3; do as_agent $A run --target proxmox-host:hubris -- "echo audit-$i" >/dev/null 2>&1; done
check "the read-only runs finish" wait_for 30 "SELECT count(*) = 3 FROM airlock.executions WHERE state = 'succeeded'"
check "airlockd anchors the chain's head" wait_covered
check_eq "the anchor names the sealed head's position and hash" t \
	"$(q "SELECT hash = '$(tail -1 "$ANCHORS" | sed -E 's/.* hash=([0-9a-f]+) .*/\1/')' FROM airlock.execution_events WHERE seq = (SELECT max(seq) FROM airlock.execution_events)")"
check_eq "airlockd sealed every event: none is left out of the chain" 0 \
	"$(q "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL")"
big=$(as_agent $A run --target proxmox-host:hubris -- rm -rf /tmp/airlock-audit-scratch 2>/dev/null)
rej=$(as_agent $A run --target proxmox-host:hubris -- systemctl restart pveproxy 2>/dev/null)
can=$(as_agent $A run --target proxmox-host:hubris -- systemctl restart corosync 2>/dev/null)
check "the risky requests wait" wait_for 30 "SELECT count(*) = 3 FROM airlock.executions WHERE state = 'pending_approval'"
as_alice $A approve "$big" --reason "scratch dir" >/dev/null 2>&1
as_bob $A approve "$big" --reason "agreed" >/dev/null 2>&1
as_alice $A reject "$rej" --reason "not now" >/dev/null 2>&1
as_agent $A cancel "$can" >/dev/null 2>&1
check "everything is final" wait_for 60 "SELECT bool_and(state IN ('succeeded', 'failed', 'rejected', 'cancelled')) FROM airlock.executions"
check_eq "the two approvals are chained records" 2 \
	"$(q "SELECT count(*) FROM airlock.execution_events WHERE detail->>'record' = 'approval' AND (detail->'approval'->>'execution_id')::bigint = $big")"
check_eq "the outcome is a chained record" t \
	"$(q "SELECT (detail->'execution'->>'exit_code') IS NOT NULL FROM airlock.execution_events WHERE execution_id = $big AND detail->>'record' = 'execution' ORDER BY id DESC LIMIT 1")"
check_out "history shows each approval record: decision, by whom, for which payload" \
	'record: approve by bob for payload [0-9a-f]{12}: agreed' as_alice $A history "$big"
check_out "history shows the outcome record" 'record: succeeded class destructive payload [0-9a-f]{12} exit 0' \
	as_alice $A history "$big"
check_eq "the row was recorded twice as pending_approval (classified, then the gate's rules)" 2 \
	"$(q "SELECT count(*) FROM airlock.execution_events WHERE execution_id = $big AND detail->>'record' = 'execution' AND detail->'execution'->>'state' = 'pending_approval'")"
check_out "  history's second record line says what changed" \
	'record: pending_approval class destructive .*\(changed: .*approvals_required 2' as_alice $A history "$big"
check_eq "  no history line reads as another (timestamps aside)" "" \
	"$(as_alice $A history "$big" | cut -c25- | sort | uniq -d)"
check "... and again after more events" wait_covered
kill -TERM "$D1"
wait "$D1" 2>/dev/null
check "a stopping daemon anchors what it did last" head_covered
check_eq "several anchors were written" t "$(q "SELECT $(wc -l <"$ANCHORS") >= 2")"
check_out "anchors are signed lines" '^airlock-anchor v1 event=[0-9]+ hash=[0-9a-f]{64} at=[-0-9T:]+Z key=[0-9a-f]{16} sig=[0-9a-f]{128}$' tail -1 "$ANCHORS"

# ---- an untampered chain verifies both ways
check_out "verify: intact" '^audit: intact' as_alice $A audit verify
check_out "verify --anchors: intact, every anchor holds" '^audit: intact, [0-9]+ events verified; [0-9]+ signed anchors? hold' \
	as_alice $A audit verify --anchors "$ANCHORS" --pubkey "$KEY.pub"
check_rc "verify --anchors exits 0" 0 as_alice $A audit verify --anchors "$ANCHORS" --pubkey "$KEY.pub"
check_out "verify --anchors --json" '"intact":true' as_alice $A audit verify --json --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- the unsealed tail: counted and aged, not called broken; verify seals it first when it can
q "INSERT INTO airlock.executions (target, target_type, command, requested_by, state)
   VALUES ('proxmox-host:hubris', 'proxmox-host', 'uptime', 'hermes', 'cancelled')" >/dev/null
psql -XAtq -c "SELECT pg_advisory_lock(74287730, 1); SELECT pg_sleep(30)" >/dev/null 2>&1 &
HOLDER=$!
wait_for 10 "SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 74287730 AND granted" >/dev/null
check_eq "another session holds the chain's lock, and one event is unsealed (precondition)" 1 \
	"$(q "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL")"
check_out "verify: an unsealed tail is reported with its age, not judged" \
	'^audit: 1 event not sealed into the chain yet \(the oldest written [0-9:.]+ ago\)' as_alice $A audit verify
check_rc "verify: an unsealed tail alone exits 0" 0 as_alice $A audit verify
check_out "verify --json says how many are unsealed" '"unsealed":1}' as_alice $A audit verify --json
check_out "verify --anchors reports it too" '^audit: 1 event not sealed into the chain yet' \
	as_alice $A audit verify --anchors "$ANCHORS" --pubkey "$KEY.pub"
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()" >/dev/null
wait $HOLDER 2>/dev/null
check_out "with the lock free, verify seals first: nothing is left unsealed" '"unsealed":0}' as_alice $A audit verify --json
check_eq "... in the database too" 0 "$(q "SELECT count(*) FROM airlock.execution_events WHERE seq IS NULL")"

# Each tamper gets its own copy of the database.
copy_db() { createdb -T "$PGDATABASE" "$1"; }
verify_in() { PGDATABASE=$1 PGUSER=alice $A audit verify "${@:2}"; }
max_event() { PGDATABASE=$1 q "SELECT max(seq) FROM airlock.execution_events"; }

# ---- truncation: a superuser deletes the newest 20 events
copy_db t_trunc
before=$(max_event t_trunc)
PGDATABASE=t_trunc q "SET session_replication_role = replica;
	DELETE FROM airlock.execution_events WHERE seq > (SELECT max(seq) - 20 FROM airlock.execution_events)"
check_eq "truncation: 20 events are gone (precondition)" $((before - 20)) "$(max_event t_trunc)"
anchored=$(tail -1 "$ANCHORS" | sed -E 's/.* event=([0-9]+) .*/\1/')
check_out "truncation: named, with the anchored position and where the chain now ends" \
	"truncated: the anchor signed at .* names chain position $anchored, but the chain ends at position $((before - 20))" \
	verify_in t_trunc --anchors "$ANCHORS" --pubkey "$KEY.pub"
check_rc "truncation: exit 3" 3 verify_in t_trunc --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- rewrite: a superuser makes mallory the first approver, in the row, in its record and in
# the approval's event, and re-hashes every later event so the chain holds again
copy_db t_rewrite
PGDATABASE=t_rewrite q "SET session_replication_role = replica;
	UPDATE airlock.approvals SET approver = 'mallory' WHERE execution_id = $big AND approver = 'alice';
	UPDATE airlock.execution_events SET detail = jsonb_set(detail, '{approval,approver}', '\"mallory\"')
	 WHERE detail->>'record' = 'approval' AND detail->'approval'->>'approver' = 'alice'
	   AND (detail->'approval'->>'execution_id')::bigint = $big;
	UPDATE airlock.execution_events SET actor = 'mallory' WHERE execution_id = $big AND actor = 'alice';
	DO \$\$
	DECLARE ev airlock.execution_events; prev text := repeat('0', 64);
	BEGIN
		FOR ev IN SELECT * FROM airlock.execution_events WHERE seq IS NOT NULL ORDER BY seq LOOP
			ev.prev_hash := prev;
			ev.hash := airlock._event_hash(ev);
			UPDATE airlock.execution_events SET prev_hash = ev.prev_hash, hash = ev.hash WHERE id = ev.id;
			prev := ev.hash;
		END LOOP;
	END \$\$;" >/dev/null
check_eq "rewrite: mallory now shows as the approver (precondition)" mallory \
	"$(PGDATABASE=t_rewrite q "SELECT approver FROM airlock.approvals WHERE execution_id = $big ORDER BY id LIMIT 1")"
check_out "rewrite: the database's own check is fooled (why anchors exist)" '^audit: intact' verify_in t_rewrite
check_out "rewrite: the anchors are not" 'chain position [0-9]+ \(event [0-9]+\) is not the event signed at .*: the chain was rewritten at or before it' \
	verify_in t_rewrite --anchors "$ANCHORS" --pubkey "$KEY.pub"
check_rc "rewrite: exit 3" 3 verify_in t_rewrite --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- reorder: a superuser swaps the positions of two events in the middle of the chain
copy_db t_order
mid=$(PGDATABASE=t_order q "SELECT max(seq) / 2 FROM airlock.execution_events")
PGDATABASE=t_order q "SET session_replication_role = replica;
	UPDATE airlock.execution_events SET seq = -seq WHERE seq IN ($mid, $mid + 1);
	UPDATE airlock.execution_events SET seq = CASE WHEN seq = -$mid THEN $mid + 1 ELSE $mid END WHERE seq < 0" >/dev/null
check_out "reorder: the database's check names the link" "\(chain position $mid\): prev_hash does not match" verify_in t_order
check_out "reorder: so does the anchored check" "\(chain position $mid\): its link does not match the event before it" \
	verify_in t_order --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- a forged seal: a superuser writes an event, with the triggers off, sealed with a made-up hash
copy_db t_seal
PGDATABASE=t_seal q "SET session_replication_role = replica;
	INSERT INTO airlock.execution_events (id, execution_id, actor, to_state, detail, seq, prev_hash, hash)
	SELECT nextval('airlock.execution_events_id_seq'), $big, 'alice', 'approved', '{}', max(seq) + 1,
	       (SELECT hash FROM airlock.execution_events ORDER BY seq DESC LIMIT 1), repeat('e', 64)
	FROM airlock.execution_events" >/dev/null
check_out "forged seal: the database's check names it" "content does not match its hash" verify_in t_seal
check_out "forged seal: so does the anchored check" "its content does not match its hash" \
	verify_in t_seal --anchors "$ANCHORS" --pubkey "$KEY.pub"
check_rc "forged seal: exit 3" 3 verify_in t_seal --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- the owner edits an approval's actor (it owns the table): the record disagrees
copy_db t_actor
PGDATABASE=t_actor q "SET ROLE airlock_owner; UPDATE airlock.approvals SET approver = 'mallory' WHERE execution_id = $big AND approver = 'bob'"
check_eq "edited actor: the row says mallory (precondition)" 1 \
	"$(PGDATABASE=t_actor q "SELECT count(*) FROM airlock.approvals WHERE approver = 'mallory'")"
check_out "edited actor: the database's check names the approval and who wrote it" \
	'approval [0-9]+ of execution [0-9]+ says mallory decided, but its record \(event [0-9]+\) was written by postgres' verify_in t_actor
check_out "edited actor: and so does the anchored check" 'approval [0-9]+ names an approver whose own session did not write its record: event [0-9]+ was written by postgres .*"approver": "mallory"' \
	verify_in t_actor --anchors "$ANCHORS" --pubkey "$KEY.pub"
check_rc "edited actor: exit 3" 3 verify_in t_actor --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- an outcome edited as a superuser, without its record
copy_db t_outcome
PGDATABASE=t_outcome q "SET session_replication_role = replica; UPDATE airlock.executions SET exit_code = 0, stdout = 'all fine'::bytea WHERE id = $big"
check_out "edited outcome: detected" "execution $big differs from its record" verify_in t_outcome --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- how it was confined, its kind, and its gate: covered by the records too
for edit in "confinement = CASE WHEN confinement = 'root' THEN 'user' ELSE 'root' END" "kind = 'guard'" "gate_version = 424242" \
	"approval_valid_until = now() + interval '1 year'" "approved_probe = '{\"forged\": true}'"; do
	copy_db t_cover
	PGDATABASE=t_cover q "SET session_replication_role = replica; UPDATE airlock.executions SET $edit WHERE id = $big"
	check_out "edited ${edit%% *}: detected by the anchored check" "execution $big differs from its record" \
		verify_in t_cover --anchors "$ANCHORS" --pubkey "$KEY.pub"
	check_out "edited ${edit%% *}: and by the database's" "differs|disagrees" verify_in t_cover
	PGDATABASE=postgres q "DROP DATABASE t_cover" >/dev/null
done

# ---- anchor file and key problems
cp "$ANCHORS" "$WORK/forged.log"
python3 - "$WORK/forged.log" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
i = lines[0].index("hash=") + 5  # one hex digit of the signed hash, changed
lines[0] = lines[0][:i] + ("1" if lines[0][i] == "0" else "0") + lines[0][i + 1:]
open(sys.argv[1], "w").write("\n".join(lines))
PY
check_eq "the forged line differs from the signed one (precondition)" 1 "$(diff "$ANCHORS" "$WORK/forged.log" | grep -c '^>')"
check_out "a forged anchor line is named" 'anchor file line 1: the signature does not match' \
	as_alice $A audit verify --anchors "$WORK/forged.log" --pubkey "$KEY.pub"
check_out "anchors checked with another key are refused" 'signed by key [0-9a-f]+, not by the given public key' \
	as_alice $A audit verify --anchors "$ANCHORS" --pubkey "$WORK/other.key.pub"
check_rc "--anchors needs --pubkey" 2 as_alice $A audit verify --anchors "$ANCHORS"

# ---- airlock_owner cannot switch the append-only rules off
as_owner() { q "SET ROLE airlock_owner; $1" 2>&1; }
check_out "owner: cannot disable the append-only trigger" 'may not run ALTER TABLE on airlock.execution_events' \
	as_owner "ALTER TABLE airlock.execution_events DISABLE TRIGGER execution_events_no_update"
check_out "owner: cannot drop it" 'may not drop execution_events_no_update' \
	as_owner "DROP TRIGGER execution_events_no_update ON airlock.execution_events"
check_out "owner: cannot drop its function" 'may not drop airlock._append_only' \
	as_owner "DROP FUNCTION airlock._append_only() CASCADE"
check_out "owner: cannot disable the record triggers" 'may not run ALTER TABLE on airlock.approvals' \
	as_owner "ALTER TABLE airlock.approvals DISABLE TRIGGER approvals_record"
check_out "owner: cannot replace the function that refuses a sealed insert" 'permission denied|may not' \
	as_owner "CREATE OR REPLACE FUNCTION airlock._event_insert_sealed() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'"
check_out "owner: cannot drop the trigger that refuses a sealed insert" 'may not drop execution_events_unsealed_only' \
	as_owner "DROP TRIGGER execution_events_unsealed_only ON airlock.execution_events"
check_out "owner: cannot update events" 'append-only' as_owner "UPDATE airlock.execution_events SET actor = 'x'"
check_out "owner: cannot delete events" 'append-only' as_owner "DELETE FROM airlock.execution_events"
check_eq "the triggers are all still enabled" 0 \
	"$(q "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'airlock' AND NOT t.tgisinternal AND t.tgenabled <> 'O'")"

# ---- the daemon notices a truncation itself when it starts on a chain that lost anchored events
q "SET session_replication_role = replica;
   DELETE FROM airlock.execution_events WHERE seq > (SELECT max(seq) - 5 FROM airlock.execution_events)"
printf 'airlock-anchor v1 event=9' >>"$ANCHORS" # a write a crash cut short
start_daemon d1 || { echo "airlockd did not start again"; cat "$WORK/d1.log"; }
check "airlockd logs the truncation" wait_log 15 'evt=audit.truncated anchored_event=' d1
check "airlockd skips the cut-short line, saying so" wait_log 5 'evt=audit.anchor_file_lines_skipped' d1
kill -TERM $DPID; wait $DPID 2>/dev/null
check_out "the next anchor starts on a line of its own" '^airlock-anchor v1 event=[0-9]+ hash=[0-9a-f]{64} at=[-0-9T:]+Z key=[0-9a-f]{16} sig=[0-9a-f]{128}$' tail -1 "$ANCHORS"
check_out "the cut-short line stays visible to verify, as torn, not as an edit" '1 line of the anchor file was cut short by an interrupted write' \
	as_alice $A audit verify --anchors "$ANCHORS" --pubkey "$KEY.pub"

# ---- anchoring under valgrind: no memory errors, no leaks
command -v valgrind >/dev/null || { failt "valgrind is missing (scripts/install-deps)"; finish; exit 1; }
WORKERS=2 PER_NODE=2 write_config vg "audit:" "  signing_key: $WORK/other.key" \
	"  anchor_file: $WORK/vg-anchors.log" "  every_events: 3" "  every_seconds: 1" "  syslog: true" >/dev/null
valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
	--error-exitcode=99 --log-file="$WORK/valgrind.log" $D -c "$WORK/vg.yaml" --grace 10 >"$WORK/vg.log" 2>&1 &
vpid=$!
DAEMON_PIDS+=("$vpid")
wait_for 60 "SELECT count(*) > 0 FROM pg_stat_activity WHERE usename = 'airlockd'" || cat "$WORK/vg.log"
for i in 1 2 3 4 5; do as_agent $A run --target proxmox-host:hubris -- "echo vg-$i" >/dev/null 2>&1; done
check "valgrind: the runs finish" wait_for 120 "SELECT count(*) = 5 FROM airlock.executions WHERE command LIKE 'echo vg-%' AND state = 'succeeded'"
check "valgrind: anchors are written" bash -c "for i in \$(seq 100); do [ \$(grep -c . '$WORK/vg-anchors.log') -ge 2 ] && exit 0; sleep 0.2; done; exit 1"
kill -TERM $vpid
wait $vpid
check_eq "valgrind: no memory errors and no leaks (exit status)" 0 "$?"
check_out "valgrind: ERROR SUMMARY: 0 errors" 'ERROR SUMMARY: 0 errors' cat "$WORK/valgrind.log"
# (the records of the events truncated above stay missing: only the anchors are judged here)
anchors_hold() {
	local out
	out=$(as_alice $A audit verify --anchors "$WORK/vg-anchors.log" --pubkey "$WORK/other.key.pub")
	grep -qE 'events read|^audit: intact' <<<"$out" && ! grep -qE 'anchor file line|not the event signed|truncated:|no anchor signed' <<<"$out" ||
		{ echo "$out"; return 1; }
}
check "valgrind: the anchors it wrote hold" anchors_hold

finish
