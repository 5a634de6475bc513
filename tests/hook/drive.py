#!/usr/bin/env python3
"""drive.py -- replays recorded PreToolUse events through `airlock hook`.

A transcript is a sequence of cases:

    # name of the case
    > {"tool_name": "Bash", "tool_input": {"command": "ssh hubris"}}
    < 2 {"hookSpecificOutput": {...}}      (exit code, then the exact JSON)
    < 0                                     (exit code 0 and no output at all)

Each case is sent once per permission_mode Claude Code has (default, plan,
acceptEdits, auto, dontAsk, bypassPermissions), with the other fields of a
real event filled in; the answer must be the same, exactly, in every mode.
On exit 2 the deny reason must also be on stderr.

    drive.py TRANSCRIPT -- COMMAND...
"""
import json
import os
import subprocess
import sys

MODES = ["default", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"]


def subst(text):
    """@NAME@ stands for $HOOK_NAME (paths that differ per run)."""
    for k, v in os.environ.items():
        if k.startswith("HOOK_"):
            text = text.replace("@" + k[5:] + "@", v)
    return text


def cases(path):
    name, event = None, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("# "):
                name = line[2:]
            elif line.startswith("> "):
                event = json.loads(subst(line[2:]))
            elif line.startswith("< "):
                rest = line[2:]
                code, _, js = rest.partition(" ")
                yield n, name, event, int(code), (json.loads(js) if js.strip() else None)
                event = None
            elif line.strip():
                raise SystemExit(f"{path}:{n}: cannot read this line")


def record(path, cmd):
    """Prints the transcript with the answers the command gives now (for review)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for line in lines:
        if line.startswith("< "):
            continue
        print(line)
        if line.startswith("> "):
            ev = {"session_id": "drive-session", "permission_mode": "default",
                  "hook_event_name": "PreToolUse"}
            ev.update(json.loads(subst(line[2:])))
            p = subprocess.run(cmd, input=json.dumps(ev).encode(), capture_output=True,
                               timeout=60)
            out = p.stdout.decode().strip()
            print(f"< {p.returncode}" + (f" {out}" if out else ""))


def main():
    sep = sys.argv.index("--")
    path, cmd = sys.argv[1], sys.argv[sep + 1:]
    if path == "--record":
        record(sys.argv[2], cmd)
        return 0
    failed = total = 0
    for n, name, event, want_code, want in cases(path):
        for i, mode in enumerate(MODES):
            ev = {"session_id": "drive-session", "transcript_path": "/tmp/drive.jsonl",
                  "cwd": "/tmp", "permission_mode": mode, "hook_event_name": "PreToolUse",
                  "tool_use_id": f"toolu_{n}_{i}"}
            ev.update(event)
            p = subprocess.run(cmd, input=json.dumps(ev).encode(), capture_output=True,
                               timeout=60)
            total += 1
            out = p.stdout.decode()
            got = json.loads(out) if out.strip() else None
            problem = None
            if p.returncode != want_code:
                problem = f"exit {p.returncode}, wanted {want_code}"
            elif got != want:
                problem = f"answer {out.strip() or '(none)'}\n   wanted {json.dumps(want) if want else '(none)'}"
            elif want_code == 2 and want is not None and \
                    want["hookSpecificOutput"]["permissionDecisionReason"] not in p.stderr.decode():
                problem = "exit 2 without the reason on stderr"
            if problem:
                failed += 1
                print(f"FAIL {path}:{n} {name} [{mode}]: {problem}")
                break
    print(f"{total - failed} of {total} answers as recorded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
