"""A daemon started on demand ends with its clients (issue 40): once every process that
used it has exited, and a short grace has passed, it stops; while one runs (an editor's
language server), it stays. Before, it lived 30 minutes after the editor closed.

The test process itself never connects to the daemons here: it would count as a client
that is still running.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from svgloo.daemon.lifetime import ClientWatch, peer_pid, process_alive

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED"),
                                reason="needs SO_PEERCRED (Linux) to see client processes")

GRACE_S = 1.0


def start_daemon(sock: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(sock.parent / "cache"))
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "daemon", "start", "--foreground",
                             "--socket", str(sock), *extra], env=env,
                            stdout=subprocess.DEVNULL, stderr=open(sock.with_suffix(".log"), "ab"))
    deadline = time.monotonic() + 60
    while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None and sock.exists(), sock.with_suffix(".log").read_text()[-2000:]
    return proc


def client(sock: Path, stay_s: float) -> subprocess.Popen:
    """A process that asks the daemon for its status, then stays alive for ``stay_s``."""
    code = ("import sys, time; from svgloo.daemon.client import DaemonClient; "
            f"DaemonClient({str(sock)!r}, autostart=False, timeout=30).status(); "
            "print('asked', flush=True); "
            f"time.sleep({stay_s})")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "asked"
    return proc


def ended_within(proc: subprocess.Popen, seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


@pytest.mark.parametrize("grace", [True, False], ids=["auto-started", "started-by-hand"])
def test_the_daemon_ends_with_its_last_client(tmp_path, grace):
    sock = tmp_path / "d.sock"
    extra = ("--exit-after-clients", f"{GRACE_S:g}") if grace else ()
    daemon = start_daemon(sock, *extra)
    try:
        editor = client(sock, stay_s=4 * GRACE_S)
        # while the client runs, the daemon stays, past the grace
        assert not ended_within(daemon, 2.5 * GRACE_S)
        editor.wait(timeout=30)
        if grace:
            assert ended_within(daemon, GRACE_S + 8), "still running after its client ended"
            assert daemon.returncode == 0
            assert not sock.exists()
        else:  # no grace given (`svgloo daemon start` by hand): it stays
            assert not ended_within(daemon, GRACE_S + 3)
    finally:
        if daemon.poll() is None:
            daemon.terminate()
            daemon.wait(timeout=30)


def test_the_peer_of_a_unix_connection_is_known():
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert peer_pid(a) == os.getpid()
    tcp = socket.socket()
    with tcp:
        assert peer_pid(tcp) is None


def test_client_watch_counts_from_the_last_clients_end():
    watch = ClientWatch()
    assert watch.gone_for() == 0.0                 # nobody seen: nothing known
    server = socket.socket(socket.AF_UNIX)
    path = f"/tmp/svgloo-lifetime-{os.getpid()}.sock"
    try:
        server.bind(path)
        server.listen()
        runner = subprocess.Popen([sys.executable, "-c",
                                   "import socket, sys, time; s = socket.socket(socket.AF_UNIX); "
                                   "s.connect(sys.argv[1]); print('in', flush=True); "
                                   "sys.stdin.readline()", path],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        conn, _ = server.accept()
        with conn:
            watch.seen(conn)
            assert runner.stdout.readline().strip() == "in"
            assert watch.alive() == {runner.pid} and watch.gone_for() == 0.0
            runner.stdin.write("\n")
            runner.stdin.flush()
            runner.wait(timeout=30)
        assert not process_alive(runner.pid)
        first = watch.gone_for()
        time.sleep(0.2)
        assert watch.gone_for() >= first + 0.15
    finally:
        server.close()
        os.unlink(path)
