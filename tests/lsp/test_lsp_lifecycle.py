"""The language server ends promptly, with its render workers, however its client leaves:
``shutdown`` + ``exit`` while scoring, stdin closed, or the client process gone.

Raw JSON-RPC over pipes (no client library), against the real ``svgloo lsp`` process. The
document is one path of 2000 subpaths, which takes minutes to score on this machine, so
"ended" means "the work was cancelled", not "the work was done"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

# Far less than the minutes the document takes, far more than a prompt exit needs.
EXIT_BOUND_S = 30


def heavy_svg(n: int = 2000) -> str:
    squares = "".join(f"M{(i % 50) * 2} {(i // 50) * 2}h1v1h-1z" for i in range(n))
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 80">'
            f'<path fill="#123" d="{squares}"/></svg>')


def send(proc: subprocess.Popen, message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc: the render workers, forkserver...)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - out
        out |= frontier
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def start_scoring(tmp_path: Path, client_pid: int | None = None) -> tuple[subprocess.Popen, set]:
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "lsp"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp_path)
    send(proc, {"id": 1, "method": "initialize", "params": {
        "processId": client_pid if client_pid is not None else os.getpid(),
        "rootUri": tmp_path.as_uri(), "capabilities": {},
        "initializationOptions": {"useDaemon": False, "renderSize": 384}}})
    send(proc, {"method": "initialized", "params": {}})
    send(proc, {"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": (tmp_path / "heavy.svg").as_uri(), "languageId": "svg", "version": 1,
        "text": heavy_svg()}}})
    # Wait until render workers run: the server is busy scoring.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(descendants(proc.pid)) < 2:
        time.sleep(0.2)
    kids = descendants(proc.pid)
    assert kids, "the server never started its render workers"
    time.sleep(1.0)
    return proc, descendants(proc.pid)


def assert_all_gone(proc: subprocess.Popen, kids: set[int]) -> int:
    try:
        code = proc.wait(timeout=EXIT_BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pytest.fail(f"the server was still running {EXIT_BOUND_S} s after its client left")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in kids):
        time.sleep(0.2)
    assert not [p for p in kids if alive(p)], "render workers outlived the server"
    return code


def test_exit_while_scoring_ends_the_work(tmp_path):
    proc, kids = start_scoring(tmp_path)
    send(proc, {"id": 2, "method": "shutdown"})
    send(proc, {"method": "exit"})
    assert assert_all_gone(proc, kids) == 0


def test_closed_stdin_ends_the_server(tmp_path):
    proc, kids = start_scoring(tmp_path)
    proc.stdin.close()
    assert assert_all_gone(proc, kids) == 1  # no shutdown request: exit code 1


def test_dead_client_process_ends_the_server(tmp_path):
    client = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        proc, kids = start_scoring(tmp_path, client_pid=client.pid)
    finally:
        client.kill()
        client.wait()
    try:
        assert assert_all_gone(proc, kids) == 1
    finally:
        proc.stdin.close()


def test_tcp_mode_is_refused_in_one_line_and_listens_nowhere():
    """`svgloo lsp --tcp` listened with no token (issue 35); an LSP stream has no place for
    one, so the mode is gone: one line, exit 2, and nothing accepts a connection."""
    import socket

    with socket.socket() as probe:   # a free port to ask for
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "lsp", "--tcp", "--port",
                             str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("svgloo lsp --tcp is still running: it serves TCP")
    assert proc.returncode == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("svgloo: error: --tcp was removed")
    with socket.socket() as client:
        assert client.connect_ex(("127.0.0.1", port)) != 0
