"""Shapes spelled as path data where that is shorter, and runs of sibling paths that
differ only in their data drawn as one path.

``<line>``, ``<polyline>``, ``<polygon>`` and corner-less ``<rect>`` become ``<path>``
with the same outline (``<circle>``/``<ellipse>`` stay: an arc is drawn by other code in
every renderer). Neither happens with a ``<style>`` sheet (a selector may name the
element's tag) or for a shape with an id something names.

Merging paths draws their union in one go, which is the same picture only where they do
not overlap with opacity, opposite windings or antialiased edges: the proof decides per
run. Not merged: paths painted with a gradient or pattern (its box would grow), with an
opacity or a dash pattern, or with an id.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from svgloo.engine.cleanup.edits import Context, Edit, detach, in_svg, local
from svgloo.engine.cleanup.numbers import NUMBER, join, short
from svgloo.engine.cleanup.path_short import PathDataError, shortest
from svgloo.engine.document import SVG_NS

_GEOMETRY = {"line": ("x1", "y1", "x2", "y2"), "rect": ("x", "y", "width", "height"),
             "polyline": ("points",), "polygon": ("points",)}
_NOT_MERGED = ("opacity", "fill-opacity", "stroke-opacity", "stroke-dasharray", "mask",
               "clip-path", "filter", "marker-start", "marker-mid", "marker-end", "marker",
               "transform", "id", "pathLength")


def _number(value: str | None) -> Decimal | None:
    try:
        return Decimal((value or "0").strip())
    except InvalidOperation:
        return None


def path_of(node) -> str | None:
    """The path data of a line, polyline, polygon or corner-less rect, in its shortest
    spelling; None when the shape has units, percentages or anything else a number
    cannot say."""
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
        if None in values:
            return None
        x1, y1, x2, y2 = (short(v) for v in values)
        return f"M{join([x1, y1, x2, y2])}"
    if tag == "rect":
        if node.get("rx") or node.get("ry"):
            return None
        values = [_number(node.get(k)) for k in _GEOMETRY["rect"]]
        if None in values or values[2] <= 0 or values[3] <= 0:
            return None
        x, y, w, h = values
        return f"M{join([short(x), short(y)])}h{short(w)}v{short(h)}H{short(x)}z"
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


def _mergeable(node) -> bool:
    if not in_svg(node) or local(node.tag) != "path" or not node.get("d"):
        return False
    if any(node.get(k) is not None for k in _NOT_MERGED) or len(node):
        return False
    paint = (node.get("fill") or "") + (node.get("stroke") or "") + (node.get("style") or "")
    return "url(" not in paint and "opacity" not in (node.get("style") or "")


def merge_edits(ctx: Context) -> list[Edit]:
    out = []
    index = {id(n): i for i, n in enumerate(ctx.nodes)}
    seen: set[int] = set()
    for i, node in enumerate(ctx.nodes):
        if i in seen or not _mergeable(node):
            continue
        run = []
        nxt = node.getnext()
        attrs = {k: v for k, v in node.attrib.items() if k != "d"}
        while nxt is not None and _mergeable(nxt) and \
                {k: v for k, v in nxt.attrib.items() if k != "d"} == attrs and \
                not (node.tail or "").strip():
            run.append(index[id(nxt)])
            nxt = nxt.getnext()
        if run:
            seen.update(run)
            out.append(Edit("merged paths", i, "change", _merge(len(run)),
                            saves=sum(len(ctx.nodes[j].get("d") or "") * 0 + 12 +
                                      sum(len(k) + len(v) + 4 for k, v in attrs.items())
                                      for j in run)))
    return out


def _merge(count: int):
    def change(node) -> None:
        parts = [node.get("d")]
        for _ in range(count):
            other = node.getnext()
            if other is None:
                break
            d = (other.get("d") or "").lstrip()
            parts.append(("M" + d[1:]) if d[:1] == "m" else d)  # its first moveto is absolute
            detach(other)
        try:
            node.set("d", shortest(" ".join(parts), spelling="keep"))
        except PathDataError:
            node.set("d", " ".join(parts))
    return change


def edits(ctx: Context) -> list[Edit]:
    return shape_edits(ctx) + merge_edits(ctx)


__all__ = ["path_of", "shape_edits", "merge_edits", "edits"]
