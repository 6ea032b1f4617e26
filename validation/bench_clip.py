"""Benchmark: the CLIP backbone's encoder throughput and drift per precision.

    python -m svgloo.validation.bench_clip [DIR] --weights CKPT [--model NAME_OR_CONFIG]
        [--limit N] [--precisions fp32,bf16,int8] [--device cpu] [--json FILE]

For each file (self-analysis, fast leave-one-out at 384 px), the leave-one-out images of
the units that change the picture are embedded with each precision. Printed per
precision: images per second of the encoder (the same images, run back to back), and
against fp32: the correlation of the units' deltas over all files, the largest absolute
delta difference, and the share of units whose verdict (helpful/neutral/harmful at the
default thresholds) agrees. Numbers depend on the model: on a tiny random model they show
only that the machinery works.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def _verdicts(deltas: np.ndarray, helpful: float = 0.005, harmful: float = -0.005):
    return np.where(deltas > helpful, 1, np.where(deltas < harmful, -1, 0))


def main(argv: list[str] | None = None) -> int:
    from svgloo.engine.document import load_document
    from svgloo.engine.loo import leave_one_out
    from svgloo.engine.units import extract_units
    from svgloo.engine.workers import RenderPool
    from svgloo.plugins.clip_backbone import ClipBackbone

    default_dir = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
    p = argparse.ArgumentParser(prog="python -m svgloo.validation.bench_clip",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("dir", nargs="?", default=str(default_dir))
    p.add_argument("--weights", required=True, help="CLIP checkpoint (state_dict)")
    p.add_argument("--model", default="ViT-B-32", help="open_clip model name or JSON config")
    p.add_argument("--limit", type=int, default=20, help="first N files (default 20)")
    p.add_argument("--precisions", default="fp32,bf16,int8")
    p.add_argument("--device", default="cpu")
    p.add_argument("--json", help="write the table to this file")
    args = p.parse_args(argv)
    precisions = args.precisions.split(",")
    if precisions[0] != "fp32":
        precisions.insert(0, "fp32")
    files = sorted(Path(args.dir).rglob("*.svg"))[: args.limit]
    backbones = {pr: ClipBackbone(device=args.device, weights=args.weights,
                                  model_name=args.model, precision=pr) for pr in precisions}
    pool = RenderPool()
    deltas = {pr: [] for pr in precisions}
    seconds = {pr: 0.0 for pr in precisions}
    images_total = 0
    try:
        for path in files:
            us = extract_units(load_document(path))
            loo = leave_one_out(us, "fast", 384, pool=pool)
            changed = [k for k, patch in enumerate(loo.patches) if patch.box is not None]
            images = np.stack([loo.image_without(k) for k in changed]) if changed else None
            if images is None:
                continue
            images_total += len(images)
            for pr, bb in backbones.items():
                ref = bb.embed_images([loo.full])[0]
                full = float(bb.similarity(loo.full[None], ref)[0])
                t = time.perf_counter()
                sims = bb.similarity(images, ref)
                seconds[pr] += time.perf_counter() - t
                deltas[pr].append(full - sims)
    finally:
        pool.close()
    base = np.concatenate(deltas["fp32"]) if deltas["fp32"] else np.zeros(0)
    table = []
    print(f"{len(files)} files, {images_total} leave-one-out images, device {args.device}")
    print(f"{'precision':>9} {'img/s':>8} {'delta corr':>10} {'max |d delta|':>13} "
          f"{'verdicts agree':>14}")
    for pr in precisions:
        d = np.concatenate(deltas[pr]) if deltas[pr] else np.zeros(0)
        corr = float(np.corrcoef(base, d)[0, 1]) if len(d) > 1 and base.std() > 0 else 1.0
        row = {"precision": pr, "images_per_s": images_total / max(seconds[pr], 1e-9),
               "delta_correlation": corr,
               "max_delta_difference": float(np.abs(d - base).max()) if len(d) else 0.0,
               "verdict_agreement": float((_verdicts(d) == _verdicts(base)).mean())
               if len(d) else 1.0}
        table.append(row)
        print(f"{pr:>9} {row['images_per_s']:>8.1f} {corr:>10.5f} "
              f"{row['max_delta_difference']:>13.5f} {row['verdict_agreement']:>13.1%}")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
