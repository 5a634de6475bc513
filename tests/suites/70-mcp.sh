#!/bin/bash
# airlock-mcp over stdio against a real throwaway PostgreSQL (migrated, seeded,
# agent login "hermes"): transcripts covering every protocol rule and every
# tool's success and failure paths; the official TypeScript SDK client; calls
# served concurrently (tests/mcp/concurrent.py); 10,000
# hostile lines (also under ASan+UBSan), after which nothing may have reached
# the database that validation should have stopped; and end to end with a real
# airlockd executing on the rig (tests/mcp/e2e.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_PGTMP:-}" ]; then
	exec scripts/pgtmp --quiet -- "$0" "$@"
fi
. tests/lib.sh

for tool in node npm python3 psql pkg-config valgrind; do
	command -v "$tool" >/dev/null || { echo "70-mcp: $tool is missing (scripts/install-deps)"; exit 1; }
done
[ -x build/bin/airlock-mcp ] && [ -x build/bin/airlock ] || { echo "70-mcp: build first (make)"; exit 1; }
# The SDK is a devDependency installed from the lockfile (again whenever it
# changed), never fetched at run time.
scripts/npm-deps install tests/mcp || { echo "not ok - 70-mcp: the SDK's npm install (above)"; exit 1; }

tmp=$(mktemp -d /tmp/airlock-mcp-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ---- the store's sessions, which airlock-mcp is built on: notifications and bounded waits,
# sessions the server ends, reads sent again and writes not, hooks (ASan+UBSan)
make -s build/integration/store_seam_test >/dev/null || exit 1
check "store seam: sessions, notifications, reconnects against this PostgreSQL" \
	env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 build/integration/store_seam_test

check "migrate" build/bin/airlock migrate
check "seed" build/bin/airlock seed seeds/
check "agent login hermes" psql -qc "CREATE ROLE hermes LOGIN IN ROLE airlock_agent"
MCP=(build/bin/airlock-mcp --db "user=hermes")

# ---- transcripts (tools.txt, then wait.txt: they share the database, in this order)
for t in protocol version-2025-03-26 version-2025-06-18 version-2024-11-05 tools wait; do
	check "transcript $t" env DRIVE_STDERR="$tmp/$t.stderr" \
		tests/mcp/drive.py "tests/mcp/transcripts/$t.txt" -- "${MCP[@]}"
done
check "stderr carries key=value log lines" grep -qE '^ts=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z level=info evt=mcp.start' "$tmp/tools.stderr"

# ---- the official TypeScript SDK client
check "sdk client (@modelcontextprotocol/sdk over stdio)" \
	env AIRLOCK_MCP_TEST_USER=hermes node tests/mcp/sdk-client.mjs build/bin/airlock-mcp
# ---- concurrency: calls run on a pool of workers; a waiting call holds up nothing else
check "agent login conc (its own flood limits)" psql -qc "CREATE ROLE conc LOGIN IN ROLE airlock_agent"
check "concurrent: a burst answered exactly once; queued and waiting calls cancelled; EOF in flight" \
	env CONC_STDERR="$tmp/concurrent.stderr" tests/mcp/concurrent.py -- build/bin/airlock-mcp --db "user=conc"
# The threads' memory under valgrind: any error or leak makes the server exit 9, which fails it.
check "valgrind: concurrent calls without memory errors or leaks" \
	env CONC_STDERR="$tmp/concurrent-vg.stderr" tests/mcp/concurrent.py --burst 60 --seed 8 -- \
	valgrind --quiet --error-exitcode=9 --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect build/bin/airlock-mcp --db "user=conc"
check "a login that does not exist gets isError results, not silence" bash -c \
	'printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}" \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"list_checks\"}}" |
	 build/bin/airlock-mcp --db "user=postgres_impostor" 2>/dev/null | tail -1 | grep -q "isError\":true"'
# ---- who may be served: an agent login and nothing more.  Every other login is refused
# at start-up with the reason on stderr, exit 3, and not one tool call is answered.
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_executions","arguments":{}}}'
refused_login() { # LOGIN REASON-REGEX
	local out rc
	out=$(printf '%s\n' "$INIT" "$CALL" | build/bin/airlock-mcp --db "user=$1" 2>"$tmp/refused.err")
	rc=$?
	[ "$rc" = 3 ] || { echo "exit $rc, wanted 3; stdout: $out"; cat "$tmp/refused.err"; return 1; }
	[ -z "$out" ] || { echo "it answered: $out"; return 1; }
	grep -qE "^airlock-mcp: refused: database login \"$1\" $2" "$tmp/refused.err" ||
		{ echo "stderr:"; cat "$tmp/refused.err"; return 1; }
}
psql -q <<'SQL'
CREATE ROLE bystander LOGIN;
CREATE ROLE agent_su LOGIN SUPERUSER IN ROLE airlock_agent;
CREATE ROLE agent_rls LOGIN BYPASSRLS IN ROLE airlock_agent;
CREATE ROLE agent_cr LOGIN CREATEROLE IN ROLE airlock_agent;
CREATE ROLE agent_op LOGIN IN ROLE airlock_agent, airlock_operator;
CREATE ROLE agent_wk LOGIN IN ROLE airlock_agent, airlock_worker;
CREATE ROLE agent_sc LOGIN IN ROLE airlock_agent, airlock_scheduler;
CREATE ROLE agent_ow LOGIN IN ROLE airlock_agent, airlock_owner;
CREATE ROLE ops_group NOLOGIN IN ROLE airlock_operator;
CREATE ROLE agent_nested LOGIN IN ROLE airlock_agent, ops_group;
CREATE ROLE agent_group NOLOGIN IN ROLE airlock_agent;
CREATE ROLE agent_via_group LOGIN IN ROLE agent_group;
SQL
check "a login that is not an agent is refused" refused_login bystander 'is not a member of airlock_agent'
check "a superuser is refused, agent or not" refused_login agent_su 'is a superuser'
check "postgres itself is refused" refused_login postgres 'is a superuser'
check "an agent with BYPASSRLS is refused" refused_login agent_rls 'has BYPASSRLS'
check "an agent with CREATEROLE is refused" refused_login agent_cr 'has CREATEROLE'
check "an agent that is also an operator is refused" refused_login agent_op 'is also a member of airlock_operator'
check "an agent that is also the worker is refused" refused_login agent_wk 'is also a member of airlock_worker'
check "an agent that is also the scheduler is refused" refused_login agent_sc 'is also a member of airlock_scheduler'
check "an agent that is also the owner is refused" refused_login agent_ow 'is also a member of airlock_owner'
check "operator rights through another role are refused" refused_login agent_nested 'is also a member of airlock_operator'
check_out "an agent through a group role is served" '"id":2,"result"' bash -c \
	"printf '%s\n' '$INIT' '$CALL' | build/bin/airlock-mcp --db user=agent_via_group 2>/dev/null"
# Rights granted while the server runs: the next call is refused, and nothing is read.
late_grant() {
	psql -qc "CREATE ROLE late_op LOGIN IN ROLE airlock_agent" || return 1
	python3 - "$INIT" "$CALL" <<'PY'
import json, subprocess, sys
p = subprocess.Popen(["build/bin/airlock-mcp", "--db", "user=late_op"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def ask(line):
    p.stdin.write(line.encode() + b"\n"); p.stdin.flush()
    return json.loads(p.stdout.readline())
ask(sys.argv[1])
first = ask(sys.argv[2])
assert first["result"].get("isError") is not True, first
subprocess.run(["psql", "-qc", "GRANT airlock_operator TO late_op"], check=True)
second = ask(sys.argv[2].replace('"id":2', '"id":3'))
text = second["result"]["content"][0]["text"]
assert second["result"].get("isError") is True and "is also a member of airlock_operator" in text, second
p.stdin.close()
assert p.wait(timeout=10) == 0
PY
}
check "an agent granted operator rights while served is refused at its next call" late_grant
check_rc "a password in --db is refused (key=value)" 2 build/bin/airlock-mcp --db "user=hermes password=s3cret"
check_rc "a password in --db is refused (URI)" 2 build/bin/airlock-mcp --db "postgresql://hermes:s3cret@localhost/airlock"
check_out "... and says why" 'must not contain a password' build/bin/airlock-mcp --db "user=hermes password=s3cret"

# ---- numeric ids: invalid JSON numbers are parse errors, integers echo byte for byte
check "ids: 3,000 generated numeric ids answered as the docs promise" tests/mcp/ids.py -- "${MCP[@]}"

# ---- SIGTERM: a clean exit, also in the middle of a wait (which is answered first)
sigterm_test() {
	local fifo=$tmp/sig.in out=$tmp/sig.out pid rc n
	rm -f "$fifo" "$out" && mkfifo "$fifo"
	build/bin/airlock-mcp --db "user=hermes" <"$fifo" >"$out" 2>"$tmp/sig.stderr" &
	pid=$!
	exec 3>"$fifo"
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"target":"vm:web01","command":"true","action":"signal test","wait_seconds":300}}}' >&3
	for n in $(seq 100); do
		grep -q 'evt=mcp.wait ' "$tmp/sig.stderr" && break
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	exec 3>&-
	[ "$rc" = 0 ] || { echo "exit status $rc"; return 1; }
	tail -1 "$out" | grep -q '"ended":"stopped"' || { echo "no stopped answer: $(tail -c 300 "$out")"; return 1; }
}
check "SIGTERM during a wait: the wait is answered, then exit 0" sigterm_test
# ... and while it only waits for input (the reader blocked): exit 0 at once, not at the next line.
sigterm_idle_test() {
	local fifo=$tmp/sigidle.in pid n
	rm -f "$fifo" && mkfifo "$fifo"
	build/bin/airlock-mcp --db "user=hermes" <"$fifo" >"$tmp/sigidle.out" 2>"$tmp/sigidle.stderr" &
	pid=$!
	exec 3>"$fifo"
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' >&3
	for n in $(seq 100); do
		grep -q 'evt=mcp.initialized' "$tmp/sigidle.stderr" && break
		sleep 0.1
	done
	sleep 0.2 # the reader is back in its wait for input
	kill -TERM "$pid"
	for n in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		exec 3>&-
		echo "still running 10 s after SIGTERM"
		return 1
	fi
	exec 3>&-
	wait "$pid" || { echo "exit status $?"; return 1; }
}
check "SIGTERM while waiting for input: exit 0 at once" sigterm_idle_test

# ---- hostile input: every statement hermes sends is logged from here on
psql -qc "ALTER SYSTEM SET log_line_prefix = '%m [%p] user=%u '" -c "SELECT pg_reload_conf()" >/dev/null
psql -qc "ALTER ROLE hermes SET log_statement = 'all'"
# ... and the server sends hermes's session a stream of DEBUG notices: they belong on stderr.
psql -qc "ALTER ROLE hermes SET client_min_messages = 'debug1'"
state() {
	psql -tAc "SELECT (SELECT count(*) FROM airlock.executions) || '/' ||
		(SELECT count(*) FROM airlock.execution_events) || '/' ||
		(SELECT count(*) FROM airlock.relationships) || '/' ||
		(SELECT md5(string_agg(slug || attributes::text, ',' ORDER BY slug)) FROM airlock.entities)"
}
# Function calls hermes sent that reached the server (statement logging is synchronous).
calls() {
	grep -E 'user=hermes .*LOG: +(statement|execute [^:]*): .*airlock\.' "$AIRLOCK_PGTMP/server.log" | wc -l
}
before=$(state)
calls_before=$(calls)
check "hostile: 10,000 lines answered correctly" env HOSTILE_STDERR="$tmp/hostile.stderr" \
	tests/mcp/hostile.py --lines 10000 -- "${MCP[@]}"
check_eq "hostile: the database is unchanged" "$before" "$(state)"
check "hostile: server notices went to stderr as log lines" \
	grep -qE '^ts=[^ ]+ level=info evt=mcp.db_notice' "$tmp/hostile.stderr"
# The corpus ends with one valid read-only call: exactly one function call may have arrived.
check_eq "hostile: one statement reached the database (the corpus's one valid call)" \
	1 "$(( $(calls) - calls_before ))"

# ---- the same under AddressSanitizer and UndefinedBehaviorSanitizer
make -s build/libairlock-asan.a >/dev/null || exit 1 # up to date with the sources, never stale
PKGS="libpq libcurl libcjson openssl libssh2 yaml-0.1"
if cc -std=c11 -D_GNU_SOURCE -g -O1 -I. $(pkg-config --cflags $PKGS) \
	-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
	-o "$tmp/airlock-mcp-asan" mcp/main.c build/libairlock-asan.a $(pkg-config --libs $PKGS) \
	-lpthread -lm 2>"$tmp/asan-build.log"; then
	pass "asan: build airlock-mcp with ASan+UBSan"
else
	failt "asan: build airlock-mcp with ASan+UBSan" "$(cat "$tmp/asan-build.log")"
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
check "asan: numeric ids" tests/mcp/ids.py --count 1000 --seed 9 -- "$tmp/airlock-mcp-asan" --db "user=hermes"
check "asan: hostile lines" env HOSTILE_STDERR="$tmp/hostile-asan.stderr" \
	tests/mcp/hostile.py --lines 10000 --seed 11 -- "$tmp/airlock-mcp-asan" --db "user=hermes"
check "asan: protocol transcript" env DRIVE_STDERR="$tmp/protocol-asan.stderr" tests/mcp/drive.py tests/mcp/transcripts/protocol.txt -- \
	"$tmp/airlock-mcp-asan" --db "user=hermes"
check "asan: batch transcript" env DRIVE_STDERR="$tmp/batch-asan.stderr" tests/mcp/drive.py tests/mcp/transcripts/version-2025-03-26.txt -- \
	"$tmp/airlock-mcp-asan" --db "user=hermes"
# Every tool path under the sanitizers: tools.txt and wait.txt again, in a fresh database.
asan_db() {
	createdb airlock_asan && PGDATABASE=airlock_asan build/bin/airlock migrate >/dev/null &&
		PGDATABASE=airlock_asan build/bin/airlock seed seeds/ >/dev/null
}
check "asan: fresh database for the tool transcripts" asan_db
for t in tools wait; do
	check "asan: transcript $t" env PGDATABASE=airlock_asan DRIVE_STDERR="$tmp/$t-asan.stderr" \
		tests/mcp/drive.py "tests/mcp/transcripts/$t.txt" -- "$tmp/airlock-mcp-asan" --db "user=hermes"
done
check "asan: concurrent calls" env PGDATABASE=airlock_asan CONC_STDERR="$tmp/concurrent-asan.stderr" \
	tests/mcp/concurrent.py --burst 100 --seed 6 -- "$tmp/airlock-mcp-asan" --db "user=conc"
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error' "$tmp"/*.stderr 2>/dev/null; then
	failt "asan: no sanitizer reports" "$(grep -hE 'Sanitizer|runtime error' "$tmp"/*.stderr | head)"
else
	pass "asan: no sanitizer reports"
fi

# ---- end to end: a real airlockd runs what the agent asks on the rig's Proxmox node
# (its own throwaway database and rig; tests/mcp/e2e.sh)
check "e2e: agent over MCP, airlockd on the rig, operator on the CLI" \
	env -u AIRLOCK_PGTMP -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u ASAN_OPTIONS -u UBSAN_OPTIONS \
	scripts/pgtmp --quiet -- tests/rig/rigctl run -- tests/mcp/e2e.sh

finish
