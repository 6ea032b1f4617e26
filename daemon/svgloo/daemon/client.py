"""Client library for the svgloo daemon (used by the CLI, the language server, the viewer).

    from svgloo.daemon.client import DaemonClient, DaemonUnavailable
    c = DaemonClient()                      # default socket; starts a daemon if none runs
    result = c.score(path="/abs/a.svg")     # svgloo.score/1 dict (+ "daemon": {...})
    result = c.score(text=buffer, uri="file:///abs/a.svg", version=7)

Before anything is sent, the client checks that the socket's folder is the user's and
private, and (Linux) that the process answering runs as the user: ``UntrustedDaemon``
otherwise (a ``DaemonUnavailable``: nothing was sent).

Errors: ``DaemonUnavailable`` when no daemon answers and none could be started; the
engine's ``SvglooError`` subclasses (InputError, LimitError, …) for rejected documents;
``Superseded`` when a newer version of the same document replaced this request.
"""

from __future__ import annotations

import errno
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from svgloo.engine.errors import ConfigError, InputError, LimitError, RenderError, SvglooError

START_TIMEOUT_S = 60.0
BUSY_TIMEOUT_S = 60.0  # how long a client keeps retrying a daemon too busy to accept
IDLE_EXIT_ENV = "SVGLOO_DAEMON_IDLE_EXIT"  # seconds; an auto-started daemon's idle exit


def autostart_idle_exit_s() -> float:
    from svgloo.daemon.server import DEFAULT_IDLE_EXIT_S

    try:
        return float(os.environ.get(IDLE_EXIT_ENV, DEFAULT_IDLE_EXIT_S))
    except ValueError:
        return DEFAULT_IDLE_EXIT_S


class DaemonUnavailable(Exception):
    """No daemon answers on the socket and none could be started."""


class UntrustedDaemon(DaemonUnavailable):
    """Something answers on the socket, but the folder or the process is not the user's:
    nothing is sent to it."""


class DaemonError(Exception):
    """The daemon answered with an error that is not about the document."""

    def __init__(self, status: int, error: dict):
        super().__init__(f"{error.get('kind')}: {error.get('message')}")
        self.status = status
        self.error = error
        self.kind = error.get("kind")


class Superseded(DaemonError):
    """A newer version of the same document replaced this request (or it was cancelled:
    the document was closed, the daemon stopped)."""


_ERROR_CLASSES = {"input": InputError, "limit": LimitError, "render": RenderError,
                  "config": ConfigError}


def _raise_for(status: int, payload: dict):
    err = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(err, dict):
        raise DaemonError(status, {"kind": "protocol", "message": f"HTTP {status}"})
    cls = _ERROR_CLASSES.get(err.get("kind", ""))
    if cls is not None:
        raise cls(err.get("file"), err.get("message", ""), line=err.get("line"),
                  column=err.get("column"))
    if err.get("kind") in ("superseded", "disconnected", "closed", "shutdown"):
        raise Superseded(status, err)
    raise DaemonError(status, err)


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.timeout is not None:
            s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except BaseException:
            s.close()
            raise
        self.sock = s

    def check_peer(self) -> None:
        """UntrustedDaemon unless the socket's folder and the answering process are the
        user's (checked after connecting, before the first byte is sent)."""
        from svgloo.daemon.server import (RuntimeDirError, check_daemon_folder,
                                          check_daemon_peer)

        try:
            check_daemon_folder(Path(self._path))
            check_daemon_peer(self.sock, Path(self._path))
        except RuntimeDirError as exc:
            raise UntrustedDaemon(str(exc)) from None


def _lock(path: Path):
    """An exclusive advisory lock held while starting a daemon (None where unsupported)."""
    try:
        import fcntl
    except ImportError:
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _unlock(fd) -> None:
    if fd is None:
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def start_daemon(socket_path: Path, extra_args: list[str] | None = None,
                 timeout: float = START_TIMEOUT_S, env: dict | None = None,
                 idle_exit_s: float | None = None) -> int:
    """Start ``svgloo daemon start --foreground`` detached (new session) and wait until
    the socket answers. Returns the pid, or -1 when a daemon was already there.

    Two locks keep it to one daemon: clients serialise starting on ``<socket>.lock``, and
    a daemon holds ``<socket>.pid`` locked for its whole life, so a daemon that is alive
    but too busy to accept is waited for, never replaced. The daemon itself removes a
    stale socket (it can tell: it holds the lock)."""
    from svgloo.daemon.lifetime import autostart_grace_s
    from svgloo.daemon.server import (daemon_alive, log_path, open_private,
                                      prepare_runtime_dir, socket_answers)

    prepare_runtime_dir(socket_path)
    fd = _lock(socket_path.with_name(socket_path.name + ".lock"))
    try:
        deadline = time.monotonic() + timeout
        if daemon_alive(socket_path) or socket_answers(socket_path):
            while time.monotonic() < deadline and daemon_alive(socket_path):
                if socket_answers(socket_path, timeout=0.5):
                    return -1  # someone else started it
                time.sleep(0.05)
        cmd = [sys.executable, "-m", "svgloo", "daemon", "start", "--foreground",
               "--socket", str(socket_path)] + list(extra_args or [])
        if idle_exit_s is None:   # started on demand by a client (an editor, --daemon)
            idle_exit_s = autostart_idle_exit_s()
            grace = autostart_grace_s()
            if grace and "--exit-after-clients" not in cmd:
                cmd += ["--exit-after-clients", f"{grace:g}"]
        if idle_exit_s and "--idle-exit" not in cmd:
            cmd += ["--idle-exit", f"{idle_exit_s:g}"]
        logf = os.fdopen(open_private(log_path(socket_path)), "ab")
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                    start_new_session=True, close_fds=True,
                                    env=env, cwd="/")
        finally:
            logf.close()
        while time.monotonic() < deadline:
            exited = proc.poll() is not None
            if exited and not daemon_alive(socket_path):
                raise DaemonUnavailable(
                    f"the daemon exited with code {proc.returncode} while starting; see "
                    f"{log_path(socket_path)}")
            if socket_answers(socket_path, timeout=0.5):
                return -1 if exited else proc.pid  # exited: another daemon won the lock
            time.sleep(0.05)
        raise DaemonUnavailable(f"the daemon did not answer on {socket_path} within "
                                f"{timeout:g} s; see {log_path(socket_path)}")
    finally:
        _unlock(fd)


def _busy(exc: OSError) -> bool:
    """The daemon is there but its listen queue is full (EAGAIN on a Unix socket)."""
    return exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR)


class DaemonClient:
    def __init__(self, socket_path: str | Path | None = None, autostart: bool = True,
                 timeout: float | None = 600.0):
        from svgloo.daemon.server import default_socket_path

        self.socket_path = Path(socket_path) if socket_path else default_socket_path()
        self.autostart = autostart
        self.timeout = timeout

    # -- transport ---------------------------------------------------------------------
    def _connect(self, timeout: float | None = None) -> _UnixConnection:
        """Connect, retrying with backoff while a daemon is alive but busy; start one only
        when none holds the socket's lock (and autostart is on)."""
        from svgloo.daemon.server import RuntimeDirError, daemon_alive

        deadline = time.monotonic() + BUSY_TIMEOUT_S
        delay = 0.01
        started = False
        while True:
            conn = _UnixConnection(str(self.socket_path), timeout or self.timeout)
            try:
                conn.connect()
            except OSError as exc:
                conn.close()
                error = exc
            else:
                try:
                    conn.check_peer()
                except BaseException:
                    conn.close()
                    raise
                return conn
            alive = _busy(error) or daemon_alive(self.socket_path)
            if not alive and (not self.autostart or started):
                raise DaemonUnavailable(f"no svgloo daemon on {self.socket_path} ({error})")
            if time.monotonic() > deadline:
                raise DaemonUnavailable(f"the svgloo daemon on {self.socket_path} stayed too "
                                        f"busy to accept for {BUSY_TIMEOUT_S:g} s ({error})")
            if alive:
                time.sleep(delay * (0.5 + random.random()))  # jitter spreads the retries
                delay = min(delay * 2, 0.5)
                continue
            try:
                start_daemon(self.socket_path)
            except (OSError, RuntimeDirError) as exc:
                raise DaemonUnavailable(f"cannot start a daemon on {self.socket_path}: "
                                        f"{exc}") from None
            started = True

    def request(self, method: str, path: str, body: dict | None = None,
                timeout: float | None = None) -> tuple[int, dict]:
        conn = self._connect(timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            headers = {"Content-Type": "application/json"} if data is not None else {}
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (ConnectionError, http.client.HTTPException, socket.timeout) as exc:
                raise DaemonUnavailable(f"the daemon on {self.socket_path} did not answer "
                                        f"({type(exc).__name__}: {exc})") from None
            try:
                payload = json.loads(raw) if raw else {}
            except ValueError:
                payload = {"error": {"kind": "protocol", "message": raw[:200].decode(
                    "utf-8", "replace")}}
            return resp.status, payload
        finally:
            conn.close()

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        status, payload = self.request(method, path, body)
        if status >= 400:
            _raise_for(status, payload)
        return payload

    # -- API ---------------------------------------------------------------------------
    def _analyse(self, endpoint: str, text, path, uri, version, settings, priority) -> dict:
        body: dict = {"settings": dict(settings or {}), "priority": priority}
        if text is not None:
            body["text"] = text.decode("utf-8") if isinstance(text, bytes) else text
        if path is not None:
            body["path"] = os.path.abspath(path)
        if uri is not None:
            body["uri"] = uri
        if version is not None:
            body["version"] = version
        ref = body["settings"].get("reference")
        if ref:
            body["settings"]["reference"] = os.path.abspath(ref)
        return self._call("POST", endpoint, body)

    def score(self, text=None, path=None, uri=None, version=None, settings: dict | None = None,
              priority: str = "interactive") -> dict:
        return self._analyse("/v1/score", text, path, uri, version, settings, priority)

    def score_quick(self, text=None, path=None, uri=None, version=None,
                    settings: dict | None = None, priority: str = "interactive") -> dict:
        """The first of the two steps: the scoring without the removal proof (every
        unit's removal "unchecked"); ``prove`` next gives the proof of the same text."""
        return self.score(text, path, uri, version, {**(settings or {}), "prove": False},
                          priority)

    def prove(self, text=None, path=None, uri=None, version=None,
              settings: dict | None = None, priority: str = "interactive") -> dict:
        """The second step: the scoring with the removal proof. After ``score_quick`` of
        the same text and settings the daemon proves the run it kept (the leave-one-out is
        not done again); a newer version of the same ``uri`` cancels it."""
        return self.score(text, path, uri, version, {**(settings or {}), "prove": True},
                          priority)

    def structure(self, text=None, path=None, uri=None, version=None,
                  settings: dict | None = None, priority: str = "interactive") -> dict:
        return self._analyse("/v1/structure", text, path, uri, version, settings, priority)

    def status(self) -> dict:
        return self._call("GET", "/v1/status")

    def openapi(self) -> dict:
        return self._call("GET", "/v1/openapi.json")

    def watch(self, folder: str, settings: dict | None = None) -> dict:
        return self._call("POST", "/v1/watch", {"folder": os.path.abspath(folder),
                                                "settings": settings or {}})

    def unwatch(self, folder: str) -> dict:
        return self._call("POST", "/v1/unwatch", {"folder": os.path.abspath(folder)})

    def close_document(self, uri: str) -> dict:
        """The editor closed ``uri``: the daemon stops analysing it."""
        return self._call("POST", "/v1/close", {"uri": uri})

    def shutdown(self) -> dict:
        return self._call("POST", "/v1/shutdown")

    def events(self, timeout: float | None = None):
        """Iterate over server-sent events as dicts ({"event": "result", "path", ...})."""
        conn = self._connect(timeout)
        try:
            conn.request("GET", "/v1/events")
            resp = conn.getresponse()
            if resp.status != 200:
                _raise_for(resp.status, json.loads(resp.read() or b"{}"))
            data: list[str] = []
            while True:
                line = resp.fp.readline()
                if not line:
                    return
                text = line.decode("utf-8").rstrip("\r\n")
                if text.startswith("data:"):
                    data.append(text[5:].lstrip())
                elif text == "" and data:
                    yield json.loads("\n".join(data))
                    data = []
        finally:
            conn.close()


def settings_dict(settings) -> dict:
    """ScoreSettings (or a dict) -> the JSON settings dict the daemon takes."""
    if isinstance(settings, dict):
        return dict(settings)
    d = asdict(settings)
    d.pop("limits", None)
    return d


def score_via_daemon(path: str, settings, client: DaemonClient | None = None) -> dict:
    """Score a file through the daemon (started on demand). Raises DaemonUnavailable
    when none is up and none can be started, SvglooError for a rejected document."""
    client = client or DaemonClient()
    s = settings_dict(settings)
    if s.get("reference"):
        s["reference"] = os.path.abspath(s["reference"])
    try:
        return client.score(path=os.path.abspath(path), settings=s, priority="batch")
    except Superseded as exc:
        raise DaemonUnavailable(f"the daemon cancelled the request ({exc})") from None
    except DaemonError as exc:
        if exc.kind in ("internal", "protocol", "shutdown"):
            raise DaemonUnavailable(str(exc)) from None
        raise


__all__ = ["DaemonClient", "DaemonUnavailable", "UntrustedDaemon", "DaemonError", "Superseded",
           "score_via_daemon", "start_daemon", "settings_dict", "SvglooError"]
