"""Benchmark: how fast ``svgloo batch`` makes leave-one-out images on a data set, against
one CairoSVG render per image on one core (issue 37's bar: 12x on this 2-core machine).

    python -m svgloo.validation.bench_batch DIR [--limit N] [--runs 3] [--workers W]
                                            [--proof] [--json FILE]
    python -m svgloo.validation.bench_loo DIR --batch ...   (the same)

The files are the ``.svg`` files under DIR (sorted, the first ``--limit``). Each run times,
back to back, in turn:

- the baseline: in this process, on one core, a CairoSVG render at 384 px of the file
  without one unit (the engine's own ``render_rgba`` of the text the naive method renders),
  for up to ``--sample`` units of each file spread over its units; the file's cost is its
  units times the mean render time. Baseline images/s = units / the summed cost, over
  the files ``svgloo batch`` scored (a file it could not score is named and left out of
  both sides).
- ``svgloo batch`` as a whole process (start-up included), pixel backbone, scoring only
  (``--no-proof``; ``--proof`` to time the proof too), ``--workers W`` (default: the
  cores), into a fresh output folder. Its images/s = the units of the files it scored / its
  wall time.

It prints each run's figures and the median ratio (batch images/s / baseline images/s),
with the machine's load before and after: on a shared machine the ratio of two
measurements taken back to back is what holds, not either figure alone.

The batch runs as an installed svgloo does, with its modules' bytecode compiled: before the
first run the benchmark compiles svgloo's own modules where they lie (what ``pip install``
does for an installed copy) and runs the batch without ``PYTHONDONTWRITEBYTECODE``. An
editable checkout in an environment that sets that variable (this machine does) otherwise
compiles the project's modules again in every run, in the command and in each batch worker
(about 5% of a held-out batch's CPU; docs/batch.md), which no installed svgloo pays.

Beside the wall-clock ratio (the bar), each run gives the CPU each side spent: the
baseline's renders on this process's clock, the batch's whole process tree (its workers
and their render workers, each reaped by its parent) from ``getrusage``. Images per
CPU-second is the throughput one core gives, what sizing a cluster needs (issue 37: about
150 a core to feed an H100); it moves less with other tenants' load than the wall does,
as the wall of a 2-core batch loses a core's share to any other busy process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from svgloo.engine.settings import DEFAULT_RENDER_SIZE

BAR = 12.0  # issue 37: leave-one-out images >= 12x one CairoSVG render per image, one core


def machine_load() -> str:
    try:
        return "load " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load unknown"


def baseline_file(path: Path, sample: int, size: int = DEFAULT_RENDER_SIZE) -> dict:
    """One file's cost of one CairoSVG render per leave-one-out image, on this core."""
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.errors import SvglooError
    from svgloo.engine.leave_one_out.layers import LayerTexts
    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.engine.leave_one_out.loo import absolute_subpaths
    from svgloo.engine.rendering.render import render_rgba
    from svgloo.engine.reading.units import extract_units

    try:
        us = absolute_subpaths(extract_units(load_document(path)), DEFAULT_LIMITS)
    except SvglooError as exc:
        return {"file": str(path), "units": 0, "error": str(exc)}
    n = len(us.units)
    if n == 0:
        return {"file": str(path), "units": 0, "seconds": 0.0}
    texts = LayerTexts(us, prune_resources=False)
    step = max(1, n // sample)
    picked = list(range(0, n, step))[:sample]
    t0, c0 = time.perf_counter(), time.process_time()
    for i in picked:
        render_rgba(texts.without(i), size, DEFAULT_LIMITS, us.doc.name)
    per_image = (time.perf_counter() - t0) / len(picked)
    cpu_per_image = (time.process_time() - c0) / len(picked)
    return {"file": str(path), "units": n, "sampled": len(picked),
            "per_image_s": per_image, "seconds": per_image * n,
            "cpu_seconds": cpu_per_image * n}


def baseline(files: list[Path], sample: int) -> dict:
    rows = [baseline_file(p, sample) for p in files]
    return dict(baseline_of(rows), rows=rows)


def baseline_of(rows: list[dict], scored: set[int] | None = None) -> dict:
    """The baseline's images, seconds and images/s over ``rows`` (baseline_file's), or
    over those of the files ``scored`` (indices): the files the batch scored, so that both
    sides of the ratio count the same images (a file the batch gave up on - its document
    time budget ran out on a loaded machine - would else count on one side only)."""
    kept = [r for i, r in enumerate(rows) if "seconds" in r and (scored is None or i in scored)]
    images = sum(r["units"] for r in kept)
    seconds = sum(r["seconds"] for r in kept)
    cpu = sum(r.get("cpu_seconds", 0.0) for r in kept)
    return {"images": images, "seconds": seconds, "cpu_s": cpu,
            "images_per_s": images / seconds if seconds else 0.0,
            "images_per_cpu_s": images / cpu if cpu else 0.0}


def children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's children that have ended and been
    waited for, and of their own waited-for descendants (getrusage's RUSAGE_CHILDREN)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compile_like_an_install() -> None:
    """Compile svgloo's own modules (every folder of the ``svgloo`` namespace package) as
    ``pip install`` compiles an installed copy. A folder that cannot be written is left as
    it is: an installed copy's was compiled when it was installed."""
    import compileall

    import svgloo

    for folder in svgloo.__path__:
        compileall.compile_dir(folder, quiet=2)


def installed_env() -> dict[str, str]:
    """This environment, less the variable that keeps Python from caching bytecode."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def batch_run(folder: Path, workers: int, proof: bool) -> dict:
    """``svgloo batch`` on ``folder`` as a whole process, into a fresh output folder, as an
    installed svgloo runs (``compile_like_an_install`` first)."""
    with tempfile.TemporaryDirectory(prefix="svgloo-bench-batch-") as out:
        command = [sys.executable, "-m", "svgloo", "batch", str(folder), "--out", out,
                   "--backbone", "pixel", "--workers", str(workers),
                   "--proof" if proof else "--no-proof"]
        t0, c0 = time.perf_counter(), children_cpu_s()
        done = subprocess.run(command, capture_output=True, text=True, env=installed_env())
        wall, cpu = time.perf_counter() - t0, children_cpu_s() - c0
        if done.returncode not in (0, 1):  # 1: some files were error rows
            raise SystemExit(f"svgloo batch failed ({done.returncode}): {done.stderr[-2000:]}")
        rows = [json.loads(line) for line in (Path(out) / "results.jsonl").read_text()
                .splitlines() if line.strip()]
    ok = [r for r in rows if r.get("status") == "ok" and r.get("score")]
    images = sum(r["score"]["summary"]["units"] for r in ok)
    # linked_folder names each file by its index in the list: which files were scored
    scored = sorted(int(Path(r["file"]).name[:5]) for r in ok)
    failed = [f"{Path(r['file']).name[6:]}: {(r.get('error') or {}).get('message')}"
              for r in rows if r not in ok]
    return {"files": len(rows), "ok": len(ok), "images": images, "wall_s": wall,
            "cpu_s": cpu, "scored": scored, "failed": failed,
            "images_per_s": images / wall if wall else 0.0,
            "images_per_cpu_s": images / cpu if cpu else 0.0,
            "proof_s": sum(r["score"]["timings"].get("proof_s", 0.0) for r in ok),
            "stdout": done.stdout.strip().splitlines()[-2:]}


def linked_folder(files: list[Path], into: Path) -> Path:
    """A folder of symlinks to ``files`` (so ``svgloo batch`` sees exactly them)."""
    for i, path in enumerate(files):
        (into / f"{i:05d}-{path.parent.name}-{path.name}").symlink_to(path.resolve())
    return into


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m svgloo.validation.bench_batch",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="folder of SVG files (searched recursively)")
    p.add_argument("--limit", type=int, help="only the first N files (sorted by path)")
    p.add_argument("--runs", type=int, default=3, help="baseline/batch pairs (default 3)")
    p.add_argument("--sample", type=int, default=8,
                   help="units rendered per file for the baseline (default 8)")
    p.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                   help="svgloo batch --workers (default: the usable cores)")
    p.add_argument("--proof", action="store_true", help="time svgloo batch --proof")
    p.add_argument("--json", help="write the runs to this file")
    args = p.parse_args(argv)
    files = sorted(Path(args.dir).rglob("*.svg"))[: args.limit]
    if not files:
        print(f"no .svg files under {args.dir}", file=sys.stderr)
        return 2
    load_before = machine_load()
    runs = []
    with tempfile.TemporaryDirectory(prefix="svgloo-bench-files-") as tmp:
        folder = linked_folder(files, Path(tmp))
        baseline_file(files[0], 1)  # imports and CairoSVG's first render, not timed
        compile_like_an_install()
        for run in range(args.runs):
            base = baseline(files, args.sample)
            batch = batch_run(folder, args.workers, args.proof)
            for line in batch["failed"]:
                print(f"  not scored by svgloo batch (left out of both sides): {line}")
            base = baseline_of(base["rows"], set(batch["scored"]))
            ratio = batch["images_per_s"] / base["images_per_s"]
            cpu_ratio = (batch["images_per_cpu_s"] / base["images_per_cpu_s"]
                         if base["images_per_cpu_s"] else 0.0)
            runs.append({"baseline": base, "batch": batch, "ratio": ratio,
                         "cpu_ratio": cpu_ratio, "load": machine_load()})
            print(f"run {run + 1}: baseline {base['images_per_s']:.1f} images/s (1 core, "
                  f"{base['images']} images); svgloo batch "
                  f"{'--proof' if args.proof else '--no-proof'} --workers {args.workers}: "
                  f"{batch['images_per_s']:.1f} images/s ({batch['images']} images, "
                  f"{batch['ok']}/{batch['files']} files ok, {batch['wall_s']:.1f} s); "
                  f"ratio {ratio:.1f}x; per CPU-second {base['images_per_cpu_s']:.1f} and "
                  f"{batch['images_per_cpu_s']:.1f} images ({batch['cpu_s']:.1f} CPU-s): "
                  f"{cpu_ratio:.1f}x a core; {runs[-1]['load']}", flush=True)
    ratio = statistics.median(r["ratio"] for r in runs)
    cpu_ratio = statistics.median(r["cpu_ratio"] for r in runs)
    per_core = statistics.median(r["batch"]["images_per_cpu_s"] for r in runs)
    print(f"{len(files)} files, {runs[0]['batch']['images']} leave-one-out images: svgloo "
          f"batch makes them {ratio:.1f}x faster than one CairoSVG render per image on one "
          f"core (median of {len(runs)} runs; bar {BAR:g}x: "
          f"{'met' if ratio >= BAR else 'not met'}); {load_before} before, "
          f"{machine_load()} after")
    print(f"per core: {per_core:.0f} leave-one-out images a CPU-second, {cpu_ratio:.1f}x "
          f"one CairoSVG render per image (medians; the whole batch's CPU, start-up "
          f"included)")
    if args.json:
        Path(args.json).write_text(json.dumps({"files": [str(f) for f in files],
                                               "runs": runs, "median_ratio": ratio,
                                               "median_cpu_ratio": cpu_ratio},
                                              indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
