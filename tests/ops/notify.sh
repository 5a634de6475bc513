# tests/ops/notify.sh -- airlockd under a service manager: sd_notify over a
# socket the test listens on (READY=1 once claiming, STOPPING=1 at SIGTERM,
# WATCHDOG=1 while running), and the unit file passes systemd-analyze verify.
# Sourced by tests/ops/run.sh (tests/lib.sh, tests/daemon/lib.sh loaded).

# wait_file SECONDS FILE TEXT: until FILE contains TEXT.
wait_file() {
	local limit=$(($1 * 10)) i=0
	while [ $i -lt $limit ]; do
		grep -qF -- "$3" "$2" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# notify_run NAME SOCKET: one daemon under a notify socket, stopped by SIGTERM.
notify_run() {
	local name=$1 sock=$2 log="$WORK/$1.notify" sink pid rc
	tests/ops/notify_sink.py "$sock" "$log" &
	sink=$!
	DAEMON_PIDS+=("$sink")
	check "$name: the test's notify socket is listening" wait_file 10 "$log.ready" ""
	write_config "$name" >/dev/null
	NOTIFY_SOCKET=$sock WATCHDOG_USEC=300000 WATCHDOG_PID= \
		$D -c "$WORK/$name.yaml" --grace 5 >>"$WORK/$name.log" 2>&1 &
	pid=$!
	DAEMON_PIDS+=("$pid")
	check "$name: READY=1 arrives" wait_file 60 "$log" "READY=1"
	check "$name: READY=1 only after the daemon started claiming" grep -q 'evt=daemon.started' "$WORK/$name.log"
	check "$name: the watchdog is fed" wait_file 30 "$log" "WATCHDOG=1"
	check_eq "$name: nothing said STOPPING before the signal" 0 "$(grep -c STOPPING "$log")"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	check_eq "$name: airlockd exits 0 on SIGTERM" 0 "$rc"
	check "$name: STOPPING=1 was sent" grep -q "STOPPING=1" "$log"
	check_out "$name: in order: READY, then STOPPING" '^READY=1.*STOPPING=1' \
		sh -c "grep -oE 'READY=1|STOPPING=1' '$log' | tr -d '\n'"
	kill "$sink" 2>/dev/null
	wait "$sink" 2>/dev/null
}

notify_run nt1 "$WORK/notify.sock"
notify_run nt2 "@airlock-test-notify-$$"

# Without NOTIFY_SOCKET airlockd runs as before (nothing to tell).
write_config nt3 >/dev/null
start_daemon nt3
check "without a notify socket airlockd still starts" grep -q 'evt=daemon.started' "$WORK/nt3.log"
kill -TERM "$DPID"
wait "$DPID"
check_eq "and stops cleanly" 0 "$?"

# The unit as installed (paths filled in the way `make install` does),
# checked by systemd itself; the man page it names must be findable.
unitdir=$WORK/unit
mkdir -p "$unitdir/man/man8"
cp man/airlockd.8 "$unitdir/man/man8/"
sed -e "s|@SBINDIR@|$PWD/build/bin|g" -e "s|@SYSCONFDIR@|/etc|g" dist/airlockd.service \
	>"$unitdir/airlockd.service"
check "systemd-analyze verify: airlockd.service is clean" \
	env MANPATH="$unitdir/man" systemd-analyze verify "$unitdir/airlockd.service"
for k in 'Type=notify' 'NoNewPrivileges=yes' 'ProtectSystem=strict' 'ProtectHome=yes' \
	'PrivateTmp=yes' 'LoadCredential=' 'WatchdogSec=' 'ExecReload=/bin/kill -HUP $MAINPID'; do
	check "the unit sets $k" grep -qF -- "$k" "$unitdir/airlockd.service"
done
check_eq "the unit makes nothing writable but its state directory (no ReadWritePaths)" 0 \
	"$(grep -c '^ReadWritePaths=' "$unitdir/airlockd.service")"
check "the state directory is /var/lib/airlock" grep -qx 'StateDirectory=airlock' "$unitdir/airlockd.service"
