#!/usr/bin/env python3
"""concurrent.py -- airlock-mcp serves requests concurrently.

    tests/mcp/concurrent.py [--burst N] [--seed S] -- COMMAND [ARG...]

COMMAND serves an agent login of its own on a migrated and seeded database;
its stderr goes to $CONC_STDERR (the test reads the server's log there).
Checks, in one session:
  burst      N requests of every kind sent in one write (pings, tools/list,
             reads that reach the database, invalid arguments, unknown
             rows): every id answered exactly once, each with the answer its
             kind must get;
  saturated  every worker waiting for an execution: a call queued behind them
             and cancelled there never runs and gets no answer, pings are still
             answered at once, a full queue refuses the next call at once, a
             cancelled wait frees its worker for the calls queued;
  eof        input closed while waits and quick calls are in flight: all are
             answered (waits with ended "input_closed"), then exit 0.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading
import time

WORKERS = 8  # MCP_WORKERS in mcp/workers.h
QUEUE_MAX = 256  # MCP_QUEUE_MAX


class Server:
    def __init__(self, argv, stderr_path):
        self.stderr_path = stderr_path
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(stderr_path, "wb"))
        self.answers = []  # (json, raw) in arrival order
        self.cv = threading.Condition()
        self.done = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.p.stdout:
            msg = json.loads(raw)
            with self.cv:
                self.answers.append(msg)
                self.cv.notify_all()
        with self.cv:
            self.done = True
            self.cv.notify_all()

    def send(self, *msgs):
        data = b"".join(json.dumps(m).encode() + b"\n" for m in msgs)
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def answer(self, id_, timeout=60):
        """The answer to id_, waiting for it (bounded)."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                for m in self.answers:
                    if m.get("id") == id_ and "method" not in m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or self.done:
                    raise AssertionError(f"no answer for id {id_!r}")
                self.cv.wait(left)

    def log_count(self, pattern):
        with open(self.stderr_path, "rb") as f:
            return len(re.findall(pattern.encode(), f.read()))

    def wait_log(self, pattern, count=1, timeout=60):
        deadline = time.monotonic() + timeout
        while self.log_count(pattern) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"the log never showed {count} x /{pattern}/")
            time.sleep(0.05)


def call(id_, tool, args):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}


def result(m):
    assert "result" in m, m
    return m["result"]


def burst(srv, n, rng):
    kinds = {
        "ping": ({"jsonrpc": "2.0", "method": "ping"}, lambda m: result(m) == {}),
        "list_tools": ({"jsonrpc": "2.0", "method": "tools/list"},
                       lambda m: len(result(m)["tools"]) >= 10),
        "list": (call(0, "list_executions", {"limit": 2}),
                 lambda m: "executions" in result(m)["structuredContent"]),
        "health": (call(0, "get_health_summary", {}),
                   lambda m: any(e["slug"] == "vm:web01"
                                 for e in result(m)["structuredContent"]["entities"])),
        "check": (call(0, "check_tool", {"server": "proxmox", "tool": "get_vm_status"}),
                  lambda m: result(m)["structuredContent"]["verdict"] == "read_only"),
        "missing": (call(0, "get_execution", {"id": 987654321}),
                    lambda m: result(m).get("isError") is True and
                    "not found" in result(m)["content"][0]["text"]),
        "invalid": (call(0, "get_execution", {"id": "x"}),
                    lambda m: result(m).get("isError") is True and
                    "must be an integer" in result(m)["content"][0]["text"]),
    }
    sent = {}
    msgs = []
    for i in range(n):
        kind = rng.choice(list(kinds))
        id_ = f"b{i}" if rng.random() < 0.5 else 100000 + i
        msg = json.loads(json.dumps(kinds[kind][0]))
        msg["id"] = id_
        sent[id_] = kind
        msgs.append(msg)
    srv.send(*msgs)
    for id_, kind in sent.items():
        m = srv.answer(id_)
        assert kinds[kind][1](m), f"{kind} {id_}: {json.dumps(m)[:300]}"
    print(f"ok - burst: {n} requests sent at once, each answered as its kind must be")


def saturate(srv):
    r = result(srv.answer_of(call("mk", "run", {"target": "vm:web01", "command": "uptime",
                                                 "action": "something to wait for"})))
    row = r["structuredContent"]["execution"]["id"]
    waits = [f"w{i}" for i in range(WORKERS)]
    srv.send(*[call(w, "get_execution", {"id": row, "wait_seconds": 120}) for w in waits])
    srv.wait_log(rf"exec={row} evt=mcp\.wait ", WORKERS)
    # Every worker waits now: this one is queued behind them, then cancelled there.
    srv.send(call("queued", "list_executions", {"limit": 1}),
             {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": "queued", "reason": "test"}},
             {"jsonrpc": "2.0", "id": "p1", "method": "ping"})
    assert result(srv.answer("p1")) == {}
    print("ok - saturated: a ping is answered while every worker waits")
    # The queue is bounded: with it full (the cancelled call still holds its place),
    # the next call is refused at once, and says why.
    full = [f"q{i}" for i in range(QUEUE_MAX - 1)]
    srv.send(*[call(q, "list_executions", {"limit": 1}) for q in full])
    srv.send(call("over", "list_executions", {"limit": 1}))
    m = result(srv.answer("over"))
    assert m.get("isError") is True and "busy" in m["content"][0]["text"], m
    print(f"ok - saturated: with {QUEUE_MAX} calls queued the next is refused at once as busy")
    before = srv.log_count(r"evt=mcp\.tool_cancelled tool=list_executions started=0")
    # Cancelling a wait frees its worker: it skips the cancelled call, then serves the next.
    srv.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": waits[0]}})
    for q in full:
        m = srv.answer(q)
        assert "executions" in result(m).get("structuredContent", {}), m
    srv.send(call("after", "list_executions", {"limit": 1}))
    m = srv.answer("after")
    assert result(m)["structuredContent"]["executions"][0]["id"] == row, m
    srv.wait_log(r"evt=mcp\.tool_cancelled tool=list_executions started=0", before + 1)
    print("ok - saturated: a queued call cancelled before it ran never runs; "
          "a cancelled wait frees its worker for the next call")
    return row, waits


def eof(srv, row, waits):
    srv.send(*[call(f"last{i}", "list_executions", {"limit": 1}) for i in range(3)])
    srv.p.stdin.close()
    rc = srv.p.wait(timeout=30)
    assert rc == 0, f"exit status {rc}"
    for w in waits[1:]:
        m = srv.answer(w, timeout=1)
        s = result(m)["structuredContent"]
        assert s["execution"]["id"] == row and s["wait"]["ended"] == "input_closed", m
    for i in range(3):
        srv.answer(f"last{i}", timeout=1)
    print(f"ok - eof: {len(waits) - 1} waits and 3 quick calls in flight at end of input "
          "all answered, then exit 0")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--burst", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()
    srv = Server(a.cmd, os.environ.get("CONC_STDERR", "/dev/null"))
    srv.answer_of = lambda msg: (srv.send(msg), srv.answer(msg["id"]))[1]
    srv.answer_of({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25"}})
    srv.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    try:
        burst(srv, a.burst, random.Random(a.seed))
        row, waits = saturate(srv)
        eof(srv, row, waits)
    except AssertionError as e:
        print(f"not ok - {e}")
        srv.p.kill()
        return 1
    # Exactly once: no id twice, and nothing for the cancelled ones.
    ids = [json.dumps(m.get("id")) for m in srv.answers if "method" not in m]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        print(f"not ok - answered more than once: {sorted(dup)[:10]}")
        return 1
    for gone in ('"queued"', '"w0"'):
        if gone in ids:
            print(f"not ok - the cancelled call {gone} was answered")
            return 1
    print(f"ok - {len(ids)} answers, each id once, none for the cancelled calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
