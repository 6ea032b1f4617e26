"""Geometry rounded to fewer decimal places: the one rewrite that is not exact.

Only positions and sizes of shapes (path data, ``points``, and the coordinates of
``rect``/``circle``/``ellipse``/``line``); never transforms, the ``viewBox``, gradient
coordinates (often fractions of a box) or opacities. Whether a rounding stays is the
proof's call, element by element (rewrite.py): how far an edge may move depends on the
scale it is drawn at, which no rule here can know.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from svgloo.engine.cleanup.edits import Context, Edit, in_svg, local
from svgloo.engine.cleanup.numbers import NUMBER, decimals_of, quantize, short
from svgloo.engine.cleanup.path_short import PathDataError, shortest

SHAPE_NUMBERS = {"rect": ("x", "y", "width", "height", "rx", "ry"),
                 "circle": ("cx", "cy", "r"), "ellipse": ("cx", "cy", "rx", "ry"),
                 "line": ("x1", "y1", "x2", "y2")}


def finest(ctx: Context) -> int:
    """The most decimal places any rounded number has in the document: rounding finer
    than that changes nothing."""
    most = 0
    for node in ctx.nodes:
        if not in_svg(node):
            continue
        for value in _geometry_values(node):
            most = max(most, max((decimals_of(m) for m in NUMBER.findall(value)), default=0))
    return most


def _geometry_values(node) -> list[str]:
    tag = local(node.tag)
    if tag == "path":
        return [node.get("d") or ""]
    if tag in ("polyline", "polygon"):
        return [node.get("points") or ""]
    return [node.get(k) for k in SHAPE_NUMBERS.get(tag, ()) if node.get(k) is not None]


def rounded(node, decimals: int, spelling: str = "short") -> dict[str, str]:
    """The attributes of ``node`` that get shorter when rounded: name -> new value
    (``spelling``: path_short.shortest's)."""
    tag = local(node.tag)
    out: dict[str, str] = {}
    if tag == "path" and node.get("d"):
        try:
            new = shortest(node.get("d"), decimals, spelling)
        except PathDataError:
            new = node.get("d")
        if len(new) < len(node.get("d")):
            out["d"] = new
    elif tag in ("polyline", "polygon") and node.get("points"):
        value = node.get("points")
        try:
            new = " ".join(short(quantize(Decimal(m), decimals)) for m in NUMBER.findall(value))
        except InvalidOperation:
            new = value
        if len(new) < len(value):
            out["points"] = new
    else:
        for name in SHAPE_NUMBERS.get(tag, ()):
            value = node.get(name)
            if value is None or not NUMBER.fullmatch(value.strip()):
                continue
            new = short(quantize(Decimal(value.strip()), decimals))
            if len(new) < len(value):
                out[name] = new
    return out


def edits(ctx: Context, decimals: int, skip: set[int] = frozenset()) -> list[Edit]:
    out = []
    for i, node in enumerate(ctx.nodes):
        if i in skip or not in_svg(node):
            continue
        values = rounded(node, decimals)
        if not values:
            continue
        job = f"precision {decimals}"
        safer_values = rounded(node, decimals, "keep") if "d" in values else {}
        safer = Edit(job, i, "change", _set_all(safer_values),
                     sum(len(node.get(k)) - len(v) for k, v in safer_values.items())) \
            if safer_values and safer_values != values else None
        out.append(Edit(job, i, "change", _set_all(values),
                        sum(len(node.get(k)) - len(v) for k, v in values.items()),
                        fallback=safer))
    return out


def _set_all(values: dict[str, str]):
    def change(node) -> None:
        for name, value in values.items():
            node.set(name, value)
    return change


__all__ = ["finest", "rounded", "edits", "SHAPE_NUMBERS"]
