#!/usr/bin/env python3
"""Generates commands around the transport's carry limit (fixed seed), one
per line, hex-encoded UTF-8: plain bytes, single quotes alone and mixed in at
every density, multi-byte characters, shell metacharacters, far under and
far over.  Used by tests/sql/run.sh to hold run()'s rule against the C rule."""
import random
import sys

LIMIT = 32640  # quoted bytes the transport carries (32768 minus its wrapper)
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 12)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
ALPHABETS = {
    "ascii": "abcdefghijklmnopqrstuvwxyz0123456789 -_./",
    "shell": " $`\"\\;|&<>(){}[]*?!#~=%\t\n",
    "utf8": "é日本語ß€😀ñ\u00a0\u202e",
}


def quoted(s):
    b = s.encode()
    return 2 + len(b) + 3 * b.count(b"'")


def fill(target, quote_share, alphabet):
    """A command whose quoted length is close to target."""
    out = []
    q = 2
    while True:
        if rng.random() < quote_share:
            ch = "'"
        else:
            ch = rng.choice(alphabet)
        step = len(ch.encode()) + (3 if ch == "'" else 0)
        if q + step > target:
            break
        out.append(ch)
        q += step
    s = "".join(out)
    return s if s.strip(" \t\r\n") else "x" + s[1:]


cases = []
for _ in range(n):
    kind = rng.random()
    if kind < 0.1:  # far under, or far over
        target = rng.choice([rng.randrange(3, 200), rng.randrange(LIMIT + 100, 65000)])
    else:  # within a few bytes of the limit, both sides
        target = LIMIT + rng.randrange(-8, 9)
    share = rng.choice([0.0, 0.001, 0.05, 0.3, 0.9, 1.0])
    alphabet = "".join(ALPHABETS[k] for k in rng.sample(list(ALPHABETS), rng.randrange(1, 4)))
    cases.append(fill(target, share, alphabet))
# The exact edges: quoted length LIMIT and LIMIT + 1, with and without quotes.
cases += ["x" * (LIMIT - 2), "x" * (LIMIT - 1), "'" * ((LIMIT - 2) // 4),
          "'" * ((LIMIT - 2) // 4) + "x" * ((LIMIT - 2) % 4),
          "'" * ((LIMIT - 2) // 4) + "x" * ((LIMIT - 2) % 4 + 1)]
for c in cases:
    print(c.encode().hex())
sys.stderr.write("%d commands, %d over the limit\n" % (len(cases), sum(quoted(c) > LIMIT for c in cases)))
