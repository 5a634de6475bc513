#!/bin/bash
# 40-transport: a trivial command (`true`) on the rig's host, VM 101 and CT 201
# through the pooled transport (one libssh2 session, a channel per command),
# side by side in one run with (a) a fresh `ssh` process per command and
# (b) OpenSSH ControlMaster -- the same remote command lines, the same rig.
# Then the jail's cost: `true` unconfined, in each tier and through
# ControlMaster, taking turns.
#   TRANSPORT_BENCH_N   commands per target and method (default 40)
set -uo pipefail
cd "$(dirname "$0")/../.."
make -s build/bench/transport_bench || exit 1

roots=()
cleanup() {
	for r in "${roots[@]}"; do
		[ -S "$r/client/cm" ] &&
			ssh -F "$r/client/ssh_config" -o ControlPath="$r/client/cm" -O exit pverig 2>/dev/null
		tests/rig/rigctl --root "$r" down
	done
}
trap cleanup EXIT

# bench_on_rig [ARGS...]: a fresh rig, a ControlMaster on it, the driver.
bench_on_rig() {
	local root
	root=$(mktemp -d /tmp/alr.XXXXXX)
	roots+=("$root")
	tests/rig/rigctl --root "$root" up >/dev/null || return 1
	(
		set -a
		. "$root/rig.env"
		set +a
		ssh -F "$AIRLOCK_RIG_SSH_CONFIG" -o ControlMaster=yes -o ControlPath="$root/client/cm" \
			-o ControlPersist=600 -fN "$AIRLOCK_RIG_NODE" || exit 1
		echo "rig: $AIRLOCK_RIG_ROOT, sshd 127.0.0.1:$AIRLOCK_RIG_SSH_PORT, $(nproc) CPUs"
		build/bench/transport_bench "${TRANSPORT_BENCH_N:-40}" "$root/client/cm" "$@"
	)
}

rc=0
bench_on_rig || rc=1
# qm.pm sleeps 1 s between exec-status polls; whichever method a command that
# has not exited by the first poll falls on pays it, at random.  Once more with
# the rig's qm polling every 50 ms, to show the transports' own difference.
echo
echo "VM again, the rig's qm polling exec-status every 50 ms instead of qm.pm's 1 s:"
PVE_SHIM_POLL_INTERVAL=0.05 bench_on_rig vm || rc=1
# The jail's cost per command (unconfined, each tier, ControlMaster, in
# turns), with qm polling every 50 ms so the VM rows show the jail, not qm's
# sleep.
echo
echo "The jail: \`true\` unconfined, in each tier and through ControlMaster (ratio: median / unconfined median):"
PVE_SHIM_POLL_INTERVAL=0.05 bench_on_rig jail || rc=1
exit $rc
