"""``svgloo bench artifacts DIR`` and ``svgloo bench edits DIR``: the validation harness."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from svgloo.engine.files import atomic_write_text


def register(sub) -> None:
    p = sub.add_parser("bench", help="validation benchmarks (artifact detection, edit "
                                     "precision)",
                       description="Validation harness: inject artifacts and measure how well "
                                   "detectors find them; apply concept edits and measure "
                                   "their precision.")
    bsub = p.add_subparsers(dest="bench_command", metavar="BENCH")
    bsub.required = True

    a = bsub.add_parser("artifacts", help="inject 3 artifacts per file; F1 of the detectors")
    a.add_argument("dir", help="folder of SVG files (searched recursively)")
    a.add_argument("--limit", type=int, help="use the first N files (sorted by path)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--json", metavar="FILE", help="write per-file rows and the summary")
    a.add_argument("--plots", metavar="DIR", help="write bar charts of F1 and recall")
    a.add_argument("--backbone", default="pixel",
                   help="pixel (default), clip, or auto (clip when its weights exist)")
    a.add_argument("--size", type=int, default=384)
    a.add_argument("--detectors", default="loo,isolated,prefix,random",
                   help="comma-separated subset of loo,isolated,prefix,random")
    a.add_argument("--no-ensure-visible", dest="ensure_visible", action="store_false",
                   help="keep artifacts that end up hidden under other content")
    a.set_defaults(func=run_artifacts)

    e = bsub.add_parser("edits", help="apply the five concept edits; edit precision")
    e.add_argument("dir", help="folder of SVG files (searched recursively)")
    e.add_argument("--limit", type=int, help="use the first N files (sorted by path)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--json", metavar="FILE", help="write per-file rows and the summary")
    e.add_argument("--plots", metavar="DIR", help="write a bar chart of precision by edit")
    e.add_argument("--size", type=int, default=384)
    e.set_defaults(func=run_edit_bench)


def svg_files(folder: str, limit: int | None = None) -> list[str]:
    from svgloo.engine.errors import InputError

    root = Path(folder)
    if not root.is_dir():
        raise InputError(folder, "not a folder")
    files = sorted(str(p) for p in root.rglob("*") if p.suffix.lower() in (".svg", ".svgz")
                   and p.is_file())
    return files[:limit] if limit else files


def _write_json(path: str, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=1))


def _bar(total: int, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="file", file=sys.stderr,
                disable=not sys.stderr.isatty())


def run_artifacts(args) -> int:
    from svgloo.validation.artifacts import DETECTORS, aggregate, bench_file
    from svgloo.engine.errors import ConfigError, SvglooError

    dets = tuple(d.strip() for d in args.detectors.split(",") if d.strip())
    bad = [d for d in dets if d not in DETECTORS]
    if bad:
        raise ConfigError(None, f"unknown detector(s) {', '.join(bad)}")
    files = svg_files(args.dir, args.limit)
    rows = []
    t0 = time.perf_counter()
    bar = _bar(len(files), "artifacts")
    for i, f in enumerate(files):
        try:
            rows.append(bench_file(f, i, seed=args.seed, backbone=args.backbone,
                                   size=args.size, ensure_visible=args.ensure_visible,
                                   detectors=dets))
        except SvglooError as exc:
            rows.append({"file": f, "index": i, "error": exc.to_json()})
            print(f"svgloo: skipped {exc}", file=sys.stderr)
        bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - t0
    summary = aggregate(rows)
    summary_visible = aggregate(rows, only_visible=True)
    ok = [r for r in rows if "detectors" in r]
    print(f"artifact detection: {len(ok)} files ({len(rows) - len(ok)} skipped), "
          f"3 artifacts each, seed {args.seed}, backbone "
          f"{ok[0]['backbone'] if ok else args.backbone}, {elapsed:.1f} s")
    print(f"  files with every artifact visible: {sum(r['all_visible'] for r in ok)}")
    kinds = sorted({k for m in summary.values() for k in m["recall_by_kind"]})
    print(f"  {'detector':<9} {'precision':>9} {'recall':>7} {'F1':>6} {'dSSIM':>8}  "
          + "  ".join(f"R({k})" for k in kinds))
    for d, m in summary.items():
        print(f"  {d:<9} {m['precision']:>9.3f} {m['recall']:>7.3f} {m['f1']:>6.3f} "
              f"{m['ssim_change']:>+8.4f}  "
              + "  ".join(f"{m['recall_by_kind'].get(k, 0):>{len(k) + 3}.3f}" for k in kinds))
    if args.json:
        _write_json(args.json, {"schema": "svgloo.bench.artifacts/1", "seed": args.seed,
                                "seconds": round(elapsed, 2), "summary": summary,
                                "summary_all_visible": summary_visible, "files": rows})
    if args.plots:
        plot_artifacts(summary, args.plots)
    return 0


def plot_artifacts(summary: dict, folder: str) -> list[str]:
    import numpy as np

    from svgloo.engine.plots import pyplot

    plt = pyplot()

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    dets = list(summary)
    kinds = sorted({k for m in summary.values() for k in m["recall_by_kind"]})
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    axes[0].bar(dets, [summary[d]["f1"] for d in dets], color="#4477aa")
    axes[0].set_ylim(0, 1.05)
    axes[0].set_title("F1 by detector")
    w = 0.8 / max(1, len(kinds))
    x = np.arange(len(dets))
    for j, k in enumerate(kinds):
        axes[1].bar(x + j * w, [summary[d]["recall_by_kind"].get(k, 0) for d in dets], w,
                    label=k)
    axes[1].set_xticks(x + w * (len(kinds) - 1) / 2, dets)
    axes[1].set_ylim(0, 1.05)
    axes[1].set_title("recall by detector and artifact kind")
    axes[1].legend()
    fig.tight_layout()
    path = out / "artifacts_f1.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [str(path)]


def run_edit_bench(args) -> int:
    from svgloo.validation.edits import aggregate_edits, bench_edits_file
    from svgloo.engine.errors import ConfigError, SvglooError

    try:
        from svgloo.structure import analysis as structure  # noqa: F401
    except ImportError:
        raise ConfigError(None, "svgloo bench edits needs svgloo.structure.analysis "
                                "(svgloo structure), which is not installed") from None
    files = svg_files(args.dir, args.limit)
    rows = []
    t0 = time.perf_counter()
    bar = _bar(len(files), "edits")
    for i, f in enumerate(files):
        try:
            rows.append(bench_edits_file(f, i, seed=args.seed, size=args.size))
        except SvglooError as exc:
            rows.append({"file": f, "index": i, "error": exc.to_json()})
            print(f"svgloo: skipped {exc}", file=sys.stderr)
        bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - t0
    s = aggregate_edits(rows)
    ok = [r for r in rows if "edits" in r]
    print(f"edit precision: {len(ok)} files ({len(rows) - len(ok)} skipped), "
          f"{elapsed:.1f} s")
    print(f"  {'edit':<8} {'precision':>9} {'n':>5}")
    for e, v in list(s["per_edit"].items()) + [("overall", s["overall"])]:
        mean = "-" if v["mean"] is None else f"{v['mean']:.3f}"
        print(f"  {e:<8} {mean:>9} {v['n']:>5}")
    print("  correlation of each structural metric with a file's mean edit precision:")
    for m, c in s["correlations"].items():
        if c["r"] is None:
            print(f"    {m:<12} n/a (n={c['n']})")
        else:
            print(f"    {m:<12} r={c['r']:+.3f}  p={c['p']:.3g}  (n={c['n']})")
    if args.json:
        _write_json(args.json, {"schema": "svgloo.bench.edits/1", "seed": args.seed,
                                "seconds": round(elapsed, 2), "summary": s, "files": rows})
    if args.plots:
        plot_edits(s, args.plots)
    return 0


def plot_edits(summary: dict, folder: str) -> list[str]:
    from svgloo.engine.plots import pyplot

    plt = pyplot()

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    names = list(summary["per_edit"]) + ["overall"]
    vals = [(summary["per_edit"].get(n) or summary["overall"])["mean"] or 0 for n in names]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(names, vals, color="#228833")
    ax.set_ylim(0, 1.05)
    ax.set_title("edit precision")
    fig.tight_layout()
    path = out / "edits_precision.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [str(path)]
