"""Leave-one-out images from layers: cairo's "over", pixel by pixel, only where it matters.

The image without unit k (of block b), inside k's region, is the blocks below b composited
in z-order, then b drawn without k, then every later block, each with cairo's own 8-bit
"over" (``over_u8``). Computed unit by unit, an overlap-heavy file composites every later
layer over every region it meets: 23,600 region x layer pairs and 34 million pixel
operations on a 577-unit logo. Two exact facts make most of that unnecessary:

- a pixel where a later block is opaque (alpha 255) is that block's pixel whatever lies
  below it (``over_u8`` with alpha 255 returns the source, bit for bit), and everything
  after it is the same as in the whole stack: there the image without k is the whole
  stack's pixel, which one sweep computes for every unit at once;
- a layer pixel that is 0 in all four channels leaves what is below it as it is (the
  DIV_255 rounding of ``d * 255 / 255`` is exact).

So only "live" pixels are composited, and each block is applied once, to every live pixel
of every earlier unit that it draws on, as one array operation. A pixel stops being live
as soon as its value equals the whole stack's at the same block (which covers the opaque
case): from there on the same operations give the same bytes. That sweep, a chunk of
units at a time in bounded memory, is composite_sweep.py. Per pixel the operations and
their order are those of the unit-by-unit chain, so the result is the same bit for bit
(tests/engine/test_composite.py compares them on corpus files).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from svgloo.engine.rendering.over import (changed_box, cut_to_change, diff_box,
                                          over_u8, over_white_u8, paste, patched_crop, tight)
from svgloo.engine.rendering.raster import NO_LAYER, Box, Layer


def _chain_work(block_units, block_layer, unit_region, wanted) -> tuple[int, int]:
    """(pixels the chain composites, pixels of the regions) for the units ``wanted``."""
    boxes = np.array([box if box is not None else (0, 0, 0, 0) for box, _ in block_layer],
                     np.int64).reshape(-1, 4)
    block_of = {k: b for b, units in enumerate(block_units) for k in units}
    overlap = regions = 0
    for k in wanted:
        region = unit_region[k]
        if region is None:
            continue
        y0, y1, x0, x1 = region
        regions += (y1 - y0) * (x1 - x0)
        later = boxes[block_of[k] + 1:]
        h = np.minimum(later[:, 1], y1) - np.maximum(later[:, 0], y0)
        w = np.minimum(later[:, 3], x1) - np.maximum(later[:, 2], x0)
        overlap += int((np.clip(h, 0, None) * np.clip(w, 0, None)).sum())
    return overlap, regions


def _chain(size, block_units, block_layer, without_layer, unit_region, full, on_unit,
           only, check=None) -> None:
    """Unit by unit: the blocks below (a forward sweep keeps them), the block without the
    unit, then every later block that meets the region, in z-order."""
    boxes = np.array([box if box is not None else (0, 0, 0, 0) for box, _ in block_layer],
                     np.int64).reshape(-1, 4)
    below = np.zeros((size, size, 4), np.uint8)  # transparent, as cairo starts
    last = max((k for units in block_units for k in units
                if only is None or k in only), default=-1)
    for b, units in enumerate(block_units):
        units = list(units)
        for k in units:
            if only is not None and k not in only:
                continue
            if check is not None:
                check()
            region = unit_region[k]
            if region is None:
                on_unit(k, (None, None))
                continue
            y0, y1, x0, x1 = region
            canvas = below[y0:y1, x0:x1].copy()
            if len(units) > 1:
                canvas = over_u8(paste(region, without_layer[k]), canvas)
            later = boxes[b + 1:]
            touching = np.flatnonzero((later[:, 0] < y1) & (later[:, 1] > y0)
                                      & (later[:, 2] < x1) & (later[:, 3] > x0)) + b + 1
            for j in touching:
                by0, by1, bx0, bx1 = boxes[j]
                iy0, iy1, ix0, ix1 = max(y0, by0), min(y1, by1), max(x0, bx0), min(x1, bx1)
                pixels = block_layer[j][1][iy0 - by0:iy1 - by0, ix0 - bx0:ix1 - bx0]
                view = canvas[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0]
                canvas[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0] = over_u8(pixels, view)
            on_unit(k, tight(region, over_white_u8(canvas), full))
        if units and units[-1] >= last:
            return  # no unit asked for is left: the rest of the sweep is not needed
        box, pixels = block_layer[b]
        if box is not None:
            y0, y1, x0, x1 = box
            below[y0:y1, x0:x1] = over_u8(pixels, below[y0:y1, x0:x1])


def _clipped(layers: Sequence[Layer], regions: list[Box | None]) -> list[Layer]:
    """The layers cut to the bounding box of the regions (views, not copies)."""
    boxes = [r for r in regions if r is not None]
    if not boxes:
        return [NO_LAYER] * len(layers)
    cy0, cy1 = min(r[0] for r in boxes), max(r[1] for r in boxes)
    cx0, cx1 = min(r[2] for r in boxes), max(r[3] for r in boxes)
    out = []
    for box, pixels in layers:
        if box is None:
            out.append(NO_LAYER)
            continue
        y0, y1, x0, x1 = box
        iy0, iy1, ix0, ix1 = max(y0, cy0), min(y1, cy1), max(x0, cx0), min(x1, cx1)
        if iy0 >= iy1 or ix0 >= ix1:
            out.append(NO_LAYER)
            continue
        out.append(Layer((iy0, iy1, ix0, ix1),
                         pixels[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0]))
    return out


def composite_without(size: int, block_units: Sequence[Sequence[int]],
                      block_layer: Sequence[Layer], without_layer: dict[int, Layer],
                      unit_region: Sequence[Box | None], full: np.ndarray,
                      on_unit: Callable[[int, tuple], None],
                      only: set[int] | None = None, method: str = "auto",
                      check: Callable[[], None] | None = None) -> None:
    """Every unit's leave-one-out image inside its region, shrunk to where it differs from
    ``full``: ``on_unit(k, (box, rgb))`` ((None, None): nowhere), in z-order.

    ``block_units``: the units of each block; ``block_layer``: each block's layer; a unit
    of a multi-unit block is drawn with ``without_layer[k]`` (its block without it) in
    place of its block's layer. ``only``: the units to compute (default all); the others
    are not reported, and the layers are read only where the regions of those asked for
    are (after a small edit, a few regions out of many).

    ``method``: "live" (live pixels, one operation per block), "chain" (unit by unit) or
    "auto": the chain where few layers overlap the regions (its cost is the overlap, the
    live method's has a part in the canvas and in the units), live pixels where many do.
    Both give the same bytes. ``check`` is called every few blocks (the document's time
    budget: it raises to stop the work)."""
    wanted = [k for units in block_units for k in units if only is None or k in only]
    if method == "auto":
        overlap, regions = _chain_work(block_units, block_layer, unit_region, wanted)
        method = "live" if overlap > 4 * (size * size + regions) else "chain"
    if only is not None:  # the layers are read only inside the regions asked for
        block_layer = _clipped(block_layer, [unit_region[k] for k in only])
    if method == "chain":
        _chain(size, block_units, block_layer, without_layer, unit_region, full, on_unit,
               only, check)
        return
    # Live pixels, a chunk of units at a time (composite_sweep.py): bounded memory.
    from svgloo.engine.rendering.composite_sweep import sweep_without

    sweep_without(size, [list(units) for units in block_units], block_layer, without_layer,
                  unit_region, full, on_unit, wanted, check)


# The pixel primitives live in over.py; callers that composite import them from here too.
__all__ = ["composite_without", "over_u8", "over_white_u8", "paste", "patched_crop",
           "diff_box", "changed_box", "cut_to_change", "tight"]
