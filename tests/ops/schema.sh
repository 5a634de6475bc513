# tests/ops/schema.sh -- airlockd refuses a schema older or newer than it
# understands, says which and what to run, and claims nothing.
# Sourced by tests/ops/run.sh.

# refused NAME: starts airlockd NAME (config already written); it must exit 1
# on its own, with evt=schema.refused; the log is in $WORK/NAME.log.
refused() {
	local rc
	timeout 60 $D -c "$WORK/$1.yaml" --grace 1 >"$WORK/$1.log" 2>&1
	rc=$?
	check_eq "$1: airlockd exits 1" 1 "$rc"
	check "$1: it logs evt=schema.refused" grep -q 'evt=schema.refused' "$WORK/$1.log"
}

# A request waiting to be classified: a daemon that starts would claim it.
sid=$(as_agent $A run --target proxmox-host:hubris -- 'echo schema-probe')
check_eq "a request waits for a daemon" received "$(state_of "$sid")"

# Newer: the database has a migration this build does not ship.
q "INSERT INTO airlock.schema_migrations (name, sha256) VALUES ('9999_from_the_future.sql', 'x')"
check_eq "fault: the database now has a migration this build lacks" 1 \
	"$(q "SELECT count(*) FROM airlock.schema_migrations WHERE name = '9999_from_the_future.sql'")"
write_config sc_new >/dev/null
refused sc_new
check_out "newer: the message names both versions and says upgrade" \
	"newer than this airlockd understands \($shipped_ver\).*9999_from_the_future.*upgrade airlock" \
	cat "$WORK/sc_new.log"
check_eq "newer: nothing was claimed" received "$(state_of "$sid")"
q "DELETE FROM airlock.schema_migrations WHERE name = '9999_from_the_future.sql'"

# Older, the function present: the highest shipped migration is not recorded.
saved=$(q "SELECT sha256 FROM airlock.schema_migrations WHERE name = '$shipped_last'")
q "DELETE FROM airlock.schema_migrations WHERE name = '$shipped_last'"
check_eq "fault: $shipped_last is no longer recorded" 0 \
	"$(q "SELECT count(*) FROM airlock.schema_migrations WHERE name = '$shipped_last'")"
write_config sc_old >/dev/null
refused sc_old
check_out "older: the message names both versions and says airlock migrate" \
	"older than this airlockd needs \($shipped_ver\).*$shipped_last is not applied.*airlock migrate" \
	cat "$WORK/sc_old.log"
check_eq "older: nothing was claimed" received "$(state_of "$sid")"
q "INSERT INTO airlock.schema_migrations (name, sha256) VALUES ('$shipped_last', '$saved')"

# Older, from before the schema could be read by the worker: a database
# migrated with everything but 0010_schema_version.
olddir=$WORK/old-migrations
mkdir -p "$olddir"
cp migrations/0*.sql "$olddir/"
rm "$olddir"/0010_schema_version.sql
createdb airlock_old
check "an old database: migrated without 0010" $A migrate --db "dbname=airlock_old" --dir "$olddir"
write_config sc_older >/dev/null
sed -i "s/dbname=$PGDATABASE/dbname=airlock_old/" "$WORK/sc_older.yaml"
refused sc_older
check_out "before 0010: says the schema is older and what to run" \
	"is older than this airlockd needs \($shipped_ver\).*airlock migrate" cat "$WORK/sc_older.log"
check "airlock migrate brings it up to date" $A migrate --db "dbname=airlock_old"
write_config sc_fixed >/dev/null
sed -i "s/dbname=$PGDATABASE/dbname=airlock_old/" "$WORK/sc_fixed.yaml"
start_daemon sc_fixed
check "after migrate the daemon starts on it" grep -q 'evt=daemon.started' "$WORK/sc_fixed.log"
kill -TERM "$DPID"
wait "$DPID"

# The matching schema again: the request is claimed and runs.
write_config sc_ok >/dev/null
start_daemon sc_ok
check "the matching schema: the waiting request runs" \
	wait_for 60 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $sid"
kill -TERM "$DPID"
wait "$DPID"
