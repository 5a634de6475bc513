#!/bin/bash
# 40-transport: a trivial command (`true`) on the rig's host, VM 101 and CT 201
# through the pooled transport (one libssh2 session, a channel per command),
# side by side in one run with (a) a fresh `ssh` process per command and
# (b) OpenSSH ControlMaster -- the same remote command lines, the same rig.
#   TRANSPORT_BENCH_N   commands per target and method (default 40)
set -uo pipefail
cd "$(dirname "$0")/../.."
make -s build/bench/transport_bench || exit 1

root=$(mktemp -d /tmp/alr.XXXXXX)
cm="$root/client/cm"
cleanup() {
	[ -S "$cm" ] && ssh -F "$root/client/ssh_config" -o ControlPath="$cm" -O exit pverig 2>/dev/null
	tests/rig/rigctl --root "$root" down
}
trap cleanup EXIT
tests/rig/rigctl --root "$root" up >/dev/null || exit 1
set -a
. "$root/rig.env"
set +a
ssh -F "$AIRLOCK_RIG_SSH_CONFIG" -o ControlMaster=yes -o ControlPath="$cm" -o ControlPersist=600 \
	-fN "$AIRLOCK_RIG_NODE" || exit 1
echo "rig: $AIRLOCK_RIG_ROOT, sshd 127.0.0.1:$AIRLOCK_RIG_SSH_PORT, $(nproc) CPUs"
build/bench/transport_bench "${TRANSPORT_BENCH_N:-40}" "$cm"
