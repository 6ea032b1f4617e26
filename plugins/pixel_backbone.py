"""The embedded, weight-free backbone: SSIM between the render and a reference image.

Structural similarity (Wang et al. 2004) with an 11x11-ish Gaussian window (sigma 1.5),
averaged over the R, G and B channels. Deterministic and cheap. It cannot read text, so a
text reference is refused; with no reference image the caller falls back to
self-analysis (reference = the full render).

Leave-one-out images differ from the full render only inside a box, and SSIM is local,
so ``similarity_patched`` recomputes the SSIM map only around each box: the mean over the
image is the full map's sum with that neighbourhood swapped out. Same numbers as scoring
whole images (tested), at a fraction of the cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svgloo.engine.protocols import Reference

SIGMA = 1.5
TRUNCATE = 3.5
RADIUS = int(TRUNCATE * SIGMA + 0.5)  # scipy.ndimage's kernel radius for these settings
C1 = (0.01 * 255) ** 2
C2 = (0.03 * 255) ** 2
# Verdict thresholds on SSIM deltas (CLIP's are +/-0.005). HARMFUL is calibrated by
# `svgloo bench artifacts` with the degraded reference on 31 corpus files and checked on
# 31 others: held-out F1 0.818 for "delta < t" vs 0.631 at -0.005 (docs/validation.md,
# "Threshold calibration"). HELPFUL is its mirror image, not calibrated.
HARMFUL_THRESHOLD = -0.0008
HELPFUL_THRESHOLD = 0.0008


def _gaussian_weights() -> np.ndarray:
    x = np.arange(-RADIUS, RADIUS + 1, dtype=np.float64)
    w = np.exp(-0.5 / (SIGMA * SIGMA) * x * x)
    return w / w.sum()


_WEIGHTS = _gaussian_weights()


def _correlate(a: np.ndarray, axis: int) -> np.ndarray:
    """One Gaussian pass along ``axis``, computed as scipy.ndimage.gaussian_filter does it
    (mode "reflect" = numpy's "symmetric" padding, the symmetric kernel summed in float64
    as centre + pairs, the result stored as float32): the same bits, without importing
    scipy, which took longer than scoring a small file."""
    pad = [(0, 0)] * a.ndim
    pad[axis] = (RADIUS, RADIUS)
    padded = np.moveaxis(np.pad(a.astype(np.float64), pad, mode="symmetric"), axis, 0)
    n = a.shape[axis]
    acc = padded[RADIUS:RADIUS + n] * _WEIGHTS[RADIUS]
    pair = np.empty_like(acc)
    for j in range(1, RADIUS + 1):
        np.add(padded[RADIUS + j:RADIUS + j + n], padded[RADIUS - j:RADIUS - j + n], out=pair)
        pair *= _WEIGHTS[RADIUS + j]
        acc += pair
    return np.moveaxis(acc, 0, axis).astype(np.float32)


def _blur(a: np.ndarray) -> np.ndarray:
    # Blur the two spatial axes only; channels stay separate.
    return _correlate(_correlate(a, 0), 1)


@dataclass
class _Prepared:
    y: np.ndarray        # reference as float32 (H, W, 3)
    mu_y: np.ndarray
    sigma_yy: np.ndarray


def _ssim_map(x: np.ndarray, prep_y: np.ndarray, mu_y: np.ndarray,
              sigma_yy: np.ndarray) -> np.ndarray:
    # One blur of x, x*x and x*y stacked as channels (channels are blurred separately).
    mu_x, xx, xy = np.split(_blur(np.concatenate([x, x * x, x * prep_y], axis=2)), 3, axis=2)
    sigma_xx = xx - mu_x * mu_x
    sigma_xy = xy - mu_x * mu_y
    num = (2 * mu_x * mu_y + C1) * (2 * sigma_xy + C2)
    den = (mu_x * mu_x + mu_y * mu_y + C1) * (sigma_xx + sigma_yy + C2)
    return (num / den).mean(axis=2)


class PixelBackbone:
    name = "pixel"
    description = "pixel SSIM (embedded, no weights)"
    takes_text = False
    helpful_threshold = HELPFUL_THRESHOLD
    harmful_threshold = HARMFUL_THRESHOLD

    def __init__(self, device: str | None = None, weights: str | None = None):
        self.device = "cpu"

    def prepare(self, reference: Reference) -> _Prepared:
        if reference.image is None:
            raise ValueError("the pixel backbone needs a reference image (it cannot read text)")
        y = reference.image.astype(np.float32)
        mu_y = _blur(y)
        return _Prepared(y, mu_y, _blur(y * y) - mu_y * mu_y)

    def similarity(self, images: np.ndarray, prepared: _Prepared) -> np.ndarray:
        out = np.empty(len(images), np.float64)
        for i, image in enumerate(images):
            out[i] = float(_ssim_map(image.astype(np.float32), prepared.y, prepared.mu_y,
                                     prepared.sigma_yy).mean())
        return out

    def similarity_patched(self, full: np.ndarray, patches, prepared: _Prepared) -> np.ndarray:
        """Similarity of each leave-one-out image given as a patch on ``full`` (objects with
        ``box`` = (y0, y1, x0, x1) or None, and ``pixels``)."""
        x_full = full.astype(np.float32)
        full_map = _ssim_map(x_full, prepared.y, prepared.mu_y, prepared.sigma_yy)
        total = float(full_map.sum(dtype=np.float64))
        h, w = full_map.shape
        npix = h * w
        out = np.empty(len(patches), np.float64)
        for i, patch in enumerate(patches):
            if patch.box is None:
                out[i] = total / npix
                continue
            y0, y1, x0, x1 = patch.box
            # Map values change within RADIUS of the box; computing them needs input
            # within 2 * RADIUS. At the image border "reflect" matches the full computation.
            dy0, dy1 = max(0, y0 - RADIUS), min(h, y1 + RADIUS)
            dx0, dx1 = max(0, x0 - RADIUS), min(w, x1 + RADIUS)
            ey0, ey1 = max(0, y0 - 2 * RADIUS), min(h, y1 + 2 * RADIUS)
            ex0, ex1 = max(0, x0 - 2 * RADIUS), min(w, x1 + 2 * RADIUS)
            crop = x_full[ey0:ey1, ex0:ex1].copy()
            crop[y0 - ey0:y1 - ey0, x0 - ex0:x1 - ex0] = patch.pixels
            sl = (slice(ey0, ey1), slice(ex0, ex1))
            local = _ssim_map(crop, prepared.y[sl], prepared.mu_y[sl], prepared.sigma_yy[sl])
            inner = local[dy0 - ey0:dy1 - ey0, dx0 - ex0:dx1 - ex0]
            old = full_map[dy0:dy1, dx0:dx1]
            out[i] = (total - float(old.sum(dtype=np.float64))
                      + float(inner.sum(dtype=np.float64))) / npix
        return out
