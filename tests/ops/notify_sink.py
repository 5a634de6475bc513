#!/usr/bin/python3 -IS
"""notify_sink -- plays systemd's side of the sd_notify protocol for a test.

  notify_sink.py SOCKET LOG

Binds a unix datagram socket at SOCKET (a path, or "@name" for the abstract
namespace, as $NOTIFY_SOCKET spells them) and appends every datagram it gets
to LOG, one per line with its newlines written as "|".  Runs until killed.
Writes LOG.ready once the socket is bound.
"""
import os
import socket
import sys


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: notify_sink.py SOCKET LOG\n")
        return 2
    path, log = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("\0" + path[1:] if path.startswith("@") else path)
    with open(log + ".ready", "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        data = s.recv(4096)
        with open(log, "a") as f:
            f.write(data.decode("utf-8", "replace").replace("\n", "|") + "\n")


if __name__ == "__main__":
    sys.exit(main())
