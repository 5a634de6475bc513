# tests/ops/init.sh -- airlock init on a fresh database: migrations, seeds,
# airlockd's two logins with random SCRAM passwords that work, the pgpass
# file, idempotence, and refusals that create no login.  Sourced by
# tests/ops/run.sh.

idb=airlock_init_$$
q "CREATE DATABASE $idb" >/dev/null
IDB="dbname=$idb"
iq() { psql -XAtq -d "$idb" -c "$1"; }
pgp=$WORK/init.pgpass
printf 'db.example:5432:other:someone:keep-me\n' >"$pgp"
chmod 600 "$pgp"

check_rc "init without --seeds is a usage error (exit 2)" 2 $A init --db "$IDB" --pgpass "$pgp"
check_eq "  and touched nothing" f "$(iq "SELECT to_regclass('airlock.entities') IS NOT NULL")"
out=$($A init --db "$IDB" --seeds "$WORK/seeds" --worker init_worker --scheduler init_probe --pgpass "$pgp" 2>&1)
rc=$?
check_eq "init on a fresh database succeeds" 0 "$rc"
check_out "  it migrates first" '== 1/4 migrate' echo "$out"
check_eq "  the schema is the one this build ships" "$shipped_ver" \
	"$(iq "SELECT max(name) FROM airlock.schema_version()" | sed 's/\.sql$//')"
check_out "  it seeds the given directory" 'inventory: [0-9]+ entities' echo "$out"
check_eq "  the inventory is in" 1 "$(iq "SELECT count(*) FROM airlock.entities WHERE slug = 'vm:web01'")"
check_out "  it creates the worker's login" 'created login init_worker in airlock_worker' echo "$out"
check_out "  and the scheduler's" 'created login init_probe in airlock_scheduler' echo "$out"
check_eq "  each in its one role" "t|f|t|f" \
	"$(q "SELECT pg_has_role('init_worker', 'airlock_worker', 'MEMBER'), pg_has_role('init_worker', 'airlock_scheduler', 'MEMBER'), pg_has_role('init_probe', 'airlock_scheduler', 'MEMBER'), pg_has_role('init_probe', 'airlock_agent', 'MEMBER')")"
check_out "  with SCRAM verifiers" '^2$' \
	q "SELECT count(*) FROM pg_authid WHERE rolname IN ('init_worker', 'init_probe') AND rolpassword LIKE 'SCRAM-SHA-256\$4096:%'"
check_out "  it prints the next steps" 'next steps:' echo "$out"
check_out "  the pg_hba lines" "local +$idb +init_worker +scram-sha-256" echo "$out"
check_out "  and the configuration lines" "scheduler_database: \".*dbname=$idb user=init_probe\"" echo "$out"
check_eq "the pgpass file is private" 600 "$(stat -c %a "$pgp")"
check_eq "  it keeps the other lines" 1 "$(grep -c '^db.example:5432:other:someone:keep-me$' "$pgp")"
check_eq "  and has one line per login" 2 "$(grep -cE "^\*:\*:$idb:init_(worker|probe):[0-9a-f]{48}$" "$pgp")"
check "  no password reaches the output" sh -c "! grep -qF '$(grep init_worker "$pgp" | cut -d: -f5)' <<'EOT'
$out
EOT"

# The passwords work over TCP with SCRAM.
datadir=$(q "SHOW data_directory")
hba=$datadir/pg_hba.conf
cp "$hba" "$WORK/pg_hba.init"
{ echo "host $idb init_worker 127.0.0.1/32 scram-sha-256"; echo "host $idb init_probe 127.0.0.1/32 scram-sha-256"; cat "$WORK/pg_hba.init"; } >"$hba"
q "SELECT pg_reload_conf()" >/dev/null
sleep 1
check_eq "fault check: a wrong password is refused" 2 \
	"$(PGPASSWORD=not-the-password psql -XAtq -h 127.0.0.1 -d "$idb" -U init_worker -c 'SELECT 1' >/dev/null 2>&1; echo $?)"
check_eq "the worker logs in with the pgpass file" init_worker \
	"$(PGPASSFILE=$pgp psql -XAtq -h 127.0.0.1 -d "$idb" -U init_worker -c 'SELECT session_user')"
check_eq "the scheduler too" init_probe \
	"$(PGPASSFILE=$pgp psql -XAtq -h 127.0.0.1 -d "$idb" -U init_probe -c 'SELECT session_user')"
old=$(grep init_worker "$pgp")
out=$($A init --db "$IDB" --seeds "$WORK/seeds" --worker init_worker --scheduler init_probe --pgpass "$pgp" 2>&1)
check_out "init again: the schema is up to date" 'migrate: up to date' echo "$out"
check_out "  the seeds unchanged" 'inventory: [0-9]+ entities, 0 rows changed' echo "$out"
check_out "  the logins updated" 'updated login init_worker in airlock_worker' echo "$out"
check_eq "  still one line per login" 2 "$(grep -cE ":init_(worker|probe):" "$pgp")"
check "  with a new password" sh -c "[ '$old' != \"\$(grep init_worker '$pgp')\" ]"
check_eq "  which works" init_worker \
	"$(PGPASSFILE=$pgp psql -XAtq -h 127.0.0.1 -d "$idb" -U init_worker -c 'SELECT session_user')"
cp "$WORK/pg_hba.init" "$hba"
q "SELECT pg_reload_conf()" >/dev/null

# One login, one role; all or none.
before=$(md5sum <"$pgp")
check_rc "an agent's login as the worker is refused (exit 3)" 3 \
	$A init --db "$IDB" --seeds "$WORK/seeds" --worker hermes --scheduler init_probe2 --pgpass "$pgp"
check_out "  the refusal says why" 'hermes already holds airlock_agent: one login, one airlock role' \
	$A init --db "$IDB" --seeds "$WORK/seeds" --worker hermes --scheduler init_probe2 --pgpass "$pgp"
check_eq "  hermes is still no worker" f "$(q "SELECT pg_has_role('hermes', 'airlock_worker', 'MEMBER')")"
check_eq "  and the other login was not created" 0 "$(q "SELECT count(*) FROM pg_roles WHERE rolname = 'init_probe2'")"
check_eq "  nor the pgpass file changed" "$before" "$(md5sum <"$pgp")"
check_rc "an operator's login as the scheduler is refused (exit 3)" 3 \
	$A init --db "$IDB" --seeds "$WORK/seeds" --worker init_worker --scheduler alice --pgpass "$pgp"
check_eq "  alice is still no scheduler" f "$(q "SELECT pg_has_role('alice', 'airlock_scheduler', 'MEMBER')")"
check_rc "one name for both logins is refused (exit 3)" 3 \
	$A init --db "$IDB" --seeds "$WORK/seeds" --worker init_same --scheduler init_same --pgpass "$pgp"
check_eq "  and not created" 0 "$(q "SELECT count(*) FROM pg_roles WHERE rolname = 'init_same'")"
mkdir -p "$WORK/badseeds"
cp "$WORK"/seeds/*.yaml "$WORK/badseeds/"
printf 'entities: [' >"$WORK/badseeds/inventory.yaml"
check_rc "a broken seed stops init before any login (exit 2)" 2 \
	$A init --db "$IDB" --seeds "$WORK/badseeds" --worker init_late --scheduler init_late2 --pgpass "$pgp"
check_eq "  no login was created" 0 "$(q "SELECT count(*) FROM pg_roles WHERE rolname IN ('init_late', 'init_late2')")"
q "DROP DATABASE $idb" >/dev/null
