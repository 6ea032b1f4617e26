"""Processes svgloo starts die with it: a command killed mid-score leaves nothing running.

The command runs in a process group of its own; the test signals only the command's own
process (as a shell or a supervisor would) and then looks for any process left in the group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import corpus_files

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                 reason="reads process groups from /proc (Linux)")]


def group_members(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def render_workers(pgid: int) -> list[int]:
    """Members of the group that are render workers: their stderr is a file of their own
    (worker_start: ``svgloo-worker-stderr-*``)."""
    workers = []
    for pid in group_members(pgid):
        try:
            if "svgloo-worker-stderr-" in os.readlink(f"/proc/{pid}/fd/2"):
                workers.append(pid)
        except OSError:  # gone meanwhile
            continue
    return workers


def kill_group(pgid: int) -> None:
    """SIGKILL whatever of the group a failed test left running."""
    for pid in group_members(pgid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_until(predicate, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def largest_corpus_file() -> Path:
    files = corpus_files()
    if not files:
        pytest.skip("the shared corpus (../shared/corpus) is not present")
    return max(files, key=lambda p: p.stat().st_size)


def start_scoring(path: Path, command: str = "score", out: Path | None = None
                  ) -> subprocess.Popen:
    args = [sys.executable, "-m", "svgloo", command, str(path), "--backbone", "pixel"]
    if command == "view":
        args.append("--no-concepts")
    if command == "batch":  # path: a folder; batch workers forked from the command itself
        args += ["--out", str(out), "--workers", "2", "--no-proof"]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=env)
    # Mid-score: a render worker is up (forked from a fork server, or from the command
    # itself: `svgloo score` forks its workers directly for small files).
    if not wait_until(lambda: render_workers(proc.pid) or proc.poll() is not None,
                      timeout=120):
        proc.kill()
        pytest.fail("the render workers never started")
    if proc.poll() is not None:
        pytest.fail(f"svgloo {command} ended before it could be interrupted "
                    f"(exit {proc.returncode})")
    return proc


def stdout_closes(proc: subprocess.Popen, timeout: float) -> bool:
    """True when every writer of the command's stdout is gone (a pipeline would end)."""
    done = threading.Event()

    def drain():
        proc.stdout.read()
        done.set()

    threading.Thread(target=drain, daemon=True).start()
    return done.wait(timeout)


@pytest.mark.parametrize("command,signum", [
    ("score", signal.SIGTERM), ("score", signal.SIGHUP), ("score", signal.SIGKILL),
    ("view", signal.SIGTERM), ("view", signal.SIGKILL),
    ("batch", signal.SIGTERM), ("batch", signal.SIGKILL)],
    ids=["score-SIGTERM", "score-SIGHUP", "score-SIGKILL", "view-SIGTERM", "view-SIGKILL",
         "batch-SIGTERM", "batch-SIGKILL"])
def test_killed_command_leaves_no_process_behind(command, signum, tmp_path):
    if command == "view":
        pytest.importorskip("PyQt6.QtWidgets")
    path = largest_corpus_file()
    if command == "batch":  # the largest file twice: both batch workers busy with it
        folder = tmp_path / "drawings"
        folder.mkdir()
        for name in ("a.svg", "b.svg"):
            (folder / name).symlink_to(path)
        path = folder
    proc = start_scoring(path, command, tmp_path / "out")
    pgid = proc.pid
    try:
        os.kill(proc.pid, signum)
        proc.wait(timeout=30)
        left = wait_until(lambda: not group_members(pgid), timeout=5)
        assert left, f"still running 5 s after {signal.Signals(signum).name}: " \
                     f"{group_members(pgid)}"
        assert stdout_closes(proc, timeout=5), "a leftover process holds stdout open"
    finally:
        kill_group(pgid)
        proc.stdout.close()


def test_ctrl_c_stops_a_batch_at_once(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) ends `svgloo
    batch` at once: the files not started are not scored first (the batch workers used to
    take the signal as one file's failure and go on to the next file, to the end)."""
    folder = tmp_path / "drawings"
    folder.mkdir()
    for i in range(12):  # a long batch: the largest corpus file, twelve times
        (folder / f"copy-{i:02d}.svg").symlink_to(largest_corpus_file())
    args = [sys.executable, "-m", "svgloo", "batch", str(folder), "--out",
            str(tmp_path / "out"), "--workers", "2", "--no-proof", "--backbone", "pixel"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pgid = proc.pid
    try:
        assert wait_until(lambda: render_workers(pgid) or proc.poll() is not None, 120)
        assert proc.poll() is None, "the batch ended before it could be interrupted"
        os.killpg(pgid, signal.SIGINT)
        assert proc.wait(timeout=15) == 130
        assert b"interrupted" in proc.stderr.read()
        assert wait_until(lambda: not group_members(pgid), timeout=5), group_members(pgid)
        results = tmp_path / "out" / "results.jsonl"
        rows = results.read_text().splitlines() if results.exists() else []
        assert len(rows) < 12
    finally:
        kill_group(pgid)
        proc.stderr.close()
