#!/bin/bash
# The console end to end: a real airlock-web, airlockd, the rig and a
# throwaway database.  HTTP-level checks of every property, then the same
# flows in headless Chromium (tests/web/browser.mjs).  Runs inside
# scripts/pgtmp and `tests/rig/rigctl run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/daemon/lib.sh
. tests/web/lib.sh

setup_db || { echo "set-up failed"; exit 1; }
web_setup_db || { echo "web set-up failed"; exit 1; }
write_config d1 >/dev/null
start_daemon d1 || { echo "airlockd did not start"; exit 1; }

# ---- configuration
cat >"$WORK/open.yaml" <<EOC
listen: 0.0.0.0:8080
database: "user=web"
operator_database: "host=127.0.0.1"
EOC
check_rc "plain HTTP on a non-loopback address is refused (exit 1)" 1 $W -n -c "$WORK/open.yaml"
check_out "and the refusal says why" 'plain HTTP is refused on 0.0.0.0' $W -n -c "$WORK/open.yaml"
sed -i 's/^database: .*/database: "user=web password=oops"/; s/^listen: .*/listen: 127.0.0.1:8080/' "$WORK/open.yaml"
check_out "a password in a connection string is refused" 'must not hold a password' $W -n -c "$WORK/open.yaml"

# ---- installed as a service
stage=$WORK/stage
check "make install stages airlock-web" make -s install DESTDIR="$stage"
for f in bin/airlock-web share/man/man1/airlock-web.1 lib/systemd/system/airlock-web.service \
	share/airlock/airlock-web.yaml; do
	check "installed: $f" test -s "$stage/usr/local/$f"
done
check "installed: /etc/airlock/airlock-web.yaml" test -s "$stage/etc/airlock/airlock-web.yaml"
unitdir=$WORK/unit
mkdir -p "$unitdir/man/man1"
cp man/airlock-web.1 "$unitdir/man/man1/"
sed -e "s|@BINDIR@|$PWD/build/bin|g" -e "s|@SYSCONFDIR@|/etc|g" dist/airlock-web.service >"$unitdir/airlock-web.service"
check "systemd-analyze verify: airlock-web.service is clean" \
	env MANPATH="$unitdir/man" systemd-analyze verify "$unitdir/airlock-web.service"
check_out "the shipped config passes airlock-web -n" 'is valid' \
	$W -n -c "$stage/etc/airlock/airlock-web.yaml"

start_web main 'signin_max_failures: 50' || { echo "airlock-web did not start"; exit 1; }
MAIN_URL=$URL
MAIN_PID=$WPID

# ---- signing in
check_eq "a page without a session sends to the sign-in form" 303 \
	"$(curl -s -o /dev/null -w '%{http_code}' "$URL/")"
check_eq "a wrong password is refused" 403 "$(signin x alice wrong-password)"
check_eq "and recorded" t "$(q "SELECT count(*) = 1 FROM airlock.web_history WHERE kind = 'sign_in_failed' AND login = 'alice'")"
check_eq "alice signs in with her own login" 303 "$(signin alice alice alice-secret-pw)"
cookie=$(curl -s -D - -o /dev/null --data 'login=bob&password=bob-secret-pw' "$URL/login" | grep -i '^set-cookie:')
check_out "the session cookie is HttpOnly and SameSite=Strict" 'HttpOnly; SameSite=Strict' echo "$cookie"
check_out "its id is 256 random bits (64 hex)" '^Set-Cookie: airlock=[0-9a-f]{64};' echo "$cookie"
check_eq "the sign-in is recorded" t "$(q "SELECT count(*) = 1 FROM airlock.web_history WHERE kind = 'sign_in' AND login = 'alice'")"
check_eq "a superuser is refused" 403 "$(signin r rooty rooty-secret-pw)"
check_out "with the database's reason" 'rooty is a superuser and never counts as an approver' cat "$WORK/r.signin.html"
check_eq "an agent is refused" 403 "$(signin h hermes hermes-secret-pw)"
check_out "with the database's reason" 'hermes is not a member of airlock_operator' cat "$WORK/h.signin.html"
check_eq "a login outside airlock_operator is refused" 403 "$(signin p plain plain-secret-pw)"
check_out "and told so" 'plain is not a member of airlock_operator' cat "$WORK/p.signin.html"
check_eq "fault check: pg_hba lets trusty in with any password" trusty \
	"$(PGPASSWORD=anything psql -XAtq -h 127.0.0.1 -U trusty -c 'SELECT session_user')"
check_eq "a login whose password the database does not check is refused" 403 "$(signin t trusty whatever-pw)"
check_out "and told why" 'does not check this login' cat "$WORK/t.signin.html"

# ---- the pending list, live over server-sent events
check_eq "alice sees the pending page" 200 "$(get alice /)"
check_out "it says nothing waits" 'Nothing waits for a decision' cat "$WORK/alice.html"
curl -s -N -b "$WORK/alice.jar" "$URL/events" >"$WORK/sse.out" 2>/dev/null &
SSE=$!
DAEMON_PIDS+=("$SSE")
check "the event stream opens" wait_file 10 "$WORK/sse.out" 'retry: 3000'
id1=$(as_agent $A run --target proxmox-host:hubris --change-id chg-9 --action 'install NFS' -- apt-get install -y nfs-kernel-server)
check "it is held for approval" wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id1"
check "the stream reports the change (LISTEN, no polling)" wait_file 10 "$WORK/sse.out" 'event: change'
check_eq "the pending fragment lists it" 200 "$(get alice /pending.frag)"
check_out "with its class, requester and votes" "data-id=\"$id1\".*config_mutation.*by hermes.*votes <span class=\"votes\">0/1" cat "$WORK/alice.html"
check_eq "without a session the stream is refused" 401 "$(curl -s -o /dev/null -w '%{http_code}' "$URL/events")"

# ---- a request page
check_eq "alice opens the request" 200 "$(get alice /r/$id1)"
check_out "the exact command" 'id="command">apt-get install -y nfs-kernel-server</pre>' cat "$WORK/alice.html"
check_out "the reasons with their rule ids" 'class="rule">rule [a-z]' cat "$WORK/alice.html"
check_out "action and change id" 'install NFS.*chg-9' cat "$WORK/alice.html"
check_out "the rewind status" 'id="rewind">[^<]*rewind' cat "$WORK/alice.html"
check_out "the blast radius lists the host's guests" 'id="blast".*vm:db01.*guest on this host' cat "$WORK/alice.html"
check_out "the preview section (none yet, or the one airlockd made)" 'id="preview"><(p class="note">no preview|div class="preview")' cat "$WORK/alice.html"

# A host command that names guests: the guest it touches, with its own protection.
id2=$(as_agent $A run --target proxmox-host:hubris -- 'qm destroy 102 && pct stop 201')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id2"
get alice /r/$id2 >/dev/null
check_out "qm destroy 102 shows the VM it destroys" '<tr class="named"><td>touched by the command</td><td class="entity">vm:db01</td><td>qm destroy' cat "$WORK/alice.html"
check_out "pct stop 201 shows the container" '<tr class="named"><td>touched by the command</td><td class="entity">lxc:nfs-export</td><td>pct stop' cat "$WORK/alice.html"
check_out "with each guest's own protection" 'class="entity">vm:db01</td><td>qm destroy</td><td class="protection">VM known to Zerto as db01' cat "$WORK/alice.html"
check_out "a container it names cannot be rewound" 'class="entity">lxc:nfs-export</td><td>pct stop</td><td class="protection">not a VM' cat "$WORK/alice.html"
check_out "and the relations of the guests it names (both directions)" 'proxmox-host:hubris <span class="note">\(via lxc:nfs-export\)</span></td><td>runs-on \(out\)' cat "$WORK/alice.html"

# The preview, once the previews table exists (made here with its documented
# columns when no migration has made it yet).
q "CREATE TABLE IF NOT EXISTS airlock.execution_previews (execution_id bigint, ord integer, command text,
	exit_code integer, stdout bytea, stderr bytea, truncated boolean, error text, created_at timestamptz DEFAULT now());
   GRANT SELECT ON airlock.execution_previews TO airlock_operator;
   INSERT INTO airlock.execution_previews (execution_id, ord, command, exit_code, stdout, stderr, truncated, error)
   VALUES ($id2, (SELECT coalesce(max(ord), 0) + 1 FROM airlock.execution_previews WHERE execution_id = $id2), 'qm config 102', 0, E'name: db01\\nmemory: 4096\\033[31m', '', false, NULL)" >/dev/null
get alice /r/$id2 >/dev/null
check_out "the preview is shown with its command and exit code" 'read-only preview: <code>qm config 102</code> &middot; exit 0' cat "$WORK/alice.html"
check_out "and its output, escapes visible" 'memory: 4096\\x1b\[31m' cat "$WORK/alice.html"

# However a host command spells the guest, the guest is found (and only a real one).
named() { echo "SELECT coalesce(string_agg(tool || ' ' || verb || ' ' || vmid, ', ' ORDER BY vmid, tool), '-') FROM airlock._named_guests(:'c')" | psql -XAtq -v c="$1"; }
while IFS='|' read -r cmd want; do
	check_eq "named guests in: $cmd" "$want" "$(named "$cmd")"
done <<'EOC'
sudo /usr/sbin/qm destroy 102 --purge|qm destroy 102
qm stop --skiplock 1 102|qm stop 102
qm guest exec 102 -- rm -rf /|qm guest exec 102
bash -c 'qm  destroy	"103"'|qm destroy 103
pct stop 201; pct destroy 202|pct stop 201, pct destroy 202
qmrestore /var/lib/vz/dump/vzdump-qemu-101.vma.zst 101 --force|qm restore 101
qm list 2>/dev/null|-
xqm destroy 102|-
qm destroy 10245678901|-
EOC

# A command with escape sequences, bidi controls and markup: shown, not obeyed.
nasty=$(printf 'echo ok\033[2K\r\033]0;pwned\007 \342\200\256gpj.exe <script>alert(1)</script> <b>bold</b>; systemctl restart pveproxy')
id3=$(as_agent $A run --target proxmox-host:hubris -- "$nasty")
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id3"
get alice /r/$id3 >/dev/null
check_out "control characters are shown as escapes" 'echo ok\\x1b\[2K\\r\\x1b\]0;pwned\\x07 \\u202egpj.exe' cat "$WORK/alice.html"
check_out "markup is shown as text" '&lt;script&gt;alert\(1\)&lt;/script&gt; &lt;b&gt;bold&lt;/b&gt;' cat "$WORK/alice.html"
check_eq "no raw ESC, BEL or RLO byte reaches the page" 0 "$(grep -c "$(printf '\033\|\007\|\342\200\256')" "$WORK/alice.html")"
check_eq "no script element from the command" 0 "$(grep -c '<script>alert' "$WORK/alice.html")"
check_out "the reader is warned" 'id="hidden-warning"' cat "$WORK/alice.html"
check_out "every page forbids inline script" "script-src 'self'" curl -s -D - -o /dev/null -b "$WORK/alice.jar" "$URL/r/$id3"

# ---- writes: CSRF, same origin, self-approval, stale pages
get alice /r/$id1 >/dev/null
csrf=$(csrf_of alice)
hash=$(hash_of alice)
check_eq "approve without a CSRF token is refused" 403 "$(post alice /r/$id1/approve "hash=$hash")"
check_eq "approve with another token is refused" 403 "$(post alice /r/$id1/approve "csrf=$(printf '%064d' 0)" "hash=$hash")"
check_eq "approve from another origin is refused" 403 \
	"$(curl -s -b "$WORK/alice.jar" -o /dev/null -w '%{http_code}' -H 'Origin: https://evil.example' \
		--data-urlencode "csrf=$csrf" --data-urlencode "hash=$hash" "$URL/r/$id1/approve")"
check_eq "a GET never approves" 404 "$(get alice /r/$id1/approve)"
check_eq "and nothing was approved" pending_approval "$(state_of $id1)"
check_eq "an approval of another payload is refused" 409 "$(post alice /r/$id1/approve "csrf=$csrf" "hash=deadbeef")"
check_eq "still nothing approved" pending_approval "$(state_of $id1)"
check_eq "reject without a reason is refused" 400 "$(post alice /r/$id1/reject "csrf=$csrf")"
ida=$(as_alice $A run --target proxmox-host:hubris -- 'systemctl restart pvedaemon; echo self-approval')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $ida"
get alice /r/$ida >/dev/null
check_out "the page warns alice it is her own request" 'id="own"' cat "$WORK/alice.html"
check_eq "self-approval is refused by the database" 403 "$(post alice /r/$ida/approve "csrf=$csrf" "hash=$(hash_of alice)")"
check_out "with its words" 'nobody may approve their own request' cat "$WORK/alice.post.html"
check_eq "and it still waits" pending_approval "$(state_of $ida)"

# ---- approve, and see it run
check_eq "alice approves with a note" 200 "$(post alice /r/$id1/approve "csrf=$csrf" "hash=$hash" 'note=window 4')"
check_out "the page says approved" 'id="notice">approve: approved' cat "$WORK/alice.post.html"
check "the daemon runs it" wait_for 30 "SELECT state IN ('succeeded', 'failed') FROM airlock.executions WHERE id = $id1"
check_eq "it ran exactly once" 1 "$(ran_count 'apt-get install -y nfs-kernel-server')"
check_eq "the approval is alice's own, with the note" "alice|window 4" \
	"$(q "SELECT approver || '|' || reason FROM airlock.approvals WHERE execution_id = $id1")"
check_eq "the decision is in the console's history" t \
	"$(q "SELECT count(*) = 1 FROM airlock.web_history WHERE kind = 'decision' AND login = 'alice' AND execution_id = $id1")"
get alice /r/$id1/state.frag >/dev/null
check_out "the state fragment shows the outcome and output" 'id="state">(succeeded|failed)' cat "$WORK/alice.html"

# ---- a destructive request needs a second operator
idd=$(as_agent $A run --target proxmox-host:hubris -- reboot)
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idd"
get alice /r/$idd >/dev/null
check_eq "alice's approval of a reboot" 200 "$(post alice /r/$idd/approve "csrf=$(csrf_of alice)" "hash=$(hash_of alice)")"
check_out "is one vote of two" 'approve: pending_approval.*id="votes">1/2' cat "$WORK/alice.post.html"
check_eq "bob signs in" 303 "$(signin bob bob bob-secret-pw)"
get bob /r/$idd >/dev/null
check_eq "bob's approval" 200 "$(post bob /r/$idd/approve "csrf=$(csrf_of bob)" "hash=$(hash_of bob)")"
check_out "completes it" 'approve: approved' cat "$WORK/bob.post.html"
check "and it runs" wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $idd"

# ---- reject
get bob /r/$id3 >/dev/null
check_eq "bob rejects with a reason" 200 "$(post bob /r/$id3/reject "csrf=$(csrf_of bob)" 'reason=hidden characters')"
check_eq "it is rejected" rejected "$(state_of $id3)"

# ---- held output: an observation printed a private key
mkdir -p "$AIRLOCK_RIG_ROOT/node/srv"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ webheld-7c1e\n-----END OPENSSH PRIVATE KEY-----\n' \
	>"$AIRLOCK_RIG_ROOT/node/srv/web-held.txt"
chmod 644 "$AIRLOCK_RIG_ROOT/node/srv/web-held.txt"
idh=$(as_agent $A run --target proxmox-host:hubris -- 'cat /srv/web-held.txt')
idh2=$(as_agent $A run --target proxmox-host:hubris -- 'cat /srv/web-held.txt; echo again')
check "the observation runs and its output is held" wait_for 60 \
	"SELECT count(*) = 2 FROM airlock.output_holds WHERE execution_id IN ($idh, $idh2) AND state = 'held'"
get alice / >/dev/null
check_out "the pending page lists the held output" "href=\"/r/$idh#held\".*output held.*contains an OpenSSH private key at line 1 of stdout" cat "$WORK/alice.html"
get alice /r/$idh >/dev/null
check_out "the request page shows the hold" 'id="hold-state" data-state="held">Output held: it contains an OpenSSH private key at line 1 of stdout' cat "$WORK/alice.html"
check_out "its bytes behind a click" '<details id="held-bytes"><summary>Show the held output \(126 bytes of stdout' cat "$WORK/alice.html"
check_out "for the operator to read" 'webheld-7c1e' cat "$WORK/alice.html"
check_out "and the release and discard forms" 'id="release-output-form".*id="discard-output-form"' cat "$WORK/alice.html"
check_eq "a release without a reason is refused" 400 "$(post alice /r/$idh/release-output "csrf=$(csrf_of alice)")"
check_eq "a release without a CSRF token is refused" 403 "$(post alice /r/$idh/release-output 'reason=x')"
check_eq "still held" held "$(q "SELECT state FROM airlock.output_holds WHERE execution_id = $idh")"
check_eq "alice releases it" 200 "$(post alice /r/$idh/release-output "csrf=$(csrf_of alice)" 'reason=a test key')"
check_out "the page says so" 'id="notice">output: released' cat "$WORK/alice.post.html"
check_out "the agent now reads it" 'webheld-7c1e' as_agent psql -XAtq -c "SELECT airlock.get_execution($idh) ->> 'stdout'"
check_eq "the release is in the console's history" t \
	"$(q "SELECT count(*) = 1 FROM airlock.web_history WHERE kind = 'decision' AND login = 'alice' AND execution_id = $idh AND detail = 'output: released'")"
get bob /r/$idh2 >/dev/null
check_eq "bob discards the other" 200 "$(post bob /r/$idh2/discard-output "csrf=$(csrf_of bob)" 'reason=not needed')"
check_eq "it is discarded, by bob" "discarded bob" "$(q "SELECT state || ' ' || decided_by FROM airlock.output_holds WHERE execution_id = $idh2")"
check_eq "a second decision is refused" 409 "$(post bob /r/$idh2/release-output "csrf=$(csrf_of bob)" 'reason=late')"

# ---- history and audit
check_eq "history search" 200 "$(get alice '/history?q=nfs-kernel')"
check_out "finds the request" "href=\"/r/$id1\"" cat "$WORK/alice.html"
check_eq "a state filter" 200 "$(get alice '/history?state=rejected')"
check_out "shows only that state" "href=\"/r/$id3\"" cat "$WORK/alice.html"
check_eq "the audit page" 200 "$(get alice /audit)"
check_out "shows the chain verified" 'id="audit">Intact: [0-9]+ events checked' cat "$WORK/alice.html"
check_out "and the console's sign-ins" 'sign_in_failed.*trusty' cat "$WORK/alice.html"

# ---- the side door: its page, and its line on the pending page
check_eq "nothing reported yet: no side-door line on the pending page" 0 \
	"$(get alice / >/dev/null; grep -c 'id="side-door-line"' "$WORK/alice.html")"
as_agent psql -XAtq -c "SELECT airlock.hook_event('Bash', 'deny', 'managed_destination: ssh to proxmox-host:hubris', '{\"host\": \"ci-<b>runner</b>\"}')" >/dev/null
as_agent psql -XAtq -c "SELECT airlock.report_host_check(E'ci-<b>runner</b>\\u001b[31m', 1, '[{\"status\": \"open\", \"subject\": \"proxmox-host:hubris\", \"detail\": \"this host logs in to proxmox-host:hubris as root with ~/.ssh/id_ed25519\"}]')" >/dev/null
check_eq "the side-door page" 200 "$(get alice /side-door)"
check_out "has the nodes' observations and the hosts' reports apart" \
	'<h2>Observed by airlockd on the nodes</h2>.*<h2>Reported by agents. hosts, not verified</h2>' \
	tr -d '\n' <"$WORK/alice.html"
check_out "the host's denial is in the reported table" \
	'<table class="sidedoor" id="reported">.*<td>hook</td><td>ci-&lt;b&gt;runner&lt;/b&gt;</td><td>hermes</td><td>deny</td>' \
	tr -d '\n' <"$WORK/alice.html"
check_out "and its open door" '<td>host_check</td>.*<td>1 open door\(s\)</td><td>this host logs in to proxmox-host:hubris' \
	tr -d '\n' <"$WORK/alice.html"
check "the host's name is shown as text, its markup and escape inert" \
	sh -c "! grep -q '<b>runner' '$WORK/alice.html' && grep -q 'hidden-chars' '$WORK/alice.html'"
check_eq "the pending page has one side-door line" 200 "$(get alice /)"
check_out "linking the page, counting the reports as not verified" \
	'id="side-door-line"><a href="/side-door">Side door: 1 hook denial\(s\) and 0 ask\(s\) in the last 24 h, 1 agent host\(s\) with an open door \(.*ci-&lt;b&gt;runner&lt;/b&gt;.*\), reported by agents. hosts, not verified' \
	cat "$WORK/alice.html"
check_out "the navigation leads there" '<a href="/side-door">Side door</a>' cat "$WORK/alice.html"

# ---- a lost database connection ends one session, not the server
check "fault: alice's console connection is terminated" q \
	"SELECT count(*) > 0 FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'alice' AND application_name = 'airlock-web') t"
check_eq "her next page says so" 503 "$(get alice /)"
check_eq "the session is over" 303 "$(get alice /)"
check_eq "bob's session still works" 200 "$(get bob /)"
check_eq "and alice signs in again" 303 "$(signin alice alice alice-secret-pw)"

# ---- airlock-web's own connection lost (a database restart): made again
check "fault: airlock-web's own connection is terminated" q \
	"SELECT count(*) > 0 FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'web' AND application_name = 'airlock-web') t"
before=$(q "SELECT count(*) FROM airlock.web_history WHERE kind = 'sign_in_failed'")
check_eq "a failed sign-in after it is still refused" 403 "$(signin x2 alice not-her-password)"
check_eq "and still recorded (the connection was made again)" $((before + 1)) \
	"$(q "SELECT count(*) FROM airlock.web_history WHERE kind = 'sign_in_failed'")"

# ---- sign out
get bob / >/dev/null
check_eq "bob signs out" 303 "$(post bob /logout "csrf=$(csrf_of bob)")"
check_eq "his old cookie no longer works" 303 "$(get bob /)"
check_eq "the sign-out is recorded" t "$(q "SELECT count(*) = 1 FROM airlock.web_history WHERE kind = 'sign_out' AND login = 'bob'")"

# ---- TOTP
out=$(PGUSER=dave $A operator totp enroll 2>&1)
check_out "dave enrols a second factor" '^enrolled: dave' echo "$out"
secret=$(sed -n 's/^secret (base32, shown once): //p' <<<"$out")
check_out "and gets an otpauth URI" 'otpauth://totp/airlock:dave\?secret=[A-Z2-7]{32}&issuer=airlock' echo "$out"
check_rc "dave cannot replace it himself (exit 3)" 3 env PGUSER=dave $A operator totp enroll
check_rc "nor enrol bob (exit 3)" 3 env PGUSER=dave $A operator totp enroll bob
check_out "no operator can read the secrets" 'permission denied' env PGUSER=alice psql -XAtq -c 'SELECT * FROM airlock.operator_totp'
check_out "nor ask for them" 'permission denied' env PGUSER=alice psql -XAtq -c "SELECT * FROM airlock.web_totp_secret('dave')"
check_eq "dave's password alone no longer signs in" 403 "$(signin dave dave dave-secret-pw)"
check_eq "a wrong code does not" 403 "$(signin dave dave dave-secret-pw 000000)"
code=$(totp "$secret")
check_eq "password and the current code do" 303 "$(signin dave dave dave-secret-pw "$code")"
check_eq "the same code never works twice" 403 "$(signin dave2 dave dave-secret-pw "$code")"
check_eq "the failures are recorded" t \
	"$(q "SELECT count(*) >= 3 FROM airlock.web_history WHERE kind = 'sign_in_failed' AND login = 'dave' AND detail LIKE '%one-time code%'")"
check_rc "an administrator may replace it" 0 $A operator totp enroll dave

# ---- rate limits, per address and per login (addresses from a trusted proxy)
start_web limited 'trust_proxy: true' 'signin_max_failures: 3' 'signin_window_s: 600'
xff() { curl -s -o /dev/null -w '%{http_code}' -H "X-Forwarded-For: $1" \
	--data-urlencode "login=$2" --data-urlencode "password=$3" "$URL/login"; }
for i in 1 2 3; do xff 10.0.0.$i bob wrong-$i >/dev/null; done
check_eq "after 3 failures for bob, even his right password waits" 429 "$(xff 10.0.0.9 bob bob-secret-pw)"
for i in 1 2 3; do xff 10.9.9.9 "nobody$i" wrong >/dev/null; done
check_eq "after 3 failures from one address, alice from there waits" 429 "$(xff 10.9.9.9 alice alice-secret-pw)"
check_eq "alice from elsewhere signs in" 303 "$(xff 10.9.9.10 alice alice-secret-pw)"
check_eq "rate-limited attempts are recorded" t \
	"$(q "SELECT count(*) >= 2 FROM airlock.web_history WHERE detail LIKE 'rate limited%' AND address IN ('10.0.0.9', '10.9.9.9')")"

# ---- expiry
start_web short 'session_idle_s: 2' 'session_max_s: 30'
SHORT_URL=$URL

check_eq "alice signs in to a console with 2 s idle expiry" 303 "$(signin s alice alice-secret-pw)"
ide=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pvestatd')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $ide"
get s /r/$ide >/dev/null
sleep 3
check_eq "past the idle expiry an approval is refused" 403 "$(post s /r/$ide/approve "csrf=$(csrf_of s)" "hash=$(hash_of s)")"
check_out "and told the session ended" 'Session ended' cat "$WORK/s.post.html"
check_eq "nothing was approved" pending_approval "$(state_of $ide)"

# ---- TLS
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -keyout "$WORK/web.key" \
	-out "$WORK/web.crt" >/dev/null 2>&1
start_web tls "tls_cert: $WORK/web.crt" "tls_key: $WORK/web.key"
check_out "over TLS the cookie is also Secure, with the __Host- prefix" \
	'Set-Cookie: __Host-airlock=[0-9a-f]{64}; Path=/; HttpOnly; SameSite=Strict; Secure' \
	curl -sk -D - -o /dev/null --data 'login=alice&password=alice-secret-pw' "$URL/login"
check_out "and HSTS is sent" 'Strict-Transport-Security: max-age' curl -sk -D - -o /dev/null "$URL/login"
check_rc "plain HTTP to the TLS port gets no page" 1 bash -c "curl -s --max-time 5 http://${URL#https://}/login | grep -q 'Sign in'"

# ---- the same in a real browser
URL=$MAIN_URL
if [ "${WEB_BROWSER:-1}" = 1 ] && [ "${WEB_VALGRIND_ONLY:-0}" = 0 ]; then
	check "headless Chromium: sign in, live list, command, blast radius, rewind, approve, run, quorum, self-approval, CSRF, expiry, escapes" \
		env WEB_URL="$MAIN_URL" WEB_SHORT_URL="$SHORT_URL" WEB_LOG="$WORK/browser.log" \
		node tests/web/browser.mjs
	[ -s "$WORK/browser.log" ] && sed 's/^/# browser: /' "$WORK/browser.log"
fi

check "airlock-web is still up after all of it" kill -0 "$MAIN_PID"

# ---- a short run under valgrind: sign-ins, pages, a stream, decisions, sign-out
WEB_WRAP="valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file=$WORK/web-vg.valgrind" \
	start_web vg 'session_idle_s: 600' || { echo "airlock-web under valgrind did not start"; cat "$WORK/vg.log"; }
VGPID=$WPID
check_eq "valgrind: a failed sign-in" 403 "$(signin vgx alice not-her-password)"
check_eq "valgrind: alice signs in" 303 "$(signin vga alice alice-secret-pw)"
check_eq "valgrind: bob signs in" 303 "$(signin vgb bob bob-secret-pw)"
curl -s -N -b "$WORK/vga.jar" "$URL/events" >"$WORK/vg-sse.out" 2>/dev/null &
VGSSE=$!
DAEMON_PIDS+=("$VGSSE")
check "valgrind: the stream opens" wait_file 60 "$WORK/vg-sse.out" 'retry: 3000'
idv=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pve-firewall')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idv"
check "valgrind: the stream sees it" wait_file 30 "$WORK/vg-sse.out" 'event: change'
for p in / /pending.frag /r/$idv /r/$idv/state.frag '/history?q=pve' /audit /side-door /static/app.css /nowhere; do
	get vga "$p" >/dev/null
done
get vga /r/$idv >/dev/null
check_eq "valgrind: alice approves" 200 "$(post vga /r/$idv/approve "csrf=$(csrf_of vga)" "hash=$(hash_of vga)")"
get vgb / >/dev/null
check_eq "valgrind: a forged post" 403 "$(post vgb /r/$idv/approve "csrf=0")"
check_eq "valgrind: bob signs out" 303 "$(post vgb /logout "csrf=$(csrf_of vgb)")"
kill -TERM "$VGPID"
wait "$VGPID"
check_eq "valgrind: airlock-web stops cleanly with no memory errors or leaks" 0 "$?"
check_out "valgrind: no bytes definitely or indirectly lost" 'definitely lost: 0 bytes|no leaks are possible' cat "$WORK/web-vg.valgrind"
check_out "valgrind: ERROR SUMMARY: 0 errors" 'ERROR SUMMARY: 0 errors' cat "$WORK/web-vg.valgrind"
[ "$T_FAIL" -gt 0 ] && grep -B3 -A25 "definitely lost in\|Invalid\|uninitialised" "$WORK/web-vg.valgrind" | head -60
finish
