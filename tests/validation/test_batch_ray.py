"""svgloo batch --ray: the same rows, error rows and resuming as local worker processes,
on a local Ray instance that the test starts and that is gone afterwards."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("ray", reason="the [cluster] extra (ray) is not installed")

from svgloo.engine.scoring.score import ScoreSettings
from svgloo.validation.batch import find_svgs, read_results, run_batch
from svgloo.validation.executors import LocalExecutor, RayExecutor

SETTINGS = ScoreSettings(backbone="pixel", size=64)


def descendants(root: int | None = None) -> set[int]:
    """Live processes below ``root`` (default: this one; from /proc: no psutil needed)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = set(), [root or os.getpid()]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def started_by_the_test(before: set[int]) -> set[int]:
    """Processes below this one that are new since ``before`` and not started by one of
    those (a session's warm Chromium starts utility processes whenever it likes)."""
    inherited = set().union(*(descendants(pid) for pid in before)) if before else set()
    return descendants() - before - inherited


def _cmdlines(pids):
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                out.append(fh.read().replace(b"\0", b" ")[:200].decode())
        except OSError:
            pass
    return out


@pytest.fixture()
def folder(tmp_path, corpus_dir):
    src = tmp_path / "in"
    src.mkdir()
    for name in ("bold.svg", "italic.svg", "alert-octagon.svg"):
        shutil.copy(corpus_dir / "feather" / name, src / name)
    (src / "broken.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect')
    return src


def _strip(row):
    row = dict(row)
    row.pop("seconds")
    if row.get("score"):
        row["score"] = {k: v for k, v in row["score"].items() if k not in ("timing", "timings")}
    return row


@pytest.mark.slow
def test_ray_rows_equal_local_rows_and_resume(folder, tmp_path):
    files = find_svgs(str(folder))
    local = run_batch(files, str(tmp_path / "local"), SETTINGS, executor=LocalExecutor(1))
    before = descendants()   # the local run's forkserver stays with this process
    on_ray = run_batch(files, str(tmp_path / "ray"), SETTINGS, executor=RayExecutor(None, 2))
    assert (on_ray["ok"], on_ray["error"]) == (local["ok"], local["error"]) == (3, 1)
    a = {r["file"]: _strip(r) for r in read_results(str(tmp_path / "local"))}
    b = {r["file"]: _strip(r) for r in read_results(str(tmp_path / "ray"))}
    assert a.keys() == b.keys()
    for f in a:
        assert a[f]["status"] == b[f]["status"] and a[f]["sha256"] == b[f]["sha256"]
        if a[f]["status"] == "ok":
            assert [u["delta"] for u in a[f]["score"]["units"]] == \
                   [u["delta"] for u in b[f]["score"]["units"]]
        else:
            assert a[f]["error"] == b[f]["error"]
    again = run_batch(files, str(tmp_path / "ray"), SETTINGS, executor=RayExecutor(None, 2))
    assert (again["skipped"], again["ok"], again["error"]) == (4, 0, 0)
    def summary(name):
        with open(tmp_path / name / "summary.csv") as fh:
            return [{k: v for k, v in row.items() if k != "seconds"}
                    for row in csv.DictReader(fh)]
    assert summary("ray") == summary("local") and len(summary("ray")) == 4
    left = started_by_the_test(before)
    assert not left, ("processes started by Ray outlived ray.shutdown()", _cmdlines(left))


@pytest.mark.slow
def test_a_dying_task_becomes_an_error_row():
    def dies(path):
        if path.endswith("b"):
            os._exit(3)
        return path.upper()

    before = descendants()
    got = {k: (r, e) for k, r, e in RayExecutor(None, 1).run(dies, [("a", ("a",)),
                                                                    ("b", ("b",))])}
    assert got["a"] == ("A", None)
    assert got["b"][0] is None and got["b"][1] is not None
    assert not started_by_the_test(before), _cmdlines(started_by_the_test(before))


@pytest.mark.slow
def test_cli_batch_ray(folder, tmp_path):
    import tempfile

    out = tmp_path / "cli"
    # Ray's sockets live under RAY_TMPDIR (short: socket paths are limited), so every
    # process the command's Ray instance starts carries this path on its command line
    ray_tmp = tempfile.mkdtemp(prefix="svr", dir="/tmp")
    try:
        proc = subprocess.run([sys.executable, "-m", "svgloo.cli", "batch", str(folder),
                               "--out", str(out), "--ray", "--workers", "2", "--backbone",
                               "pixel", "--size", "64"], capture_output=True, text=True,
                              timeout=300, env={**os.environ, "RAY_TMPDIR": ray_tmp})
        assert proc.returncode == 1, proc.stderr[-2000:]     # broken.svg is an error row
        assert "3 ok, 1 error," in proc.stdout
        assert len(read_results(str(out))) == 4
        left = [c for c in _cmdlines(p for p in map(int, filter(str.isdigit, os.listdir("/proc"))))
                if ray_tmp in c]
        assert not left, left
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
