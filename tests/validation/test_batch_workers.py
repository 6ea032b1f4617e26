"""svgloo batch's worker processes (issue 37: per-file fixed costs): each batch worker
forks its render worker itself, with the renderer already loaded. (The fork server the
batch workers come from imports nothing of svgloo: with a preload it imported from the
working folder, which may hold anything: tests/test_untrusted_cwd.py.)"""

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
