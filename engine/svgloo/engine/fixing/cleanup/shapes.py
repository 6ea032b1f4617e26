"""Shapes spelled as path data where that is shorter.

``<line>``, ``<polyline>`` and ``<polygon>`` become ``<path>`` with the same outline
(``<circle>``/``<ellipse>`` stay: an arc is drawn by other code in every renderer;
``<rect>`` stays: see _GEOMETRY). Neither happens with a ``<style>`` sheet (a selector may name the
element's tag) or for a shape with an id something names.

Sibling paths drawn alike are not merged into one (SVGO's mergePaths): Chromium's Skia
antialiases a stroke of several subpaths differently from the same subpaths stroked one
by one, even apart (feather/align-justify.svg: four lines as one path moved Chromium's
pixels by 17/255 at 384 px, 33/255 at 100 px), which CairoSVG and resvg do not show.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from svgloo.engine.fixing.cleanup.edits import Context, Edit, in_svg, local
from svgloo.engine.fixing.cleanup.numbers import NUMBER, join, short
from svgloo.engine.fixing.cleanup.path_short import PathDataError, shortest
from svgloo.engine.reading.document import SVG_NS

# Not <rect>: Chromium's Skia draws a rect by its own rules, not as the same outline in
# path data (noto/emoji_u1f303.svg, 60 small rects at 2-decimal positions: 27/255 on
# 1,769 px at 384 px), which neither proof renderer shows.
_GEOMETRY = {"line": ("x1", "y1", "x2", "y2"), "polyline": ("points",),
             "polygon": ("points",)}


def _number(value: str | None) -> Decimal | None:
    try:
        return Decimal((value or "0").strip())
    except InvalidOperation:
        return None


def path_of(node) -> str | None:
    """The path data of a line, polyline or polygon, in its shortest spelling; None when
    the shape has units, percentages or anything else a number cannot say."""
    d = _outline(node)
    if d is None:
        return None
    try:
        return shortest(d, spelling="keep")
    except PathDataError:
        return None


def _outline(node) -> str | None:
    tag = local(node.tag)
    if tag == "line":
        values = [_number(node.get(k)) for k in _GEOMETRY["line"]]
        given = [v for v in values if v is not None]
        if len(given) < len(values):
            return None
        x1, y1, x2, y2 = (short(v) for v in given)
        return f"M{join([x1, y1, x2, y2])}"
    if tag in ("polyline", "polygon"):
        numbers = NUMBER.findall(node.get("points") or "")
        if len(numbers) < 4 or len(numbers) % 2:
            return None
        try:
            text = "M" + join([short(Decimal(n)) for n in numbers])
        except InvalidOperation:
            return None
        return text + ("z" if tag == "polygon" else "")
    return None


def shape_edits(ctx: Context) -> list[Edit]:
    if ctx.stylesheet.strip():
        return []
    out = []
    for i, node in enumerate(ctx.nodes):
        if not in_svg(node) or local(node.tag) not in _GEOMETRY or node.get("pathLength"):
            continue
        if node.get("id") in ctx.referenced:
            continue
        d = path_of(node)
        if d is None:
            continue
        names = _GEOMETRY[local(node.tag)]
        old = sum(len(k) + len(node.get(k) or "") + 4 for k in names) + len(local(node.tag))
        new = len(d) + 8
        if new < old:
            out.append(Edit("shapes", i, "change", _to_path(d, names), old - new))
    return out


def _to_path(d: str, names: tuple[str, ...]):
    def change(node) -> None:
        for name in names:
            node.attrib.pop(name, None)
        node.tag = f"{{{SVG_NS}}}path"
        node.set("d", d)
    return change


def edits(ctx: Context) -> list[Edit]:
    return shape_edits(ctx)


__all__ = ["path_of", "shape_edits", "edits"]
