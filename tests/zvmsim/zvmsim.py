#!/usr/bin/env python3
"""zvmsim -- a Zerto ZVM Appliance (10.x) simulator for airlock's tests.

Speaks the part of the ZVM REST API airlock uses over HTTPS: a Keycloak token
endpoint, /v1 VMs, VPGs, checkpoints, tasks, peer sites and server time, with
PascalCase wire names, lowercase link objects and POSTs that answer with a
quoted task-id string.  Journal time runs on a virtual clock
(virtual = start + elapsed_real * scale + advanced) so a 630 s checkpoint
cadence can run in seconds; every timestamp the API returns comes from that one
clock.  Token lifetimes and HTTP latency stay in real time.

The control plane lives under /_sim/ (never under /v1): fixture, clock, faults,
the request log, and what the simulator knows about every tagged checkpoint
(when it became listed, in virtual and in real time).

Python 3 standard library only.  Started and stopped by tests/zvmsim/zvmsimctl.
"""

import argparse
import base64
import copy
import hashlib
import json
import os
import random
import re
import secrets
import signal
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from zvmsim_ops import OpsMixin, RawBody

TOKEN_PATH = "/auth/realms/zerto/protocol/openid-connect/token"

VPG_STATUSES = ["Initializing", "MeetingSLA", "NotMeetingSLA", "HistoryNotMeetingSLA",
                "RpoNotMeetingSLA", "FailingOver", "Moving", "Deleting", "Recovered"]
VPG_SUBSTATUSES = [
    "None", "InitialSync", "Creating", "VolumeInitialSync", "Sync", "RecoveryPossible",
    "DeltaSync", "NeedsConfiguration", "Error", "EmptyProtectionGroup",
    "DisconnectedFromPeerNoRecoveryPoints", "FullSync", "VolumeDeltaSync", "VolumeFullSync",
    "FailingOverCommitting", "FailingOverBeforeCommit", "FailingOverRollingBack", "Promoting",
    "MovingCommitting", "MovingBeforeCommit", "MovingRollingBack", "Deleting", "PendingRemove",
    "BitmapSync", "DisconnectedFromPeer", "ReplicationPausedUserInitiated",
    "ReplicationPausedSystemInitiated", "RecoveryStorageProfileError", "Backup", "RollingBack",
    "RecoveryStorageError", "JournalStorageError", "VmNotProtectedError"]
ENTITY_TYPES = ["VCVpg", "VCvApp", "VCDvApp", "AWS", "HyperV", "Azure"]
TASK_TYPES = ["InsertTaggedCP", "FailOverTest", "StopFailOverTest", "Clone", "FlrJournalMount",
              "FlrJournalUnmount"]
TASK_STATE_NAMES = ["FirstUnusedValue", "InProgress", "WaitingForUserInput", "Paused", "Failed",
                    "Stopped", "Completed", "Cancelling"]

# Substatuses during which no new checkpoints are written (syncs, pauses).
NO_CHECKPOINT_SUBSTATUS = {1, 2, 3, 4, 6, 11, 12, 13, 23, 25, 26}
RESYNC_SUBSTATUS = {1, 3, 11, 13}    # these purge the journal when entered

# Per protected-platform defaults: checkpoint cadence and insert -> listed delay
# (as measured on real appliances), in virtual seconds.
PLATFORMS = {
    "vsphere": {"cadence_s": 5.0, "visibility_s": 4.0, "entity": 0},
    "azure": {"cadence_s": 60.0, "visibility_s": 35.0, "entity": 5},
    "aws": {"cadence_s": 630.0, "visibility_s": 128.0, "entity": 3},
}

LOCAL_SITE_ID = "3e4cdd0d-1064-4022-921f-6265ad6d335a"


def det_guid(*parts):
    """A stable GUID from a name, so fixtures have the same ids every run."""
    h = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return str(uuid.UUID(h[:32]))


def fmt_time(t):
    dt = datetime.fromtimestamp(t, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def parse_time(s):
    """ISO-8601 (optional fraction, Z or offset or none = UTC) or epoch milliseconds."""
    s = s.strip()
    if re.fullmatch(r"\d{10,}", s):
        return int(s) / 1000.0
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?)?"
                     r"(Z|[+-]\d\d:?\d\d)?", s)
    if not m:
        raise ValueError("bad date-time %r" % s)
    y, mo, d, hh, mi, ss, frac, tz = m.groups()
    dt = datetime(int(y), int(mo), int(d), int(hh or 0), int(mi or 0), int(ss or 0),
                  tzinfo=timezone.utc)
    t = dt.timestamp()
    if frac:
        t += float("0." + frac)
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        t -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return t


def link(kind, ident, href):
    return {"href": href, "identifier": ident, "rel": None, "type": kind}


# The estate of the lead's example inventory.  Cadence and visibility default
# from the platform; any VPG key may override them.
DEFAULT_FIXTURE = {
    "local_site": {"name": "Site-A", "type": "VCenter", "version": "10.9.10"},
    "peer_sites": [
        {"name": "Site-B", "type": "VCenter", "platform": "vsphere"},
        {"name": "Azure-East", "type": "Azure", "platform": "azure"},
        {"name": "AWS-Ohio", "type": "AWS", "platform": "aws"},
    ],
    "vpgs": [
        {"name": "zimaos-local", "platform": "vsphere", "recovery": "Site-A"},
        {"name": "web-local", "platform": "vsphere", "recovery": "Site-A"},
        {"name": "web-azure", "platform": "azure", "recovery": "Azure-East"},
        {"name": "web-aws", "platform": "aws", "recovery": "AWS-Ohio"},
        {"name": "CMH-AWS-1", "platform": "aws", "recovery": "AWS-Ohio"},
        {"name": "dup-a", "platform": "vsphere", "recovery": "Site-B"},
        {"name": "dup-b", "platform": "vsphere", "recovery": "Site-B"},
        {"name": "sync01-vpg", "platform": "vsphere", "recovery": "Site-B",
         "status": 0, "substatus": 1},
        {"name": "bench-vsphere", "platform": "vsphere", "recovery": "Site-B"},
        {"name": "bench-azure", "platform": "azure", "recovery": "Azure-East"},
        {"name": "bench-aws", "platform": "aws", "recovery": "AWS-Ohio"},
        {"name": "cloud01-azure", "platform": "vsphere", "recovery": "Azure-East"},
    ],
    # VMs: name -> the VPGs that protect them.  "key" makes two same-named VMs
    # distinct.  db01 is in the inventory but unprotected: Zerto never lists it.
    "vms": [
        {"name": "zimaos", "vpgs": ["zimaos-local"]},
        {"name": "web01", "vpgs": ["web-local", "web-azure", "web-aws"]},
        {"name": "win2019-1", "vpgs": ["CMH-AWS-1"], "os": "windows"},
        {"name": "dup", "key": "dup-1", "vpgs": ["dup-a"]},
        {"name": "dup", "key": "dup-2", "vpgs": ["dup-b"]},
        {"name": "sync01", "vpgs": ["sync01-vpg"]},
        {"name": "bench-vs", "vpgs": ["bench-vsphere"]},
        {"name": "bench-az", "vpgs": ["bench-azure"]},
        {"name": "bench-aw", "vpgs": ["bench-aws"]},
        # Replicated only to a cloud site: file-level restore must happen there.
        {"name": "cloud01", "vpgs": ["cloud01-azure"]},
    ],
}


def mangle(body, f):
    """Fault "mangle": drop a field everywhere ("drop"), or send every key
    camelCase ("case": "camel") as the published schema spells them."""
    if isinstance(body, list):
        return [mangle(b, f) for b in body]
    if not isinstance(body, dict):
        return body
    out = {}
    for k, v in body.items():
        if f.get("drop") and k.lower() == f["drop"].lower():
            continue
        if f.get("case") == "camel":
            k = k[:1].lower() + k[1:]
        out[k] = mangle(v, f)
    return out


class SimError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class Clock:
    """virtual = v0 + (monotonic - m0) * scale; rebased whenever scale changes."""

    def __init__(self, scale):
        self.m0 = time.monotonic()
        self.r0 = time.time()
        self.v0 = self.r0
        self.scale = scale

    def now(self):
        return self.v0 + (time.monotonic() - self.m0) * self.scale

    def set_scale(self, scale):
        v = self.now()
        self.m0 = time.monotonic()
        self.r0 = time.time()
        self.v0 = v
        self.scale = scale

    def advance(self, seconds):
        self.v0 += seconds

    def real_of(self, v):
        """Wall-clock (epoch) time at which virtual time v is (or was) reached."""
        return self.r0 + (v - self.v0) / self.scale


class Sim:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.args = args
        self.rng = random.Random(args.seed)
        self.clock = Clock(args.scale)
        self.token_lifetime = args.token_lifetime
        self.busy_until = "task"          # or "visible": a VPG busy until the tag is listed
        self.task_s = 1.5                 # virtual seconds an insert task runs
        self.client_id = args.client_id
        self.client_secret = args.client_secret
        self.username = args.username
        self.password = args.password
        self.public_client = "zerto-client"
        self.legacy = args.legacy          # Windows ZVM: x-zerto-session, no Keycloak
        self.flr_object = False            # GET /v1/flrs/{id}: array (SW) or object (DOC7)
        self.sessions = {}
        self.tokens = {}                  # access token -> {expires (mono), scope}
        self.refresh_tokens = {}
        self.faults = []
        self.requests = []
        self.seq = 0
        self.load_fixture(DEFAULT_FIXTURE)

    # ---- fixture -------------------------------------------------------

    def load_fixture(self, fx):
        ls = fx.get("local_site", {})
        self.local_site = {"id": LOCAL_SITE_ID, "name": ls.get("name", "Site-A"),
                           "type": ls.get("type", "VCenter"),
                           "version": ls.get("version", "10.9.10")}
        self.sites = {self.local_site["name"]: {"id": LOCAL_SITE_ID, "type": self.local_site["type"],
                                                "local": True}}
        for p in fx.get("peer_sites", []):
            self.sites[p["name"]] = {"id": det_guid("site", p["name"]), "type": p["type"],
                                     "local": False}
        self.vpgs = {}
        now = self.clock.now()
        for v in fx.get("vpgs", []):
            plat = PLATFORMS[v.get("platform", "vsphere")]
            vid = det_guid("vpg", v["name"])
            vpg = {
                "id": vid, "name": v["name"], "platform": v.get("platform", "vsphere"),
                "entity": plat["entity"],
                "cadence_s": float(v.get("cadence_s", plat["cadence_s"])),
                "visibility_s": float(v.get("visibility_s", plat["visibility_s"])),
                "status": int(v.get("status", 1)), "substatus": int(v.get("substatus", 0)),
                "recovery": v.get("recovery", self.local_site["name"]),
                "tag_support": v.get("tag_support", "ok"),
                "checkpoints": [], "next_cp_id": 1000 + self.rng.randint(0, 8000),
                "sync_until": None, "on_insert": None, "test": None, "clone": None,
            }
            # History so the client can measure the cadence: at least 12 gaps.
            span = max(7200.0, 12 * vpg["cadence_s"])
            if vpg["substatus"] not in RESYNC_SUBSTATUS:
                t = now - span
                while t <= now:
                    self._auto_cp(vpg, t)
                    t += self._gap(vpg)
            vpg["next_auto"] = now + self._gap(vpg)
            self.vpgs[vid] = vpg
        self.vms = []
        for m in fx.get("vms", []):
            key = m.get("key", m["name"])
            vmid = "%s.vm-%d" % (det_guid("vcenter", self.local_site["name"]),
                                 100 + int(hashlib.sha1(key.encode()).hexdigest()[:4], 16) % 900)
            self.vms.append({"id": vmid, "name": m["name"], "os": m.get("os", "linux"),
                             "partitions": int(m.get("partitions", 1)),
                             "vpgs": [det_guid("vpg", n) for n in m["vpgs"]]})
        self.tasks = {}
        self.tagged = []
        self.flrs = {}
        self.downloads = {}
        self.flr_files = {}               # vm name -> guest path -> [(virtual time, content)]

    def _gap(self, vpg):
        return vpg["cadence_s"] * (1.0 + self.rng.uniform(-0.02, 0.02))

    def _auto_cp(self, vpg, t):
        vpg["checkpoints"].append({"id": str(vpg["next_cp_id"]), "ts": t, "tag": None,
                                   "type": 0, "visible": t})
        vpg["next_cp_id"] += 1

    def vpg_by_ref(self, ref):
        """A VPG by identifier or by name (control plane only)."""
        for v in self.vpgs.values():
            if v["id"].lower() == ref.lower() or v["name"].lower() == ref.lower():
                return v
        raise SimError(404, "VPG %s was not found" % ref)

    # ---- the virtual journal -------------------------------------------

    def tick(self):
        """Brings every VPG's journal and every task up to the virtual now."""
        now = self.clock.now()
        for vpg in self.vpgs.values():
            if vpg["sync_until"] is not None and now >= vpg["sync_until"]:
                vpg["substatus"] = 0
                vpg["sync_until"] = None
                vpg["next_auto"] = max(vpg["next_auto"], now)
            while vpg["next_auto"] <= now:
                if self.protecting(vpg) and vpg["substatus"] not in NO_CHECKPOINT_SUBSTATUS:
                    self._auto_cp(vpg, vpg["next_auto"])
                vpg["next_auto"] += self._gap(vpg)
            horizon = now - 1440 * 60
            while vpg["checkpoints"] and vpg["checkpoints"][0]["ts"] < horizon:
                vpg["checkpoints"].pop(0)
            vpg["checkpoints"].sort(key=lambda c: (c["ts"], int(c["id"])))
        for task in self.tasks.values():
            self._advance_task(task, now)

    @staticmethod
    def protecting(vpg):
        return vpg["status"] in (1, 2, 3, 4)

    def _advance_task(self, task, now):
        if task["state"] in (4, 5, 6):
            return
        if task.get("stuck") is not None:
            task["state"] = task["stuck"]
            return
        done = task["started"] + task["duration"]
        if now < done:
            task["progress"] = int(100 * (now - task["started"]) / task["duration"])
            return
        task["state"] = task["final_state"]
        task["progress"] = 100 if task["final_state"] == 6 else task["progress"]
        task["completed"] = done
        if task.get("on_done"):
            task["on_done"](task, task["final_state"] == 6)
        if task["final_state"] == 6 and task.get("cp"):
            vpg = self.vpgs[task["vpg"]]
            cp = task["cp"]
            cp["ts"] = done
            cp["visible"] = None if cp.get("never") else task["started"] + vpg["visibility_s"]
            vpg["checkpoints"].append(cp)
            vpg["checkpoints"].sort(key=lambda c: (c["ts"], int(c["id"])))
            rec = task["tag_record"]
            rec["checkpoint"] = cp["id"]
            rec["timestamp"] = fmt_time(cp["ts"])
            if cp["visible"] is not None:
                rec["visible_virtual"] = fmt_time(cp["visible"])
                rec["visible_real_unix"] = self.clock.real_of(cp["visible"])

    def enter_sync(self, vpg, substatus, duration_s):
        vpg["substatus"] = substatus
        if substatus in RESYNC_SUBSTATUS:
            vpg["checkpoints"] = []   # a resync deletes the journal's checkpoints
        vpg["sync_until"] = self.clock.now() + duration_s if duration_s else None

    # ---- faults --------------------------------------------------------

    def take_fault(self, kind, method=None, path=None, vpg=None):
        """The first matching active fault (its count consumed), or None."""
        for f in self.faults:
            if f["kind"] != kind:
                continue
            if vpg is not None and f.get("vpg") and self.vpg_by_ref(f["vpg"])["id"] != vpg:
                continue
            if vpg is None and f.get("vpg"):
                continue
            if path is not None and f.get("path") and f["path"].lower() not in path.lower():
                continue
            if method is not None and f.get("method") and f["method"].upper() != method:
                continue
            if "count" in f:
                if f["count"] <= 0:
                    continue
                f["count"] -= 1
            return f
        return None

    # ---- tokens --------------------------------------------------------

    def issue_token(self, scope, with_refresh):
        tok = "eyJ" + secrets.token_urlsafe(24) + "." + secrets.token_urlsafe(48)
        self.tokens[tok] = {"expires": time.monotonic() + self.token_lifetime, "scope": scope}
        body = {"access_token": tok, "expires_in": int(self.token_lifetime),
                "refresh_expires_in": 0, "token_type": "Bearer", "not-before-policy": 0,
                "session_state": str(uuid.uuid4()), "scope": "openid profile email"
                if "openid" in scope else "profile email"}
        if with_refresh:
            rt = "eyJr" + secrets.token_urlsafe(32)
            self.refresh_tokens[rt] = time.monotonic() + 1800
            body["refresh_token"] = rt
            body["refresh_expires_in"] = 1800
        return body

    def check_bearer(self, header):
        if not header or not header.lower().startswith("bearer "):
            return False
        tok = self.tokens.get(header[7:].strip())
        if tok is None or tok["expires"] <= time.monotonic():
            return False
        if self.take_fault("require_openid_scope") and "openid" not in tok["scope"]:
            return False
        return True


class Handler(OpsMixin, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "zvmsim/1"
    # Headers and body go out in two writes; without TCP_NODELAY every answer
    # on a kept-alive connection waits ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True

    fmt_time = staticmethod(fmt_time)
    parse_time = staticmethod(parse_time)

    @staticmethod
    def sim_error(status, message):
        return SimError(status, message)

    def log_message(self, fmt, *args):
        if self.server.sim.args.verbose:
            sys.stderr.write("zvmsim: " + (fmt % args) + "\n")

    # ---- plumbing ------------------------------------------------------

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def dispatch(self, method):
        sim = self.server.sim
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        query = {k.lower(): v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        status, body, extra = 500, {"Message": "internal"}, {}
        delay = 0.0
        try:
            if path.lower().startswith("/_sim/"):
                status, body = self.control(method, path.lower(), raw)
            else:
                with sim.lock:
                    f = sim.take_fault("latency_ms", method, path)
                    if f:
                        delay = f["ms"] / 1000.0
                    f = sim.take_fault("http_status", method, path)
                    if f:
                        raise SimError(f["status"], f.get("message", "Simulated failure"))
                    sim.tick()
                    status, body, extra = self.api(method, path, query, raw)
                    f = sim.take_fault("mangle", method, path)
                    if f and 200 <= status < 300:
                        body = mangle(body, f)
        except SimError as e:
            status, body = e.status, ({"Message": e.message} if e.message is not None else None)
            extra = {}
        except Exception as e:  # a simulator bug must be visible, not a hang
            status, body = 500, {"Message": "zvmsim internal error: %r" % (e,)}
            extra = {}
        if delay:
            time.sleep(delay)
        if not path.lower().startswith("/_sim/"):
            self.record(method, path, url.query, raw, status)
        self.reply(status, body, extra)

    def reply(self, status, body, extra):
        if body is None:
            data = b""
        elif isinstance(body, RawBody):
            data = body.data
        else:
            data = json.dumps(body).encode()
        self.send_response(status)
        if isinstance(body, RawBody):
            self.send_header("Content-Type", body.ctype)
        elif body is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, method, path, query, raw, status):
        sim = self.server.sim
        auth = self.headers.get("Authorization") or ""
        if path.lower() == TOKEN_PATH:
            form = urllib.parse.parse_qs(raw.decode(errors="replace"))
            for secret in ("client_secret", "password", "refresh_token"):
                if secret in form:
                    form[secret] = ["<redacted>"]
            body = {k: v[-1] for k, v in form.items()}
        else:
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
        with sim.lock:
            sim.seq += 1
            sim.requests.append({
                "seq": sim.seq, "real_unix": time.time(), "virtual": fmt_time(sim.clock.now()),
                "method": method, "path": path, "query": query, "body": body,
                "status": status,
                "auth": ("bearer:" + hashlib.sha1(auth[7:].encode()).hexdigest()[:10])
                if auth.lower().startswith("bearer ") else None,
            })
            if len(sim.requests) > 200000:
                del sim.requests[:100000]

    def body_json(self, raw):
        try:
            obj = json.loads(raw) if raw else {}
        except ValueError:
            raise SimError(400, "The request is invalid: body is not JSON")
        if isinstance(obj, dict):
            return {k.lower(): v for k, v in obj.items()}
        return obj

    # ---- control plane -------------------------------------------------

    def control(self, method, path, raw):
        sim = self.server.sim
        body = self.body_json(raw) if method == "POST" else {}
        with sim.lock:
            if path == "/_sim/requests" and method == "GET":
                return 200, sim.requests
            if path == "/_sim/requests" and method == "DELETE":
                sim.requests = []
                return 200, {"ok": True}
            if path == "/_sim/tags" and method == "GET":
                sim.tick()
                return 200, sim.tagged
            if path == "/_sim/state" and method == "GET":
                sim.tick()
                return 200, {
                    "scale": sim.clock.scale, "virtual_now": fmt_time(sim.clock.now()),
                    "real_unix": time.time(), "token_lifetime_s": sim.token_lifetime,
                    "busy_until": sim.busy_until, "faults": sim.faults,
                    "vpgs": [{"VpgIdentifier": v["id"], "VpgName": v["name"],
                              "Status": v["status"], "SubStatus": v["substatus"],
                              "cadence_s": v["cadence_s"], "visibility_s": v["visibility_s"],
                              "checkpoints": len(v["checkpoints"]),
                              "process": v.get("process"), "test": v.get("test") is not None,
                              "clone": bool(v.get("clone"))} for v in sim.vpgs.values()],
                    "flrs": [{"id": f["id"], "vm": f["vm_name"], "vpg": f["vpg"], "cp": f["cp"],
                              "status": f["status"]} for f in sim.flrs.values()],
                }
            if method != "POST":
                raise SimError(404, "No such control endpoint")
            if path == "/_sim/fixture":
                sim.load_fixture(body.get("fixture", body) if body else DEFAULT_FIXTURE)
                return 200, {"ok": True}
            if path == "/_sim/reset":
                sim.faults = []
                sim.tokens = {}
                sim.busy_until = "task"
                sim.token_lifetime = sim.args.token_lifetime
                sim.flr_object = False
                sim.sessions = {}
                sim.load_fixture(DEFAULT_FIXTURE)
                return 200, {"ok": True}
            if path == "/_sim/clock":
                if "scale" in body:
                    sim.clock.set_scale(float(body["scale"]))
                if "advance_s" in body:
                    sim.clock.advance(float(body["advance_s"]))
                sim.tick()
                return 200, {"virtual_now": fmt_time(sim.clock.now()), "scale": sim.clock.scale}
            if path == "/_sim/config":
                if "token_lifetime_s" in body:
                    sim.token_lifetime = float(body["token_lifetime_s"])
                if "busy_until" in body:
                    sim.busy_until = body["busy_until"]
                if "task_s" in body:
                    sim.task_s = float(body["task_s"])
                if "flr_object" in body:
                    sim.flr_object = bool(body["flr_object"])
                for ref, kv in (body.get("vpgs") or {}).items():
                    vpg = sim.vpg_by_ref(ref)
                    for k in ("cadence_s", "visibility_s"):
                        if k in kv:
                            vpg[k] = float(kv[k])
                    for k in ("status", "substatus"):
                        if k in kv:
                            vpg[k] = int(kv[k])
                    if "tag_support" in kv:
                        vpg["tag_support"] = kv["tag_support"]
                    if "process" in kv:   # live_failover | ejc | None: FLR refuses meanwhile
                        if kv["process"] not in (None, "live_failover", "ejc"):
                            raise SimError(400, "process is live_failover, ejc or null")
                        vpg["process"] = kv["process"]
                return 200, {"ok": True}
            if path == "/_sim/fault":
                return 200, self.add_fault(body)
            if path == "/_sim/flr_file":
                # A guest file as FLR will show it at checkpoints taken from now
                # on: exact bytes (data_b64), a size only (synthetic bytes), or
                # deleted ("delete": true).
                if not any(m["name"] == body.get("vm") for m in sim.vms):
                    raise SimError(404, "VM %s was not found" % body.get("vm"))
                gpath = body.get("path")
                if not isinstance(gpath, str) or not gpath:
                    raise SimError(400, "path is required")
                if body.get("delete"):
                    content = None
                elif "data_b64" in body:
                    content = base64.b64decode(body["data_b64"], validate=True)
                elif "size" in body:
                    content = int(body["size"])
                else:
                    raise SimError(400, "data_b64, size or delete is required")
                sim.flr_files.setdefault(body["vm"], {}).setdefault(gpath, []).append(
                    (sim.clock.now(), content))
                return 200, {"ok": True, "virtual_now": fmt_time(sim.clock.now())}
        raise SimError(404, "No such control endpoint")

    def add_fault(self, f):
        sim = self.server.sim
        kind = f.get("kind")
        if kind == "clear":
            sim.faults = []
            return {"ok": True}
        if kind == "revoke_tokens":
            sim.tokens = {}
            sim.refresh_tokens = {}
            return {"ok": True}
        if kind in ("resync", "bitmap_sync", "pause", "initial_sync"):
            vpg = sim.vpg_by_ref(f["vpg"])
            sub = {"resync": 11, "bitmap_sync": 23, "pause": 25, "initial_sync": 1}[kind]
            if f.get("on_insert"):
                vpg["on_insert"] = (sub, float(f.get("duration_s", 0)))
            else:
                sim.enter_sync(vpg, sub, float(f.get("duration_s", 0)))
            return {"ok": True}
        if kind not in ("http_status", "latency_ms", "task_stuck_state", "insert_task_fails",
                        "insert_http_400", "tag_never_listed", "require_openid_scope",
                        "unlicensed", "mangle", "flr_mount_fails", "flr_unmount_fails",
                        "flr_role_403"):
            raise SimError(400, "unknown fault kind %r" % kind)
        if f.get("vpg"):
            sim.vpg_by_ref(f["vpg"])
        if kind == "task_stuck_state" and int(f.get("state", 1)) not in (0, 1, 2, 3, 7):
            raise SimError(400, "a stuck task must be in a non-terminal state (0,1,2,3,7)")
        if kind == "insert_task_fails" and int(f.get("state", 4)) not in (4, 5):
            raise SimError(400, "a failed insert task ends in 4 (Failed) or 5 (Stopped)")
        sim.faults.append(dict(f))
        return {"ok": True}

    # ---- the appliance -------------------------------------------------

    def api(self, method, path, query, raw):
        sim = self.server.sim
        lpath = path.lower().rstrip("/")
        if sim.legacy:
            if lpath == TOKEN_PATH:
                raise SimError(404, "No HTTP resource was found")
            answer = self.legacy_login(method, lpath, raw)
            if answer is not None:
                return answer
        elif lpath == TOKEN_PATH:
            if method != "POST":
                raise SimError(405, "Method not allowed")
            return self.token(raw)
        elif lpath == "/v1/session/add":
            raise SimError(404, "No HTTP resource was found that matches the request URI")
        if not lpath.startswith("/v1/"):
            raise SimError(404, "No HTTP resource was found")
        if sim.legacy and not self.legacy_session_ok():
            return 401, {"Message": "Authorization has been denied for this request."}, {}
        if not sim.legacy and not sim.check_bearer(self.headers.get("Authorization")):
            return 401, None, {"WWW-Authenticate": 'Bearer error="invalid_token"'}
        if sim.take_fault("unlicensed"):
            raise SimError(400, "Valid License is not provided ")
        seg = path.strip("/").split("/")[1:]
        lseg = [s.lower() for s in seg]
        handled, body = self.ops_route(method, lseg, seg, query, raw)
        if handled:
            return 200, body, {}
        if method == "GET":
            return 200, self.api_get(lseg, seg, query), {}
        if method == "POST" and len(lseg) == 3 and lseg[0] == "vpgs" and lseg[2] == "checkpoints":
            return 200, self.insert(seg[1], raw), {}
        raise SimError(404, "No HTTP resource was found")

    def token(self, raw):
        sim = self.server.sim
        form = {k.lower(): v[-1] for k, v in
                urllib.parse.parse_qs(raw.decode(errors="replace")).items()}
        grant = form.get("grant_type", "")
        scope = form.get("scope", "")
        if grant == "client_credentials":
            if form.get("client_id") != sim.client_id or \
                    form.get("client_secret") != sim.client_secret:
                return 401, {"error": "unauthorized_client", "error_description":
                             "Invalid client or Invalid client credentials"}, {}
            return 200, sim.issue_token(scope, False), {}
        if grant == "password":
            if form.get("client_id") not in (sim.public_client, sim.client_id):
                return 401, {"error": "invalid_client",
                             "error_description": "Invalid client credentials"}, {}
            if form.get("username") != sim.username or form.get("password") != sim.password:
                return 401, {"error": "invalid_grant",
                             "error_description": "Invalid user credentials"}, {}
            return 200, sim.issue_token(scope, True), {}
        if grant == "refresh_token":
            exp = sim.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if exp is None or exp <= time.monotonic():
                return 400, {"error": "invalid_grant", "error_description": "Token is not active"}, {}
            return 200, sim.issue_token(scope, True), {}
        return 400, {"error": "unsupported_grant_type",
                     "error_description": "Unsupported grant_type"}, {}

    def site_link(self, name):
        sim = self.server.sim
        s = sim.sites[name]
        if s["local"]:
            return link("LocalSiteApi", s["id"], self.href("/v1/localsite"))
        return link("PeerSiteApi", s["id"], self.href("/v1/peersites/" + s["id"]))

    def href(self, p):
        return "https://%s:%d%s" % (self.server.server_address[0], self.server.server_address[1], p)

    def cp_json(self, cp):
        return {"CheckpointIdentifier": cp["id"], "TimeStamp": fmt_time(cp["ts"]),
                "Tag": cp["tag"], "Type": cp["type"]}

    def visible_cps(self, vpg):
        now = self.server.sim.clock.now()
        return [c for c in vpg["checkpoints"] if c["visible"] is not None and c["visible"] <= now]

    def vpg_json(self, vpg):
        sim = self.server.sim
        cps = self.visible_cps(vpg)
        vms = [m for m in sim.vms if vpg["id"] in m["vpgs"]]
        return {
            "VpgIdentifier": vpg["id"], "VpgName": vpg["name"],
            "Status": vpg["status"], "StatusDescription": VPG_STATUSES[vpg["status"]],
            "SubStatus": vpg["substatus"],
            "SubStatusDescription": VPG_SUBSTATUSES[vpg["substatus"]]
            if vpg["substatus"] < len(VPG_SUBSTATUSES) else "",
            "ProgressPercentage": 0, "ActualRPO": int(vpg["cadence_s"]) + 2,
            "ConfiguredRpoSeconds": 300, "VmsCount": len(vms), "Priority": 1, "IOPs": 13,
            "ThroughputInMB": 0.27, "ProvisionedStorageInMB": 336118, "UsedStorageInMB": 245465,
            "LastTest": None,
            "ProtectedSite": self.site_link(sim.local_site["name"]),
            "ProtectedSiteName": sim.local_site["name"],
            "RecoverySite": self.site_link(vpg["recovery"]), "RecoverySiteName": vpg["recovery"],
            "Entities": {"Protected": 0, "Recovery": vpg["entity"]},
            "ActiveProcessesApi": {"RunningFailOverTestApi": vpg["test"]},
            "HistoryStatusApi": {"ActualHistoryInMinutes": 92, "ConfiguredHistoryInMinutes": 1440,
                                 "EarliestCheckpoint": self.cp_json(cps[0]) if cps else None},
            "FailSafeHistory": {"ActualFailSafeHistory": 60, "ConfiguredFailSafeHistory": 240,
                                "FailSafeDescription": ""},
            "AlertStatus": 0, "BackupEnabled": False, "OrganizationName": "",
            "Zorg": link("ZorgApi", "00000000-0000-0000-0000-000000000000", None),
            "Link": link("VpgApi", vpg["id"], self.href("/v1/vpgs/" + vpg["id"])),
        }

    def vm_json(self, vm, vpg):
        sim = self.server.sim
        ident = "%s?VpgIdentifier=%s" % (vm["id"], vpg["id"])
        return {
            "VmIdentifier": vm["id"], "VmName": vm["name"],
            "VpgIdentifier": vpg["id"], "VpgName": vpg["name"],
            "Status": vpg["status"], "SubStatus": vpg["substatus"],
            "ActualRPO": int(vpg["cadence_s"]) + 2, "Priority": 1,
            "ProtectedSite": self.site_link(sim.local_site["name"]),
            "RecoverySite": self.site_link(vpg["recovery"]),
            "ProtectedSiteName": sim.local_site["name"], "RecoverySiteName": vpg["recovery"],
            "Entities": {"Protected": 0, "Recovery": vpg["entity"]},
            "EnabledActions": {"IsFlrEnabled": True}, "IsVmExists": True,
            "Volumes": [{"VmVolumeIdentifier": "scsi:0:0"}],
            "Nics": [{"NicIdentifier": "Network adapter 1"}], "OrganizationName": "",
            "ProvisionedStorageInMB": 77906, "UsedStorageInMB": 77906, "IOPs": 2,
            "ThroughputInMB": 0, "OutgoingBandWidthInMbps": 0.0019, "JournalUsedStorageMb": 640,
            "JournalHardLimit": {"LimitType": 1, "LimitValue": 153600},
            "JournalWarningThreshold": {"LimitType": 1, "LimitValue": 115200},
            "LastTest": None, "HardwareVersion": "vmx-19", "GuestOs": "Ubuntu Linux (64-bit)",
            "PlatformInformation": {"Azure": None},
            "Link": link("VmApi", ident, self.href("/v1/vms/" + ident)),
        }

    def task_json(self, t):
        return {
            "TaskIdentifier": t["id"], "Type": t["type"],
            "Status": {"State": t["state"], "Progress": t["progress"]},
            "InitiatedBy": t["by"], "Started": fmt_time(t["started"]),
            "Completed": fmt_time(t["completed"]) if t["completed"] is not None else None,
            "CompleteReason": t["reason"] if t["state"] in (4, 5) else "",
            "IsCancellable": False, "Generation": 1,
            "RelatedEntities": {
                "Vpgs": [link("VpgApi", t["vpg"], self.href("/v1/vpgs/" + t["vpg"]))],
                "Sites": [link("LocalSiteApi", LOCAL_SITE_ID, self.href("/v1/localsite"))],
                "Hosts": [], "FlrSessions": []},
            "Link": link("TaskApi", t["id"], self.href("/v1/tasks/" + t["id"])),
        }

    def find_vpg(self, ref):
        for v in self.server.sim.vpgs.values():
            if v["id"].lower() == ref.lower():
                return v
        raise SimError(404, "VPG %s was not found" % ref)

    @staticmethod
    def enum_match(value, names, want):
        want = want.strip()
        if want.isdigit():
            return value == int(want)
        return value < len(names) and names[value].lower() == want.lower()

    def api_get(self, lseg, seg, q):
        sim = self.server.sim
        now = sim.clock.now()
        if lseg == ["localsite"]:
            ls = sim.local_site
            return {"SiteIdentifier": ls["id"], "SiteName": ls["name"], "SiteType": ls["type"],
                    "SiteTypeVersion": "8.0.2", "Version": ls["version"],
                    "IpAddress": "127.0.0.1", "Location": "DC1", "UtcOffsetInMinutes": 0,
                    "IsReplicationToSelfEnabled": True,
                    "PlatformInformation": {"Azure": None, "VCenter": {"Ip": "127.0.0.1"}},
                    "Link": link("LocalSiteApi", ls["id"], self.href("/v1/localsite"))}
        if lseg == ["peersites"]:
            return [{"PeerSiteName": n, "SiteIdentifier": s["id"], "HostName": n.lower(),
                     "Port": 9071, "PairingStatus": 0, "Location": "", "Version": "10.9.10",
                     "SiteType": s["type"], "RegionName": "", "ProvisionedStorage": 0,
                     "UsedStorage": 0, "IncomingThroughputInMb": 0, "OutgoingBandWidth": 0,
                     "Link": link("PeerSiteApi", s["id"], self.href("/v1/peersites/" + s["id"]))}
                    for n, s in sim.sites.items() if not s["local"]
                    and (not q.get("peername") or q["peername"] == n)]
        if lseg == ["serverdatetime", "serverdatetimeutc"]:
            return fmt_time(now)
        if lseg == ["vms"]:
            rows = []
            for vm in sim.vms:
                if q.get("vmname") and q["vmname"].lower() != vm["name"].lower():
                    continue
                if q.get("vmidentifier") and q["vmidentifier"].lower() != vm["id"].lower():
                    continue
                for vid in vm["vpgs"]:
                    vpg = sim.vpgs[vid]
                    if q.get("vpgname") and q["vpgname"].lower() != vpg["name"].lower():
                        continue
                    rows.append(self.vm_json(vm, vpg))
            return rows
        if len(lseg) == 2 and lseg[0] == "vms":
            vm = next((m for m in sim.vms if m["id"].lower() == lseg[1]), None)
            if vm is None:
                raise SimError(404, "VM %s was not found" % seg[1])
            want = q.get("vpgidentifier")
            if not want:
                if len(vm["vpgs"]) > 1:
                    raise SimError(400, "VpgIdentifier is required: VM %s is protected by more "
                                   "than one VPG" % vm["id"])
                want = vm["vpgs"][0]
            vid = next((v for v in vm["vpgs"] if v.lower() == want.lower()), None)
            if vid is None:
                raise SimError(404, "VM %s is not protected by VPG %s" % (vm["id"], want))
            return self.vm_json(vm, sim.vpgs[vid])
        if lseg == ["vpgs"]:
            out = []
            for v in sim.vpgs.values():
                if q.get("name") and q["name"].lower() != v["name"].lower():
                    continue
                if q.get("status") and not self.enum_match(v["status"], VPG_STATUSES, q["status"]):
                    continue
                if q.get("substatus") and not self.enum_match(v["substatus"], VPG_SUBSTATUSES,
                                                              q["substatus"]):
                    continue
                out.append(self.vpg_json(v))
            return out
        if lseg == ["vpgs", "statuses"]:
            return VPG_STATUSES
        if lseg == ["vpgs", "substatuses"]:
            return VPG_SUBSTATUSES
        if lseg == ["vpgs", "entitytypes"]:
            return ENTITY_TYPES
        if len(lseg) == 2 and lseg[0] == "vpgs":
            return self.vpg_json(self.find_vpg(seg[1]))
        if len(lseg) == 3 and lseg[0] == "vpgs" and lseg[2] == "checkpoints":
            vpg = self.find_vpg(seg[1])
            try:
                start = parse_time(q["startdate"]) if q.get("startdate") else None
                end = parse_time(q["enddate"]) if q.get("enddate") else None
            except ValueError as e:
                raise SimError(400, str(e))
            return [self.cp_json(c) for c in self.visible_cps(vpg)
                    if (start is None or c["ts"] >= start) and (end is None or c["ts"] <= end)]
        if len(lseg) == 4 and lseg[0] == "vpgs" and lseg[2:] == ["checkpoints", "stats"]:
            cps = self.visible_cps(self.find_vpg(seg[1]))
            return {"Earliest": self.cp_json(cps[0]) if cps else None,
                    "Latest": self.cp_json(cps[-1]) if cps else None}
        if lseg == ["tasks"]:
            out = []
            for t in sim.tasks.values():
                if q.get("type") and q["type"].lower() != t["type"].lower():
                    continue
                if q.get("status") and not self.enum_match(t["state"], TASK_STATE_NAMES,
                                                           q["status"]):
                    continue
                out.append(self.task_json(t))
            return out
        if lseg == ["tasks", "types"]:
            return TASK_TYPES
        if len(lseg) == 2 and lseg[0] == "tasks":
            t = next((t for t in sim.tasks.values() if t["id"].lower() == lseg[1]), None)
            if t is None:
                raise SimError(404, "Task %s was not found" % seg[1])
            return self.task_json(t)
        raise SimError(404, "No HTTP resource was found")

    def insert(self, vpg_ref, raw):
        """POST /v1/vpgs/{id}/checkpoints: 200 + a task id; the outcome is in the task."""
        sim = self.server.sim
        vpg = self.find_vpg(vpg_ref)
        body = self.body_json(raw)
        if not isinstance(body, dict) or not isinstance(body.get("checkpointname"), str):
            raise SimError(400, "The request is invalid: CheckpointName is required")
        name = body["checkpointname"]
        if not name or len(name) > 256:
            raise SimError(400, "Checkpoint name must be 1..256 characters")
        if vpg["status"] in (5, 6, 7, 8):
            raise SimError(400, "Cannot insert a checkpoint: VPG %s is %s" %
                           (vpg["name"], VPG_STATUSES[vpg["status"]]))
        if vpg["tag_support"] == "http_400" or sim.take_fault("insert_http_400", vpg=vpg["id"]):
            raise SimError(400, "Tagged checkpoints are not supported for VPG %s (protected "
                           "site platform)" % vpg["name"])
        if vpg["on_insert"]:
            sub, dur = vpg["on_insert"]
            vpg["on_insert"] = None
            sim.enter_sync(vpg, sub, dur)
        now = sim.clock.now()
        tid = "%s.%s" % (uuid.uuid4(), LOCAL_SITE_ID)
        task = {"id": tid, "type": "InsertTaggedCP", "vpg": vpg["id"], "by": "airlock",
                "started": now, "completed": None, "state": 1, "progress": 0,
                "duration": sim.task_s, "final_state": 6, "reason": "", "stuck": None, "cp": None}
        busy = any(t for t in sim.tasks.values()
                   if t["vpg"] == vpg["id"] and t["type"] == "InsertTaggedCP"
                   and (t["state"] not in (4, 5, 6) or
                        (sim.busy_until == "visible" and t["final_state"] == 6 and t.get("cp")
                         and (t["cp"]["visible"] is None or t["cp"]["visible"] > now))))
        stuck = sim.take_fault("task_stuck_state", vpg=vpg["id"])
        fails = sim.take_fault("insert_task_fails", vpg=vpg["id"])
        if busy:
            task.update(duration=0.8, final_state=4,
                        reason="Another checkpoint insertion is in progress for this VPG")
        elif not sim.protecting(vpg) or vpg["substatus"] not in (0, 28):
            task.update(duration=1.0, final_state=4, reason="Cannot insert a checkpoint while "
                        "VPG %s is %s/%s" % (vpg["name"], VPG_STATUSES[vpg["status"]],
                                             VPG_SUBSTATUSES[vpg["substatus"]]
                                             if vpg["substatus"] < len(VPG_SUBSTATUSES) else
                                             vpg["substatus"]))
        elif vpg["tag_support"] == "task_fails":
            task.update(final_state=4, reason="Tagged checkpoints are not supported for this "
                        "protected site")
        elif fails:
            st = int(fails.get("state", 4))
            task.update(final_state=st, reason=fails.get(
                "reason", "Task stopped" if st == 5 else "Checkpoint insertion failed"))
        if stuck:
            task["stuck"] = int(stuck.get("state", 1))
        if task["final_state"] == 6:
            never = sim.take_fault("tag_never_listed", vpg=vpg["id"]) is not None
            task["cp"] = {"id": str(vpg["next_cp_id"]), "ts": now, "tag": name, "type": 1,
                          "visible": None, "never": never}
            vpg["next_cp_id"] += 1
            rec = {"vpg": vpg["name"], "VpgIdentifier": vpg["id"], "tag": name, "task": tid,
                   "inserted_virtual": fmt_time(now), "inserted_real_unix": time.time(),
                   "checkpoint": None, "timestamp": None, "visible_virtual": None,
                   "visible_real_unix": None, "never_listed": never}
            task["tag_record"] = rec
            sim.tagged.append(rec)
        sim.tasks[tid] = task
        return tid


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--scale", type=float, default=1.0, help="virtual seconds per real second")
    ap.add_argument("--token-lifetime", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--client-id", default="airlock")
    ap.add_argument("--client-secret-file", required=True)
    ap.add_argument("--username", default="airlock-op")
    ap.add_argument("--password-file", required=True)
    ap.add_argument("--ready-file", required=True, help="written with the port once listening")
    ap.add_argument("--legacy", action="store_true",
                    help="Windows ZVM mode: /v1/session/add login, no Keycloak")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    with open(args.client_secret_file) as f:
        args.client_secret = f.read().strip()
    with open(args.password_file) as f:
        args.password = f.read().strip()

    srv = Server(("127.0.0.1", args.port), Handler)
    srv.sim = Sim(args)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    # The handshake runs in each connection's thread, so a slow client cannot
    # stall the accept loop.
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    tmp = args.ready_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.ready_file)
    srv.serve_forever(poll_interval=0.2)
    srv.server_close()


if __name__ == "__main__":
    main()
