"""SIGTERM stops every long command within two seconds and leaves no process running
(issue 35: `svgloo batch` waited over 30 s on its workers and left 8 processes behind).

Each command runs as a real program in a session of its own; it is terminated once it has
started worker processes, and every process seen below it must be gone afterwards. They
are found by parent through /proc, not by process group: Chromium starts its own session."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import corpus_files

STOPS_WITHIN_S = 2.0


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _running(pids: set[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                left.append(pid)
        except OSError:
            pass
    return left


class _SlowJudge(BaseHTTPRequestHandler):
    def log_message(self, *_):
        pass

    def do_POST(self):   # never answers in time: the run is waiting on it when terminated
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(60)


@pytest.fixture(scope="module")
def heavy_file() -> Path:
    files = corpus_files()
    if not files:
        pytest.skip("the shared corpus (../shared/corpus) is not present")
    return max(files, key=lambda p: p.stat().st_size)


def _command(name: str, heavy: Path, tmp_path: Path, judge_url: str) -> list[str]:
    work = tmp_path / "work"
    work.mkdir()
    for i in range(6):
        shutil.copyfile(heavy, work / f"copy{i}.svg")
        os.chmod(work / f"copy{i}.svg", 0o644)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": f"row_{i}", "svg": heavy.read_text()}) + "\n"
                             for i in range(4)))
    return {"score": ["score", str(work / "copy0.svg"), "--backbone", "pixel"],
            "batch": ["batch", str(work), "--out", str(tmp_path / "out"), "--backbone",
                      "pixel"],
            "fix": ["fix", str(work)],
            "eval": ["eval", "svgbench", "requirements", "--pred", str(preds), "--limit", "4",
                     "--judge-url", judge_url, "--judge-model", "m"]}[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["score", "batch", "fix", "eval"])
def test_sigterm_stops_the_command_and_everything_it_started(name, heavy_file, tmp_path):
    judge = ThreadingHTTPServer(("127.0.0.1", 0), _SlowJudge)
    judge.daemon_threads = True
    threading.Thread(target=judge.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{judge.server_address[1]}/v1"
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", *_command(name, heavy_file,
                                                                       tmp_path, url)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while not seen and proc.poll() is None and time.monotonic() < deadline:
            seen |= _descendants(proc.pid)   # its workers are up: it is mid-work
            time.sleep(0.05)
        for _ in range(10):
            seen |= _descendants(proc.pid)
            time.sleep(0.05)
        assert proc.poll() is None, f"svgloo {name} ended before it could be terminated: " \
                                    f"{proc.stderr.read().decode()}"
        assert seen, f"svgloo {name} started no process to check"
        started = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"svgloo {name} still runs 30 s after SIGTERM")
        took = time.monotonic() - started
        assert took < STOPS_WITHIN_S, f"svgloo {name} took {took:.1f} s to stop"
        assert proc.returncode == 128 + signal.SIGTERM
        time.sleep(0.3)
        assert _running(seen | _descendants(proc.pid)) == []
    finally:
        for pid in _running(seen | _descendants(proc.pid)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()
        judge.shutdown()
        judge.server_close()
