# setup.sh -- sourced by tests/suites/75-hook.sh (and to record transcripts):
# a migrated, seeded database, the agent login hermes, the operator's
# destinations, and a HOME whose ssh_config has aliases.  Needs $tmp.
A=build/bin/airlock
# The seeds, with door limits no test of decisions reaches: the suites send
# thousands of calls a minute as one agent (the limits have tests of their own).
mkdir -p "$tmp/seeds" && cp seeds/*.yaml "$tmp/seeds/" || return 1
sed -i -E 's/^(  (hook_match_per_minute|hook_events_per_minute|guards_per_minute):) [0-9]+/\1 100000/' \
	"$tmp/seeds/gate.yaml" || return 1
export HOOK_SEEDS=$tmp/seeds
$A migrate >/dev/null && $A seed "$HOOK_SEEDS" >/dev/null || return 1
psql -qc "CREATE ROLE hermes LOGIN IN ROLE airlock_agent" \
	-c "CREATE ROLE alice LOGIN IN ROLE airlock_operator" \
	-c "CREATE ROLE bob LOGIN IN ROLE airlock_operator" || return 1
psql -qtA -U alice -c "SELECT airlock.set_destination('nodealias', 'managed', 'proxmox-host:hubris')" \
	-c "SELECT airlock.set_destination('zvm.lab', 'managed', NULL, 'the Zerto ZVM')" \
	-c "SELECT airlock.set_destination('203.0.113.5', 'allowed', NULL, 'build box')" \
	-c "SELECT airlock.set_destination('*.git.example', 'allowed', NULL, 'git hosting')" >/dev/null || return 1
export HOME=$tmp/home
mkdir -p "$HOME/.ssh"
cat >"$HOME/.ssh/config" <<'CFG'
Host mybox
	HostName 127.0.0.1
	Port 2222
Host tidy
	HostName 203.0.113.5
CFG
export HOOK_SSH_CONFIG=$HOME/.ssh/config
export AIRLOCK_HOOK_LOG=$tmp/hook.log
HOOK=($A hook --db "user=hermes")
