"""Boxes and layers: the two records that leave-one-out passes between its parts.

A ``Box`` is a rectangle of the analysis raster, ``(y0, y1, x0, x1)``, half-open. A
``Layer`` is a transparent render cropped to where it has pixels: its box on the canvas
and its premultiplied RGBA pixels there, or ``NO_LAYER`` when it draws nothing.

``Layer`` is a ``NamedTuple`` (not a dataclass): layers cross from the render workers by
pickle by the thousand, the workers' result sizes and the daemon's layer cache are
measured by walking tuples (workers.result_bytes, daemon/cache.py), and the compositing
loops unpack ``box, pixels = layer``; a tuple subclass keeps all of that as it was.

No numpy needed here: the pixels are only carried.
"""

from __future__ import annotations

from typing import Any, NamedTuple

Box = tuple[int, int, int, int]  # y0, y1, x0, x1 (half-open)


class Layer(NamedTuple):
    box: Box | None   # where the layer has pixels (None: nowhere)
    pixels: Any       # premultiplied RGBA uint8 (y1 - y0, x1 - x0, 4), None with no box


NO_LAYER = Layer(None, None)


def union_box(a: Box | None, b: Box | None) -> Box | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3])


def intersects(a: Box | None, b: Box | None) -> bool:
    return (a is not None and b is not None and a[0] < b[1] and b[0] < a[1]
            and a[2] < b[3] and b[2] < a[3])


def grow(box: Box | None, margin: int, size: int) -> Box | None:
    """``box`` widened by ``margin`` on every side, within the ``size`` x ``size`` canvas."""
    if box is None:
        return None
    return (max(0, box[0] - margin), min(size, box[1] + margin),
            max(0, box[2] - margin), min(size, box[3] + margin))


__all__ = ["Box", "Layer", "NO_LAYER", "union_box", "intersects", "grow"]
