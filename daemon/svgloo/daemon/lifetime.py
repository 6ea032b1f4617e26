"""How long a daemon that a client started on demand lives: until the last process that
used it has ended, and a short grace after (so the next `svgloo score --daemon` or a
restarted editor still finds it warm).

Opening one SVG in an editor used to start a daemon that lived 30 minutes after the editor
closed. The language server, the viewer and `svgloo score --daemon` talk to the daemon over
its Unix socket, one connection per request, so the daemon cannot tell "no client" from
"no request"; but the kernel tells it which process is on the other end of each
connection (SO_PEERCRED on Linux, LOCAL_PEERPID on macOS). The daemon remembers those
processes and, once every one of them has exited and it has nothing to do, ends after
the grace. The idle exit stays as the outer bound, for clients svgloo cannot see (TCP).
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import threading
import time

GRACE_ENV = "SVGLOO_DAEMON_CLIENT_GRACE"  # seconds; 0 turns the rule off
DEFAULT_GRACE_S = 60.0
EXIT_DEADLINE_S = 20.0  # a stopped daemon's interpreter exit may take this long, no more


def autostart_grace_s() -> float:
    """The grace of a daemon a client starts on demand: $SVGLOO_DAEMON_CLIENT_GRACE, else
    DEFAULT_GRACE_S (a value that is not a number: the default)."""
    try:
        return max(0.0, float(os.environ.get(GRACE_ENV, DEFAULT_GRACE_S)))
    except ValueError:
        return DEFAULT_GRACE_S


def peer_pid(conn: socket.socket) -> int | None:
    """The process on the other end of a Unix socket connection, or None where the
    platform does not say (or the connection is not a Unix socket)."""
    try:
        if conn.family != socket.AF_UNIX:
            return None
        if hasattr(socket, "SO_PEERCRED"):        # Linux: struct ucred {pid, uid, gid}
            pid, _uid, _gid = struct.unpack(
                "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                      struct.calcsize("3i")))
            return pid or None
        if sys.platform == "darwin":               # LOCAL_PEERPID at level SOL_LOCAL (0)
            return struct.unpack("i", conn.getsockopt(0, 0x002, struct.calcsize("i")))[0] \
                or None
    except OSError:
        return None
    return None


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # someone else's process: it exists
        return True
    return True


class ClientWatch:
    """The client processes a daemon has served, and since when none is left."""

    def __init__(self) -> None:
        self._pids: set[int] = set()
        self._lock = threading.Lock()
        self._gone_since: float | None = None

    def seen(self, conn: socket.socket) -> None:
        """Remember the process behind a new connection."""
        pid = peer_pid(conn)
        if pid is None or pid == os.getpid():
            return
        with self._lock:
            self._pids.add(pid)
            self._gone_since = None

    def alive(self) -> set[int]:
        """The remembered client processes still running (the others are forgotten)."""
        with self._lock:
            self._pids = {pid for pid in self._pids if process_alive(pid)}
            return set(self._pids)

    def gone_for(self) -> float:
        """Seconds since the last remembered client ended; 0 while one runs, and 0 when
        none was ever seen (then nothing is known, and only the idle exit applies)."""
        seen_any = self._gone_since is not None or bool(self._pids)
        if not seen_any or self.alive():
            return 0.0
        with self._lock:
            if self._gone_since is None:
                self._gone_since = time.monotonic()
            return time.monotonic() - self._gone_since


def exit_within(seconds: float = EXIT_DEADLINE_S, code: int = 0) -> threading.Thread:
    """End this process ``code`` in ``seconds`` unless it has ended by then.

    Called once the daemon has stopped (socket removed, lock released, pools killed). The
    interpreter's exit then joins threads without a limit: every process pool's own thread
    (concurrent.futures) and every non-daemon thread. One that cannot end (a pool's thread
    waiting on a worker that never saw its stop, a library's thread) would keep an idle
    daemon alive for ever, holding memory and its fork server. Past the deadline every
    thread's stack goes to stderr (the daemon's log: what was stuck) and the process ends
    at once; its render workers die with it (workers.py). Nothing is left to save then."""
    def expire() -> None:
        try:
            import faulthandler

            sys.stderr.write(f"svgloo daemon: exit did not finish within {seconds:g} s; "
                             "ending now. Threads still running:\n")
            sys.stderr.flush()
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            sys.stderr.flush()
        finally:
            os._exit(code)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True  # not one of the threads the exit waits for
    timer.name = "svgloo-exit-deadline"
    timer.start()
    return timer


__all__ = ["ClientWatch", "DEFAULT_GRACE_S", "EXIT_DEADLINE_S", "GRACE_ENV",
           "autostart_grace_s", "exit_within", "peer_pid", "process_alive"]
