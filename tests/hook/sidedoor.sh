#!/bin/bash
# The side door, proven open and then closed, on the rig.  The rig's node
# accepts a second key, $AIRLOCK_RIG_AGENT_KEY, as an agent's host that
# still holds one would; here it is on the "agent's host" (a home directory
# of its own), in each place an SSH client finds keys.  `airlock hook
# --check` (and `airlock doctor --agent-host`) must report it, name what to
# remove and exit non-zero, without ever logging in; airlockd's side
# (`airlock doctor`) must list every key the node accepts for root and flag
# that one; with the key removed from the node, both are clean.  The node is
# laid out as Proxmox keeps root's keys: /root/.ssh/authorized_keys links to
# the cluster file /etc/pve/priv/authorized_keys, which also holds the
# node's own root key.  Runs inside scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || exit 1
# this test reports many checks a minute (the limit has a test of its own)
q "UPDATE airlock.gate_door_limits SET host_checks_per_minute = 1000" >/dev/null
NODE=$AIRLOCK_RIG_ROOT/node
AH=$WORK/agent-host # the agent's host: its home directory
OP="host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=alice"
AG="host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=hermes"
fp_re() { ssh-keygen -lf "$1" | awk '{print $2}' | sed 's/[+]/\\+/g'; } # a fingerprint as a regex
agent_fp=$(fp_re "$AIRLOCK_RIG_AGENT_KEY.pub")
daemon_fp=$(fp_re "$AIRLOCK_RIG_SSH_KEY.pub")

# ---- the node as Proxmox lays it out
mkdir -p "$NODE/etc/pve/priv" && chmod 700 "$NODE/etc/pve/priv"
mv "$NODE/root/.ssh/authorized_keys" "$NODE/etc/pve/priv/authorized_keys"
ln -s /etc/pve/priv/authorized_keys "$NODE/root/.ssh/authorized_keys"
ssh-keygen -q -t ed25519 -N '' -C root@pverig -f "$NODE/root/.ssh/id_ed25519"
cat "$NODE/root/.ssh/id_ed25519.pub" >>"$NODE/etc/pve/priv/authorized_keys"
own_fp=$(fp_re "$NODE/root/.ssh/id_ed25519.pub")
rig_ssh() { # KEY: a login as root with that key alone
	ssh -i "$1" -o IdentitiesOnly=yes -o BatchMode=yes -o IdentityAgent=none \
		-o UserKnownHostsFile="$AIRLOCK_RIG_KNOWN_HOSTS" -p "$AIRLOCK_RIG_SSH_PORT" root@127.0.0.1 true
}
check "the node takes airlockd's key through the link to the cluster file" rig_ssh "$AIRLOCK_RIG_SSH_KEY"
check "the side door is there: the agent key logs in too" rig_ssh "$AIRLOCK_RIG_AGENT_KEY"

# ---- the agent's host holds the key
mkdir -p "$AH/.ssh" && chmod 700 "$AH/.ssh"
cp "$AIRLOCK_RIG_AGENT_KEY" "$AH/.ssh/id_ed25519" && chmod 600 "$AH/.ssh/id_ed25519"
$A hook --install --settings "$WORK/cc.json" --db "$AG" --claude-version none >/dev/null
accepted() { grep -c 'Accepted publickey' "$AIRLOCK_RIG_ROOT/log/node.log"; }
node_cmds_now() { grep -cF "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" 2>/dev/null || true; }
hcheck() { env -u SSH_AUTH_SOCK HOME="$AH" "$A" hook --check --settings "$WORK/cc.json" --claude-version none "$@"; }
logins0=$(accepted)
cmds0=$(node_cmds_now)
out=$(hcheck --db "$OP" 2>&1); rc=$?
check_eq "check: a key that logs in to the node: exit 1" 1 "$rc"
check_out "check: ... names the node, the user, the key file and its fingerprint" \
	"^OPEN proxmox-host:hubris: this host logs in to proxmox-host:hubris as root with ~/.ssh/id_ed25519 \\(ED25519 $agent_fp\\)" echo "$out"
check_out "check: ... and what to remove" \
	"fix: delete the key from this host, or remove it from proxmox-host:hubris's authorized_keys for root" echo "$out"
check_out "check: the node's SSH port answering from here is the missing second wall" \
	"^warn proxmox-host:hubris: its SSH port 127.0.0.1:$AIRLOCK_RIG_SSH_PORT answers from this host" echo "$out"
check_out "check: the API port, closed here, is reported closed" "^ok   proxmox-host:hubris: its API port 127.0.0.1:8006 does not answer" echo "$out"
check_out "check: the summary" '^side door: 1 way\(s\) in are open' echo "$out"
check_eq "the check never logged in (no login in the node's sshd log)" "$logins0" "$(accepted)"
check_eq "... and ran nothing on the node" "$cmds0" "$(node_cmds_now)"
check_eq "the result is reported to airlock: one open door, from this host" "1|$(hostname)" \
	"$(q "SELECT open_doors || '|' || host FROM airlock.host_checks ORDER BY id DESC LIMIT 1")"
check_out "operators see it as reported by the agent's host, not verified" \
	"^host_check\|1 open door\(s\)\|this host logs in to proxmox-host:hubris.*\|reported by the agent's host, not verified$" \
	q "SELECT source, finding, detail, provenance FROM airlock.side_door WHERE source = 'host_check' ORDER BY id DESC LIMIT 1"
out=$(env -u SSH_AUTH_SOCK HOME="$AH" $A doctor --agent-host --db "$OP" 2>&1); rc=$?
check_eq "doctor --agent-host: exit 1" 1 "$rc"
check_out "doctor --agent-host: the same open door, in doctor's report" \
	"^FAIL  agent-host  proxmox-host:hubris: open: this host logs in to proxmox-host:hubris as root with ~/.ssh/id_ed25519" echo "$out"

# ---- an agent's own login may not list the nodes: the check says so and fails
out=$(hcheck --db "$AG" 2>&1); rc=$?
check_eq "check as the agent's login: exit 1 (the side door cannot be proven closed)" 1 "$rc"
check_out "... saying why and what to do" "FAIL the managed nodes: cannot list the nodes airlock manages with this login: .*permission denied.*agent's login may not read node addresses" echo "$out"
check_out "... --node names them instead" "^OPEN 127.0.0.1: this host logs in to 127.0.0.1 as root" \
	hcheck --db "$AG" --node "127.0.0.1:$AIRLOCK_RIG_SSH_PORT"

# ---- the same key where else a client finds it
mkdir -p "$AH/keys" && mv "$AH/.ssh/id_ed25519" "$AH/keys/node" && chmod 600 "$AH/keys/node"
printf 'Host pve\n  HostName 127.0.0.1\n  IdentityFile ~/keys/node\n' >"$AH/.ssh/config"
check_out "check: a key named by ~/.ssh/config's IdentityFile" "^OPEN proxmox-host:hubris: .* with ~/keys/node \\(ED25519 $agent_fp\\)" \
	hcheck --db "$OP"
rm "$AH/.ssh/config"
eval "$(ssh-agent -s)" >/dev/null
SSH_ASKPASS=/bin/false ssh-add "$AH/keys/node" 2>/dev/null
rm "$AH/keys/node"
check_out "check: the running ssh-agent's key" "^OPEN proxmox-host:hubris: .* with the running ssh-agent's key" \
	env HOME="$AH" "$A" hook --check --settings "$WORK/cc.json" --claude-version none --db "$OP"
ssh-agent -k >/dev/null
# a token where the agent runs
check_out "check: a Proxmox API token in the environment" \
	'^OPEN this host: \$PVE_TOKEN holds a Proxmox API token \(root@pam!ci\)' \
	env PVE_TOKEN='root@pam!ci=8f6d2c5e-1b7a-4c3d-9e0f-a1b2c3d4e5f6' HOME="$AH" "$A" hook --check --settings "$WORK/cc.json" --claude-version none --db "$OP"
mkdir -p "$AH/.config/pvetool" && printf 'token = "root@pam!ci=8f6d2c5e-1b7a-4c3d-9e0f-a1b2c3d4e5f6"\n' >"$AH/.config/pvetool/config.toml"
check_out "check: ... and in a file under ~/.config" '^OPEN this host: ~/.config/pvetool/config.toml holds a Proxmox API token' hcheck --db "$OP"
rm -r "$AH/.config/pvetool"
# the node's API answering from here: the second wall (a stand-in listener on the node's API port)
api_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c 'import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); time.sleep(120)' "$api_port" &
DAEMON_PIDS+=($!)
q "UPDATE airlock.entities SET attributes = attributes || '{\"api_port\": $api_port}' WHERE slug = 'proxmox-host:hubris'" >/dev/null
for _ in $(seq 50); do python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$api_port" 2>/dev/null && break; sleep 0.1; done
check_out "check: the node's API port answering from here is reported" "^warn proxmox-host:hubris: its API port 127.0.0.1:$api_port answers from this host" hcheck --db "$OP"

# ---- airlockd's side: every key the node accepts for root
write_config p1 >/dev/null
out=$($A doctor --config "$WORK/p1.yaml" 2>&1)
check_out "doctor: the node's authorized_keys links to the cluster file" \
	'ok    keys      proxmox-host:hubris root keys: /root/.ssh/authorized_keys links to /etc/pve/priv/authorized_keys' echo "$out"
check_eq "doctor: ... once, the cluster file itself not said to link anywhere" 1 "$(grep -c 'links to' <<<"$out")"
check_out "doctor: airlockd's key is known as airlockd's" "proxmox-host:hubris root keys: ED25519 $daemon_fp in /etc/pve/priv/authorized_keys:1 is airlockd's" echo "$out"
check_out "doctor: ... and warned that it logs in from any address" "^WARN  keys      proxmox-host:hubris root keys: ED25519 $daemon_fp in /etc/pve/priv/authorized_keys:1 is airlockd's, and it logs in from any address" echo "$out"
check_out "doctor: the node's own root key is the cluster's" "ED25519 $own_fp in /etc/pve/priv/authorized_keys:3 is proxmox-host:hubris's own root key \\(the cluster's\\)" echo "$out"
check_out "doctor: the agent's key is flagged" \
	"^FAIL  keys      proxmox-host:hubris root keys: ED25519 $agent_fp .*in /etc/pve/priv/authorized_keys:2 is neither airlockd's nor a cluster node's" echo "$out"
check_out "doctor: ... with what to do" 'fix: remove line 2 of /etc/pve/priv/authorized_keys on proxmox-host:hubris' echo "$out"
check_eq "doctor ran no command on the node but its fixed checks" 0 \
	"$(grep -F "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" | grep -cE 'rm |sed -i|>>? */etc/pve')"

# ---- the fix: the key out of the node's cluster file
sed -i "/$(awk '{print $2}' "$AIRLOCK_RIG_AGENT_KEY.pub" | sed 's#/#\\/#g')/d" "$NODE/etc/pve/priv/authorized_keys"
check_rc "the side door is shut: the agent key no longer logs in" 255 rig_ssh "$AIRLOCK_RIG_AGENT_KEY"
cp "$AIRLOCK_RIG_AGENT_KEY" "$AH/.ssh/id_ed25519" && chmod 600 "$AH/.ssh/id_ed25519"
kill "${DAEMON_PIDS[-1]}" 2>/dev/null
out=$(hcheck --db "$OP" 2>&1); rc=$?
check_eq "check: with the key off the node, exit 0 (the key on this host opens nothing)" 0 "$rc"
check_out "check: ... says the key does not log in" '^ok   proxmox-host:hubris: none of this host.s 1 SSH key\(s\) logs in to proxmox-host:hubris as root' echo "$out"
check_out "check: ... and that the side door is closed" '^side door: closed' echo "$out"
check_eq "... reported as closed" "0" "$(q "SELECT open_doors FROM airlock.host_checks ORDER BY id DESC LIMIT 1")"
out=$($A doctor --config "$WORK/p1.yaml" 2>&1)
check_out "doctor: every key the node accepts is airlockd's or the cluster's" \
	'ok    keys      proxmox-host:hubris root keys: 2 key\(s\) accepted for root, each airlockd.s or a cluster node.s' echo "$out"
check_eq "doctor: no foreign key left" 0 "$(grep -c 'is neither airlockd' <<<"$out")"
rm "$AH/.ssh/id_ed25519"
check_out "check: a host with no key at all is closed too" '^ok   this host: no SSH key' hcheck --db "$OP"
finish
