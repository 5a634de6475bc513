#!/usr/bin/env python3
"""Checks every PostgreSQL advisory lock in migrations/ and the C sources
against store/lockkeys.h: a one-key lock is an execution id and nothing else;
a two-key lock's first key is a kind registered there; no two kinds share a
number.  Run from the repository, or give its root.  Prints one line per problem and the count of locks checked."""
import glob
import os
import re
import sys

os.chdir(sys.argv[1] if len(sys.argv) > 1 else ".")

kinds = dict(re.findall(r'#define (LOCK_KIND_\w+) "(\d+)"', open("store/lockkeys.h").read()))
problems = []
if len(set(kinds.values())) != len(kinds):
    problems.append("store/lockkeys.h: two kinds share a number: %s" % sorted(kinds.items()))
# The expressions that name an execution id where the one-key space is used.
EXEC_ID = {"exec_id", "cid", "e.id", "$1::bigint"}
# Landed migrations cannot change; a one-key lock they took before the
# registry is listed here until a later migration moves it to a kind.
LANDED = set()
CALL = re.compile(r"pg_(?:try_)?advisory_(?:xact_)?(?:un)?lock(?:_shared)?\s*\(")


def args_of(text, start):
    depth, cur, out = 1, "", []
    i = start
    while i < len(text) and depth:
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                break
        if c == "," and depth == 1:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    out.append(cur.strip())
    return out


files = sorted(glob.glob("migrations/*.sql"))
for d in ("classifier", "store", "zerto", "transport", "worker", "mcp", "cli", "lib", "hook"):
    files += sorted(glob.glob(d + "/*.[ch]"))
checked = 0
for path in files:
    text = open(path).read()
    for m in CALL.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        # Comments that merely mention a lock are not locks.
        ctx = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        if "--" in ctx or "/*" in ctx or ctx.lstrip().startswith("*"):
            continue
        a = [x.strip('" ') for x in args_of(text, m.end())]
        checked += 1
        where = "%s:%d" % (path, line)
        if len(a) == 1:
            if (path, a[0]) in LANDED:
                print("%s: one-key lock on %r, landed before the registry (to be moved to a kind)" % (where, a[0]))
            elif a[0] not in EXEC_ID:
                problems.append("%s: one-key lock on %r: that space is for execution ids only" % (where, a[0]))
        elif len(a) == 2:
            k = a[0]
            if k in kinds:
                continue
            if k not in kinds.values():
                problems.append("%s: two-key lock of kind %r, which store/lockkeys.h does not register" % (where, k))
        else:
            problems.append("%s: cannot read the lock's keys %r" % (where, a))
for p in problems:
    print(p)
print("%d advisory locks checked, %d kinds registered" % (checked, len(kinds)))
sys.exit(1 if problems else 0)
