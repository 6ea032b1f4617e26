"""svgloo batch's worker processes (issue 37: per-file fixed costs). The command loads the
renderer once and forks its batch workers from itself; each batch worker forks its render
workers itself. A library caller's LocalExecutor (no direct fork allowed) starts them from
a fork server that imports nothing of svgloo: with a preload it imported from the working
folder, which may hold anything (tests/test_untrusted_cwd.py)."""

from __future__ import annotations

import sys

import pytest

from svgloo.engine.settings import ScoreSettings
from svgloo.validation.executors import LocalExecutor

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="direct forks of render workers are Linux only")


def _probe(path: str, settings) -> dict:
    """In a batch worker: score one file, then say how its render worker was started."""
    import os

    from svgloo.validation import batch

    row = batch.process_file(path, settings)
    pool = batch._pool
    assert pool is not None and pool._executor is not None
    children = {p.pid for p in pool._executor._processes.values()}
    parents = {int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
               for pid in children}
    return {"status": row["status"], "start": pool.start_method, "parents": parents,
            "me": os.getpid()}


def test_batch_worker_forks_its_render_worker_itself(corpus_dir):
    path = str(corpus_dir / "feather" / "bold.svg")
    settings = ScoreSettings(backbone="pixel", prove=False, size=96)
    [(_, info, error)] = list(LocalExecutor(1).run(_probe, [(path, (path, settings))]))
    assert error is None
    assert info["status"] == "ok"
    # forked from the batch worker itself (no fork server of its own, no fresh interpreter)
    assert info["start"] == "fork"
    assert info["parents"] == {info["me"]}


def _children(pid: int) -> list[int]:
    """Live children of ``pid`` (from /proc)."""
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # not a process, or gone meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_svgloo_batch_forks_its_workers_itself(corpus_dir, tmp_path):
    """The command loads the renderer once and forks its batch workers from itself; each
    forks its render workers. No fork server, no interpreter importing it all again (the
    old layout: the command's children were a fork server and its resource tracker)."""
    import os
    import subprocess
    import time

    folder = tmp_path / "drawings"
    folder.mkdir()
    largest = max(corpus_dir.glob("*/*.svg"), key=lambda p: p.stat().st_size)
    for name in ("a.svg", "b.svg"):
        (folder / name).symlink_to(largest)
    svgloo = os.path.join(os.path.dirname(sys.executable), "svgloo")
    proc = subprocess.Popen([svgloo, "batch", str(folder), "--out", str(tmp_path / "out"),
                             "--workers", "2", "--no-proof", "--backbone", "pixel"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        tree: dict[int, list[int]] = {}
        while time.monotonic() < deadline and proc.poll() is None:
            tree = {pid: _children(pid) for pid in _children(proc.pid)}
            if len(tree) == 2 and all(tree.values()):
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the batch ended before its workers were seen"
        assert len(tree) == 2 and all(tree.values()), tree
        for pid in tree:  # a fork of the command: the same program, not a fork server
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                assert b"forkserver" not in f.read()
        assert proc.wait(timeout=300) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
