#!/usr/bin/python3 -I
"""leak.py -- plants secretgen.py's samples on the rig's targets, and checks that
nothing an agent can reach carries a byte of a held secret.  For tests/outhold/run.sh.

    leak.py plan SAMPLES HOST_ROOT VM_ROOT CT_ROOT > MANIFEST
        writes every sample's stdout and stderr as /srv/outhold/N.out and N.err
        under the targets' roots (all spellings on the host; the plain ones on
        the VM and the container) and prints one JSON line per planted sample.
    leak.py check MANIFEST IDS RECEIVER_LOG DAEMON_LOG
        IDS: "N<TAB>execution id" lines.  Prints "PASS name" / "FAIL name" lines
        (a FAIL's detail follows on lines starting with "#").

Agent-readable, and checked: get_execution and list_executions as the agent's
login (psql), `airlock show` and `show --json` as the agent, airlock-mcp's
get_execution and list_executions answers (the agent's own MCP server), every
webhook body the receiver got, the operators' history and audit output (the
chain is forever: it may carry digests, never bytes), airlockd's log.
"""
import json
import os
import subprocess
import sys
import time

AGENT = "hermes"
OPERATOR = "alice"


def psql(sql, user=None):
    env = dict(os.environ)
    if user:
        env["PGUSER"] = user
    r = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql], env=env,
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def cli(*args, user=None):
    env = dict(os.environ)
    if user:
        env["PGUSER"] = user
    r = subprocess.run(["build/bin/airlock", *args], env=env, capture_output=True)
    return r.returncode, r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")


def plan(samples, roots):
    n = 0
    for line in open(samples):
        s = json.loads(line)
        for target in ("host", "vm", "ct"):
            if target != "host" and s["variant"] != "plain":
                continue
            n += 1
            d = os.path.join(roots[target], "srv", "outhold")
            os.makedirs(d, mode=0o755, exist_ok=True)
            out = s.get("full_stdout", s["stdout"])
            for ext, text in (("out", out), ("err", s["stderr"])):
                p = os.path.join(d, f"{n}.{ext}")
                with open(p, "w", newline="") as f:
                    f.write(text)
                os.chmod(p, 0o644)
            print(json.dumps({"n": n, "target": target, "id": s["id"], "variant": s["variant"],
                              "kind": s["kind"], "claimed": s["claimed"], "secret": s["secret"],
                              "stdout": s["stdout"], "truncated": s["truncated"]}))


class Report:
    def __init__(self):
        self.failed = 0

    def check(self, ok, name, detail=""):
        print(("PASS " if ok else "FAIL ") + name)
        if not ok:
            self.failed += 1
            for d in str(detail).splitlines()[:20]:
                print("# " + d[:300])


def mcp_answers(ids):
    """Every line airlock-mcp (as the agent) answers to get_execution for ids, and
    list_executions over all pages."""
    p = subprocess.Popen(["build/bin/airlock-mcp", "--db", f"user={AGENT}"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = []

    def ask(i, method, params):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
        out.append(line)
        return json.loads(line)

    ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "leak", "version": "1"}})
    p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for k, eid in enumerate(ids, 1):
        ask(k, "tools/call", {"name": "get_execution", "arguments": {"id": eid}})
    cursor, k = None, len(ids) + 1
    while True:
        args = {"limit": 200}
        if cursor:
            args["cursor"] = cursor
        r = ask(k, "tools/call", {"name": "list_executions", "arguments": args})
        k += 1
        cursor = r.get("result", {}).get("structuredContent", {}).get("nextCursor")
        if not cursor:
            break
    p.stdin.close()
    p.wait(timeout=30)
    return out


def check(manifest, idfile, receiver_log, daemon_log):
    rep = Report()
    rows = {m["n"]: m for m in map(json.loads, open(manifest))}
    ids = {}
    for line in open(idfile):
        n, eid = line.split()
        ids[int(n)] = int(eid)
    rc, out, err = psql("SELECT coalesce(json_agg(json_build_object('id', e.id, 'state', e.state, "
                        "'hold', h.state, 'kind', h.kind)), '[]') FROM airlock.executions e "
                        "LEFT JOIN airlock.output_holds h ON h.execution_id = e.id")
    db = {r["id"]: r for r in json.loads(out)}
    held, harmless, unclaimed = [], [], []
    wrong = []
    for n, m in rows.items():
        r = db.get(ids.get(n))
        if r is None or r["state"] not in ("succeeded", "failed"):
            wrong.append(f"{m['target']} {m['id']} ({m['variant']}): {r}")
            continue
        if m["kind"] is None:
            harmless.append(n)
            if r["hold"] is not None:
                wrong.append(f"{m['target']} {m['id']}: harmless output held as {r['kind']}")
        elif not m["claimed"]:
            unclaimed.append(n)
            if r["hold"] is not None:
                wrong.append(f"{m['target']} {m['id']}: documented as not recognised, but held as {r['kind']}")
        else:
            held.append(n)
            if r["hold"] != "held":
                wrong.append(f"{m['target']} {m['id']} ({m['variant']}): not held")
            elif m["variant"] == "plain" and r["kind"] != m["kind"]:
                wrong.append(f"{m['target']} {m['id']}: held as {r['kind']}, wanted {m['kind']}")
    per = {t: sum(1 for n in held if rows[n]["target"] == t) for t in ("host", "vm", "ct")}
    rep.check(not wrong, f"every secret is held, harmless output and the documented misses are not "
              f"({len(held)} held: host {per['host']}, vm {per['vm']}, ct {per['ct']}; "
              f"{len(harmless)} harmless; {len(unclaimed)} not claimed)", "\n".join(wrong))
    secrets = {n: rows[n]["secret"] for n in held}

    def leaks(text, where):
        found = [f"{rows[n]['target']} {rows[n]['id']} ({rows[n]['variant']}): {s!r}"
                 for n, s in secrets.items() if s and s in text]
        rep.check(not found, f"no held secret in {where}", "\n".join(found))

    # -- the agent's own functions
    eids = ",".join(str(ids[n]) for n in held)
    rc, out, err = psql(f"SELECT json_agg(airlock.get_execution(x)) FROM unnest(ARRAY[{eids}]::bigint[]) x",
                        user=AGENT)
    rep.check(rc == 0 and out.strip().startswith("["), "the agent reads every held execution", err)
    leaks(out, "get_execution as the agent")
    rep.check(out.count('"output_hold": {') >= len(held) and "output held: it contains" in out,
              "each says its output is held, what it contains and where", out[:500])
    rc, out, err = psql("SELECT json_agg(j) FROM airlock.list_executions(NULL, NULL, 500, NULL) j", user=AGENT)
    leaks(out, "list_executions as the agent")
    blob = []
    for n in held[:: max(1, len(held) // 40)]:
        blob.append(cli("show", str(ids[n]), user=AGENT)[1])
        blob.append(cli("show", "--json", str(ids[n]), user=AGENT)[1])
    leaks("".join(blob), "`airlock show` (and --json) as the agent")
    rc, out = cli("history", str(ids[held[0]]), user=AGENT)
    rep.check(rc == 3 and "permission denied" in out, "`airlock history` as the agent is refused", out)
    for sql, what in (("SELECT * FROM airlock.output_holds", "output_holds"),
                      ("SELECT * FROM airlock.held_output", "held_output"),
                      ("SELECT stdout FROM airlock.executions", "executions"),
                      ("SELECT * FROM airlock.execution_events", "execution_events"),
                      ("SELECT * FROM airlock.execution_previews", "execution_previews"),
                      ("SELECT * FROM airlock.notification_status", "notification_status")):
        rc, out, err = psql(sql, user=AGENT)
        rep.check(rc != 0 and "permission denied" in err, f"the agent cannot read {what}", out + err)
    # -- the agent's MCP server
    answers = mcp_answers([ids[n] for n in held])
    rep.check(len(answers) > len(held), f"airlock-mcp answered ({len(answers)} lines)")
    text = "".join(answers)
    leaks(text, "airlock-mcp's answers (get_execution, list_executions)")
    rep.check(text.count("output held: it contains") >= len(held), "airlock-mcp says each is held",
              text[:400])
    # -- webhooks: every output_held delivered, none with a byte
    want = len(held)
    got = []
    for _ in range(600):
        got = [json.loads(l) for l in open(receiver_log)] if os.path.exists(receiver_log) else []
        if sum(1 for g in got if g["headers"].get("x-airlock-event") == "output_held"
               and g["path"].startswith("/json")) >= want:
            break
        time.sleep(0.1)
    n_held = sum(1 for g in got if g["headers"].get("x-airlock-event") == "output_held"
                 and g["path"].startswith("/json"))
    rep.check(n_held >= want, f"an output_held notification per hold reached the json webhook ({n_held}/{want})")
    rep.check(any("output held: it contains" in g["body"] for g in got if g["path"].startswith("/slack")),
              "and the slack webhook, in its words")
    leaks("".join(g["body"] for g in got), f"the {len(got)} webhook bodies")
    # -- what stays forever, and the log
    hist = [cli("history", "--json", str(ids[n]), user=OPERATOR)[1] for n in held[:: max(1, len(held) // 40)]]
    leaks("".join(hist), "the chained history (operators' export, --json)")
    leaks(cli("audit", "verify", user=OPERATOR)[1], "audit verify's output")
    leaks(open(daemon_log, errors="replace").read(), "airlockd's log")
    # -- harmless output reaches the agent as it was
    bad = []
    for n in harmless:
        rc, out, err = psql(f"SELECT airlock.get_execution({ids[n]}) ->> 'stdout'", user=AGENT)
        want = rows[n]["stdout"]
        if out.rstrip("\n") != want.rstrip("\n"):
            bad.append(f"{rows[n]['target']} {rows[n]['id']}: {out[:80]!r} != {want[:80]!r}")
    rep.check(not bad, f"harmless output reaches the agent unchanged ({len(harmless)} runs)", "\n".join(bad))
    return rep.failed


def main():
    if sys.argv[1] == "plan":
        plan(sys.argv[2], {"host": sys.argv[3], "vm": sys.argv[4], "ct": sys.argv[5]})
        return 0
    return 1 if check(*sys.argv[2:6]) else 0


if __name__ == "__main__":
    sys.exit(main())
