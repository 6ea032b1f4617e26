"""Where the "this reference does not look like the drawing" warning's threshold comes from
(issue 40). For every corpus file, the pixel backbone's full-render similarity (SSIM of the
file's render against the reference, as `svgloo score` computes ``full_score``) against:

- its own render degraded (downscaled 4x, blurred, JPEG 30: the artifact benchmark's
  "degraded reference"): a reference of the right drawing, imperfect;
- the same emoji drawn by the other emoji set (the corpus's Twemoji/Noto pairs): another
  artist's version of the same subject, the case that gave worse-than-chance verdicts;
- another file of the same folder, and a file of another folder (seeded): a wrong sidecar.

Run: python tests/measure_reference_mismatch.py ../shared/corpus OUT.json
"""
from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import numpy as np


def main(corpus: str, out: str, size: int = 384, seed: int = 0) -> None:
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.protocols import Reference
    from svgloo.engine.scoring.score import render_document
    from svgloo.plugins.pixel_backbone import PixelBackbone
    from svgloo.validation.artifacts import counterpart, degrade

    files = sorted(str(p) for p in Path(corpus).glob("*/*.svg"))
    rng = random.Random(seed)
    backbone = PixelBackbone()
    renders: dict[str, np.ndarray] = {}

    def render(path: str) -> np.ndarray:
        if path not in renders:
            renders[path] = render_document(load_document(path), size)
        return renders[path]

    def similarity(path: str, reference: np.ndarray) -> float:
        prepared = backbone.prepare(Reference("image", "measure", image=reference))
        return float(backbone.similarity(render(path)[None], prepared)[0])

    rows = []
    started = time.time()
    for path in files:
        try:
            row = {"file": path, "own_degraded": similarity(path, degrade(render(path)))}
            folder = Path(path).parent
            same = [f for f in files if Path(f).parent == folder and f != path]
            other = [f for f in files if Path(f).parent != folder]
            row["same_folder"] = similarity(path, render(rng.choice(same)))
            row["other_folder"] = similarity(path, render(rng.choice(other)))
            pair = counterpart(path, files)
            if pair and pair[1] == "exact":
                row["other_artist"] = similarity(path, render(pair[0]))
        except Exception as exc:  # noqa: BLE001 - a file over a limit: say so, go on
            row = {"file": path, "error": str(exc)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    summary = {}
    for kind in ("own_degraded", "other_artist", "same_folder", "other_folder"):
        values = sorted(r[kind] for r in rows if kind in r)
        if values:
            summary[kind] = {"n": len(values), "min": values[0], "max": values[-1],
                             "p01": float(np.percentile(values, 1)),
                             "p05": float(np.percentile(values, 5)),
                             "median": float(np.median(values)),
                             "p95": float(np.percentile(values, 95)),
                             "p99": float(np.percentile(values, 99))}
    Path(out).write_text(json.dumps({"size": size, "seed": seed, "summary": summary,
                                     "seconds": round(time.time() - started, 1),
                                     "rows": rows}, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
