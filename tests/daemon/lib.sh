# tests/daemon/lib.sh -- set-up for tests that run a real airlockd against the
# rig and a throwaway database.  Source after tests/lib.sh, inside
# scripts/pgtmp and `rigctl run` (PG* and AIRLOCK_RIG_* are set).
A=build/bin/airlock
D=build/bin/airlockd
WORK=$(mktemp -d /tmp/airlock-dtest.XXXXXX)
DAEMON_PIDS=()

cleanup_daemons() {
	for p in "${DAEMON_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup_daemons EXIT

q() { psql -XAtq -c "$1"; }

# The incident's estate, pointed at the rig's node.
setup_db() {
	$A migrate >/dev/null || return 1
	cp -r seeds "$WORK/seeds"
	sed -i "s/^    port: 2222$/    port: $AIRLOCK_RIG_SSH_PORT/" "$WORK/seeds/inventory.yaml"
	$A seed "$WORK/seeds" >/dev/null || return 1
	q "CREATE ROLE airlockd LOGIN IN ROLE airlock_worker;
	   CREATE ROLE hermes LOGIN IN ROLE airlock_agent;
	   CREATE ROLE alice LOGIN IN ROLE airlock_operator;
	   CREATE ROLE bob LOGIN IN ROLE airlock_operator;" >/dev/null
}

# write_config NAME [EXTRA YAML LINES]: a config for one daemon.
write_config() {
	local name=$1
	shift
	cat >"$WORK/$name.yaml" <<EOC
worker_id: $name
database: "host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=airlockd"
workers: ${WORKERS:-4}
per_node: ${PER_NODE:-4}
poll_interval_ms: 500
reap_interval_ms: 200
expire_interval_ms: 200
log_level: ${LOG_LEVEL:-info}
ssh:
  private_key: $AIRLOCK_RIG_SSH_KEY
  known_hosts: $AIRLOCK_RIG_KNOWN_HOSTS
  connect_timeout_ms: 5000
durability:
  allow_fsync_off: ${ALLOW_FSYNC_OFF:-true}
execution:
  command_timeout_s: 60
  qm_timeout_s: 5
  output_cap_bytes: 65536
$(printf '%s\n' "$@")
EOC
	echo "$WORK/$name.yaml"
}

# start_daemon NAME: starts airlockd with $WORK/NAME.yaml; its pid in $DPID.
# Returns once it has logged evt=daemon.started (its signal handlers are set).
start_daemon() {
	local before i=0
	# The log exists before the daemon does: a grep of a missing file counts
	# nothing (not 0), which would end the wait below before it began.
	: >>"$WORK/$1.log"
	before=$(grep -c ' evt=daemon.started worker=' "$WORK/$1.log")
	$D -c "$WORK/$1.yaml" --grace "${GRACE:-10}" >>"$WORK/$1.log" 2>&1 &
	DPID=$!
	DAEMON_PIDS+=("$DPID")
	while [ "$(grep -c ' evt=daemon.started worker=' "$WORK/$1.log" 2>/dev/null)" = "${before:-0}" ]; do
		kill -0 "$DPID" 2>/dev/null || return 1
		[ $i -lt 600 ] || { echo "start_daemon $1: no evt=daemon.started after 60 s" >&2; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
}

# wait_for SECONDS SQL: until the query returns 't' (a bound, not a timing test).
wait_for() {
	local limit=$(($1 * 10)) i=0
	while [ $i -lt $limit ]; do
		[ "$(q "$2" 2>/dev/null)" = "t" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

state_of() { q "SELECT state FROM airlock.executions WHERE id = $1"; }

# as_agent CMD...: run the airlock CLI as the agent hermes.
as_agent() { PGUSER=hermes "$@"; }
as_alice() { PGUSER=alice "$@"; }
as_bob() { PGUSER=bob "$@"; }

# ran_count TEXT: how many commands containing TEXT reached the rig's node
# over SSH (a VM or CT command is logged again inside the guest, and the
# recording shims log their own line: those are not counted twice).
ran_count() { grep -F "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" 2>/dev/null | grep -cF -- "$1" || true; }

# wait_hook SECONDS TEXT NAME: until a webhook body received at /NAME contains TEXT.
wait_hook() {
	local limit=$(($1 * 10)) i=0
	while [ $i -lt $limit ]; do
		cat "$WORK"/hooks/"$3".*.json 2>/dev/null | grep -qF -- "$2" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# wait_log SECONDS TEXT NAME: until daemon NAME's log contains TEXT.
wait_log() {
	local limit=$(($1 * 10)) i=0
	while [ $i -lt $limit ]; do
		grep -qF -- "$2" "$WORK/$3.log" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# node_cmds PREFIX: the "echo PREFIX-N" commands that reached the rig's node,
# one per line, as sent (the login shell gets /bin/sh -c '<command>').
node_cmds() {
	grep -F "$(printf '\tnode\t')" "$AIRLOCK_RIG_LOG" | grep -oE "'echo $1-[0-9]+'\$" | tr -d "'"
}

# pgcpu: CPU ticks spent by this cluster only (other sessions' clusters run
# on the machine too): the postmaster with the children it has reaped, and
# its live children.  For the benches.
pgcpu() {
	local t p pgmaster
	pgmaster=$(head -1 "$AIRLOCK_PGTMP/data/postmaster.pid")
	t=$(awk '{print $14 + $15 + $16 + $17}' /proc/$pgmaster/stat)
	for p in $(pgrep -P "$pgmaster"); do t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat 2>/dev/null || echo 0))); done
	echo $t
}

# log_shape FILE...: every line of these daemon logs is one key=value event
# that starts with its time (RFC 3339, UTC, milliseconds) and its level;
# prints the lines that are not, and fails when there is any (or no line).
log_shape() {
	local n bad
	n=$(cat "$@" 2>/dev/null | wc -l)
	bad=$(cat "$@" 2>/dev/null | grep -vE '^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z level=(debug|info|warn|error|fatal) [a-z_]+=')
	[ "$n" -gt 0 ] && [ -z "$bad" ] || { printf '%s lines; not in shape:\n%s\n' "$n" "$bad" | head -5; return 1; }
}
