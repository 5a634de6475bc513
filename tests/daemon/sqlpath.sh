#!/bin/bash
# The queue's SQL hot path alone, without airlockd or the rig: PostgreSQL's
# CPU per read-only execution for run(), the worker's two calls (the one
# claim that classifies and starts, then the finish) and the sealer, each
# phase on its own.  pgbench sends the worker's statements prepared, as
# airlockd does.  Runs inside scripts/pgtmp (tests/bench/51-sqlpath.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/daemon/lib.sh
N=${BENCH_N:-4000}
PGBENCH=$(pg_config --bindir 2>/dev/null)/pgbench
[ -x "$PGBENCH" ] || PGBENCH=/usr/lib/postgresql/15/bin/pgbench
hz=$(getconf CLK_TCK)
: "${AIRLOCK_RIG_SSH_PORT:=2222}"
setup_db >/dev/null || exit 1
# Autovacuum would land in whichever phase it wakes during; it is work per
# execution too, but not of any one phase.
q "ALTER SYSTEM SET autovacuum = off" >/dev/null && q "SELECT pg_reload_conf()" >/dev/null
[ -n "${BENCH_PROFILE:-}" ] && q "ALTER DATABASE $PGDATABASE SET track_functions = 'all'" >/dev/null

# phase NAME USER SCRIPT: runs SCRIPT N times in one pgbench session as USER
# and prints PostgreSQL's CPU per run.
phase() {
	local name=$1 user=$2 script=$3 p0 p1
	printf '%s\n' "$script" >"$WORK/$name.pgb"
	p0=$(pgcpu)
	rm -f "$WORK/log".*
	"$PGBENCH" -n -M prepared -c 1 -t "$N" -U "$user" -f "$WORK/$name.pgb" -l --log-prefix="$WORK/log" \
		"$PGDATABASE" >"$WORK/$name.out" 2>&1 || { cat "$WORK/$name.out"; exit 1; }
	# Per-run latency percentiles: the low ones are the cost of the work
	# itself, the least disturbed by whatever else the machine runs.
	sort -n -k3,3 "$WORK/log".* | awk -v n="$N" '{ l[NR] = $3 } END {
		printf "latency p10 %.3f ms, p50 %.3f ms\n", l[int(NR * 0.1) + 1] / 1000, l[int(NR * 0.5) + 1] / 1000 }' >>"$WORK/$name.out"
	# The session's CPU counts once its backend has exited and been reaped.
	wait_for 10 "SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = '$user' AND pid <> pg_backend_pid()" >/dev/null
	sleep 0.3
	p1=$(pgcpu)
	python3 -c "print('%-30s %.3f ms CPU, %s' % ('$name', ($p1 - $p0) * 1000.0 / $hz / $N, '$(grep -o 'latency p10.*' "$WORK/$name.out")'))"
}

echo "PostgreSQL CPU per execution, by phase ($N executions, one session each):"
phase "run()" postgres "SELECT airlock.run('proxmox-host' || chr(58) || 'hubris', 'echo sql-path');"
# What the wake-up carries, read by the bench (not by the worker's calls).
q "CREATE TABLE public.bench_docs AS
     SELECT row_number() OVER (ORDER BY x.id) AS n, x.id, airlock._wake_doc(x)::text AS doc
     FROM airlock.executions x WHERE x.command = 'echo sql-path';
   CREATE UNIQUE INDEX ON public.bench_docs (n);
   CREATE SEQUENCE public.bench_next;
   GRANT SELECT ON public.bench_docs TO airlockd; GRANT USAGE ON SEQUENCE public.bench_next TO airlockd" >/dev/null
NEXT="SELECT id, doc FROM public.bench_docs WHERE n = (SELECT nextval('public.bench_next')) \\gset"
phase "(the bench reading ids)" airlockd "$NEXT"
q "ALTER SEQUENCE public.bench_next RESTART" >/dev/null
# One session makes both calls, as a worker does: the claim takes the row's
# liveness lock and the finish lets it go.
phase "worker: claim + finish" airlockd "$NEXT
SELECT id FROM airlock.worker_claim_classified('b1', :id, :doc::jsonb, 'read_only', '[{\"rule\": \"r1\"}]', 1, 'bench', 'no rewind point possible', false, 'user');
SELECT airlock.worker_finish(:id, 'b1', 'succeeded', 0, NULL, '\\x73716c2d706174680a'::bytea, ''::bytea, false, false, 4, NULL);"
p0=$(pgcpu)
while [ "$(q "SELECT airlock.seal_events(1000)")" != 0 ]; do :; done
p1=$(pgcpu)
python3 -c "print('%-30s %.3f ms' % ('seal_events (1000 a call)', ($p1 - $p0) * 1000.0 / $hz / $N))"
q "SELECT state, count(*) FROM airlock.executions GROUP BY 1" | sed 's/^/# /'
q "SELECT 'events per execution: ' || round(count(*)::numeric / $N, 2) FROM airlock.execution_events"
q "SELECT checked, first_broken, unsealed FROM airlock.audit_verify()" | sed 's/^/# verify: /'
if [ -n "${BENCH_PROFILE:-}" ]; then
	q "SELECT pg_stat_force_next_flush()" >/dev/null 2>&1
	sleep 1
	q "SELECT funcname, round((self_time / $N)::numeric, 3), round(calls::numeric / $N, 2)
	   FROM pg_stat_user_functions ORDER BY self_time DESC LIMIT 20" | column -t -s'|'
fi
