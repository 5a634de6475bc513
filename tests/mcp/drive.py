#!/usr/bin/env python3
"""drive.py -- play an MCP transcript against a server over stdio and check every answer.

    tests/mcp/drive.py TRANSCRIPT -- COMMAND [ARG...]

A transcript is a text file, one entry per line:
    # comment                   (and blank lines) ignored
    > {json...}                 sent to the server verbatim, plus a newline
    >py EXPR                    sent as the bytes of a Python expression (for
                                invalid UTF-8, huge lines, ...), plus a newline
    < {json...}                 the next line the server writes must match this
                                pattern (below)
    <~ {json...}                a run of these: the next lines, as many as the
                                run has entries, must match its patterns in some
                                order, each pattern one line (answers of calls
                                that run concurrently)
    ! SHELL                     run SHELL (bash) now; it must exit 0
At the end the driver closes the server's stdin: the server must exit 0 within
10 s having written nothing more.  Every line the server writes must be one
JSON-RPC 2.0 response (or a notification such as notifications/progress);
stderr is kept in $DRIVE_STDERR (default: discarded).

Patterns: an object matches if every key it names matches (other keys are
free); an array matches an array of the same length element by element; a
array whose first element is "..." matches an array in which each of the
remaining patterns matches some element (in any order); a string starting
with "~" is a regular expression searched for in the actual
string; the string "*" matches any value that is present; "!absent" in an
object means the key must not be there; anything else must be equal, with the
same JSON type (1 is not 1.0 is not true).
"""
import json
import os
import re
import select
import subprocess
import sys
import time

READ_TIMEOUT = 60.0


def same_type(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    return type(a) is type(b)


def match(pat, got, path="$"):
    """None when got matches pat, else a description of the first mismatch."""
    if isinstance(pat, str) and pat == "*":
        return None
    if isinstance(pat, str) and pat.startswith("~"):
        if not isinstance(got, str) or re.search(pat[1:], got) is None:
            return f"{path}: {got!r} does not match /{pat[1:]}/"
        return None
    if isinstance(pat, dict):
        if not isinstance(got, dict):
            return f"{path}: wanted an object, got {got!r}"
        for k, v in pat.items():
            if v == "!absent":
                if k in got:
                    return f"{path}.{k}: should be absent, is {got[k]!r}"
                continue
            if k not in got:
                return f"{path}.{k}: missing"
            why = match(v, got[k], f"{path}.{k}")
            if why:
                return why
        return None
    if isinstance(pat, list) and pat[:1] == ["..."]:
        if not isinstance(got, list):
            return f"{path}: wanted an array, got {got!r}"[:400]
        for p in pat[1:]:
            if all(match(p, g) for g in got):
                return f"{path}: no element matches {p!r}"[:400]
        return None
    if isinstance(pat, list):
        if not isinstance(got, list) or len(got) != len(pat):
            return f"{path}: wanted {len(pat)} elements, got {got!r}"[:400]
        for i, (p, g) in enumerate(zip(pat, got)):
            why = match(p, g, f"{path}[{i}]")
            if why:
                return why
        return None
    if not same_type(pat, got) or pat != got:
        return f"{path}: wanted {pat!r}, got {got!r}"[:400]
    return None


class Server:
    def __init__(self, argv):
        err = os.environ.get("DRIVE_STDERR")
        self.stderr = open(err, "ab") if err else subprocess.DEVNULL
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.stderr)
        self.buf = b""

    def send(self, data):
        self.p.stdin.write(data + b"\n")
        self.p.stdin.flush()

    def readline(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                continue
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line


def check_message(raw):
    """Parses one output line; returns (message, problem)."""
    try:
        msg = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return None, f"not JSON: {raw[:200]!r} ({e})"
    items = msg if isinstance(msg, list) else [msg]
    for m in items:
        if isinstance(m, dict) and m.get("jsonrpc") == "2.0" and isinstance(m.get("method"), str) \
                and "id" not in m and not isinstance(msg, list):
            continue  # a notification from the server (notifications/progress)
        if not isinstance(m, dict) or m.get("jsonrpc") != "2.0" or "id" not in m or \
                (("result" in m) == ("error" in m)):
            return None, f"not a JSON-RPC response: {raw[:200]!r}"
    return msg, None


def match_group(srv, group):
    """Reads len(group) lines and pairs each with a pattern of group, in any
    order.  Returns the number of failures."""
    left = list(group)
    failures = 0
    for _ in range(len(group)):
        raw = srv.readline(READ_TIMEOUT)
        if raw is None:
            print(f"not ok - {left[0][0]}: no answer (server exit status {srv.p.poll()})")
            return failures + 1
        msg, why = check_message(raw)
        hit = None
        if why is None:
            hit = next((i for i, (_, pat) in enumerate(left) if match(pat, msg) is None), None)
        if hit is None:
            wanted = " | ".join(json.dumps(p)[:160] for _, p in left)
            print(f"not ok - {left[0][0]}: {why or 'matches none of the patterns left'}\n"
                  f"#   got: {raw[:600].decode('utf-8', 'replace')}\n#   left: {wanted}")
            failures += 1
            continue
        del left[hit]
    return failures


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    path, argv = sys.argv[1], sys.argv[3:]
    name = os.path.basename(path)
    srv = Server(argv)
    failures = 0
    checked = 0
    with open(path, encoding="utf-8") as f:
        entries = [(n, l.rstrip("\n")) for n, l in enumerate(f, 1)]
    group = []
    for lineno, line in entries + [(len(entries) + 1, "#")]:
        where = f"{name}:{lineno}"
        if group and not line.startswith("<~ ") and line.strip():
            checked += len(group)
            failures += match_group(srv, group)
            group = []
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith(">py "):
            srv.send(eval(line[4:], {}))  # test data, written by us
        elif line.startswith("> "):
            srv.send(line[2:].encode("utf-8"))
        elif line.startswith("! "):
            r = subprocess.run(["bash", "-c", line[2:]], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"not ok - {where}: shell step failed: {r.stdout}{r.stderr}")
                failures += 1
        elif line.startswith("<~ "):
            group.append((where, json.loads(line[3:])))
            continue
        elif line.startswith("< "):
            checked += 1
            pat = json.loads(line[2:])
            raw = srv.readline(READ_TIMEOUT)
            if raw is None:
                print(f"not ok - {where}: no answer (server exit status {srv.p.poll()})")
                failures += 1
                break
            msg, why = check_message(raw)
            if why is None:
                why = match(pat, msg)
            if why:
                print(f"not ok - {where}: {why}\n#   got: {raw[:600].decode('utf-8', 'replace')}")
                failures += 1
        else:
            print(f"not ok - {where}: cannot parse transcript line")
            failures += 1
    srv.p.stdin.close()
    extra = srv.readline(10.0)
    try:
        rc = srv.p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.p.kill()
        rc = "no exit within 10 s of EOF"
    if extra is not None:
        print(f"not ok - {name}: unexpected output: {extra[:300]!r}")
        failures += 1
    if rc != 0:
        print(f"not ok - {name}: server exit status {rc} after EOF")
        failures += 1
    print(f"{'ok' if failures == 0 else 'not ok'} - {name}: {checked} answers checked, "
          f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
