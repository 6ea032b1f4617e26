"""The svgloo daemon: HTTP/JSON over a Unix domain socket (and optionally 127.0.0.1 TCP).

Standard library only: ``http.server`` handlers on a threading Unix-socket server. Each
request runs on its own thread; analyses go through the ``ScoringService`` (a few analysis
threads sharing the render workers fairly, a priority queue, the result cache). See
docs/daemon.md for the API.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import selectors
import signal
import socket
import socketserver
import stat
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import cast
from urllib.parse import urlparse

from svgloo.daemon.lifetime import EXIT_DEADLINE_S, ClientWatch, exit_within
from svgloo.engine.errors import SvglooError

log = logging.getLogger("svgloo.daemon")

API_VERSION = "v1"
MAX_BODY_OVERHEAD = 64 * 1024
SSE_KEEPALIVE_S = 10.0
LISTEN_BACKLOG = 512          # editors + a batch of CLI clients connecting at once
MAX_IDLE_CONNECTIONS = 256    # past this, the longest-idle connection is closed
IDLE_TIMEOUT_S = 30.0         # a connection that sends no request for this long is closed
DEFAULT_IDLE_EXIT_S = 1800.0  # an auto-started daemon exits after this long without work


def default_socket_path() -> Path:
    env = os.environ.get("SVGLOO_SOCKET")
    if env:
        return Path(env)
    return runtime_dir() / "daemon.sock"


_said: set = set()


def _say_once(message: str) -> None:
    """One line per process (the daemon's log, else stderr through logging's last-resort
    handler), however many clients the process makes."""
    if message not in _said:
        _said.add(message)
        log.warning("%s", message)


def runtime_dir() -> Path:
    """The daemon's folder: ``$XDG_RUNTIME_DIR/svgloo``; without it (Linux, BSD) the same
    fallbacks as platformdirs - ``/run/user/<uid>`` when it is ours and private, else
    ``<temp dir>/runtime-<uid>`` - chosen here without platformdirs' checks, which raise
    a PermissionError (a traceback for the user) when that folder belongs to someone else,
    and warn on every run. ``prepare_runtime_dir`` (server) and ``check_daemon_folder``
    (client) refuse a folder that is not the user's in one line; which folder was chosen
    is said once."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "svgloo"
    if os.name == "posix" and sys.platform != "darwin":
        import tempfile

        uid = os.getuid()
        run_user = Path(f"/run/user/{uid}")
        try:
            st = os.lstat(run_user)
            private = (stat.S_ISDIR(st.st_mode) and st.st_uid == uid
                       and not st.st_mode & 0o077)
        except OSError:
            private = False
        base = run_user if private else Path(tempfile.gettempdir()) / f"runtime-{uid}"
        folder = base / "svgloo"
        _say_once(f"svgloo: XDG_RUNTIME_DIR is not set; the daemon's socket is in {folder}")
        return folder
    import warnings

    import platformdirs

    with warnings.catch_warnings():  # macOS, Windows: a per-user folder, nothing to say
        warnings.simplefilter("ignore")
        try:
            return Path(platformdirs.user_runtime_dir("svgloo"))
        except OSError as exc:
            raise RuntimeDirError(None, f"no usable folder for the daemon's socket: {exc} "
                                        "(set --socket or SVGLOO_SOCKET)") from None


def token_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".token")


def pid_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".pid")


def log_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".log")


def tcp_info_path(socket_path: Path) -> Path:
    return socket_path.with_name(socket_path.name + ".tcp")


class RuntimeDirError(SvglooError):
    """The socket's folder cannot be trusted (or used); the daemon does not start."""

    kind = "config"


def prepare_runtime_dir(socket_path: Path) -> None:
    """Create the socket's folder 0700, and refuse one another user could tamper with.

    When ``XDG_RUNTIME_DIR`` is unset the folder is ``<temp dir>/runtime-<uid>/svgloo``,
    and anyone could have created ``runtime-<uid>`` first: a folder (or the one above it)
    owned by another user, or writable by group or others, would let them stand in for
    the daemon. The folder above is checked before anything is created in it."""
    d = socket_path.parent
    uid = os.getuid()
    try:
        parent = os.lstat(d.parent)
    except FileNotFoundError:
        parent = None  # created below, by us
    except OSError as exc:
        raise RuntimeDirError(str(d), f"cannot check the folder above the daemon's: "
                                      f"{exc.strerror or exc}") from None
    # Its owner may rename or delete anything in it, sticky bit or not; others may when
    # it is writable to them without the sticky bit.
    if parent is not None and (parent.st_uid not in (uid, 0) or (
            parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX)):
        raise RuntimeDirError(str(d), f"the folder above the daemon's ({d.parent}, uid "
                                      f"{parent.st_uid}) can be changed by another user, "
                                      "who could replace it; refusing to use it (set "
                                      "XDG_RUNTIME_DIR or --socket)")
    try:
        if not os.path.lexists(d):
            d.mkdir(parents=True, mode=0o700)
        st = os.lstat(d)
    except OSError as exc:
        raise RuntimeDirError(str(d), f"cannot create the daemon's folder: "
                                      f"{exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise RuntimeDirError(str(d), "the daemon's folder is a symlink or not a folder; "
                                      "refusing to use it")
    if st.st_uid != uid:
        raise RuntimeDirError(str(d), f"the daemon's folder belongs to uid {st.st_uid}, not "
                                      f"to you (uid {uid}); refusing to use it (set "
                                      "XDG_RUNTIME_DIR or --socket)")
    if st.st_mode & 0o022:
        if d.name == "svgloo":  # our own folder with loose bits: tighten it
            os.chmod(d, 0o700)
        else:
            raise RuntimeDirError(str(d), "the daemon's folder is writable by other users; "
                                          "refusing to use it (chmod 700 it, or set "
                                          "--socket)")


def check_daemon_folder(socket_path: Path) -> None:
    """What a client checks before it sends anything: the socket's folder is the user's
    and nobody else can write to it, so whoever answers there was put there by the user
    (RuntimeDirError, one line, otherwise)."""
    d = Path(socket_path).parent
    try:
        st = os.stat(d)
    except OSError as exc:
        raise RuntimeDirError(str(d), f"cannot check the daemon's folder: "
                                      f"{exc.strerror or exc}") from None
    uid = os.getuid()
    if st.st_uid != uid:
        raise RuntimeDirError(str(d), f"the daemon's folder belongs to uid {st.st_uid}, not "
                                      f"to you (uid {uid}); not sending anything to the "
                                      "socket in it (set XDG_RUNTIME_DIR or --socket)")
    if st.st_mode & 0o022:
        raise RuntimeDirError(str(d), "the daemon's folder is writable by other users; not "
                                      "sending anything to the socket in it (chmod 700 it, "
                                      "or set --socket)")


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of a connected Unix socket (Linux:
    SO_PEERCRED); None where the platform does not say."""
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def check_daemon_peer(sock: socket.socket, socket_path: Path) -> None:
    """Refuse (RuntimeDirError, one line) a daemon run by another user: a document is
    sent only to a process of the user's own."""
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        raise RuntimeDirError(str(socket_path), f"the process answering on this socket runs "
                                                f"as uid {uid}, not as you (uid "
                                                f"{os.getuid()}); not sending anything to it")


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    """Open one of the daemon's own files, never through a symlink someone planted."""
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                   0o600)


def acquire_daemon_lock(socket_path: Path) -> int | None:
    """Lock the pid file for the daemon's whole life: one daemon per socket. Returns the
    descriptor (keep it open), or None when another daemon holds it. The file is never
    removed, so the lock is always on the same inode."""
    import fcntl

    fd = open_private(pid_path(socket_path), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def daemon_alive(socket_path: Path) -> bool:
    """True while a daemon holds the socket's lock (it may be too busy to accept)."""
    try:
        import fcntl
    except ImportError:
        return socket_answers(socket_path)
    try:
        fd = os.open(pid_path(socket_path), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


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


class BoundedConnections:
    """Mixin for the listening servers: a deep listen backlog, and at most
    ``MAX_IDLE_CONNECTIONS`` idle connections (the longest-idle one is closed when a new
    one arrives past that), so idle or flooding clients cannot starve real requests."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True
    block_on_close = False

    def _idle_table(self) -> dict:
        if not hasattr(self, "_idle"):
            self._idle: dict = {}
            self._idle_lock = threading.Lock()
        return self._idle

    def mark_idle(self, conn, idle: bool) -> None:
        table = self._idle_table()
        with self._idle_lock:
            if idle:
                table[conn] = time.monotonic()
            else:
                table.pop(conn, None)

    def process_request(self, request, client_address):
        table = self._idle_table()
        with self._idle_lock:
            while len(table) >= MAX_IDLE_CONNECTIONS:
                oldest = min(table, key=table.get)
                del table[oldest]
                try:
                    oldest.shutdown(socket.SHUT_RDWR)  # its handler sees EOF and ends
                except OSError:
                    pass
            table[request] = time.monotonic()
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        self.mark_idle(request, False)
        super().shutdown_request(request)


class UnixHTTPServer(BoundedConnections, socketserver.ThreadingMixIn,
                     socketserver.UnixStreamServer):
    def server_bind(self):
        path = self.server_address
        old = os.umask(0o177)  # the socket is born 0600
        try:
            socketserver.UnixStreamServer.server_bind(self)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self.server_name, self.server_port = "localhost", 0


class TCPHTTPServer(BoundedConnections, ThreadingHTTPServer):
    pass


class Handler(BaseHTTPRequestHandler):
    server_version = "svgloo-daemon"
    protocol_version = "HTTP/1.1"
    daemon_ref: Daemon = None  # type: ignore[assignment]  # set on the subclass per server
    tcp = False
    timeout = IDLE_TIMEOUT_S  # per socket operation: an idle or stalled client is dropped
    _selector = None

    def setup(self):
        super().setup()
        if not self.tcp:  # which process connected: its end ends an auto-started daemon
            self.daemon_ref.clients.seen(self.connection)

    @property
    def connections(self) -> BoundedConnections:
        return cast(BoundedConnections, self.server)  # both server classes are

    def handle_one_request(self):
        self.connections.mark_idle(self.connection, True)  # waiting for the request line
        super().handle_one_request()

    def parse_request(self) -> bool:
        self.connections.mark_idle(self.connection, False)
        return super().parse_request()

    def finish(self):
        if self._selector is not None:
            self._selector.close()
        super().finish()

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
            if n < 0:
                raise ValueError(n)
        except ValueError:
            self._error(400, "request", "bad Content-Length")
            self.close_connection = True
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
        """True when the client closed its end (EOF while we wait for a result). Uses a
        selector (epoll/kqueue/poll), not select(): descriptors past 1024 work."""
        try:
            if self._selector is None:
                self._selector = selectors.DefaultSelector()
                self._selector.register(self.connection, selectors.EVENT_READ)
            if not self._selector.select(0):
                return False
            return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
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
            ("POST", "/v1/close"): self.h_close,
            ("GET", "/v1/events"): self.h_events,
            ("POST", "/v1/shutdown"): self.h_shutdown,
        }
        handler = routes.get((method, route))
        self.daemon_ref.request_started()
        try:
            self._run(method, route, routes, handler)
        finally:
            self.daemon_ref.request_finished()

    def _run(self, method, route, routes, handler) -> None:
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
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
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
        problem = request_problem(body)
        if problem:
            self._error(400, "request", problem)
            return
        settings = body.get("settings") or {}
        service = self.daemon_ref.service
        job = service.submit(kind, text=body.get("text"), path=body.get("path"),
                             uri=body.get("uri"), version=body.get("version"),
                             settings=settings, priority=body.get("priority", "interactive"))
        while not job.done.wait(0.05):
            if self._client_gone():
                service.cancel(job, "disconnected")
                self.close_connection = True
                return
        if job.error is not None:
            kind_ = job.error.get("kind")
            status = {"superseded": 409, "disconnected": 409, "closed": 409, "shutdown": 503,
                      "internal": 500}.get(kind_ or "", 422)
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

    def h_close(self):
        """The editor closed a document: stop its analysis (nobody will read it)."""
        body = self._body()
        if body is None:
            return
        uri = body.get("uri")
        if not isinstance(uri, str) or not uri:
            self._error(400, "request", "give the uri of the document that was closed")
            return
        self._send_json(200, self.daemon_ref.service.close_document(uri))

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


def request_problem(body: dict) -> str | None:
    """What is wrong with an analysis request's shape (None when nothing): a malformed
    request is a 400 with a reason, never a 500 from deep inside."""
    for name in ("text", "path", "uri"):
        value = body.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string"
    for name in ("text", "path", "uri"):
        value = body.get(name)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return f"{name} is not valid Unicode (a lone surrogate)"
            if name != "text" and "\0" in value:
                return f"{name} contains a NUL character"
    version = body.get("version")
    if version is not None and (isinstance(version, bool)
                                or not isinstance(version, (int, str))):
        return "version must be an integer or a string"
    priority = body.get("priority", "interactive")
    if not isinstance(priority, str):
        return "priority must be a string"
    settings = body.get("settings")
    if settings is not None and not isinstance(settings, dict):
        return "settings must be an object"
    return None


class Daemon:
    """Owns the service and the listening servers."""

    def __init__(self, socket_path: Path | str | None = None, tcp_port: int | None = None,
                 cache_dir: Path | str | None = None, idle_exit_s: float | None = None,
                 limits=None, client_grace_s: float | None = None):
        from svgloo.daemon.cache import ResultCache
        from svgloo.daemon.service import ScoringService
        from svgloo.engine.limits import DEFAULT_LIMITS

        self.socket_path = Path(socket_path) if socket_path else default_socket_path()
        self.tcp_port = tcp_port
        self.token = ""
        self.service = ScoringService(ResultCache(cache_dir), limits=limits or DEFAULT_LIMITS)
        self.stopping = threading.Event()
        self._servers: list = []
        self._stopped = threading.Event()
        self._lock_fd: int | None = None
        self.idle_exit_s = idle_exit_s
        # auto-started: end this long after the last client process has (lifetime.py)
        self.client_grace_s = client_grace_s
        self.clients = ClientWatch()
        self._active = 0
        self._active_lock = threading.Lock()
        self._last_active = time.monotonic()

    def request_started(self) -> None:
        with self._active_lock:
            self._active += 1

    def request_finished(self) -> None:
        with self._active_lock:
            self._active -= 1
            self._last_active = time.monotonic()

    def idle_for(self) -> float:
        """Seconds with no request open, nothing queued or running and no watcher."""
        svc = self.service
        with self._active_lock:
            if self._active or svc.busy() or svc.watching():
                self._last_active = time.monotonic()
                return 0.0
            return time.monotonic() - self._last_active

    def _exit_when_idle(self) -> None:
        bounds = [b for b in (self.idle_exit_s, self.client_grace_s) if b]
        while not self.stopping.wait(min(5.0, max(0.05, min(bounds) / 4))):
            idle = self.idle_for()
            if self.idle_exit_s and idle >= self.idle_exit_s:
                log.info("idle for %g s: stopping", self.idle_exit_s)
                self.stop()
                return
            if self.client_grace_s and idle > 0 and \
                    self.clients.gone_for() >= self.client_grace_s:
                log.info("every client has ended, %g s ago: stopping", self.client_grace_s)
                self.stop()
                return

    def _handler(self, tcp: bool):
        return type("BoundHandler", (Handler,), {"daemon_ref": self, "tcp": tcp})

    def bind(self) -> None:
        """Take the daemon lock, then bind. Raises RuntimeDirError (a one-line reason) or
        SystemExit when another daemon serves the socket; a live socket is never removed."""
        path = self.socket_path
        prepare_runtime_dir(path)
        try:
            self._lock_fd = acquire_daemon_lock(path)
        except OSError as exc:
            raise RuntimeDirError(str(pid_path(path)), f"cannot open the daemon lock file: "
                                                       f"{exc.strerror or exc}") from None
        if self._lock_fd is None:
            raise SystemExit(f"svgloo daemon: another daemon is already serving {path}")
        try:
            self._bind_locked(path)
        except OSError as exc:
            self._cleanup()
            raise RuntimeDirError(str(path), f"cannot start the daemon: "
                                             f"{exc.strerror or exc}") from None
        except BaseException:
            self._cleanup()
            raise

    def _bind_locked(self, path: Path) -> None:
        if path.exists() or path.is_symlink():
            if socket_answers(path):  # a daemon from before the lock existed
                raise SystemExit(f"svgloo daemon: another daemon is already serving {path}")
            path.unlink()  # stale: we hold the lock, so no live daemon owns it
        from svgloo.engine.reading.files import atomic_write_text

        # The token and port files exist before the socket does: a client that finds the
        # socket can rely on them.
        if self.tcp_port is not None:
            self.tcp = TCPHTTPServer(("127.0.0.1", self.tcp_port), self._handler(True))
            self._servers.append(self.tcp)
            self.tcp_port = self.tcp.server_address[1]
            self.token = secrets.token_urlsafe(32)
            atomic_write_text(token_path(path), self.token + "\n", mode=0o600,
                              follow_symlinks=False)
            atomic_write_text(tcp_info_path(path), f"{self.tcp_port}\n", mode=0o600,
                              follow_symlinks=False)
        assert self._lock_fd is not None  # taken above
        os.ftruncate(self._lock_fd, 0)
        os.pwrite(self._lock_fd, f"{os.getpid()}\n".encode(), 0)
        self.unix = UnixHTTPServer(str(path), self._handler(False))
        self._servers.insert(0, self.unix)
        self._inode = path.stat().st_ino

    def status(self) -> dict:
        st = self.service.status()
        st["address"] = {"socket": str(self.socket_path),
                         "tcp": f"127.0.0.1:{self.tcp_port}" if self.tcp_port else None}
        st["api"] = API_VERSION
        from svgloo.engine.version import __version__

        st["version"] = __version__
        return st

    def serve_forever(self) -> None:
        if self.idle_exit_s or self.client_grace_s:
            threading.Thread(target=self._exit_when_idle, daemon=True,
                             name="svgloo-idle-exit").start()
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
        if self._lock_fd is not None:  # only the lock holder removes anything
            try:
                if os.stat(self.socket_path).st_ino == getattr(self, "_inode", None):
                    os.unlink(self.socket_path)  # still ours
            except OSError:
                pass
            for p in (token_path(self.socket_path), tcp_info_path(self.socket_path)):
                try:
                    p.unlink()
                except OSError:
                    pass
            try:
                os.ftruncate(self._lock_fd, 0)
                os.close(self._lock_fd)  # releases the lock; the file stays
            except OSError:
                pass
            self._lock_fd = None
        try:
            self.service.pool.close()
        except Exception:  # noqa: BLE001 - shutting down: a failed close must not stop the rest
            pass


def raise_open_files_limit() -> None:
    """Let the daemon hold as many descriptors as the hard limit allows (connections)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else 65536
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


def run_foreground(socket_path=None, tcp_port=None, cache_dir=None,
                   log_level: str = "INFO", idle_exit_s: float | None = None,
                   limits=None, client_grace_s: float | None = None) -> int:
    """The daemon process's main (``svgloo daemon start --foreground``). Once it returns
    the process ends within ``EXIT_DEADLINE_S`` (``lifetime.exit_within``): call it only
    in a process that is to end with the daemon."""
    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO),
                        format="%(asctime)s svgloo-daemon %(levelname)s %(message)s",
                        stream=sys.stderr)
    raise_open_files_limit()
    if hasattr(signal, "SIGUSR1"):
        # `kill -USR1 <pid>` writes every thread's stack to the daemon's log: what a stuck
        # daemon is waiting for, without stopping it.
        import faulthandler

        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    d = Daemon(socket_path, tcp_port, cache_dir, idle_exit_s=idle_exit_s, limits=limits,
               client_grace_s=client_grace_s)
    try:
        d.bind()
    except SvglooError as exc:
        print(f"svgloo daemon: error: {exc}", file=sys.stderr, flush=True)
        return 1

    def on_signal(signum, frame):
        threading.Thread(target=d.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    log.info("listening on %s%s (pid %d, cache %s%s)", d.socket_path,
             f" and 127.0.0.1:{d.tcp_port}" if d.tcp_port else "", os.getpid(),
             d.service.cache.directory,
             (f", exits after {idle_exit_s:g} s idle" if idle_exit_s else "")
             + (f", {client_grace_s:g} s after its last client" if client_grace_s else ""))
    print(f"svgloo daemon: listening on {d.socket_path}"
          + (f" and http://127.0.0.1:{d.tcp_port}" if d.tcp_port else ""), flush=True)
    d.serve_forever()
    log.info("stopped")
    exit_within(EXIT_DEADLINE_S)  # an idle daemon always exits, whatever a thread waits for
    return 0


__all__ = ["Daemon", "run_foreground", "default_socket_path", "token_path", "pid_path",
           "log_path", "socket_answers", "daemon_alive", "prepare_runtime_dir",
           "RuntimeDirError", "open_private", "runtime_dir", "check_daemon_folder",
           "check_daemon_peer", "peer_uid"]
