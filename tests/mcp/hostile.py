#!/usr/bin/env python3
"""hostile.py -- feed airlock-mcp a large corpus of hostile lines and check every answer.

    tests/mcp/hostile.py [--lines N] [--seed S] -- COMMAND [ARG...]

Generates N lines (default 10000, fixed seed: the same corpus every run) of
random bytes, truncated JSON, huge strings, deep nesting, wrong types, bad
envelopes, odd ids, invalid UTF-8, duplicate keys, batches, over-long lines,
and notifications that would do something if they were wrongly executed.
Each line carries the answer it must get (or that it must get none).  The
server must answer exactly those, in order, write nothing but JSON-RPC lines
to stdout, and exit 0 at end of input.  The corpus ends with one valid tool
call, so the caller can check that exactly one statement reached the database.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time

LINE_MAX = 4 << 20
TOOLS = {  # tool -> (valid arguments, {param: kind})
    "run": ({"target": "vm:web01", "command": "uptime", "action": "look"},
            {"target": "s", "command": "s", "action": "s", "declared_risk": "e", "change_id": "s",
             "wait_seconds": "i"}),
    "get_execution": ({"id": 1}, {"id": "i", "wait_seconds": "i"}),
    "list_executions": ({}, {"state": "e", "target": "s", "limit": "i", "cursor": "s"}),
    "cancel_execution": ({"id": 1}, {"id": "i"}),
    "update_entity_attributes": ({"slug": "vm:web01", "attributes": {"a": 1}},
                                 {"slug": "s", "attributes": "o"}),
    "create_relationship": ({"source": "vm:web01", "target": "vm:db01", "type": "uses"},
                            {"source": "s", "target": "s", "type": "s"}),
    "get_relations": ({"slug": "vm:web01"}, {"slug": "s"}),
    "get_health_summary": ({}, {"slug": "s"}),
    "list_checks": ({}, {"slug": "s"}),
    "check_tool": ({"server": "ssh", "tool": "exec"}, {"server": "s", "tool": "s", "vm": "s"}),
}
WRONG = {  # values of the wrong JSON type for each kind
    "s": [1, -1, 0.5, True, False, None, [], ["vm:web01"], {}, {"s": "x"}],
    "e": [1, True, None, [], {}, "READ_ONLY", "read_only ", ""],
    "i": ["1", "seven", 1.5, -0.25, True, None, [], {}, 1e300, -1, 9007199254740992],
    "o": ["a=1", 1, True, None, [], [{"a": 1}]],
}


class Corpus:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []    # bytes
        self.expect = []   # per line: None or (id, code or "ok" or "isError")
        self.kinds = {}
        self.next_id = 1

    def add(self, kind, line, expect):
        assert b"\n" not in line
        if len(line.rstrip(b"\r")) > LINE_MAX:
            expect = (None, -32600)  # over the cap, whatever it holds
        self.lines.append(line)
        self.expect.append(expect)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def new_id(self):
        """A fresh id: small and huge integers, strings with escapes and non-ASCII."""
        self.next_id += 1
        n = self.next_id
        r = self.rng.random()
        if r < 0.4:
            return n
        if r < 0.6:
            return n + (1 << 53) + self.rng.randrange(1 << 60)
        if r < 0.7:
            return -n * 10 ** self.rng.randrange(1, 30)
        return self.rng.choice(["r", "é\"\\", "\u2028", "😀", " ", "\t\n", "/"]) + str(n)


def dumps(obj, rng):
    return json.dumps(obj, ensure_ascii=rng.random() < 0.5, separators=(",", ":")).encode()


def request(c, method, params=None, id_=None):
    msg = {"jsonrpc": "2.0", "id": c.new_id() if id_ is None else id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def call(c, name, args):
    return request(c, "tools/call", {"name": name, "arguments": args})


def gen_garbage(c):
    n = c.rng.randrange(1, 300)
    body = bytes(c.rng.randrange(256) for _ in range(n)).replace(b"\n", b" ")
    c.add("garbage", b"#" + body, (None, -32700))


def gen_truncated(c):
    name = c.rng.choice(list(TOOLS))
    line = dumps(call(c, name, TOOLS[name][0]), c.rng)
    c.add("truncated", line[:c.rng.randrange(1, len(line))], (None, -32700))


def gen_huge(c):
    n = c.rng.randrange(65537, 1_500_000)
    r = c.rng.random()
    if r < 0.5:
        args = dict(TOOLS["run"][0], command="x" * n)
        msg = call(c, "run", args)
        c.add("huge", dumps(msg, c.rng), (msg["id"], "isError"))
    elif r < 0.75:
        msg = request(c, "m" * n)
        c.add("huge", dumps(msg, c.rng), (msg["id"], -32601))
    else:
        msg = request(c, "ping", {"pad": "é" * (n // 2)}, id_="id-" + "i" * n)
        c.add("huge", dumps(msg, c.rng), (msg["id"], "ok"))


def gen_deep(c):
    if c.rng.random() < 0.5:
        d = c.rng.randrange(10, 900)
        args = {"slug": json.loads("[" * d + "]" * d)} if d < 990 else {}
        msg = call(c, "get_relations", args)
        c.add("deep", dumps(msg, c.rng), (msg["id"], "isError"))
    else:
        d = c.rng.randrange(1100, 20000)
        opener = c.rng.choice([b"[", b'{"a":'])
        closer = b"]" if opener == b"[" else b"}"
        c.add("deep", opener * d + closer * d, (None, -32700))


def gen_wrong_type(c):
    name = c.rng.choice(list(TOOLS))
    valid, params = TOOLS[name]
    args = dict(valid)
    r = c.rng.random()
    if r < 0.7:
        p = c.rng.choice(list(params))
        args[p] = c.rng.choice(WRONG[params[p]])
    elif r < 0.85:
        args[c.rng.choice(["requested_by", "as", "who", "ID", "Target", "sql"])] = "operator"
    elif valid:
        del args[c.rng.choice(list(valid))]
    else:
        args["limit"] = 0
    msg = call(c, name, args)
    c.add("wrong-type", dumps(msg, c.rng), (msg["id"], "isError"))


def gen_envelope(c):
    msg = request(c, "ping")
    r = c.rng.randrange(9)
    want_id = msg["id"]
    if r == 0:
        del msg["jsonrpc"]
    elif r == 1:
        msg["jsonrpc"] = c.rng.choice(["1.0", "2", 2.0, None, "2.0 "])
    elif r == 2:
        msg["method"] = c.rng.choice([1, None, True, [], {"m": 1}])
    elif r == 3:
        del msg["method"]
    elif r == 4:
        msg["id"], want_id = c.rng.choice([None, True, False, 1.5, -0.5, [], {}, [1], 1e-300]), None
    elif r == 5:
        msg["params"] = c.rng.choice(["x", 1, True])
    elif r == 6:
        msg["JSONRPC"] = msg.pop("jsonrpc")
    elif r == 7:
        msg["Method"] = msg.pop("method")
    else:
        line = dumps(msg, c.rng)[:-1] + b',"id":' + dumps(c.new_id(), c.rng) + b"}"
        c.add("envelope", line, (None, -32600))
        return
    c.add("envelope", dumps(msg, c.rng), (want_id, -32600))


def gen_method(c):
    m = c.rng.choice(["resources/list", "prompts/get", "Tools/List", "tools/list ", "", "run",
                      "logging/setLevel", "initialize/", "server/discover", "x" * 300])
    msg = request(c, m, {})
    c.add("unknown-method", dumps(msg, c.rng), (msg["id"], -32601))


def gen_notification(c):
    name = c.rng.choice(list(TOOLS))
    msg = call(c, name, TOOLS[name][0])
    del msg["id"]
    if c.rng.random() < 0.3:
        msg["method"] = c.rng.choice(["notifications/cancelled", "notifications/progress",
                                      "ping", "initialize", "notifications/initialized"])
    c.add("notification", dumps(msg, c.rng), None)


def gen_over_cap(c):
    msg = request(c, "ping", {"pad": "z" * (LINE_MAX + c.rng.randrange(1, 1 << 20))})
    c.add("over-cap", dumps(msg, c.rng), (None, -32600))


def gen_bad_utf8(c):
    line = dumps(request(c, "ping", {"s": "abcdef"}), c.rng)
    bad = c.rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80"])
    c.add("bad-utf8", line.replace(b"abc", b"a" + bad + b"c"), (None, -32700))


def gen_nul(c):
    line = dumps(request(c, "ping", {"s": "abc"}), c.rng)
    r = c.rng.random()
    bad = line.replace(b"abc", b"a\\u0000c") if r < 0.5 else line.replace(b"abc", b"a\x00c")
    c.add("nul", bad, (None, -32700))


def gen_duplicate(c):
    line = dumps(call(c, "run", TOOLS["run"][0]), c.rng)
    line = line.replace(b'"command":"uptime"', b'"command":"uptime","command":"reboot"')
    c.add("duplicate-key", line, (None, -32600))


def gen_batch(c):
    n = c.rng.randrange(0, 4)
    items = b",".join(dumps(request(c, "ping"), c.rng) for _ in range(n))
    c.add("batch", b"[" + items + b"]", (None, -32600))


def gen_scalar(c):
    c.add("scalar", c.rng.choice([b"1", b"-0.5e3", b"\"ping\"", b"null", b"true", b"{}"]),
          (None, -32600))


def gen_ping(c):
    msg = request(c, "ping", {} if c.rng.random() < 0.5 else None)
    c.add("ping", dumps(msg, c.rng), (msg["id"], "ok"))


def gen_bad_call(c):
    r = c.rng.randrange(5)
    if r == 0:
        msg = request(c, "tools/call", {"name": c.rng.choice(["rm_rf", "RUN", "run ", "", "ssh"])})
    elif r == 1:
        msg = request(c, "tools/call", {"name": "run", "arguments": c.rng.choice(
            [[], "x", 1, True])})
    elif r == 2:
        msg = request(c, "tools/call", {"arguments": {}})
    elif r == 3:
        msg = request(c, "tools/call", ["run", {}])
    else:
        msg = request(c, "tools/list", {"cursor": "next"})
    c.add("bad-call", dumps(msg, c.rng), (msg["id"], -32602))


GENERATORS = [  # (weight, generator)
    (14, gen_garbage), (14, gen_truncated), (1, gen_huge), (4, gen_deep), (22, gen_wrong_type),
    (8, gen_envelope), (5, gen_method), (8, gen_notification), (4, gen_bad_utf8), (3, gen_nul),
    (3, gen_duplicate), (3, gen_batch), (3, gen_scalar), (5, gen_ping), (5, gen_bad_call),
]


def build(n, seed):
    rng = random.Random(seed)
    c = Corpus(rng)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "hostile", "version": "1"}}}
    c.add("initialize", dumps(init, rng), (0, "ok"))
    c.add("initialized", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', None)
    weights = [w for w, _ in GENERATORS]
    gens = [g for _, g in GENERATORS]
    gen_over_cap(c)
    while len(c.lines) < n - 2:
        rng.choices(gens, weights)[0](c)
    gen_over_cap(c)
    last = call(c, "get_health_summary", {"slug": "vm:web01"})
    c.add("valid-call", dumps(last, rng), (last["id"], "ok"))
    return c


def check(answer, want):
    """None if the answer line is what was wanted."""
    try:
        msg = json.loads(answer.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"not JSON ({e})"
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or "id" not in msg or \
            ("result" in msg) == ("error" in msg):
        return "not a JSON-RPC response"
    want_id, want = want
    if msg["id"] != want_id or type(msg["id"]) is not type(want_id):
        return f"id {repr(msg['id'])[:80]}, wanted {repr(want_id)[:80]}"
    if isinstance(want, int):
        code = msg.get("error", {}).get("code")
        return None if code == want else f"code {code}, wanted {want}"
    res = msg.get("result")
    if not isinstance(res, dict):
        return f"wanted a result, got {msg.get('error')}"
    is_error = res.get("isError") is True
    if want == "isError" and not (is_error and res["content"][0]["text"]):
        return "wanted an isError result"
    if want == "ok" and is_error:
        return f"wanted success, got isError: {res['content'][0]['text']}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()
    c = build(a.lines, a.seed)
    wanted = [e for e in c.expect if e is not None]
    err = os.environ.get("HOSTILE_STDERR")
    p = subprocess.Popen(a.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=open(err, "wb") if err else subprocess.DEVNULL)

    def feed():
        try:
            for line in c.lines:
                p.stdin.write(line + b"\n")
            p.stdin.close()
        except BrokenPipeError:
            pass

    t0 = time.monotonic()
    writer = threading.Thread(target=feed)
    writer.start()
    answers = p.stdout.read().split(b"\n")
    writer.join()
    rc = p.wait(timeout=30)
    elapsed = time.monotonic() - t0
    if answers and answers[-1] == b"":
        answers.pop()
    else:
        print("not ok - the last output line has no newline")
        return 1
    failures = 0
    for i, (ans, want) in enumerate(zip(answers, wanted)):
        why = check(ans, want)
        if why:
            failures += 1
            if failures <= 10:
                print(f"not ok - answer {i}: {why}: {ans[:300]!r}")
    if len(answers) != len(wanted):
        failures += 1
        print(f"not ok - {len(answers)} answers for {len(wanted)} requests")
    if rc != 0:
        failures += 1
        print(f"not ok - server exit status {rc}")
    total = sum(len(l) + 1 for l in c.lines)
    kinds = " ".join(f"{k}={v}" for k, v in sorted(c.kinds.items()))
    print(f"{'ok' if not failures else 'not ok'} - {len(c.lines)} lines ({total >> 20} MiB), "
          f"{len(wanted)} answers checked, {failures} failures, {elapsed:.1f} s; {kinds}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
