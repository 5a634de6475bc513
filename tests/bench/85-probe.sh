#!/bin/bash
# 85-probe: one probe round of a node with many guests.  The rig's node gets
# PROBE_BENCH_GUESTS cheap VMs (default 500; one process serves all their
# agents: rigctl guests-add) besides its own 3 VMs and 4 CTs; the inventory
# lists only the node, so discovery finds every guest.  A real airlockd with
# its scheduler probes every 2 s; the numbers are the daemon's own
# evt=probe.round lines: the first round (every guest new: discovery inserts
# them, each jail is tried once) and the rounds after it (discovery, one
# batched agent probe for the node, pct status per CT, the host's checks and
# one record per entity).
#   PROBE_BENCH_GUESTS  cheap VMs (default 500)
#   PROBE_BENCH_ROUNDS  rounds measured after the first (default 3)
set -uo pipefail
cd "$(dirname "$0")/../.."
[ "${AIRLOCK_PGTMP:-}" ] || exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
. tests/lib.sh
. tests/daemon/lib.sh

N=${PROBE_BENCH_GUESTS:-500}
ROUNDS=${PROBE_BENCH_ROUNDS:-3}
$AIRLOCK_RIG_CTL guests-add "$N" >/dev/null || { echo "85-probe: guests-add failed"; exit 1; }
$A migrate >/dev/null || exit 1
mkdir -p "$WORK/seeds"
cp seeds/policy.yaml seeds/tools.yaml seeds/gate.yaml "$WORK/seeds/"
cat >"$WORK/seeds/inventory.yaml" <<EOI
entities:
  - slug: proxmox-host:pverig
    type: proxmox-host
    address: 127.0.0.1
    port: $AIRLOCK_RIG_SSH_PORT
    ssh_user: root
EOI
$A seed "$WORK/seeds" >/dev/null 2>&1 || { echo "85-probe: seed failed"; exit 1; }
q "CREATE ROLE airlockd LOGIN IN ROLE airlock_worker; CREATE ROLE probe LOGIN IN ROLE airlock_scheduler;" >/dev/null
WORKERS=2 PER_NODE=2 write_config bench \
	"scheduler_database: \"host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=probe\"" \
	"probes:" "  interval_s: 2" >/dev/null
start_daemon bench || { echo "85-probe: airlockd did not start"; exit 1; }
want=$((ROUNDS + 1))
for _ in $(seq 1 1200); do
	[ "$(grep -c 'evt=probe.round ' "$WORK/bench.log")" -ge "$want" ] && break
	sleep 0.5
done
kill -TERM "$DPID"
wait "$DPID" 2>/dev/null
grep 'evt=probe.round ' "$WORK/bench.log" | head -n "$want" >"$WORK/rounds"
[ "$(wc -l <"$WORK/rounds")" -ge "$want" ] || { echo "85-probe: fewer than $want rounds"; tail "$WORK/bench.log"; exit 1; }
entities=$(q "SELECT count(*) FROM airlock.entities")
ok=$(q "SELECT count(*) FROM airlock.entities WHERE attributes->>'qemu_guest_agent' = 'running'")
echo "probe round, 1 node, $entities entities ($N cheap VMs + the rig's 3 VMs, 4 CTs, the host); agents running: $ok"
i=0
while read -r line; do
	ms=$(sed -E 's/.* ms=([0-9]+).*/\1/' <<<"$line")
	n=$(sed -E 's/.* entities=([0-9]+).*/\1/' <<<"$line")
	if [ $i = 0 ]; then
		echo "  round 1 (all new: discovery inserts, jails tried): $n entities, $ms ms"
	else
		echo "  round $((i + 1)) (steady):                            $n entities, $ms ms"
	fi
	i=$((i + 1))
done <"$WORK/rounds"
grep -E 'evt=discover.round' "$WORK/bench.log" | head -2 | sed 's/^/  /'
