#!/usr/bin/python3 -IS
"""docblocks -- turns the runnable shell blocks of the docs into one script.

  docblocks.py FILE.md...            the script, on stdout
  docblocks.py --settings FILE.md... the variable names the settings blocks set

A block whose fence reads ```sh tested [NAME] runs, in the order the files
and blocks come; ```sh settings blocks hold the site's names (the test sets
its own values instead); every other block is prose and is skipped.  The
script stops at the first failing command (set -e), saying which block, and
prints "ok - doc block FILE:LINE" after each block; around a named block it
calls the functions before_NAME and after_NAME (NAME with - as _) when the
caller defined them (the test's stand-
in for a step only a real machine can do, such as systemctl start).
"""
import re
import shlex
import sys

FENCE = re.compile(r"^```(\S*)\s*(.*)$")


def blocks(path):
    """(kind, name, first line number, text) for each fenced block."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1):
            lang, rest = m.group(1), m.group(2).split()
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                sys.exit("docblocks: %s:%d: unterminated block" % (path, i + 1))
            kind = rest[0] if lang == "sh" and rest else ""
            name = rest[1] if kind == "tested" and len(rest) > 1 else ""
            out.append((kind, name, start + 1, "\n".join(lines[start:j])))
            i = j + 1
        else:
            i += 1
    return out


def main():
    args = sys.argv[1:]
    settings = args and args[0] == "--settings"
    if settings:
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    if settings:
        names = []
        for path in args:
            for kind, _, _, text in blocks(path):
                if kind == "settings":
                    for word in shlex.split(text, comments=True):
                        if "=" in word:
                            names.append(word.split("=", 1)[0])
        print(" ".join(names))
        return 0
    print("set -eo pipefail")
    print("trap 'echo \"not ok - doc block $DOC_AT failed (exit $?)\"' ERR")
    n = 0
    for path in args:
        for kind, name, line, text in blocks(path):
            if kind != "tested":
                continue
            n += 1
            print("DOC_AT=%s" % shlex.quote("%s:%d" % (path, line)))
            print("echo \"# --- doc block $DOC_AT\"")
            ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
            if name:
                print("if declare -F before_%s >/dev/null; then before_%s; fi" % (ident, ident))
            print(text)
            if name:
                print("if declare -F after_%s >/dev/null; then after_%s; fi" % (ident, ident))
            print("echo \"ok - doc block $DOC_AT\"")
    print("echo \"doc blocks: %d\"" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
