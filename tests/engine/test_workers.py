"""Render workers: they never re-run the caller's ``__main__``, and a worker killed while
sending its result neither hangs the process nor waits out the render timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# A user's script with no ``if __name__ == "__main__"`` guard, calling the library. With
# multiprocessing's defaults every render worker would re-run it as ``__mp_main__``: print
# the banner again and start scoring inside the worker, which dies (the old symptom was
# "the renderer was killed: it ran out of memory" on a one-rectangle file).
SCRIPT = """
import sys
print("top level ran", file=sys.stderr, flush=True)
{setup}
from svgloo.engine.score import ScoreSettings, score_file
run = score_file({path!r}, ScoreSettings(backbone="pixel", size=64))
s = run.result["summary"]
print(s["units"], s["helpful"] + s["harmful"] + s["neutral"])
"""

SPAWN = """
import svgloo.engine.workers as workers
import svgloo.engine.worker_start as worker_start
workers.worker_context = lambda: worker_start.render_worker_context("spawn")
"""


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_a_script_without_a_main_guard_scores_and_runs_once(tmp_path, corpus_dir, method):
    svg = corpus_dir / "feather" / "alert-octagon.svg"
    script = tmp_path / "my_analysis.py"
    script.write_text(textwrap.dedent(SCRIPT.format(
        setup=SPAWN if method == "spawn" else "", path=str(svg))))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("top level ran") == 1, proc.stderr[-3000:]
    units, verdicts = proc.stdout.split()
    assert int(units) >= 1 and units == verdicts


def test_other_multiprocessing_users_keep_their_main(tmp_path):
    """Only render workers start without ``__main__``: a plain forkserver process of the same
    program still finds a function defined in the script."""
    script = tmp_path / "other.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing
        import svgloo.engine.workers  # noqa: F401  (installs the render-worker launch hook)

        def twice(x):
            return 2 * x

        if __name__ == "__main__":
            with multiprocessing.get_context("forkserver").Pool(1) as pool:
                print(pool.apply(twice, (21,)))
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "42"


def _half_sent_result(seconds: float) -> None:
    """Start sending a result the way a worker does (a length header, then the bytes) and
    stop early: what a worker killed while sending a large render leaves in the pipe."""
    import gc
    import struct
    import time
    from multiprocessing.queues import SimpleQueue

    [results] = [o for o in gc.get_objects() if isinstance(o, SimpleQueue)]
    with results._wlock:
        os.write(results._writer.fileno(), struct.pack("!i", 64 * 1024 * 1024) + b"x" * 1000)
        time.sleep(seconds)


def test_a_worker_killed_mid_result_leaves_no_thread_waiting_forever():
    """The pool's manager thread reads results; after a worker was killed half-way through
    sending one, it waited for the rest forever - and so did the interpreter, which joins
    that thread at exit (an idle daemon that never exited)."""
    from svgloo.engine.errors import LimitError
    from svgloo.engine.workers import RenderPool

    pool = RenderPool(workers=1)
    try:
        pool.map(os.getpid, [()], "warm-up", timeout_s=120)
        manager = pool._executor._executor_manager_thread
        with pytest.raises(LimitError, match="longer than"):
            pool.map(_half_sent_result, [(600.0,)], "half.svg", timeout_s=5)
        manager.join(timeout=60)
        assert not manager.is_alive()
    finally:
        pool.close()


def test_a_process_whose_worker_was_killed_mid_result_exits(tmp_path):
    script = tmp_path / "half.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_workers import _half_sent_result
        from svgloo.engine.errors import LimitError
        from svgloo.engine.workers import RenderPool

        if __name__ == "__main__":
            pool = RenderPool(workers=1)
            pool.map(os.getpid, [()], "warm-up", timeout_s=120)
            try:
                pool.map(_half_sent_result, [(600.0,)], "half.svg", timeout_s=5)
            except LimitError as exc:
                print(exc)
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)  # it used to hang at exit, forever
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "longer than 5 s" in proc.stdout


def test_a_worker_killed_mid_result_is_an_error_at_once_not_after_the_timeout():
    """A worker killed from outside (the kernel's OOM killer, kill -9) while sending its
    result: the pool itself never notices (its reader waits for the rest of the message);
    the waiting map does, and says the renderer was killed."""
    import signal
    import threading
    import time

    from svgloo.engine.errors import LimitError
    from svgloo.engine.workers import RenderPool

    pool = RenderPool(workers=1)
    try:
        pool.map(os.getpid, [()], "warm-up", timeout_s=120)
        [pid] = list(pool._executor._processes)
        killer = threading.Timer(2.0, os.kill, (pid, signal.SIGKILL))
        killer.start()
        t = time.monotonic()
        with pytest.raises(LimitError, match="renderer was killed"):
            pool.map(_half_sent_result, [(600.0,)], "half.svg", timeout_s=300)
        assert time.monotonic() - t < 60  # the render timeout (300 s) was not waited out
        assert pool.map(os.getpid, [()], "again", timeout_s=120)[0] != pid  # a fresh pool
    finally:
        pool.close()
