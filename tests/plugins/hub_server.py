"""A loopback stand-in for the Hugging Face hub, serving model folders the tests save.

It answers the few routes huggingface_hub's downloads use: repository info, the file
tree, and ``resolve`` (HEAD and GET) with the headers its cache keys on (X-Repo-Commit,
ETag, Content-Length). A file that is not there is a 404 with the hub's EntryNotFound
code. Nothing is mocked on the client side: the real download and cache code runs.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class MiniHub:
    """``with MiniHub({"org/name": folder}) as hub: ... hub.url ...``"""

    def __init__(self, repos: dict[str, Path]):
        self.repos = {repo: Path(folder) for repo, folder in repos.items()}
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_HEAD(self):
                hub._answer(self, body=False)

            def do_GET(self):
                hub._answer(self, body=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "MiniHub":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _files(self, repo: str) -> list[str]:
        root = self.repos[repo]
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        path = unquote(urlsplit(handler.path).path)
        self.requests.append(f"{handler.command} {path}")
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 6:
            repo, route = "/".join(parts[2:4]), parts[4]
            if repo not in self.repos:
                return self._send(handler, 404, b'{"error": "Repository not found"}',
                                  {"X-Error-Code": "RepoNotFound"}, body)
            if route == "revision":
                info = {"id": repo, "sha": COMMIT,
                        "siblings": [{"rfilename": f} for f in self._files(repo)]}
                return self._send(handler, 200, json.dumps(info).encode(), {}, body)
            if route == "tree":
                root = self.repos[repo]
                tree = [{"type": "file", "path": f, "size": (root / f).stat().st_size,
                         "oid": hashlib.sha1((root / f).read_bytes()).hexdigest()}
                        for f in self._files(repo)]
                return self._send(handler, 200, json.dumps(tree).encode(), {}, body)
        if len(parts) >= 5 and parts[2] == "resolve":
            repo, name = "/".join(parts[:2]), "/".join(parts[4:])
            if repo not in self.repos:
                return self._send(handler, 404, b"", {"X-Error-Code": "RepoNotFound"}, body)
            file = self.repos[repo] / name
            if not file.is_file():
                return self._send(handler, 404, b"", {"X-Error-Code": "EntryNotFound"}, body)
            data = file.read_bytes()
            etag = hashlib.sha256(data).hexdigest()
            return self._send(handler, 200, data, {"X-Repo-Commit": COMMIT,
                                                   "ETag": f'"{etag}"'}, body)
        self._send(handler, 404, b"", {}, body)

    @staticmethod
    def _send(handler, status: int, data: bytes, headers: dict, body: bool) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        if body:
            handler.wfile.write(data)
