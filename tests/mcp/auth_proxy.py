"""A reverse proxy that adds `Authorization: Bearer TOKEN` to every request it forwards: the
MCP conformance suite takes a URL only, and the platform's /mcp needs a token.

Usage: python3 auth_proxy.py LISTEN_PORT UPSTREAM_URL TOKEN
"""

import http.client
import http.server
import sys
import urllib.parse

PORT, UPSTREAM, TOKEN = int(sys.argv[1]), urllib.parse.urlparse(sys.argv[2]), sys.argv[3]
HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        headers["Authorization"] = f"Bearer {TOKEN}"
        upstream = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=60)
        upstream.request(self.command, self.path, body=body, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for k, v in answer.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = forward

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()
