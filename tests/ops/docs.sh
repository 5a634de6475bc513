#!/bin/bash
# tests/ops/docs.sh -- following docs/deploy.md and then docs/operators.md
# literally, in order, works: every ```sh tested block runs (tests/ops/
# docblocks.py) against a pristine throwaway database and the rig, with the
# binaries, migrations and seeds from `make install` staged in a temporary
# DESTDIR.  Runs inside its own scripts/pgtmp, inside `rigctl run`; called by
# tests/ops/run.sh.  The steps only a real machine has are done by hooks:
# the authorized_keys line becomes the rig node's only one, and airlockd is
# started where the guide says `systemctl enable --now airlockd`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh

W=$(mktemp -d /tmp/airlock-docs.XXXXXX)
# The guide runs in a subshell: the daemon it starts is known by this file.
cleanup() {
	local pid
	pid=$(cat "$W/airlockd.pid" 2>/dev/null)
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT
q() { psql -XAtq -c "$1"; }

check "make install into a staging DESTDIR" make -s install DESTDIR="$W/stage"
check_out "  staged, it says what it left to the package (the user, /etc/airlock's owner)" \
	'staged in DESTDIR: the system user airlock and /etc/airlock root:airlock 0750 are left undone' \
	make -s install DESTDIR="$W/stage"
check_eq "docs/development.md's suite table lists every suite in tests/suites/, in order" \
	"$(ls tests/suites | sed 's/\.sh$//' | tr '\n' ' ')" \
	"$(grep -o '^| `[0-9][0-9]-[a-z-]*`\(, `[0-9][0-9]-[a-z-]*`\)\?' docs/development.md |
		grep -o '[0-9][0-9]-[a-z-]*' | tr '\n' ' ')"
check_eq "docs/development.md's build line names every binary make builds" \
	"$(make -s -p -n all 2>/dev/null | sed -n 's/^BINS := //p' | tr ' ' '\n' | sed 's|.*/||' | sort | tr '\n' ' ')" \
	"$(sed -n 's/^make  *# build\/bin\/\(.*\)$/\1/p' docs/development.md | tr -d ',' | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')"
stage=$W/stage/usr/local
for f in bin/airlock bin/airlock-mcp sbin/airlockd share/airlock/migrations/0001_schema.sql \
	share/airlock/seeds/policy.yaml share/airlock/airlockd.example.yaml share/man/man1/airlock.1 \
	share/man/man1/airlock-mcp.1 share/man/man8/airlockd.8 lib/systemd/system/airlockd.service; do
	check "installed: $f" test -s "$stage/$f"
done
check "installed: /etc/airlock/airlockd.yaml" test -s "$W/stage/etc/airlock/airlockd.yaml"
check "the installed unit names the installed airlockd" \
	grep -q "^ExecStart=/usr/local/sbin/airlockd -c /etc/airlock/airlockd.yaml" \
	"$stage/lib/systemd/system/airlockd.service"
check_eq "every migration is installed" "$(ls migrations/*.sql | wc -l)" \
	"$(ls "$stage"/share/airlock/migrations/*.sql | wc -l)"
echo "# changed by an administrator" >>"$W/stage/etc/airlock/airlockd.yaml"
make -s install DESTDIR="$W/stage" >/dev/null
check "make install again keeps an edited /etc/airlock/airlockd.yaml" \
	grep -q "changed by an administrator" "$W/stage/etc/airlock/airlockd.yaml"
# Outside a checkout the binary looks in the share directory it was built
# for; the staged copy has not been moved there, so it says so.
check_out "an installed airlock looks for migrations in its built-in share directory" \
	'cannot read migrations directory /usr/local/share/airlock/migrations' \
	env -u AIRLOCK_SHARE -u AIRLOCK_MIGRATIONS "$stage/bin/airlock" migrate
check_out "  (its --help names it)" 'ships: /usr/local/share/airlock/migrations' \
	env -u AIRLOCK_SHARE "$stage/bin/airlock" migrate --help
check_out "AIRLOCK_SHARE moves it" "ships: $stage/share/airlock/migrations" \
	env AIRLOCK_SHARE="$stage/share/airlock" "$stage/bin/airlock" migrate --help
check_out "the checkout's own build uses the checkout" "ships: $PWD/migrations" \
	env -u AIRLOCK_SHARE build/bin/airlock migrate --help

# What the guide needs from a real database: fsync on (the guide keeps
# durability.allow_fsync_off: false).  The throwaway cluster was started with
# fsync=off on its command line; restart it without that.
as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)
check "restart the throwaway database with fsync on" \
	"${as_pg[@]}" /usr/lib/postgresql/15/bin/pg_ctl -D "$AIRLOCK_PGTMP/data" -w -t 60 -m fast \
	-l "$AIRLOCK_PGTMP/server.log" -o "-p $PGPORT -k $PGHOST -c listen_addresses=127.0.0.1 -c max_connections=200" \
	restart
check_eq "the throwaway database now runs with fsync = on" on "$(q 'SHOW fsync')"

# The guide's settings, for this machine: every name it defines is set here.
AIRLOCK_ETC=$W/etc-airlock
AIRLOCK_SHARE_DIR=$stage/share/airlock
ADMIN_DB="host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=postgres"
DB_CONN="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
NODE_NAME=pverig
NODE_ADDR=127.0.0.1
NODE_PORT=$AIRLOCK_RIG_SSH_PORT
AIRLOCK_HOST_ADDR=127.0.0.1
AGENT_DB="host=$PGHOST port=$PGPORT dbname=$PGDATABASE user=hermes"
mkdir -p "$AIRLOCK_ETC"
for v in $(tests/ops/docblocks.py --settings docs/deploy.md docs/operators.md); do
	case $v in
	PGHOST | PGDATABASE | PGSSLMODE | PGSSLROOTCERT) continue ;; # the throwaway database's own
	esac
	check "the test sets the guide's setting $v" test -n "${!v:-}"
done
export PGUSER=postgres
export PATH=$stage/bin:$stage/sbin:$PATH
export AIRLOCK_SHARE=$stage/share/airlock # where the staged binaries' share directory is now

# Hooks: what the guide has you do on the node and with systemd.
# The guide's "No door open": the node then accepts the guide's key and no
# other (the rig's own client key and its agent key are removed).
after_ssh_key() {
	cat "$AIRLOCK_ETC/authorized_keys.line" >"$AIRLOCK_RIG_ROOT/node/root/.ssh/authorized_keys"
}
after_check() {
	airlockd -c "$AIRLOCK_ETC/airlockd.yaml" >"$W/airlockd.log" 2>&1 &
	DPID=$!
	echo "$DPID" >"$W/airlockd.pid"
	for _ in $(seq 1 300); do
		grep -q 'evt=daemon.started' "$W/airlockd.log" && return 0
		kill -0 "$DPID" || break
		sleep 0.1
	done
	echo "airlockd did not start:" && cat "$W/airlockd.log" && return 1
}

tests/ops/docblocks.py docs/deploy.md docs/operators.md >"$W/guide.sh"
nblocks=$(grep -c '^echo "ok - doc block' "$W/guide.sh")
check "the guide has tested blocks in both files" \
	sh -c "grep -q 'docs/deploy.md:' '$W/guide.sh' && grep -q 'docs/operators.md:' '$W/guide.sh'"
# operators.md's walkthrough runs as alice, the login the guide created
# (its settings block: export PGUSER=alice).
before_first_approval() { export PGUSER=alice; }
(
	cd "$W"
	. "$W/guide.sh"
) >"$W/guide.out" 2>&1
rc=$?
grep -E '^(ok|not ok) - doc block' "$W/guide.out"
check_eq "every block of the guide ran (exit 0)" 0 "$rc"
check_eq "all $nblocks blocks passed" "$nblocks" "$(grep -c '^ok - doc block' "$W/guide.out")"
[ "$rc" = 0 ] || tail -40 "$W/guide.out" | sed 's/^/#   /'

# What following the guide produced.
check_eq "the guide's key reached the node restricted with from=" 1 \
	"$(grep -c '^restrict,from="127.0.0.1" ssh-ed25519 ' "$AIRLOCK_RIG_ROOT/node/root/.ssh/authorized_keys")"
check_out "airlock doctor passed inside the guide" '^doctor: [0-9]+ ok, [0-9]+ warning\(s\), 0 failed' \
	cat "$W/guide.out"
check_eq "the first request (read-only) succeeded" 1 \
	"$(q "SELECT count(*) FROM airlock.executions WHERE command = 'uptime' AND state = 'succeeded'")"
check_eq "the approved change succeeded, decided by alice" "succeeded alice" \
	"$(q "SELECT e.state || ' ' || v.approver FROM airlock.executions e
	     JOIN airlock.approvals v ON v.execution_id = e.id AND v.decision = 'approve'
	     WHERE e.command LIKE 'echo managed by airlock%'")"
check_out "it ran once, in VM 101" 'vm:101.*managed by airlock' grep -F 'managed by airlock' "$AIRLOCK_RIG_LOG"
check "the restore test found the anchor" grep -q 'anchor found in the restored chain' "$W/guide.out"
check_eq "and dropped its scratch database" 0 \
	"$(q "SELECT count(*) FROM pg_database WHERE datname = 'airlock_restore_test'")"
check_eq "airlockd logged nothing at error level" "" "$(grep 'level=error' "$W/airlockd.log")"
finish
