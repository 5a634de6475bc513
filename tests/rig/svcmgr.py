#!/usr/bin/python3 -IS
"""svcmgr -- the privileged daemons of the rig's node, VMs and containers.

A real host changes itself not only by writing files: a process asks a
privileged daemon, and the daemon decides by who is asking.  The rig has no
systemd and must never load modules into the machine's kernel, so this one
process plays, for every guest root given on the command line:

  * systemd (PID 1): <root>/run/systemd/private, mode 0600, like systemd's
    private socket: any peer with uid 0 may start, stop, enable or disable a
    unit -- capabilities do not matter, only the uid, as in systemd;
  * the D-Bus system bus: <root>/run/dbus/system_bus_socket, mode 0666:
    status for anyone; start/stop/enable/disable only for uid 0 (polkit
    refuses an unprivileged caller without an agent: "Access denied");
  * the kernel's module loader: <root>/.rig-kernel.sock: load <module> is
    granted only if the caller's effective capabilities hold CAP_SYS_MODULE
    (read from /proc/<peer pid>/status, as the kernel checks the capability).

Every granted change is recorded where the guest cannot reach it:
<state>/<where>/units (one "<unit> <state>" line per change) and
<state>/<where>/modules, and logged in the command log as svc:<where>.

  svcmgr.py STATE_DIR LOG WHERE=ROOT [WHERE=ROOT...]

Protocol: one line "<verb> <name>\\n" per connection; the reply is
"<exit code> <message>\\n".  Python standard library only.
"""

import os
import selectors
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import pverig as P  # noqa: E402

CAP_SYS_MODULE = 16
VERBS = ("start", "stop", "restart", "enable", "disable", "mask", "status", "is-active", "load")


def log(logfile, where, text):
    t = time.time()
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)
    line = "%s\tsvc:%s\t%s\n" % (ts, where, text.replace("\\", "\\\\").replace("\n", "\\n"))
    fd = os.open(logfile, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def peer(conn):
    data = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", data)  # pid, uid, gid


def cap_eff(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def listen(path, mode):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return P.unix_listener(path, 16, mode)


def record(state, where, what, line):
    d = os.path.join(state, where)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, what), "a") as f:
        f.write(line + "\n")


def answer(kind, state, logfile, where, conn):
    conn.settimeout(5)
    pid, uid, _ = peer(conn)
    req = b""
    while not req.endswith(b"\n") and len(req) < 512:
        chunk = conn.recv(512)
        if not chunk:
            break
        req += chunk
    words = req.decode("utf-8", "replace").split()
    if len(words) != 2 or words[0] not in VERBS:
        return "2 Unknown command verb"
    verb, name = words
    if kind == "kernel":
        if verb != "load":
            return "2 unknown request"
        if not cap_eff(pid) & (1 << CAP_SYS_MODULE):
            return "1 could not insert '%s': Operation not permitted" % name
        record(state, where, "modules", name)
        log(logfile, where, "load %s (uid %d)" % (name, uid))
        return "0 "
    if verb in ("status", "is-active"):
        return "0 active"
    if kind == "bus" and uid != 0:
        # polkit: no agent, no authorisation for an unprivileged caller.
        return "4 Access denied"
    unit = name if "." in name else name + ".service"
    record(state, where, "units", "%s %s" % (unit, verb))
    log(logfile, where, "%s %s (uid %d)" % (verb, unit, uid))
    return "0 "


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    state, logfile = argv[0], argv[1]
    sel = selectors.DefaultSelector()
    for spec in argv[2:]:
        where, root = spec.split("=", 1)
        for kind, path, mode in (("systemd", "run/systemd/private", 0o600),
                                 ("bus", "run/dbus/system_bus_socket", 0o666),
                                 ("kernel", ".rig-kernel.sock", 0o666)):
            s = listen(os.path.join(root, path), mode)
            sel.register(s, selectors.EVENT_READ, (kind, where))
    while True:
        for key, _ in sel.select():
            kind, where = key.data
            try:
                conn, _ = key.fileobj.accept()
            except BlockingIOError:
                continue
            with conn:
                try:
                    reply = answer(kind, state, logfile, where, conn)
                    conn.sendall((reply + "\n").encode())
                except OSError:
                    pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
