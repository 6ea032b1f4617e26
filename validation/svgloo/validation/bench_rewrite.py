"""Benchmark: ``svgloo fix --rewrite`` against SVGO's default preset, refereed in Chromium.

    python -m svgloo.validation.bench_rewrite [DIR] [--split held-out|tuning|all]
        [--browser [--round]] [--svgo CMD] [--sizes PX,PX] [--every N] [--json FILE]

For every .svg below DIR (default: the shared corpus), each tool's output is measured as
written: bytes saved (negative when it grew), and how much it moves Chromium's picture,
drawn as an ``<img>`` and in an ``<object>`` (the embedding that keeps masks and filters
live, like inline SVG) at each of ``--sizes`` px (default 384 and 100): the largest change
of any channel /255, in any of the views svgloo.validation.chromium compares
(premultiplied RGBA, over white and dark). A file "moves" when that exceeds 4/255
(``proof.BROWSER_TOLERANCE``). Times are per file, the whole tool: svgloo's scoring,
proofs and rewriting in this process (its render workers already warm), SVGO as
``svgo -i IN -o OUT`` (a Node start each).

``--browser`` runs svgloo as ``fix --rewrite --browser`` does: Chromium judges inside the
rewrite stage (chromium_judge.py) at the proof's own sizes (the analysis size, 384, and
the document's own, at least 1024 px); ``--round`` as ``fix --round``. 100 px is none of
those, so a pass there is not the judge grading its own work; 384 px is (it says whether
the judge held).
``--every N`` takes every Nth file of the sorted list (a fresh set picked by a rule).

``--split held-out`` (default) takes the files whose SHA-1 of the path below DIR ends in 0-3,
the split chosen before the rewrites were tuned on the rest (``tuning``).

Chromium is driven by svgloo.validation.chromium; without a Chromium the picture columns
are left out. SVGO: ``--svgo`` or ``svgo`` on PATH
(``npm install --prefix /tmp/svgo39 svgo@4``; bench_fix.find_svgo looks in /tmp/svgo too).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from pathlib import Path

from svgloo.validation.bench_fix import CORPUS, find_svgo, run_svgo

HELD_OUT_DIGITS = "0123"


def split(files: list[Path], root: Path, which: str) -> list[Path]:
    if which == "all":
        return files

    def held_out(path: Path) -> bool:
        name = path.relative_to(root).as_posix()
        return hashlib.sha1(name.encode()).hexdigest()[-1] in HELD_OUT_DIGITS

    return [p for p in files if held_out(p) == (which == "held-out")]


def open_chromium():
    """A started Chromium (svgloo.validation.chromium), or None where there is none."""
    from svgloo.validation.chromium import Chromium, find_chromium

    return Chromium() if find_chromium() else None


def chromium_moves(chromium, before: bytes, after: bytes, size: int) -> dict[str, int]:
    from svgloo.validation.chromium import embedded_change

    return embedded_change(chromium, before, after, size)


def measure(path: Path, svgo: str | None, measurer, sizes: tuple[int, ...], settings,
            pool, judge=None, rounding: bool = False) -> dict:
    from svgloo.engine.reading.files import encode_like
    from svgloo.engine.fixing.fix import fix_text

    data = path.read_bytes()
    row: dict = {"file": str(path), "bytes": len(data)}
    t0 = time.perf_counter()
    fixed = fix_text(data, str(path), ("invisible",), settings, pool, rewrite=True,
                     judge=judge, rounding=rounding)
    out = encode_like(fixed.text, data, str(path)) if fixed.changed else data
    row["svgloo"] = {"saved": len(data) - len(out),
                     "seconds": round(time.perf_counter() - t0, 2),
                     "rewritten": fixed.rewritten, "note": fixed.rewrite_note,
                     "judged": fixed.judged, "fell_back": fixed.fell_back}
    outputs = {"svgloo": out}
    if svgo:
        t0 = time.perf_counter()
        other = run_svgo(svgo, data)
        row["svgo"] = {"failed": True} if other is None else \
            {"saved": len(data) - len(other), "seconds": round(time.perf_counter() - t0, 2)}
        if other is not None:
            outputs["svgo"] = other
    if measurer is not None:
        for tool, output in outputs.items():
            row[tool]["chromium"] = measurer.changes(data, output, sizes) \
                if output != data else {f"{how}@{size}": 0 for size in sorted(sizes)
                                        for how in ("img", "object")}
    return row


def summarize(rows: list[dict], tool: str, total_bytes: int) -> dict:
    from svgloo.engine.proving.proof import BROWSER_TOLERANCE

    done = [r[tool] for r in rows if tool in r and not r[tool].get("failed")]
    if not done:
        return {}
    out = {"files": len(done), "files_changed": sum(1 for d in done if d["saved"] != 0),
           "bytes_saved": sum(d["saved"] for d in done),
           "share_saved": round(sum(d["saved"] for d in done) / total_bytes, 4),
           "files_grown": sum(1 for d in done if d["saved"] < 0),
           "seconds_median": round(statistics.median(d["seconds"] for d in done), 2),
           "seconds_max": max(d["seconds"] for d in done)}
    if all("chromium" in d for d in done):
        for key in done[0]["chromium"]:
            moves = [d["chromium"][key] for d in done]
            out[f"moved_{key}"] = sum(1 for m in moves if m > BROWSER_TOLERANCE)
            out[f"largest_{key}"] = max(moves)
        out["moved_any"] = sum(1 for d in done
                               if max(d["chromium"].values()) > BROWSER_TOLERANCE)
    return out


def main(argv: list[str] | None = None) -> int:
    from svgloo.engine.errors import SvglooError
    from svgloo.engine.scoring.score import ScoreSettings
    from svgloo.engine.settings import DEFAULT_RENDER_SIZE
    from svgloo.engine.processes.workers import shared_pool

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", default=str(CORPUS))
    ap.add_argument("--split", default="held-out", choices=("held-out", "tuning", "all"))
    ap.add_argument("--svgo", help="the svgo command (default: svgo on PATH, or /tmp/svgo)")
    ap.add_argument("--sizes", default=f"{DEFAULT_RENDER_SIZE},100",
                    help="Chromium's picture sizes in px, comma-separated")
    ap.add_argument("--browser", action="store_true",
                    help="svgloo as fix --rewrite --browser: Chromium judges inside")
    ap.add_argument("--round", action="store_true", help="with --browser: fix --round")
    ap.add_argument("--every", type=int, default=1, help="only every Nth file")
    ap.add_argument("--json", help="write every row and the summary here")
    args = ap.parse_args(argv)
    root = Path(args.dir)
    sizes = tuple(int(v) for v in args.sizes.split(","))
    files = split(sorted(p for p in root.rglob("*.svg") if not p.name.endswith(".ref.svg")),
                  root, args.split)[::max(1, args.every)]
    svgo = find_svgo(args.svgo)
    settings = ScoreSettings(backbone="pixel")
    pool = shared_pool(settings.limits)
    chromium = open_chromium()
    if args.browser and chromium is None:
        ap.error("--browser needs a Chromium (apt-get install chromium)")
    from svgloo.validation.chromium_judge import ChromiumJudge

    # The measuring judge and the one inside fix share the browser, not their pictures.
    measurer = ChromiumJudge(chromium) if chromium is not None else None
    judge = ChromiumJudge(chromium) if args.browser and chromium is not None else None
    load = os.getloadavg()
    t0 = time.perf_counter()
    rows = []
    for path in files:
        try:
            rows.append(measure(path, svgo, measurer, sizes, settings, pool, judge,
                                args.round and judge is not None))
        except SvglooError as exc:
            rows.append({"file": str(path), "error": str(exc)})
        r = rows[-1]
        print(json.dumps({k: r.get(k) for k in ("file", "bytes", "svgloo", "svgo")}),
              flush=True)
    for j in (measurer, judge):
        if j is not None:
            j.close()
    if chromium is not None:
        chromium.close()
    total = sum(r["bytes"] for r in rows if "bytes" in r)
    summary = {"files": len(files), "bytes": total, "split": args.split, "svgo": svgo,
               "sizes": list(sizes), "chromium": chromium is not None,
               "browser_judge": args.browser, "round": args.round, "every": args.every,
               "load_before": [round(x, 2) for x in load],
               "load_after": [round(x, 2) for x in os.getloadavg()],
               "seconds": round(time.perf_counter() - t0, 1), "cpus": os.cpu_count(),
               "errors": sum(1 for r in rows if "error" in r),
               "svgloo_fix_rewrite" + ("_browser" if args.browser else "") +
               ("_round" if args.round else ""):
                   summarize(rows, "svgloo", total),
               "svgo_default": summarize(rows, "svgo", total)}
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
