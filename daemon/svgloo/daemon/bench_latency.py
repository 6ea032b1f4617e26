"""Measure score latency through the daemon: cold start, warm, after a small edit, cache hit.

    python -m svgloo.daemon.bench_latency [FILE] [--repeat 3] [--json]

Starts a fresh daemon on a temporary socket with an empty temporary cache, then times
(wall clock, client side, one request at a time):

* cold: the first score call (process just started: backbone loaded and render workers
  started by this call);
* warm, full render: the same file at a render size not seen before (no cached layers);
* warm, one element edited: one colour changed, so only that element's layers re-render;
* cache hit: the same request again;
* in-process: ``svgloo score FILE --json`` as a fresh process, for comparison.

The default file is the ~50-unit corpus file noto/emoji_u1f6d5.svg (49 units).

    python -m svgloo.daemon.bench_latency --incremental [FILE ...] [--repeat 5]

Re-scoring after an edit against a cold scoring, A/B through the service API (the
daemon's ScoringService in this process, its render pool warm): per file and repetition,
a cold scoring (layer cache and kept runs emptied) of the text with one colour changed,
then right after it that text with one more colour changed, re-scored from the run just
made (the daemon's incremental path). ``--edit unit`` (default) changes the colour of a
seeded random unit element (validation/random_edits.py); ``--edit first`` the first
``#rrggbb`` of the file, often a gradient stop or the background that every unit meets.
Medians per file, the stages' costs from
the results' timings, and the machine's load (``uptime``) before and after. The default
files are the corpus files of 100 units or more.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from svgloo.engine.settings import DEFAULT_RENDER_SIZE

DEFAULT_FILE = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "noto" / \
    "emoji_u1f6d5.svg"


def _edit_colour(text: str, i: int) -> str:
    """Change the first #rrggbb colour to a new value (a one-element edit)."""
    m = re.search(r"#[0-9a-fA-F]{6}", text)
    if not m:
        return text.replace("</svg>", f"<!-- {i} --></svg>")
    return text[:m.start()] + f"#{(i * 2654435761) % 0xFFFFFF:06x}" + text[m.end():]


STAGES = ("render_s", "composite_s", "score_s", "findings_s", "proof_s")


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "uptime unavailable"


def large_corpus_files(least: int = 100) -> list[str]:
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.reading.units import extract_units

    out = []
    for path in sorted(DEFAULT_FILE.parents[1].glob("*/*.svg")):
        try:
            if len(extract_units(load_document(path)).units) >= least:
                out.append(str(path))
        except Exception:  # noqa: BLE001 - a file the engine refuses is not measured
            continue
    return out


def incremental_ab(files: list[str], repeat: int, size: int, backbone: str,
                   edit: str = "unit") -> list[dict]:
    """Cold vs re-scored after a colour edit, back to back through ScoringService."""
    import random

    from svgloo.daemon.cache import ResultCache
    from svgloo.daemon.service import ScoringService
    from svgloo.validation.random_edits import random_edit

    def recolour(text: str, i: int, rng) -> str:
        if edit == "first":
            return _edit_colour(text, i)
        return random_edit(text, "colour", rng)

    base = Path(tempfile.mkdtemp(prefix="sgli", dir="/tmp"))
    service = ScoringService(cache=ResultCache(base, disk=False))
    settings = {"backbone": backbone, "size": size}
    rows = []
    try:
        for path in files:
            text = Path(path).read_text()
            uri = Path(path).absolute().as_uri()
            service.run(kind="score", text=_edit_colour(text, 10 ** 6), uri=uri,
                        settings=settings)  # the workers warm, the file's code paths run
            cold, again, stages_cold, stages_again, kept = [], [], [], [], 0
            rng = random.Random(Path(path).name)
            for i in range(repeat):
                service.layer_cache.clear()
                service.runs.clear()
                first = recolour(text, 2 * i + 1, rng)
                t = time.perf_counter()
                job = service.run(kind="score", text=first, uri=uri, settings=settings)
                cold.append(time.perf_counter() - t)
                assert job.error is None and job.result is not None and not job.cached, job.error
                stages_cold.append(job.result["timings"])
                before = service.incremental
                t = time.perf_counter()
                second = recolour(first if edit == "unit" else text, 2 * i + 2, rng)
                job = service.run(kind="score", text=second, uri=uri, settings=settings)
                again.append(time.perf_counter() - t)
                assert job.error is None and job.result is not None and not job.cached, job.error
                kept += service.incremental - before
                stages_again.append(job.result["timings"])
            assert job.result is not None  # checked in the loop
            rows.append({
                "file": path, "units": len(job.result["units"]),
                "cold_s": statistics.median(cold), "again_s": statistics.median(again),
                "ratio": statistics.median(a / c for a, c in zip(again, cold)),
                "incremental_runs": kept,
                "cold_stages": {k: statistics.median(t.get(k, 0.0) for t in stages_cold)
                                for k in STAGES},
                "again_stages": {k: statistics.median(t.get(k, 0.0) for t in stages_again)
                                 for k in STAGES}})
    finally:
        service.close()
        shutil.rmtree(base, ignore_errors=True)
    return rows


def main_incremental(args) -> int:
    files = args.files or large_corpus_files()
    load_before = _uptime()
    rows = incremental_ab(files, args.repeat, args.size, args.backbone, args.edit)
    load_after = _uptime()
    if args.json:
        print(json.dumps({"rows": rows, "uptime_before": load_before,
                          "uptime_after": load_after}, indent=2))
        return 0
    what = "a random unit's colour" if args.edit == "unit" else "the first colour"
    print(f"re-score after an edit of {what} vs cold, through the service API, "
          f"{args.size} px, median of {args.repeat} A/B pairs")
    print(f"before: {load_before}")
    print(f"{'file':<28} {'units':>5} {'cold s':>7} {'again s':>7} {'again/cold':>10}   "
          "stages cold -> again (render, composite, score, findings, proof s)")
    for r in rows:
        stages = "  ".join(f"{r['cold_stages'][k]:.3f}->{r['again_stages'][k]:.3f}"
                           for k in STAGES)
        print(f"{Path(r['file']).parent.name + '/' + Path(r['file']).name:<28} "
              f"{r['units']:>5} {r['cold_s']:>7.3f} {r['again_s']:>7.3f} "
              f"{r['ratio']:>9.0%}   {stages}")
    if rows:
        print(f"median again/cold over {len(rows)} files: "
              f"{statistics.median(r['ratio'] for r in rows):.0%}")
    print(f"after:  {load_after}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m svgloo.daemon.bench_latency")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--backbone", default="auto")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--incremental", action="store_true",
                    help="re-score after an edit vs cold, A/B through the service API")
    ap.add_argument("--size", type=int, default=DEFAULT_RENDER_SIZE,
                    help="render size for --incremental")
    ap.add_argument("--edit", choices=("unit", "first"), default="unit",
                    help="--incremental: recolour a random unit, or the file's first colour")
    args = ap.parse_args(argv)
    if args.incremental:
        return main_incremental(args)
    args.file = args.files[0] if args.files else str(DEFAULT_FILE)

    from svgloo.daemon.client import DaemonClient, start_daemon
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.reading.units import extract_units

    path = os.path.abspath(args.file)
    text = Path(path).read_text()
    n_units = len(extract_units(load_document(path)).units)
    base = Path(tempfile.mkdtemp(prefix="sglb", dir="/tmp"))
    sock = base / "d.sock"
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(base / "cache"))
    old_env = os.environ.get("SVGLOO_CACHE_DIR")
    os.environ["SVGLOO_CACHE_DIR"] = str(base / "cache")
    client = DaemonClient(sock, autostart=False)
    settings = {"backbone": args.backbone}
    out: dict = {"file": path, "units": n_units}
    try:
        t0 = time.perf_counter()
        start_daemon(sock, env=env)
        out["daemon_start_s"] = time.perf_counter() - t0

        def timed(**kw):
            t = time.perf_counter()
            r = client.score(**kw)
            return time.perf_counter() - t, r

        out["cold_s"], r = timed(text=text, uri="file://" + path, settings=settings)
        assert not r["daemon"]["cached"]
        out["backbone"] = r["backbone"]
        full, edit, hit = [], [], []
        for i in range(args.repeat):
            dt, r = timed(text=text, uri="file://" + path,
                          settings={**settings, "size": DEFAULT_RENDER_SIZE - 1 - i})
            assert not r["daemon"]["cached"]
            full.append(dt)
            dt, r = timed(text=_edit_colour(text, i + 1), uri="file://" + path, settings=settings)
            assert not r["daemon"]["cached"]
            edit.append(dt)
            dt, r = timed(text=text, uri="file://" + path, settings=settings)
            assert r["daemon"]["cached"]
            hit.append(dt)
        out["warm_full_render_s"] = statistics.median(full)
        out["warm_one_edit_s"] = statistics.median(edit)
        out["edit_vs_full_render"] = statistics.median(e / f for e, f in zip(edit, full))
        out["cache_hit_s"] = statistics.median(hit)
        st = client.status()
        out["cache"] = {k: st["cache"][k] for k in ("hits", "misses", "layer_entries")}
        client.shutdown()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "svgloo", "score", path, "--json",
                        "--backbone", args.backbone], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        out["in_process_cli_s"] = time.perf_counter() - t
    finally:
        try:
            client.shutdown()
        except Exception:  # noqa: BLE001 - best-effort clean-up after the measurement
            pass
        if old_env is None:
            os.environ.pop("SVGLOO_CACHE_DIR", None)
        else:
            os.environ["SVGLOO_CACHE_DIR"] = old_env
        time.sleep(0.5)
        shutil.rmtree(base, ignore_errors=True)

    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{out['file']} ({out['units']} units, backbone {out['backbone']}, "
              f"median of {args.repeat})")
        print(f"  daemon start (process up, socket answers): {out['daemon_start_s'] * 1000:8.0f} ms")
        print(f"  cold score (first call after start):       {out['cold_s'] * 1000:8.0f} ms")
        print(f"  warm score, full render (new size):        "
              f"{out['warm_full_render_s'] * 1000:8.0f} ms")
        print(f"  warm score, one element edited:            "
              f"{out['warm_one_edit_s'] * 1000:8.0f} ms")
        print(f"  one element edited / full render:          "
              f"{out['edit_vs_full_render']:8.0%}")
        print(f"  cache hit:                                 {out['cache_hit_s'] * 1000:8.1f} ms")
        print(f"  in-process `svgloo score` (new process):   "
              f"{out['in_process_cli_s'] * 1000:8.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
