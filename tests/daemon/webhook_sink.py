#!/usr/bin/python3 -I
"""webhook_sink.py PORTFILE OUTDIR -- a loopback HTTP server that stores each
POST body as OUTDIR/<path>.<n>.json, for the daemon's webhook tests."""
import http.server
import os
import sys

portfile, outdir = sys.argv[1], sys.argv[2]
count = {}


class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        name = self.path.strip("/").replace("/", "_") or "root"
        count[name] = count.get(name, 0) + 1
        with open(os.path.join(outdir, "%s.%d.json" % (name, count[name])), "wb") as f:
            f.write(body)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Sink)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
