#!/usr/bin/env python3
"""zvmsim_selftest -- the simulator keeps its contract with airlock's tests.

Run under `zvmsimctl run [--legacy] -- python3 zvmsim_selftest.py`; it reads
ZVMSIM_* from the environment.  The C integration tests cover what the guard
uses; this covers the rest of the contract (wire shapes, the 404 on
/v1/session/add, failover test, points in time, FLR, legacy login)."""

import base64
import datetime
import json
import os
import ssl
import sys
import unittest
import urllib.error
import urllib.request

URL = os.environ.get("ZVMSIM_URL", "")
CTX = ssl.create_default_context(cafile=os.environ.get("ZVMSIM_CA"))
LEGACY = os.environ.get("ZVMSIM_SELFTEST_LEGACY") == "1"


def call(method, path, body=None, headers=None, form=None, raw=False):
    h = {"Accept": "application/json"}
    h.update(headers or {})
    data = None
    if form is not None:
        data = form.encode()
        h["Content-Type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(path if path.startswith("https:") else URL + path, data=data,
                                 method=method, headers=h)
    try:
        with urllib.request.urlopen(req, context=CTX, timeout=20) as f:
            b, status, hdrs = f.read(), f.status, f.headers
    except urllib.error.HTTPError as e:
        b, status, hdrs = e.read(), e.code, e.headers
    if raw:
        return status, b, hdrs
    return status, (json.loads(b) if b else None), hdrs


def secret(name):
    with open(os.environ[name]) as f:
        return f.read().strip()


class Appliance(unittest.TestCase):
    def setUp(self):
        call("POST", "/_sim/reset", {})
        st, tok, _ = call("POST", "/auth/realms/zerto/protocol/openid-connect/token",
                          form="grant_type=client_credentials&client_id=airlock&client_secret="
                          + secret("ZVMSIM_SECRET_FILE"))
        self.assertEqual(st, 200)
        self.assertEqual(tok["token_type"], "Bearer")
        self.assertNotIn("refresh_token", tok)  # service accounts get none
        self.auth = {"Authorization": "Bearer " + tok["access_token"]}
        _, rows, _ = call("GET", "/v1/vms?VMNAME=zimaos", headers=self.auth)
        self.vm, self.vpg = rows[0]["VmIdentifier"], rows[0]["VpgIdentifier"]

    def test_auth_errors(self):
        st, body, _ = call("POST", "/auth/realms/zerto/protocol/openid-connect/token",
                           form="grant_type=client_credentials&client_id=airlock&client_secret=x")
        self.assertEqual((st, body["error"]), (401, "unauthorized_client"))
        st, body, hdrs = call("GET", "/v1/vpgs")
        self.assertEqual(st, 401)
        self.assertIn("invalid_token", hdrs["WWW-Authenticate"])
        self.assertEqual(call("POST", "/v1/session/add", {"AuthenticationMethod": 1})[0], 404)
        st, tok, _ = call("POST", "/auth/realms/zerto/protocol/openid-connect/token",
                          form="grant_type=password&client_id=zerto-client&username=%s&password=%s"
                          % (os.environ["ZVMSIM_USERNAME"], secret("ZVMSIM_PASSWORD_FILE")))
        self.assertEqual(st, 200)
        st, tok2, _ = call("POST", "/auth/realms/zerto/protocol/openid-connect/token",
                           form="grant_type=refresh_token&client_id=zerto-client&refresh_token="
                           + tok["refresh_token"])
        self.assertEqual(st, 200)
        st, body, _ = call("POST", "/auth/realms/zerto/protocol/openid-connect/token",
                           form="grant_type=refresh_token&client_id=zerto-client&refresh_token="
                           + tok["refresh_token"])
        self.assertEqual((st, body["error_description"]), (400, "Token is not active"))

    def test_wire_shapes(self):
        _, rows, _ = call("GET", "/v1/vms?vmName=web01", headers=self.auth)
        self.assertEqual(len(rows), 3)
        self.assertEqual(len({r["VmIdentifier"] for r in rows}), 1)
        self.assertEqual(rows[0]["ProtectedSite"]["type"], "LocalSiteApi")
        _, site, _ = call("GET", "/v1/localsite", headers=self.auth)
        self.assertEqual(site["SiteIdentifier"], rows[0]["ProtectedSite"]["identifier"])
        st, body, _ = call("GET", "/v1/vms/" + rows[0]["VmIdentifier"], headers=self.auth)
        self.assertEqual(st, 400)  # several VPGs: the VPG id is required
        _, subs, _ = call("GET", "/v1/vpgs/substatuses", headers=self.auth)
        self.assertEqual(subs[23], "BitmapSync")
        _, vpgs, _ = call("GET", "/v1/vpgs?subStatus=InitialSync", headers=self.auth)
        self.assertEqual([v["VpgName"] for v in vpgs], ["sync01-vpg"])
        st, tid, _ = call("POST", "/v1/VPGS/%s/Checkpoints" % self.vpg,
                          {"checkpointname": "x"}, self.auth)
        self.assertEqual(st, 200)
        self.assertIsInstance(tid, str)  # a bare JSON string
        _, task, _ = call("GET", "/v1/tasks/" + tid, headers=self.auth)
        self.assertEqual((task["Type"], task["Status"]["State"]), ("InsertTaggedCP", 1))
        self.assertIsNone(task["Completed"])
        st, body, _ = call("GET", "/v1/nothing", headers=self.auth)
        self.assertEqual(st, 404)
        self.assertIn("Message", body)

    def test_cadence_and_resync(self):
        call("POST", "/_sim/clock", {"advance_s": 60})
        # The last 60 (ZVM) seconds hold about 12 automatic checkpoints at 5 s.
        now = datetime.datetime.strptime(call("GET", "/v1/serverDateTime/serverDateTimeUtc",
                                              headers=self.auth)[1][:19], "%Y-%m-%dT%H:%M:%S")
        start = (now - datetime.timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        _, cps, _ = call("GET", "/v1/vpgs/%s/checkpoints?startDate=%s" % (self.vpg, start),
                         headers=self.auth)
        self.assertTrue(cps and all(c["Tag"] is None for c in cps))
        call("POST", "/_sim/fault", {"kind": "resync", "vpg": "zimaos-local"})
        _, stats, _ = call("GET", "/v1/vpgs/%s/checkpoints/stats" % self.vpg, headers=self.auth)
        self.assertIsNone(stats["Latest"])  # a resync deletes the journal's checkpoints

    def test_failover_test_and_flr(self):
        _, pit, _ = call("GET", "/v1/vms/%s/pointsInTime?vpgIdentifier=%s" % (self.vm, self.vpg),
                         headers=self.auth)
        self.assertTrue(pit[-1]["CanMount"]["IsAllowed"])
        cp = pit[-1]["Checkpoint"]["CheckpointIdentifier"]
        mount = {"Jflr": {"VpgIdentifier": self.vpg, "VmIdentifier": self.vm,
                          "CheckpointIdentifier": cp}}
        st, sid, _ = call("POST", "/v1/flrs", mount, self.auth)
        self.assertEqual(st, 200)
        st, body, _ = call("POST", "/v1/flrs", mount, self.auth)
        self.assertEqual(st, 400)
        self.assertIn("already active", body["Message"])  # the stuck-session rule
        _, s, _ = call("GET", "/v1/flrs/" + sid, headers=self.auth)
        self.assertEqual(s[0]["FlrSessionStatus"], "MountInProgress")
        call("POST", "/_sim/clock", {"advance_s": 10})
        _, s, _ = call("GET", "/v1/flrs/" + sid, headers=self.auth)
        self.assertEqual(s[0]["FlrSessionStatus"], "MountCompletedSuccessfully")
        _, b, _ = call("POST", "/v1/flrs/%s/browse" % sid, {"Path": "partition#1 Ext4/etc"},
                       self.auth)
        items = {i["Path"].rsplit("/", 1)[-1]: i for i in b["PathItems"]}
        self.assertFalse(items["weird:name.conf"]["DownloadInformation"]["IsDownloadable"])
        _, url, _ = call("POST", "/v1/flrs/%s/download" % sid,
                         {"PathList": ["partition#1 Ext4/etc/nginx/nginx.conf"]}, self.auth)
        st, data, hdrs = call("GET", url, headers=self.auth, raw=True)
        self.assertEqual((st, hdrs["Content-Type"]), (200, "application/octet-stream"))
        self.assertTrue(data.startswith(b"# zimaos at checkpoint " + cp.encode()))
        st, body, _ = call("POST", "/v1/flrs/%s/download" % sid,
                           {"PathList": ["partition#1 Ext4/var/lib/big.img"]}, self.auth)
        self.assertIn("1.5 GB", body["Message"])
        _, tid, _ = call("DELETE", "/v1/flrs/" + sid, headers=self.auth)
        call("POST", "/_sim/clock", {"advance_s": 3})
        _, task, _ = call("GET", "/v1/tasks/" + tid, headers=self.auth)
        self.assertEqual((task["Type"], task["Status"]["State"]), ("FlrJournalUnmount", 6))
        self.assertEqual(call("GET", "/v1/flrs?vmIdentifier=" + self.vm, headers=self.auth)[1], [])
        # While a failover test runs: no FLR, and the VPG says so.
        call("POST", "/v1/vpgs/%s/FailoverTest" % self.vpg, {}, self.auth)
        _, v, _ = call("GET", "/v1/vpgs/" + self.vpg, headers=self.auth)
        self.assertIsNotNone(v["ActiveProcessesApi"]["RunningFailOverTestApi"])
        st, body, _ = call("POST", "/v1/flrs", mount, self.auth)
        self.assertIn("failover test", body["Message"])
        # Only at the recovery site.
        _, rows, _ = call("GET", "/v1/vms?vmName=web01&vpgName=web-aws", headers=self.auth)
        st, body, _ = call("POST", "/v1/flrs", {"Jflr": {
            "VpgIdentifier": rows[0]["VpgIdentifier"], "VmIdentifier": rows[0]["VmIdentifier"],
            "CheckpointIdentifier": "1"}}, self.auth)
        self.assertEqual(st, 400)

    def flr_session(self, cp):
        """A mounted session of zimaos at checkpoint cp."""
        st, sid, _ = call("POST", "/v1/flrs", {"Jflr": {
            "VpgIdentifier": self.vpg, "VmIdentifier": self.vm, "CheckpointIdentifier": cp}},
            self.auth)
        self.assertEqual(st, 200)
        call("POST", "/_sim/clock", {"advance_s": 10})
        return sid

    def unmount(self, sid):
        call("DELETE", "/v1/flrs/" + sid, headers=self.auth)
        call("POST", "/_sim/clock", {"advance_s": 3})

    def test_flr_files_by_checkpoint_time(self):
        _, pit, _ = call("GET", "/v1/vms/%s/pointsInTime?vpgIdentifier=%s" % (self.vm, self.vpg),
                         headers=self.auth)
        before = pit[-1]["Checkpoint"]["CheckpointIdentifier"]
        data = bytes(range(256)) + b"\0end"
        call("POST", "/_sim/flr_file", {"vm": "zimaos", "path": "/etc/app.conf",
                                        "data_b64": base64.b64encode(data).decode()})
        call("POST", "/_sim/clock", {"advance_s": 12})
        _, pit, _ = call("GET", "/v1/vms/%s/pointsInTime?vpgIdentifier=%s" % (self.vm, self.vpg),
                         headers=self.auth)
        after = pit[-1]["Checkpoint"]["CheckpointIdentifier"]
        sid = self.flr_session(before)   # taken before the file was set: not there
        _, b, _ = call("POST", "/v1/flrs/%s/browse" % sid, {"Path": "partition#1 Ext4/etc"},
                       self.auth)
        self.assertNotIn("partition#1 Ext4/etc/app.conf", [i["Path"] for i in b["PathItems"]])
        self.unmount(sid)
        sid = self.flr_session(after)
        _, b, _ = call("POST", "/v1/flrs/%s/browse" % sid, {"Path": "partition#1 Ext4/etc"},
                       self.auth)
        item = next(i for i in b["PathItems"] if i["Path"] == "partition#1 Ext4/etc/app.conf")
        self.assertEqual(item["SizeInBytes"], len(data))
        _, url, _ = call("POST", "/v1/flrs/%s/download" % sid,
                         {"PathList": ["partition#1 Ext4/etc/app.conf"]}, self.auth)
        st, got, _ = call("GET", url, headers=self.auth, raw=True)
        self.assertEqual((st, got), (200, data))   # byte for byte, NUL and high bytes
        self.unmount(sid)

    def test_flr_refused_during_live_failover_and_ejc(self):
        _, pit, _ = call("GET", "/v1/vms/%s/pointsInTime?vpgIdentifier=%s" % (self.vm, self.vpg),
                         headers=self.auth)
        mount = {"Jflr": {"VpgIdentifier": self.vpg, "VmIdentifier": self.vm,
                          "CheckpointIdentifier": pit[-1]["Checkpoint"]["CheckpointIdentifier"]}}
        for process, words in (("live_failover", "live failover"), ("ejc", "EJC")):
            call("POST", "/_sim/config", {"vpgs": {"zimaos-local": {"process": process}}})
            st, body, _ = call("POST", "/v1/flrs", mount, self.auth)
            self.assertEqual(st, 400)
            self.assertIn(words, body["Message"])
            _, pit2, _ = call("GET", "/v1/vms/%s/pointsInTime?vpgIdentifier=%s" % (
                self.vm, self.vpg), headers=self.auth)
            self.assertFalse(pit2[-1]["CanMount"]["IsAllowed"])
        call("POST", "/_sim/config", {"vpgs": {"zimaos-local": {"process": None}}})
        st, sid, _ = call("POST", "/v1/flrs", mount, self.auth)
        self.assertEqual(st, 200)

    def test_flr_only_at_the_recovery_site(self):
        _, rows, _ = call("GET", "/v1/vms?vmName=win2019-1", headers=self.auth)
        st, body, _ = call("POST", "/v1/flrs", {"Jflr": {
            "VpgIdentifier": rows[0]["VpgIdentifier"], "VmIdentifier": rows[0]["VmIdentifier"],
            "CheckpointIdentifier": "1"}}, self.auth)
        self.assertEqual(st, 400)   # CMH-AWS-1 recovers to AWS-Ohio: not here


class Legacy(unittest.TestCase):
    def test_session_login(self):
        self.assertEqual(call("POST", "/auth/realms/zerto/protocol/openid-connect/token",
                              form="grant_type=password")[0], 404)
        basic = "Basic " + base64.b64encode(("%s:%s" % (
            os.environ["ZVMSIM_USERNAME"], secret("ZVMSIM_PASSWORD_FILE"))).encode()).decode()
        st, body, hdrs = call("POST", "/v1/session/add", {"AuthenticationMethod": 1},
                              {"Authorization": basic})
        self.assertEqual((st, body), (200, None))
        sid = {"x-zerto-session": hdrs["x-zerto-session"]}
        self.assertEqual(call("GET", "/v1/vpgs", headers=sid)[0], 200)
        call("POST", "/_sim/clock", {"advance_s": 31 * 60})
        self.assertEqual(call("GET", "/v1/vpgs", headers=sid)[0], 401)  # dormant 30 min


if __name__ == "__main__":
    if not URL:
        sys.exit("run under tests/zvmsim/zvmsimctl run -- ...")
    suite = unittest.TestLoader().loadTestsFromTestCase(Legacy if LEGACY else Appliance)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    sys.exit(0 if ok else 1)
