"""Big inputs for issue 37 and the benchmark that prints its bars.

    python -m svgloo.validation.big_inputs write DIR          # the files, for a look
    python -m svgloo.validation.big_inputs bench [--only NAME ...] [--timeout S]

The inputs are the shapes that made the engine fall over (plots, maps, pixel art):

- ``stacked-rects-N``: N translucent rects, each a little below and right of the one
  before, every one overlapping every other (no unit can be composited on its own
  patch: each leave-one-out image differs from the full render over most of the canvas);
- ``scatter-N``: an N-dot translucent scatter plot (seeded, so every run draws the same);
- ``mpl-scatter-N``: the same as matplotlib writes it (``plt.scatter(..., alpha=0.3)``);
- ``subpaths-N``: one even-odd ``<path>`` of N subpaths (a frame and N - 1 squares,
  bench_loo.synthetic_path);
- ``huge-path``: a 7 MB path of 10^6 subpaths (over the unit limit: must be refused).

``bench`` runs ``svgloo score FILE --json --backbone pixel`` on each in a fresh process
and prints its wall time, the peak memory of its whole process tree (main process, fork
server and render workers: their RSS summed at each sample, every 50 ms; the largest sum)
and how it ended (scored, or the error line), with the machine's load before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

CANVAS = 1000  # user units of every generated file's viewBox


def stacked_rects(n: int, opacity: float = 0.5) -> str:
    """N translucent rects of 60% of the canvas, each shifted down and right a little
    from the one before (the shift cycles so that all of them stay on the canvas)."""
    side = CANVAS * 0.6
    room = CANVAS - side
    rng = random.Random(37)
    rects = []
    for i in range(n):
        offset = room * (i % 200) / 200
        colour = f"#{rng.randrange(0x1000000):06x}"
        rects.append(f'<rect x="{offset:.1f}" y="{(offset * 0.7):.1f}" width="{side:.0f}" '
                     f'height="{side:.0f}" fill="{colour}" fill-opacity="{opacity}"/>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CANVAS} {CANVAS}">\n'
            + "\n".join(rects) + "\n</svg>\n")


def scatter(n: int, radius: float = 6.0, opacity: float = 0.3) -> str:
    """An n-dot scatter plot: translucent circles on a white plot area with two axes,
    the points drawn from two overlapping Gaussian clusters (seeded)."""
    rng = random.Random(2000)
    dots = []
    for i in range(n):
        cx, cy, spread = (380, 560, 120) if i % 2 else (620, 420, 150)
        x = min(max(rng.gauss(cx, spread), 60), 960)
        y = min(max(rng.gauss(cy, spread), 40), 940)
        colour = "#1f77b4" if i % 2 else "#ff7f0e"
        dots.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{colour}" '
                    f'fill-opacity="{opacity}"/>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CANVAS} {CANVAS}">\n'
            '<rect x="50" y="30" width="920" height="920" fill="white" stroke="black"/>\n'
            '<line x1="50" y1="950" x2="970" y2="950" stroke="black" stroke-width="3"/>\n'
            '<line x1="50" y1="30" x2="50" y2="950" stroke="black" stroke-width="3"/>\n'
            + "\n".join(dots) + "\n</svg>\n")


def matplotlib_scatter(n: int, alpha: float = 0.3) -> str:
    """What a user gets from matplotlib: ``plt.scatter`` of n Gaussian points at
    ``alpha``, saved as SVG (each dot a ``<use>`` of one marker path, in a clipped group).
    Seeded, with no date or random ids, so every run writes the same text."""
    import io

    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    import numpy as np

    matplotlib.rcParams["svg.hashsalt"] = "svgloo-37"
    rng = np.random.default_rng(2000)
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.scatter(rng.normal(size=n), rng.normal(size=n), alpha=alpha)
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    return out.getvalue()


def subpaths(n: int) -> str:
    from svgloo.validation.bench_loo import synthetic_path

    return synthetic_path(n)


def huge_path(n: int = 1_000_000) -> str:
    """One path of n tiny subpaths, relative movetos along rows (about 7 MB of path data,
    under the 8 MB file limit)."""
    row = 400
    parts = []
    for i in range(n):
        parts.append("M0 %d" % (i // row * 2 % 1000) if i % row == 0 else "m2 0h1z")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CANVAS} {CANVAS}">'
            f'<path d="{"".join(parts)}"/></svg>\n')


INPUTS = {
    "stacked-rects-500": lambda: stacked_rects(500),
    "stacked-rects-1000": lambda: stacked_rects(1000),
    "stacked-rects-4900": lambda: stacked_rects(4900),
    "scatter-2000": lambda: scatter(2000),
    "mpl-scatter-2000": lambda: matplotlib_scatter(2000),
    "subpaths-490": lambda: subpaths(490),
    "subpaths-4900": lambda: subpaths(4900),
    "huge-path": huge_path,
}

# The bars of issue 37 (item 1): seconds and MB of the whole tree, per input.
BARS = {"stacked-rects-1000": (60, 800), "scatter-2000": (60, 800),
        "mpl-scatter-2000": (60, 800)}


@dataclass
class Outcome:
    name: str
    seconds: float
    peak_mb: float
    cpu_s: float  # CPU time of the whole process tree
    ok: bool
    line: str  # the error line, or the summary of what was scored


def tree_sample(root: int, cpu_ticks: dict[int, int]) -> int:
    """The RSS of a process and all its descendants now, summed (kB), from /proc; each
    one's CPU time so far (user + system, in clock ticks) is noted in ``cpu_ticks``."""
    from svgloo.validation.bench_loo import _tree

    total = 0
    for pid in _tree(root) or {root}:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu_ticks[pid] = int(fields[11]) + int(fields[12])  # utime, stime
            with open(f"/proc/{pid}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):  # gone meanwhile
            pass
    return total


def run_measured(argv: list[str], timeout_s: float, interval_s: float = 0.05
                 ) -> tuple[float, float, float, int | None, str, str]:
    """(seconds, peak tree MB, CPU seconds of the tree, exit code or None on timeout,
    stdout, stderr) of a command, its process tree sampled every ``interval_s`` (the CPU
    time of a process is as last sampled: a little short for the very last moments)."""
    from svgloo.validation.bench_batch import installed_env

    env = installed_env()
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    peak = [0]
    cpu_ticks: dict[int, int] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                peak[0] = max(peak[0], tree_sample(proc.pid, cpu_ticks))
            except OSError:
                pass
            done.wait(interval_s)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout_s)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the whole session: the score process and its workers
        out, err = proc.communicate()
        code = None
    seconds = time.perf_counter() - t
    done.set()
    sampler.join()
    cpu = sum(cpu_ticks.values()) / os.sysconf("SC_CLK_TCK")
    return seconds, peak[0] / 1024, cpu, code, out, err


def bench_one(name: str, text: str, timeout_s: float, extra: list[str]) -> Outcome:
    import json

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.svg"
        path.write_text(text)
        seconds, peak, cpu, code, out, err = run_measured(
            [sys.executable, "-m", "svgloo", "score", str(path), "--json",
             "--backbone", "pixel", *extra], timeout_s)
    if code is None:
        return Outcome(name, seconds, peak, cpu, False, f"no answer within {timeout_s:g} s")
    if code != 0:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        return Outcome(name, seconds, peak, cpu, False,
                       (lines[-1] if lines else f"exit {code}") + f" (exit {code})")
    result = json.loads(out)
    t = result["timings"]
    return Outcome(name, seconds, peak, cpu, True,
                   f"{result['summary']['units']} units; render {t['render_s']:.1f} s, "
                   f"composite {t['composite_s']:.1f} s, score {t['score_s']:.1f} s, "
                   f"findings {t['findings_s']:.1f} s, proof {t['proof_s']:.1f} s")


def machine_load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench(names: list[str], timeout_s: float, extra: list[str]) -> list[Outcome]:
    print(f"# {machine_load()}, {os.cpu_count()} cores; svgloo score --json --backbone "
          f"pixel {' '.join(extra)}; wall s, MB = the largest sum of the process tree's "
          "RSS, CPU s of the whole tree", flush=True)
    outcomes = []
    for name in names:
        o = bench_one(name, INPUTS[name](), timeout_s, extra)
        outcomes.append(o)
        bar = BARS.get(name)
        verdict = "" if bar is None else (
            "  bar met" if o.ok and o.seconds <= bar[0] and o.peak_mb <= bar[1]
            else f"  bar missed (<= {bar[0]} s, <= {bar[1]} MB)")
        print(f"{name:>20}: {o.seconds:7.1f} s {o.peak_mb:7.0f} MB {o.cpu_s:7.1f} s CPU  "
              f"{'scored' if o.ok else 'FAILED'}: {o.line}{verdict}", flush=True)
    times = {o.name: o.seconds for o in outcomes if o.ok}
    if "subpaths-490" in times and "subpaths-4900" in times:
        ratio = times["subpaths-4900"] / times["subpaths-490"]
        print(f"subpaths 4900 / 490: {ratio:.1f}x the time (bar <= 12x)", flush=True)
    print(f"# after: {machine_load()}", flush=True)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m svgloo.validation.big_inputs")
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write the inputs to a folder")
    w.add_argument("folder")
    b = sub.add_parser("bench", help="score each input in a fresh process; print the bars")
    b.add_argument("--only", nargs="+", choices=sorted(INPUTS), default=None)
    b.add_argument("--timeout", type=float, default=420.0,
                   help="seconds before a run counts as no answer (default 420)")
    b.add_argument("--method", choices=["fast", "naive"], default="fast")
    args = parser.parse_args(argv)
    if args.command == "write":
        folder = Path(args.folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name, make in INPUTS.items():
            (folder / f"{name}.svg").write_text(make())
        return 0
    bench(args.only or list(INPUTS), args.timeout, ["--method", args.method])
    return 0


if __name__ == "__main__":
    sys.exit(main())
