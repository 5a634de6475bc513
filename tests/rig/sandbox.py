#!/usr/bin/python3 -IS
"""sandbox -- the rig's guests: new mount/pid/uts/ipc namespaces + chroot.

Every process the rig runs on behalf of a test -- the "Proxmox node" (its sshd
and every login command), each VM's qemu-ga and what it guest-execs, each
`pct exec` -- runs here, so a test command cannot touch the machine running
the rig: its own root directory, /usr bind-mounted read-only, a private /dev
with only null/zero/full/random/urandom/tty, a fresh /proc of its own pid
namespace (it cannot see or signal the machine's processes), its own hostname.
Mounts are made private before anything is mounted, so nothing propagates back.

  sandbox.py node --root R --hostname H [--bind SRC:DST[:ro]]... [--blockdev MAJ:MIN]
                  -- CMD ARG...
      long-lived: pid 1 of the namespace runs CMD (the node's sshd), reaps
      orphans, exits with CMD; SIGTERM ends it all.
  sandbox.py vm --root R --hostname H --state FILE --agent on|off|hung [--bind ...]
      long-lived "VM": pid 1 manages the real qemu-ga on /run/qga/qga.sock.
      SIGUSR1 starts (or resumes) the agent, SIGUSR2 kills it (SIGKILL: a dead
      agent leaves a stale socket), SIGHUP hangs it (SIGSTOP: the socket
      accepts and never answers), SIGWINCH restarts it with guest-exec and
      guest-exec-status blocked (-b: ping works, exec is refused, like a
      RHEL/Rocky 10 agent).  FILE receives "running|stopped|hung|locked".
  attach(...) (used by the pct shim): one command in a fresh sandbox, with
      lxc-attach's exit status rules.
--blockdev gives the guest a block device node /dev/sdb (the rig's loop disk).
shim_binds() lists the binds that replace apt-get, dpkg, systemctl, modprobe,
... with the rig's shims (pkgshim, sysshim) in every guest.

Python standard library only (ctypes for unshare/mount/prctl).
"""

import ctypes
import errno
import os
import signal
import socket
import stat
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1

GUEST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Programs the guests get from the rig instead of the machine's (bind-mounted
# over the machine's file, so every name that leads to it runs the shim).
SHIMS = {"apt-get": "pkgshim", "apt": "pkgshim", "dpkg": "pkgshim",
         "systemctl": "sysshim", "reboot": "sysshim", "modprobe": "sysshim", "insmod": "sysshim"}


def shim_binds(lib):
    """--bind triples (src, dst, ro) putting the rig's shims in a guest."""
    seen = {}
    for name, shim in SHIMS.items():
        for d in ("/usr/bin", "/usr/sbin", "/bin", "/sbin"):
            path = d + "/" + name
            if os.path.exists(path):
                seen.setdefault(os.path.realpath(path), os.path.join(lib, shim))
                break
    return [(src, dst, True) for dst, src in sorted(seen.items())]


def blockdev_of(rig):
    """The rig's disk (major, minor) from <rig>/pve/blockdev, or None."""
    try:
        with open(os.path.join(rig, "pve", "blockdev")) as f:
            major, minor = f.read().split()[0].split(":")
        return int(major), int(minor)
    except (OSError, ValueError, IndexError):
        return None
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))


_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}


def _mount(src, dst, fstype, flags, data=None):
    enc = lambda s: None if s is None else s.encode()
    _check(
        _libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        "mount %s on %s" % (src, dst),
    )


def _pdeathsig(sig):
    _check(_libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0), "prctl")


def unshare_private():
    """New namespaces for the caller; its next child is pid 1 of the pid ns."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC), "unshare")
    # Before any mount: nothing done in here may propagate to the machine.
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError:
        # Inside a chroot (pct exec on the node) "/" is not a mount point;
        # make each visible shared mount private instead.
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                if any(x.startswith("shared:") for x in fields[6:fields.index("-")]):
                    _mount(None, fields[4], None, MS_REC | MS_PRIVATE)


def enter_root(root, hostname, binds=(), blockdev=None, own_usr=False):
    """In the new namespaces (as pid 1): build the view and chroot into root.
    blockdev (major, minor): a block device node /dev/sdb, the guest's disk
    (a loop device of the rig), for tests that must not be able to write it.
    own_usr: the root brings its own /usr (a busybox guest), else the
    machine's is bound in read-only."""
    # The guest's / is a mount point, as on a real host, VM or container:
    # mount(8) --make-rprivate / and the jail's remounts need one.
    _mount(root, root, None, MS_BIND)
    if not own_usr:
        usr = os.path.join(root, "usr")
        _mount("/usr", usr, None, MS_BIND | MS_REC)
        _mount(None, usr, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    dev = os.path.join(root, "dev")
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=1m")
    for n in DEV_NODES:
        p = os.path.join(dev, n)
        open(p, "w").close()
        _mount("/dev/" + n, p, None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(dev, name))
    os.mkdir(os.path.join(dev, "shm"), 0o1777)
    if blockdev:
        os.mknod(os.path.join(dev, "sdb"), 0o660 | stat.S_IFBLK, os.makedev(*blockdev))
    _mount("proc", os.path.join(root, "proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # The machine's cgroup hierarchies, as a host or guest has its own: the
    # jail bounds each request in a cgroup of its own there.
    if os.path.isdir("/sys/fs/cgroup"):
        cg = os.path.join(root, "sys", "fs", "cgroup")
        os.makedirs(cg, exist_ok=True)
        _mount("/sys/fs/cgroup", cg, None, MS_BIND | MS_REC)
    for src, dst, ro in binds:
        inner = os.path.join(root, dst.lstrip("/"))
        if os.path.isdir(src):
            os.makedirs(inner, exist_ok=True)
        elif not os.path.exists(inner):
            open(inner, "w").close()
        _mount(src, inner, None, MS_BIND)
        if ro:
            _mount(None, inner, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    # pivot_root, not chroot: a real host, VM or container has a root that is
    # its mount namespace's root, and the kernel refuses new user namespaces
    # (the jail's) to a chrooted process.
    os.chdir(root)
    _check(_libc.syscall(_SYS_PIVOT_ROOT[os.uname().machine], b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", 2), "umount the old root")  # MNT_DETACH
    os.chdir("/")
    socket.sethostname(hostname)


# A seccomp filter as a container's security profile has it when it forbids
# new namespaces: unshare(2) and setns(2) fail with EPERM, clone(2) with any
# CLONE_NEW* flag too, clone3(2) with ENOSYS (so callers fall back to clone).
_SYS = {"x86_64": (0xC000003E, 272, 308, 56, 435), "aarch64": (0xC00000B7, 97, 268, 220, 435)}
CLONE_NEW_ANY = 0x7E020000  # NEWNS NEWCGROUP NEWUTS NEWIPC NEWUSER NEWPID NEWNET


def deny_namespaces():
    """Installs the filter in this process (inherited by what it execs)."""
    import struct
    arch, nr_unshare, nr_setns, nr_clone, nr_clone3 = _SYS[os.uname().machine]
    ret_allow, ret_eperm, ret_enosys = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, ret_allow),
            (ld, 0, 0, 0),
            (jeq, 0, 1, nr_unshare), (ret, 0, 0, ret_eperm),
            (jeq, 0, 1, nr_setns), (ret, 0, 0, ret_eperm),
            (jeq, 0, 1, nr_clone3), (ret, 0, 0, ret_enosys),
            (jeq, 0, 3, nr_clone), (ld, 0, 0, 16), (jset, 0, 1, CLONE_NEW_ANY),
            (ret, 0, 0, ret_eperm),
            (ret, 0, 0, ret_allow)]
    code = b"".join(struct.pack("HBBI", *i) for i in prog)
    buf = ctypes.create_string_buffer(code)
    fprog = struct.pack("HL", len(prog), ctypes.addressof(buf))
    fbuf = ctypes.create_string_buffer(fprog)
    ul = ctypes.c_ulong
    if (_libc.prctl(38, ul(1), ul(0), ul(0), ul(0)) != 0
            or _libc.prctl(22, ul(2), ul(ctypes.addressof(fbuf)), ul(0), ul(0)) != 0):
        raise OSError(ctypes.get_errno(), "seccomp: " + os.strerror(ctypes.get_errno()))


def _spawn(argv, env, stdio=None, cwd="/", no_namespaces=False):
    """fork+exec with default signal dispositions and an empty signal mask."""
    pid = os.fork()
    if pid == 0:
        try:
            if no_namespaces:
                deny_namespaces()
            for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1,
                      signal.SIGUSR2, signal.SIGCHLD, signal.SIGPIPE, signal.SIGQUIT):
                signal.signal(s, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            if stdio is not None:
                for i, fd in enumerate(stdio):
                    os.dup2(fd, i)
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        except OSError as e:
            code = 127 if e.errno == errno.ENOENT else 126
            os.write(2, ("lxc-attach: %s: attach.c: lxc_attach_run_command: %s - Failed to exec \"%s\"\n"
                         % (socket.gethostname(), os.strerror(e.errno), os.fsdecode(argv[0]))).encode())
            os._exit(code)
        os._exit(127)
    return pid


WATCHED = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP,
           signal.SIGUSR1, signal.SIGUSR2, signal.SIGQUIT, signal.SIGWINCH}


def _block_watched():
    # A handler as well as the block: a pid-namespace init drops signals
    # whose disposition is the default.
    for s in WATCHED:
        signal.signal(s, lambda *_: None)
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)


def _status_code(st):
    """lxc-attach's rule: the exit code, or 128+signal."""
    if os.WIFSIGNALED(st):
        return 128 + os.WTERMSIG(st)
    return os.WEXITSTATUS(st)


def _reap(main_pid):
    """Reaps every exited child; returns main_pid's wait status if it exited."""
    found = None
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == main_pid:
            found = st


def _outer(child):
    """The process outside the pid namespace: waits for pid 1 and relays
    SIGTERM/SIGINT/SIGHUP as SIGKILL (ending pid 1 ends the namespace)."""
    def stop(*_):
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop)
    while True:
        try:
            _, st = os.waitpid(child, 0)
            return _status_code(st)
        except ChildProcessError:
            return 1


def _fork_init():
    """unshare + fork: returns 0 in pid 1 of the new namespace, else the
    child's pid in the outer process."""
    unshare_private()
    pid = os.fork()
    if pid == 0:
        _pdeathsig(signal.SIGKILL)
    return pid


# --------------------------------------------------------------------------
# one command in a fresh sandbox (pct exec)


def attach(root, hostname, argv, env, binds=(), blockdev=None, own_usr=False, no_namespaces=False):
    """Runs argv inside root like lxc-attach; returns the exit status to use.
    no_namespaces: argv runs under deny_namespaces()."""
    sys.stdout.flush()
    sys.stderr.flush()
    child = _fork_init()
    if child:
        return _outer(child)
    code = 1
    try:
        _block_watched()
        enter_root(root, hostname, binds, blockdev, own_usr)
        cmd = _spawn(argv, env, no_namespaces=no_namespaces)
        while True:
            sig = signal.sigwaitinfo(WATCHED).si_signo
            if sig == signal.SIGCHLD:
                st = _reap(cmd)
                if st is not None:
                    code = _status_code(st)
                    break
            else:
                try:
                    os.kill(cmd, sig)
                except ProcessLookupError:
                    pass
    except Exception as e:  # the namespace set-up failed: lxc-attach fails with 1
        sys.stderr.write("lxc-attach: %s: failed to attach: %s\n" % (hostname, e))
        code = 1
    sys.stderr.flush()
    os._exit(code)


# --------------------------------------------------------------------------
# long-lived guests


def _parse(argv):
    opts = {"binds": [], "blockdev": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            opts["cmd"] = argv[i + 1:]
            break
        if a == "--bind":
            parts = argv[i + 1].split(":")
            opts["binds"].append((parts[0], parts[1], len(parts) > 2 and parts[2] == "ro"))
        elif a == "--blockdev":
            opts["blockdev"] = tuple(int(x) for x in argv[i + 1].split(":"))
        else:
            opts[a.lstrip("-")] = argv[i + 1]
        i += 2
    return opts


def _write_state(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(state + "\n")
    os.rename(tmp, path)


def run_node(o):
    child = _fork_init()
    if child:
        return _outer(child)
    _block_watched()
    enter_root(o["root"], o["hostname"], o["binds"], o["blockdev"])
    env = {"PATH": GUEST_PATH, "LANG": "C.UTF-8"}
    main = _spawn(o["cmd"], env)
    while True:
        sig = signal.sigwaitinfo(WATCHED).si_signo
        if sig == signal.SIGCHLD:
            st = _reap(main)
            if st is not None:
                os._exit(_status_code(st))
        elif sig in (signal.SIGTERM, signal.SIGINT):
            os._exit(0)  # pid 1 exits: the kernel kills the whole namespace


class _Agent:
    SOCK = "/run/qga/qga.sock"

    def __init__(self):
        self.pid = 0
        self.stopped = False
        self.locked = False

    def start(self, locked=False):
        if self.pid and self.locked != locked:
            self.kill()
        if self.pid and self.stopped:
            os.kill(self.pid, signal.SIGCONT)
            self.stopped = False
            return
        if self.pid:
            return
        try:
            os.unlink(self.SOCK)
        except FileNotFoundError:
            pass
        os.makedirs("/var/lib/qemu-ga", exist_ok=True)
        argv = ["qemu-ga", "-m", "unix-listen", "-p", self.SOCK, "-t", "/var/lib/qemu-ga"]
        if locked:
            argv += ["-b", "guest-exec,guest-exec-status"]
        self.pid = _spawn(argv, {"PATH": GUEST_PATH})
        self.locked = locked
        # qemu-ga exits 0 when it fails to initialise: trust only a socket
        # that accepts (proxmox.md 9.8).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.SOCK)
                return
            except OSError:
                time.sleep(0.02)
            finally:
                s.close()
        raise RuntimeError("qemu-ga did not come up")

    def kill(self):
        if self.pid:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = 0
            self.stopped = False

    def hang(self):
        self.start()
        os.kill(self.pid, signal.SIGSTOP)
        self.stopped = True


def run_vm(o):
    child = _fork_init()
    if child:
        return _outer(child)
    _block_watched()
    state_fd = os.open(o["state"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

    def state(s):
        os.ftruncate(state_fd, 0)
        os.pwrite(state_fd, (s + "\n").encode(), 0)

    enter_root(o["root"], o["hostname"], o["binds"], o["blockdev"])
    agent = _Agent()
    mode = o.get("agent", "on")
    if mode in ("on", "hung", "locked"):
        agent.start(mode == "locked")
        if mode == "hung":
            agent.hang()
    state({"on": "running", "hung": "hung", "locked": "locked"}.get(mode, "stopped"))
    while True:
        sig = signal.sigwaitinfo(WATCHED).si_signo
        if sig == signal.SIGCHLD:
            if agent.pid and _reap(agent.pid) is not None:
                agent.pid = 0
                state("stopped")
        elif sig == signal.SIGUSR1:
            agent.start()
            state("running")
        elif sig == signal.SIGUSR2:
            agent.kill()
            state("stopped")
        elif sig == signal.SIGHUP:
            agent.hang()
            state("hung")
        elif sig == signal.SIGWINCH:
            agent.start(locked=True)
            state("locked")
        elif sig in (signal.SIGTERM, signal.SIGINT):
            os._exit(0)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("node", "vm"):
        sys.stderr.write(__doc__)
        return 2
    o = _parse(sys.argv[2:])
    if sys.argv[1] == "node":
        return run_node(o)
    return run_vm(o)


if __name__ == "__main__":
    sys.exit(main())
