"""bench_batch's ratio counts the same files on both sides (issue 37's throughput bar)."""

from __future__ import annotations

from svgloo.validation.bench_batch import baseline_of


def test_baseline_counts_only_the_files_the_batch_scored():
    rows = [{"units": 10, "seconds": 1.0}, {"units": 736, "seconds": 98.0},
            {"units": 0, "error": "not an SVG"}, {"units": 30, "seconds": 1.0}]
    every = baseline_of(rows)
    assert (every["images"], every["seconds"]) == (776, 100.0)
    # the 736-unit file ran out of time in the batch: its slow renders leave the baseline
    # too, else the batch's images/s (without its images) is set against them
    scored = baseline_of(rows, {0, 3})
    assert (scored["images"], scored["seconds"]) == (40, 2.0)
    assert scored["images_per_s"] == 20.0
    assert baseline_of(rows, set())["images_per_s"] == 0.0


def test_baseline_sums_cpu_seconds_of_the_same_files():
    rows = [{"units": 10, "seconds": 1.0, "cpu_seconds": 0.5},
            {"units": 736, "seconds": 98.0, "cpu_seconds": 90.0},
            {"units": 30, "seconds": 1.0, "cpu_seconds": 1.5}]
    scored = baseline_of(rows, {0, 2})
    assert scored["cpu_s"] == 2.0
    assert scored["images_per_cpu_s"] == 20.0
    assert baseline_of(rows, set())["images_per_cpu_s"] == 0.0


def test_batch_cpu_counts_the_workers_own_children():
    """svgloo batch's CPU is in its batch workers' render workers, grandchildren of the
    benchmark: a child that forks a busy grandchild and waits for it is charged with the
    grandchild's CPU (getrusage of this process alone would see none of it)."""
    import subprocess
    import sys

    from svgloo.validation.bench_batch import children_cpu_s

    burn = ("import os, time\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    while time.process_time() < 0.4: pass\n"
            "    os._exit(0)\n"
            "os.waitpid(pid, 0)\n")
    before = children_cpu_s()
    subprocess.run([sys.executable, "-c", burn], check=True)
    assert children_cpu_s() - before >= 0.4


def test_the_batch_runs_with_bytecode_compiled_as_an_install_has_it(monkeypatch, tmp_path):
    """An editable checkout under PYTHONDONTWRITEBYTECODE compiles svgloo's modules in
    every batch process; an installed copy has them compiled. The benchmark compiles them
    where they lie (subfolders too) and runs the batch without the variable."""
    import importlib.util
    import os
    import subprocess

    import svgloo
    from svgloo.validation import bench_batch

    first, second = tmp_path / "a" / "svgloo", tmp_path / "b" / "svgloo"
    (first / "deep").mkdir(parents=True)
    second.mkdir(parents=True)
    modules = [first / "deep" / "mod.py", second / "other.py"]
    for module in modules:
        module.write_text("X = 1\n")
    monkeypatch.setattr(svgloo, "__path__", [str(first), str(second)])
    bench_batch.compile_like_an_install()
    assert all(os.path.exists(importlib.util.cache_from_source(str(m))) for m in modules)

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    seen = {}

    def fake_run(command, **kw):
        seen.update(kw)
        raise SystemExit("stop here")

    monkeypatch.setattr(subprocess, "run", fake_run)
    try:
        bench_batch.batch_run(tmp_path, 1, False)
    except SystemExit:
        pass
    assert "PYTHONDONTWRITEBYTECODE" not in seen["env"]
    assert seen["env"]["PATH"] == os.environ["PATH"]
