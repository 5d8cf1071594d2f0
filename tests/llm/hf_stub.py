"""Loopback HTTP servers speaking just enough of the Hugging Face Hub's protocol for the real
``huggingface_hub`` client to run against them: ``HubStub`` serves one file (HEAD metadata
headers, GET with Range), ``FolderHubStub`` whole repositories (tree listing and files)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _LoopbackServer:
    """Serves a handler class on 127.0.0.1 (a free port) while used as a context manager."""

    def _serve(self, handler) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


class HubStub(_LoopbackServer):
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

        self._serve(Handler)


class FolderHubStub(_LoopbackServer):
    """A loopback Hub serving whole repositories: the tree listing that ``list_repo_files`` reads
    (``/api/models/<repo>/tree/<rev>``) and each file through ``resolve``, for the real
    ``HfApi`` and ``hf_hub_download``. ``repos`` maps ``owner/name`` to {filename: bytes}; other
    repositories answer 404, as the Hub does for a wrong name."""

    def __init__(self, repos: dict[str, dict[str, bytes]]):
        self.repos = repos
        self.requests: list[tuple[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _file(self):
                path = self.path.split("?")[0].lstrip("/")
                for repo, files in stub.repos.items():
                    prefix = f"{repo}/resolve/"
                    if path.startswith(prefix):
                        name = path[len(prefix):].split("/", 1)[-1]
                        return files.get(name)
                return None

            def _send_file(self, content, body: bool):
                self.send_response(200)
                self.send_header("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
                self.send_header("ETag", f'"{hashlib.sha1(content).hexdigest()}"')
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                if body:
                    self.wfile.write(content)

            def do_HEAD(self):
                stub.requests.append(("HEAD", self.path))
                content = self._file()
                if content is None:
                    self.send_error(404)
                else:
                    self._send_file(content, body=False)

            def do_GET(self):
                stub.requests.append(("GET", self.path))
                path = self.path.split("?")[0]
                if path.startswith("/api/models/") and "/tree/" in path:
                    repo = path[len("/api/models/"):].split("/tree/")[0]
                    if repo not in stub.repos:
                        self.send_error(404)
                        return
                    listing = json.dumps([
                        {"type": "file", "path": name, "size": len(data),
                         "oid": hashlib.sha1(data).hexdigest()}
                        for name, data in stub.repos[repo].items()]).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(listing)))
                    self.end_headers()
                    self.wfile.write(listing)
                    return
                content = self._file()
                if content is None:
                    self.send_error(404)
                else:
                    self._send_file(content, body=True)

        self._serve(Handler)

    @classmethod
    def of_folders(cls, repos: dict[str, "Path"]) -> "FolderHubStub":
        return cls({repo: {p.name: p.read_bytes() for p in Path(folder).iterdir() if p.is_file()}
                    for repo, folder in repos.items()})
