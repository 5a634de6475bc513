#!/usr/bin/python3 -IS
"""cheapga -- many cheap guests' QEMU guest agents in one process, for scale tests.

  cheapga.py DIR VMID...

Listens on DIR/<vmid>.sock for each VMID and answers the guest agent protocol
as qemu-ga does over its virtio-serial socket, for the commands a probe uses:
guest-sync-delimited (0xFF, then the id), guest-sync, guest-ping and
guest-info (guest-exec listed and enabled).  A cheap guest has no processes:
guest-exec is refused with the agent's GenericError.  Anything else is
CommandNotFound.

Like QEMU's chardev for the agent, each socket serves one client at a time:
it listens with a backlog of one and accepts nobody else until its client
has closed, so the next client waits its turn in the queue, and a connect to
a full queue fails with EAGAIN.  Python standard library only: selectors, no
threads.
"""

import json
import os
import selectors
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import pverig as P  # noqa: E402

INFO = {"version": "rig-cheap", "supported_commands": [
    {"enabled": True, "name": n, "success-response": True}
    for n in ("guest-exec", "guest-exec-status", "guest-info", "guest-ping", "guest-sync",
              "guest-sync-delimited")]}


def answer(line):
    try:
        req = json.loads(line)
    except ValueError:
        return b'{"error": {"class": "GenericError", "desc": "JSON parse error"}}\n'
    cmd = req.get("execute") if isinstance(req, dict) else None
    args = req.get("arguments") or {} if isinstance(req, dict) else {}
    if cmd == "guest-sync-delimited":
        return b"\xff" + json.dumps({"return": args.get("id")}).encode() + b"\n"
    if cmd == "guest-sync":
        return json.dumps({"return": args.get("id")}).encode() + b"\n"
    if cmd == "guest-ping":
        return b'{"return": {}}\n'
    if cmd == "guest-info":
        return json.dumps({"return": INFO}).encode() + b"\n"
    if cmd in ("guest-exec", "guest-exec-status"):
        return b'{"error": {"class": "GenericError", "desc": "a cheap rig guest runs no processes"}}\n'
    return json.dumps({"error": {"class": "CommandNotFound",
                                 "desc": "The command %s has not been found" % cmd}}).encode() + b"\n"


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    d, ids = argv[0], argv[1:]
    sel = selectors.DefaultSelector()
    for vmid in ids:
        # A queue of one, as QEMU's chardev listens.
        sel.register(P.unix_listener(os.path.join(d, "%s.sock" % vmid), 1), selectors.EVENT_READ,
                     None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    open(os.path.join(d, "ready"), "w").close()
    while True:
        for key, _ in sel.select():
            if key.data is None:
                # A listener: take its next client, and nobody else until
                # that one is gone.
                try:
                    c, _ = key.fileobj.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                sel.unregister(key.fileobj)
                sel.register(c, selectors.EVENT_READ, (key.fileobj, bytearray()))
                continue
            c, (listener, buf) = key.fileobj, key.data
            try:
                chunk = c.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(c)
                c.close()
                sel.register(listener, selectors.EVENT_READ, None)
                continue
            buf += chunk
            while b"\n" in buf:
                i = buf.index(b"\n")
                line = bytes(buf[:i]).strip()
                del buf[: i + 1]
                if line:
                    try:
                        c.sendall(answer(line))
                    except OSError:
                        break


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
