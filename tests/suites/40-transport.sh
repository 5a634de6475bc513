#!/bin/bash
# 40-transport: the SSH transport against the Proxmox rig (tests/rig/rigctl):
# a real sshd playing the node, the real qemu-ga in VM sandboxes, qm/pct shims.
# First the rig itself (the shims follow the real CLI), then
# build/integration/transport_test (tests/integration/transport_test.c).
# The rig is torn down by PID on every exit path.
set -uo pipefail
cd "$(dirname "$0")/../.."

for tool in /usr/sbin/sshd /usr/sbin/qemu-ga ssh ssh-keygen /usr/bin/python3; do
	command -v "$tool" >/dev/null || { echo "40-transport: $tool missing (scripts/install-deps)"; exit 1; }
done
make -s build/integration/transport_test || exit 1

root=$(mktemp -d /tmp/alr.XXXXXX)
trap 'tests/rig/rigctl --root "$root" down' EXIT
tests/rig/rigctl --root "$root" up >/dev/null || exit 1
set -a
. "$root/rig.env"
set +a

fails=0
# expect NAME WANT_RC WANT_STDOUT_REGEX WANT_STDERR_REGEX -- REMOTE COMMAND LINE
expect() {
	local name=$1 want_rc=$2 want_out=$3 want_err=$4
	shift 5
	local out err rc
	out=$(ssh -F "$AIRLOCK_RIG_SSH_CONFIG" "$AIRLOCK_RIG_NODE" "$*" 2>"$root/err")
	rc=$?
	err=$(cat "$root/err")
	if [ "$rc" = "$want_rc" ] && [[ "$out" =~ $want_out ]] && [[ "$err" =~ $want_err ]]; then
		echo "ok - rig: $name"
	else
		echo "not ok - rig: $name (rc=$rc out=$out err=$err)"
		fails=$((fails + 1))
	fi
}
expect "qm guest exec prints Perl-style JSON" 0 \
	'^\{
   "err-data" : "err\\n",
   "err-truncated" : 0,
   "exitcode" : 3,
   "exited" : 1,
   "out-data" : "hi\\n",
   "out-truncated" : 0
\}$' '^$' -- "qm guest exec 101 -- /bin/sh -c 'echo hi; echo err >&2; exit 3'"
expect "out-data is double UTF-8 encoded" 0 '"out-data" : "grÃ¼n"' '' -- \
	"qm guest exec 101 -- /bin/sh -c 'printf \"gr\\303\\274n\"'"
expect "--timeout returns the pid" 0 '^\{
   "pid" : [0-9]+
\}$' '^timeout reached, returning pid$' -- "qm guest exec 101 --timeout 1 -- /bin/sh -c 'sleep 3'"
expect "Getopt permute mode: -la is an option" 255 '^$' 'Unknown option: la' -- "qm guest exec 101 ls -la"
expect "a bare boolean swallows the next word" 255 '' "pass-stdin: type check \('boolean'\) failed - got '/bin/cat'" -- \
	"qm guest exec 101 --pass-stdin /bin/cat"
expect "qm agent ping: silent success" 0 '^$' '^$' -- "qm agent 101 ping"
expect "no agent configured" 255 '^$' '^No QEMU guest agent configured$' -- "qm agent 102 ping"
expect "hung agent" 255 '^$' '^QEMU guest agent is not running$' -- "qm agent 103 ping"
expect "missing VM" 255 '' "^Configuration file 'nodes/pverig/qemu-server/999.conf' does not exist$" -- "qm agent 999 ping"
expect "exec-status reaps once" 255 '' "^Agent error: Invalid parameter 'pid'$" -- \
	"pid=\$(qm guest exec 101 --synchronous 0 -- /bin/true | sed -n 's/.*\"pid\" : //p'); sleep 1; qm guest exec-status 101 \$pid >/dev/null; qm guest exec-status 101 \$pid"
expect "guest-exec info lists guest-exec enabled" 0 '"name" : "guest-exec"' '' -- "qm guest cmd 101 info"
expect "pct exec passes the exit status" 7 '^out$' '^err$' -- "pct exec 201 -- /bin/sh -c 'echo out; echo err >&2; exit 7'"
expect "pct exec: killed = 128+9" 137 '' '' -- "pct exec 201 -- /bin/sh -c 'kill -9 \$\$'"
expect "pct exec: missing command = 127" 127 '' 'Failed to exec "/no/such"' -- "pct exec 201 -- /no/such"
expect "stopped CT" 255 '' "^container '202' not running!$" -- "pct exec 202 -- true"
expect "pct status" 0 '^status: stopped$' '' -- "pct status 202"
expect "guests are isolated: own hostname, read-only /usr" 1 '^ct201$' 'Read-only file system' -- \
	"pct exec 201 -- /bin/sh -c 'hostname; touch /usr/airlock-x'"
expect "the node is a sandbox: own root and pid namespace" 1 '^pverig 1$' 'Read-only' -- \
	"echo \$(hostname) \$(ps -e -o pid= | sort -n | head -1); touch /usr/airlock-x"
expect "apt-get on the node is the recording shim" 0 'Setting up nfs-kernel-server' '' -- \
	"apt-get install -y nfs-kernel-server"
grep -q "	shim:apt-get	apt-get install -y nfs-kernel-server$" "$AIRLOCK_RIG_LOG" &&
	echo "ok - rig: the command log recorded the apt-get request" ||
	{ echo "not ok - rig: apt-get missing from the command log"; fails=$((fails + 1)); }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# prog CMD...: a test program's failure is a `not ok` line with how it ended,
# also when it died before printing its own (a signal, a sanitizer's abort).
prog() {
	"$@"
	local rc=$? how
	[ "$rc" -eq 0 ] && return 0
	how="exit $rc"
	[ "$rc" -gt 128 ] && how="killed by SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
	echo "not ok - $* failed ($how)"
	fails=$((fails + 1))
}
prog build/integration/transport_test

# A real host key change: sshd gets a new key, known_hosts keeps the old one.
old_fp=$AIRLOCK_RIG_HOSTKEY_SHA256
tests/rig/rigctl --root "$root" node rekey || fails=$((fails + 1))
set -a
. "$root/rig.env"
set +a
[ "$old_fp" != "$AIRLOCK_RIG_HOSTKEY_SHA256" ] && echo "ok - rig: node rekey changed the host key" ||
	{ echo "not ok - rig: node rekey kept the key"; fails=$((fails + 1)); }
expect "OpenSSH refuses the changed key too" 255 '' 'HOST IDENTIFICATION HAS CHANGED' -- true
prog build/integration/transport_test rekeyed
[ "$fails" -eq 0 ]
