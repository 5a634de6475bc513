#!/bin/bash
# Detection of what went around the gate, on the rig: a real airlockd whose
# scheduler probes the node every 2 s.  An approved package install through
# airlock is explained; the incident replayed (apt-get install over plain
# ssh with a key that is not airlockd's) raises access_outside_airlock and
# change_outside_airlock within one probe interval, package named, in
# get_health_summary, `airlock pending`'s header and a webhook.
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
	"probes:" "  interval_s: 2" >/dev/null
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
finish
