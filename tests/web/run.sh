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
# Receivers for the notifications, and the chat's replies (Slack's
# response_url): every message they get is a line of $RLOG.
RLOG="$WORK/received.jsonl"
python3 tests/notify/receiver.py "$WORK/recv.port" "$RLOG" &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/recv.port" ] && break; sleep 0.1; done
P=$(cat "$WORK/recv.port")
CHK() { python3 tests/notify/check.py "$RLOG" "$@"; }
head -c 32 /dev/urandom | base64 >"$WORK/mm.secret"
head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/slack.signing"
chmod 600 "$WORK/mm.secret" "$WORK/slack.signing"
# shorty's requests expire after 3 s: a gate rule for that agent.
sed -i 's/^rules: \[\]$/rules:\n  - {agent: shorty, ttl: 3s}/' "$WORK/seeds/gate.yaml"
$A seed "$WORK/seeds" >/dev/null 2>&1 || { echo "seed with the ttl rule failed"; exit 1; }
q "CREATE ROLE shorty LOGIN IN ROLE airlock_agent" >/dev/null
write_config d1 "webhooks:" \
	"  - {name: json, url: \"http://127.0.0.1:$P/json\", events: [pending_approval]}" \
	"  - {name: alice, url: \"http://127.0.0.1:$P/alice\", operator: alice, events: [pending_approval]}" \
	"  - {name: slack, url: \"http://127.0.0.1:$P/slack\", format: slack, chat_callback: true, events: [pending_approval]}" \
	"  - {name: mm, url: \"http://127.0.0.1:$P/mm\", format: mattermost, chat_callback: true, secret_file: $WORK/mm.secret, events: [pending_approval]}" \
	"notifications:" "  poll_ms: 200" >/dev/null
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

start_web main 'signin_max_failures: 50' "public_url: http://127.0.0.1:@PORT@" \
	"slack_signing_secret_file: $WORK/slack.signing" "slack_response_prefix: http://127.0.0.1:$P/slack-response/" \
	"mattermost_secret_file: $WORK/mm.secret" || { echo "airlock-web did not start"; exit 1; }
MAIN_URL=$URL
MAIN_PID=$WPID
check "airlock-web publishes its public_url for the links airlock hands out" \
	wait_for 10 "SELECT public_url = '$URL' FROM airlock.console_location"

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
check_out "with each guest's own protection: none assessed yet for db01, and nothing claimed" \
	'class="entity">vm:db01</td><td>qm destroy</td><td class="protection">not checked against Zerto yet: no request on it was assessed \(airlock would look it up as db01\)' cat "$WORK/alice.html"
check_eq "no VM is said to be known to Zerto from its name alone" 0 "$(grep -c 'known to Zerto' "$WORK/alice.html")"
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
check_out "each control character is shown as an escape, marked on its own" \
	'echo ok<mark class="hidden-char" title="U\+001B">\\x1b</mark>\[2K<mark class="hidden-char" title="U\+000D">\\r</mark><mark class="hidden-char" title="U\+001B">\\x1b</mark>\]0;pwned<mark class="hidden-char" title="U\+0007">\\x07</mark> <mark class="hidden-char bidi" title="U\+202E, changes the direction of the text">\\u202e</mark>gpj.exe' \
	cat "$WORK/alice.html"
check_out "and counted, the direction-changing one too" 'id="hidden-count" data-hidden="5" data-bidi="1">5 hidden characters marked, 1 changing' cat "$WORK/alice.html"
check_out "approving asks to confirm reading it (hard to read)" 'name="confirm_read" value="1" required id="confirm-read"> I read all of it: 5 hidden characters \(1 direction-changing\)' cat "$WORK/alice.html"
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

# ---- every link a notification carries leads to the console
check "id1's notification reached the receivers" wait_for 20 \
	"SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $id1 AND state = 'delivered'"
check "json: the request's page and its two action pages, all on this console" CHK find json /json "$id1" pending_approval "$URL" -
check "slack: the request's page, and buttons that call the console back with the link's token" \
	CHK find slack /slack "$id1" pending_approval "$URL" -
check "mattermost: the request's page, and buttons signed for the console" \
	CHK find mattermost /mm "$id1" pending_approval "$URL" "$WORK/mm.secret"
loc() { curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$@"; }
check_eq "a request's page asked for signed out: the sign-in form, with the page to come back to" \
	"303 $URL/login?next=%2Fr%2F$id1" "$(loc "$URL/r/$id1")"
check_eq "... a filtered queue too, query and all" "303 $URL/login?next=%2F%3Fagent%3Dhermes%26target%3Dvm%253A%252A" \
	"$(loc "$URL/?agent=hermes&target=vm%3A%2A")"
check_eq "the address older notifications carry leads to the request's page" "303 $URL/r/$id1" \
	"$(loc "$URL/requests/$id1")"
check_out "the sign-in form carries the page to come back to" "name=\"next\" value=\"/r/$id1\"" \
	curl -s "$URL/login?next=/r/$id1"
# signin_to JAR LOGIN PASSWORD NEXT: the status and where a sign-in sends to.
signin_to() {
	curl -s -c "$WORK/$1.jar" -o /dev/null -w '%{http_code} %{redirect_url}' --data-urlencode "login=$2" \
		--data-urlencode "password=$3" --data-urlencode "next=$4" "$URL/login"
}
check_eq "signing in returns to the page asked for" "303 $URL/r/$id1" "$(signin_to nx1 alice alice-secret-pw "/r/$id1")"
n=0
for evil in '//evil.example/' 'https://evil.example/' '/\evil.example' '\/evil.example' 'http:evil.example' \
	$'/\t/evil.example' '///evil.example' 'javascript:alert(1)' '/login?next=//evil.example' ' /r/1' \
	$'/r/1\r\nSet-Cookie: x=1' 'evil.example'; do
	n=$((n + 1))
	got=$(signin_to "nx$n" alice alice-secret-pw "$evil")
	check_eq "an open-redirect attempt ($(printf '%q' "$evil")) returns to the console's own Pending page" "303 $URL/" "$got"
done
check_eq "an unsafe next is not even put in the sign-in form" 0 \
	"$(curl -s "$URL/login?next=//evil.example" | grep -c 'name="next"')"

# ---- action links: signed, single use, bound, and deciding nothing until confirmed
idl=$(as_agent $A run --target proxmox-host:hubris --action 'reload the firewall' -- 'pve-firewall restart')
check "a request for the links waits" wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idl"
check "and is told" wait_for 20 "SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $idl AND state = 'delivered'"
mapfile -t L < <(CHK links /json "$idl")
mapfile -t LA < <(CHK links /alice "$idl")
check_out "the channel's approve link is an action page of this console" "^$URL/a/[0-9a-f]{64}$" echo "${L[0]}"
check_eq "alice's links are her own, not the channel's" t "$([ "${LA[0]}" != "${L[0]}" ] && echo t)"
apath=${L[0]#"$URL"}
check_eq "an action link opened signed out (a preview, a forwarded message) goes to the sign-in form" \
	"303 $URL/login?next=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$apath")" \
	"$(loc "${L[0]}")"
check_eq "a link unfurler's HEAD gets the same" 303 "$(curl -s -I -o /dev/null -w '%{http_code}' -A 'Slackbot-LinkExpanding 1.0' "${L[0]}")"
check_eq "neither decided anything" pending_approval "$(state_of "$idl")"
check_out "the sign-in form says nothing is decided before confirming" 'id="signin-action">Sign in to see what this link asks you to decide. Nothing is decided' \
	curl -s "$URL/login?next=$apath"
check_eq "bob signs in for the links" 303 "$(signin bob bob bob-secret-pw)"
check_eq "bob opens alice's link" 409 "$(get bob "${LA[0]#"$URL"}")"
check_out "it was sent to alice: bob cannot use it" 'id="action-problem">This link cannot decide: this link was sent to alice, and you are signed in as bob' cat "$WORK/bob.html"
check_eq "and there is no form on it" 0 "$(grep -c 'id="action-form"' "$WORK/bob.html")"
check_eq "bob posts to it anyway" 409 "$(post bob "${LA[0]#"$URL"}" "csrf=$(csrf_of bob)")"
check_eq "nothing decided" pending_approval "$(state_of "$idl")"
check_eq "bob opens the channel's approve link" 200 "$(get bob "$apath")"
check_out "a confirmation page: what the link decides, the request's first screen, one form" \
	'id="action-title">Approve request #[0-9]+\?</h1>.*Nothing has been decided.*id="command">pve-firewall restart</pre>.*id="action-form"' \
	tr -d '\n' <"$WORK/bob.html"
check_eq "opening it decided nothing" pending_approval "$(state_of "$idl")"
check_eq "a confirmation without the CSRF token is refused" 403 "$(post bob "$apath" 'note=x')"
flip() { case ${1: -1} in 0) echo "${1%?}1" ;; *) echo "${1%?}0" ;; esac; }
check_eq "one with an altered token is not an airlock link" 404 "$(get bob "$(flip "$apath")")"
get bob "$apath" >/dev/null
check_eq "bob confirms" 200 "$(post bob "$apath" "csrf=$(csrf_of bob)" 'note=from the link')"
check_out "the request page says it was approved through the link" 'id="notice">approve via link: approved' cat "$WORK/bob.post.html"
check_eq "approved, by bob, with his note" "1 bob from the link" \
	"$(q "SELECT (SELECT count(*) FROM airlock.execution_events WHERE execution_id = $idl AND to_state = 'approved') || ' ' || a.approver || ' ' || a.reason FROM airlock.approvals a WHERE a.execution_id = $idl")"
check_eq "the decision is in the console's history, as through a link" t \
	"$(q "SELECT count(*) = 1 FROM airlock.web_history WHERE kind = 'decision' AND execution_id = $idl AND detail = 'approve via link: approved'")"
get bob "$apath" >/dev/null
check_out "the used link says so when opened again" 'This link cannot decide: this link was already used \(approve: approved by bob' cat "$WORK/bob.html"
check_eq "and refuses a second confirmation" 409 "$(post bob "$apath" "csrf=$(csrf_of bob)")"
check_eq "the reject link of a decided request decides nothing either" 409 "$(post bob "${L[1]#"$URL"}" "csrf=$(csrf_of bob)" 'reason=late')"
# A link for a request whose payload changed (it was classified again).
idc=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart spiceproxy')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idc"
wait_for 20 "SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $idc AND state = 'delivered'"
mapfile -t LC < <(CHK links /json "$idc")
q "UPDATE airlock.executions SET payload_hash = md5(payload_hash) WHERE id = $idc" >/dev/null
check_eq "fault: request $idc's payload hash changed" t "$(q "SELECT payload_hash <> (SELECT payload_hash FROM airlock.action_links WHERE execution_id = $idc LIMIT 1) FROM airlock.executions WHERE id = $idc")"
check_eq "its link is refused" 409 "$(get bob "${LC[0]#"$URL"}")"
check_out "for a payload the request no longer has" "request $idc changed since this link was sent" cat "$WORK/bob.html"
check_eq "and a confirmation approves nothing" 409 "$(post bob "${LC[0]#"$URL"}" "csrf=$(csrf_of bob)")"
check_eq "nothing approved" 0 "$(q "SELECT count(*) FROM airlock.approvals WHERE execution_id = $idc")"
# A link that expired with its request (shorty's expire after 3 s).
ids=$(PGUSER=shorty $A run --target proxmox-host:hubris -- 'systemctl restart pvescheduler')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $ids"
wait_for 20 "SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $ids AND state = 'delivered'"
mapfile -t LS < <(CHK links /json "$ids")
check "shorty's request expires" wait_for 30 "SELECT state = 'expired' FROM airlock.executions WHERE id = $ids"
check_eq "its link is refused" 409 "$(get bob "${LS[0]#"$URL"}")"
check_out "the request expired: nothing left to decide" "request $ids is expired now: there is nothing left to decide" cat "$WORK/bob.html"
check_eq "a confirmation decides nothing" 409 "$(post bob "${LS[0]#"$URL"}" "csrf=$(csrf_of bob)")"

# ---- chat buttons: verified, answered to the chat user with a link for their own login
idk=$(as_agent $A run --target proxmox-host:hubris --action 'restart the cluster daemon' -- 'systemctl restart pve-cluster')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idk"
wait_for 20 "SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $idk AND state = 'delivered'"
# the token and mac of a chat message's approve button
button() { python3 - "$RLOG" "$1" "$2" <<'PY'
import json, sys
log, path, rid = sys.argv[1], sys.argv[2], sys.argv[3]
for line in open(log):
    r = json.loads(line)
    if not r["path"].startswith(path) or r["headers"].get("x-airlock-event") != "pending_approval":
        continue
    b = json.loads(r["body"])
    if ("/r/%s" % rid) not in r["body"]:
        continue
    if path == "/slack":
        print([e for e in b["blocks"][1]["elements"] if e["action_id"] == "airlock-approve"][0]["value"])
    else:
        ctx = b["attachments"][0]["actions"][0]["integration"]["context"]
        print(ctx["token"], ctx["mac"])
    break
PY
}
# slack_press SECRETFILE USER TOKEN [AGE]: Slack's interaction callback, signed; the status.
slack_press() { python3 - "$1" "$2" "$3" "${4:-0}" "$URL/chat/slack" "http://127.0.0.1:$P/slack-response/$2" <<'PY'
import hashlib, hmac, json, sys, time, urllib.parse, urllib.request, urllib.error
secret = open(sys.argv[1], "rb").read().strip()
payload = {"type": "block_actions", "user": {"id": sys.argv[2], "username": "someone"},
           "actions": [{"action_id": "airlock-approve", "value": sys.argv[3]}],
           "response_url": sys.argv[6]}
body = "payload=" + urllib.parse.quote(json.dumps(payload))
ts = str(int(time.time()) - int(sys.argv[4]))
sig = "v0=" + hmac.new(secret, ("v0:%s:%s" % (ts, body)).encode(), hashlib.sha256).hexdigest()
req = urllib.request.Request(sys.argv[5], data=body.encode(), headers={
    "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig,
    "Content-Type": "application/x-www-form-urlencoded"})
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
replies() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["path"] == sys.argv[2]: print(json.loads(r["body"])["text"])' "$RLOG" "/slack-response/$1"; }
ST=$(button /slack "$idk")
check_out "the slack button carries the link's token" '^[0-9a-f]{64}$' echo "$ST"
printf 'not-the-secret' >"$WORK/wrong.signing"
check_eq "a callback signed with another secret is refused" 401 "$(slack_press "$WORK/wrong.signing" U0ALICE "$ST")"
check_eq "a callback older than 5 minutes is refused, whatever its signature" 401 "$(slack_press "$WORK/slack.signing" U0ALICE "$ST" 400)"
check_eq "an unsigned one too" 401 "$(curl -s -o /dev/null -w '%{http_code}' --data 'payload={}' "$URL/chat/slack")"
check_eq "a verified press by an unmapped chat user is answered" 200 "$(slack_press "$WORK/slack.signing" U0ALICE "$ST")"
check "... to that user, through response_url: not mapped, how to map" wait_file 10 "$RLOG" 'is not mapped to an airlock operator; an administrator maps it with: airlock chat map slack U0ALICE LOGIN'
check_rc "an operator cannot map chat users" 3 as_alice $A chat map slack U0ALICE alice
check_out "an administrator maps the Slack user to alice" 'slack user U0ALICE is alice now' $A chat map slack U0ALICE alice
check_eq "a verified press by alice's chat user" 200 "$(slack_press "$WORK/slack.signing" U0ALICE "$ST")"
check "is answered with a link for alice to the confirmation page" wait_file 10 "$RLOG" '|Open the confirmation page> as alice: it shows the request and asks you to sign in as alice'
KL=$(replies U0ALICE | grep -o "$URL/a/[0-9a-f]*" | tail -1)
check_out "a link of this console" "^$URL/a/[0-9a-f]{64}$" echo "$KL"
check_eq "bob cannot use the link the chat gave alice" 409 "$(get bob "${KL#"$URL"}")"
check_eq "alice can" 200 "$(get alice "${KL#"$URL"}")"
check_eq "pressing the button decided nothing" pending_approval "$(state_of "$idk")"
check_eq "alice confirms" 200 "$(post alice "${KL#"$URL"}" "csrf=$(csrf_of alice)")"
check_eq "approved, by alice" "1 alice" "$(q "SELECT (SELECT count(*) FROM airlock.execution_events WHERE execution_id = $idk AND to_state = 'approved') || ' ' || a.approver FROM airlock.approvals a WHERE a.execution_id = $idk")"
check_out "every press is in the console's history" 'chat_action.*slack:U0ALICE' \
	psql -XAtq -c "SELECT kind, login, address, detail FROM airlock.web_history WHERE kind = 'chat_action' ORDER BY id"
check_out "and the mapping in its log" 'map\|slack\|U0ALICE\|alice' \
	psql -XAtq -c "SELECT change, service, chat_user, login FROM airlock.chat_identity_log"
# Mattermost: the button's context, signed by airlockd with the webhook's secret.
idm=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pvebanner')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idm"
wait_for 20 "SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $idm AND state = 'delivered'"
read -r MT MM < <(button /mm "$idm")
mm_press() { curl -s -o "$WORK/mm.answer" -w '%{http_code}' -H 'Content-Type: application/json' \
	--data "{\"user_id\": \"$1\", \"context\": {\"token\": \"$2\", \"mac\": \"$3\"}}" "$URL/chat/mattermost"; }
check_eq "a Mattermost press with a forged context is refused" 401 "$(mm_press mmbob "$MT" "sha256=$(printf '%064d' 0)")"
check_eq "a verified press by an unmapped user is answered at once" 200 "$(mm_press mmbob "$MT" "$MM")"
check_out "with what to ask for" '"ephemeral_text":"airlock: your mattermost user mmbob is not mapped' cat "$WORK/mm.answer"
$A chat map mattermost mmbob bob >/dev/null
check_eq "mapped to bob" 200 "$(mm_press mmbob "$MT" "$MM")"
check_out "the answer is a link for bob to the confirmation page" "\\[Open the confirmation page\\]\\($URL/a/[0-9a-f]{64}\\) as bob" cat "$WORK/mm.answer"

# ---- a hard-to-read command needs its approver to say they read it
idr=$(as_agent $A run --target proxmox-host:hubris -- "$(printf 'systemctl restart pve-ha-lrm \342\200\256 # looks harmless')")
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idr"
get alice "/r/$idr" >/dev/null
check_eq "approving it without the box ticked is refused" 400 "$(post alice "/r/$idr/approve" "csrf=$(csrf_of alice)" "hash=$(hash_of alice)")"
check_out "in the database's words" 'its command is hard to read \(1 hidden character \(1 direction-changing\)\)' cat "$WORK/alice.post.html"
check_eq "nothing approved" pending_approval "$(state_of "$idr")"
check_eq "with the box ticked it is approved" 200 "$(post alice "/r/$idr/approve" "csrf=$(csrf_of alice)" "hash=$(hash_of alice)" confirm_read=1)"
check_eq "approved, and its event says alice confirmed reading it" "alice true" \
	"$(q "SELECT v.actor || ' ' || (v.detail ->> 'confirmed_read') FROM airlock.execution_events v WHERE v.execution_id = $idr AND v.to_state = 'approved'")"

# ---- the queue at scale: filters, bulk decisions, an agent's page
ib1=$(as_agent $A run --target vm:web01 --action 'bulk one' -- apt-get install -y pkg-bulk-1)
ib2=$(as_agent $A run --target vm:web01 --action 'bulk two' -- apt-get install -y pkg-bulk-2)
ib3=$(as_agent $A run --target proxmox-host:hubris --action 'bulk three' -- 'rm -rf /var/lib/vz/dump/old')
check "three requests wait" wait_for 30 "SELECT count(*) = 3 FROM airlock.executions WHERE id IN ($ib1, $ib2, $ib3) AND state = 'pending_approval'"
ids_of() { grep -o 'li class="req" data-id="[0-9]*"' "$WORK/alice.html" | grep -o '[0-9]*' | tr '\n' ' '; }
get alice '/?target=vm%3A%2A' >/dev/null
check_eq "target vm:* lists the two on VMs, and nothing else" "$ib1 $ib2 " "$(ids_of)"
get alice '/?class=destructive&agent=herm*' >/dev/null
check_out "class destructive and agent herm* lists the deletion" "data-id=\"$ib3\"" cat "$WORK/alice.html"
check_eq "... and no config_mutation" 0 "$(grep -c "data-id=\"$ib1\"" "$WORK/alice.html")"
get alice '/?agent=nobody' >/dev/null
check_out "an agent with nothing waiting: none" 'data-count="0"' cat "$WORK/alice.html"
get alice '/?older=1h' >/dev/null
check_eq "nothing has waited an hour" "" "$(ids_of)"
check_out "the live list keeps the filters" 'data-frag="/pending.frag\?older=1h"' cat "$WORK/alice.html"
get alice "/?target=vm:x'%20OR%201=1" >/dev/null
check_out "a filter that is no glob is refused, saying why" 'id="filter-error">The target filter is an entity slug or a glob' cat "$WORK/alice.html"
get alice '/?target=vm%3A%2A' >/dev/null
pick1=$(grep -o "value=\"$ib1:[0-9a-f]*\"" "$WORK/alice.html" | sed 's/value="//; s/"$//')
pick2=$(grep -o "value=\"$ib2:[0-9a-f]*\"" "$WORK/alice.html" | sed 's/value="//; s/"$//')
check_out "each box carries its request's payload hash" "^$ib1:[0-9a-f]{64}$" echo "$pick1"
check_eq "a bulk rejection needs a reason" 400 "$(post alice /bulk "csrf=$(csrf_of alice)" decision=reject "pick=$pick1")"
check_eq "a bulk decision without the CSRF token is refused" 403 "$(post alice /bulk decision=approve "pick=$pick1")"
check_eq "alice approves both at once" 200 "$(post alice /bulk "csrf=$(csrf_of alice)" decision=approve "pick=$pick1" "pick=$pick2" "pick=$ib3:deadbeef" 'reason=bulk window')"
check_out "each is decided on its own, the stale one refused" "data-decided=\"2\" data-refused=\"1\"" cat "$WORK/alice.post.html"
check_out "the stale one says why" "data-id=\"$ib3\"><a href=\"/r/$ib3\">#$ib3</a>: it changed since the page was loaded" cat "$WORK/alice.post.html"
check_eq "both approved, one chained event each with its own payload hash" "2 2" \
	"$(q "SELECT count(DISTINCT v.execution_id) || ' ' || count(DISTINCT v.detail ->> 'payload_hash') FROM airlock.execution_events v WHERE v.execution_id IN ($ib1, $ib2) AND v.to_state = 'approved'")"
check_eq "each approval's hash is its own request's" 2 \
	"$(q "SELECT count(*) FROM airlock.approvals a JOIN airlock.executions e ON e.id = a.execution_id WHERE a.execution_id IN ($ib1, $ib2) AND a.payload_hash = e.payload_hash AND a.reason = 'bulk window'")"
check_eq "the stale one still waits" pending_approval "$(state_of "$ib3")"
check_eq "the agent's page" 200 "$(get alice /agents/hermes)"
check_out "lists its requests" "href=\"/r/$ib3\"" cat "$WORK/alice.html"
check_out "what it may do per minute, and what it uses" 'id="agent-limits"><dt>Requests per minute</dt><dd>[0-9]+ in the last minute, of 60</dd>' cat "$WORK/alice.html"
check_out "and its side-door events" 'id="agent-side-door"' cat "$WORK/alice.html"
check_eq "an agent with odd characters in its name is no page" 404 "$(get alice "/agents/x%0Ay")"

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
# An action link asks an enrolled operator for the code too, and keeps the link.
idt=$(as_agent $A run --target proxmox-host:hubris -- 'systemctl restart pvedaemon; echo totp-link')
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $idt"
wait_for 20 "SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $idt AND state = 'delivered'"
mapfile -t LT < <(CHK links /json "$idt")
tpath=${LT[0]#"$URL"}
check_eq "dave follows a link: his password alone does not sign him in" 403 \
	"$(curl -s -o "$WORK/dt.html" -w '%{http_code}' --data-urlencode login=dave --data-urlencode password=dave-secret-pw --data-urlencode "next=$tpath" "$URL/login")"
check_out "and the form still carries the link" "name=\"next\" value=\"$tpath\"" cat "$WORK/dt.html"
check_eq "with his next code he lands on the link's page" "303 $URL$tpath" \
	"$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' --data-urlencode login=dave --data-urlencode password=dave-secret-pw --data-urlencode "code=$(totp "$secret" 1)" --data-urlencode "next=$tpath" "$URL/login")"
check_eq "and nothing was decided" pending_approval "$(state_of "$idt")"
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
	check "headless Chromium: every notification link through a sign-in, the first screen at desktop and phone size, action links, filters and bulk, and the older flows" \
		env WEB_URL="$MAIN_URL" WEB_SHORT_URL="$SHORT_URL" WEB_LOG="$WORK/browser.log" WEB_HOOKS="$RLOG" \
		WEB_SHOTS=build/screenshots node tests/web/browser.mjs
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
check "valgrind: its notification is delivered" wait_for 30 \
	"SELECT count(*) = 4 FROM airlock.notification_status WHERE execution_id = $idv AND state = 'delivered'"
mapfile -t LV < <(CHK links /json "$idv")
for p in / '/?target=proxmox-host%3A%2A&class=config_mutation&older=1s' '/pending.frag?agent=herm*' /r/$idv \
	/r/$idv/state.frag /r/$idv/events.frag '/history?q=pve' /audit /side-door /agents/hermes /static/app.css \
	"/requests/$idv" "/login?next=/r/$idv" "${LV[1]#"$MAIN_URL"}" /nowhere; do
	get vga "$p" >/dev/null
done
check_eq "valgrind: a slack press where Slack is not set up" 404 "$(curl -s -o /dev/null -w '%{http_code}' --data 'payload={}' "$URL/chat/slack")"
check_eq "valgrind: a mattermost press where it is not set up" 404 "$(curl -s -o /dev/null -w '%{http_code}' --data '{"user_id": "x", "context": {"token": "t", "mac": "m"}}' "$URL/chat/mattermost")"
check_eq "valgrind: a sign-in that returns to a page" "303 $URL/r/$idv" "$(signin_to vgn alice alice-secret-pw "/r/$idv")"
get vga /r/$idv >/dev/null
check_eq "valgrind: a bulk decision of a stale payload" 409 "$(post vga /bulk "csrf=$(csrf_of vga)" decision=approve "pick=$idv:00")"
get vga /r/$idv >/dev/null
check_eq "valgrind: alice approves" 200 "$(post vga /r/$idv/approve "csrf=$(csrf_of vga)" "hash=$(hash_of vga)")"
get vga "${LV[1]#"$MAIN_URL"}" >/dev/null
check_eq "valgrind: the reject link of a decided request" 409 "$(post vga "${LV[1]#"$MAIN_URL"}" "csrf=$(csrf_of vga)" 'reason=late')"
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
