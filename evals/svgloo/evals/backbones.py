"""Suite metrics as LOO backbones (entry-point group ``svgloo.backbones``).

A pairwise image metric of a suite is also a similarity for the engine's leave-one-out
scorer, so ``svgloo score answer.svg --backbone svgeditbench-mse --reference target.svg
--size 72`` shows which elements of a model's answer cost it the score:
S = 1 - MSE with pixels in [0, 1], averaged over pixels and the R, G, B channels, on the
engine's white-composited renders (equal to CairoSVG's white background; see
tests/evals/test_eval_render.py). Give ``--size`` the suite's size: 72 for SVGEditBench,
224 for SVGenius. ``svgenius-pss-iou`` is PSS's global-IoU dimension on renders (see its
docstring for how it differs from PSS).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from svgloo.engine.protocols import EarlierScoring


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

    def similarity_patched(self, full: np.ndarray, patches, prepared: np.ndarray, *,
                           on_done: Callable[[int], object] | None = None,
                           previous: EarlierScoring | None = None) -> np.ndarray:
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
        if on_done is not None:  # no earlier scoring to reuse: each patch is one box's sum
            on_done(len(patches))
        return out


class SvgEditBenchMseBackbone(_MseBackbone):
    name = "svgeditbench-mse"
    description = "1 - MSE, SVGEditBench's metric (use --size 72 for its protocol)"
    size = 72


class SvgeniusMseBackbone(_MseBackbone):
    name = "svgenius-mse"
    description = "1 - MSE, SVGenius's image metric (use --size 224 for its protocol)"
    size = 224


class SvgeniusPssIouBackbone:
    """PSS's global-IoU dimension on renders: S = |A ∩ B| / |A ∪ B| of the drawn pixels
    of the image and of the reference.

    A backbone sees renders composited on white, so "drawn" means "not pure white", where
    PSS uses alpha > 0 of transparent renders: white-filled shapes do not count here, and
    PSS's centring and scaling of the generated SVG onto the reference are not applied.
    It answers "which elements cover pixels the reference leaves empty, or leave empty
    what it covers"; use --size 512 for PSS's resolution.
    """

    name = "svgenius-pss-iou"
    description = "IoU of drawn (non-white) pixels, PSS's global-IoU dimension on renders"
    takes_text = False

    def __init__(self, device: str | None = None, weights: str | None = None):
        self.device = "cpu"

    def prepare(self, reference):
        if reference.image is None:
            raise ValueError("the svgenius-pss-iou backbone needs a reference image or SVG")
        return _drawn(reference.image)

    def similarity(self, images: np.ndarray, prepared: np.ndarray) -> np.ndarray:
        return np.array([_iou(_drawn(image), prepared) for image in images], np.float64)

    def similarity_patched(self, full: np.ndarray, patches, prepared: np.ndarray, *,
                           on_done: Callable[[int], object] | None = None,
                           previous: EarlierScoring | None = None) -> np.ndarray:
        """Only the box changes, so intersection and union change only there."""
        drawn = _drawn(full)
        inter = int(np.logical_and(drawn, prepared).sum())
        union = int(np.logical_or(drawn, prepared).sum())
        out = np.empty(len(patches), np.float64)
        for i, patch in enumerate(patches):
            if patch.box is None:
                out[i] = inter / union if union else 0.0
                continue
            y0, y1, x0, x1 = patch.box
            old, ref = drawn[y0:y1, x0:x1], prepared[y0:y1, x0:x1]
            new = _drawn(patch.pixels)
            n_inter = inter - int((old & ref).sum()) + int((new & ref).sum())
            n_union = union - int((old | ref).sum()) + int((new | ref).sum())
            out[i] = n_inter / n_union if n_union else 0.0
        if on_done is not None:
            on_done(len(patches))
        return out


def _drawn(rgb: np.ndarray) -> np.ndarray:
    return (rgb != 255).any(axis=2)


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = int(np.logical_or(a, b).sum())
    return int(np.logical_and(a, b).sum()) / union if union else 0.0
