#!/bin/bash
# 85-probe: probe rounds of a node with many guests.  The rig's node gets
# PROBE_BENCH_GUESTS cheap VMs (default 500; one process serves all their
# agents: rigctl guests-add) besides its own 3 VMs and 4 CTs; the inventory
# lists only the node, so discovery finds every guest.  A real airlockd with
# its scheduler probes every 2 s; the numbers are the daemon's own
# evt=probe.round lines: the first round (every guest new), the rounds that
# then try each new target's read-only jail (a bounded number per round),
# and the steady rounds once every jail was tried (discovery, one batched
# agent probe and one pct list for the node, the host's checks and one
# record per entity).
# Agents the batch could not decide (the rig's hung agent, the VM without
# one) are asked with qm off the round, by the prober's qm lane: its
# evt=probe.qm_done lines say how long qm took, and when what it said was
# recorded.
#   PROBE_BENCH_GUESTS  cheap VMs (default 500)
#   PROBE_BENCH_LOG     a file to keep the daemon's log in
set -uo pipefail
cd "$(dirname "$0")/../.."
[ "${AIRLOCK_PGTMP:-}" ] || exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
. tests/lib.sh
. tests/daemon/lib.sh

N=${PROBE_BENCH_GUESTS:-500}
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
# Until three rounds have tried no jail (every target's was tried once).
for _ in $(seq 1 1800); do
	[ "$(grep -c 'evt=probe.round .* jails=0 ' "$WORK/bench.log")" -ge 3 ] && break
	sleep 0.5
done
kill -TERM "$DPID"
wait "$DPID" 2>/dev/null
[ -n "${PROBE_BENCH_LOG:-}" ] && cp "$WORK/bench.log" "$PROBE_BENCH_LOG"
grep 'evt=probe.round ' "$WORK/bench.log" >"$WORK/rounds"
[ "$(grep -c ' jails=0 ' "$WORK/rounds")" -ge 3 ] || { echo "85-probe: no steady rounds"; tail "$WORK/bench.log"; exit 1; }
entities=$(q "SELECT count(*) FROM airlock.entities")
ok=$(q "SELECT count(*) FROM airlock.entities WHERE attributes->>'qemu_guest_agent' = 'running'")
echo "probe rounds, 1 node, $entities entities ($N cheap VMs + the rig's 3 VMs, 4 CTs, the host); agents running: $ok"
field() { sed -E "s/.* $1=([0-9]+).*/\\1/"; }
first=$(head -1 "$WORK/rounds")
echo "  round 1 (all new: discovery inserts):    $(field ms <<<"$first") ms, $(field jails <<<"$first") jails tried"
catchup=$(grep -v ' jails=0 ' "$WORK/rounds" | tail -n +2)
if [ -n "$catchup" ]; then
	n=$(wc -l <<<"$catchup")
	ms=$(field ms <<<"$catchup" | sort -n | sed -n '1p;$p' | paste -sd' ')
	echo "  $n rounds trying the other jails:       $(cut -d' ' -f1 <<<"$ms") to $(cut -d' ' -f2 <<<"$ms") ms"
fi
grep ' jails=0 ' "$WORK/rounds" | head -3 | while read -r line; do
	echo "  steady round (every jail tried):        $(field ms <<<"$line") ms"
done
echo "  where the time went (the daemon's own lines: round 1, then the last steady one):"
sed -n '1p;$p' "$WORK/rounds" | sed -E 's/^ts=[^ ]+ level=info evt=probe.round /    /'
grep -E 'evt=discover.round' "$WORK/bench.log" | sed -n '1p;$p' | sed 's/^/  /'
echo "  qm off the round (the lane), the first time and the last:"
grep 'evt=probe.qm_done ' "$WORK/bench.log" | sed -n '1p;$p' | sed -E 's/^ts=[^ ]+ level=info evt=probe.qm_done /    /'
zima=$(q "SELECT slug || ' ' || coalesce(attributes->>'qemu_guest_agent', '-') FROM airlock.entities WHERE type = 'vm' AND vmid = 103")
echo "  the hung agent (VM 103) recorded: $zima"
