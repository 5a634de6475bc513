#!/usr/bin/python3 -IS
"""tty_answer -- runs a command on a new pseudo-terminal and answers each
prompt that ends in ": " with the next line given, echoing nothing back.

  tty_answer.py ANSWER1 [ANSWER2...] -- CMD...

Prints what the command wrote to the terminal, then exits with its status
(124, after killing it, when it stays silent for TIMEOUT_S seconds).
For testing a password prompt the way a person meets it."""
import os
import pty
import select
import signal
import sys

TIMEOUT_S = 60  # a prompt that never comes must not hang the suite


def main():
    sep = sys.argv.index("--")
    answers, cmd = sys.argv[1:sep], sys.argv[sep + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    seen = b""
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], TIMEOUT_S)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.stdout.write(out.decode("utf-8", "replace") + "\n[tty_answer: timed out]\n")
            return 124
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        seen += chunk
        if seen.rstrip().endswith(b":") and answers:
            os.write(fd, answers.pop(0).encode() + b"\n")
            seen = b""
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode("utf-8", "replace"))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
