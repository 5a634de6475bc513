#!/usr/bin/env python3
"""ids.py -- numeric request ids, answered exactly as the docs promise.

    tests/mcp/ids.py [--count N] [--seed S] -- COMMAND [ARG...]

Generates N id tokens from the pieces a number is written with (sign,
leading zeros, integer digits, a fraction that is empty, zero or not,
exponents with and without digits or sign) and decides each one's answer with
an oracle of its own (RFC 8259's number grammar and exact decimal arithmetic):
  * not a JSON number as written (01, -01, 1., 1.e5, 1e+, +1): the line is not
    JSON, -32700 with id null;
  * a JSON number that is not an integer (1.5, 1e-1): -32600 with id null;
  * a JSON number that is an integer (7, 1e5, 1.0, -0, 12.50e1): answered with
    the id exactly as written, byte for byte.
The same token is also tried inside params (only its validity as JSON
matters there).  Every answer is compared as bytes.
"""
import argparse
import decimal
import random
import re
import subprocess
import sys

NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def token(rng):
    digits = lambda k: "".join(rng.choice("0123456789") for _ in range(k))
    sign = rng.choice(["", "", "-", "+"])
    intpart = rng.choice(["0", "00", "0" + digits(2), "7", str(rng.randrange(1, 10)) + digits(rng.randrange(0, 25)), ""])
    frac = rng.choice(["", "", ".", ".0", ".000", ".5", "." + digits(rng.randrange(1, 6)), ".50"])
    exp = rng.choice(["", "", "e", "E", "e+", "e-", "e5", "E+2", "e-1", "e-3", "e0", "E" + str(rng.randrange(0, 400)),
                      "e-" + str(rng.randrange(0, 40))])
    return (sign + intpart + frac + exp) or "0"


def expected(tok):
    """(answer kind, id bytes or None): 'parse', 'invalid' or 'ok'."""
    if not NUMBER.fullmatch(tok):
        return "parse", None
    with decimal.localcontext() as ctx:
        ctx.prec = 1000
        ctx.Emax = 10**6
        ctx.Emin = -10**6
        d = decimal.Decimal(tok)
        if d != d.to_integral_value():
            return "invalid", None
    return "ok", tok.encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    lines = [b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25"}}']
    want = [("init-ok", None)]
    kinds = {}
    fixed = ["01", "-01", "1.", "1e5", "1.0", "-0", "00", "1.e5", "+1", "1e+", "1e-1", "1.5", "100e-2",
             "9007199254740993", "1E+2", "0.000e9", "12.50e1"]
    toks = fixed + [token(rng) for _ in range(a.count)]
    for tok in toks:
        kind, idb = expected(tok)
        kinds[kind] = kinds.get(kind, 0) + 1
        lines.append(b'{"jsonrpc":"2.0","id":' + tok.encode() + b',"method":"ping"}')
        want.append((kind, idb))
        # the same token as a value inside params: only JSON validity matters
        lines.append(b'{"jsonrpc":"2.0","id":"p","method":"ping","params":{"n":[' + tok.encode() + b']}}')
        want.append(("parse" if kind == "parse" else "ok", b'"p"'))
    p = subprocess.run(a.cmd, input=b"\n".join(lines) + b"\n", stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, timeout=300)
    answers = p.stdout.split(b"\n")
    if answers and answers[-1] == b"":
        answers.pop()
    if p.returncode != 0:
        print(f"exit status {p.returncode}")
        return 1
    if len(answers) != len(want):
        print(f"{len(answers)} answers to {len(want)} lines")
        return 1
    bad = 0
    for line, ans, (kind, idb) in zip(lines, answers, want):
        if kind == "init-ok":
            ok = ans.startswith(b'{"jsonrpc":"2.0","id":"init","result":')
        elif kind == "parse":
            ok = ans.startswith(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,')
        elif kind == "invalid":
            ok = ans.startswith(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,')
        else:
            ok = ans == b'{"jsonrpc":"2.0","id":' + idb + b',"result":{}}'
        if not ok:
            bad += 1
            if bad <= 10:
                print(f"sent {line[:120]!r}\n  got {ans[:160]!r}\n  wanted {kind} {idb!r}")
    print(f"{len(toks)} tokens ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}): {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
