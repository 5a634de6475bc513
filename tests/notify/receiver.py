#!/usr/bin/python3 -I
"""receiver.py PORTFILE LOG [PATH=N ...] -- a loopback HTTP server playing
webhook receivers.  Every request (POST or PUT) is appended to LOG as one JSON
line: method, path, headers, body, and the status it was answered with.  A
PATH=N argument makes the first N requests to PATH fail with HTTP 500, so a
test sees the failure happen before the retry that succeeds."""
import http.server
import json
import os
import sys
import threading

portfile, log = sys.argv[1], sys.argv[2]
fail_left = {}
for spec in sys.argv[3:]:
    path, n = spec.rsplit("=", 1)
    fail_left[path] = int(n)
lock = threading.Lock()


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_any(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        path = self.path.split("?", 1)[0]
        with lock:
            status = 200
            for prefix, left in fail_left.items():
                if path.startswith(prefix) and left > 0:
                    fail_left[prefix] = left - 1
                    status = 500
            rec = {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace"),
                "body_is_utf8": _utf8(body),
                "status": status,
            }
            with open(log, "a") as f:
                f.write(json.dumps(rec) + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = handle_any
    do_PUT = handle_any

    def log_message(self, *args):
        pass


def _utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
