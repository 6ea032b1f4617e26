"""``svgloo bench artifacts DIR`` and ``svgloo bench edits DIR``: the validation harness."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Set as AbstractSet
from pathlib import Path

from svgloo.engine.reading.files import atomic_write_text
from svgloo.engine.settings import DEFAULT_RENDER_SIZE


def register(sub) -> None:
    p = sub.add_parser("bench", help="validation benchmarks (artifact detection, edit "
                                     "precision)",
                       description="Validation harness: inject artifacts and measure how well "
                                   "detectors find them; apply concept edits and measure "
                                   "their precision.")
    bsub = p.add_subparsers(dest="bench_command", metavar="BENCH")
    bsub.required = True

    a = bsub.add_parser("artifacts", help="inject one artifact of each kind per file; F1 of "
                                          "six detectors under three references")
    a.add_argument("dir", help="folder of SVG files (searched recursively)")
    a.add_argument("--limit", type=int, help="use the first N files (sorted by path)")
    a.add_argument("--per-folder", type=int, metavar="N",
                   help="a seeded sample: N files from each sub-folder (plus every emoji "
                        "with a counterpart in the other set, for the cross reference)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--json", metavar="FILE", help="write per-file rows and the summary")
    a.add_argument("--plots", metavar="DIR", help="write bar charts of F1 and recall")
    a.add_argument("--backbone", default="pixel",
                   help="pixel (default), clip, or auto (clip when its weights exist)")
    a.add_argument("--size", type=int, default=DEFAULT_RENDER_SIZE)
    a.add_argument("--detectors", default="loo,isolated,prefix,random,last_k,syntax",
                   help="comma-separated subset of loo,isolated,prefix,random,last_k,syntax")
    a.add_argument("--ensure-visible", action="store_true",
                   help="re-draw artifacts hidden under other content (selects by the "
                        "leave-one-out footprint, so off by default)")
    a.set_defaults(func=run_artifacts)

    e = bsub.add_parser("edits", help="apply the five concept edits; edit precision")
    e.add_argument("dir", help="folder of SVG files (searched recursively)")
    e.add_argument("--limit", type=int, help="use the first N files (sorted by path)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--json", metavar="FILE", help="write per-file rows and the summary")
    e.add_argument("--plots", metavar="DIR", help="write a bar chart of precision by edit")
    e.add_argument("--size", type=int, default=DEFAULT_RENDER_SIZE)
    e.add_argument("--masks", default="all",
                   choices=["all", "same", "regions>labels", "labels>regions"],
                   help="which masks score the edits: same (the analysed concepts' own), "
                        "regions>labels / labels>regions (edit one kind of concept, score "
                        "with the other's masks; labelled files only), or all (default)")
    e.set_defaults(func=run_edit_bench)


def sample_per_folder(files: list[str], root: str, n: int, seed: int,
                      keep: AbstractSet[str] = frozenset()) -> list[str]:
    """``n`` files from each top-level sub-folder of ``root`` (``random.Random(seed)``),
    plus the files in ``keep``; sorted."""
    import random

    groups: dict[str, list[str]] = {}
    for f in files:
        rel = Path(f).relative_to(root)
        groups.setdefault(rel.parts[0] if len(rel.parts) > 1 else ".", []).append(f)
    rng = random.Random(seed)
    chosen = set(keep)
    for name in sorted(groups):
        members = groups[name]
        chosen.update(rng.sample(members, min(n, len(members))))
    return sorted(chosen)


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
    from svgloo.validation.artifacts import (DETECTORS, SETTINGS, aggregate, bench_file,
                                             calibrate_threshold, counterpart,
                                             evaluate_threshold)
    from svgloo.engine.errors import ConfigError, SvglooError

    dets = tuple(d.strip() for d in args.detectors.split(",") if d.strip())
    bad = [d for d in dets if d not in DETECTORS]
    if bad:
        raise ConfigError(None, f"unknown detector(s) {', '.join(bad)}")
    every = svg_files(args.dir)
    pairs = {f: p for f in every if (p := counterpart(f, every))}
    if args.per_folder:
        files = sample_per_folder(every, args.dir, args.per_folder, args.seed, set(pairs))
    else:
        files = every
    files = files[:args.limit] if args.limit else files
    rows = []
    t0 = time.perf_counter()
    bar = _bar(len(files), "artifacts")
    for i, f in enumerate(files):
        cross, match = pairs.get(f, (None, None))
        try:
            rows.append(bench_file(f, i, seed=args.seed, backbone=args.backbone,
                                   size=args.size, ensure_visible=args.ensure_visible,
                                   detectors=dets, cross=cross, cross_match=match))
        except SvglooError as exc:
            rows.append({"file": f, "index": i, "error": exc.to_json()})
            print(f"svgloo: skipped {exc}", file=sys.stderr)
        bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - t0
    ok = [r for r in rows if "settings" in r]
    summaries = {name: aggregate(ok, name) for name in SETTINGS}
    # threshold calibration: even positions calibrate, odd positions check
    calibration: dict[str, dict] = {}
    for name in ("oracle", "degraded"):
        fit = calibrate_threshold(ok[0::2], name)
        if "threshold" in fit:
            calibration[name] = {
                "calibration_files": len(ok[0::2]), "held_out_files": len(ok[1::2]),
                "fit": fit, "held_out": evaluate_threshold(ok[1::2], fit["threshold"], name),
                "held_out_at_-0.005": evaluate_threshold(ok[1::2], -0.005, name)}
    print(f"artifact detection: {len(ok)} files ({len(rows) - len(ok)} skipped), one "
          f"artifact of each kind per file, seed {args.seed}, backbone "
          f"{ok[0]['backbone'] if ok else args.backbone}, {elapsed:.1f} s")
    hidden = sum(a["visible_px"] == 0 for r in ok for a in r["artifacts"])
    print(f"  artifacts hidden under other content (no pixel changes): {hidden} of "
          f"{3 * len(ok)}")
    for name, summary in summaries.items():
        if not summary:
            continue
        files_n = next(iter(summary.values()))["files"]
        print(f"  reference {name} ({files_n} files):")
        print_table(summary, indent="    ")
    for name, c in calibration.items():
        print(f"  harmful threshold calibrated on {c['calibration_files']} files ({name} "
              f"reference): {c['fit']['threshold']:+.5f} (F1 {c['fit']['f1']:.3f}); "
              f"held-out {c['held_out_files']} files: F1 {c['held_out']['f1']:.3f} "
              f"(at -0.005: {c['held_out_at_-0.005']['f1']:.3f})")
    if args.json:
        _write_json(args.json, {"schema": "svgloo.bench.artifacts/2", "seed": args.seed,
                                "per_folder": args.per_folder, "size": args.size,
                                "seconds": round(elapsed, 2), "summary": summaries,
                                "summary_all_visible": {n: aggregate(ok, n, True)
                                                        for n in SETTINGS},
                                "calibration": calibration, "files": rows})
    if args.plots:
        plot_artifacts(summaries["oracle"], args.plots)
    return 0


def print_table(summary: dict, indent: str = "  ", out=None) -> None:
    out = out or sys.stdout
    kinds = sorted({k for m in summary.values() for k in m["recall_by_kind"]})
    print(f"{indent}{'detector':<9} {'precision':>9} {'recall':>7} {'F1':>6} "
          f"{'R(vis)':>7} {'dMAE':>8}  " + "  ".join(f"R({k})" for k in kinds), file=out)
    for d, m in summary.items():
        print(f"{indent}{d:<9} {m['precision']:>9.3f} {m['recall']:>7.3f} {m['f1']:>6.3f} "
              f"{m['recall_visible']:>7.3f} {m['mae_change']:>+8.4f}  "
              + "  ".join(f"{m['recall_by_kind'].get(k, 0):>{len(k) + 3}.3f}" for k in kinds),
              file=out)


def plot_artifacts(summary: dict, folder: str) -> list[str]:
    import numpy as np

    from svgloo.engine.reporting.plots import pyplot

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
    from svgloo.validation.edits import MASK_SETTINGS, aggregate_edits, bench_edits_file
    from svgloo.engine.errors import ConfigError, SvglooError

    try:
        from svgloo.structure import analysis as structure  # noqa: F401
    except ImportError:
        raise ConfigError(None, "svgloo bench edits needs svgloo.structure.analysis "
                                "(svgloo structure), which is not installed") from None
    files = svg_files(args.dir, args.limit)
    settings = MASK_SETTINGS if args.masks == "all" else (args.masks,)
    rows: dict[str, list[dict]] = {m: [] for m in settings}
    t0 = time.perf_counter()
    bar = _bar(len(files), "edits")
    for i, f in enumerate(files):
        runs: dict = {}     # the structure runs the cross settings share
        for m in settings:
            try:
                row = bench_edits_file(f, i, seed=args.seed, size=args.size, masks=m,
                                       runs=runs)
            except SvglooError as exc:
                row = {"file": f, "index": i, "error": exc.to_json()}
                print(f"svgloo: skipped {exc}", file=sys.stderr)
            if row is None:      # a cross setting on a file without labels
                break
            rows[m].append(row)
        bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - t0
    summaries = {m: aggregate_edits(rows[m]) for m in settings}
    if "same" in rows and len(settings) > 1:
        labelled = {r["file"] for m in settings if m != "same" for r in rows[m]}
        summaries["same (labelled files)"] = aggregate_edits(
            [r for r in rows["same"] if r["file"] in labelled])
    print(f"edit precision: {len(files)} files, {elapsed:.1f} s")
    for name, s in summaries.items():
        f = s["files"]
        print(f"  masks {name}: {f['measured']} files measured, {f['trivial']} trivial (one "
              f"concept or one active unit; not correlated), {f['correlated']} correlated")
        print(f"    {'edit':<8} {'precision':>9} {'n':>5}   r(purity) [95% CI] (n files)")
        for e, v in list(s["per_edit"].items()) + [("pooled", s["overall"])]:
            mean = "-" if v["mean"] is None else f"{v['mean']:.3f}"
            c = (s["correlations"].get("purity") if e == "pooled"
                 else s["correlations_by_edit"].get("purity", {}).get(e)) or {}
            corr = "n/a" if c.get("r") is None else \
                f"{c['r']:+.3f} [{c['low']:+.2f}, {c['high']:+.2f}] ({c['n']})"
            print(f"    {e:<8} {mean:>9} {v['n']:>5}   {corr}")
        others = [f"{m} {c['r']:+.2f}" for m, c in s["correlations"].items()
                  if m != "purity" and c.get("r") is not None]
        if others:
            print("    pooled r of the other metrics: " + ", ".join(others))
    if args.json:
        _write_json(args.json, {"schema": "svgloo.bench.edits/2", "seed": args.seed,
                                "seconds": round(elapsed, 2), "summary": summaries,
                                "files": rows})
    if args.plots:
        plot_edits(summaries[settings[0]], args.plots)
    return 0


def plot_edits(summary: dict, folder: str) -> list[str]:
    from svgloo.engine.reporting.plots import pyplot

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
