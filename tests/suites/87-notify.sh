#!/bin/bash
# Notifications an operator can act on: the database's outbox, delivered by a
# real airlockd to local webhook receivers in every format (generic JSON,
# ntfy, Slack, Mattermost, Discord, Matrix), each signed (HMAC-SHA256 over
# timestamp "." body), linking to the request's page and, while it waits,
# to its approve and reject confirmation pages, saying what the agent said
# the change is for; an agent's hostile command and purpose neutralised per
# format; retries after a receiver's failures (seen
# failing first); a receiver that never answers given up on, and shown so;
# reminders and an escalation target on a small time scale; the outbox filled
# only by committed changes; the delivery state readable by operators, not
# agents; the config's refusals.
set -uo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "$0")/../.."
if [ -z "${AIRLOCK_RIG_SSH_PORT:-}" ]; then
	exec scripts/pgtmp --quiet -- tests/rig/rigctl run -- "$0" "$@"
fi
. tests/lib.sh
. tests/daemon/lib.sh

setup_db || { echo "set-up failed"; exit 1; }
RLOG="$WORK/received.jsonl"
python3 tests/notify/receiver.py "$WORK/recv.port" "$RLOG" /flaky=2 &
DAEMON_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/recv.port" ] && break; sleep 0.1; done
P=$(cat "$WORK/recv.port")
BASE="https://console.example:8443/airlock/"
head -c 32 /dev/urandom | base64 >"$WORK/hook.secret"
head -c 32 /dev/urandom | base64 >"$WORK/slack.secret"
echo "syt_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$WORK/mx.token"
chmod 600 "$WORK/hook.secret" "$WORK/slack.secret" "$WORK/mx.token"
CHK() { python3 tests/notify/check.py "$RLOG" "$@"; }
MX="/_matrix/client/v3/rooms/!ops:example.org/send/m.room.message"

write_config n1 "notifications:" "  base_url: $BASE" "  remind_after_s: 3" "  escalate_after_s: 6" \
	"  backoff_ms: 300" "  backoff_max_ms: 1000" "  max_attempts: 3" "  poll_ms: 200" \
	"webhooks:" \
	"  - {name: json, url: \"http://127.0.0.1:$P/json\", secret_file: $WORK/hook.secret}" \
	"  - {name: ntfy, url: \"http://127.0.0.1:$P/ntfy/alerts\", format: ntfy, secret_file: $WORK/hook.secret}" \
	"  - {name: slack, url: \"http://127.0.0.1:$P/slack/T0/B1/x\", format: slack, secret_file: $WORK/slack.secret}" \
	"  - {name: mm, url: \"http://127.0.0.1:$P/mm/hooks/abc\", format: mattermost, secret_file: $WORK/hook.secret}" \
	"  - {name: discord, url: \"http://127.0.0.1:$P/discord/api/webhooks/1/t\", format: discord, secret_file: $WORK/hook.secret}" \
	"  - {name: matrix, url: \"http://127.0.0.1:$P$MX\", format: matrix, token_file: $WORK/mx.token, secret_file: $WORK/hook.secret}" \
	"  - {name: plain, url: \"http://127.0.0.1:$P/plain\"}" \
	"  - {name: flaky, url: \"http://127.0.0.1:$P/flaky\", events: [pending_approval]}" \
	"  - {name: down, url: \"http://127.0.0.1:1/down\", events: [pending_approval], timeout_ms: 300}" \
	"  - {name: decisions, url: \"http://127.0.0.1:$P/decisions\", events: [approved, rejected]}" \
	"  - {name: esc, url: \"http://127.0.0.1:$P/esc\", escalation: true}" >/dev/null
check "airlockd -n accepts every format" $D -n -c "$WORK/n1.yaml"
start_daemon n1 || { echo "airlockd did not start"; cat "$WORK/n1.log"; exit 1; }

# ---- a held request with an agent's hostile text reaches every format
printf '%s' $'apt-get install -y pkg-hostile # @room @channel <!channel> <!here> [click](http://evil.example/) `x` **b** _i_ \e]0;owned\a\u202eevil' >"$WORK/hostile.cmd"
id1=$(as_agent $A run --target proxmox-host:hubris -- "$(cat "$WORK/hostile.cmd")")
check "the hostile install is held" wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id1"
check "the outbox holds its pending_approval, written by the database" wait_for 10 \
	"SELECT count(*) = 1 FROM airlock.notifications WHERE execution_id = $id1 AND event = 'pending_approval'"
wait_for 20 "SELECT count(*) >= 7 FROM airlock.notification_status WHERE execution_id = $id1 AND state = 'delivered'"
for f in "json /json $WORK/hook.secret" "ntfy /ntfy/ $WORK/hook.secret" "slack /slack/ $WORK/slack.secret" \
	"mattermost /mm/ $WORK/hook.secret" "discord /discord/ $WORK/hook.secret" "matrix /_matrix/ $WORK/hook.secret"; do
	set -- $f
	check "$1: shape, link, signature, hostile text neutralised" \
		CHK find "$1" "$2" "$id1" pending_approval "$BASE" "$3" "$WORK/hostile.cmd" "$WORK/mx.token"
done
check "a webhook without a secret sends no signature" CHK find json /plain "$id1" pending_approval "$BASE" -
check_out "a signature made with another secret does not verify" 'does not verify' \
	CHK find slack /slack/ "$id1" pending_approval "$BASE" "$WORK/hook.secret"
check_eq "a webhook for decisions only did not get the pending request" 0 "$(CHK count /decisions pending_approval "$id1" "$BASE")"
# What the agent says the change is for reaches the message, as text.
idp=$(as_agent $A run --target proxmox-host:hubris --action $'free space for the <b>backups</b> @room\e[2J' -- apt-get install -y pkg-purpose)
check "a request with a stated purpose is told" wait_for 30 \
	"SELECT count(*) >= 6 FROM airlock.notification_status WHERE execution_id = $idp AND state = 'delivered'"
check_out "the chat line says what it is for, its markup and escapes inert" \
	'to \\"free space for the &lt;b&gt;backups&lt;/b&gt; @room\\\\x1b\[2J\\"' \
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); b = json.loads(r["body"])
    if r["path"].startswith("/slack/") and ("request %s " % sys.argv[2]) in b["text"]:
        print(json.dumps(b["text"]))' "$RLOG" "$idp"
check_out "the json data keeps it exactly" '"action": "free space for the <b>backups</b> @room\\u001b\[2J"' \
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); b = json.loads(r["body"])
    if r["path"] == "/json" and b.get("execution_id") == int(sys.argv[2]):
        print(json.dumps({"action": b["action"]}))' "$RLOG" "$idp"

# ---- generated hostile commands: every format, every one neutralised
python3 - "$WORK" <<'PY'
import random, sys
random.seed(8701)
pieces = ["@room", "@channel", "@here", "@everyone", "<!channel>", "<!here>", "<@U024BE7LH>",
          "[x](http://evil.example/)", "![i](http://evil.example/i.png)", "`", "```", "**b**",
          "_i_", "~~s~~", "|t|", "\\", "\\[", "\x1b[2J", "\x1b]52;c;aGk=\x07", "\r", "\u202e",
          "\u200b", "&amp;", "<b>", "\"", "'", "$(id)", "#", "> quote", "* item", "\t", "é", "𝓐"]
for i in range(6):
    text = " ".join(random.choice(pieces) for _ in range(random.randint(4, 12)))
    with open("%s/gen%d.cmd" % (sys.argv[1], i), "w", encoding="utf-8", newline="") as f:
        f.write("apt-get install -y pkg-gen-%d # %s" % (i, text))
PY
gen_ids=()
for i in 0 1 2 3 4 5; do
	gen_ids+=("$(as_agent $A run --target proxmox-host:hubris -- "$(cat "$WORK/gen$i.cmd")" 2>/dev/null)")
done
check "the generated commands are held and told" wait_for 60 \
	"SELECT count(*) = 48 FROM airlock.notification_status WHERE execution_id IN ($(IFS=,; echo "${gen_ids[*]}")) AND state = 'delivered'"
gen_ok=0
for i in 0 1 2 3 4 5; do
	for f in "json /json $WORK/hook.secret" "ntfy /ntfy/ $WORK/hook.secret" "slack /slack/ $WORK/slack.secret" \
		"mattermost /mm/ $WORK/hook.secret" "discord /discord/ $WORK/hook.secret" "matrix /_matrix/ $WORK/hook.secret"; do
		set -- $f
		if out=$(CHK find "$1" "$2" "${gen_ids[$i]}" pending_approval "$BASE" "$3" "$WORK/gen$i.cmd" "$WORK/mx.token"); then
			gen_ok=$((gen_ok + 1))
		else
			echo "# gen$i $1: $out"
		fi
	done
done
check_eq "36 generated messages: shape, signature and no live markup" 36 "$gen_ok"

# ---- retries: the receiver failed twice first, then the third attempt landed
check "the flaky receiver is delivered to in the end" wait_for 20 \
	"SELECT state = 'delivered' AND attempts = 3 FROM airlock.notification_status WHERE execution_id = $id1 AND hook = 'flaky'"
check_out "it answered 500 twice before the first 200" '^500 500 200( 200)*$' CHK statuses /flaky
check "each failed attempt was logged" wait_log 5 "evt=webhook.failed hook=8 url=http://127.0.0.1:$P/***" n1
check "a receiver that never answers is given up on after max_attempts" wait_for 30 \
	"SELECT state = 'failed' AND attempts = 3 AND last_error <> '' FROM airlock.notification_status WHERE execution_id = $id1 AND hook = 'down'"
check "and the log says so" wait_log 5 "evt=webhook.gave_up hook=9 url=http://127.0.0.1:1/***" n1
check_out "airlock notifications lists the deliveries" "pending_approval +json +delivered" as_alice $A notifications "$id1"
check_out "--failed shows the one given up on" "pending_approval +down +failed +3 " as_alice $A notifications --failed
check_rc "agents may not list them (exit 3)" 3 as_agent $A notifications
check_eq "the delivery records keep no secret part of a URL" 0 \
	"$(q "SELECT count(*) FROM airlock.notification_status WHERE url LIKE '%/json%' OR url LIKE '%alerts%'")"

# ---- reminders, then the escalation target
check "a reminder comes after remind_after_s" wait_for 20 \
	"SELECT count(*) = 1 FROM airlock.notifications WHERE execution_id = $id1 AND event = 'reminder'"
check "not before it" wait_for 1 \
	"SELECT bool_and(r.created_at - p.created_at >= interval '3 seconds') FROM airlock.notifications r, airlock.notifications p
	  WHERE r.execution_id = $id1 AND p.execution_id = $id1 AND r.event = 'reminder' AND p.event = 'pending_approval'"
check "the reminder reaches the operators' webhook" wait_for 10 \
	"SELECT state = 'delivered' FROM airlock.notification_status WHERE execution_id = $id1 AND event = 'reminder' AND hook = 'json'"
check "reminder: json shape and signature" CHK find json /json "$id1" reminder "$BASE" "$WORK/hook.secret"
check "an escalation comes after escalate_after_s, to the escalation target" wait_for 20 \
	"SELECT state = 'delivered' FROM airlock.notification_status WHERE execution_id = $id1 AND event = 'escalation' AND hook = 'esc'"
check "escalation: its shape" CHK find json /esc "$id1" escalation "$BASE" -
check_eq "the escalation target gets escalations only" 0 "$(CHK count /esc pending_approval "$id1" "$BASE")"
check_eq "the other webhooks do not get the escalation" 0 "$(CHK count /json escalation "$id1" "$BASE")"
sleep 1.5
check_eq "one reminder per wait, not one per round" 1 "$(q "SELECT count(*) FROM airlock.notifications WHERE execution_id = $id1 AND event = 'reminder'")"

# ---- only committed changes are announced
inside=$(psql -XAtq -U alice -c "BEGIN" -c "SELECT airlock.reject($id1, 'changed my mind')" \
	-c "SELECT count(*) FROM airlock.notifications WHERE execution_id = $id1 AND event = 'rejected'" -c "ROLLBACK" 2>&1 | tail -1)
check_eq "inside its transaction, the rejection had written its notification" 1 "$inside"
check_eq "a rolled-back rejection leaves no notification" 0 \
	"$(q "SELECT count(*) FROM airlock.notifications WHERE execution_id = $id1 AND event = 'rejected'")"

# ---- decisions and outcomes
as_alice $A reject "$id1" --reason "not on the host" >/dev/null
check "the rejection reaches the decisions webhook" wait_for 10 \
	"SELECT state = 'delivered' FROM airlock.notification_status WHERE execution_id = $id1 AND event = 'rejected' AND hook = 'decisions'"
check "rejected: who and why, signed" CHK find json /json "$id1" rejected "$BASE" "$WORK/hook.secret"
check_out "the rejection names alice and her reason" '"decided_by": "alice".*"decision_reason": "not on the host"' \
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); b = json.loads(r["body"])
    if r["path"] == "/json" and b.get("event") == "rejected" and b.get("execution_id") == int(sys.argv[2]):
        print(json.dumps({"decided_by": b["decided_by"], "decision_reason": b["decision_reason"]}))' "$RLOG" "$id1"
id2=$(as_agent $A run --target proxmox-host:hubris -- apt-get install -y pkg-notify-ok)
wait_for 30 "SELECT state = 'pending_approval' FROM airlock.executions WHERE id = $id2"
as_alice $A approve "$id2" --reason "window" >/dev/null
check "the approved install finishes" wait_for 30 "SELECT state IN ('succeeded', 'failed') FROM airlock.executions WHERE id = $id2"
out=$(q "SELECT state FROM airlock.executions WHERE id = $id2")
check "approved: to the decisions webhook, in its shape" wait_for 10 \
	"SELECT state = 'delivered' FROM airlock.notification_status WHERE execution_id = $id2 AND event = 'approved' AND hook = 'decisions'"
check "the outcome ($out) reaches slack, in its shape" wait_for 10 \
	"SELECT state = 'delivered' FROM airlock.notification_status WHERE execution_id = $id2 AND event = '$out' AND hook = 'slack'"
check "outcome: slack shape and signature" CHK find slack /slack/ "$id2" "$out" "$BASE" "$WORK/slack.secret"
check "outcome: matrix shape" CHK find matrix /_matrix/ "$id2" "$out" "$BASE" "$WORK/hook.secret" /dev/null "$WORK/mx.token"
check_eq "every outcome in the outbox once" "pending_approval approved $out" \
	"$(q "SELECT string_agg(event, ' ' ORDER BY id) FROM airlock.notifications WHERE execution_id = $id2")"
id3=$(as_agent $A run --target proxmox-host:hubris -- 'hostname; echo routine-marker')
wait_for 30 "SELECT state = 'succeeded' FROM airlock.executions WHERE id = $id3"
check_eq "a routine observation's result is not announced" 0 \
	"$(q "SELECT count(*) FROM airlock.notifications WHERE execution_id = $id3")"

# ---- who reads the delivery state
check_out "operators read the delivery state" 'delivered' psql -XAtq -U alice -c "SELECT DISTINCT state FROM airlock.notification_status"
check_out "agents do not" 'permission denied' psql -XAtq -U hermes -c "SELECT * FROM airlock.notification_status"
check_out "agents cannot take deliveries" 'permission denied' psql -XAtq -U hermes -c "SELECT * FROM airlock.notify_due('{json}', 1, 30)"

# ---- the config refuses what cannot work, saying what to write
cfg() { write_config bad "$@" >/dev/null; $D -n -c "$WORK/bad.yaml"; }
check_out "an unknown format is named" 'format "teams" must be json, ntfy, slack, mattermost, discord or matrix' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P/x\", format: teams}"
chmod 644 "$WORK/slack.secret"
check_out "a secret readable by others is refused" 'readable by group or others: chmod 600' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P/x\", secret_file: $WORK/slack.secret}"
chmod 600 "$WORK/slack.secret"
check_out "matrix needs its token from a file" 'format: matrix needs token_file' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P$MX\", format: matrix}"
check_out "an escalation target needs escalate_after_s" 'escalate_after_s is not set' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P/x\", escalation: true}"
check_out "an unknown event is named" 'unknown event "pending"' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P/x\", events: [pending]}"
check_out "an unknown webhook key names the keys there are" 'unknown webhook key "secret" \(keys: name, url, format, secret_file' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P/x\", secret: abc}"
check_out "a webhook's name is an identifier" "name must be 1..64 letters, digits" \
	cfg "webhooks:" "  - {name: \"ops team\", url: \"http://127.0.0.1:$P/x\"}"
check_out "base_url must be a URL" 'notifications base_url must be http' \
	cfg "notifications:" "  base_url: console.example"
check_out "chat_callback is for slack and mattermost" 'chat_callback is for format: slack or mattermost' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P/x\", chat_callback: true}"
check_out "a mattermost chat_callback needs a secret" 'a mattermost webhook with chat_callback needs secret_file' \
	cfg "webhooks:" "  - {url: \"http://127.0.0.1:$P/x\", format: mattermost, chat_callback: true}"
check_eq "no secret in the log" 0 "$(grep -cF -e "$(cat "$WORK/hook.secret")" -e "$(cat "$WORK/mx.token")" "$WORK/n1.log")"
finish
