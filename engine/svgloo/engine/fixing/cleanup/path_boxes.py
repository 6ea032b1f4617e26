"""Where rounding a path's data can change pixels: its device box at each proven size.

Rounding moves a path's points by a fraction of a device pixel, so the pixels it can change
lie within the box of its points (a Bezier stays in the hull of its control points),
grown by the widest stroke the document may give it and by the anti-aliasing. The
rounding search (rounding_search.py) blames a moved pixel on the roundings whose boxes hold
it. Paths device_rounding does not round (under a filter, mask, clip or marker, a rotation
or skew, inside a pattern, ...) get no box; neither does a document whose strokes are not
plain numbers.
"""

from __future__ import annotations

import math
import re
from decimal import InvalidOperation

from svgloo.engine.fixing.cleanup.device_rounding import _element_axes, _root_axes
from svgloo.engine.fixing.cleanup.edits import Context
from svgloo.engine.fixing.cleanup.path_short import PathDataError, _absolute, _tokens

_STROKE_WIDTH = re.compile(r"stroke-width\s*:\s*([^;}!]+)")
_MITER = re.compile(r"stroke-miterlimit\s*:\s*([^;}!]+)")
AA_PX = 2.0        # device px an anti-aliased edge may reach beyond the outline


def _largest(values: list[str], default: float) -> float | None:
    """The largest of lengths written as plain numbers (or px); None when one is not."""
    out = default
    for v in values:
        v = v.strip().removesuffix("px").strip()
        try:
            number = float(v)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        out = max(out, abs(number))
    return out


def _stroke_reach(ctx: Context) -> float | None:
    """How far, in user units, any stroke of the document may reach beyond its outline: the
    widest stroke-width written anywhere (1, the initial value, at least) times the largest
    miter limit (4, the initial value, at least), halved; None when a width or limit is
    not a plain number (a percentage, em, ...: not worked out here)."""
    widths, miters = [], []
    for node in ctx.nodes:
        if not isinstance(node.tag, str):
            continue
        widths += [node.get("stroke-width")] if node.get("stroke-width") else []
        miters += [node.get("stroke-miterlimit")] if node.get("stroke-miterlimit") else []
        style = node.get("style") or ""
        widths += _STROKE_WIDTH.findall(style)
        miters += _MITER.findall(style)
    widths += _STROKE_WIDTH.findall(ctx.stylesheet)
    miters += _MITER.findall(ctx.stylesheet)
    width, miter = _largest(widths, 1.0), _largest(miters, 4.0)
    if width is None or miter is None:
        return None
    return width * max(miter, 1.5) / 2


def _outline_box(d: str) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) in the path's user units around every point the data names: ends
    and control points (a Bezier stays in their hull); an arc stays within the larger of
    its diameter and its chord (radii too small are scaled up to the chord) of its start."""
    xs: list[float] = []
    ys: list[float] = []
    x = y = sx = sy = 0.0
    for up, values, _ in _absolute(_tokens(d)):
        if up == "Z":
            x, y = sx, sy
        elif up == "H":
            x = float(values[0])
        elif up == "V":
            y = float(values[0])
        elif up == "A":
            ex, ey = float(values[5]), float(values[6])
            reach = max(2 * max(abs(float(values[0])), abs(float(values[1]))),
                        math.hypot(ex - x, ey - y))
            xs += [x - reach, x + reach]
            ys += [y - reach, y + reach]
            x, y = ex, ey
        else:
            xs += [float(v) for v in values[0::2]]
            ys += [float(v) for v in values[1::2]]
            x, y = xs[-1], ys[-1]
            if up == "M":
                sx, sy = x, y
        xs.append(x)
        ys.append(y)
    return min(xs), min(ys), max(xs), max(ys)


def device_boxes(ctx: Context, sizes: tuple[int, ...], nodes: list[int]
                 ) -> dict[int, list[tuple[float, float, float, float]]] | None:
    """For each path node of ``nodes`` (an Edit's index): per size of ``sizes``, the
    device box (x0, y0, x1, y1, in px) outside which rounding its data cannot change a
    pixel: its points' box, grown by the widest stroke the document may give it and by
    the anti-aliasing. None when the document's strokes are not worked out (see
    ``_stroke_reach``); a node without a box is left out."""
    reach = _stroke_reach(ctx)
    roots = [_root_axes(ctx.root, size) for size in sizes]
    if reach is None or any(r is None for r in roots):
        return None
    out = {}
    for i in nodes:
        node = ctx.nodes[i]
        axes = _element_axes(node, roots)
        if axes is None or not node.get("d"):
            continue
        try:
            x0, y0, x1, y1 = _outline_box(node.get("d"))
        except (PathDataError, InvalidOperation, ValueError):
            continue
        xs, ys = axes
        boxes = []
        for (sx, ox), (sy, oy) in zip(xs.maps, ys.maps):
            dx = sorted((sx * (x0 - reach) + ox, sx * (x1 + reach) + ox))
            dy = sorted((sy * (y0 - reach) + oy, sy * (y1 + reach) + oy))
            boxes.append((dx[0] - AA_PX, dy[0] - AA_PX, dx[1] + AA_PX, dy[1] + AA_PX))
        out[i] = boxes
    return out


__all__ = ["AA_PX", "device_boxes"]
