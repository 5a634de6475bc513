#!/bin/bash
# Detection of what went around the gate, on the rig: a real airlockd whose
# scheduler probes the node every 2 s.  An approved package install through
# airlock is explained; the incident replayed (apt-get install over plain
# ssh with a key that is not airlockd's) raises access_outside_airlock and
# change_outside_airlock within one probe interval, package named, in
# get_health_summary, `airlock pending`'s header and a webhook.  What agents'
# hosts report (hook denials, host checks) becomes side_door notices, one
# per host per interval, and shows in `airlock side-door` and `airlock
# pending`, apart from what the probes observed.
# Runs inside scripts/pgtmp and `tests/rig/rigctl run` (see 75-hook.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || exit 1
q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler" >/dev/null
mkdir -p "$WORK/hooks"
python3 tests/daemon/webhook_sink.py "$WORK/hook.port" "$WORK/hooks" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/hook.port" ] && break; sleep 0.1; done
write_config p1 "webhooks:" "  - url: http://127.0.0.1:$(cat "$WORK/hook.port")/ops" \
	"scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\"" \
	"probes:" "  interval_s: 2" "notifications:" "  side_door_interval_s: 3600" >/dev/null
start_daemon p1 || { failt "airlockd starts"; finish; exit 1; }
HOST=proxmox-host:hubris
status() { q "SELECT status FROM airlock.checks WHERE entity = '$HOST' AND name = '$1'"; }
probe_rounds() { grep -c 'evt=probe.round' "$WORK/p1.log"; }

check "first probe: no login but airlockd's" wait_for 30 \
	"SELECT status = 'ok' FROM airlock.checks WHERE entity = '$HOST' AND name = 'access_outside_airlock'"
check_eq "first probe: no unexplained change" ok "$(status change_outside_airlock)"
check_out "the access check names airlockd's own key" "airlockd's \\(ED25519 SHA256:" \
	q "SELECT detail FROM airlock.checks WHERE entity = '$HOST' AND name = 'access_outside_airlock'"

# ---- a package installed through airlock (approved) is explained
id=$(as_agent $A run --target $HOST --action "install htop" -- 'apt-get install -y htop')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id"
as_alice $A approve $id >/dev/null
check "the approved install runs" wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id"
check_out "the node's dpkg history has it" 'install htop:amd64' \
	grep -h htop "$AIRLOCK_RIG_ROOT/node/var/log/dpkg.log"
r=$(probe_rounds)
check "a probe round after it" wait_log 30 "evt=probe.round" p1
for _ in $(seq 100); do [ "$(probe_rounds)" -ge $((r + 2)) ] && break; sleep 0.1; done
check_eq "an install airlock ran is not a change outside airlock" ok "$(status change_outside_airlock)"
check_eq "airlockd's logins are not outside airlock" ok "$(status access_outside_airlock)"

# ---- the incident: apt-get install over plain ssh, with a key that is not airlockd's
# (a few seconds after airlock's own install ended, so that one cannot explain it)
wait_for 30 "SELECT now() > finished_at + interval '3 seconds' FROM airlock.executions WHERE id = $id"
agent_fp=$(ssh-keygen -lf "$AIRLOCK_RIG_AGENT_KEY.pub" | awk '{print $2}')
r=$(probe_rounds)
ssh -i "$AIRLOCK_RIG_AGENT_KEY" -o IdentitiesOnly=yes -o BatchMode=yes \
	-o UserKnownHostsFile="$AIRLOCK_RIG_KNOWN_HOSTS" -p "$AIRLOCK_RIG_SSH_PORT" root@127.0.0.1 \
	'apt-get install -y nfs-kernel-server' >/dev/null 2>&1
check "the side door was used (the node logged the agent key's login)" \
	grep -qF "ED25519 $agent_fp" "$AIRLOCK_RIG_ROOT/log/node.log"
# within one probe interval: at most two rounds after the change (the round
# under way may have read the logs just before it)
for _ in $(seq 300); do
	[ "$(status change_outside_airlock)" = failing ] && break
	[ "$(probe_rounds)" -ge $((r + 2)) ] && break
	sleep 0.1
done
check_eq "change_outside_airlock is raised within one probe interval" failing "$(status change_outside_airlock)"
check_out "... naming the package" 'install nfs-kernel-server:amd64 1\.0 at 20[0-9-]+T' \
	q "SELECT detail FROM airlock.checks WHERE entity = '$HOST' AND name = 'change_outside_airlock'"
check_eq "... and htop, installed through airlock, is not in it" ok \
	"$(q "SELECT CASE WHEN detail LIKE '%htop%' THEN 'htop listed' ELSE 'ok' END FROM airlock.checks WHERE entity = '$HOST' AND name = 'change_outside_airlock'")"
check_eq "access_outside_airlock is raised" failing "$(status access_outside_airlock)"
check "... with the agent key's fingerprint" bash -c "psql -XAtq -c \"SELECT detail FROM airlock.checks WHERE entity = '$HOST' AND name = 'access_outside_airlock'\" | grep -qF 'root from 127.0.0.1 with ED25519 $agent_fp'"
check_out "get_health_summary counts them as failing" '"checks_failing": [2-9]' \
	as_agent psql -XAtq -c "SELECT airlock.get_health_summary('$HOST')"
check_out "airlock pending's header shows them" '^!! change_outside_airlock on proxmox-host:hubris: .*nfs-kernel-server' \
	as_alice $A pending
check "the webhook is called, package named" wait_hook 20 'nfs-kernel-server' ops
check_out "... as a change_outside_airlock event" '"event":"change_outside_airlock"' \
	bash -c "cat $WORK/hooks/ops.*.json"
n=$(ls "$WORK"/hooks/ops.*.json | wc -l)
r=$(probe_rounds)
for _ in $(seq 100); do [ "$(probe_rounds)" -ge $((r + 2)) ] && break; sleep 0.1; done
check_eq "the same evidence is not posted again every round" "$n" "$(ls "$WORK"/hooks/ops.*.json | wc -l)"

# ---- what agents' hosts report: the hook's denials and asks, host checks
# an agent's ssh to the node, denied by the hook on its host (over the
# database's local socket: host "local")
hook_ssh() { # [PGHOST]: the hook's decision on `ssh root@<node>`, recorded as hermes
	printf '{"session_id":"detect","permission_mode":"default","hook_event_name":"PreToolUse","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ssh -p %s root@127.0.0.1 uptime"}}' \
		"$AIRLOCK_RIG_SSH_PORT" | PGUSER=hermes PGHOST=${1:-$PGHOST} $A hook --log - >/dev/null 2>&1
}
sd_notices() { grep -l '"event":"side_door"' "$WORK"/hooks/ops.*.json 2>/dev/null | wc -l; }
hook_ssh
check_eq "the hook denied it and recorded it" 1 "$(q "SELECT count(*) FROM airlock.hook_events WHERE agent = 'hermes' AND decision = 'deny'")"
check "a side_door notice is posted within a probe round" wait_hook 20 '"event":"side_door"' ops
note=$(grep -h '"event":"side_door"' "$WORK"/hooks/ops.*.json)
check_out "... for that agent host, with what it reported" \
	'airlock: side door on agent host .*\(local socket\), login hermes: 1 hook denial\(s\) since the last notice; latest: .*proxmox-host:hubris' echo "$note"
check_out "... marked as the host's own report, not verified" \
	"\"provenance\":\"reported by the agent's host, not verified\"" echo "$note"
check_out "... and logged" 'evt=probe.side_door host=local .*denials=1 asks=0 open=0' cat "$WORK/p1.log"
# more from the same host within the interval: counted, not posted
hook_ssh
hook_ssh
PGUSER=hermes q "SELECT airlock.report_host_check('$(hostname)', 1, '[{\"status\": \"open\", \"subject\": \"proxmox-host:hubris\", \"detail\": \"this host logs in to proxmox-host:hubris as root with ~/.ssh/id_ed25519\"}]')" >/dev/null
r=$(probe_rounds)
for _ in $(seq 200); do [ "$(probe_rounds)" -ge $((r + 2)) ] && break; sleep 0.1; done
check_eq "within side_door_interval_s the same host's reports are counted, not posted" \
	"1|2|0|1" "$(sd_notices)|$(q "SELECT denials || '|' || asks || '|' || open_reports FROM airlock.side_door_announcements WHERE host_key = 'local'")"
# another host (the database sees another address) has its own interval
hook_ssh 127.0.0.1
check "another agent host gets its own notice at once" wait_hook 20 "agent host $(hostname) (127.0.0.1)" ops
check_eq "... and the first host still none" 2 "$(sd_notices)"
# the interval over (its last notice made old): one notice with all of it
q "UPDATE airlock.side_door_announcements SET announced_at = now() - interval '2 hours' WHERE host_key = 'local'" >/dev/null
check "after the interval, one notice for what was held back" wait_hook 20 '2 hook denial(s), 1 side-door check(s) with an open door' ops
check_eq "... once" 3 "$(sd_notices)"

# ---- operators see it: airlock side-door and airlock pending
out=$(as_alice $A side-door 2>&1)
check_out "side-door: the hosts' reports, marked not verified" "^Reported by agents' hosts, not verified:" echo "$out"
check_out "... a hook denial from the agent's host" "^20[0-9 :-]+ hook +$(hostname) +hermes +deny +airlock hook: ssh to 127.0.0.1 reaches proxmox-host:hubris" echo "$out"
check_out "... the host check with its open door" "^20[0-9 :-]+ host_check +$(hostname).* hermes +1 open door\(s\) +this host logs in" echo "$out"
check_out "side-door: apart from what the probes observed" '^Observed by airlockd on the nodes:' echo "$out"
check_out "... the login outside airlock" '^20[0-9 :-]+ probe +proxmox-host:hubris +- +access_outside_airlock +1 SSH login\(s\) not by airlockd' echo "$out"
check_eq "side-door --json: every row says where it came from" \
	"reported by the agent's host, not verified|observed by airlockd on the node" \
	"$(as_alice $A side-door --json | python3 -c 'import json,sys; print("|".join(sorted({r["provenance"] for r in json.load(sys.stdin)}, reverse=True)))')"
check_rc "side-door: not for agents (exit 3)" 3 as_agent $A side-door
check_out "pending: a side-door line under the probes' findings" \
	"^!! side door: 4 hook denial\(s\) and 0 ask\(s\) in the last 24 h, 1 agent host\(s\) with an open door \($(hostname)\), reported by agents' hosts, not verified: airlock side-door" \
	as_alice $A pending
finish
