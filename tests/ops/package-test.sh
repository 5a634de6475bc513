#!/bin/bash
# tests/ops/package-test.sh -- `make package-test`: the Debian package from
# nothing.  In a copy of a fresh Debian 12 root (scripts/bookworm-root builds
# build/bookworm-root with debootstrap the first time and reuses it after;
# AIRLOCK_FRESH_ROOT names another; it is copied, never changed): install
# the build dependencies with apt, build the package with
# dpkg-buildpackage, `apt-get install ./airlock_*.deb` (dependencies resolved
# by apt), then with the distribution's PostgreSQL 15: airlock init (the
# installed migrations without --dir, the seeds, airlockd's logins with SCRAM
# passwords used over TCP), airlock user add for an agent and an operator,
# airlock doctor against the rig, airlockd started from /usr/sbin as the
# package's user, and one request end to end.  Runs inside `rigctl run` (the
# rig's node listens on the host's loopback, which the chroot shares).  Needs
# root and the network (apt).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh

[ "$(id -u)" = 0 ] || { echo "package-test: needs root (chroot, mounts)"; exit 1; }
if [ -n "${AIRLOCK_FRESH_ROOT:-}" ]; then
	fresh=$AIRLOCK_FRESH_ROOT
	[ -x "$fresh/usr/bin/apt-get" ] ||
		{ echo "package-test: AIRLOCK_FRESH_ROOT=$fresh is not a Debian root (no usr/bin/apt-get)"; exit 1; }
else
	fresh=$(scripts/bookworm-root build/bookworm-root) ||
		{ echo "not ok - package-test: no fresh Debian 12 root (scripts/bookworm-root, above)"; exit 1; }
fi
pass "a fresh Debian 12 root: $fresh ($(cat "$fresh/etc/airlock-bookworm-root" 2>/dev/null || echo "given"))"
R=$(mktemp -d /tmp/airlock-pkgroot.XXXXXX)
mounted=()
cleanup() {
	[ -n "${APID:-}" ] && chroot "$R" /bin/sh -c "kill $APID" 2>/dev/null
	chroot "$R" pg_ctlcluster 15 main stop -m fast 2>/dev/null
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null; done
	rm -rf --one-file-system "$R"
}
trap cleanup EXIT
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
	DEBIAN_FRONTEND=noninteractive "$@"; }

# One file system only: the fresh root may have /proc, /sys or /dev mounted
# (a chroot someone is using); their contents must never be copied.  The
# copy needs the root's size plus room for a build and PostgreSQL.
need_kb=$(($(du -sxk "$fresh" | cut -f1) + 3 * 1024 * 1024))
free_kb=$(df -Pk "$R" | awk 'NR == 2 {print $4}')
if [ "$free_kb" -lt "$need_kb" ]; then
	echo "package-test: ${free_kb} KiB free under $R, ${need_kb} KiB needed"
	exit 1
fi
if ! tar -C "$fresh" --one-file-system --exclude="./tmp/*" -cf - . | tar -C "$R" -xf -; then
	echo "not ok - copy the fresh Debian 12 root"
	exit 1
fi
pass "copy the fresh Debian 12 root (one file system)"
for m in proc sys dev dev/pts; do
	mkdir -p "$R/$m"
	case $m in
	proc) mount -t proc proc "$R/proc" ;;
	sys) mount -t sysfs sysfs "$R/sys" ;;
	*) mount --bind "/$m" "$R/$m" ;;
	esac && mounted+=("$R/$m")
done
# PostgreSQL's shared memory: a /dev/shm of the root's own.
mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm" && mounted+=("$R/dev/shm")
cp /etc/resolv.conf "$R/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod 755 "$R/usr/sbin/policy-rc.d"
mkdir -p "$R/src/airlock"
tar --exclude=./build --exclude=./.git --exclude=node_modules -cf - . | tar -C "$R/src/airlock" -xf -

check "apt-get update in the root" in_root apt-get update -q
check "the build dependencies from debian/control (apt-get build-dep)" \
	in_root sh -c 'apt-get install -y -q --no-install-recommends dpkg-dev debhelper >/dev/null &&
		cd /src/airlock && apt-get build-dep -y -q ./ >/dev/null'
check "dpkg-buildpackage -us -uc -b" in_root sh -c 'cd /src/airlock && dpkg-buildpackage -us -uc -b >/src/build.log 2>&1' ||
	tail -30 "$R/src/build.log"
deb=$(cd "$R/src" && ls airlock_*_*.deb 2>/dev/null | head -1)
check "it produced airlock_*.deb" test -n "$deb"
check "apt-get install ./$deb (dependencies from apt)" \
	in_root sh -c "cd /src && apt-get install -y -q ./$deb >/src/install.log 2>&1"
check "the package is installed" in_root dpkg -s airlock
check "postinst created the system user airlock" in_root id airlock
check_eq "/etc/airlock is root:airlock 0750" "root:airlock 750" "$(in_root stat -c '%U:%G %a' /etc/airlock)"
conffiles=$(in_root dpkg-query -W -f='${Conffiles}' airlock | awk '{print $1}' | sort | tr '\n' ' ')
check_eq "the configurations are conffiles" "/etc/airlock/airlock-web.yaml /etc/airlock/airlockd.yaml " \
	"$conffiles"
check "the unit is installed" test -s "$R/lib/systemd/system/airlockd.service"
check "the man pages are installed" in_root test -s /usr/share/man/man8/airlockd.8.gz

# The distribution's PostgreSQL, installed as an operator would, on a port of its own.
check "apt-get install postgresql (the distribution's)" \
	in_root sh -c 'apt-get install -y -q postgresql >/src/postgresql.log 2>&1'
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
in_root sh -c "[ -d /etc/postgresql/15/main ] || pg_createcluster 15 main >/dev/null"
sed -i "s/^port = .*/port = $port/" "$R/etc/postgresql/15/main/postgresql.conf"
# root administers as postgres (peer with a map), as an administrator would set it up.
sed -i 's/^local\( \+\)all\( \+\)postgres\( \+\)peer$/local all postgres peer map=admin/' \
	"$R/etc/postgresql/15/main/pg_hba.conf"
printf 'admin root postgres\nadmin postgres postgres\n' >>"$R/etc/postgresql/15/main/pg_ident.conf"
check "the distribution's PostgreSQL 15 starts" in_root pg_ctlcluster 15 main start
# As root, logged in as postgres through the peer map.
asdb() { in_root env PGHOST=/var/run/postgresql PGPORT="$port" PGUSER=postgres PGDATABASE=airlock "$@"; }
check "createdb airlock" asdb createdb airlock

# The estate: the rig's node, pinned.
mkdir -p "$R/etc/airlock/seeds"
cp "$R"/usr/share/airlock/seeds/*.yaml "$R/etc/airlock/seeds/"
sed -i "s/^    port: 2222$/    port: $AIRLOCK_RIG_SSH_PORT/" "$R/etc/airlock/seeds/inventory.yaml"
install -m 0600 "$AIRLOCK_RIG_SSH_KEY" "$R/etc/airlock/id_ed25519"
install -m 0644 "$AIRLOCK_RIG_KNOWN_HOSTS" "$R/etc/airlock/known_hosts"

# airlock init: the installed migrations (without --dir), the seeds, and
# airlockd's logins with SCRAM passwords in /etc/airlock/pgpass, which the
# daemon then uses over TCP (Debian's pg_hba: host all all 127.0.0.1/32
# scram-sha-256).
umask 077
out=$(asdb airlock init --seeds /etc/airlock/seeds 2>&1)
check_out "airlock init applies the installed migrations without --dir" 'migrate: [0-9]+ applied' echo "$out"
check_out "  seeds /etc/airlock/seeds" 'inventory: ' echo "$out"
check_out "  creates airlockd's logins" 'created login airlock_probe in airlock_scheduler' echo "$out"
check_out "  and writes their passwords to /etc/airlock/pgpass" 'wrote /etc/airlock/pgpass' echo "$out"
# People and agents: airlock user add.
for who in hermes; do head -c 18 /dev/urandom | base64 >"$R/root/$who.pw"; done
echo 'alice has a long passphrase' >"$R/root/alice.pw"
for spec in "hermes --agent" "alice --operator"; do
	set -- $spec
	check "airlock user add $spec" asdb airlock user add "$1" "$2" --password-file "/root/$1.pw"
done
in_root chown airlock:airlock /etc/airlock/pgpass /etc/airlock/id_ed25519 # what LoadCredential= gives the unit
cat >"$R/etc/airlock/airlockd.yaml" <<EOC
worker_id: pkgtest
database: "host=127.0.0.1 port=$port dbname=airlock user=airlockd"
scheduler_database: "host=127.0.0.1 port=$port dbname=airlock user=airlock_probe"
workers: 2
per_node: 2
ssh:
  private_key: /etc/airlock/id_ed25519
  known_hosts: /etc/airlock/known_hosts
durability:
  allow_fsync_off: false
EOC
check "airlockd -n accepts the configuration" in_root airlockd -n
check_out "airlock doctor against the rig: nothing failed" '^doctor: [0-9]+ ok, [0-9]+ warning\(s\), 0 failed' \
	asdb sh -c "airlock doctor 2>&1"

# airlockd from the installed path, as the package's user.
in_root sh -c "PGPASSFILE=/etc/airlock/pgpass runuser -u airlock -- env PGPASSFILE=/etc/airlock/pgpass \
	/usr/sbin/airlockd --grace 5 >/var/log/airlockd.log 2>&1 & echo \$!" >"$R/root/airlockd.pid"
APID=$(cat "$R/root/airlockd.pid")
for _ in $(seq 1 300); do grep -q 'evt=daemon.started' "$R/var/log/airlockd.log" 2>/dev/null && break; sleep 0.1; done
check "airlockd started as user airlock" grep -q 'evt=daemon.started' "$R/var/log/airlockd.log"
out=$(in_root sh -c "PGPASSWORD=\$(cat /root/hermes.pw) airlock run --db 'host=127.0.0.1 port=$port dbname=airlock user=hermes' \
	--target vm:web01 --wait=120 -- 'echo package-test-marker; uptime'" 2>&1)
check_out "one request end to end: it succeeded" 'state +succeeded' echo "$out"
check_out "  and its output came back from the VM" 'package-test-marker' echo "$out"
check_eq "  it reached the rig once" 1 "$(grep -F 'package-test-marker' "$AIRLOCK_RIG_LOG" | grep -cF "$(printf '\tnode\t')")"
check "airlockd logged no error" sh -c "! grep -q 'level=error' '$R/var/log/airlockd.log'"
kill "$APID" 2>/dev/null
for _ in $(seq 1 100); do in_root kill -0 "$APID" 2>/dev/null || break; sleep 0.1; done
APID=""

# `make install` as root, without the package's postinst: it makes the user
# and the directory's owner and mode itself (the user is removed first, so
# that it is make install that makes it; into /usr/local, beside the package).
check "userdel airlock (so that make install must make it)" in_root userdel airlock
check "make install PREFIX=/usr/local SYSCONFDIR=/usr/local/etc, as root, no DESTDIR" \
	in_root sh -c 'cd /src/airlock && make -s install PREFIX=/usr/local SYSCONFDIR=/usr/local/etc \
		>/src/make-install.log 2>&1' || tail -20 "$R/src/make-install.log"
check "make install created the system user airlock" in_root id airlock
check_eq "  with no login shell" /usr/sbin/nologin "$(in_root getent passwd airlock | cut -d: -f7)"
check_eq "  /usr/local/etc/airlock is root:airlock 0750" "root:airlock 750" \
	"$(in_root stat -c '%U:%G %a' /usr/local/etc/airlock)"
check_eq "  its airlockd.yaml root:airlock 0640" "root:airlock 640" \
	"$(in_root stat -c '%U:%G %a' /usr/local/etc/airlock/airlockd.yaml)"
check "  the user airlock can read it" in_root runuser -u airlock -- cat /usr/local/etc/airlock/airlockd.yaml
check_rc "  another user cannot" 1 in_root runuser -u nobody -- cat /usr/local/etc/airlock/airlockd.yaml
finish
