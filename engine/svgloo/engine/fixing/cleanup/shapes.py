"""Shapes spelled as path data where that is shorter, and sibling paths merged.

``<line>``, ``<polyline>`` and ``<polygon>`` become ``<path>`` with the same outline
(``<circle>``/``<ellipse>`` stay: an arc is drawn by other code in every renderer).
``<rect>`` only with a judge that draws like a browser (``rects=True``, ``fix --browser``):
see _GEOMETRY. None of it happens with a ``<style>`` sheet (a selector may name the
element's tag) or for a shape with an id something names.

Sibling paths drawn alike are merged into one (SVGO's mergePaths, ``merge_edits``) only
with such a judge too: Chromium's Skia antialiases a stroke of several subpaths
differently from the same subpaths stroked one by one, even apart
(feather/align-justify.svg: four lines as one path moved Chromium's pixels by 17/255 at
384 px, 33/255 at 100 px), which CairoSVG and resvg do not show.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from lxml import etree

from svgloo.engine.fixing.cleanup.edits import Context, Edit, detach, in_svg, local
from svgloo.engine.fixing.cleanup.numbers import NUMBER, join, short
from svgloo.engine.fixing.cleanup.path_short import PathDataError, _tokens, shortest
from svgloo.engine.reading.document import SVG_NS

# <rect> only with rects=True: Chromium's Skia draws a rect by its own rules, not as the
# same outline in path data (noto/emoji_u1f303.svg, 60 small rects at 2-decimal
# positions: 27/255 on 1,769 px at 384 px), which neither proof renderer shows.
_GEOMETRY = {"line": ("x1", "y1", "x2", "y2"), "polyline": ("points",),
             "polygon": ("points",), "rect": ("x", "y", "width", "height")}
# What makes a merged path draw differently by construction (markers at every vertex of
# the whole path) or what another file or a script might name: never merged.
_NOT_MERGED = ("id", "marker-start", "marker-mid", "marker-end", "marker", "class")


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
    if tag == "rect":
        if any(node.get(k) not in (None, "0") for k in ("rx", "ry")):
            return None
        x, y, w, h = (_number(node.get(k)) for k in _GEOMETRY["rect"])
        if x is None or y is None or w is None or h is None or w <= 0 or h <= 0 or \
                node.get("width") is None or node.get("height") is None:
            return None
        return (f"M{join([short(x), short(y)])}H{short(x + w)}V{short(y + h)}"
                f"H{short(x)}z")
    return None


def shape_edits(ctx: Context, rects: bool = False) -> list[Edit]:
    if ctx.stylesheet.strip():
        return []
    out = []
    for i, node in enumerate(ctx.nodes):
        if not in_svg(node) or local(node.tag) not in _GEOMETRY or node.get("pathLength"):
            continue
        if local(node.tag) == "rect" and (not rects or node.get("rx") or node.get("ry")):
            continue
        if node.get("id") in ctx.referenced:
            continue
        d = path_of(node)
        if d is None:
            continue
        names = _GEOMETRY[local(node.tag)]
        old = sum(len(k) + len(node.get(k) or "") + 4 for k in names
                  if node.get(k) is not None) + len(local(node.tag))
        new = len(d) + 8
        if new < old:
            out.append(Edit("shapes", i, "change", _to_path(d, names), old - new))
    return out


def _standalone(d: str) -> str | None:
    """``d`` as it can follow other path data: a leading relative moveto made absolute
    (the first pair of a path's ``m`` is absolute; after another subpath it would not be),
    the rest spelled step by step. None when the data does not read."""
    stripped = d.strip()
    if not stripped.startswith("m"):
        return stripped
    try:
        tokens = _tokens(stripped)
    except PathDataError:
        return None
    return "".join(("M" if k == 0 else letter) + join(args)
                   for k, (letter, args) in enumerate(tokens))


def merge_edits(ctx: Context) -> list[Edit]:
    """Runs of sibling ``<path>``s with the same attributes but ``d`` as one path: the
    first takes the others' path data and they go (one edit a run, so the proof never sees
    half a merge). Not with a stylesheet or a script, nor for paths with an id, a class or
    markers; whether overlapping subpaths fill alike is the proof's and the judge's to say."""
    if ctx.stylesheet.strip() or ctx.scripted:
        return []
    out = []
    index = {id(n): i for i, n in enumerate(ctx.nodes)}
    seen: set[int] = set()
    for node in ctx.nodes:
        if id(node) in seen or not _mergeable(node):
            continue
        run = [node]
        nxt = node.getnext()
        while nxt is not None and _mergeable(nxt) and not (run[-1].tail or "").strip() and \
                _same_but_d(node, nxt):
            run.append(nxt)
            nxt = nxt.getnext()
        seen.update(id(n) for n in run)
        if len(run) < 2:
            continue
        parts = [(node.get("d") or "").strip()] + [_standalone(n.get("d") or "") for n in run[1:]]
        if any(p is None or not p for p in parts):
            continue
        merged = "".join(p for p in parts if p)
        saves = sum(len(etree.tostring(n, with_tail=False)) for n in run[1:]) - \
            (len(merged) - len(parts[0] or ""))
        if saves > 0:
            out.append(Edit("merged", index[id(node)], "change",
                            _merge(merged, len(run) - 1), saves))
    return out


def _mergeable(node) -> bool:
    return in_svg(node) and local(node.tag) == "path" and bool(node.get("d")) and \
        len(node) == 0 and not any(k in node.attrib for k in _NOT_MERGED) and \
        "marker" not in (node.get("style") or "")


def _same_but_d(a, b) -> bool:
    return {k: v for k, v in a.attrib.items() if k != "d"} == \
        {k: v for k, v in b.attrib.items() if k != "d"}


def _merge(d: str, following: int):
    def change(node) -> None:
        for _ in range(following):
            nxt = node.getnext()
            if nxt is not None:
                detach(nxt)
        node.set("d", d)
    return change


def _to_path(d: str, names: tuple[str, ...]):
    def change(node) -> None:
        for name in names:
            node.attrib.pop(name, None)
        node.tag = f"{{{SVG_NS}}}path"
        node.set("d", d)
    return change


def edits(ctx: Context) -> list[Edit]:
    return shape_edits(ctx)


__all__ = ["path_of", "shape_edits", "merge_edits", "edits"]
