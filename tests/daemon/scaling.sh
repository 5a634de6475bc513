#!/bin/bash
# Runs inside scripts/pgtmp and `rigctl run` (tests/bench/54-daemons.sh).
# Prints the numbers; asserts nothing.
#   BENCH_N        executions per phase (default 2000)
#   BENCH_DAEMONS  daemons in the second phase of each pair (default 4)
#   BENCH_FEW      workers per daemon in the first pair (default 1)
# Two pairs of phases: one daemon then BENCH_DAEMONS daemons with few workers
# each (so that one daemon is far from what the rig's single host can do, and
# more daemons can only be faster if the database lets them), then with 8
# workers each (one daemon already near the rig's ceiling).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
N=${BENCH_N:-2000}
MANY=${BENCH_DAEMONS:-4}
FEW=${BENCH_FEW:-1}

setup_db >/dev/null || exit 1
q "ALTER ROLE airlockd SET synchronous_commit = on" >/dev/null
hz=$(getconf CLK_TCK)

# phase K W TAG: K daemons of W workers each drain N rows enqueued at once.
phase() {
	local k=$1 w=$2 tag=$3 pids=() i p0 p1 t0 t1 out
	for i in $(seq 1 "$k"); do
		WORKERS=$w PER_NODE=$w LOG_LEVEL=warn write_config "$tag$i" >/dev/null
		# start_daemon waits for the start line, which warn hides: wait for its sessions.
		$D -c "$WORK/$tag$i.yaml" >>"$WORK/$tag$i.log" 2>&1 &
		pids+=($!)
		DAEMON_PIDS+=($!)
	done
	wait_for 30 "SELECT count(DISTINCT application_name) > 0 AND count(*) >= $((k * (w + 1))) FROM pg_stat_activity WHERE usename = 'airlockd'" ||
		{ echo "$tag: the daemons did not connect"; return 1; }
	sleep 1
	p0=$(pgcpu)
	t0=$(date +%s.%N)
	q "SELECT airlock.run('proxmox-host:hubris', 'echo $tag-' || g) FROM generate_series(1, $N) g" >/dev/null
	# One session waits and samples, every 20 ms, whether a daemon's session
	# waits for a lock: any heavyweight lock (rows, transactions, advisory
	# locks of every kind), an advisory lock of any kind, the chain's.
	out=$(PGOPTIONS="-c statement_timeout=600s" psql -XAtq -c "DO \$\$
	DECLARE samples int := 0; w_any int := 0; w_adv int := 0; w_chain int := 0; a int; v int; c int;
	kinds jsonb := '{}'; r record;
	BEGIN
		LOOP
			EXIT WHEN (SELECT count(*) FROM airlock.executions WHERE command LIKE 'echo $tag-%'
			           AND state IN ('succeeded', 'failed', 'outcome_unknown', 'refused')) >= $N;
			FOR i IN 1..10 LOOP
				SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'),
				       count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory')
				INTO a, v FROM pg_stat_activity WHERE usename = 'airlockd';
				SELECT count(*) INTO c FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND classid = 74287730 AND objid = 1 AND objsubid = 2;
				-- Which lock a waiting session waits for, counted per sample.
				FOR r IN SELECT DISTINCT wait_event FROM pg_stat_activity
				         WHERE usename = 'airlockd' AND wait_event_type = 'Lock' LOOP
					kinds := jsonb_set(kinds, ARRAY[r.wait_event],
					                   to_jsonb(coalesce((kinds ->> r.wait_event)::int, 0) + 1));
				END LOOP;
				samples := samples + 1;
				w_any := w_any + least(a, 1);
				w_adv := w_adv + least(v, 1);
				w_chain := w_chain + least(c, 1);
				-- Committed: an open transaction would hold back the
				-- horizon and keep every dead row version for the phase,
				-- and would read pg_stat_activity as it was at its first
				-- sample (a session's view of it is kept per transaction).
				COMMIT;
				PERFORM pg_sleep(0.02);
			END LOOP;
		END LOOP;
		RAISE NOTICE 'waits % % % %', samples, w_any, w_adv, w_chain;
		RAISE NOTICE 'kinds %', coalesce((SELECT string_agg(k || '=' || n, ' ' ORDER BY n::int DESC, k)
		                                  FROM jsonb_each_text(kinds) AS x(k, n)), 'none');
	END \$\$" 2>&1)
	t1=$(date +%s.%N)
	p1=$(pgcpu)
	for p in "${pids[@]}"; do kill -TERM "$p"; done
	for p in "${pids[@]}"; do wait "$p"; done
	read -r samples w_any w_adv w_chain < <(sed -n 's/.*waits \([0-9]*\) \([0-9]*\) \([0-9]*\) \([0-9]*\).*/\1 \2 \3 \4/p' <<<"$out")
	kinds=$(sed -n 's/.*NOTICE: *kinds \(.*\)$/\1/p' <<<"$out")
	python3 - <<PY
n, secs, s = $N, $t1 - $t0, max(${samples:-0}, 1)
print("%d daemon(s) x %d workers: %d read-only host executions in %.2f s = %.0f/s; PostgreSQL %.3f ms CPU each; "
      "a daemon session waited for a lock in %d of %d samples (%.0f %%), for an advisory lock in %d (%.0f %%), "
      "for the chain's in %d (%.0f %%); samples by lock waited for: %s"
      % ($k, $w, n, secs, n / secs, ($p1 - $p0) * 1000.0 / $hz / n, ${w_any:-0}, ${samples:-0},
         100.0 * ${w_any:-0} / s, ${w_adv:-0}, 100.0 * ${w_adv:-0} / s, ${w_chain:-0}, 100.0 * ${w_chain:-0} / s,
         "${kinds:-?}"))
PY
}

phase 1 "$FEW" fone || exit 1
phase "$MANY" "$FEW" fmany || exit 1
phase 1 8 one || exit 1
phase "$MANY" 8 many || exit 1
