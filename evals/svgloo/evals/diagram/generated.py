"""What the evaluation finds in a generated diagram, which follows no convention: labelled
shapes and arrows, by the heuristics of RAIVNLab/VFig@4874af7 ``rule-based-eval/lib``
(``eval_shapes.py:612-842`` for shapes, ``eval_arrows.py:165-417`` for arrows), reproduced
rule by rule, quirks included."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from . import styles
from .geometry import (SHAPE_TAGS, area, box, canvas_size, centre, defs_by_id,
                       group_box_with_uses, has_shape_or_use_below, href, kids, local, number,
                       numbers, path_end, path_length, path_start, is_curved, translate_of,
                       use_box, walk)
from .texts import positioned_texts, text_content

MIN_SIDE = 15             # a generated shape narrower or lower than this is not a shape
SAME_PLACE = 20           # a shape whose centre is this close to a kept one is a duplicate
MIN_ARROW_LENGTH = 20
# Matching is quadratic: a hostile prediction with thousands of shapes or strokes is refused
# (real diagrams have tens) rather than left to run for minutes.
MAX_CANDIDATES = 1000


class TooComplex(ValueError):
    """More shape or arrow candidates than a diagram plausibly has."""


def _cap(items: list, what: str) -> list:
    if len(items) > MAX_CANDIDATES:
        raise TooComplex(f"{len(items)} {what}; the diagram evaluation stops at "
                         f"{MAX_CANDIDATES}")
    return items


def normalise_label(text: str | None) -> str:
    """Lower case, runs of whitespace made one space (utils.py:31); punctuation stays."""
    return " ".join((text or "").lower().split())


@dataclass
class GenShape:
    label: str            # as written (matching normalises it)
    tag: str              # the element's tag; "g" for a group of overlapping shapes
    bounds: list
    fill: str
    stroke: str
    font: str
    fill_style: str
    border_style: str
    child_tags: set = field(default_factory=set)

    @property
    def centre(self) -> tuple[float, float]:
        return centre(self.bounds)


@dataclass
class GenArrow:
    start: tuple
    end: tuple
    color: str
    stroke_width: float
    has_head: bool
    marker: dict | None   # {"vw", "units"} of the head, or None
    curved: bool
    length: float         # the path's length (a line's: its span)


# ---------------------------------------------------------------- shapes

def is_shape(el, tag: str, b, css: dict, canvas) -> bool:
    """eval_shapes.py:303: at least 15×15; a closed shape needs a fill or a stroke (an
    absent fill counts as none), a path needs a fill; a rect over half the canvas is a
    section container."""
    if not b or b[2] - b[0] < MIN_SIDE or b[3] - b[1] < MIN_SIDE or tag == "line":
        return False
    fill = styles.css_value(el, "fill", css).strip().lower()
    stroke = styles.css_value(el, "stroke", css).strip().lower()
    if tag in ("rect", "circle", "ellipse", "polygon", "polyline") and fill in ("", "none"):
        if not stroke or stroke == "none" or tag == "polyline":
            return False
    if tag == "path" and fill in ("", "none"):
        return False
    if tag == "rect" and canvas:
        cw, ch = canvas
        if cw > 0 and ch > 0 and area(b) / (cw * ch) > 0.5:
            return False
    return True


def _near_overlap(a, b, margin: float = 15) -> bool:
    if not a or not b:
        return False
    return not (a[2] + margin < b[0] or b[2] + margin < a[0] or a[3] + margin < b[1]
                or b[3] + margin < a[1])


def _overlay_style(elements, server_styles: dict, css: dict) -> str | None:
    """A pattern (not a gradient) filling one of ``elements``: the two-rect overlay."""
    for el in elements:
        fill = styles.css_value(el, "fill", css)
        if fill.startswith("url(#"):
            style = server_styles.get(fill[5:-1], "")
            if style and style not in styles.GRADIENT_STYLES:
                return style
    return None


def _individually_labelled(g, ox, oy, css, canvas, colours, server_styles) -> list[GenShape]:
    """eval_shapes.py:557: each direct shape of the group with the nearest unused direct
    text within 60 px of its centre; only when two or more shapes get one. The font is the
    shape's own (its ancestors'), not the text's."""
    local_texts = []
    for k in kids(g):
        if local(k) == "text":
            t = text_content(k).strip()
            if t:
                local_texts.append((number(k.get("x", 0)) + ox, number(k.get("y", 0)) + oy, t))
    if not local_texts:
        return []
    used, out = set(), []
    for k in kids(g):
        tag = local(k)
        if tag not in SHAPE_TAGS:
            continue
        b = box(k, tag, ox, oy)
        if not b or not is_shape(k, tag, b, css, canvas):
            continue
        cx, cy = centre(b)
        best_d: float
        best, best_d, best_i = None, 60, -1
        for i, (x, y, t) in enumerate(local_texts):
            if i in used:
                continue
            d = math.sqrt((x - cx) ** 2 + (y - cy) ** 2)
            if d < best_d:
                best, best_d, best_i = t, d, i
        if best is None:
            continue
        used.add(best_i)
        out.append(GenShape(
            best, tag, b,
            styles.resolve_colour(styles.css_value(k, "fill", css) or k.get("fill", ""), colours),
            styles.css_value(k, "stroke", css) or k.get("stroke", ""), styles.font_of(k, css),
            styles.fill_style(k, server_styles, css), styles.border_style(k, css), {tag}))
    return out if len(out) >= 2 else []


def _duplicate(c, shapes: list[GenShape]) -> bool:
    return any(math.sqrt((c[0] - s.centre[0]) ** 2 + (c[1] - s.centre[1]) ** 2) < SAME_PLACE
               for s in shapes)


def _top_level(root, server_styles, colours, css, canvas, defs) -> list[GenShape]:
    """Root children that are shapes or <use>s (eval_shapes.py:512); unlabelled yet."""
    out = []
    direct = [(el, local(el)) for el in kids(root) if local(el) in SHAPE_TAGS]
    for el, tag in direct:
        b = box(el, tag)
        if not b or not is_shape(el, tag, b, css, canvas):
            continue
        style = styles.fill_style(el, server_styles, css)
        if style in ("solid",) + styles.GRADIENT_STYLES:
            others = [e for e, t in direct if e is not el and _near_overlap(b, box(e, t))]
            style = _overlay_style(others, server_styles, css) or style
        out.append(GenShape("", tag, b,
                            styles.resolve_colour(styles.css_value(el, "fill", css), colours),
                            styles.css_value(el, "stroke", css), "", style,
                            styles.border_style(el, css), set()))
    for el in kids(root):
        if local(el) != "use":
            continue
        b = use_box(el, defs)
        if not b or b[2] - b[0] < MIN_SIDE or b[3] - b[1] < MIN_SIDE:
            continue
        ref = defs.get(href(el).lstrip("#"))
        if ref is None:
            continue
        fill = styles.css_value(ref, "fill", css) or ref.get("fill", "")
        if fill.lower() in ("none", ""):
            continue
        out.append(GenShape("", "use", b, styles.resolve_colour(fill, colours),
                            ref.get("stroke", ""), "", "solid", "solid", set()))
    return out


def group_overlapping(items: list[GenShape]) -> list[list[GenShape]]:
    """eval_shapes.py:795: join two boxes that share area unless one sits mostly (> 80 %)
    inside a clearly larger one (< 70 % of its area); join them when the shared area is
    over 30 % of each. Groups in the order of their first member."""
    parent = list(range(len(items)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            a, b = items[i].bounds, items[j].bounds
            if a[2] + 2 < b[0] or b[2] + 2 < a[0] or a[3] + 2 < b[1] or b[3] + 2 < a[1]:
                continue
            ix, iy = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
            if ix <= 0 or iy <= 0:
                continue
            inter = ix * iy
            small, large = sorted((max(1, area(a)), max(1, area(b))))
            if inter / small > 0.8 and small / large < 0.7:
                continue
            if inter / small > 0.3 and inter / large > 0.3:
                parent[find(j)] = find(i)
    groups: dict[int, list] = {}
    for i, item in enumerate(items):
        groups.setdefault(find(i), []).append(item)
    return list(groups.values())


def generated_shapes(root) -> list[GenShape]:
    """Pattern A: each <g> (anywhere) with direct text is a shape labelled by its texts,
    drawn by its first direct shape (or several, when two or more shapes each have their
    own nearby text); a <g> without text joins the loose shapes. Pattern B: the loose
    shapes (root children and text-less groups), grouped by overlap, each group labelled
    by the nearest unused text (stacked lines joined); unlabelled ones are dropped."""
    server_styles = styles.fill_styles(root)
    colours = styles.gradient_colours(root)
    css = styles.class_rules(root)
    defs = defs_by_id(root)
    texts = positioned_texts(root)
    canvas = canvas_size(root)
    shapes: list[GenShape] = []
    loose_groups: list[GenShape] = []
    for g in walk(root):
        if local(g) != "g":
            continue
        ox, oy = translate_of(g.get("transform", ""))
        label, bounds, tag, fill, stroke, font = "", None, "", "", "", ""
        fill_style = border = "solid"
        child_tags: set = set()
        for k in kids(g):
            ktag = local(k)
            if ktag == "text":
                t = text_content(k).strip()
                if t:
                    label = f"{label} {t}".strip() if label else t
                    font = font or styles.font_of(k, css)
            elif ktag == "use":
                b = use_box(k, defs, ox, oy)
                if b and b[2] - b[0] >= MIN_SIDE and b[3] - b[1] >= MIN_SIDE:
                    child_tags.add("use")
                    bounds = _union(bounds, b)
                    if not tag:
                        tag = "use"
                        ref = defs.get(href(k).lstrip("#"))
                        if ref is not None:
                            fill = styles.css_value(ref, "fill", css) or ref.get("fill", "")
                            stroke = styles.css_value(ref, "stroke", css) or ref.get("stroke", "")
            elif ktag in SHAPE_TAGS:
                child_tags.add(ktag)
                b = box(k, ktag, ox, oy)
                if b and is_shape(k, ktag, b, css, canvas):
                    bounds = _union(bounds, b)
                    if not tag:
                        tag = ktag
                        fill = styles.css_value(k, "fill", css)
                        stroke = styles.css_value(k, "stroke", css)
                        fill_style = styles.fill_style(k, server_styles, css)
                        border = styles.border_style(k, css)
            elif ktag == "g" and has_shape_or_use_below(k):
                b = group_box_with_uses(k, defs, ox, oy)
                if b and b[2] - b[0] >= MIN_SIDE and b[3] - b[1] >= MIN_SIDE:
                    child_tags.add("g")
                    bounds = _union(bounds, b)
        if bounds and fill_style in ("solid",) + styles.GRADIENT_STYLES:
            fill_style = _overlay_style([k for k in kids(g) if local(k) in SHAPE_TAGS],
                                        server_styles, css) or fill_style
        if label and bounds:
            parts = _individually_labelled(g, ox, oy, css, canvas, colours, server_styles)
            if parts:
                for s in parts:
                    if not _duplicate(s.centre, shapes):
                        shapes.append(s)
                        _mark_used(texts, s.label)
                continue
            if not _duplicate(centre(bounds), shapes):
                shapes.append(GenShape(label, tag, bounds, styles.resolve_colour(fill, colours),
                                       stroke, font, fill_style, border, child_tags))
                _mark_used(texts, label)
        elif bounds:   # no text: its largest direct shape speaks for it (eval_shapes.py:718)
            best: float
            biggest, best = None, 0
            for k in kids(g):
                if local(k) in SHAPE_TAGS:
                    b = box(k, local(k), ox, oy)
                    if b and area(b) > best:
                        biggest, best = k, area(b)
            if biggest is not None:
                loose_groups.append(GenShape(
                    "", "g", bounds,
                    styles.resolve_colour(styles.css_value(biggest, "fill", css), colours),
                    styles.css_value(biggest, "stroke", css), "",
                    styles.fill_style(biggest, server_styles, css),
                    styles.border_style(biggest, css), child_tags))
    loose = _cap(_top_level(root, server_styles, colours, css, canvas, defs) + loose_groups,
                 "shape candidates")
    _cap(texts, "texts")
    labels_taken: set[str] = set()
    for group in group_overlapping(loose):
        gb = group[0].bounds
        for s in group[1:]:
            gb = _union(gb, s.bounds)
        gc = centre(gb)
        near = []
        for i, text in enumerate(texts):
            if text.used:
                continue
            d = math.sqrt((text.x - gc[0]) ** 2 + (text.y - gc[1]) ** 2)
            if (gb[0] - 30 <= text.x <= gb[2] + 30 and gb[1] - 30 <= text.y <= gb[3] + 30) or d < 150:
                near.append((d, i))
        if not near:
            continue
        near.sort()
        taken = [near[0][1]]
        x0 = texts[taken[0]].x
        for _, i in near[1:]:
            if abs(texts[i].x - x0) < 30 and any(abs(texts[i].y - texts[j].y) < 40 for j in taken):
                taken.append(i)
        taken.sort(key=lambda i: texts[i].y)
        label = " ".join(texts[i].text for i in taken)
        font = texts[taken[0]].font
        for i in taken:
            texts[i].used = True
        if normalise_label(label) in labels_taken:
            continue
        labels_taken.add(normalise_label(label))
        biggest = max(group, key=lambda s: area(s.bounds))
        shapes.append(GenShape(label, biggest.tag if len(group) == 1 else "g", gb, biggest.fill,
                               biggest.stroke, font, biggest.fill_style, biggest.border_style,
                               set().union(*(s.child_tags for s in group))))
    return shapes


def _union(a, b):
    if not a:
        return b
    if not b:
        return a
    return [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]


def _mark_used(texts, label: str) -> None:
    """Texts whose normalised content occurs in the label are taken (a substring test over
    the whole document, eval_shapes.py:716)."""
    nl = normalise_label(label)
    for t in texts:
        if normalise_label(t.text) in nl:
            t.used = True


# ---------------------------------------------------------------- arrows

def markers(root) -> dict[str, dict]:
    """eval_arrows.py:165: id → head size. Deliberate quirk kept: the head's *y*-extent
    (its last polygon's, or its last path's numbers taken pairwise) is its ``vw``; without
    either, ``vw`` is markerHeight (default 10)."""
    out = {}
    for m in walk(root):
        if local(m) != "marker":
            continue
        vw = number(m.get("markerHeight"), 10)
        for k in kids(m):
            v = numbers(k.get("points", "")) if local(k) == "polygon" else \
                numbers(k.get("d", "")) if local(k) == "path" else []
            if (local(k) == "polygon" and len(v) >= 6) or (local(k) == "path" and len(v) >= 4):
                vw = max(v[1::2]) - min(v[1::2])
        out[m.get("id", "")] = {"vw": vw, "units": m.get("markerUnits", "strokeWidth")}
    return out


def _sibling_head(el) -> float | None:
    """The y-extent of the first polygon (≥ 3 points) beside ``el`` in its <g>."""
    parent = el.getparent()
    if parent is None or local(parent) != "g":
        return None
    for k in kids(parent):
        if local(k) == "polygon":
            v = numbers(k.get("points", ""))
            if len(v) >= 6:
                return max(v[1::2]) - min(v[1::2])
    return None


def _accumulated_translate(el) -> tuple[float, float]:
    tx, ty = translate_of(el.get("transform", ""))
    p = el.getparent()
    while p is not None:
        dx, dy = translate_of(p.get("transform", ""))
        tx, ty = tx + dx, ty + dy
        p = p.getparent()
    return tx, ty


def generated_arrows(root) -> list[GenArrow]:
    """eval_arrows.py:284: every open path (no closing Z at the end, start ≠ end, no fill,
    a stroke) and every stroked line, anywhere in the document (defs included), at least
    20 px from end to end after the translate()s above it. Paint comes from attributes,
    classes and <g> ancestors only (not ``style``). The head is a ``marker-end`` (its size
    looked up by id) or a polygon beside the shaft in its <g>."""
    found_markers = markers(root)
    css = styles.selector_rules(root)
    out: list[GenArrow] = []
    for el in walk(root):
        tag = local(el)
        if tag == "path":
            d = el.get("d", "")
            if d.rstrip().endswith(("Z", "z")):
                continue
            start, end = path_start(d), path_end(d)
            if not start or not end:
                continue
            if abs(start[0] - end[0]) < 1 and abs(start[1] - end[1]) < 1:
                continue
            fill = styles.arrow_value(el, "fill", css).lower()
            if fill and fill != "none":
                continue
        elif tag == "line":
            start = number(el.get("x1")), number(el.get("y1"))
            end = number(el.get("x2")), number(el.get("y2"))
        else:
            continue
        stroke = styles.arrow_value(el, "stroke", css)
        if not stroke:
            continue
        ox, oy = _accumulated_translate(el)
        start, end = (start[0] + ox, start[1] + oy), (end[0] + ox, end[1] + oy)
        span = math.sqrt((end[0] - start[0]) ** 2 + (end[1] - start[1]) ** 2)
        if span < MIN_ARROW_LENGTH:
            continue
        marker_end = el.get("marker-end", "") or styles.arrow_value(el, "marker-end", css)
        has_head = "url(#" in marker_end
        marker = None
        if has_head:
            ref = _marker_ref(marker_end)
            marker = found_markers.get(ref) if ref is not None else None
        else:
            width = _sibling_head(el)
            if width is not None:
                has_head, marker = True, {"vw": width, "units": "userSpaceOnUse"}
        out.append(GenArrow(start, end, stroke,
                            number(styles.arrow_value(el, "stroke-width", css), 1), has_head,
                            marker, tag == "path" and is_curved(d),
                            path_length(d) if tag == "path" else span))
        _cap(out, "arrow candidates")
    return out


def _marker_ref(value: str) -> str | None:
    m = re.search(r"url\(#([^)]+)\)", value)
    return m.group(1) if m else None


def drop_strokes_of_shapes(arrows: list[GenArrow], boxes: list) -> list[GenArrow]:
    """eval_arrows.py:376: a stroke with ≥ 80 % of 11 points along its chord inside one
    shape box, or with its chord's midpoint inside a shape and a length under 15 % of
    that shape's diagonal, belongs to the shape."""
    kept = []
    for a in arrows:
        (sx, sy), (ex, ey) = a.start, a.end
        inside = False
        for b in boxes:
            n = sum(1 for t in range(11) if b[0] <= sx + t / 10 * (ex - sx) <= b[2]
                    and b[1] <= sy + t / 10 * (ey - sy) <= b[3])
            if n / 11 >= 0.8:
                inside = True
                break
        if not inside and a.length > 0:
            mx, my = (sx + ex) / 2, (sy + ey) / 2
            for b in boxes:
                diag = math.sqrt((b[2] - b[0]) ** 2 + (b[3] - b[1]) ** 2)
                if b[0] <= mx <= b[2] and b[1] <= my <= b[3] and diag > 0 \
                        and a.length < 0.15 * diag:
                    inside = True
                    break
        if not inside:
            kept.append(a)
    return kept
