"""Benchmark: the naive and fast leave-one-out methods side by side on a corpus.

    python -m svgloo.validation.bench_loo [DIR] [--limit N] [--json FILE]
    python -m svgloo.validation.bench_loo --scaling [--naive-max N]
    python -m svgloo.validation.bench_loo --fixed-cost
    python -m svgloo.validation.bench_loo [DIR] --cli [--limit N]

For every file both methods run back to back in the same process (so machine noise hits
both alike); per size band (units 1-19, 20-99, >= 100) and overall it prints the median
speed ratio naive/fast, the largest per-channel pixel difference between the two methods'
leave-one-out images, and the peak memory of the fast method on the largest file (measured
in a fresh process: its own peak RSS and its render workers'), plus the same table for
the compound-path files only (files whose units are mostly subpaths of ``<path>``s).

``--scaling``: synthetic files made of one ``<path>`` with N small subpaths (N = 250, 500,
1000, 2000, 4900, 10000; the unit limit raised where N is above it) on an even-odd frame;
each method runs in a fresh process: wall time and peak memory of the whole process tree
(main process, fork server and every render worker, each at its own peak, summed). Naive
is quadratic: it runs up to ``--naive-max`` subpaths only.

``--incremental``: what an editor waits for after an edit. Per file, a scoring, then
seeded random edits one after another (a colour changed, a shape moved, an element
removed, an element added; validation/random_edits.py), each re-scored from the previous
run (``score_document(previous=)``, as the daemon does) and scored cold (no previous run,
no layer cache) back to back in one process: how many re-scorings equal the cold one (the
whole JSON but timings: must be all), and per size band and edit kind the median
re-score/cold time ratio, plus the median cost of each stage (renders, composites,
similarities, findings) cold and after a colour edit. ``--size`` (default 384) and
``--rounds`` (edits of each kind, default 1).

``--fixed-cost``: issue 25's fixed cost of the pixel backbone in self mode: ``score_s`` on a
file whose one unit is a tiny dot (nothing there grows with the units), and on a one-unit
icon for scale; medians, with the machine's load.

``--startup``: issue 25's start-up figure: ``svgloo score`` on a one-unit file (the README's
first command, a table) against a bare ``python -c "import numpy, lxml.etree, cairosvg"``,
in turn; the median of the pairs' ratios and the machine's load (``--runs``, default 10).

``--cli``: what a user waits for: whole processes ``svgloo score FILE --json --backbone
pixel``, ``--method fast`` and ``--method naive`` back to back per file; median ratio and
median times per size band, for all files and for the compound-path files, and the floor
(the same command on a one-unit file) with the start-up ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from svgloo.engine.settings import DEFAULT_RENDER_SIZE
from svgloo.validation.bench_batch import installed_env

BANDS = [("1-19", 1, 19), ("20-99", 20, 99), (">=100", 100, 10 ** 9)]


def _band(n: int) -> str:
    for name, lo, hi in BANDS:
        if lo <= n <= hi:
            return name
    return "0"


def compare_file(path: Path, pool) -> dict:
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.leave_one_out.loo import loo_fast, loo_naive
    from svgloo.engine.reading.units import extract_units

    us = extract_units(load_document(path))
    t = time.perf_counter()
    fast = loo_fast(us, pool=pool)
    t_fast = time.perf_counter() - t
    t = time.perf_counter()
    naive = loo_naive(us, pool=pool)
    t_naive = time.perf_counter() - t
    diff = int(np.abs(fast.full.astype(np.int16) - naive.full).max())
    for k in range(len(us.units)):
        a = fast.image_without(k).astype(np.int16)
        diff = max(diff, int(np.abs(a - naive.image_without(k)).max()))
    return {"file": str(path), "units": len(us.units), "band": _band(len(us.units)),
            "fast_s": t_fast, "naive_s": t_naive, "ratio": t_naive / max(t_fast, 1e-9),
            "fast_renders": fast.renders, "naive_renders": naive.renders,
            "max_pixel_diff": diff}


_MEMORY_PROBE = """
import resource, sys
from svgloo.engine.reading.document import load_document
from svgloo.engine.reading.units import extract_units
from svgloo.engine.leave_one_out.loo import loo_fast
from svgloo.engine.processes.workers import RenderPool
from svgloo.validation.bench_loo import worker_peak_kb
if __name__ == "__main__":
    pool = RenderPool()
    loo_fast(extract_units(load_document(sys.argv[1])), pool=pool)
    workers = max(pool.map(worker_peak_kb, [(0.2,)] * (2 * pool.workers), "probe"))
    pool.close()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, workers)
"""


def worker_peak_kb(pause: float) -> int:
    """Peak RSS of the render worker that runs this (kB); the pause spreads the probes
    over all workers."""
    import resource

    time.sleep(pause)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_memory_mb(path: Path) -> tuple[float, float]:
    """(main process peak RSS, largest render worker peak RSS) in MB for ``fast``."""
    out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(path)], check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]) / 1024, int(out[1]) / 1024


def synthetic_path(n: int) -> str:
    """One even-odd <path>: a canvas-sized frame and n - 1 small squares in a grid."""
    side = int(np.ceil(np.sqrt(n - 1)))
    step = 1000 / side
    squares = " ".join(f"M{(i % side) * step + step / 4:.2f} {(i // side) * step + step / 4:.2f}"
                       f"h{step / 2:.2f}v{step / 2:.2f}h{-step / 2:.2f}z" for i in range(n - 1))
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="-10 -10 1020 1020">'
            f'<path fill-rule="evenodd" d="M-5 -5H1005V1005H-5Z {squares}"/></svg>')


def _tree(root: int) -> set[int] | None:
    """A process and all its descendants (None where /proc cannot tell)."""
    parent: dict[int, int] = {}
    try:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
                except OSError:  # gone meanwhile
                    pass
    except OSError:
        return None
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo.extend(child for child, p in parent.items() if p == pid and child not in tree)
    return tree


def _tree_sum_kb(root: int | None, path: str, field: str) -> int | None:
    tree = _tree(os.getpid() if root is None else root)
    if tree is None:
        return None
    total = 0
    for pid in tree:
        try:
            with open(f"/proc/{pid}/{path}") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith(field))
        except (OSError, StopIteration):
            pass
    return total


def tree_peak_kb(root: int | None = None) -> int | None:
    """Sum of the peak RSS (VmHWM) of a process and all its descendants (the fork server
    and every render worker), in kB: an upper bound of the whole tree's peak, since the
    peaks need not coincide, and pages the fork server shares with its workers count once
    per process. None where /proc cannot tell (not Linux)."""
    return _tree_sum_kb(root, "status", "VmHWM:")


def tree_pss_kb(root: int | None = None) -> int | None:
    """Sum of the proportional set size (Pss) of a process and its descendants now, in
    kB: pages the fork server shares with its workers are counted once (split between
    them), not once per process as in ``tree_peak_kb``; a current figure, not a peak
    (Linux keeps no peak of it). None where /proc cannot tell."""
    return _tree_sum_kb(root, "smaps_rollup", "Pss:")


_SCALING_PROBE = """
import resource, sys, time
from svgloo.engine.reading.document import parse_document
from svgloo.engine.limits import Limits
from svgloo.engine.reading.units import extract_units
from svgloo.engine.leave_one_out.loo import leave_one_out
from svgloo.engine.processes.workers import RenderPool
from svgloo.validation.bench_loo import synthetic_path, tree_peak_kb, tree_pss_kb, worker_peak_kb
if __name__ == "__main__":
    n = int(sys.argv[1])
    limits = Limits(max_units=max(n, Limits().max_units))  # the unit limit allows it
    pool = RenderPool(limits=limits)
    pool.map(worker_peak_kb, [(0.0,)] * pool.workers, "warm")
    us = extract_units(parse_document(synthetic_path(n), "synthetic.svg", limits))
    t = time.perf_counter()
    leave_one_out(us, sys.argv[2], limits=limits, pool=pool)
    seconds = time.perf_counter() - t
    workers = max(pool.map(worker_peak_kb, [(0.2,)] * (2 * pool.workers), "probe"))
    tree, pss = tree_peak_kb(), tree_pss_kb()
    pool.close()
    main = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(seconds, main, workers, tree if tree is not None else main + workers, pss or 0)
"""


def scaling(naive_max: int, sizes=(250, 500, 1000, 2000, 4900, 10000)) -> list[dict]:
    """Per size and method: seconds, and peak memory of the whole process tree (main
    process, fork server and every render worker, each at its own peak, summed: an upper
    bound, issue 25's figure), with the main process's own peak and the largest render
    worker's; for fast also the tree's Pss once scored (shared pages counted once)."""
    rows = []
    print(f"scaling, {machine_load()}: MB = peak RSS of the process tree (sum of each "
          "process's own peak); main / worker: their own peaks; Pss: the tree once "
          "scored, shared pages once", flush=True)
    for n in sizes:
        row = {"subpaths": n}
        for method in ("fast", "naive"):
            if method == "naive" and n > naive_max:
                continue
            out = subprocess.run([sys.executable, "-c", _SCALING_PROBE, str(n), method],
                                 check=True, capture_output=True, text=True).stdout.split()
            row[f"{method}_s"] = float(out[0])
            row[f"{method}_mb"] = int(out[3]) / 1024
            row[f"{method}_main_mb"] = int(out[1]) / 1024
            row[f"{method}_worker_mb"] = int(out[2]) / 1024
            row[f"{method}_pss_mb"] = int(out[4]) / 1024
        rows.append(row)
        print(f"{n:>6} subpaths: fast {row['fast_s']:7.2f} s {row['fast_mb']:6.0f} MB "
              f"(main {row['fast_main_mb']:.0f}, worker {row['fast_worker_mb']:.0f}, "
              f"Pss {row['fast_pss_mb']:.0f})"
              + (f" | naive {row['naive_s']:7.2f} s {row['naive_mb']:6.0f} MB"
                 f" | naive/fast {row['naive_s'] / row['fast_s']:5.1f}x"
                 if "naive_s" in row else ""), flush=True)
    return rows


def _score_process(path: Path, *extra: str) -> subprocess.CompletedProcess:
    """``svgloo score PATH --json --backbone pixel`` in a fresh process, with bytecode
    cached as after ``pip install`` (an environment that sets PYTHONDONTWRITEBYTECODE
    would make every run compile svgloo's modules again: ~0.05 s a run here)."""
    return subprocess.run([sys.executable, "-m", "svgloo", "score", str(path), "--json",
                           "--backbone", "pixel", *extra],
                          check=True, capture_output=True, env=installed_env())


def cli_compare(path: Path) -> dict:
    """Whole-process wall time of ``svgloo score`` with each method, back to back, and how
    far apart their results are (largest |delta| difference, verdicts that differ)."""
    times, units = {}, {}
    for method in ("fast", "naive"):
        t = time.perf_counter()
        out = _score_process(path, "--method", method)
        times[method] = time.perf_counter() - t
        units[method] = json.loads(out.stdout)["units"]
    pairs = list(zip(units["fast"], units["naive"]))
    return {**times,
            "max_delta_diff": max((abs(f["delta"] - n["delta"]) for f, n in pairs), default=0.0),
            "verdicts_differ": sum(f["verdict"] != n["verdict"] for f, n in pairs)}


ONE_UNIT = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="5" height="5"/></svg>'


def process_floor(runs: int = 5) -> float:
    """Median whole-process time of ``svgloo score`` on a one-unit file: what every run
    pays before and after its own work."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one-unit.svg"
        path.write_text(ONE_UNIT)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            _score_process(path)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


BARE_IMPORT = "import numpy, lxml.etree, cairosvg"

# One unit that draws almost nothing: what scoring a file costs whatever its units.
TINY_DOT = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
            '<circle cx="50" cy="50" r="0.5"/></svg>')


def fixed_cost(runs: int = 15, files: tuple[Path, ...] = ()) -> list[dict]:
    """Issue 25's fixed cost of the pixel backbone in self mode (no reference: the
    reference is the full render): ``score_s`` of ``result["timings"]`` (preparing the
    reference, the full render's similarity, every unit's patch scored) on a file whose
    one unit is a tiny dot, where nothing grows with the units; then the same on
    ``files``, for scale. In-process, default size, the median of ``runs`` after two
    not counted."""
    import tempfile

    from svgloo.engine.scoring.score import ScoreSettings, score_file
    from svgloo.engine.processes.workers import RenderPool

    pool = RenderPool()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dot = Path(tmp) / "tiny-dot.svg"
            dot.write_text(TINY_DOT)
            for path in (dot, *files):
                times = []
                for i in range(runs + 2):
                    run = score_file(str(path), ScoreSettings(backbone="pixel"), pool=pool)
                    if i >= 2:
                        times.append(run.result["timings"]["score_s"])
                rows.append({"file": path.name if path == dot else str(path),
                             "units": len(run.units.units),
                             "score_ms": 1000 * statistics.median(times),
                             "min_ms": 1000 * min(times)})
    finally:
        pool.close()
    return rows


def print_fixed_cost(rows: list[dict], load_before: str) -> None:
    print(f"pixel backbone, self mode, {DEFAULT_RENDER_SIZE} px: score_s per file (median; "
          f"issue 25's bar: <= 10 ms on the tiny dot); {load_before} before, "
          f"{machine_load()} after")
    for r in rows:
        print(f"  {r['file']} ({r['units']} unit{'s' * (r['units'] != 1)}): "
              f"{r['score_ms']:.1f} ms (min {r['min_ms']:.1f})")


# ``svgloo score FILE`` as a program, with perf_counter stamps around its steps, written at
# its exit (it ends through cli.exit_at_once: atexit handlers, then os._exit) to $STAMPS_OUT.
STAMPED_SCORE = r"""
import json, os, sys, time
T0 = time.perf_counter()
stamps = {}
def mark(name):
    stamps.setdefault(name, time.perf_counter() - T0)
import svgloo.cli as cli
import svgloo.cli_score as cs
def wrap(name, before, after):
    f = getattr(cs, name)
    def w(*a, **k):
        mark(before)
        try:
            return f(*a, **k)
        finally:
            mark(after)
    setattr(cs, name, w)
wrap("read_checked", "parse", "read")
wrap("start_render_workers", "read", "workers")
wrap("print_table", "scored", "printed")
exit_now = os._exit
def exit_stamped(code):
    mark("exit")
    pool = sys.modules["svgloo.engine.processes.workers"]._shared
    stamps["start_method"] = getattr(pool, "start_method", None)
    with open(os.environ["STAMPS_OUT"], "w") as f:
        json.dump(stamps, f)
    exit_now(code)
os._exit = exit_stamped
sys.argv = ["svgloo", "score", sys.argv[1]]
raise SystemExit(cli.main())
"""

# (label, from stamp, to stamp) of the breakdown; "start" is the interpreter's own start.
STARTUP_STEPS = [
    ("interpreter and site (python -c pass)", None, None),
    ("svgloo's CLI imported, arguments parsed", None, "parse"),
    ("file read and checked", "parse", "read"),
    ("renderer loaded, render workers started", "read", "workers"),
    ("engine imported, file scored", "workers", "scored"),
    ("table printed, pools closed, atexit", "scored", "exit"),
    ("after the exit until every process is gone", "exit", None),
]


def startup(runs: int = 10) -> dict:
    """Issue 25's start-up figure: ``svgloo score ONE-UNIT.svg`` as the README's first
    command runs it (a table, backbone auto, no reference) against a bare
    ``python -c "import numpy, lxml.etree, cairosvg"``, in turn (A B A B, after one of
    each not counted), bytecode cached; the median wall time of each and the median of
    the pairs' ratios, with the machine's load before and after. Then where the time
    goes: ``python -c pass`` and the same command with time stamps, in turn (medians
    per step; the stamped runs also say how the render workers were started)."""
    import tempfile

    env = installed_env()
    load_before = machine_load()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one-unit.svg"
        path.write_text(ONE_UNIT)
        commands = ([sys.executable, "-m", "svgloo", "score", str(path)],
                    [sys.executable, "-c", BARE_IMPORT])
        pairs, cpu, all_counted = [], [], True
        for i in range(runs + 1):
            pair, pair_cpu = [], []
            for command in commands:
                wall, seconds, every = _wall_and_cpu(command, env, tmp)
                pair.append(wall)
                pair_cpu.append(seconds)
                all_counted = all_counted and every
            if i:
                pairs.append(pair)
                cpu.append(pair_cpu)
        load_between = machine_load()
        steps = startup_steps(path, max(3, runs // 2), env, tmp)
    return {"score_s": statistics.median(p[0] for p in pairs),
            "bare_s": statistics.median(p[1] for p in pairs),
            "ratio": statistics.median(p[0] / p[1] for p in pairs), "runs": runs,
            "score_cpu_s": statistics.median(c[0] for c in cpu),
            "bare_cpu_s": statistics.median(c[1] for c in cpu), "cpu_all_processes": all_counted,
            "load_before": load_before, "load_between": load_between,
            "load_after": machine_load(), **steps}


# Runs a command and prints [wall seconds, CPU seconds of all its processes]: it makes itself
# the reaper of the command's orphans (Linux), so that a fork server or render workers that
# outlive the command by a moment are waited for and counted too. A process of its own:
# the caller may have children of its own (a test's render pools) that never end.
TIMED_RUN = r"""
import json, os, resource, subprocess, sys, time
try:
    import ctypes
    every = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # CHILD_SUBREAPER
except (OSError, AttributeError):
    every = False
t = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, capture_output=True)
wall = time.perf_counter() - t
while every:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps([wall, used.ru_utime + used.ru_stime, every]))
"""


def _wall_and_cpu(command: list[str], env: dict, cwd: str) -> tuple[float, float, bool]:
    """Wall time of ``command`` until it exits and its output is closed, the CPU time
    (user + system) of its processes once every one of them has ended, and whether that
    is all of them (False: the command's own process only)."""
    done = subprocess.run([sys.executable, "-c", TIMED_RUN, *command], check=True,
                          capture_output=True, env=env, cwd=cwd, text=True)
    wall, cpu, every = json.loads(done.stdout)
    return wall, cpu, every


def startup_steps(path: Path, runs: int, env: dict, cwd: str) -> dict:
    """Median seconds of each of STARTUP_STEPS, from ``runs`` stamped scorings each paired
    with a ``python -c pass``."""
    stamps_out = Path(cwd) / "stamps.json"
    env = dict(env, STAMPS_OUT=str(stamps_out))
    rows, methods = [], set()
    for i in range(runs + 1):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env, cwd=cwd)
        bare = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", STAMPED_SCORE, str(path)], check=True,
                       capture_output=True, env=env, cwd=cwd)
        wall = time.perf_counter() - t
        stamps = json.loads(stamps_out.read_text())
        methods.add(stamps.pop("start_method"))
        if not i:
            continue
        row = []
        for _, start, end in STARTUP_STEPS:
            if start is None and end is None:
                row.append(bare)
            elif end is None:
                row.append(max(0.0, wall - bare - stamps[start]))
            else:
                row.append(stamps[end] - (stamps[start] if start else 0.0))
        rows.append(row)
    return {"steps_s": {label: statistics.median(r[k] for r in rows)
                        for k, (label, _, _) in enumerate(STARTUP_STEPS)},
            "start_method": "/".join(sorted(str(m) for m in methods))}


def print_startup(r: dict) -> None:
    print(f"start-up: `svgloo score` on a one-unit file {r['score_s']:.3f} s, bare "
          f"`python -c \"{BARE_IMPORT}\"` {r['bare_s']:.3f} s (medians of {r['runs']}, in "
          f"turn): {r['ratio']:.2f}x (median of the pairs' ratios; issue 25's bar: 1.5x); "
          f"{r['load_before']} before, {r['load_between']} after the pairs, "
          f"{r['load_after']} at the end")
    if "score_cpu_s" in r:
        whose = "all its processes" if r["cpu_all_processes"] else "its main process"
        print(f"  CPU time ({whose}, medians): `svgloo score` {r['score_cpu_s']:.3f} s, "
              f"bare import {r['bare_cpu_s']:.3f} s: "
              f"{r['score_cpu_s'] / max(r['bare_cpu_s'], 1e-9):.2f}x")
    if "steps_s" in r:
        print(f"  where a scoring's time goes (medians; render workers started by "
              f"{r['start_method']}):")
        for label, seconds in r["steps_s"].items():
            print(f"    {label:<46} {seconds:6.3f} s")


def compound_only(rows: list[dict]) -> list[dict]:
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.reading.units import extract_units

    out = []
    for r in rows:
        us = extract_units(load_document(r["file"]))
        if sum(u.kind == "subpath" for u in us.units) * 2 > len(us.units):
            out.append(r)
    return out


STAGES = ("render_s", "composite_s", "score_s", "findings_s", "proof_s")


def incremental_file(path: Path, pool, size: int, rounds: int) -> list[dict]:
    """One row per edit: kind, equal to cold or not, both times, the stages' times, and
    how many units were composited again (None: all, a cold scoring)."""
    import random

    from svgloo.engine.errors import SvglooError
    from svgloo.engine.scoring.score import ScoreSettings, score_text
    from svgloo.validation.random_edits import KINDS, random_edit

    settings = ScoreSettings(backbone="pixel", size=size, limits=pool.limits)
    text, name = path.read_text(), str(path)
    cache: dict = {}
    try:
        run = score_text(text, name, settings, pool=pool, layer_cache=cache)
    except SvglooError:
        return []
    rng = random.Random(path.name)
    rows = []
    for kind in KINDS * rounds:
        edited = random_edit(text, kind, rng, name)
        try:
            t = time.perf_counter()
            again = score_text(edited, name, settings, pool=pool, layer_cache=cache,
                               previous=run)
            t_again = time.perf_counter() - t
            t = time.perf_counter()
            cold = score_text(edited, name, settings, pool=pool, layer_cache={})
            t_cold = time.perf_counter() - t
        except SvglooError:
            continue  # an edit the engine refuses (both ways): nothing to compare
        same = ({k: v for k, v in again.result.items() if k != "timings"}
                == {k: v for k, v in cold.result.items() if k != "timings"})
        n = len(again.units.units)
        rows.append({"file": name, "units": n, "band": _band(n), "edit": kind,
                     "equal": same, "again_s": t_again, "cold_s": t_cold,
                     "ratio": t_again / max(t_cold, 1e-9),
                     "composited": None if again.loo.composited is None
                     else len(again.loo.composited),
                     "again_stages": {k: again.result["timings"].get(k, 0.0) for k in STAGES},
                     "cold_stages": {k: cold.result["timings"].get(k, 0.0) for k in STAGES}})
        run, text = again, edited
    return rows


def machine_load() -> str:
    try:
        return "load " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load unknown"


def print_incremental(rows: list[dict], size: int, load_before: str) -> None:
    from svgloo.validation.random_edits import KINDS

    equal = sum(r["equal"] for r in rows)
    files = len({r["file"] for r in rows})
    print(f"{len(rows)} edits of {files} files at {size} px: {equal} re-scorings equal the "
          f"cold scoring, {len(rows) - equal} differ ({load_before}; after: {machine_load()})")
    print(f"{'band':>8} {'edit':>7} {'edits':>5} {'kept runs':>9} {'median again/cold':>17} "
          f"{'median again s':>14} {'median cold s':>13}")
    for band in [b[0] for b in BANDS]:
        for kind in KINDS:
            group = [r for r in rows if r["band"] == band and r["edit"] == kind]
            if not group:
                continue
            kept = sum(r["composited"] is not None for r in group)
            print(f"{band:>8} {kind:>7} {len(group):>5} {kept:>9} "
                  f"{statistics.median(r['ratio'] for r in group):>16.0%} "
                  f"{statistics.median(r['again_s'] for r in group):>14.3f} "
                  f"{statistics.median(r['cold_s'] for r in group):>13.3f}")
    big = [r for r in rows if r["band"] == ">=100" and r["edit"] == "colour"]
    if big:
        print("stages, files >= 100 units, colour edit (median s): "
              + ", ".join(f"{k[:-2]} {statistics.median(r['cold_stages'][k] for r in big):.3f}"
                          f" cold / {statistics.median(r['again_stages'][k] for r in big):.3f}"
                          " again" for k in STAGES))


def summarize(rows: list[dict]) -> list[dict]:
    table = []
    for name in [b[0] for b in BANDS] + ["overall"]:
        group = rows if name == "overall" else [r for r in rows if r["band"] == name]
        if not group:
            continue
        row = {"band": name, "files": len(group),
               "median_ratio": statistics.median(r["ratio"] for r in group),
               "fast_s": sum(r["fast_s"] for r in group),
               "naive_s": sum(r["naive_s"] for r in group),
               "median_fast_s": statistics.median(r["fast_s"] for r in group),
               "median_naive_s": statistics.median(r["naive_s"] for r in group)}
        # What was compared: images in one process, or the processes' JSON results.
        if "max_pixel_diff" in group[0]:
            row["max_pixel_diff"] = max(r["max_pixel_diff"] for r in group)
        if "max_delta_diff" in group[0]:
            row["max_delta_diff"] = max(r["max_delta_diff"] for r in group)
            row["verdicts_differ"] = sum(r["verdicts_differ"] for r in group)
        table.append(row)
    return table


def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    from svgloo.engine.processes.workers import RenderPool

    default_dir = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
    p = argparse.ArgumentParser(prog="python -m svgloo.validation.bench_loo",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("dir", nargs="?", default=str(default_dir))
    p.add_argument("--limit", type=int, help="only the first N files (sorted by name)")
    p.add_argument("--json", help="write per-file rows and the summary to this file")
    p.add_argument("--scaling", action="store_true",
                   help="synthetic single-path files with 250..10000 subpaths")
    p.add_argument("--naive-max", type=int, default=1000,
                   help="largest synthetic file naive runs on (default 1000)")
    p.add_argument("--cli", action="store_true",
                   help="whole `svgloo score` processes, fast vs naive")
    p.add_argument("--startup", action="store_true",
                   help="`svgloo score` on a one-unit file vs a bare import of numpy, lxml "
                        "and CairoSVG, in turn: the ratio (issue 25's start-up bar)")
    p.add_argument("--runs", type=int, default=10, help="pairs for --startup (default 10)")
    p.add_argument("--fixed-cost", action="store_true",
                   help="the pixel backbone's scoring time in self mode on a one-unit tiny "
                        "dot (what every file pays), and on feather/message-square.svg")
    p.add_argument("--incremental", action="store_true",
                   help="re-scoring after random edits vs cold scoring (equal? how fast?)")
    p.add_argument("--size", type=int, default=DEFAULT_RENDER_SIZE,
                   help="render size for --incremental")
    p.add_argument("--rounds", type=int, default=1,
                   help="edits of each kind per file for --incremental")
    args = p.parse_args(argv)
    if args.fixed_cost:
        load_before = machine_load()
        icon = Path(args.dir) / "feather" / "message-square.svg"
        rows = fixed_cost(files=(icon,) if icon.exists() else ())
        print_fixed_cost(rows, load_before)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        return 0
    if args.startup:
        r = startup(args.runs)
        print_startup(r)
        if args.json:
            Path(args.json).write_text(json.dumps(r, indent=1))
        return 0
    if args.scaling:
        rows = scaling(args.naive_max)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        return 0
    files = sorted(Path(args.dir).rglob("*.svg"))[: args.limit]
    if not files:
        print(f"no .svg files under {args.dir}", file=sys.stderr)
        return 2
    if args.incremental:
        pool = RenderPool()
        load_before = machine_load()
        rows = []
        try:
            for path in tqdm(files, desc="re-scoring after edits vs cold", file=sys.stderr):
                rows.extend(incremental_file(path, pool, args.size, args.rounds))
        finally:
            pool.close()
        print_incremental(rows, args.size, load_before)
        if args.json:
            Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))
        return 0 if all(r["equal"] for r in rows) else 1
    if args.cli:
        rows = []
        process_floor(runs=1)  # writes the bytecode caches before anything is timed
        for path in tqdm(files, desc="svgloo score, naive vs fast", file=sys.stderr):
            from svgloo.engine.reading.document import load_document
            from svgloo.engine.reading.units import extract_units

            n = len(extract_units(load_document(path)).units)
            t = cli_compare(path)
            rows.append({"file": str(path), "units": n, "band": _band(n),
                         "fast_s": t["fast"], "naive_s": t["naive"],
                         "ratio": t["naive"] / t["fast"],
                         "max_delta_diff": t["max_delta_diff"],
                         "verdicts_differ": t["verdicts_differ"]})
        floor = process_floor()
        table = summarize(rows)
        compound = summarize(compound_only(rows))
        print(f"{'band':>12} {'files':>5} {'median naive/fast':>18} {'median fast s':>13} "
              f"{'median naive s':>14} {'max |d delta|':>13} {'verdicts differ':>15}")
        for name, group in (("", table), ("compound ", compound)):
            for t in group:
                print(f"{name + t['band']:>12} {t['files']:>5} {t['median_ratio']:>17.1f}x "
                      f"{t['median_fast_s']:>13.2f} {t['median_naive_s']:>14.2f} "
                      f"{t['max_delta_diff']:>13.6f} {t['verdicts_differ']:>15}")
        print(f"floor: `svgloo score` on a one-unit file takes {floor:.2f} s (median of 5): "
              "the interpreter, imports and starting the render workers")
        print_startup(startup(5))
        if args.json:
            Path(args.json).write_text(json.dumps({"rows": rows, "summary": table,
                                                   "compound": compound,
                                                   "floor_s": floor}, indent=1))
        return 0
    pool = RenderPool()
    rows = []
    try:
        compare_file(files[0], pool)  # start the workers before timing anything
        for path in tqdm(files, desc="naive vs fast", file=sys.stderr):
            rows.append(compare_file(path, pool))
    finally:
        pool.close()
    largest = max(rows, key=lambda r: r["units"])
    main_mb, worker_mb = peak_memory_mb(Path(largest["file"]))
    print(f"{'band':>8} {'files':>5} {'median naive/fast':>18} {'max px diff':>11} "
          f"{'fast s':>8} {'naive s':>8}")
    table = summarize(rows)
    for t in table:
        print(f"{t['band']:>8} {t['files']:>5} {t['median_ratio']:>17.1f}x "
              f"{t['max_pixel_diff']:>10}/255 {t['fast_s']:>8.1f} {t['naive_s']:>8.1f}")
    compound = compound_only(rows)
    if compound:
        for t in summarize(compound):
            if t["band"] == "overall":
                print(f"{'compound':>8} {t['files']:>5} {t['median_ratio']:>17.1f}x "
                      f"{t['max_pixel_diff']:>10}/255 {t['fast_s']:>8.1f} {t['naive_s']:>8.1f}")
    print(f"peak memory, fast, largest file ({Path(largest['file']).name}, "
          f"{largest['units']} units): main process {main_mb:.0f} MB, largest render worker "
          f"{worker_mb:.0f} MB")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "summary": table,
                                               "peak_memory_mb": {"main": main_mb,
                                                                  "worker": worker_mb}},
                                              indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
