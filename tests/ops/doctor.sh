# tests/ops/doctor.sh -- airlock doctor against the rig, the ZVM simulator and
# the throwaway database: a healthy installation passes in order, and each
# fault (injected, then checked to have happened) fails its own check with
# the fix.  Sourced by tests/ops/run.sh.

q "CREATE ROLE probe LOGIN IN ROLE airlock_scheduler" >/dev/null
mkdir -p "$WORK/hooks"
python3 tests/daemon/webhook_sink.py "$WORK/hook.port" "$WORK/hooks" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/hook.port" ] && break; sleep 0.1; done
HP=$(cat "$WORK/hook.port")
ZCFG=("zerto:" "  url: $ZVMSIM_URL" "  token_url: $ZVMSIM_TOKEN_URL" "  client_id: $ZVMSIM_CLIENT_ID"
	"  secret_file: $ZVMSIM_SECRET_FILE" "  ca_file: $ZVMSIM_CA" "  time_scale: $ZVMSIM_SCALE")
SCHED="scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\""
DOC_CFG=$(write_config doc "$SCHED" "${ZCFG[@]}" "webhooks:" "  - url: http://127.0.0.1:$HP/ops")

# doc_json CFG [ARGS...]: doctor's JSON report into $WORK/doc.json, its exit in $DOC_RC.
doc_json() {
	local cfg=$1
	shift
	$A doctor --config "$cfg" --timeout-ms 5000 --json "$@" >"$WORK/doc.json" 2>"$WORK/doc.err"
	DOC_RC=$?
}
# status_of AREA SUBJECT: the status of that check in the last report.
status_of() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(c["status"] for c in d["checks"] if c["area"] == sys.argv[2] and c["subject"] == sys.argv[3]) or "absent")' \
		"$WORK/doc.json" "$1" "$2"
}
# field_of AREA SUBJECT FIELD
field_of() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" | ".join(str(c[sys.argv[4]]) for c in d["checks"] if c["area"] == sys.argv[2] and c["subject"] == sys.argv[3]))' \
		"$WORK/doc.json" "$1" "$2" "$3"
}

# ---- a healthy installation: the node accepts airlockd's key and no other
# (the rig's second key, an agent host's, comes back as a fault below)
AK=$AIRLOCK_RIG_ROOT/node/root/.ssh/authorized_keys
cp "$AK" "$WORK/authorized_keys.rig"
grep -vF "$(cut -d' ' -f2 "$AIRLOCK_RIG_AGENT_KEY.pub")" "$WORK/authorized_keys.rig" >"$AK"
doc_json "$DOC_CFG"
check_eq "healthy: doctor exits 0" 0 "$DOC_RC"
check_eq "healthy: ok is true and nothing failed" "True 0" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["ok"], sum(c["status"] == "fail" for c in d["checks"]))' "$WORK/doc.json")"
check_eq "the checks run in order: config, database, node, guest, keys, zerto, webhook, jail" \
	"config database node guest keys zerto webhook jail" "$(python3 -c '
import json, sys
seen = []
for c in json.load(open(sys.argv[1]))["checks"]:
    if not seen or seen[-1] != c["area"]:
        seen.append(c["area"])
print(" ".join(seen))' "$WORK/doc.json")"
for c in "database schema" "database roles" "database grants" "database worker login" \
	"database scheduler login" "database logins" "database policy" "database inventory" \
	"node proxmox-host:hubris" "node proxmox-host:hubris shell" "guest vm:web01" \
	"guest vm:web01 shell" "guest lxc:nfs-export" "guest lxc:nfs-export shell" "zerto login" "zerto tls" \
	"zerto vm:web01" "webhook webhook-1 http://127.0.0.1:$HP/***"; do
	set -- $c
	check_eq "healthy: $c is ok" ok "$(status_of "$1" "${*:2}")"
done
check_eq "healthy: the jail helper is ok" ok "$(status_of jail helper)"
check_out "  it names the helper it copies to targets" 'airlock-jail \([0-9]+ bytes\)' field_of jail helper detail
check_eq "a target not probed yet is skipped in the jail area" skip "$(status_of jail vm:db01)"
check_out "  the shell check says which bash runs the node's commands" '^bash [0-9.]+.* at /.*bash runs every command' \
	field_of node "proxmox-host:hubris shell" detail
check_eq "  a guest that cannot run commands has no shell check" absent "$(status_of guest "vm:db01 shell")"
check_eq "a VM without an agent is a warning with the fix" warn "$(status_of guest vm:db01)"
check_out "  the fix says how to enable the agent" 'qm set 102 --agent enabled=1' field_of guest vm:db01 fix
check_eq "a hung agent is a warning" warn "$(status_of guest vm:zimaos)"
check_eq "a stopped container is a warning" warn "$(status_of guest lxc:backup)"
check_out "  the fix names pct start" 'pct start 202' field_of guest lxc:backup fix
check_eq "a VM Zerto does not protect is a warning" warn "$(status_of zerto vm:db01)"
check_out "human output: one line per check and a summary" '^doctor: [0-9]+ ok, [0-9]+ warning\(s\), 0 failed' \
	$A doctor --config "$DOC_CFG" --timeout-ms 5000
check_rc "doctor --help exits 0" 0 $A doctor --help
check_rc "a stray argument is a usage error" 2 $A doctor extra
check_rc "a bad --timeout-ms is a usage error" 2 $A doctor --timeout-ms 5

# ---- the configuration
bad=$(write_config doc_bad "no_such_key: 1")
doc_json "$bad"
check_eq "invalid config: exit 1" 1 "$DOC_RC"
check_eq "invalid config: the config check fails" fail "$(status_of config "$bad")"
check_out "  naming the key and line" 'no_such_key' field_of config "$bad" detail
check_eq "  and the node checks say why they were skipped" skip "$(status_of node 'all nodes')"

# ---- the database
doc_json "$DOC_CFG" --db "host=127.0.0.1 port=1 dbname=airlock user=postgres connect_timeout=5"
check_eq "database unreachable: exit 1" 1 "$DOC_RC"
check_eq "  the connection check fails" fail "$(status_of database connection)"
check_out "  with the fix" 'pg_hba.conf' field_of database connection fix

saved=$(q "SELECT sha256 FROM airlock.schema_migrations WHERE name = '$shipped_last'")
q "DELETE FROM airlock.schema_migrations WHERE name = '$shipped_last'"
check_eq "fault: $shipped_last unrecorded" 0 "$(q "SELECT count(*) FROM airlock.schema_migrations WHERE name = '$shipped_last'")"
doc_json "$DOC_CFG"
check_eq "older schema: the schema check fails" fail "$(status_of database schema)"
check_out "  naming both versions" "older than this airlock needs \($shipped_ver\)" field_of database schema detail
check_out "  and the fix is airlock migrate" 'airlock migrate' field_of database schema fix
q "INSERT INTO airlock.schema_migrations (name, sha256) VALUES ('$shipped_last', '$saved')"

q "CREATE ROLE carol LOGIN IN ROLE airlock_agent, airlock_operator" >/dev/null
check_eq "fault: carol is agent and operator" t \
	"$(q "SELECT pg_has_role('carol', 'airlock_agent', 'MEMBER') AND pg_has_role('carol', 'airlock_operator', 'MEMBER')")"
doc_json "$DOC_CFG"
check_eq "a login both agent and operator fails" fail "$(status_of database carol)"
check_out "  the fix revokes one role" 'REVOKE airlock_agent FROM carol' field_of database carol fix
q "DROP ROLE carol"

q "GRANT EXECUTE ON FUNCTION airlock.approve(bigint, text, boolean) TO airlock_agent"
check_eq "fault: agents may approve" t \
	"$(q "SELECT has_function_privilege('airlock_agent', 'airlock.approve(bigint,text,boolean)', 'EXECUTE')")"
doc_json "$DOC_CFG"
check_out "a grant that breaks the model fails the grants check" 'airlock_agent may execute airlock.approve' \
	field_of database grants detail
q "REVOKE EXECUTE ON FUNCTION airlock.approve(bigint, text, boolean) FROM airlock_agent"

nouser=$(write_config doc_nouser "${ZCFG[@]}")
sed -i 's/user=airlockd"/user=nobody_here"/' "$nouser"
doc_json "$nouser"
check_eq "a worker login that does not exist fails" fail "$(status_of database 'worker login')"
check_out "  the fix creates it in airlock_worker" 'CREATE ROLE nobody_here LOGIN IN ROLE airlock_worker' \
	field_of database 'worker login' fix

# ---- the nodes
ssh-keygen -q -t ed25519 -N '' -f "$WORK/other_host_key"
printf '[127.0.0.1]:%s %s\n' "$AIRLOCK_RIG_SSH_PORT" "$(cut -d' ' -f1,2 "$WORK/other_host_key.pub")" \
	>"$WORK/wrong_known_hosts"
check "fault: the pinned host key is not the node's" \
	sh -c "! cmp -s '$WORK/wrong_known_hosts' '$AIRLOCK_RIG_KNOWN_HOSTS'"
hk=$(write_config doc_hk)
sed -i "s|known_hosts: .*|known_hosts: $WORK/wrong_known_hosts|" "$hk"
doc_json "$hk"
check_eq "a changed host key fails the node" fail "$(status_of node proxmox-host:hubris)"
check_out "  as a host key problem" 'hostkey' field_of node proxmox-host:hubris detail
check_out "  the fix compares fingerprints out of band" 'ssh-keyscan -p' field_of node proxmox-host:hubris fix
check_eq "  and its guests are skipped" skip "$(status_of guest vm:web01)"

ssh-keygen -q -t ed25519 -N '' -f "$WORK/stranger_key"
sk=$(write_config doc_sk)
sed -i "s|private_key: .*|private_key: $WORK/stranger_key|" "$sk"
doc_json "$sk"
check_eq "a key the node does not know fails the node" fail "$(status_of node proxmox-host:hubris)"
check_out "  the fix is authorized_keys with from=" 'authorized_keys.*from=' field_of node proxmox-host:hubris fix

# a key on the node that is neither airlockd's nor a cluster node's: the
# agent host's, logging in (the side door shown open first)
cp "$WORK/authorized_keys.rig" "$AK"
check "fault: the agent host's key logs in to the node" \
	ssh -i "$AIRLOCK_RIG_AGENT_KEY" -o IdentitiesOnly=yes -o BatchMode=yes -o IdentityAgent=none \
	-o UserKnownHostsFile="$AIRLOCK_RIG_KNOWN_HOSTS" -p "$AIRLOCK_RIG_SSH_PORT" root@127.0.0.1 true
doc_json "$DOC_CFG"
check_eq "a foreign key on the node fails doctor" 1 "$DOC_RC"
check_out "  named by its fingerprint, file and line" \
	"fail: ED25519 $(ssh-keygen -lf "$AIRLOCK_RIG_AGENT_KEY.pub" | awk '{print $2}' | sed 's/[+]/\\+/g') in /root/.ssh/authorized_keys:2 is neither airlockd's nor a cluster node's" \
	python3 -c 'import json,sys; [print(c["status"] + ": " + c["detail"]) for c in json.load(open(sys.argv[1]))["checks"] if c["area"] == "keys"]' "$WORK/doc.json"
check_out "  the fix names the line to remove" 'remove line 2 of /root/.ssh/authorized_keys on proxmox-host:hubris' \
	field_of keys "proxmox-host:hubris root keys" fix
check_eq "  and the node itself is still ok" ok "$(status_of node proxmox-host:hubris)"
grep -vF "$(cut -d' ' -f2 "$AIRLOCK_RIG_AGENT_KEY.pub")" "$WORK/authorized_keys.rig" >"$AK"

rigssh() { ssh -F "$AIRLOCK_RIG_SSH_CONFIG" "$AIRLOCK_RIG_NODE" "$@"; }
$AIRLOCK_RIG_CTL vm 101 agent-stop >/dev/null
check "fault: VM 101's agent no longer answers" sh -c "! ssh -F '$AIRLOCK_RIG_SSH_CONFIG' '$AIRLOCK_RIG_NODE' 'qm agent 101 ping' 2>/dev/null"
doc_json "$DOC_CFG"
check_eq "a dead guest agent is a warning" warn "$(status_of guest vm:web01)"
check_out "  and doctor says the database still thinks it runs" 'database still says running' field_of guest vm:web01 detail
$AIRLOCK_RIG_CTL vm 101 agent-start >/dev/null
check "VM 101's agent answers again" rigssh 'qm agent 101 ping'

q "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"vm:ghost\", \"type\": \"vm\", \"node\": \"proxmox-host:hubris\", \"vmid\": 150}]}')" >/dev/null
check "fault: the node has no VM 150" sh -c "! ssh -F '$AIRLOCK_RIG_SSH_CONFIG' '$AIRLOCK_RIG_NODE' 'qm agent 150 ping' 2>/dev/null"
doc_json "$DOC_CFG"
check_eq "an inventory guest the node lacks fails" fail "$(status_of guest vm:ghost)"
check_out "  the fix is the inventory" 'inventory.yaml' field_of guest vm:ghost fix
q "DELETE FROM airlock.entities WHERE slug = 'vm:ghost'"

# ---- the ZVM
echo wrong-secret >"$WORK/wrong.secret"
check "fault: the secret is not the simulator's" sh -c "! cmp -s '$WORK/wrong.secret' '$ZVMSIM_SECRET_FILE'"
zs=$(write_config doc_zs "${ZCFG[@]}")
sed -i "s|secret_file: .*|secret_file: $WORK/wrong.secret|" "$zs"
doc_json "$zs"
check_eq "a wrong Zerto secret fails the login" fail "$(status_of zerto login)"
check_out "  the fix names client_id and the secret" 'client_id and the secret' field_of zerto login fix

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/other-ca.key" -out "$WORK/other-ca.pem" \
	-days 1 -subj /CN=not-the-zvm-ca 2>/dev/null
check "fault: the CA is not the one that signed the ZVM" \
	sh -c "! curl -fsS --cacert '$WORK/other-ca.pem' '$ZVMSIM_URL/v1/localsite' >/dev/null 2>&1"
zt=$(write_config doc_zt "${ZCFG[@]}")
sed -i "s|ca_file: .*|ca_file: $WORK/other-ca.pem|" "$zt"
doc_json "$zt"
check_eq "a wrong CA fails the TLS check" fail "$(status_of zerto tls)"
check_out "  the fix is ca_file" 'ca_file must hold the CA' field_of zerto tls fix

q "SELECT airlock.seed_inventory('{\"entities\": [{\"slug\": \"vm:db01\", \"type\": \"vm\", \"node\": \"proxmox-host:hubris\", \"vmid\": 102, \"zerto_vm_identifier\": \"no-such-zerto-vm\"}]}')" >/dev/null
check_eq "fault: db01 is mapped to a Zerto VM that does not exist" no-such-zerto-vm \
	"$(q "SELECT zerto_vm_identifier FROM airlock.entities WHERE slug = 'vm:db01'")"
doc_json "$DOC_CFG"
check_eq "a wrong VM-to-Zerto mapping fails" fail "$(status_of zerto vm:db01)"
check_out "  the fix is zerto_vm_identifier" 'zerto_vm_identifier' field_of zerto vm:db01 fix
q "UPDATE airlock.entities SET zerto_vm_identifier = NULL WHERE slug = 'vm:db01'"

# ---- the webhooks
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
check "fault: nothing listens on port $closed" sh -c "! curl -fsS -m 5 http://127.0.0.1:$closed/ >/dev/null 2>&1"
wh=$(write_config doc_wh "webhooks:" "  - url: http://127.0.0.1:$closed/ops")
doc_json "$wh"
check_eq "an unreachable webhook fails" fail "$(status_of webhook "webhook-1 http://127.0.0.1:$closed/***")"
check_eq "  and doctor POSTed nothing to the live one meanwhile" 0 "$(ls "$WORK/hooks" | wc -l)"
# A webhook's URL carries its secret after the host (a chat service's token
# in the path, a key in the query, a password before the host): the report
# names the webhook and shows the URL as the daemon's logs do.
wh=$(write_config doc_secret "webhooks:" "  - name: team-chat" \
	"    url: http://opsbot:pw-53cr3t@127.0.0.1:$HP/hooks/T0-t0k3n-53cr3t?key=k3y-53cr3t")
doc_json "$wh"
check_eq "a webhook with secrets in its URL is named, its URL redacted" ok \
	"$(status_of webhook "team-chat http://***@127.0.0.1:$HP/***?***")"
check "  no part of its secrets is in the report (JSON) or on stderr" \
	sh -c "! grep -q 53cr3t '$WORK/doc.json' '$WORK/doc.err'"
out=$($A doctor --config "$wh" --timeout-ms 5000 2>&1)
check "  nor in the report for people" sh -c "! printf '%s' \"\$1\" | grep -q 53cr3t" _ "$out"
check_out "  which names it too" 'team-chat http://\*\*\*@127\.0\.0\.1' printf '%s\n' "$out"

# ---- healthy again after every fault was undone
doc_json "$DOC_CFG"
check_eq "every fault undone: doctor exits 0 again" 0 "$DOC_RC"
cp "$WORK/authorized_keys.rig" "$AK" # the rig as it was, for the parts after this one
