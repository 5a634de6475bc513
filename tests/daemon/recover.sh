#!/bin/bash
# Recovery requests end to end: a real airlockd, the rig's VM 101 (vm:web01)
# and the ZVM simulator's journal file-level restore.  A file an approved
# change broke comes back byte-exact (NUL and high bytes included) with the
# broken one kept beside it, mode and owner preserved; a cloud-replicated VPG
# is refused naming its site; a file over the cap is refused; an unmount
# failure is reported and the session stays listed, blocking the next
# recovery until `airlock flr end`; a live failover refuses the mount; and
# nothing runs without an operator's approval, never the requester's own.
# Runs inside scripts/pgtmp, `tests/rig/rigctl run` and `tests/zvmsim/zvmsimctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

sim() { curl -fsS --cacert "$ZVMSIM_CA" -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "$ZVMSIM_URL$2"; }
# sim_file GUEST_PATH LOCAL_FILE: the simulator's FLR shows LOCAL_FILE's bytes
# at GUEST_PATH of web01 in checkpoints taken from now on.
sim_file() {
	printf '{"vm": "web01", "path": "%s", "data_b64": "%s"}' "$1" "$(base64 -w0 "$2")" >"$WORK/flr_file.json"
	curl -fsS --cacert "$ZVMSIM_CA" -H 'Content-Type: application/json' --data-binary @"$WORK/flr_file.json" \
		"$ZVMSIM_URL/_sim/flr_file" >/dev/null
}
sim_flrs() { sim GET /_sim/state | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["flrs"]))'; }
mounts() { sim GET /_sim/requests | python3 -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin) if r.get("method") == "POST" and r.get("path", "").lower() == "/v1/flrs"))'; }
fault() {
	sim POST /_sim/fault "$1" >/dev/null &&
		sim GET /_sim/state | grep -qF "\"kind\": \"$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["kind"])' "$1")\""
}
events() { q "SELECT string_agg(coalesce(detail->>'step', to_state), ' ' ORDER BY id) FROM airlock.execution_events WHERE execution_id = $1 AND to_state <> 'record'"; }
final() { wait_for "${2:-120}" "SELECT state IN ('succeeded', 'failed', 'refused', 'rejected', 'expired') FROM airlock.executions WHERE id = $1"; }

G=$AIRLOCK_RIG_ROOT/guests/vm101/root
setup_db || exit 1
# vm:cloud01 is the rig's VM 101 under a name whose only VPG recovers to a cloud site.
q "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"vm:cloud01\", \"type\": \"vm\", \"node\": \"proxmox-host:hubris\", \"vmid\": 101, \"attributes\": {\"qemu_guest_agent\": \"running\"}}]}')" >/dev/null
q "CREATE ROLE sched LOGIN IN ROLE airlock_scheduler" >/dev/null
CFG=$(write_config rc "scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=sched\"" \
	"probes:" "  interval_s: 2" "zerto:" "  url: $ZVMSIM_URL" "  token_url: $ZVMSIM_TOKEN_URL" \
	"  client_id: $ZVMSIM_CLIENT_ID" "  secret_file: $ZVMSIM_SECRET_FILE" "  ca_file: $ZVMSIM_CA" \
	"  time_scale: $ZVMSIM_SCALE" "  request_timeout_ms: 5000" \
	"recover:" "  max_file_bytes: 100000" "  flr_session_warn_s: 60")
check "airlockd -n accepts the recover section" $D -n -c "$CFG"
check_out "a cap of 0 is refused" 'max_file_bytes' $D -n -c "$(write_config bad "recover:" "  max_file_bytes: 0")"
start_daemon rc

# ---- the files as they are before the change, in the guest and in the journal
mkdir -p "$G/etc/rt"
python3 -c 'import os, sys; sys.stdout.buffer.write(bytes(range(256)) * 150 + b"\0tail\xff\xfe\n" + os.urandom(3000))' >"$WORK/app.orig"
cp "$WORK/app.orig" "$G/etc/rt/app.conf"
chown 1:1 "$G/etc/rt/app.conf"
chmod 0640 "$G/etc/rt/app.conf"
printf 'old motd\n' >"$WORK/motd.orig"
cp "$WORK/motd.orig" "$G/etc/rt/motd"
head -c 150000 /dev/urandom >"$WORK/big.orig"
cp "$WORK/big.orig" "$G/etc/rt/big.bin"
sim_file /etc/rt/app.conf "$WORK/app.orig"
sim_file /etc/rt/motd "$WORK/motd.orig"
sim_file /etc/rt/big.bin "$WORK/big.orig"
# Links in the guest where the checkpoint has plain files: a symlinked
# directory on the way, and a symlink as the file itself.
mkdir -p "$G/etc/rt/real"
ln -s real "$G/etc/rt/lnk"
printf 'x-now\n' >"$G/etc/rt/real/x.conf"
printf 'target-now\n' >"$G/etc/rt/target.conf"
ln -s target.conf "$G/etc/rt/link.conf"
printf 'in the checkpoint\n' >"$WORK/x.orig"
# A name the two shells must not touch, and a file exactly at the cap.
ODD="/etc/rt/it's a fïle \$HOME \`id\`.conf"
python3 -c 'import sys; sys.stdout.buffer.write(b"\0\xff\xfe quotes \x27 \x22 $(id)\n" * 99)' >"$WORK/odd.orig"
head -c 100000 /dev/urandom >"$WORK/edge.orig"
cp "$WORK/odd.orig" "$G$ODD"
cp "$WORK/edge.orig" "$G/etc/rt/edge.bin"
sim_file "$ODD" "$WORK/odd.orig"
sim_file /etc/rt/edge.bin "$WORK/edge.orig"
sim_file /etc/rt/lnk/x.conf "$WORK/x.orig"
sim_file /etc/rt/link.conf "$WORK/x.orig"

# ---- the approved change that breaks them (its guard takes the rewind points)
chg=$(as_agent $A run --target vm:web01 --change-id chg-rt --action "rewrite app.conf" -- \
	'printf broken > /etc/rt/app.conf; printf new-motd > /etc/rt/motd')
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $chg"
as_alice $A approve $chg >/dev/null
check "the change runs after its checkpoints" wait_for 120 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $chg"
check_eq "the change broke the file" broken "$(cat "$G/etc/rt/app.conf")"

# ---- a failed change on a protected VM names its rewind points and the recovery
bad=$(as_agent $A run --target vm:web01 -- 'printf x > /etc/rt/missing-dir/x')
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $bad"
as_alice $A approve $bad >/dev/null
check "the failing change fails after its checkpoints" wait_for 120 "SELECT state = 'failed' AND rewind_points IS NOT NULL FROM airlock.executions WHERE id = $bad"
check_out "its next_step names the rewind points" 'Rewind points taken before it ran: checkpoint [0-9]+ on VPG web-local' as_agent $A show --json $bad
check_out "and the recovery request that restores from them" "airlock.recover\\('vm:web01', ARRAY\\['/path/to/file'\\], from_execution => $bad\\)" as_agent $A show --json $bad

# ---- bad requests: an error, no row
ro=$(as_agent $A run --target proxmox-host:hubris -- hostname)
n0=$(q "SELECT count(*) FROM airlock.executions")
check_rc "a relative path is refused" 2 as_agent $A recover --vm vm:web01 --from-execution $chg etc/rt/app.conf
check_rc "a .. component is refused" 2 as_agent $A recover --vm vm:web01 --from-execution $chg /etc/rt/../rt/app.conf
check_rc "an execution without rewind points is refused" 2 as_agent $A recover --from-execution $ro /etc/hostname
check_rc "an unknown execution is not found" 4 as_agent $A recover --from-execution 999999 /etc/hostname
check_rc "a VM whose guest agent is down is refused" 3 as_agent $A recover --vm vm:zimaos --checkpoint 1 /etc/hostname
check_out "naming both sources is a usage error" 'usage' as_agent $A recover --vm vm:web01 --from-execution $chg --checkpoint 5 /etc/x
check_eq "no row was inserted for any of them" "$n0" "$(q "SELECT count(*) FROM airlock.executions")"

# ---- the agent asks; it waits for an operator, the agent cannot approve it
rid=$(as_agent $A recover --from-execution $chg /etc/rt/app.conf /etc/rt/motd)
check "the recovery is held for an operator" wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $rid"
check_out "the operator sees the checkpoint, its time, the VPG and its site" \
	'from checkpoint [0-9]+ taken [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z.*VPG web-local, recovering at this site \(Site-A\)' as_alice $A show $rid
check_out "... the paths and what happens to the current files" "/etc/rt/app.conf, /etc/rt/motd.*kept beside it as <path>.airlock-$rid" as_alice $A show $rid
check_rc "the agent that asked cannot approve it" 3 as_agent $A approve $rid
check_eq "nothing was mounted while it waits" 0 "$(mounts)"
check_eq "the guest file is untouched while it waits" broken "$(cat "$G/etc/rt/app.conf")"

# ---- an operator's own request needs another operator
own=$(as_alice $A recover --vm vm:web01 --checkpoint "$(q "SELECT rewind_points->0->>'tag' FROM airlock.executions WHERE id = $chg")" /etc/rt/motd)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $own"
check_out "the operator who asked cannot approve it" 'nobody may approve their own request' as_alice $A approve $own
as_bob $A reject $own --reason "not needed" >/dev/null
check_eq "rejected: nothing mounted" 0 "$(mounts)"

# ---- approved: restored byte-exact, the broken file kept, mode and owner kept, unmounted
as_alice $A approve $rid >/dev/null
check "the recovery finishes" final $rid 180
check_eq "it succeeded" succeeded "$(state_of $rid)"
check "app.conf is back byte for byte" cmp "$WORK/app.orig" "$G/etc/rt/app.conf"
check "motd is back" cmp "$WORK/motd.orig" "$G/etc/rt/motd"
check_eq "the replaced file is kept beside it" broken "$(cat "$G/etc/rt/app.conf.airlock-$rid")"
check_eq "mode and owner are preserved" "640 1 1" "$(stat -c '%a %u %g' "$G/etc/rt/app.conf")"
check_eq "no temporary file is left" "" "$(ls "$G/etc/rt" | grep '\.part$')"
check_out "every step is an event" '^received pending_approval approved running flr.mount_requested flr.mounted (flr.found flr.downloaded recover.written ){2}flr.unmount succeeded$' events $rid
check_out "the report says the unmount succeeded" '"ok": true' as_alice $A show $rid
check_eq "the session is gone from the ZVM" 0 "$(sim_flrs)"
echo "# measured: restoring $(stat -c %s "$WORK/app.orig") + $(stat -c %s "$WORK/motd.orig") bytes took $(q "SELECT duration_ms FROM airlock.executions WHERE id = $rid") ms from approval's start to unmount (ZVM at ${ZVMSIM_SCALE}x)"

# ---- a name with quotes, $ and backquotes; a file exactly at the cap
printf 'damaged\n' >"$G$ODD"
printf 'damaged\n' >"$G/etc/rt/edge.bin"
edge=$(as_agent $A recover --from-execution $chg "$ODD" /etc/rt/edge.bin)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $edge"
as_alice $A approve $edge >/dev/null
check "the odd-name and at-the-cap recovery succeeds" wait_for 180 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $edge"
check "the odd name is restored byte for byte" cmp "$WORK/odd.orig" "$G$ODD"
check "the file at exactly the cap is restored" cmp "$WORK/edge.orig" "$G/etc/rt/edge.bin"
check_eq "the replaced odd-named file is kept under its own name" damaged "$(cat "$G$ODD.airlock-$edge")"
check_eq "no shell expanded anything in the name" 0 "$(find "$G/etc/rt" -name '*root*' -o -name '*uid=*' | wc -l)"

printf 'changed-again\n' >"$G/etc/rt/motd"
odd=$(as_agent $A recover --from-execution $chg /etc/rt/lnk/x.conf /etc/rt/link.conf /etc/rt /etc/rt/motd)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $odd"
as_alice $A approve $odd >/dev/null
check "the mixed recovery ends" final $odd 180
check_eq "it failed: not every path was restored" failed "$(state_of $odd)"
check_out "a symlinked directory on the way is refused, naming where it leads" 'a directory on the path is a symbolic link in the guest \(it resolves to /etc/rt/real\)' as_alice $A show $odd
check_out "a symlink as the file is refused" 'the path is a symbolic link in the guest' as_alice $A show $odd
check_out "a folder is refused" 'it is a Folder in the checkpoint, not a file' as_alice $A show $odd
check_eq "the file behind the symlinked directory is untouched" x-now "$(cat "$G/etc/rt/real/x.conf")"
check_eq "the symlink's target is untouched" target-now "$(cat "$G/etc/rt/target.conf")"
check "the symlink is still a symlink" test -L "$G/etc/rt/link.conf"
check "the plain file in the same request was restored" cmp "$WORK/motd.orig" "$G/etc/rt/motd"
check_eq "and the session unmounted" 0 "$(sim_flrs)"

# ---- a cloud-replicated VPG: refused, naming the site; nothing mounted
m0=$(mounts)
gid=$(as_agent psql -XAtq -c "SELECT airlock.guard('vm:cloud01', 'test/edit')")
check "a checkpoint of vm:cloud01" wait_for 120 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $gid"
cr=$(as_agent $A recover --from-execution $gid /etc/rt/motd)
check "the recovery from a cloud-replicated VPG is refused" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $cr"
check_out "it names the VPG and its recovery site" 'VPG cloud01-azure recovers to site Azure-East' as_agent $A show $cr
check_eq "nothing was mounted" "$m0" "$(mounts)"

# ---- a file over the cap: refused, the guest file untouched, still unmounted
printf changed >"$G/etc/rt/big.bin"
big=$(as_agent $A recover --from-execution $chg /etc/rt/big.bin)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $big"
as_alice $A approve $big >/dev/null
check "the over-cap recovery ends" final $big 180
check_eq "it failed" failed "$(state_of $big)"
check_out "the report names the cap" 'over the 100000-byte cap' as_alice $A show $big
check_eq "the guest file is untouched" changed "$(cat "$G/etc/rt/big.bin")"
check_eq "the session was unmounted anyway" 0 "$(sim_flrs)"

# ---- an unmount failure: reported, the session listed, the next recovery blocked until ended
printf broken-again >"$G/etc/rt/motd"
check "the unmount fault is set" fault '{"kind": "flr_unmount_fails", "vpg": "web-local"}'
um=$(as_agent $A recover --from-execution $chg /etc/rt/motd)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $um"
as_alice $A approve $um >/dev/null
check "the recovery with a failing unmount ends" final $um 180
check_eq "it is failed, not succeeded" failed "$(state_of $um)"
check "the file itself was restored" cmp "$WORK/motd.orig" "$G/etc/rt/motd"
check_out "the error says the session may still be mounted and how to end it" 'may still be mounted.*airlock flr end' as_alice $A show $um
check_out "the report says the unmount failed" '"ok": false' as_alice $A show $um
sim POST /_sim/fault '{"kind": "clear"}' >/dev/null
sid=$(AIRLOCK_CONFIG=$CFG $A flr list --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s[0]["id"] if len(s) == 1 else "")')
check_out "airlock flr list shows the stuck session" "$sid" env AIRLOCK_CONFIG="$CFG" $A flr list
check "the scheduler reports the stale session as a check" wait_for 60 \
	"SELECT status = 'warning' AND detail LIKE '%$sid%airlock flr end%' FROM airlock.checks WHERE entity = 'vm:web01' AND name = 'flr_session'"
check "and logs it" wait_log 30 "evt=flr.stale session=$sid" rc
check_out "airlock doctor warns about it" "mounted longer than 60 s: $sid" env AIRLOCK_CONFIG="$CFG" $A doctor --timeout-ms 5000
nx=$(as_agent $A recover --from-execution $chg /etc/rt/motd)
check "the next recovery is refused while it is up" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $nx"
check_out "naming the session" "$sid" as_agent $A show $nx
check_out "airlock flr end ends it" 'unmounted' env AIRLOCK_CONFIG="$CFG" $A flr end "$sid"
check_eq "the session is gone" 0 "$(sim_flrs)"
check "the scheduler's check is ok again" wait_for 60 \
	"SELECT status = 'ok' FROM airlock.checks WHERE entity = 'vm:web01' AND name = 'flr_session'"
check_rc "ending an unknown session is not found" 4 env AIRLOCK_CONFIG="$CFG" $A flr end "$sid"
printf broken-once-more >"$G/etc/rt/motd"
nx2=$(as_agent $A recover --from-execution $chg /etc/rt/motd)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $nx2"
as_alice $A approve $nx2 >/dev/null
check "after it was ended a recovery runs again" wait_for 180 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $nx2"
check "and restores the file" cmp "$WORK/motd.orig" "$G/etc/rt/motd"

# ---- the daemon killed mid-recovery: outcome unknown, the session left up, ended by hand
head -c 95000 /dev/urandom >"$WORK/slow.orig"  # under the 100000-byte cap: five guest commands
sim_file /etc/rt/slow.bin "$WORK/slow.orig"
gk=$(as_agent psql -XAtq -c "SELECT airlock.guard('vm:web01', 'test/slow')")
check "a fresh checkpoint holds the slow file" wait_for 120 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $gk"
printf 'before-crash\n' >"$G/etc/rt/slow.bin"
kr=$(as_agent $A recover --from-execution $gk /etc/rt/slow.bin)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $kr"
as_alice $A approve $kr >/dev/null
check "the recovery is writing into the guest" wait_for 120 "SELECT count(*) > 0 FROM airlock.execution_events WHERE execution_id = $kr AND detail->>'step' = 'flr.downloaded'"
kill -9 $DPID
wait $DPID 2>/dev/null
start_daemon rc
check "after the crash the row is settled as outcome_unknown" wait_for 60 "SELECT state = 'outcome_unknown' FROM airlock.executions WHERE id = $kr"
check_out "its next_step says the session may still be mounted" 'may still be mounted.*airlock flr end' as_agent $A show --json $kr
check_eq "the file is either untouched or wholly restored, never half" ok "$(if [ "$(cat "$G/etc/rt/slow.bin")" = before-crash ] || cmp -s "$WORK/slow.orig" "$G/etc/rt/slow.bin"; then echo ok; fi)"
check_eq "the session is left up" 1 "$(sim_flrs)"
sk=$(AIRLOCK_CONFIG=$CFG $A flr list --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s[0]["id"] if len(s) == 1 else "")')
check_out "and ended by hand" 'unmounted' env AIRLOCK_CONFIG="$CFG" $A flr end "$sk"
rm -f "$G"/etc/rt/slow.bin.airlock-*

# ---- whole-VM inspection (operators only): a failover test from the checkpoint, then stopped
vpg_state() { sim GET /_sim/state | python3 -c 'import json,sys; print(next(v[sys.argv[1]] for v in json.load(sys.stdin)["vpgs"] if v["VpgName"] == sys.argv[2]))' "$1" "$2"; }
check_out "an agent cannot ask for an inspection" 'permission denied' as_agent psql -XAtq -c "SELECT airlock.inspect('vm:web01', 'failover_test', $chg)"
check_out "live failover is never offered" 'never offered' as_alice psql -XAtq -c "SELECT airlock.inspect('vm:web01', 'live_failover', $chg)"
ft=$(as_alice $A inspect --from-execution $chg --failover-test)
check "the failover test request is held" wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $ft"
check_out "the approver sees the checkpoint, the VPG and its site" \
	'a failover test of vm:web01 from checkpoint [0-9]+ taken .*, VPG web-local, at its recovery site Site-A' as_bob $A show $ft
check_out "the operator who asked cannot approve it" 'nobody may approve their own request' as_alice $A approve $ft
check_eq "nothing started before approval" False "$(vpg_state test web-local)"
as_bob $A approve $ft >/dev/null
check "the failover test's task completes" wait_for 120 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $ft"
check_eq "the test runs on web-local" True "$(vpg_state test web-local)"
check_out "its steps are events" 'zerto.task_started zerto.task_ended succeeded$' events $ft
tr=$(as_agent $A recover --from-execution $chg /etc/rt/motd)
check "a file recovery while the test runs is refused" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $tr"
check_out "saying a failover test is running" 'failover test is running on VPG web-local' as_agent $A show $tr
check_rc "a stop takes no rewind point" 2 as_alice $A inspect --vm vm:web01 --stop-test --from-execution $chg
stp=$(as_alice $A inspect --vm vm:web01 --stop-test)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $stp"
as_bob $A approve $stp >/dev/null
check "the stop's task completes" wait_for 120 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $stp"
check_eq "no test runs any more" False "$(vpg_state test web-local)"
nostop=$(as_alice $A inspect --vm vm:web01 --stop-test)
check "stopping when no test runs is refused" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $nostop"
cl=$(as_alice $A inspect --from-execution $chg --clone)
wait_for 60 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $cl"
as_bob $A approve $cl >/dev/null
check "an offsite clone from the checkpoint completes" wait_for 180 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $cl"
check_eq "no live failover, commit or move was ever asked of the ZVM" 0 "$(sim GET /_sim/requests | python3 -c '
import json, re, sys
print(sum(1 for r in json.load(sys.stdin) if re.search(r"/(failover|failovercommit|failoverrollback|move[a-z]*)$", r.get("path", "").lower())))')"

# ---- while a live failover runs on the VPG: refused with that reason
sim POST /_sim/config '{"vpgs": {"web-local": {"process": "live_failover"}}}' >/dev/null
check_out "the simulator shows the live failover" '"process": "live_failover"' sim GET /_sim/state
lf=$(as_agent $A recover --from-execution $chg /etc/rt/motd)
check "a recovery during a live failover is refused" wait_for 60 "SELECT state = 'refused' FROM airlock.executions WHERE id = $lf"
check_out "saying why" 'live failover is running on VPG web-local' as_agent $A show $lf
sim POST /_sim/config '{"vpgs": {"web-local": {"process": null}}}' >/dev/null

# ---- the MCP tool recover_file: the same request, held for an operator
cat >"$WORK/mcp.txt" <<EOT
> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}}}
< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}
> {"jsonrpc":"2.0","method":"notifications/initialized"}
> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recover_file","arguments":{"execution_id":$chg,"paths":["/etc/rt/motd"]}}}
< {"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"execution":{"state":"~^(received|pending_approval)\$"},"next_step":"*"}}}
> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"recover_file","arguments":{"execution_id":$chg,"paths":"/etc/rt/motd"}}}
< {"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"~\"paths\" must be a list of 1 to 16 non-empty strings"},{"type":"text","text":"*"}]}}
> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"recover_file","arguments":{"execution_id":$chg,"paths":["etc/rt/motd"]}}}
< {"jsonrpc":"2.0","id":4,"result":{"isError":true,"content":[{"type":"text","text":"~is not absolute"},{"type":"text","text":"*"}]}}
> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recover_file","arguments":{"checkpoint":"1","paths":["/etc/rt/motd"]}}}
< {"jsonrpc":"2.0","id":5,"result":{"isError":true,"content":[{"type":"text","text":"~vm is required"},{"type":"text","text":"*"}]}}
EOT
before=$(q "SELECT count(*) FROM airlock.executions WHERE kind = 'recover'")
check "recover_file over MCP asks, and bad arguments are refused" \
	python3 tests/mcp/drive.py "$WORK/mcp.txt" -- build/bin/airlock-mcp --db "user=hermes"
check_eq "exactly one recovery row came from it" $((before + 1)) "$(q "SELECT count(*) FROM airlock.executions WHERE kind = 'recover'")"
mr=$(q "SELECT max(id) FROM airlock.executions WHERE kind = 'recover'")
check "it is held for an operator" wait_for 60 "SELECT state = 'pending_approval' AND requested_by = 'hermes' FROM airlock.executions WHERE id = $mr"
check_rc "the agent cannot approve it" 3 as_agent $A approve $mr
as_alice $A reject $mr --reason "test only" >/dev/null

kill -TERM $DPID
wait $DPID
check_out "the audit chain is intact" 'audit: intact' as_alice $A audit verify
finish
