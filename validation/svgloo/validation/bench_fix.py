"""Benchmark: ``svgloo fix`` against SVGO's default preset on a folder of SVGs.

    python -m svgloo.validation.bench_fix [DIR] [--limit N] [--svgo CMD] [--json FILE]

For every .svg below DIR (default: the shared corpus), in name order (every k-th file
with --limit, spread over the names): the bytes each tool saves, the elements it removes
(elements of the parsed output vs the input), and the pixels its output changes in
CairoSVG's picture at 384 px against the original's (the engine's render workers;
a pixel counts when a channel over white moves by more than 12/255, the scoring
footprint's threshold, ``proof.changed_pixels``; and the largest change /255).

``svgloo fix`` runs as ``svgloo fix`` does (``--only invisible``, pixel backbone, 384 px);
SVGO runs only when it is installed: ``--svgo`` (default: ``svgo`` on PATH, else
``/tmp/svgo/node_modules/.bin/svgo``), with its default preset (``svgo -i IN -o OUT``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from svgloo.engine.settings import DEFAULT_RENDER_SIZE

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
SIZE = DEFAULT_RENDER_SIZE  # as `svgloo fix` scores by default


def find_svgo(given: str | None) -> str | None:
    for candidate in (given, shutil.which("svgo"), "/tmp/svgo/node_modules/.bin/svgo"):
        if candidate and (shutil.which(candidate) or os.access(candidate, os.X_OK)):
            return candidate
    return None


def run_svgo(svgo: str, data: bytes) -> bytes | None:
    """SVGO's default preset on ``data``; None when it fails."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "in.svg"), Path(tmp, "out.svg")
        src.write_bytes(data)
        done = subprocess.run([svgo, "-q", "-i", str(src), "-o", str(out)],
                              capture_output=True, timeout=120)
        return out.read_bytes() if done.returncode == 0 and out.exists() else None


def count_elements(data: bytes | str) -> int:
    from svgloo.engine.reading.document import parse_document

    return len(parse_document(data, "bench.svg").elements)


def picture_change(original: bytes | str, edited: bytes | str, pool, limits) -> tuple[int, int]:
    """(pixels changed by more than 12/255 over white, largest change /255): CairoSVG at
    384 px, the engine's render workers."""
    import numpy as np

    from svgloo.engine.rendering.render_jobs import job_render_full
    from svgloo.engine.proving.proof import changed_pixels

    texts = [t if isinstance(t, str) else t.decode("utf-8", "replace")
             for t in (original, edited)]
    pictures = [rgb for rgb, _ in pool.map(job_render_full,
                                           [(t, SIZE, limits, "bench.svg") for t in texts],
                                           "bench.svg")]
    a, b = pictures
    largest = int(np.abs(a.astype(np.int16) - b.astype(np.int16)).max())
    return changed_pixels(a, b), largest


def measure(path: Path, svgo: str | None, pool, settings) -> dict:
    from svgloo.engine.reading.files import encode_like
    from svgloo.engine.fixing.fix import fix_text

    data = path.read_bytes()
    row: dict = {"file": str(path), "bytes": len(data), "elements": count_elements(data)}
    t0 = time.perf_counter()
    fixed = fix_text(data, str(path), ("invisible",), settings, pool)
    out = encode_like(fixed.text, data, str(path)) if fixed.changed else data
    row["fix"] = {"saved": len(data) - len(out),
                  "removed": row["elements"] - count_elements(out),
                  "pixels": picture_change(data, out, pool, settings.limits),
                  "seconds": round(time.perf_counter() - t0, 2),
                  "fell_back": fixed.fell_back}
    if svgo:
        t0 = time.perf_counter()
        by_svgo = run_svgo(svgo, data)
        if by_svgo is None:
            row["svgo"] = {"failed": True}
        else:
            row["svgo"] = {"saved": len(data) - len(by_svgo),
                           "removed": row["elements"] - count_elements(by_svgo),
                           "pixels": picture_change(data, out, pool, settings.limits),
                           "seconds": round(time.perf_counter() - t0, 2)}
    return row


def summarize(rows: list[dict], tool: str) -> dict:
    done = [r[tool] for r in rows if tool in r and not r[tool].get("failed")]
    if not done:
        return {}
    pixels = [d["pixels"][0] for d in done]
    return {"files": len(done), "failed": sum(1 for r in rows if r.get(tool, {}).get("failed")),
            "files_changed": sum(1 for d in done if d["saved"] != 0),
            "bytes_saved": sum(d["saved"] for d in done),
            "elements_removed": sum(d["removed"] for d in done),
            "files_with_pixels_changed": sum(1 for p in pixels if p > 0),
            "most_pixels_changed": max(pixels),
            "largest_change": max(d["pixels"][1] for d in done)}


def main(argv: list[str] | None = None) -> int:
    from svgloo.engine.errors import SvglooError
    from svgloo.engine.scoring.score import ScoreSettings
    from svgloo.engine.processes.workers import shared_pool

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", default=str(CORPUS))
    ap.add_argument("--limit", type=int, default=0, help="at most N files, spread over names")
    ap.add_argument("--svgo", help="the svgo command (default: svgo on PATH, or /tmp/svgo)")
    ap.add_argument("--json", help="write every row and the summary here")
    args = ap.parse_args(argv)
    files = sorted(p for p in Path(args.dir).rglob("*.svg")
                   if not p.name.endswith(".ref.svg"))
    if args.limit and len(files) > args.limit:
        files = files[::max(1, len(files) // args.limit)][:args.limit]
    svgo = find_svgo(args.svgo)
    settings = ScoreSettings(backbone="pixel", size=SIZE)
    pool = shared_pool(settings.limits)
    load = os.getloadavg()
    t0 = time.perf_counter()
    rows = []
    for path in files:
        try:
            rows.append(measure(path, svgo, pool, settings))
        except SvglooError as exc:
            rows.append({"file": str(path), "error": str(exc)})
        r = rows[-1]
        fix, other = r.get("fix", {}), r.get("svgo", {})
        print(f"{path.name}: fix -{fix.get('saved', '?')} B, {fix.get('removed', '?')} el, "
              f"{(fix.get('pixels') or ['?'])[0]} px | svgo -{other.get('saved', '-')} B, "
              f"{other.get('removed', '-')} el, {(other.get('pixels') or ['-'])[0]} px",
              flush=True)
    summary = {"files": len(files), "svgo": svgo, "load_before": [round(x, 2) for x in load],
               "load_after": [round(x, 2) for x in os.getloadavg()],
               "seconds": round(time.perf_counter() - t0, 1), "cpus": os.cpu_count(),
               "fix": summarize(rows, "fix"), "svgo_default": summarize(rows, "svgo")}
    worst = max((r for r in rows if "svgo" in r and "pixels" in r["svgo"]),
                key=lambda r: r["svgo"]["pixels"][0], default=None)
    if worst:
        summary["svgo_worst_file"] = {"file": worst["file"], "pixels": worst["svgo"]["pixels"]}
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
