"""Metric arithmetic shared by the suites: plain functions on plain data."""

from __future__ import annotations

import difflib
import re

import numpy as np


def mse(a: np.ndarray, b: np.ndarray) -> float:
    """Mean squared error of two uint8 images scaled to [0, 1], over every pixel and
    channel (float64)."""
    x = a.astype(np.float64) / 255.0
    y = b.astype(np.float64) / 255.0
    return float(np.mean((x - y) ** 2))


def remove_whitespace(text: str) -> str:
    return re.sub(r"\s+", "", text)


def whitespace_free_ratio(a: str, b: str) -> float:
    """difflib ratio of the two texts with all whitespace removed (SVGenius compare_svg)."""
    return difflib.SequenceMatcher(None, remove_whitespace(a), remove_whitespace(b)).ratio()


def change_magnitude(source: str, target: str) -> int:
    """SVGenius's edit measure: over difflib's non-equal opcodes of the whitespace-free
    texts, the sum of max(len source span, len target span). Not a Levenshtein distance."""
    matcher = difflib.SequenceMatcher(None, remove_whitespace(source), remove_whitespace(target))
    return sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in matcher.get_opcodes()
               if op != "equal")


def ssim_uniform(a: np.ndarray, b: np.ndarray, win_size: int = 11,
                 data_range: float = 255.0) -> float:
    """scikit-image's ``structural_similarity(a, b, win_size, channel_axis=-1,
    data_range)`` with its defaults (uniform window, sample covariance, K1 0.01, K2 0.03),
    for uint8 RGB images; written with scipy so the base install needs no scikit-image."""
    from scipy.ndimage import uniform_filter

    k1, k2 = 0.01, 0.03
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    npix = win_size ** 2
    cov_norm = npix / (npix - 1)
    pad = (win_size - 1) // 2
    channels = []
    for ch in range(a.shape[2]):
        x = a[..., ch].astype(np.float64)
        y = b[..., ch].astype(np.float64)
        ux, uy = uniform_filter(x, win_size), uniform_filter(y, win_size)
        uxx, uyy = uniform_filter(x * x, win_size), uniform_filter(y * y, win_size)
        uxy = uniform_filter(x * y, win_size)
        vx, vy = cov_norm * (uxx - ux * ux), cov_norm * (uyy - uy * uy)
        vxy = cov_norm * (uxy - ux * uy)
        s = ((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux ** 2 + uy ** 2 + c1) * (vx + vy + c2))
        channels.append(s[pad:-pad, pad:-pad].mean(dtype=np.float64))
    return float(np.mean(channels))


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(sum(values) / len(values)) if values else None
