"""Binary morphology on small boolean masks, in numpy.

The removal proof runs on every scoring and needs a few operations on a 2-D mask; importing
``scipy.ndimage`` for them cost 0.15-0.3 s of every ``svgloo score`` process, more than
the whole of a small file's work, and its dilation by a square visits the whole square for
every pixel. These give what ``scipy.ndimage`` gives with its
defaults (pixels outside the mask count as False), which tests/engine/test_masks.py checks
against scipy on random masks.
"""

from __future__ import annotations

import numpy as np


def _shifted(mask: np.ndarray, offsets):
    """``mask`` seen from each ``(dy, dx)`` of ``offsets`` away, pixels outside it False."""
    h, w = mask.shape
    padded = np.zeros((h + 2, w + 2), bool)
    padded[1:-1, 1:-1] = mask
    for dy, dx in offsets:
        yield padded[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]


def _any_near(mask: np.ndarray, offsets) -> np.ndarray:
    out = np.zeros(mask.shape, bool)
    for view in _shifted(mask, offsets):
        out |= view
    return out


def _all_near(mask: np.ndarray, offsets) -> np.ndarray:
    out = np.ones(mask.shape, bool)
    for view in _shifted(mask, offsets):
        out &= view
    return out


_SQUARE = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
_CROSS = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)]


def open_square3(mask: np.ndarray) -> np.ndarray:
    """``scipy.ndimage.binary_opening(mask, np.ones((3, 3)))``: the pixels of ``mask`` that
    lie in some 3x3 square of True pixels inside the mask."""
    mask = np.asarray(mask, bool)
    # Erosion, the centres of all-True 3x3 squares (one reaching outside is not), dilated.
    return _any_near(_all_near(mask, _SQUARE), _SQUARE)


def dilate_cross(mask: np.ndarray, iterations: int = 1) -> np.ndarray:
    """``scipy.ndimage.binary_dilation(mask, iterations=iterations)`` (its default structure,
    the 4-neighbour cross): pixels within ``iterations`` steps up, down, left or right of a
    True pixel."""
    out = np.asarray(mask, bool)
    for _ in range(iterations):
        out = _any_near(out, _CROSS)
    return out


def dilate_square(mask: np.ndarray, radius: int) -> np.ndarray:
    """``scipy.ndimage.binary_dilation(mask, np.ones((2 * radius + 1,) * 2))``: pixels
    within ``radius`` px of a True pixel in both directions (a square). Done as two 1-D
    passes, rows then columns: 4 * radius array ORs where scipy visits every pixel of the
    square for every pixel (0.05 s on a 1024 px mask at radius 3; the proof's reuse grows
    several such masks per edit)."""
    out = np.asarray(mask, bool)
    for axis in (0, 1):
        if radius <= 0 or out.shape[axis] == 0:
            break
        grown = out.copy()
        n = out.shape[axis]
        for step in range(1, min(radius, n - 1) + 1):
            if axis == 0:
                grown[step:] |= out[:-step]
                grown[:-step] |= out[step:]
            else:
                grown[:, step:] |= out[:, :-step]
                grown[:, :-step] |= out[:, step:]
        out = grown
    return out


__all__ = ["open_square3", "dilate_cross", "dilate_square"]
