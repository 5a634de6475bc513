#!/bin/bash
# Runs inside scripts/pgtmp and `rigctl run`.  Prints the numbers; asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
N=${BENCH_N:-2000}
WAKE_N=${BENCH_WAKE_N:-100}

setup_db >/dev/null || exit 1
# BENCH_PROFILE=1: where PostgreSQL's time goes, per function (printed last).
[ -n "${BENCH_PROFILE:-}" ] && q "ALTER DATABASE $PGDATABASE SET track_functions = 'all'" >/dev/null
q "ALTER ROLE airlockd SET synchronous_commit = on" >/dev/null
# Started at info (its start line is how start_daemon knows it is up), then
# quieted to warn with a SIGHUP, which applies the log level at once.
WORKERS=${BENCH_WORKERS:-8} PER_NODE=${BENCH_WORKERS:-8} write_config b1 "${BENCH_YAML:-}" >/dev/null
# airlockd's own poll, reap and expire intervals (2 s, 2 s, 10 s), not the
# test suites' 200 ms ones: the cost per execution is what an operator sees.
sed -i '/^\(poll\|reap\|expire\)_interval_ms:/d' "$WORK/b1.yaml"
start_daemon b1 || { echo "daemon did not start"; exit 1; }
pid=$DPID
sed -i 's/^log_level: .*/log_level: warn/' "$WORK/b1.yaml"
kill -HUP $pid
wait_log 10 'evt=config.reloaded' b1 || { echo "daemon did not reload its config"; exit 1; }
wait_for 10 "SELECT count(*) > 0 FROM pg_stat_activity WHERE usename = 'airlockd'" || { echo "daemon did not start"; exit 1; }
sleep 1
rss() { awk '/^VmRSS/ {print $2}' /proc/$1/status; }
hwm() { awk '/^VmHWM/ {print $2}' /proc/$1/status; }
cpu() { awk '{print $14 + $15}' /proc/$1/stat; }
# Context switches of every thread of a process, voluntary and not (a
# thread that ended takes its count with it: airlockd's live as long as it).
ctxsw() { cat /proc/$1/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches/ {n += $2} END {print n + 0}'; }
hz=$(getconf CLK_TCK)
echo "airlockd idle RSS: $(rss $pid) KiB"

# Wake-up: one run() at a time on an idle queue; from the committing run() to
# the command starting on the rig (the node's log stamps it on arrival).
# run() is called from one open session, as an agent's MCP server does (a new
# session's first call also pays for planning every function it reaches), and
# that session waits for each row to finish before the next (bounded).
coproc PQ { psql -XAtq 2>&1; }
for i in $(seq 0 "$WAKE_N"); do
	# Sample 0 warms the session up and is not counted.
	[ "$i" = 0 ] && cmd="echo warm-up" || cmd="echo wake-$i"
	echo "SELECT airlock.run('proxmox-host:hubris', '$cmd');" >&"${PQ[1]}"
	read -r id <&"${PQ[0]}"
	for _ in $(seq 2000); do
		echo "SELECT state IN ('succeeded', 'failed') FROM airlock.executions WHERE id = $id;" >&"${PQ[1]}"
		read -r fin <&"${PQ[0]}"
		[ "$fin" = t ] && break
		sleep 0.005
	done
	# Idle before the next sample, as the peer's harness is (20 ms): a
	# finished command's jail is still being torn down on the rig when its
	# row turns final, and the next wake-up would share the CPUs with it.
	sleep 0.02
done
echo '\q' >&"${PQ[1]}"
wait "${PQ_PID:-}" 2>/dev/null # unset once the coprocess has ended
q "SELECT command, extract(epoch FROM created_at) FROM airlock.executions WHERE command LIKE 'echo wake-%'" >"$WORK/created"
python3 - "$WORK/created" "$AIRLOCK_RIG_LOG" <<'PY'
import re, sys, datetime, statistics
created = {}
for line in open(sys.argv[1]):
    cmd, t = line.rstrip("\n").split("|")
    created[cmd] = float(t)
lat = []
for line in open(sys.argv[2]):
    ts, where, cmd = line.rstrip("\n").split("\t", 2)
    # The node's login shell receives the command quoted last, after
    # /bin/sh -c or after the read-only jail's script and its tier.
    m = re.search(r"'(echo wake-[0-9]+)'$", cmd)
    if where == "node" and m and m.group(1) in created:
        cmd = m.group(1)
        t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
        lat.append((t - created[cmd]) * 1000)
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
print("wake-up run() commit -> command on the rig: n=%d p50=%.2f ms p90=%.2f ms p99=%.2f ms max=%.2f ms"
      % (len(lat), p(0.5), p(0.9), p(0.99), lat[-1]))
PY

# The queue's own wake-up: from run() to the worker's classification event.
q "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' ms p50, '
        || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' ms p99'
   FROM (SELECT extract(epoch FROM (v.at - x.created_at)) * 1000 AS ms
         FROM airlock.executions x JOIN airlock.execution_events v ON v.execution_id = x.id
         WHERE x.command LIKE 'echo wake-%' AND v.from_state = 'received') t" |
	sed 's/^/queue wake-up run() -> classified by a worker: /'

# The rig's own ceiling for the same work, right before: one jailed `echo`
# per command on the host over the pooled transport, as many threads as the
# daemon has workers, no database.
make -s build/bench/transport_bench || exit 1
ceiling=$(build/bench/transport_bench $((N / ${BENCH_WORKERS:-8})) - ceiling "${BENCH_WORKERS:-8}")
echo "$ceiling"
ceiling_per_s=$(sed -n 's/.*one session: \([0-9.]*\) cmds\/s.*/\1/p' <<<"$ceiling")

# Throughput: N read-only host commands enqueued at once, drained by one daemon.
# pgprocs: ticks per live PostgreSQL process, with what it is (BENCH_PROFILE).
pgprocs() {
	local pgmaster p
	pgmaster=$(head -1 "$AIRLOCK_PGTMP/data/postmaster.pid")
	for p in $pgmaster $(pgrep -P "$pgmaster"); do
		printf '%s\t%s\t%s\n' "$p" "$(awk '{print $14 + $15 "\t" $14 "\t" $15}' /proc/$p/stat 2>/dev/null)" "$(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)"
	done
}
[ -n "${BENCH_PROFILE:-}" ] && pgprocs >"$WORK/procs0"
# airlockd's system calls, counted by the kernel's tracepoint (perf stat:
# no slowdown worth the name, unlike strace), over the same phase.
perf stat -x, -e raw_syscalls:sys_enter -p $pid -o "$WORK/perf" &
perf_pid=$!
sleep 0.5 # attached before the rows exist
x0=$(ctxsw $pid)
c0=$(cpu $pid); p0=$(pgcpu); t0=$(date +%s.%N)
IFS='|' read -r lo hi < <(q "SELECT min(r), max(r) FROM (SELECT airlock.run('proxmox-host:hubris', 'echo tput-' || g) AS r FROM generate_series(1, $N) g) x")
# Waited for in one session (a poll per new session would cost the server
# CPU that would be counted against the daemon); bounded at 600 s.  Each
# poll commits: a transaction held open for the whole phase would keep
# every row version the daemon replaces (no pruning, no vacuum, index
# scans through dead entries), which no production database sees.
PGOPTIONS="-c statement_timeout=600s" q "DO \$\$ BEGIN
	-- By id range: the wait itself should cost the server next to nothing.
	WHILE (SELECT count(*) FROM airlock.executions WHERE id BETWEEN $lo AND $hi
	       AND state IN ('succeeded', 'failed', 'outcome_unknown', 'refused')) < $N LOOP
		COMMIT;
		PERFORM pg_sleep(0.2);
	END LOOP; END \$\$" >/dev/null
t1=$(date +%s.%N); c1=$(cpu $pid); p1=$(pgcpu)
x1=$(ctxsw $pid)
kill -INT $perf_pid; wait $perf_pid
sys=$(awk -F, '$3 == "raw_syscalls:sys_enter" {print $1}' "$WORK/perf")
[ -n "${BENCH_PROFILE:-}" ] && pgprocs >"$WORK/procs1"
ok=$(q "SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo tput-%' AND state = 'succeeded'")
others=$(q "SELECT string_agg(state || '=' || n, ' ') FROM (SELECT state, count(*) n FROM airlock.executions WHERE command LIKE 'echo tput-%' AND state <> 'succeeded' GROUP BY 1) x")
python3 - <<PY
n, secs = $N, $t1 - $t0
print("throughput: %d read-only host executions (%d succeeded%s) in %.2f s = %.0f/s (workers=${BENCH_WORKERS:-8})" % (n, $ok, ("; " + "$others") if "$others" else "", secs, n / secs))
print("CPU per execution: airlockd %.3f ms, PostgreSQL %.3f ms" % (($c1 - $c0) * 1000.0 / $hz / n, ($p1 - $p0) * 1000.0 / $hz / n))
print("airlockd per execution: %.1f context switches (all threads), %s system calls" % (($x1 - $x0) / n, "%.1f" % (int("${sys:-0}" or 0) / n) if "${sys:-}".isdigit() else "? (perf stat counted none)"))
ceiling = float("${ceiling_per_s:-0}" or 0)
if ceiling > 0:
    print("end to end / the rig's ceiling: %.0f/s / %.0f/s = %.0f %%" % (n / secs, ceiling, 100.0 * n / secs / ceiling))
PY
if [ -n "${BENCH_PROFILE:-}" ]; then
	q "SELECT pg_stat_force_next_flush()" >/dev/null 2>&1
	sleep 1
	echo "PostgreSQL CPU per execution, by process (ms: all, user, system):"
	awk -F'\t' -v n=$N -v hz=$hz 'NR == FNR { a[$1] = $2; u[$1] = $3; s[$1] = $4; next }
		{ d = $2 - a[$1]; k = 1000.0 / hz / n
		  if (d > 0) printf "%8.3f %8.3f %8.3f  %s\n", d * k, ($3 - u[$1]) * k, ($4 - s[$1]) * k, $5 }' \
		"$WORK/procs0" "$WORK/procs1" | sort -rn
	echo "PostgreSQL self time per execution, by function (ms; calls per execution):"
	q "SELECT funcname, round((self_time / $N)::numeric, 3), round(calls::numeric / $N, 2)
	   FROM pg_stat_user_functions ORDER BY self_time DESC LIMIT 15" | column -t -s'|'
fi
echo "airlockd RSS after load: $(rss $pid) KiB (peak $(hwm $pid) KiB)"
kill -TERM $pid; wait $pid
