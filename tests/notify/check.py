#!/usr/bin/python3 -I
"""check.py LOG COMMAND ... -- what the webhook receivers got, checked strictly.

  find FORMAT PATH ID EVENT BASE [SECRETFILE|-] [CMDFILE]
      a request to PATH for request ID's EVENT exists, in FORMAT's shape,
      linking to BASE/r/ID (and, for a request waiting for a decision, to
      an approve and a reject link BASE/a/TOKEN, never as an action that
      would decide by itself), signed with the secret in SECRETFILE over
      timestamp "." body (or, with "-", carrying no signature); with CMDFILE,
      the command in it (an agent's hostile text) is neutralised for the format.
  links PATH ID            the approve and reject links the request to PATH
                           for ID's pending_approval carried, one per line
  count PATH EVENT ID BASE how many requests to PATH carried EVENT for ID
  statuses PATH            the statuses PATH was answered with, in order
Exit 0 and print nothing when a check holds; else say why and exit 1."""
import hashlib
import hmac
import json
import re
import sys
import time

log, cmd = sys.argv[1], sys.argv[2]
args = sys.argv[3:]


def records():
    try:
        with open(log) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def fail(why):
    print(why)
    sys.exit(1)


def link_of(base, rid):
    return base.rstrip("/") + "/r/" + str(rid)


def action_re(base):
    return re.escape(base.rstrip("/")) + r"/a/[0-9a-f]{64}"


def waiting(event):
    """Whether the event's message carries action links (the request waits)."""
    return event in ("pending_approval", "reminder", "escalation")


def about(rec, rid, base):
    """Whether a request concerns request rid: by its data or its link."""
    try:
        body = json.loads(rec["body"])
    except ValueError:
        return False
    if isinstance(body, dict) and body.get("execution_id") == rid:
        return True
    return link_of(base, rid) in rec["body"].replace("\\/", "/")


MENTION = re.compile(r"@(room|channel|here|everyone|all)\b")


def check_signature(rec, secretfile):
    h = rec["headers"]
    if secretfile == "-":
        if "x-airlock-signature" in h or "x-airlock-timestamp" in h:
            fail("an unsigned webhook carried a signature")
        return
    secret = open(secretfile, "rb").read().rstrip(b"\r\n")
    ts = h.get("x-airlock-timestamp")
    sig = h.get("x-airlock-signature")
    if ts is None or sig is None:
        fail("no X-Airlock-Timestamp / X-Airlock-Signature header")
    if not re.fullmatch(r"[0-9]{10}", ts):
        fail("timestamp is not unix seconds: %r" % ts)
    if abs(time.time() - int(ts)) > 300:
        fail("timestamp %s is not now" % ts)
    want = "sha256=" + hmac.new(secret, (ts + ".").encode() + rec["body"].encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(sig, want):
        fail("signature %s does not verify (wanted %s)" % (sig, want))


def shape(fmt, rec, rid, event, base, hostile):
    body = json.loads(rec["body"])
    link = link_of(base, rid)
    if not isinstance(body, dict):
        fail("body is not an object")
    if rec["headers"].get("content-type") != "application/json":
        fail("content-type is %r" % rec["headers"].get("content-type"))
    if rec["headers"].get("x-airlock-event") != event:
        fail("X-Airlock-Event is %r" % rec["headers"].get("x-airlock-event"))
    if fmt == "json":
        if rec["method"] != "POST":
            fail("json: method %s" % rec["method"])
        for k, t in (("event", str), ("execution_id", int), ("url", str), ("target", str),
                     ("command", str), ("class", str), ("requested_by", str), ("state", str),
                     ("text", str), ("reasons", str), ("at", str)):
            if not isinstance(body.get(k), t):
                fail("json: %s missing or not %s: %r" % (k, t.__name__, body.get(k)))
        if body["event"] != event or body["url"] != link:
            fail("json: event/url %r %r" % (body["event"], body["url"]))
        if waiting(event):
            for k in ("approve_url", "reject_url"):
                if not re.fullmatch(action_re(base), body.get(k) or ""):
                    fail("json: %s is %r, not an action link of the console" % (k, body.get(k)))
            if body["approve_url"] == body["reject_url"]:
                fail("json: the approve and reject links are one")
            if not isinstance(body.get("votes"), str) or "action" not in body:
                fail("json: no votes or action: %r" % body)
        elif "approve_url" in body or "reject_url" in body:
            fail("json: a decided request's message carries action links")
        for k in ("at", "pending_since", "expires_at"):
            if body.get(k) is not None and not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body[k]):
                fail("json: %s is not RFC 3339 UTC: %r" % (k, body[k]))
        if hostile is not None:
            if body["command"] != hostile:
                fail("json: command is not the exact command")
            if any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in body["text"]):
                fail("json: text carries a control character")
    elif fmt == "ntfy":
        if rec["method"] != "POST" or rec["path"] != "/ntfy/":
            fail("ntfy: %s %s, wanted POST to the server root /ntfy/" % (rec["method"], rec["path"]))
        if body.get("topic") != "alerts" or not isinstance(body.get("message"), str) \
                or not isinstance(body.get("title"), str) or body.get("click") != link \
                or body.get("priority") not in (1, 2, 3, 4, 5) or body.get("tags") != [event]:
            fail("ntfy: bad fields %r" % body)
        acts = body.get("actions")
        want = 3 if waiting(event) else 1
        if not (isinstance(acts, list) and len(acts) == want and acts[0].get("url") == link
                and all(a.get("action") == "view" for a in acts)):
            fail("ntfy: wanted %d view actions, the first to the link: %r" % (want, acts))
        if any(not re.fullmatch(action_re(base), a.get("url", "")) for a in acts[1:]):
            fail("ntfy: an action that is not an action link: %r" % acts)
    elif fmt == "slack":
        if set(body) != {"text", "blocks"}:
            fail("slack: keys %r" % sorted(body))
        markup = "<%s|Open request %d>" % (link, rid)
        if markup not in body["text"]:
            fail("slack: no %s" % markup)
        rest = body["text"].replace(markup, "")
        if "<" in rest or ">" in rest:
            fail("slack: unescaped < or > outside the link: %r" % rest)
        sec, act = body["blocks"][0], body["blocks"][1]
        if "<" in sec["text"]["text"] or ">" in sec["text"]["text"]:
            fail("slack: unescaped < or > in the section: %r" % sec)
        buttons = act.get("elements", [])
        if len(buttons) != (3 if waiting(event) else 1) or buttons[0].get("url") != link:
            fail("slack: buttons %r" % buttons)
        for b in buttons[1:]:
            if not re.fullmatch(action_re(base), b.get("url", "")) and \
                    not re.fullmatch(r"[0-9a-f]{64}", b.get("value", "")):
                fail("slack: a button that is neither an action link nor its token: %r" % b)
    elif fmt == "mattermost":
        if set(body) != {"text"} and set(body) != {"text", "attachments"}:
            fail("mattermost: keys %r" % sorted(body))
        markup = "[Open request %d](%s)" % (rid, link)
        if markup not in body["text"]:
            fail("mattermost: no %s" % markup)
        rest = body["text"].replace(markup, "")
        if waiting(event) and "attachments" not in body:
            found = re.findall(r" \u00b7 \[(Approve|Reject)\.\.\.\]\((" + action_re(base) + r")\)", rest)
            if [f[0] for f in found] != ["Approve", "Reject"]:
                fail("mattermost: no approve and reject links: %r" % rest)
            rest = re.sub(r" \u00b7 \[(Approve|Reject)\.\.\.\]\(" + action_re(base) + r"\)", "", rest)
        if re.search(r"(?<!\\)[\[\]()`*_]", rest):
            fail("mattermost: unescaped markdown outside the link: %r" % rest)
        if MENTION.search(rest):
            fail("mattermost: a mention survived")
    elif fmt == "discord":
        if set(body) != {"content", "embeds", "allowed_mentions"}:
            fail("discord: keys %r" % sorted(body))
        if body["allowed_mentions"] != {"parse": []}:
            fail("discord: mentions allowed")
        if len(body["content"]) > 2000:
            fail("discord: content over 2000")
        em = body["embeds"]
        if not (isinstance(em, list) and len(em) == 1 and em[0].get("url") == link
                and isinstance(em[0].get("title"), str)):
            fail("discord: embed %r" % em)
        if waiting(event) and not re.fullmatch(
                r"\[Approve\.\.\.\]\(" + action_re(base) + r"\) \u00b7 \[Reject\.\.\.\]\(" + action_re(base) + r"\)",
                em[0].get("description", "")):
            fail("discord: no approve and reject links: %r" % em)
        if re.search(r"(?<!\\)[\[\]()`*_]", body["content"]) or MENTION.search(body["content"]):
            fail("discord: unescaped markdown or a mention: %r" % body["content"])
    elif fmt == "matrix":
        m = re.fullmatch(r"/_matrix/client/v3/rooms/![^/]+/send/m\.room\.message/airlock-([0-9]+)", rec["path"])
        if rec["method"] != "PUT" or not m:
            fail("matrix: %s %s" % (rec["method"], rec["path"]))
        if rec["headers"].get("authorization") != "Bearer " + open(TOKEN).read().strip():
            fail("matrix: no bearer token")
        if body.get("msgtype") != "m.notice" or not isinstance(body.get("body"), str) \
                or body.get("m.mentions") != {} or link not in body["body"]:
            fail("matrix: fields %r" % body)
        if waiting(event) and not re.search(r"\nApprove: " + action_re(base) + r"\nReject: " + action_re(base) + "$",
                                            body["body"]):
            fail("matrix: no approve and reject links: %r" % body["body"])
        if MENTION.search(body["body"]) or "formatted_body" in body:
            fail("matrix: a mention or HTML")
    else:
        fail("unknown format " + fmt)
    if hostile is not None and fmt == "slack" and "<!channel>" in rec["body"]:
        fail("slack: <!channel> survived")


TOKEN = None
if cmd == "find":
    fmt, path, rid, event, base = args[0], args[1], int(args[2]), args[3], args[4]
    secretfile = args[5] if len(args) > 5 else "-"
    hostile = open(args[6], encoding="utf-8", newline="").read() if len(args) > 6 else None
    TOKEN = args[7] if len(args) > 7 else "/dev/null"
    hits = [r for r in records() if r["path"].startswith(path) and r["status"] == 200
            and r["headers"].get("x-airlock-event") == event and about(r, rid, base)]
    if not hits:
        fail("no %s request to %s for %d's %s (got %d requests there)" % (
            fmt, path, rid, event, sum(1 for r in records() if r["path"].startswith(path))))
    for r in hits:
        check_signature(r, secretfile)
        shape(fmt, r, rid, event, base, hostile)
elif cmd == "count":
    path, event, rid = args[0], args[1], int(args[2])
    print(sum(1 for r in records() if r["path"].startswith(path)
              and r["headers"].get("x-airlock-event") == event and about(r, rid, args[3])))
elif cmd == "links":
    path, rid = args[0], int(args[1])
    for r in records():
        if r["path"].startswith(path) and r["headers"].get("x-airlock-event") == "pending_approval":
            body = json.loads(r["body"])
            if body.get("execution_id") == rid:
                print(body["approve_url"])
                print(body["reject_url"])
                break
    else:
        fail("no pending_approval for %d at %s" % (rid, path))
elif cmd == "statuses":
    print(" ".join(str(r["status"]) for r in records() if r["path"].startswith(args[0])))
else:
    fail("unknown command " + cmd)
