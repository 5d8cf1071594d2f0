"""A loopback HTTP server speaking just enough of the Hugging Face Hub's ``resolve`` protocol
(HEAD metadata headers, GET with Range) for the real ``hf_hub_download`` to run against it."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class HubStub:
    def __init__(self, content: bytes, *, etag_sha256: str | None = None):
        self.content = content
        self.etag = etag_sha256 or hashlib.sha256(content).hexdigest()
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, Range header)
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _headers(self, status, start=0):
                body_len = len(stub.content) - start
                self.send_response(status)
                self.send_header("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
                self.send_header("ETag", f'"{stub.etag}"')
                self.send_header("X-Linked-Etag", f'"{stub.etag}"')
                self.send_header("X-Linked-Size", str(len(stub.content)))
                self.send_header("Content-Length", str(body_len))
                if status == 206:
                    self.send_header("Content-Range",
                                     f"bytes {start}-{len(stub.content) - 1}/{len(stub.content)}")
                self.end_headers()

            def do_HEAD(self):
                stub.requests.append(("HEAD", self.path, self.headers.get("Range")))
                if "/resolve/" not in self.path:
                    self.send_error(404)
                    return
                self._headers(200)

            def do_GET(self):
                rng = self.headers.get("Range")
                stub.requests.append(("GET", self.path, rng))
                if "/resolve/" not in self.path:
                    self.send_error(404)
                    return
                start = int(rng.split("=")[1].split("-")[0]) if rng else 0
                self._headers(206 if start else 200, start)
                self.wfile.write(stub.content[start:])

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
