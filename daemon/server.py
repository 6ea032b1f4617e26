"""The svgloo daemon: HTTP/JSON over a Unix domain socket (and optionally 127.0.0.1 TCP).

Standard library only: ``http.server`` handlers on a threading Unix-socket server. Each
request runs on its own thread; analyses go through the ``ScoringService`` (one model worker,
a priority queue, the result cache). See docs/daemon.md for the API.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

from svgloo.engine.errors import SvglooError

log = logging.getLogger("svgloo.daemon")

API_VERSION = "v1"
MAX_BODY_OVERHEAD = 64 * 1024
SSE_KEEPALIVE_S = 10.0


def default_socket_path() -> Path:
    env = os.environ.get("SVGLOO_SOCKET")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_runtime_dir("svgloo")) / "daemon.sock"


def token_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".token")


def pid_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".pid")


def log_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".log")


def tcp_info_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".tcp")


def prepare_runtime_dir(socket_path: Path) -> None:
    """Create the socket's folder 0700 (when we create it, or when it is ours)."""
    d = socket_path.parent
    if not d.exists():
        d.mkdir(parents=True, mode=0o700)
    st = d.stat()
    if st.st_uid == os.getuid() and d.name == "svgloo":
        os.chmod(d, 0o700)


def socket_answers(path: Path, timeout: float = 1.0) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def server_bind(self):
        path = self.server_address
        old = os.umask(0o177)  # the socket is born 0600
        try:
            socketserver.UnixStreamServer.server_bind(self)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self.server_name, self.server_port = "localhost", 0


class TCPHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


class Handler(BaseHTTPRequestHandler):
    server_version = "svgloo-daemon"
    protocol_version = "HTTP/1.1"
    daemon_ref: "Daemon" = None  # set on the subclass per server
    tcp = False

    # -- plumbing ----------------------------------------------------------------------
    def address_string(self) -> str:
        return "unix" if not self.tcp else super().address_string()

    def log_message(self, fmt, *args) -> None:
        log.debug("%s %s", self.address_string(), fmt % args)

    def _send_json(self, status: int, obj: dict, headers: dict | None = None) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _error(self, status: int, kind: str, message: str, file: str | None = None,
               **extra) -> None:
        err = {"kind": kind, "file": file, "message": message, "line": None, "column": None}
        err.update(extra)
        self._send_json(status, {"error": err})

    def _authorized(self) -> bool:
        if not self.tcp:
            return True
        d = self.daemon_ref
        host = self.headers.get("Host", "")
        if host not in (f"127.0.0.1:{d.tcp_port}", f"localhost:{d.tcp_port}"):
            self._error(403, "forbidden", "bad Host header: only 127.0.0.1:PORT or "
                                          "localhost:PORT are accepted")
            return False
        auth = self.headers.get("Authorization", "")
        given = auth[7:] if auth.startswith("Bearer ") else ""
        if not given or not hmac.compare_digest(given.encode(), d.token.encode()):
            self._error(401, "unauthorized", "missing or wrong bearer token (see the "
                                             f"token file {token_path(d.socket_path)})")
            return False
        return True

    def _body(self) -> dict | None:
        length = self.headers.get("Content-Length")
        try:
            n = int(length or 0)
        except ValueError:
            self._error(400, "request", "bad Content-Length")
            return None
        limit = self.daemon_ref.service.limits.max_file_bytes * 2 + MAX_BODY_OVERHEAD
        if n > limit:
            self._error(413, "limit", f"request body is {n} bytes; the limit is {limit}")
            self.close_connection = True
            return None
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return {}
        try:
            body = json.loads(raw)
        except ValueError as exc:
            self._error(400, "request", f"the request body is not JSON: {exc}")
            return None
        if not isinstance(body, dict):
            self._error(400, "request", "the request body must be a JSON object")
            return None
        return body

    def _client_gone(self) -> bool:
        """True when the client closed its end (EOF while we wait for a result)."""
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            if not r:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    # -- routing -----------------------------------------------------------------------
    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        if not self._authorized():
            return
        route = urlparse(self.path).path.rstrip("/")
        routes = {
            ("GET", "/v1/status"): self.h_status,
            ("GET", "/v1/openapi.json"): self.h_openapi,
            ("POST", "/v1/score"): lambda: self.h_analyse("score"),
            ("POST", "/v1/structure"): lambda: self.h_analyse("structure"),
            ("POST", "/v1/watch"): self.h_watch,
            ("POST", "/v1/unwatch"): self.h_unwatch,
            ("GET", "/v1/events"): self.h_events,
            ("POST", "/v1/shutdown"): self.h_shutdown,
        }
        handler = routes.get((method, route))
        if handler is None:
            known = {r for m, r in routes}
            if route in known:
                self._error(405, "request", f"{method} is not allowed on {route}")
            else:
                self._error(404, "request", f"no such endpoint: {route} (see /v1/openapi.json)")
            return
        try:
            handler()
        except SvglooError as exc:
            self._send_json(422, {"error": exc.to_json()})
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:  # never let one request take the daemon down
            log.exception("internal error")
            self._error(500, "internal", f"{type(exc).__name__}: {exc}")

    # -- endpoints ---------------------------------------------------------------------
    def h_status(self):
        self._send_json(200, self.daemon_ref.status())

    def h_openapi(self):
        from svgloo.daemon.openapi import openapi_document

        self._send_json(200, openapi_document())

    def h_analyse(self, kind: str):
        body = self._body()
        if body is None:
            return
        if kind == "structure":
            try:
                import svgloo.structure.analysis  # noqa: F401
            except ModuleNotFoundError as exc:
                if exc.name and exc.name.startswith("svgloo.structure.analysis"):
                    self._error(501, "not_implemented", "structure analysis is not part of "
                                                        "this svgloo build")
                    return
                raise
        text = body.get("text")
        path = body.get("path")
        if text is not None and not isinstance(text, str):
            self._error(400, "request", "text must be a string")
            return
        if path is not None and not isinstance(path, str):
            self._error(400, "request", "path must be a string")
            return
        settings = body.get("settings") or {}
        if not isinstance(settings, dict):
            self._error(400, "request", "settings must be an object")
            return
        service = self.daemon_ref.service
        job = service.submit(kind, text=text, path=path, uri=body.get("uri"),
                            version=body.get("version"), settings=settings,
                            priority=body.get("priority", "interactive"))
        while not job.done.wait(0.05):
            if self._client_gone():
                service.cancel(job, "disconnected")
                self.close_connection = True
                return
        if job.error is not None:
            kind_ = job.error.get("kind")
            status = {"superseded": 409, "disconnected": 409, "shutdown": 503,
                      "internal": 500}.get(kind_, 422)
            self._send_json(status, {"error": job.error})
            return
        self._send_json(200, job.response(),
                        {"X-Svgloo-Cached": "1" if job.cached else "0"})

    def h_watch(self):
        body = self._body()
        if body is None:
            return
        folder = body.get("folder")
        if not isinstance(folder, str):
            self._error(400, "request", "give the folder to watch")
            return
        self._send_json(200, self.daemon_ref.service.watch(folder, body.get("settings")))

    def h_unwatch(self):
        body = self._body()
        if body is None:
            return
        folder = body.get("folder")
        if not isinstance(folder, str):
            self._error(400, "request", "give the folder to stop watching")
            return
        self._send_json(200, self.daemon_ref.service.unwatch(folder))

    def h_events(self):
        import queue as _queue

        service = self.daemon_ref.service
        q = service.subscribe()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            self.wfile.write(b": connected\n\n")
            self.wfile.flush()
            last = time.monotonic()
            while not self.daemon_ref.stopping.is_set():
                try:
                    ev = q.get(timeout=0.25)
                except _queue.Empty:
                    if self._client_gone():
                        return
                    if time.monotonic() - last > SSE_KEEPALIVE_S:
                        self.wfile.write(b": keepalive\n\n")
                        self.wfile.flush()
                        last = time.monotonic()
                    continue
                data = json.dumps(ev)
                self.wfile.write(f"event: {ev.get('event', 'message')}\ndata: {data}\n\n"
                                 .encode())
                self.wfile.flush()
                last = time.monotonic()
                if ev.get("event") == "shutdown":
                    return
        except (BrokenPipeError, ConnectionResetError, OSError):
            return
        finally:
            service.unsubscribe(q)

    def h_shutdown(self):
        self._send_json(200, {"stopping": True, "pid": os.getpid()})
        self.close_connection = True
        threading.Thread(target=self.daemon_ref.stop, daemon=True).start()


class Daemon:
    """Owns the service and the listening servers."""

    def __init__(self, socket_path: Path | str | None = None, tcp_port: int | None = None,
                 cache_dir: Path | str | None = None):
        from svgloo.daemon.service import ScoringService
        from svgloo.daemon.cache import ResultCache

        self.socket_path = Path(socket_path) if socket_path else default_socket_path()
        self.tcp_port = tcp_port
        self.token = ""
        self.service = ScoringService(ResultCache(cache_dir))
        self.stopping = threading.Event()
        self._servers: list = []
        self._stopped = threading.Event()

    def _handler(self, tcp: bool):
        return type("BoundHandler", (Handler,), {"daemon_ref": self, "tcp": tcp})

    def bind(self) -> None:
        path = self.socket_path
        prepare_runtime_dir(path)
        if path.exists() or path.is_symlink():
            if socket_answers(path):
                raise SystemExit(f"svgloo daemon: another daemon is already serving {path}")
            path.unlink()  # stale socket from a daemon that died
        from svgloo.engine.files import atomic_write_text

        # The token and port files exist before the socket does: a client that finds the
        # socket can rely on them.
        if self.tcp_port is not None:
            self.tcp = TCPHTTPServer(("127.0.0.1", self.tcp_port), self._handler(True))
            self.tcp_port = self.tcp.server_address[1]
            self.token = secrets.token_urlsafe(32)
            atomic_write_text(token_path(path), self.token + "\n", mode=0o600)
            atomic_write_text(tcp_info_path(path), f"{self.tcp_port}\n", mode=0o600)
            self._servers.append(self.tcp)
        atomic_write_text(pid_path(path), f"{os.getpid()}\n", mode=0o600)
        self.unix = UnixHTTPServer(str(path), self._handler(False))
        self._servers.append(self.unix)

    def status(self) -> dict:
        st = self.service.status()
        st["address"] = {"socket": str(self.socket_path),
                         "tcp": f"127.0.0.1:{self.tcp_port}" if self.tcp_port else None}
        st["api"] = API_VERSION
        from svgloo import __version__

        st["version"] = __version__
        return st

    def serve_forever(self) -> None:
        for srv in self._servers[1:]:
            threading.Thread(target=srv.serve_forever, daemon=True,
                             name="svgloo-tcp").start()
        try:
            self._servers[0].serve_forever(poll_interval=0.2)
        finally:
            self._cleanup()

    def stop(self) -> None:
        if self.stopping.is_set():
            return
        self.stopping.set()
        self.service.close()
        for srv in self._servers:
            srv.shutdown()

    def _cleanup(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        for srv in self._servers:
            try:
                srv.server_close()
            except OSError:
                pass
        for p in (self.socket_path, token_path(self.socket_path), pid_path(self.socket_path),
                  tcp_info_path(self.socket_path)):
            try:
                if p == self.socket_path and p.exists():
                    # only remove the socket if it is still ours
                    if p.stat().st_ino != getattr(self, "_inode", p.stat().st_ino):
                        continue
                p.unlink()
            except OSError:
                pass
        try:
            self.service.pool.close()
        except Exception:
            pass


def run_foreground(socket_path=None, tcp_port=None, cache_dir=None,
                   log_level: str = "INFO") -> int:
    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO),
                        format="%(asctime)s svgloo-daemon %(levelname)s %(message)s",
                        stream=sys.stderr)
    d = Daemon(socket_path, tcp_port, cache_dir)
    d.bind()
    d._inode = d.socket_path.stat().st_ino

    def on_signal(signum, frame):
        threading.Thread(target=d.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    log.info("listening on %s%s (pid %d, cache %s)", d.socket_path,
             f" and 127.0.0.1:{d.tcp_port}" if d.tcp_port else "", os.getpid(),
             d.service.cache.directory)
    print(f"svgloo daemon: listening on {d.socket_path}"
          + (f" and http://127.0.0.1:{d.tcp_port}" if d.tcp_port else ""), flush=True)
    d.serve_forever()
    log.info("stopped")
    return 0


__all__ = ["Daemon", "run_foreground", "default_socket_path", "token_path", "pid_path",
           "log_path", "socket_answers"]
