"""zvmsim_ops -- the simulator's whole-VM and file-level operations and the
legacy session login of Windows ZVMs: failover test,
clone, points in time, journal FLR (mount, browse, download, unmount) and
the Windows-ZVM x-zerto-session mode.  Mixed into zvmsim's request handler;
every method runs with the simulator lock held.
"""

import base64
import copy
import io
import secrets
import uuid
import zipfile

# One Linux-looking partition per VM.  Sizes over 1.5 GB and names with
# characters FLR refuses come back not downloadable, with the reason.
FLR_TREE = {
    "etc": {"nginx": {"nginx.conf": 2412}, "hostname": 6, "fstab": 612,
            "weird:name.conf": 10},
    "home": {"j": {"app.yaml": 311}},
    "var": {"lib": {"big.img": 2 * 1024 ** 3}},
    # A folder longer than one browse page.
    "usr": {"share": {"doc": {"f%04d" % i: 100 + i for i in range(1200)}}},
}
PARTITION = "partition#1 Ext4"
# A Windows VM (fixture "os": "windows"): a reserved partition and the C: drive.
WINDOWS_TREE = {
    "partition#1 NTFS System Reserved": {"bootmgr": 413738},
    "partition#2 NTFS (C:)": {"Users": {"j": {"app.conf": 120}},
                              "Windows": {"win.ini": 92}},
}
FLR_MAX_BYTES = 1536 * 1024 ** 2
# Browse pages: PageSize defaults to 100 and is capped at 500 [I].
BROWSE_PAGE_DEFAULT = 100
BROWSE_PAGE_MAX = 500
FLR_BAD_CHARS = set(':*?"<>|')


def file_bytes(vm_name, cp_id, path, size):
    """Deterministic contents that say which VM, checkpoint and file they are."""
    head = ("# %s at checkpoint %s: %s\n" % (vm_name, cp_id, path)).encode()
    return (head * (size // len(head) + 1))[:size] if size < 1 << 20 else head


class OpsMixin:
    # ---- dispatch ------------------------------------------------------

    def ops_route(self, method, lseg, seg, q, raw):
        """(handled, body) for the operations here; handled False = not ours."""
        if lseg and lseg[0] == "flrs":
            return True, self.flr(method, lseg, seg, q, raw)
        if method == "GET" and len(lseg) >= 3 and lseg[0] == "vms" and lseg[2] == "pointsintime":
            return True, self.points_in_time(seg[1], q, stats=lseg[3:] == ["stats"])
        if method == "POST" and len(lseg) == 3 and lseg[0] == "vpgs":
            act = lseg[2]
            if act in ("failovertest", "failoverteststop", "clonestart", "cloneabort"):
                return True, self.vpg_action(act, seg[1], raw)
        return False, None

    def new_task(self, ttype, vpg_id, duration, on_done=None, final_state=6, reason=""):
        sim = self.server.sim
        tid = "%s.%s" % (uuid.uuid4(), sim.local_site["id"])
        sim.tasks[tid] = {"id": tid, "type": ttype, "vpg": vpg_id, "by": "airlock",
                          "started": sim.clock.now(), "completed": None, "state": 1,
                          "progress": 0, "duration": duration, "final_state": final_state,
                          "reason": reason, "stuck": None, "cp": None, "on_done": on_done}
        return tid

    # ---- failover test and clone ---------------------------------------

    def vpg_action(self, act, vpg_ref, raw):
        vpg = self.find_vpg(vpg_ref)
        body = self.body_json(raw) if raw else {}
        busy = self.busy_reason(vpg)
        if act == "failovertest":
            if busy:
                raise self.sim_error(400, "Cannot start a failover test: %s" % busy)
            cp = body.get("checkpointidentifier") if isinstance(body, dict) else None
            if cp is not None and not any(c["id"] == str(cp) for c in vpg["checkpoints"]):
                raise self.sim_error(400, "failed parsing as a valid CheckPoint Identifier")
            vpg["test"] = {"Stage": "Starting"}

            def started(task, ok):
                if ok and vpg.get("test"):
                    vpg["test"] = {"Stage": "Running"}
            return self.new_task("FailOverTest", vpg["id"], 30.0, started)
        if act == "failoverteststop":
            if not vpg.get("test"):
                raise self.sim_error(400, "No failover test is running on VPG %s" % vpg["name"])
            vpg["test"]["Stage"] = "Stopping"

            def stopped(task, ok):
                if ok:
                    vpg["test"] = None
            return self.new_task("StopFailOverTest", vpg["id"], 10.0, stopped)
        if act == "clonestart":
            if busy:
                raise self.sim_error(400, "Cannot start a clone: %s" % busy)
            vpg["clone"] = True

            def cloned(task, ok):
                vpg["clone"] = None
            return self.new_task("Clone", vpg["id"], 60.0, cloned)
        # cloneabort: 200, no body
        vpg["clone"] = None
        return None

    def busy_reason(self, vpg):
        if vpg.get("test"):
            return "a failover test is running on VPG %s" % vpg["name"]
        if vpg.get("clone"):
            return "a clone is running on VPG %s" % vpg["name"]
        if vpg.get("process") == "live_failover":
            return "a live failover is running on VPG %s" % vpg["name"]
        if vpg.get("process") == "ejc":
            return "an extended journal copy (EJC) is running on VPG %s" % vpg["name"]
        return None

    # ---- points in time ------------------------------------------------

    def points_in_time(self, vm_ref, q, stats):
        vm = self.find_vm(vm_ref)
        vpg = self.vm_vpg(vm, q.get("vpgidentifier"))
        cps = self.visible_cps(vpg)
        try:
            start = self.parse_time(q["startdate"]) if q.get("startdate") else None
            end = self.parse_time(q["enddate"]) if q.get("enddate") else None
        except ValueError as e:
            raise self.sim_error(400, str(e))
        cps = [c for c in cps if (start is None or c["ts"] >= start) and
               (end is None or c["ts"] <= end)]
        reason = self.flr_refusal(vm, vpg)
        items = [{"Checkpoint": self.cp_json(c), "RetentionSet": None,
                  "CanMount": {"IsAllowed": reason is None, "Reason": reason or ""}}
                 for c in cps]
        if stats:
            return {"Earliest": items[0] if items else None,
                    "Latest": items[-1] if items else None}
        return items

    def find_vm(self, ref):
        for m in self.server.sim.vms:
            if m["id"].lower() == ref.lower():
                return m
        raise self.sim_error(404, "VM %s was not found" % ref)

    def vm_vpg(self, vm, want):
        sim = self.server.sim
        if not want:
            if len(vm["vpgs"]) > 1:
                raise self.sim_error(400, "VpgIdentifier is required: VM %s is protected by "
                                     "more than one VPG" % vm["id"])
            want = vm["vpgs"][0]
        vid = next((v for v in vm["vpgs"] if v.lower() == want.lower()), None)
        if vid is None:
            raise self.sim_error(404, "VM %s is not protected by VPG %s" % (vm["id"], want))
        return sim.vpgs[vid]

    # ---- file level restore --------------------------------------------

    def flr_refusal(self, vm, vpg):
        """Why FLR of this VM from this VPG cannot start here, or None."""
        sim = self.server.sim
        if not sim.sites[vpg["recovery"]]["local"]:
            return ("File level restore runs at the recovery site: VPG %s recovers to %s; "
                    "use that site's ZVM" % (vpg["name"], vpg["recovery"]))
        busy = self.busy_reason(vpg)
        if busy:
            return "File level restore cannot start while %s" % busy
        for s in sim.flrs.values():
            if s["vm"] == vm["id"]:
                return ("A file level restore session (%s) is already active for VM %s"
                        % (s["id"], vm["name"]))
        return None

    def flr_session_json(self, s):
        sim = self.server.sim
        now = sim.clock.now()
        status = s["status"]
        if status == "MountInProgress" and now >= s["ready_at"]:
            s["status"] = status = "MountFailed" if s["fail"] else "MountCompletedSuccessfully"
        fmt_time = self.fmt_time
        return {"FlrSessionIdentifier": s["id"], "FlrSessionStatus": status,
                "FlrSessionType": "jflr", "VmIdentifier": s["vm"], "VmVolumeIdentifier": None,
                "VpgIdentifier": s["vpg"], "CheckpointIdentifier": s["cp"],
                "MountTime": fmt_time(s["started"]), "SelectedPath": None,
                "NumberOfRelatedRunningTasks": 0, "RepositoryIdentifier": None,
                "RetentionSetIdentifier": None, "SiteIdentifier": sim.local_site["id"]}

    def flr(self, method, lseg, seg, q, raw):
        sim = self.server.sim
        if sim.take_fault("flr_role_403"):
            raise self.sim_error(403, "The user is not authorized to perform file level "
                                 "restore")
        if lseg == ["flrs"] and method == "GET":
            return [self.flr_session_json(s) for s in sim.flrs.values()
                    if not q.get("vmidentifier") or s["vm"].lower() == q["vmidentifier"].lower()]
        if lseg == ["flrs"] and method == "POST":
            return self.flr_mount(raw)
        if len(lseg) == 3 and lseg[1] == "downloads" and method == "GET":
            blob = sim.downloads.get(lseg[2])
            if blob is None:
                raise self.sim_error(404, "Download %s was not found" % seg[2])
            return RawBody(blob[0], blob[1])
        s = sim.flrs.get(lseg[1]) if len(lseg) >= 2 else None
        if s is None:
            raise self.sim_error(404, "File level restore session %s was not found" %
                                 (seg[1] if len(seg) > 1 else ""))
        if len(lseg) == 2 and method == "GET":
            j = self.flr_session_json(s)
            return j if sim.flr_object else [j]
        if len(lseg) == 2 and method == "DELETE":
            fail = sim.take_fault("flr_unmount_fails", vpg=s["vpg"]) is not None

            def unmounted(task, ok):
                if ok:
                    sim.flrs.pop(s["id"].lower(), None)
            return self.new_task("FlrJournalUnmount", s["vpg"], 2.0, unmounted,
                                 4 if fail else 6, "Unmount failed" if fail else "")
        if self.flr_session_json(s)["FlrSessionStatus"] != "MountCompletedSuccessfully":
            raise self.sim_error(400, "File level restore session %s is %s" %
                                 (s["id"], s["status"]))
        body = self.body_json(raw)
        if len(lseg) == 3 and lseg[2] == "browse" and method == "POST":
            if not isinstance(body, dict):
                body = {}
            try:
                page = int(body.get("pagenumber") or 1)
                size = int(body.get("pagesize") or BROWSE_PAGE_DEFAULT)
            except (TypeError, ValueError):
                raise self.sim_error(400, "PageNumber and PageSize are integers")
            if page < 1 or size < 1:
                raise self.sim_error(400, "PageNumber and PageSize start at 1")
            return self.flr_browse(s, body.get("path") or "", page, min(size, BROWSE_PAGE_MAX))
        if len(lseg) == 3 and lseg[2] == "download" and method == "POST":
            paths = body.get("pathlist") if isinstance(body, dict) else None
            if not isinstance(paths, list) or not paths:
                raise self.sim_error(400, "PathList is required")
            return self.flr_download(s, paths)
        raise self.sim_error(404, "No HTTP resource was found")

    def flr_mount(self, raw):
        sim = self.server.sim
        body = self.body_json(raw)
        j = body.get("jflr") if isinstance(body, dict) else None
        if not isinstance(j, dict):
            raise self.sim_error(400, "Jflr is required")
        j = {k.lower(): v for k, v in j.items()}
        vm = self.find_vm(str(j.get("vmidentifier") or ""))
        vpg = self.vm_vpg(vm, j.get("vpgidentifier"))
        cp = str(j.get("checkpointidentifier") or "")
        if not any(c["id"] == cp for c in self.visible_cps(vpg)):
            raise self.sim_error(400, "Checkpoint %s was not found in VPG %s" % (cp, vpg["name"]))
        reason = self.flr_refusal(vm, vpg)
        if reason:
            raise self.sim_error(400, reason)
        sid = "%s.%s" % (uuid.uuid4(), sim.local_site["id"])
        now = sim.clock.now()
        cp_ts = next(c["ts"] for c in self.visible_cps(vpg) if c["id"] == cp)
        sim.flrs[sid.lower()] = {"id": sid, "vm": vm["id"], "vm_name": vm["name"],
                                 "os": vm.get("os", "linux"), "cp_ts": cp_ts,
                                 "partitions": vm.get("partitions", 1),
                                 "vpg": vpg["id"], "cp": cp, "started": now,
                                 "ready_at": now + 8.0, "status": "MountInProgress",
                                 "fail": sim.take_fault("flr_mount_fails", vpg=vpg["id"])
                                 is not None}
        return sid

    def session_tree(self, s):
        """{partition: tree} of the session's VM as of its checkpoint: the
        fixture's files plus those set with /_sim/flr_file before the
        checkpoint's time (a leaf is a size, or the exact bytes)."""
        sim = self.server.sim
        base = WINDOWS_TREE if s.get("os") == "windows" else {PARTITION: FLR_TREE}
        parts = copy.deepcopy(base)
        if s.get("os") != "windows" and s.get("partitions", 1) > 1:
            # A second Linux filesystem holding the same paths (fixture
            # "partitions": 2): a guest path then matches twice.
            parts["partition#2 Ext4"] = copy.deepcopy(FLR_TREE)
        for gpath, versions in sim.flr_files.get(s["vm_name"], {}).items():
            past = [v for v in versions if v[0] <= s["cp_ts"]]
            if not past:
                continue
            content = past[-1][1]
            comps = [c for c in gpath.replace("\\", "/").split("/") if c]
            if s.get("os") == "windows":
                drive = comps.pop(0).upper() if comps and comps[0].endswith(":") else "C:"
                pname = next((p for p in parts if drive in p), None)
                if pname is None:
                    continue
            else:
                pname = PARTITION
            node = parts[pname]
            for c in comps[:-1]:
                node = node.setdefault(c, {})
                if not isinstance(node, dict):
                    break
            else:
                if content is None:
                    node.pop(comps[-1], None)
                else:
                    node[comps[-1]] = content
        return parts

    def tree_at(self, s, path):
        """(node, components) for an FLR path, or (None, ...) when absent."""
        parts = [p for p in path.split("/") if p]
        tree = self.session_tree(s)
        if not parts:
            return "root", parts
        if parts[0] not in tree:
            return None, parts
        node = tree[parts[0]]
        for p in parts[1:]:
            if not isinstance(node, dict) or p not in node:
                return None, parts
            node = node[p]
        return node, parts

    def path_item(self, path, node):
        t = self.fmt_time(self.server.sim.clock.now() - 86400)
        name = path.rsplit("/", 1)[-1]
        why = None
        if isinstance(node, int) and node > FLR_MAX_BYTES:
            why = "Cannot restore. Files larger than 1.5 GB are not supported."
        elif FLR_BAD_CHARS & set(name):
            why = "Cannot restore. The name contains characters that are not supported."
        leaf = isinstance(node, (int, bytes))
        size = len(node) if isinstance(node, bytes) else node if isinstance(node, int) else None
        if isinstance(node, bytes) and len(node) > FLR_MAX_BYTES:
            why = "Cannot restore. Files larger than 1.5 GB are not supported."
        kind = "Partition" if "/" not in path else "Folder" if not leaf else "File"
        return {"Path": path, "Type": kind, "IsBrowsable": not leaf,
                "DownloadInformation": {"IsDownloadable": why is None,
                                        "AdditionalInformation": why},
                "SizeInBytes": size,
                "CreationTime": t, "LastAccessTime": t, "LastWriteTime": t}

    def flr_browse(self, s, path, page=1, size=BROWSE_PAGE_DEFAULT):
        """One page of a folder's items (the server caps the page size)."""
        if "\\" in path:
            raise self.sim_error(400, "Backslash is not supported in paths; use /")
        node, parts = self.tree_at(s, path)
        if node is None:
            raise self.sim_error(400, "Path %s was not found" % path)
        lo, hi = (page - 1) * size, page * size
        if node == "root":
            return {"MainPathItem": self.path_item("", {}),
                    "PathItems": [self.path_item(p, t)
                                  for p, t in list(self.session_tree(s).items())[lo:hi]]}
        if isinstance(node, (int, bytes)):
            raise self.sim_error(400, "Path %s is not browsable" % path)
        base = "/".join(parts)
        return {"MainPathItem": self.path_item(base, node),
                "PathItems": [self.path_item(base + "/" + k, v)
                              for k, v in sorted(node.items())[lo:hi]]}

    def flr_download(self, s, paths):
        sim = self.server.sim
        files = []
        for p in paths:
            node, _ = self.tree_at(s, str(p))
            if not isinstance(node, (int, bytes)):
                raise self.sim_error(400, "Path %s is not a downloadable file" % p)
            item = self.path_item(str(p), node)
            if not item["DownloadInformation"]["IsDownloadable"]:
                raise self.sim_error(400, item["DownloadInformation"]["AdditionalInformation"])
            data = node if isinstance(node, bytes) else \
                file_bytes(s["vm_name"], s["cp"], str(p), node)
            files.append((str(p), data))
        if len(files) == 1:
            blob = (files[0][1], "application/octet-stream")
        else:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as z:
                for p, data in files:
                    z.writestr(p.split("/", 1)[-1], data)
            blob = (buf.getvalue(), "application/zip")
        did = secrets.token_hex(8)
        sim.downloads[did] = blob
        return self.href("/v1/flrs/downloads/" + did)

    # ---- legacy (Windows ZVM <= 9.7) session login ---------------------

    def legacy_login(self, method, lpath, raw):
        """(status, body, headers) for /v1/session*, or None when not a session call."""
        sim = self.server.sim
        if lpath == "/v1/session/add" and method == "POST":
            auth = self.headers.get("Authorization") or ""
            try:
                user, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                user, pw = "", ""
            if not auth.startswith("Basic ") or user != sim.username or pw != sim.password:
                return 401, {"Message": "Authorization has been denied for this request."}, {}
            sid = secrets.token_hex(16)
            sim.sessions[sid] = sim.clock.now()
            return 200, None, {"x-zerto-session": sid}
        if lpath == "/v1/session" and method == "DELETE":
            sim.sessions.pop(self.headers.get("x-zerto-session") or "", None)
            return 200, None, {}
        return None

    def legacy_session_ok(self):
        sim = self.server.sim
        sid = self.headers.get("x-zerto-session") or ""
        last = sim.sessions.get(sid)
        now = sim.clock.now()
        if last is None or now - last > 30 * 60:   # dormant 30 minutes: terminated
            sim.sessions.pop(sid, None)
            return False
        sim.sessions[sid] = now
        return True


class RawBody:
    """A non-JSON answer (an FLR download)."""

    def __init__(self, data, ctype):
        self.data = data
        self.ctype = ctype
