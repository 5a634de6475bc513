# tests/jail/lib.sh -- the jail's escapes and observations, per target, for
# tests/jail/run.sh.  Source after tests/lib.sh and tests/daemon/lib.sh.

RIG=$AIRLOCK_RIG_ROOT
SSH=(ssh -F "$AIRLOCK_RIG_SSH_CONFIG" "$AIRLOCK_RIG_NODE")
PWN_ADDR=192.0.2.77          # TEST-NET-1: never routed anywhere
PWN_NET=198.51.100.0/24      # TEST-NET-2

# Per target: the entity, its root as seen from outside, its svcmgr name.
slug_of() { case $1 in host) echo proxmox-host:hubris ;; vm) echo vm:web01 ;; ct) echo lxc:nfs-export ;; esac; }
root_of() { case $1 in host) echo "$RIG/node" ;; vm) echo "$RIG/guests/vm101/root" ;; ct) echo "$RIG/guests/ct201/root" ;; esac; }
where_of() { case $1 in host) echo node ;; vm) echo vm:101 ;; ct) echo ct:201 ;; esac; }

# direct T CMD: runs CMD unconfined on the target, straight through the rig
# (no airlockd): its stdout, and its exit status.
direct() {
	local t=$1 q
	q=$(printf '%q' "$2")
	case $t in
	host) "${SSH[@]}" "$2" ;;
	ct) "${SSH[@]}" "pct exec 201 -- /bin/sh -c $q" ;;
	vm)
		"${SSH[@]}" "qm guest exec 101 --timeout 60 -- /bin/sh -c $q" | python3 -c '
import json, sys
r = json.load(sys.stdin)
sys.stdout.write(r.get("out-data", ""))
sys.exit(r.get("exitcode", 1))'
		;;
	esac
}

# direct_links T: how many network links target T has, unconfined.
direct_links() { direct "$1" 'ip -o link show' | wc -l; }

wait_final() {
	wait_for 90 "SELECT state IN ('succeeded', 'failed', 'timed_out', 'outcome_unknown', 'refused',
	             'pending_approval') FROM airlock.executions WHERE id = $1"
}

ct_log_count() { grep -cF "$(printf '\tct:%s\t' "$1")" "$AIRLOCK_RIG_LOG" || true; }

row_stderr() { q "SELECT convert_from(stderr, 'UTF8') FROM airlock.executions WHERE id = $1"; }
row_stdout() { q "SELECT convert_from(stdout, 'UTF8') FROM airlock.executions WHERE id = $1"; }

# confined T NAME WANT_STDERR_ERE CMD: asks airlockd to run CMD on target T;
# the row must be a failure, confined in the user tier, whose stderr (and
# "exit=N signal=N" after it) matches.
confined() {
	local t=$1 name=$2 want=$3 cmd=$4 id row err
	id=$(as_agent $A run --target "$(slug_of "$t")" -- "$cmd")
	if ! wait_final "$id"; then
		failt "$t: $name: no result for execution $id"
		return
	fi
	# The user tier, or the root tier where the policy says a program in
	# the command needs uid 0 (verdict.needs_root): jailed either way.
	row=$(q "SELECT state || ' ' || replace(coalesce(confinement, '-'), 'root', 'user') || ' ' || class FROM airlock.executions WHERE id = $id")
	# its stderr, then how it ended (a program that crashes writes nothing)
	err=$(row_stderr "$id"; q "SELECT 'exit=' || coalesce(exit_code::text, '-') || ' signal=' || coalesce(signal::text, '-') FROM airlock.executions WHERE id = $id")
	check_eq "$t: $name: ran unreviewed, in the jail, and failed" "failed user read_only" "$row"
	if grep -qE -- "$want" <<<"$err"; then
		pass "$t: $name: the row says what happened (/$want/)"
	else
		failt "$t: $name: the row says what happened (/$want/)" "$err"
	fi
}

# absent NAME PATH: nothing at PATH on the target (seen from outside it).
absent() {
	if [ -e "$2" ] || [ -L "$2" ]; then failt "$1: nothing left behind" "$(ls -la "$2")"; else pass "$1: nothing left behind"; fi
}

svc_has() { grep -qF -- "$2" "$RIG/pve/svc/$1/$3" 2>/dev/null; }

escapes() {
	local t=$1 root where
	root=$(root_of "$t")
	where=$(where_of "$t")
	echo "# escapes on $t ($(slug_of "$t"))"

	# -- files under /etc, /root/.ssh, /var/lib
	direct "$t" 'touch /etc/airlock-proof && mkdir -p /root/.ssh && touch /root/.ssh/airlock-proof /var/lib/airlock-proof' >/dev/null
	check "$t: unconfined, the rig takes writes to /etc, /root/.ssh, /var/lib" \
		test -e "$root/etc/airlock-proof" -a -e "$root/root/.ssh/airlock-proof" -a -e "$root/var/lib/airlock-proof"
	rm -f "$root/etc/airlock-proof" "$root/root/.ssh/airlock-proof" "$root/var/lib/airlock-proof"
	confined "$t" "write under /etc" 'Read-only file system' 'echo pwned > /etc/airlock-pwned'
	absent "$t: /etc" "$root/etc/airlock-pwned"
	confined "$t" "plant /root/.ssh/rc" 'Read-only file system|Permission denied' \
		'mkdir -p /root/.ssh; echo "touch /tmp/pwned" > /root/.ssh/rc'
	absent "$t: /root/.ssh/rc" "$root/root/.ssh/rc"
	# (Debian 12's curl crashes when it cannot open the -D file: the row says
	# so, with signal 11, or exit 139 where pct reports it.)
	confined "$t" "curl -D writing a header file into /root/.ssh" 'Read-only|signal=11|exit=139|not found' \
		'curl -s -o /dev/null -D /root/.ssh/rc file:///etc/hostname'
	absent "$t: curl's /root/.ssh/rc" "$root/root/.ssh/rc"
	# git only warns when its trace file cannot be opened, and goes on.
	id=$(as_agent $A run --target "$(slug_of "$t")" -- 'GIT_TRACE=/etc/nologin git version')
	wait_final "$id"
	check_out "$t: GIT_TRACE=/etc/nologin: the row says it could not be written" \
		"could not open '/etc/nologin' for tracing: Read-only file system" row_stderr "$id"
	absent "$t: /etc/nologin" "$root/etc/nologin"
	confined "$t" "write under /var/lib" 'Read-only file system' 'touch /var/lib/airlock-pwned'
	absent "$t: /var/lib" "$root/var/lib/airlock-pwned"

	# -- /tmp: a private, throwaway tmpfs inside the jail
	id=$(as_agent $A run --target "$(slug_of "$t")" -- 'echo x > /tmp/airlock-pwned-tmp && echo written')
	wait_final "$id"
	check_eq "$t: /tmp is writable inside the jail (a private tmpfs)" "written" "$(row_stdout "$id")"
	absent "$t: /tmp" "$root/tmp/airlock-pwned-tmp"

	# -- units: systemctl start/stop/enable
	direct "$t" 'systemctl start airlock-proof.service' >/dev/null
	check "$t: unconfined, root's systemctl start reaches systemd" svc_has "$where" "airlock-proof.service start" units
	for verb in start stop enable; do
		confined "$t" "systemctl $verb" 'Access denied|Failed to connect' "systemctl $verb airlock-pwned.service"
	done
	check "$t: no unit changed" sh -c "! grep -q airlock-pwned '$RIG/pve/svc/$where/units'"

	# -- packages
	direct "$t" 'apt-get install -y airlock-proof-pkg' >/dev/null
	check "$t: unconfined, apt-get install installs" test -e "$root/var/lib/dpkg/rig-installed/airlock-proof-pkg"
	confined "$t" "apt-get install" 'Could not open lock file' 'apt-get install -y airlock-pwned-pkg'
	absent "$t: package" "$root/var/lib/dpkg/rig-installed/airlock-pwned-pkg"
	confined "$t" "dpkg lock through sudo-less apt" 'Could not open lock file' 'apt install -y airlock-pwned-pkg2'
	absent "$t: package 2" "$root/var/lib/dpkg/rig-installed/airlock-pwned-pkg2"

	# -- network: the rig's guests share the machine's network namespace
	confined "$t" "ip addr add" 'Operation not permitted' "ip addr add $PWN_ADDR/32 dev lo"
	check "$t: no address was added" sh -c "! ip -o addr show dev lo | grep -qF '$PWN_ADDR/'"
	confined "$t" "ip route add" 'Operation not permitted' "ip route add $PWN_NET dev lo"
	check "$t: no route was added" sh -c "[ -z \"\$(ip route show $PWN_NET)\" ]"

	# -- kernel modules
	direct "$t" 'modprobe airlock_proof' >/dev/null
	check "$t: unconfined, root may load a module" svc_has "$where" airlock_proof modules
	confined "$t" "modprobe" 'Operation not permitted' 'modprobe airlock_pwned'
	confined "$t" "insmod" 'Operation not permitted' 'insmod /lib/modules/airlock_pwned2.ko'
	check "$t: no module was loaded" sh -c "! grep -q airlock_pwned '$RIG/pve/svc/$where/modules'"

	# -- sysctl (the value written is the one it has: no change even unconfined)
	local sw
	sw=$(cat /proc/sys/vm/swappiness)
	check "$t: unconfined, root may write a sysctl" direct "$t" "sysctl -q -w vm.swappiness=$sw"
	confined "$t" "sysctl -w" 'Read-only file system|permission denied' "sysctl -w vm.swappiness=$sw"
	confined "$t" "write /proc/sys directly" 'Read-only file system|Permission denied' "echo $sw > /proc/sys/vm/swappiness"
	check_eq "$t: the sysctl is unchanged" "$sw" "$(cat /proc/sys/vm/swappiness)"

	# -- the block device (/dev/sdb: the rig's loop disk)
	direct "$t" 'printf airlock-proof-disk | dd of=/dev/sdb conv=notrunc status=none' >/dev/null
	check "$t: unconfined, root may write the disk" sh -c "head -c 18 '$RIG/disk.img' | grep -q airlock-proof-disk"
	printf 'airlock-rig-disk\nai' | dd of="$RIG/disk.img" conv=notrunc status=none
	confined "$t" "write the block device" 'Read-only file system|Permission denied|No such file' \
		'dd if=/dev/zero of=/dev/sdb bs=512 count=1 conv=notrunc'
	confined "$t" "find and write any block device" 'no block device' \
		'for d in /dev/sd* /dev/vd* /dev/loop* /dev/dm-*; do [ -b "$d" ] && dd if=/dev/zero of="$d" count=1 && exit 0; done; echo no block device >&2; exit 1'
	check "$t: the disk is unchanged" sh -c "head -c 17 '$RIG/disk.img' | grep -q '^airlock-rig-disk$'"

	# -- a process it does not own (the rig's containers live one pct exec
	# long: no process there outlives it to be a victim)
	if [ "$t" != ct ]; then
		local victim
		victim=$(direct "$t" 'setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!')
		check "$t: a victim process runs (pid $victim)" direct "$t" "kill -0 $victim"
		confined "$t" "kill a root process" 'No such process|not permitted' "kill -9 $victim"
		check "$t: the victim is alive" direct "$t" "kill -0 $victim"
		direct "$t" "kill -9 $victim" >/dev/null
	fi

	# -- setuid files
	direct "$t" 'cp /bin/sh /var/lib/airlock-proof-suid && chmod 4755 /var/lib/airlock-proof-suid' >/dev/null
	check "$t: unconfined, root may make a setuid file" test -u "$root/var/lib/airlock-proof-suid"
	rm -f "$root/var/lib/airlock-proof-suid"
	confined "$t" "create a setuid file" 'Read-only file system' \
		'cp /bin/sh /var/lib/airlock-pwned-suid; chmod 4755 /var/lib/airlock-pwned-suid'
	absent "$t: setuid file" "$root/var/lib/airlock-pwned-suid"
	confined "$t" "a setuid copy in the private /tmp gives no privilege" \
		'^uid=(16[0-9]{8}|[45][0-9]{4}) gid=(16[0-9]{8}|[45][0-9]{4}) groups' \
		'cp /bin/id /tmp/i && chmod 4755 /tmp/i && /tmp/i >&2; exit 1'
	absent "$t: /tmp setuid copy" "$root/tmp/i"

	# -- a reboot
	confined "$t" "reboot" 'Access denied|Failed to connect' 'reboot'
	check "$t: no reboot was asked of systemd" sh -c "! grep -q 'reboot.target' '$RIG/pve/svc/$where/units'"
}

# same T NAME CMD [FILTER]: CMD's stdout through airlockd (jailed) equals its
# stdout unconfined, both passed through FILTER (default: cat).
same() {
	local t=$1 name=$2 cmd=$3 filter=${4:-cat} id want got
	id=$(as_agent $A run --target "$(slug_of "$t")" -- "$cmd")
	wait_final "$id"
	check_eq "$t: $name succeeds in the jail" "succeeded jail" \
		"$(q "SELECT state || ' ' || CASE WHEN confinement IN ('user', 'root') THEN 'jail' ELSE coalesce(confinement, '-') END FROM airlock.executions WHERE id = $id")"
	got=$(row_stdout "$id" | eval "$filter")
	want=$(direct "$t" "$cmd" | eval "$filter")
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass "$t: $name: the same output as unconfined"
	else
		failt "$t: $name: the same output as unconfined" "$(diff <(echo "$want") <(echo "$got") | head -20)"
	fi
}

observations() {
	local t=$1
	echo "# plain observations on $t"
	same "$t" "cat /etc/os-release" 'cat /etc/os-release'
	# Without net_view (the forced verdict has none) the command has a
	# network namespace of its own: loopback only, up.
	id=$(as_agent $A run --target "$(slug_of "$t")" -- 'ip -o link show | cut -d: -f2 | tr -d " "; ip -o -4 addr show lo')
	wait_final "$id"
	check_out "$t: ip: only loopback, up, in the jail's own network" '^lo
lo +inet 127\.0\.0\.1/8' row_stdout "$id"
	check "$t: unconfined the target has more than loopback" test "$(direct_links "$t")" -gt 1
	# The jail's own /dev, /dev/shm, /tmp and /var/tmp replace the target's;
	# used/available space moves with the machine, so compare what is mounted.
	same "$t" "df -h" 'df -h' "awk '\$6 !~ /^\\/(dev|dev\\/shm|tmp|var\\/tmp)\$/ && NF {print \$1, \$2, \$6}'"
	# Long-lived processes (the guest's init, sshd, qemu-ga) appear the same;
	# ps itself, the shells, the jail and the probes' commands come and go.
	same "$t" "ps aux" 'ps aux' "awk 'NR == 1 || \$2 == 1 || (\$11 == \"/usr/sbin/sshd\" && \$12 == \"-D\") || \$11 ~ /qemu-ga\$/ {print \$1, \$2, \$11, \$12, \$13}'"
	same "$t" "journalctl -n 50" 'journalctl -n 50 2>&1; echo "exit $?"'
	same "$t" "systemctl status" 'systemctl status ssh.service'
	# What only root may read stays unread: the user tier has no capability
	# to read past file modes, and the secret stores are covered.
	id=$(as_agent $A run --target "$(slug_of "$t")" -- 'ls -la /root')
	wait_final "$id"
	check_out "$t: ls /root: the user tier may not read root's home" 'Permission denied' row_stderr "$id"
	id=$(as_agent $A run --target "$(slug_of "$t")" -- 'head -c 12 /etc/shadow; echo "[end]"')
	wait_final "$id"
	check_eq "$t: /etc/shadow reads as an empty file (covered)" "[end]" "$(row_stdout "$id")"
	check_out "$t: unconfined it has content" 'root:' direct "$t" 'head -c 12 /etc/shadow'

	check_out "$t: the row records the jail's account" '^uid=[0-9]+ net=own limits=(cgroup1|cgroup2) mem=512MiB tasks=256 cpu=100% scratch=64MiB$' \
		q "SELECT jail FROM airlock.executions WHERE id = $id"
}

root_observations() {
	local cmd id
	for cmd in 'qm list' 'pct list' 'qm config 101'; do
		id=$(as_agent $A run --target proxmox-host:hubris -- "$cmd")
		wait_final "$id"
		check_eq "host: $cmd runs in the root-tier jail" "succeeded root" \
			"$(q "SELECT state || ' ' || coalesce(confinement, '-') FROM airlock.executions WHERE id = $id")"
		check_eq "host: $cmd: the same output as unconfined" "$(direct host "$cmd")" "$(row_stdout "$id")"
	done
}

# ---- the real classifier in front of the jail: commands that claim to
# observe but write, generated per category from templates ($m is a marker
# unique to the row, so every effect can be traced to its row).
LYING_TEMPLATES=(
	'curl -s -o /dev/null -D /root/.ssh/$m file:///etc/hostname'
	'curl -s -o /etc/$m file:///etc/hostname'
	'GIT_TRACE=/etc/$m git version'
	'GIT_TRACE_PACKET=/root/$m git version'
	'sort -o /etc/$m /etc/hostname'
	'cat /etc/hostname | tee /etc/$m'
	'find /etc -maxdepth 0 -fprint /etc/$m'
	'cp /etc/hostname /var/lib/$m'
	'echo x >> /root/$m'
	'cat /etc/hostname > /etc/$m'
	'date 1>/var/lib/$m'
	'sh -c "echo x > /etc/$m"'
	'env LC_ALL=C touch /etc/$m'
	'echo /etc/$m | xargs touch'
	'awk "BEGIN { print 1 > \"/etc/$m\" }"'
	'python3 -c "open(\"/etc/$m\", \"w\")"'
	'perl -e "open(F, \">/etc/$m\")"'
	'install -m 644 /etc/hostname /etc/$m'
	'mkdir /var/lib/$m'
	'ln -s /etc/hostname /etc/$m'
	'truncate -s 1 /etc/$m'
	'tar -cf /var/lib/$m.tar /etc/hostname'
	'gzip -c /etc/hostname > /etc/$m.gz'
	'ssh-keygen -q -N "" -f /root/.ssh/$m'
	'systemctl start $m.service'
	'systemctl enable $m.service'
	'apt-get install -y $m'
	'modprobe $m'
	'timeout 5 sh -c "touch /etc/$m"'
	'nice -n 5 touch /var/lib/$m'
)

# replay_lying: every template on host, VM and CT through airlockd with the
# real classifier; then no effect of a row that ran unreviewed may exist.
replay_lying() {
	local t i m cmd id ids=() bad=0 ran=0 found
	i=0
	for t in host vm ct; do
		for tpl in "${LYING_TEMPLATES[@]}"; do
			i=$((i + 1))
			m="airlock-ho-$i"
			cmd=${tpl//\$m/$m}
			id=$(as_agent $A run --target "$(slug_of "$t")" -- "$cmd") || { failt "submit: $cmd"; continue; }
			ids+=("$id:$m:$t")
		done
	done
	for x in "${ids[@]}"; do
		wait_final "${x%%:*}" || failt "no result for execution ${x%%:*}"
	done
	for x in "${ids[@]}"; do
		id=${x%%:*}; m=${x#*:}; t=${m#*:}; m=${m%%:*}
		local row
		row=$(q "SELECT state || ' ' || class || ' ' || coalesce(confinement, '-') FROM airlock.executions WHERE id = $id")
		case $row in
		pending_approval*) continue ;; # a human must look: nothing ran
		*" read_only none") failt "execution $id ran an observation unconfined: $row"; bad=$((bad + 1)); continue ;;
		*" read_only "*) ran=$((ran + 1)) ;;
		*) continue ;; # reversible_low: the policy lets it change the target
		esac
		found=$(find "$(root_of "$t")" -xdev \( -name "$m" -o -name "$m.*" \) 2>/dev/null
			grep -rlE -- "$m([^0-9]|\$)" "$RIG/pve/svc" 2>/dev/null)
		if [ -n "$found" ]; then
			failt "execution $id ($row) left $found"
			bad=$((bad + 1))
		fi
	done
	echo "# ${#ids[@]} commands, $ran classified read_only and run in the jail"
	check_eq "no command the classifier let through unreviewed changed its target" 0 "$bad"
}

# writes_confined T: with every verdict forced to reversible_low claiming
# /var/lib/airlock-rl/ and /etc/airlock-rl.conf (testing.
# classify_all_reversible_low), the claim is written on target T and a
# write anywhere else, however it is spelled, fails and leaves nothing.
writes_confined() {
	local t=$1 root id p k cmd
	root=$(root_of "$t")
	echo "# reversible_low confined to its claim on $t"
	id=$(as_agent $A run --target "$(slug_of "$t")" -- \
		'echo rl-ok > /etc/airlock-rl.conf && mkdir -p /var/lib/airlock-rl/d && echo rl-ok > /var/lib/airlock-rl/d/f')
	wait_final "$id"
	check_eq "$t: the claimed writes run unreviewed in the write tier" "succeeded write reversible_low" \
		"$(q "SELECT state || ' ' || coalesce(confinement, '-') || ' ' || class FROM airlock.executions WHERE id = $id")"
	check_eq "$t: and are on the target" "rl-ok rl-ok" "$(cat "$root/etc/airlock-rl.conf" "$root/var/lib/airlock-rl/d/f" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
	for p in /etc/airlock-rl-pwned /var/lib/airlock-rl-pwned /root/airlock-rl-pwned /var/lib/airlock-rl.conf; do
		# Unconfined the same write lands: the check below can fail.
		direct "$t" "echo x > $p" >/dev/null
		check "$t: unconfined, a write to $p lands" test -e "$root$p"
		rm -f "$root$p"
		k=0
		for cmd in "echo x > $p" "echo x | tee $p" "touch $p" "cp /etc/hostname $p" \
			"python3 -c \"open('$p', 'w')\"" "sh -c 'exec 3>$p'" "install -m 600 /dev/null $p"; do
			k=$((k + 1))
			confined_write "$t" "$p ($k)" "$cmd"
			absent "$t: $p ($k)" "$root$p"
		done
	done
	rm -rf "$root/etc/airlock-rl.conf" "$root/var/lib/airlock-rl"
}

# confined_write T NAME CMD: a reversible_low row that ran in the write tier
# and failed saying the file system is read-only (or the uid may not).
confined_write() {
	local t=$1 name=$2 cmd=$3 id row
	id=$(as_agent $A run --target "$(slug_of "$t")" -- "$cmd")
	wait_final "$id" || { failt "$t: $name: no result for execution $id"; return; }
	row=$(q "SELECT state || ' ' || coalesce(confinement, '-') FROM airlock.executions WHERE id = $id")
	check_eq "$t: write outside the claim: $name: failed in the write tier" "failed write" "$row"
	check_out "$t: $name: the row says why" 'Read-only file system|Permission denied' row_stderr "$id"
}
