"""Suite metrics as LOO backbones (entry-point group ``svgloo.backbones``).

A pairwise image metric of a suite is also a similarity for the engine's leave-one-out
scorer, so ``svgloo score answer.svg --backbone svgeditbench-mse --reference target.svg
--size 72`` shows which elements of a model's answer cost it the score:
S = 1 - MSE with pixels in [0, 1], averaged over pixels and the R, G, B channels, on the
engine's white-composited renders (equal to CairoSVG's white background; see
tests/evals/test_eval_render.py). Give ``--size`` the suite's size: 72 for SVGEditBench,
224 for SVGenius.
"""

from __future__ import annotations

import numpy as np


class _MseBackbone:
    takes_text = False
    size = 0

    def __init__(self, device: str | None = None, weights: str | None = None):
        self.device = "cpu"

    def prepare(self, reference):
        if reference.image is None:
            raise ValueError(f"the {self.name} backbone needs a reference image or SVG "
                             "(--reference); it cannot read text")
        return reference.image.astype(np.float64) / 255.0

    def similarity(self, images: np.ndarray, prepared: np.ndarray) -> np.ndarray:
        out = np.empty(len(images), np.float64)
        for i, image in enumerate(images):
            diff = image.astype(np.float64) / 255.0 - prepared
            out[i] = 1.0 - float(np.mean(diff * diff))
        return out

    def similarity_patched(self, full: np.ndarray, patches, prepared: np.ndarray) -> np.ndarray:
        """MSE is a sum over pixels, so a leave-one-out image that differs from ``full``
        inside a box changes only that box's share of the sum."""
        x = full.astype(np.float64) / 255.0
        sq = (x - prepared) ** 2
        total = float(sq.sum())
        n = sq.size
        out = np.empty(len(patches), np.float64)
        for i, patch in enumerate(patches):
            if patch.box is None:
                out[i] = 1.0 - total / n
                continue
            y0, y1, x0, x1 = patch.box
            new = (patch.pixels.astype(np.float64) / 255.0 - prepared[y0:y1, x0:x1]) ** 2
            out[i] = 1.0 - (total - float(sq[y0:y1, x0:x1].sum()) + float(new.sum())) / n
        return out


class SvgEditBenchMseBackbone(_MseBackbone):
    name = "svgeditbench-mse"
    description = "1 - MSE, SVGEditBench's metric (use --size 72 for its protocol)"
    size = 72


class SvgeniusMseBackbone(_MseBackbone):
    name = "svgenius-mse"
    description = "1 - MSE, SVGenius's image metric (use --size 224 for its protocol)"
    size = 224
