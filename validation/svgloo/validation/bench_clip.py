"""Benchmark: the CLIP backbone per precision, end to end and encoder alone, and its drift.

    python -m svgloo.validation.bench_clip [DIR] --weights CKPT [--model NAME_OR_CONFIG]
        [--limit N] [--min-units N] [--max-units N] [--precisions fp32,bf16,int8]
        [--device cpu] [--preprocess auto|host|device] [--json FILE]

Each precision's model is loaded once (as the daemon keeps it warm) and scores every file
the way `svgloo score --backbone clip` does (fast leave-one-out at 384 px, the file's own
reference: its <title>/<desc> as text, else self-analysis). Printed per precision:
leave-one-out images per second end to end (units scored / wall time of the scorings:
renders, composites, encoder), images per second of the encoder (images it embedded / time
of the similarity step; units whose image equals the full render need no encoder pass),
and against fp32: the correlation of the units' deltas over all files, the largest
absolute delta difference, and the share of units whose verdict (the paper's +-0.005)
agrees; then where the time goes: the engine's own stage timings (render_s, score_s, ...;
no proof_s: it scores without the removal proof) summed over the files, with the
similarity step split into the backbone's preprocessing (``_pixels``, host or device,
synchronised) and the rest (the encoder); the JSON holds them too. Throughput depends on the
architecture, not on the weights; drift depends on the weights too: measured with random
weights it shows only that the machinery works. GPU figures: README (Backbones) and tests/measure_clip_gpu.py.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import cast
from pathlib import Path

import numpy as np


def select_files(directory: Path, limit: int, min_units: int, max_units: int) -> list[Path]:
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.reading.units import extract_units

    chosen = []
    for path in sorted(directory.rglob("*.svg")):
        if min_units <= len(extract_units(load_document(path)).units) <= max_units:
            chosen.append(path)
    step = max(1, len(chosen) // max(1, limit))
    return chosen[::step][:limit]  # spread over the names, not the first N


class PixelsTimer:
    """Wraps a backbone's ``_pixels`` (its preprocessing: host or device) to sum its time,
    synchronised on CUDA so that the device's work is counted where it is queued."""

    def __init__(self, backbone) -> None:
        self.seconds = 0.0
        self._inner = getattr(backbone, "_pixels", None)
        if self._inner is not None:
            backbone._pixels = self
        self._cuda = str(getattr(backbone, "device", "cpu")).startswith("cuda")

    def __call__(self, images):
        t = time.perf_counter()
        out = self._inner(images)
        if self._cuda:
            import torch

            torch.cuda.synchronize()
        self.seconds += time.perf_counter() - t
        return out


def run_precision(files: list[Path], backbone, precision: str, pool) -> dict:
    from svgloo.engine.scoring.score import ScoreSettings, score_file

    # Scoring only (no removal proof): this measures the encoder and the leave-one-out,
    # and the proof, which nothing here reads, was 35% of the run on an H100 (issue 36).
    settings = ScoreSettings(backbone="clip", precision=precision, prove=False)
    score_file(str(files[0]), settings, backbone=backbone, pool=pool)  # warm up
    pixels = PixelsTimer(backbone)
    units = encoded = 0
    wall = encoder = 0.0
    deltas: list[float] = []
    verdicts: list[str] = []
    stages: dict[str, float] = {}  # the engine's own timings, summed over the files
    for path in files:
        t = time.perf_counter()
        run = score_file(str(path), settings, backbone=backbone, pool=pool)
        wall += time.perf_counter() - t
        encoder += run.result["timings"]["score_s"]
        for key, value in run.result["timings"].items():
            if key.endswith("_s"):
                stages[key] = stages.get(key, 0.0) + cast(float, value)
        units += len(run.result["units"])
        encoded += sum(p.box is not None for p in run.loo.patches)
        deltas.extend(u["delta"] for u in run.result["units"])
        verdicts.extend(u["verdict"] for u in run.result["units"])  # the engine's own
    return {"precision": precision, "files": len(files), "units": units, "encoded": encoded,
            "units_per_s": units / max(wall, 1e-9), "encoder_images_per_s":
            encoded / max(encoder, 1e-9), "wall_s": wall,
            "timings": {k: round(v, 4) for k, v in stages.items()},
            "preprocess_s": round(pixels.seconds, 4),
            "preprocess_on": getattr(backbone, "preprocess_on", None),
            "deltas": np.array(deltas),
            "verdicts": np.array(verdicts)}


def where_the_time_goes(row: dict) -> str:
    """One line: the stages' seconds and shares of the scorings' wall time, the
    similarity step as preprocessing (where it ran) and encoder."""
    t, wall = row["timings"], max(row["wall_s"], 1e-9)
    encoder = t.get("score_s", 0.0) - row["preprocess_s"]
    parts = [(k[:-2], v) for k, v in t.items() if k not in ("score_s", "total_s")]
    parts += [(f"preprocess ({row['preprocess_on']})", row["preprocess_s"]),
              ("encoder", encoder)]
    parts.append(("other", wall - sum(v for _, v in parts)))
    return ", ".join(f"{name} {v:.2f} s ({v / wall:.0%})" for name, v in parts) + \
        f" of {wall:.2f} s"


def main(argv: list[str] | None = None) -> int:
    from svgloo.engine.processes.workers import RenderPool
    from svgloo.plugins.clip_backbone import ClipBackbone

    default_dir = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
    p = argparse.ArgumentParser(prog="python -m svgloo.validation.bench_clip",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("dir", nargs="?", default=str(default_dir))
    p.add_argument("--weights", required=True, help="CLIP checkpoint (state_dict)")
    p.add_argument("--model", default="ViT-B-32", help="open_clip model name or JSON config")
    p.add_argument("--limit", type=int, default=12, help="files (default 12)")
    p.add_argument("--min-units", type=int, default=20, help="(default 20)")
    p.add_argument("--max-units", type=int, default=99, help="(default 99)")
    p.add_argument("--precisions", default="fp32,bf16,int8")
    p.add_argument("--device", default="cpu")
    p.add_argument("--preprocess", default="auto", choices=["auto", "host", "device"],
                   help="where images are resized and normalised (default auto: the device "
                        "on CUDA, else the host)")
    p.add_argument("--json", help="write the table to this file")
    args = p.parse_args(argv)
    precisions = args.precisions.split(",")
    if precisions[0] != "fp32":
        precisions.insert(0, "fp32")
    files = select_files(Path(args.dir), args.limit, args.min_units, args.max_units)
    if not files:
        print(f"no files with {args.min_units}-{args.max_units} units under {args.dir}")
        return 2
    pool = RenderPool()
    rows = []
    try:
        for pr in precisions:
            backbone = ClipBackbone(device=args.device, weights=args.weights,
                                    model_name=args.model, precision=pr,
                                    preprocess=args.preprocess)
            rows.append(run_precision(files, backbone, pr, pool))
            del backbone
    finally:
        pool.close()
    base, base_verdicts = rows[0]["deltas"], rows[0]["verdicts"]
    print(f"{len(files)} files ({args.min_units}-{args.max_units} units), "
          f"{rows[0]['units']} units, {rows[0]['encoded']} encoder images, device {args.device}")
    print(f"{'precision':>9} {'LOO img/s':>9} {'encoder img/s':>13} {'delta corr':>10} "
          f"{'max |d delta|':>13} {'verdicts agree':>14}")
    table = []
    for row in rows:
        d, verdicts = row.pop("deltas"), row.pop("verdicts")
        row["delta_correlation"] = (float(np.corrcoef(base, d)[0, 1])
                                    if len(d) > 1 and base.std() > 0 else 1.0)
        row["max_delta_difference"] = float(np.abs(d - base).max()) if len(d) else 0.0
        row["verdict_agreement"] = (float((verdicts == base_verdicts).mean())
                                    if len(d) else 1.0)
        table.append(row)
        print(f"{row['precision']:>9} {row['units_per_s']:>9.1f} "
              f"{row['encoder_images_per_s']:>13.1f} {row['delta_correlation']:>10.5f} "
              f"{row['max_delta_difference']:>13.5f} {row['verdict_agreement']:>13.1%}")
    for row in table:
        print(f"{row['precision']:>9} {where_the_time_goes(row)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"files": [str(f) for f in files],
                                               "rows": table}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
