"""Rounding that keeps every point where the renderers put it.

Both proof renderers snap device coordinates to a grid before they rasterise: cairo to
1/256 px (24.8 fixed point) after adding each relative step in that fixed point, resvg
(tiny-skia) to 1/64 px of a 4x supersampled canvas, also 1/256 px, after converting to
absolute positions in floating point. Near-horizontal edges are sampled on a handful of
sub-rows per pixel, so an edge moved by far less than a pixel can still cross a sub-row
and change its pixel by 1/15 or 1/16 (17/255): plain rounding to "enough" decimals is
refused by the 2/255 proof almost everywhere (logos/blueprint.svg: 4 decimals of a 298
unit logo moved 0.0002 px and changed pixels by 7/255).

So each number gets the fewest decimals that leave it in the same 1/512 px bin at every
proven size (half the snapping grid, with a margin, so either rounding direction of the
snap agrees): as written for a relative step (cairo adds it in fixed point) and, along the
path, as the absolute position it leads to (resvg). Elements under a rotation, skew,
nested viewport or ``<use>`` are not rounded. The proof still decides (rewrite.py).

With ``bound_px`` (``fix --browser``, where Chromium judges each rounding too) a coarser
rounding is offered first: the fewest decimals that move no point by more than
``bound_px`` device px at any proven size (the largest is the document's own, at least
1024 px), each absolute end point checked, so rounding never drifts along a path; the
bin-keeping rounding of the same path is its fallback when the proof or Chromium refuses.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from svgloo.engine.fixing.cleanup.edits import Context, Edit, in_svg, local
from svgloo.engine.fixing.cleanup.numbers import decimals_of, join, quantize, short
from svgloo.engine.fixing.cleanup.path_short import PathDataError, _last_number, _tokens

BINS_PER_PX = 512
BOUND_PX = 1 / 64          # the coarser rounding: how far a point may move, in device px
MARGIN = 0.05             # of a bin: a value this close to a bin's edge is not moved
_NOT_ROUNDED_INSIDE = frozenset({"svg", "symbol", "use", "pattern", "marker", "mask",
                                 "clipPath", "defs", "text", "switch"})
# A path drawn through one of these (on itself or an ancestor) is not rounded. A filter
# spreads a moved edge beyond the path's box (the rounding search blames pixels by box:
# path_boxes.py); Chromium, drawing the SVG as a document, sizes a masked or clipped
# layer by its group's bounding box, which rounding moves (the same rule keeps removals
# there unverified: features.py); markers sit at the vertices, and a non-scaling stroke's
# width is in device px.
_THROUGH = ("filter", "mask", "clip-path", "marker-start", "marker-mid", "marker-end",
            "marker", "vector-effect")
_THROUGH_CSS = re.compile(r"\b(?:filter|mask|clip-path|marker(?:-start|-mid|-end)?|"
                          r"vector-effect)\s*:")


class Axis:
    """How one user-space axis maps to device px at each size: device = scale*v + shift."""

    def __init__(self, maps: list[tuple[float, float]], bound_px: float | None = None):
        self.maps = maps
        self.bound_px = bound_px

    def _same_bin(self, old: float, new: float, shift: bool) -> bool:
        if old == new:
            return True     # not moved: wherever it lies in its bin
        if self.bound_px is not None:   # the coarser rule: a geometric bound, not a bin
            return all(abs(scale * (new - old)) <= self.bound_px for scale, _ in self.maps)
        for scale, offset in self.maps:
            a = (scale * old + (offset if shift else 0.0)) * BINS_PER_PX
            b = (scale * new + (offset if shift else 0.0)) * BINS_PER_PX
            fa, fb = math.floor(a), math.floor(b)
            if fa != fb or not (MARGIN < a - fa < 1 - MARGIN) or \
                    not (MARGIN < b - fb < 1 - MARGIN):
                return False
        return True

    def coarsest(self, value: Decimal, absolute_old: Decimal | None = None,
                 absolute_base: Decimal | None = None) -> Decimal:
        """``value`` with the fewest decimals that keep its device bin, as a position
        (``absolute_old`` None); or, for a relative step from ``absolute_base`` (where
        the rounded path stands) whose unrounded end is ``absolute_old``: the shortest
        step that keeps both its own bin (cairo adds it in fixed point) and its end's
        (resvg adds it in floating point). When rounding cannot, the step that lands
        exactly on the old end (undoing the drift of earlier roundings) is tried; else
        CannotRound."""
        exponent = value.as_tuple().exponent
        places = max(0, -exponent) if isinstance(exponent, int) else 0
        if absolute_old is None:
            for d in range(0, places):
                new = quantize(value, d)
                if self._same_bin(float(value), float(new), True):
                    return new
            return value
        assert absolute_base is not None, "a relative step needs where the rounded path stands"
        candidates = [quantize(value, d) for d in range(0, places)] + \
            [value, absolute_old - absolute_base]
        for new in candidates:
            if self._same_bin(float(value), float(new), False) and self._same_bin(
                    float(absolute_old), float(absolute_base + new), True):
                return new
        raise CannotRound("a relative step cannot keep its end in place")


class CannotRound(ValueError):
    """A path whose rounding would move a point out of its device bin."""


def _root_axes(root, size: int) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """(scale, offset) for x and y at ``size``: the viewBox fitted into a size x size
    canvas, centred (preserveAspectRatio's default; anything else is not rounded)."""
    aspect = (root.get("preserveAspectRatio") or "xMidYMid").split()
    if aspect[0] != "xMidYMid" or (len(aspect) > 1 and aspect[1] != "meet"):
        return None
    try:
        vx, vy, vw, vh = (float(v) for v in (root.get("viewBox") or "").replace(
            ",", " ").split())
    except ValueError:
        return None
    if vw <= 0 or vh <= 0:
        return None
    scale = min(size / vw, size / vh)
    return ((scale, (size - vw * scale) / 2 - vx * scale),
            (scale, (size - vh * scale) / 2 - vy * scale))


_TRANSFORM = re.compile(r"\s*(matrix|translate|scale)\s*\(([^)]*)\)\s*,?")


def _scale_and_shift(value: str) -> tuple[float, float, float, float] | None:
    """A transform list as (x scale, y scale, x shift, y shift); None when it rotates,
    skews, or does not read."""
    a, d, e, f = 1.0, 1.0, 0.0, 0.0
    pos = 0
    while pos < len(value.strip()):
        m = _TRANSFORM.match(value, pos)
        if not m:
            return None
        pos = m.end()
        try:
            args = [float(v) for v in m.group(2).replace(",", " ").split()]
        except ValueError:
            return None
        kind = m.group(1)
        if kind == "matrix":
            if len(args) != 6 or args[1] != 0 or args[2] != 0:
                return None
            ma, md, me, mf = args[0], args[3], args[4], args[5]
        elif kind == "translate" and len(args) in (1, 2):
            ma, md, me, mf = 1.0, 1.0, args[0], args[1] if len(args) == 2 else 0.0
        elif kind == "scale" and len(args) in (1, 2):
            ma, md, me, mf = args[0], args[-1], 0.0, 0.0
        else:
            return None
        a, d, e, f = a * ma, d * md, a * me + e, d * mf + f
    return a, d, e, f


def _element_axes(node, roots: list, bound_px: float | None = None
                  ) -> tuple[Axis, Axis] | None:
    """The element's x and y axes at each size, through the transforms of it and its
    ancestors (scales and translations only)."""
    a, d, e, f = 1.0, 1.0, 0.0, 0.0
    chain = []
    up = node
    while up is not None and up.getparent() is not None:
        chain.append(up)
        up = up.getparent()
    for n in chain:
        if n is not node and local(n.tag) in _NOT_ROUNDED_INSIDE:
            return None
        if any(n.get(name) for name in _THROUGH) or _THROUGH_CSS.search(n.get("style") or ""):
            return None
        if local(n.tag) in ("svg", "use", "symbol"):
            return None
    for n in reversed(chain):       # outermost first: user = M_outer * M_inner * v
        value = n.get("transform")
        if not value:
            continue
        scaled = _scale_and_shift(value)
        if scaled is None:
            return None
        ma, md, me, mf = scaled
        a, d, e, f = a * ma, d * md, a * me + e, d * mf + f
    xs = Axis([(sx * a, ox + sx * e) for (sx, ox), _ in roots], bound_px)
    ys = Axis([(sy * d, oy + sy * f) for _, (sy, oy) in roots], bound_px)
    return xs, ys


def _path(d: str, xs: Axis, ys: Axis) -> str:
    """``d`` with each position rounded by the axes, every step spelled as it was."""
    parts: list[str] = []
    x_old = y_old = x_new = y_new = Decimal(0)
    start_old = start_new = (Decimal(0), Decimal(0))
    last = ""
    for letter, args in _tokens(d):
        up, rel = letter.upper(), letter.islower()
        values = [Decimal(a) for a in args]
        out = list(values)
        if up == "Z":
            x_old, y_old = start_old
            x_new, y_new = start_new
        else:
            roles = {"H": "x", "V": "y", "A": "....." + "xy"}.get(up, "xy" * 3)
            for k, v in enumerate(values):
                role = roles[k] if k < len(roles) else "."
                if role == ".":
                    continue
                axis = xs if role == "x" else ys
                base_old, base_new = (x_old, x_new) if role == "x" else (y_old, y_new)
                if rel:
                    out[k] = axis.coarsest(v, base_old + v, base_new)
                else:
                    out[k] = axis.coarsest(v)
                # the current point moves with the step's last pair only
                last_x = up in "H" or (up not in "V" and k == len(values) - 2)
                last_y = up in "V" or (up not in "H" and k == len(values) - 1)
                if role == "x" and last_x:
                    x_old, x_new = (base_old + v, base_new + out[k]) if rel else (v, out[k])
                if role == "y" and last_y:
                    y_old, y_new = (base_old + v, base_new + out[k]) if rel else (v, out[k])
            if up == "M":
                start_old, start_new = (x_old, y_old), (x_new, y_new)
        texts = [("1" if v else "0") if up == "A" and k in (3, 4) else short(v)
                 for k, v in enumerate(out)]
        implied = (letter == last and letter not in "Mm") or (letter, last) in (
            ("L", "M"), ("l", "m"))
        if implied and texts:
            tail = _last_number(parts[-1] if parts else "")
            parts.append(join([tail] + texts)[len(tail):])
        else:
            parts.append(letter + join(texts))
        last = letter if letter not in "Zz" else letter
    return "".join(parts)


def edits(ctx: Context, sizes: tuple[int, ...], bound_px: float | None = None
          ) -> list[Edit]:
    """Path data rounded so every point keeps its device bin; with ``bound_px``, rounded
    coarser first (no point moved by more than that), the bin-keeping one as fallback."""
    fine = _edits(ctx, sizes, None)
    if bound_px is None:
        return fine
    by_node = {e.node: e for e in fine}
    out = []
    for e in _edits(ctx, sizes, bound_px):
        fallback = by_node.pop(e.node, None)
        if fallback is not None and fallback.saves >= e.saves:
            out.append(fallback)
        else:
            out.append(Edit(e.job, e.node, e.action, e.change, e.saves, fallback))
    return out + list(by_node.values())


def _edits(ctx: Context, sizes: tuple[int, ...], bound_px: float | None) -> list[Edit]:
    roots = [_root_axes(ctx.root, size) for size in sizes]
    if any(r is None for r in roots) or _THROUGH_CSS.search(ctx.stylesheet) or any(
            ctx.root.get(name) for name in _THROUGH):
        return []
    out = []
    for i, node in enumerate(ctx.nodes):
        if not in_svg(node) or local(node.tag) != "path" or not node.get("d"):
            continue
        d = node.get("d")
        if max((decimals_of(t) for t in d.replace(",", " ").split()), default=0) == 0 \
                and "." not in d:
            continue
        axes = _element_axes(node, roots, bound_px)
        if axes is None:
            continue
        try:
            new = _path(d, *axes)
        except (PathDataError, InvalidOperation, CannotRound):
            continue
        if len(new) < len(d):
            out.append(Edit("precision", i, "change", _set("d", new), len(d) - len(new)))
    return out


def _set(name: str, value: str):
    def change(node) -> None:
        node.set(name, value)
    return change


__all__ = ["edits", "Axis"]
