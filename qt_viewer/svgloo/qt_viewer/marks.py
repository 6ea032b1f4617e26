"""What "mark findings" draws on the picture (no Qt here).

Outlining every flagged unit buries a logo under ~168 dashed boxes. So the marks follow
the table: the selected unit's box when it has a finding; with no selection, the boxes of
the flagged units the table's filter shows - outlined when there are at most
``MAX_OUTLINES``, else one density map (how many of their boxes cover each pixel), which
shows where the findings are without hiding the picture."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Box = tuple[int, int, int, int]  # y0, y1, x0, x1 (end-exclusive), analysis pixels
MAX_OUTLINES = 12
PAD = 2  # a speck's box is a few pixels: marks keep off its edge


@dataclass(frozen=True)
class Marks:
    outlines: list[Box]
    density: np.ndarray | None  # (size, size) counts of boxes per pixel, or None
    units: int                  # the flagged units these marks stand for


def finding_marks(boxes: dict[int, Box], shown: list[int], selected: int | None, size: int,
                  limit: int = MAX_OUTLINES) -> Marks:
    """``boxes``: unit -> where its finding is; ``shown``: the units the table shows (its
    filter), ``selected``: the selected unit or None."""
    if selected is not None:
        box = boxes.get(selected)
        return Marks([box] if box is not None else [], None, int(box is not None))
    wanted = [boxes[u] for u in shown if u in boxes]
    if len(wanted) <= limit:
        return Marks(wanted, None, len(wanted))
    density = np.zeros((size, size), np.int32)
    for y0, y1, x0, x1 in wanted:
        density[max(0, y0 - PAD):y1 + PAD, max(0, x0 - PAD):x1 + PAD] += 1
    return Marks([], density, len(wanted))


def density_rgba(density: np.ndarray, color: tuple[int, int, int]) -> np.ndarray:
    """The density map as an RGBA overlay: transparent where no box is, ``color`` more
    opaque where more boxes overlap (from 35% to 75%)."""
    rgba = np.zeros(density.shape + (4,), np.uint8)
    on = density > 0
    if on.any():
        rgba[on, :3] = color
        share = density[on] / density.max()
        rgba[on, 3] = (90 + 100 * share).astype(np.uint8)
    return rgba
