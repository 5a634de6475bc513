"""pverig -- shared code of the rig's qm/pct shims and rigctl.

Everything here mirrors a Proxmox VE behaviour (docs/transport.md, "The
rig", says which):

  * the state tree under $PVE_SHIM_ROOT/pve, laid out like a PVE node
    (qemu-server/<vmid>.conf, lxc/<ctid>.conf, run/qemu-server/<vmid>.qga, ...);
  * the command log (one line per command actually executed);
  * JSON printed the way Perl's JSON::PP does with pretty+canonical+utf8 (2.3);
  * a QGA client that behaves like PVE's QMPClient (6.1): a fresh connection per
    command, waiting its turn at the agent's one-client socket (a full queue
    is tried again every 100 ms until the timeout), guest-sync-delimited
    first, skip to the 0xFF sentinel;
  * a Getopt::Long look-alike (permute mode, abbreviations, `--`) (2.1).

Python standard library only.
"""

import base64
import json
import os
import re
import socket
import sys
import time

NODE_NAME_FALLBACK = "pverig"


# --------------------------------------------------------------------------
# paths and configuration


# The rig's settings on a node, for the shims whatever their caller's
# environment: airlock runs every command with a fixed environment (PATH,
# HOME, LANG and its tag), so `qm list` inside an agent's command does not
# see what the node's login session was given (sshd's SetEnv).  A real node
# needs no such file: PVE's tools find their state at fixed paths.
SETTINGS_FILE = "/etc/airlock-rig.env"


def setting(name, default=None):
    """name from the environment, else from the node's SETTINGS_FILE."""
    v = os.environ.get(name, "")
    if v:
        return v
    try:
        with open(SETTINGS_FILE) as f:
            for line in f:
                k, sep, val = line.rstrip("\n").partition("=")
                if sep and k == name and val:
                    return val
    except OSError:
        pass
    return default


def rig_root():
    root = setting("PVE_SHIM_ROOT", "")
    if not root:
        sys.stderr.write("PVE_SHIM_ROOT is not set (nor in %s)\n" % SETTINGS_FILE)
        sys.exit(255)
    return root


def node_name():
    try:
        return socket.gethostname() or NODE_NAME_FALLBACK
    except OSError:
        return NODE_NAME_FALLBACK


def pve_path(*parts):
    return os.path.join(rig_root(), "pve", *parts)


def conf_dir(kind, node=None):
    """A node's guest configs, as in /etc/pve/nodes/<node>/{qemu-server,lxc}:
    the cluster file system every node sees.  A guest belongs to the node
    whose directory holds its config; migrating moves the file."""
    d = "qemu-server" if kind == "qemu" else "lxc"
    return pve_path("nodes", node or node_name(), d)


def cluster_nodes():
    """The cluster's members: every node with a directory under nodes/."""
    try:
        return sorted(os.listdir(pve_path("nodes")))
    except FileNotFoundError:
        return []


def guest_ids(kind, node=None):
    d = conf_dir(kind, node)
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return []
    return sorted(int(f[:-5]) for f in names if f.endswith(".conf") and f[:-5].isdigit())


def load_config(kind, vmid, node=None):
    """Returns the config as a dict, or dies like PVE's load_config."""
    d = "qemu-server" if kind == "qemu" else "lxc"
    node = node or node_name()
    path = os.path.join(conf_dir(kind, node), "%s.conf" % vmid)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        die("Configuration file 'nodes/%s/%s/%s.conf' does not exist" % (node, d, vmid))
    conf = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        conf[k.strip()] = v.strip()
    return conf


def is_running(kind, vmid):
    d = "qemu-server" if kind == "qemu" else "lxc"
    return os.path.exists(pve_path("run", d, "%s.running" % vmid))


def qga_socket(vmid):
    return pve_path("run", "qemu-server", "%s.qga" % vmid)


def unix_listener(path, backlog, mode=None):
    """A fresh non-blocking listening unix socket at path (a stale file there
    is replaced), with the given queue length and, when given, file mode."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    if mode is not None:
        os.chmod(path, mode)
    s.listen(backlog)
    s.setblocking(False)
    return s


def require_root():
    """PVE's CLI environment dies for any caller but root."""
    if os.geteuid() != 0:
        die("please run as root")


def die(msg, code=255):
    """Like Perl's die with a trailing newline: message on stderr, exit 255."""
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()
    sys.exit(code)


# --------------------------------------------------------------------------
# command log: one line per command actually executed on the node, in a VM
# or in a CT.  Fields: UTC timestamp, where (node, vm:<id>, ct:<id>,
# shim:<name>), the command.  The command is escaped so that a line is one
# command: backslash as \\, newline \n, tab \t, CR \r (other bytes raw).


def log_escape(data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return (
        data.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\t", b"\\t").replace(b"\r", b"\\r")
    )


def shell_quote(arg):
    """POSIX single-quote form of one argv element (bytes or str) as bytes."""
    if isinstance(arg, str):
        arg = arg.encode("utf-8", "surrogateescape")
    return b"'" + arg.replace(b"'", b"'\\''") + b"'"


def argv_line(argv):
    return b" ".join(shell_quote(a) for a in argv)


def log_command(where, command):
    path = os.path.join(rig_root(), "log", "commands.log")
    t = time.time()
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)
    line = ts.encode() + b"\t" + where.encode() + b"\t" + log_escape(command) + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------
# JSON as Perl's JSON::PP prints it with {pretty=>1, canonical=>1, utf8=>1}:
# 3-space indent, `"key" : value`, keys sorted, trailing newline.  A `bytes`
# value is a Perl byte string: each byte becomes one code point U+0000..U+00FF
# before UTF-8 encoding -- the "double encoding" of out-data (section 0.2).

_ESC = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\b": "\\b"}
_ESC_RE = re.compile('[\x00-\x1f"\\\\]')


def _esc(m):
    c = m.group(0)
    return _ESC.get(c) or "\\u%04x" % ord(c)


def _pp_string(s):
    if isinstance(s, bytes):
        s = s.decode("latin-1")  # one code point per byte: Perl's byte string
    return b'"' + _ESC_RE.sub(_esc, s).encode("utf-8", "surrogateescape") + b'"'


def _pp_value(v, level):
    ind = b"   " * (level + 1)
    end = b"   " * level
    if v is True:
        return b"true"
    if v is False:
        return b"false"
    if v is None:
        return b"null"
    if isinstance(v, int):
        return str(v).encode()
    if isinstance(v, float):
        return repr(v).encode()
    if isinstance(v, (str, bytes)):
        return _pp_string(v)
    if isinstance(v, dict):
        if not v:
            return b"{}"
        items = [ind + _pp_string(k) + b" : " + _pp_value(v[k], level + 1) for k in sorted(v)]
        return b"{\n" + b",\n".join(items) + b"\n" + end + b"}"
    if isinstance(v, (list, tuple)):
        if not v:
            return b"[]"
        items = [ind + _pp_value(x, level + 1) for x in v]
        return b"[\n" + b",\n".join(items) + b"\n" + end + b"]"
    raise TypeError("cannot encode %r" % (v,))


def perl_json(v):
    return _pp_value(v, 0) + b"\n"


def print_agent_result(res):
    """qm.pm's $print_agent_result: nothing for an empty hash, a line for a
    scalar, else pretty JSON."""
    if isinstance(res, dict) and not res:
        return
    if isinstance(res, (str, int)):
        sys.stdout.buffer.write(str(res).encode() + b"\n")
    else:
        sys.stdout.buffer.write(perl_json(res))
    sys.stdout.flush()


# --------------------------------------------------------------------------
# QGA client, PVE style: one connection per command, guest-sync-delimited
# first, discard everything up to the 0xFF sentinel, then read the sync
# reply and the command's reply (section 6.1).


class AgentNotRunning(Exception):
    pass


class AgentTimeout(Exception):
    pass


class AgentError(Exception):
    def __init__(self, err):
        Exception.__init__(self, err.get("desc", "unknown error"))
        self.err = err


def qga_connect(vmid, path, timeout):
    """Connects as QMPClient's open_connection does: the agent's socket serves
    one client at a time and queues one more (QEMU listens with a backlog of
    one); a connect to a full queue fails with EAGAIN and is tried again
    every 100 ms until the timeout.  No lock is taken: the queue is the
    turn-taking."""
    start = time.monotonic()
    count = 0
    while True:
        count += 1
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            s.close()
        except (FileNotFoundError, ConnectionRefusedError) as e:
            s.close()
            raise AgentNotRunning(str(e))
        except OSError:
            s.close()
            raise
        if time.monotonic() - start >= timeout:
            raise AgentNotRunning("unable to connect to VM %s qga socket - timeout after %d retries"
                                  % (vmid, count))
        time.sleep(0.1)


def qga_call(vmid, command, arguments=None, timeout=5.0):
    """Returns the command's reply object ({"return": ...} or {"error": ...}).
    The connect waits its turn (qga_connect), then the answer has its own
    timeout, as in QMPClient."""
    path = qga_socket(vmid)
    s = qga_connect(vmid, path, timeout)
    deadline = time.monotonic() + timeout
    try:
        s.settimeout(timeout)
        sync_id = int("%d0%d" % (os.getpid() % 100000, int(time.monotonic() * 1000) % 100000))
        req = {"execute": "guest-sync-delimited", "arguments": {"id": sync_id}}
        cmd = {"execute": command}
        if arguments is not None:
            cmd["arguments"] = arguments
        # Argument bytes go out as they came (PVE writes Perl byte strings);
        # whether the agent accepts non-UTF-8 is the agent's business.
        wire = json.dumps(req) + "\n" + json.dumps(cmd, ensure_ascii=False) + "\n"
        s.sendall(wire.encode("utf-8", "surrogateescape"))
        data = bytearray()
        replies = []
        synced = False
        while len(replies) < 2:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AgentTimeout(command)
            s.settimeout(left)
            try:
                chunk = s.recv(1 << 20)
            except socket.timeout:
                raise AgentTimeout(command)
            if not chunk:
                raise AgentNotRunning("connection closed")
            data += chunk
            if not synced:
                i = data.find(b"\xff")
                if i < 0:
                    data.clear()
                    continue
                del data[: i + 1]
                synced = True
            while True:
                nl = data.find(b"\n")
                if nl < 0:
                    break
                line = bytes(data[:nl]).strip()
                del data[: nl + 1]
                if not line:
                    continue
                obj = json.loads(line)
                if not replies:
                    if obj.get("return") != sync_id:
                        continue  # a stale reply from someone else's session
                replies.append(obj)
        return replies[1]
    finally:
        s.close()


def ping_timeout():
    return float(setting("PVE_SHIM_PING_TIMEOUT", "3"))


def qga_timeout():
    return float(setting("PVE_SHIM_QGA_TIMEOUT", "5"))


def assert_agent_available(vmid, conf):
    """PVE::QemuServer::Agent::assert_agent_available (section 2.2)."""
    if "agent" not in conf:
        die("No QEMU guest agent configured")
    if not is_running("qemu", vmid):
        die("VM %s is not running" % vmid)
    try:
        qga_call(vmid, "guest-ping", timeout=ping_timeout())
    except (AgentNotRunning, AgentTimeout, OSError, ValueError):
        die("QEMU guest agent is not running")


def agent_cmd(vmid, conf, command, arguments=None):
    """agent_cmd + check_agent_error: returns the 'return' value or dies."""
    assert_agent_available(vmid, conf)
    try:
        reply = qga_call(vmid, command, arguments, timeout=qga_timeout())
    except AgentTimeout:
        die("VM %s qmp command '%s' failed - got timeout" % (vmid, command))
    except (AgentNotRunning, OSError, ValueError) as e:
        die("VM %s qmp command '%s' failed - %s" % (vmid, command, e))
    if "error" in reply:
        die("Agent error: %s" % reply["error"].get("desc", ""))
    return reply.get("return")


def exec_status(vmid, conf, pid):
    """qemu_exec_status: ping, guest-exec-status, base64-decode, 1/0 booleans."""
    ret = agent_cmd(vmid, conf, "guest-exec-status", {"pid": int(pid)})
    res = {}
    for k, v in ret.items():
        if isinstance(v, bool):
            res[k] = 1 if v else 0
        elif k in ("out-data", "err-data"):
            res[k] = base64.b64decode(v)
        else:
            res[k] = v
    return res


# --------------------------------------------------------------------------
# Getopt::Long in permute mode with PVE's option types (section 2.1).


class ParamError(Exception):
    def __init__(self, msg, errors=None):
        Exception.__init__(self, msg)
        self.errors = errors or {}


def parse_boolean(v):
    if v == "":
        return 1
    lv = v.lower()
    if lv in ("1", "on", "yes", "true"):
        return 1
    if lv in ("0", "off", "no", "false"):
        return 0
    return None


def getopt(args, spec):
    """spec: name -> 'bool' | 'int' | 'str'.  Returns (options, positional).  Options
    may appear anywhere before `--`; unique abbreviations are accepted; a bare
    boolean takes the next word as its value unless it starts with '-'."""
    opts = {}
    pos = []
    i = 0
    n = len(args)
    while i < n:
        a = args[i]
        i += 1
        if a == "--":
            pos.extend(args[i:])
            break
        if a.startswith("-") and a != "-":
            body = a[2:] if a.startswith("--") else a[1:]
            val = None
            if "=" in body:
                body, val = body.split("=", 1)
            matches = [k for k in spec if k == body] or [k for k in spec if k.startswith(body)]
            if len(matches) != 1 or body == "":
                sys.stderr.write("Unknown option: %s\n" % body)
                raise ParamError("unable to parse option")
            name = matches[0]
            if spec[name] == "bool":
                if val is None:
                    if i < n and not args[i].startswith("-"):
                        val = args[i]
                        i += 1
                    else:
                        val = ""
                b = parse_boolean(val)
                if b is None:
                    raise ParamError(
                        "Parameter verification failed.",
                        {name: "type check ('boolean') failed - got '%s'" % val},
                    )
                opts[name] = b
            else:
                if val is None:
                    if i >= n:
                        sys.stderr.write("Option %s requires an argument\n" % name)
                        raise ParamError("unable to parse option")
                    val = args[i]
                    i += 1
                if spec[name] == "str":
                    opts[name] = val
                    continue
                try:
                    iv = int(val, 10)
                except ValueError:
                    raise ParamError(
                        "Parameter verification failed.",
                        {name: "type check ('integer') failed - got '%s'" % val},
                    )
                opts[name] = iv
            continue
        pos.append(a)
    return opts, pos


def param_fail(e, usage):
    """Prints a PVE CLI parameter error (400) and exits 255."""
    out = "400 %s\n" % e
    for k in sorted(e.errors):
        out += "%s: %s\n" % (k, e.errors[k])
    out += usage + "\n"
    sys.stderr.write(out)
    sys.exit(255)


def check_vmid(v, usage):
    try:
        iv = int(v, 10)
    except ValueError:
        iv = -1
    if iv < 100 or iv > 999999999 or str(iv) != v:
        param_fail(
            ParamError("Parameter verification failed.", {"vmid": "invalid format - value does not look like a valid VM ID"}),
            usage,
        )
    return iv
