"""What the evaluation takes from a ground-truth diagram: its shapes (type, box, label,
colours, styles), its arrows (which shapes they join, colour, curve) and its arrow heads.

VFig's ground truths mark shapes with ``id="shape_N"``; arrows are ``<g>`` with a shaft and
a polygon head between ``<!-- Arrows -->`` and ``<!-- Shapes -->`` comments. Every rule
here reproduces RAIVNLab/VFig@4874af7 ``rule-based-eval/main.py`` (``main.py:N``) and
``lib/eval_arrows.py``/``lib/eval_shapes.py``, quirks included; docs/eval-diagram.md
lists the quirks that change numbers.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any
from dataclasses import dataclass

from lxml import etree

from . import styles
from .geometry import (NOT_DRAWN, SHAPE_TAGS, OriginalFails, area, box, defs_by_id,
                       distance_to_box, group_box_with_uses, has_shape_or_use_below, href,
                       is_curved, kids, local, number, numbers, path_end, path_start,
                       translate_of, use_box, walk)
from .texts import Text, positioned_texts

MIN_SIDE = 5             # a ground-truth shape thinner than this is skipped (main.py:765)
ARROW_END_REACH = 150    # an arrow end this far from every shape joins none (main.py:500)


@dataclass
class GtShape:
    key: str             # "shape_N"
    type: str            # the type table's name (infer_type)
    bounds: list         # [x0, y0, x1, y1] rounded to integers, as the original stores them
    label: str
    font: str
    fill_style: str
    fill: str
    stroke: str
    border_style: str


@dataclass
class GtArrow:
    key: str             # "arrow_N" in document order
    source: str          # shape keys; "shape_0" when an end is near no shape
    dest: str
    color: str
    curved: bool


@dataclass
class GtHead:
    width: float         # the polygon's y-extent
    stroke_width: float  # the shaft's
    visible: bool        # False when the tip lies ≥ 10 px inside a shape


# ---------------------------------------------------------------- the type table

def _stacked_layers(g) -> int:
    """Direct <g> children with a translate() (depth shadows of a stacked shape)."""
    return sum(1 for k in kids(g)
               if local(k) == "g" and "translate" in k.get("transform", "").lower())


def main_child(g):
    """The visible face of a shape group (main.py:163): its first direct shape without a
    transform, else the first shape inside a child group, else the group itself."""
    for k in kids(g):
        if local(k) in SHAPE_TAGS and not k.get("transform", ""):
            return k, local(k)
    for k in kids(g):
        if local(k) == "g":
            for kk in kids(k):
                if local(kk) in SHAPE_TAGS:
                    return kk, local(kk)
    return g, "g"


def _has_flat_edge(points: str, tol: float = 5.0) -> bool:
    v = numbers(points)
    pts = [(v[i], v[i + 1]) for i in range(0, len(v) - 1, 2)]
    return any(abs(pts[i][1] - pts[(i + 1) % len(pts)][1]) < tol for i in range(len(pts)))


def _element_type(el, tag: str) -> str:
    """main.py:205-259."""
    if tag == "rect":        # within 10 % of 1:1 → square
        w, h = number(el.get("width", 0)), number(el.get("height", 0))
        return "square" if h > 0 and abs(w / h - 1.0) <= 0.10 else "rectangle"
    if tag == "circle":
        return "circle"
    if tag == "ellipse":     # radii within 10 % → circle
        rx, ry = number(el.get("rx", 0)), number(el.get("ry", 0))
        return "circle" if rx > 0 and ry > 0 and abs(rx / ry - 1.0) <= 0.10 else "ellipse"
    if tag == "polygon":
        return "polygon"
    if tag == "path":
        d = el.get("d", "")
        if d.count("a") >= 3:                        # bumps of relative arcs: a cloud
            return "cloud"
        for enough in (len(re.findall(r"[Cc]", d)) >= 4, d.count("A") >= 2):
            b = box(el, tag) if enough else None
            if b:                                    # round: circle within 15 %, else ellipse
                w, h = b[2] - b[0], b[3] - b[1]
                return "circle" if h > 0 and abs(w / h - 1.0) <= 0.15 else "ellipse"
        if len(re.findall(r"[QqCcAa]", d)) >= 4:
            return "cloud"
        return "polygon"
    return "rectangle"       # anything else (use, polyline, line, a group's face, ...)


def _three_d_type(g) -> str:
    """main.py:262-299, from the group's direct children."""
    tags = {local(k) for k in kids(g)}
    if tags & {"ellipse", "circle"}:
        return "3d-cylinder"
    if "rect" in tags:
        return "3d-cube"     # a prism looks the same (main.py:38)
    polys = [k for k in kids(g) if local(k) == "polygon"]
    if polys:
        if max(len(numbers(p.get("points", ""))) // 2 for p in polys) >= 5:
            return "3d-hexagon"
        if any(_has_flat_edge(p.get("points", "")) for p in polys):
            return "3d-trapezoid"
        return "3d-diamond"
    return "3d-cylinder" if "path" in tags else "3d-cube"


def infer_type(el, tag: str) -> str:
    """The ground truth's type name (main.py:302-315): an element by its tag and
    proportions; a <g> with translated shadow layers by its face; any other <g> is 3D."""
    if tag != "g":
        return _element_type(el, tag)
    if _stacked_layers(el):
        face, face_tag = main_child(el)
        return _element_type(face, face_tag)
    return _three_d_type(el)


# ---------------------------------------------------------------- shapes

def _shape_elements(root) -> list[tuple[int, str, Any, str]]:
    """(N, "N", element, tag) for the first element of each ``id="shape_N"``, by N
    (main.py:516)."""
    seen, out = set(), []
    for el in walk(root):
        key = el.get("id", "")
        if key.startswith("shape_") and key[6:].isdigit() and key not in seen:
            seen.add(key)
            out.append((int(key[6:]), key[6:], el, local(el)))
    return sorted(out, key=lambda item: item[0])


def _shape_elements_without_ids(root) -> list[tuple[int, str, Any, str]]:
    """The original's own scan when no element has a shape id (main.py:542-668): filled
    shapes in document order, skipping the background and rects over half the canvas,
    entering a <g> that holds more than two shapes or has a transform, taking any other
    <g> with shapes (and text, or no arrow parts) whole."""
    css, defs = styles.class_rules(root), defs_by_id(root)
    vb = numbers(root.get("viewBox", ""))
    cw = vb[2] if len(vb) >= 4 else number(root.get("width", "800"))
    ch = vb[3] if len(vb) >= 4 else number(root.get("height", "600"))
    found = []

    def scan(parent, ox: float, oy: float) -> None:
        for el in kids(parent):
            tag = local(el)
            if tag in NOT_DRAWN:
                continue
            if tag in SHAPE_TAGS:
                fill = el.get("fill", "").strip().lower() or \
                    styles.css_value(el, "fill", css).strip().lower()
                if fill == "none":
                    continue
                if tag == "rect":
                    ws, hs = el.get("width", "0"), el.get("height", "0")
                    if "%" in ws or "%" in hs:
                        continue
                    w, h = number(ws), number(hs)
                    if abs(w - cw) < 5 and abs(h - ch) < 5:
                        continue
                    if cw > 0 and ch > 0 and w * h / (cw * ch) > 0.5:
                        continue
                if ox or oy:     # a moved copy: only x/cx and y/cy shift (not points, not d)
                    el = copy.deepcopy(el)
                    for names, d in ((("x", "cx"), ox), (("y", "cy"), oy)):
                        for a in names:
                            if a in el.attrib:
                                el.set(a, str(number(el.get(a)) + d))
                found.append((el, tag))
            elif tag == "use":
                b = use_box(el, defs, ox, oy)
                if b and b[2] - b[0] >= 15 and b[3] - b[1] >= 15:
                    found.append((el, tag))
            elif tag == "g":
                tx, ty = translate_of(el.get("transform", ""))
                tags = {local(k) for k in kids(el)}
                arrow_like = bool(tags & {"path", "line"}) and "polygon" in tags
                has_use, has_text = "use" in tags, "text" in tags
                with_shapes = bool(tags & SHAPE_TAGS) or has_use or any(
                    has_shape_or_use_below(k) for k in kids(el) if local(k) == "g")
                n_parts = sum(1 for k in kids(el) if local(k) in SHAPE_TAGS or local(k) == "use")
                container = (n_parts > 2 or "transform" in el.attrib) and not (has_use and has_text)
                if container and with_shapes:
                    scan(el, ox + tx, oy + ty)
                elif with_shapes and (has_text or not arrow_like):
                    found.append((el, tag))

    scan(root, 0.0, 0.0)
    return [(i, str(i), el, tag) for i, (el, tag) in enumerate(found)]


def shape_bounds(el, tag: str, defs: dict) -> list:
    """The visible part's box (main.py:322-395): an element's own box (no transform); a
    group without direct shapes: its <use>s'; a stacked group: its face's; a group with one
    direct shape: that shape's; else the union of its direct shapes. [0]*4 if none."""
    if tag == "use":
        return (use_box(el, defs) or [0, 0, 0, 0]) if defs else [0, 0, 0, 0]
    if tag != "g":
        return box(el, tag) or [0, 0, 0, 0]
    if defs and not any(local(k) in SHAPE_TAGS for k in kids(el)):
        b = group_box_with_uses(el, defs)
        if b:
            return list(b)
    face, face_tag = main_child(el)
    stacked = any("translate" in k.get("transform", "").lower()
                  for k in kids(el) if local(k) == "g")
    if stacked:
        if face_tag != "g":
            return box(face, face_tag) or [0, 0, 0, 0]
        container = face
    else:
        if face_tag != "g" and sum(1 for k in kids(el) if local(k) in SHAPE_TAGS) == 1:
            b = box(face, face_tag)
            if b:
                return b
        container = el
    merged = None
    for k in kids(container):
        if local(k) in SHAPE_TAGS:
            b = box(k, local(k))
            if b:
                merged = [min(merged[0], b[0]), min(merged[1], b[1]), max(merged[2], b[2]),
                          max(merged[3], b[3])] if merged else list(b)
    return merged or [0, 0, 0, 0]


def _label_for(b, texts: list[Text], used: set[int], margin: float = 50):
    """(label, font, indices) for a shape's box (main.py:441): texts inside the box first,
    then the nearest within the box + 50 px or 150 px of its centre; more lines at the same
    x (± 30 px) within 40 px of a taken one join it, top to bottom."""
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    near = []
    for i, t in enumerate(texts):
        if i in used:
            continue
        if b[0] <= t.x <= b[2] and b[1] <= t.y <= b[3]:
            near.append((-1.0, i))
            continue
        d = math.sqrt((t.x - cx) ** 2 + (t.y - cy) ** 2)
        if (b[0] - margin <= t.x <= b[2] + margin and b[1] - margin <= t.y <= b[3] + margin) \
                or d < 150:
            near.append((d, i))
    if not near:
        return "", "", set()
    near.sort()
    taken = [near[0][1]]
    x0 = texts[taken[0]].x
    for _, i in near[1:]:
        if abs(texts[i].x - x0) < 30 and any(abs(texts[i].y - texts[j].y) < 40 for j in taken):
            taken.append(i)
    taken.sort(key=lambda i: texts[i].y)
    return " ".join(texts[i].text for i in taken), texts[taken[0]].font or "", set(taken)


def ground_truth_shapes(root) -> dict[str, GtShape]:
    """main.py:745-821."""
    server_styles = styles.fill_styles(root)
    colours = styles.gradient_colours(root, with_patterns=True)
    texts = positioned_texts(root)
    defs = defs_by_id(root)
    used: set[int] = set()
    items = _shape_elements(root) or _shape_elements_without_ids(root)
    shapes: dict[str, GtShape] = {}
    for _, n, el, tag in items:
        key = f"shape_{n}"
        b = shape_bounds(el, tag, defs)
        if b[2] - b[0] < MIN_SIDE or b[3] - b[1] < MIN_SIDE:
            continue
        face: Any
        if tag == "use":
            ref = defs.get(href(el).lstrip("#"))
            face = ref if ref is not None else el
        elif tag == "g":
            face, _ = main_child(el)
        else:
            face = el
        fill = styles.resolve_colour(face.get("fill", "") or el.get("fill", ""), colours)
        fill_style = styles.fill_style(face, server_styles)
        if fill_style in ("solid", "none"):   # a pattern overlay on another part (main.py:786)
            for part in walk(el):
                if local(part) in SHAPE_TAGS:
                    style = styles.fill_style(part, server_styles)
                    if style not in ("solid", "none"):
                        fill_style = style
                        c = styles.resolve_colour(part.get("fill", ""), colours)
                        if c and not c.startswith("url("):
                            fill = c
                        break
        label, font, taken = _label_for(b, texts, used)
        used |= taken
        shapes[key] = GtShape(
            key=key, type=infer_type(el, tag), bounds=[round(v) for v in b],
            label=label or key, font=font, fill_style=fill_style, fill=fill,
            stroke=face.get("stroke", "") or el.get("stroke", ""),
            border_style=styles.border_style(face))
    return shapes


def fallback_colours(root) -> dict[str, dict[str, str]]:
    """id → {fill, stroke} of every ``shape_*`` element, a later one with the same id
    winning (eval_shapes.py:846); a group's come from its largest direct child. Used only
    where the shape's own fill or stroke is empty."""
    colours = styles.gradient_colours(root)
    out = {}
    for el in walk(root):
        key = el.get("id", "")
        if not key.startswith("shape_"):
            continue
        if local(el) == "g":
            best: float
            best, fill, stroke = 0, "", ""
            for k in kids(el):
                b = box(k, local(k))
                if b and area(b) > best:
                    best, fill, stroke = area(b), k.get("fill", ""), k.get("stroke", "")
            out[key] = {"fill": styles.resolve_colour(fill, colours), "stroke": stroke}
        else:
            out[key] = {"fill": styles.resolve_colour(el.get("fill", ""), colours),
                        "stroke": el.get("stroke", "")}
    return out


# ---------------------------------------------------------------- arrows

def _has_shaft_and_head(g) -> bool:
    tags = {local(k) for k in kids(g)}
    return bool(tags & {"path", "line"}) and "polygon" in tags


def _section_groups(root) -> list:
    """Strategy A (main.py:686): the text between the first ``<!-- Arrows`` comment and the
    next ``<!-- Shapes`` comment, parsed on its own; its top-level <g>s with a shaft and a
    head. The document is serialised again to find that text; a section that does not
    parse alone gives nothing."""
    text = etree.tostring(root, encoding="unicode")
    m = re.search(r"<!--\s*Arrows.*?-->(.*?)<!--\s*Shapes", text, re.DOTALL)
    if not m:
        return []
    section = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", m.group(1))
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        wrapper = etree.fromstring(f"<root>{section}</root>", parser)
    except etree.XMLSyntaxError:
        return []
    return [g for g in kids(wrapper) if g.tag == "g" and _has_shaft_and_head(g)]


def arrow_elements(root) -> list:
    """Strategy A, else B (root-level <g>s, not shapes, with a shaft and a polygon), else C
    (any line/path with a marker-end or marker-start attribute)."""
    found = _section_groups(root)
    if not found:
        found = [g for g in kids(root) if local(g) == "g"
                 and not g.get("id", "").startswith("shape_") and _has_shaft_and_head(g)]
    if not found:
        for el in walk(root):
            if local(el) in ("line", "path"):
                marker = (el.get("marker-end") or el.get("marker-start") or "").strip()
                if marker and marker.lower() != "none":
                    found.append(el)
    return found


def _nearest_shape(x: float, y: float, shapes: dict, exclude: str | None = None):
    best_d: float
    best, best_d = None, ARROW_END_REACH
    for key, s in shapes.items():
        if key == exclude:
            continue
        d = distance_to_box(x, y, s.bounds, 10)
        if d < best_d:
            best, best_d = key, d
    return best


def ground_truth_arrows(root, shapes: dict[str, GtShape]) -> list[GtArrow]:
    """main.py:825-878: the last line/path of each arrow gives its ends (no transform
    followed), colour (its stroke attribute, default #000000) and curve; each end joins the
    nearest shape box (10 px margin) within 150 px, a second end on the same shape tries
    the others."""
    arrows = []
    for i, a in enumerate(arrow_elements(root)):
        color, curved, start, end = "#000000", False, None, None
        for part in (kids(a) if local(a) == "g" else [a]):
            tag = local(part)
            if tag == "line":
                color = part.get("stroke", color)
                start = number(part.get("x1", 0)), number(part.get("y1", 0))
                end = number(part.get("x2", 0)), number(part.get("y2", 0))
                curved = False
            elif tag == "path":
                color = part.get("stroke", color)
                d = part.get("d", "")
                start, end, curved = path_start(d), path_end(d), is_curved(d)
        source = _nearest_shape(*start, shapes) if start else None
        dest = _nearest_shape(*end, shapes) if end else None
        if source is not None and source == dest and end:
            dest = _nearest_shape(*end, shapes, exclude=source) or dest
        arrows.append(GtArrow(f"arrow_{i}", source or "shape_0", dest or "shape_0", color,
                              curved))
    return arrows


def _tip(v: list[float]):
    """The vertex farthest from the mean of the others (eval_arrows.py:192)."""
    pts = [(v[i], v[i + 1]) for i in range(0, len(v) - 1, 2)]
    best, tip = -1.0, None
    for i, p in enumerate(pts):
        others = pts[:i] + pts[i + 1:]
        mx, my = sum(o[0] for o in others) / len(others), sum(o[1] for o in others) / len(others)
        d = math.sqrt((p[0] - mx) ** 2 + (p[1] - my) ** 2)
        if d > best:
            best, tip = d, p
    return tip


def ground_truth_heads(root, shapes: dict[str, GtShape]) -> list[GtHead]:
    """eval_arrows.py:213-262: every root-level <g> (shape groups too) with an unfilled
    line/path and a polygon of ≥ 3 points, in document order, whatever the arrows were
    found by; the last polygon and the last shaft count; no transform is followed."""
    heads = []
    boxes = [s.bounds for s in shapes.values()]
    for g in kids(root):
        if local(g) != "g":
            continue
        parts = kids(g)
        shaft = any(local(k) in ("path", "line") and (k.get("fill") or "").lower() in ("", "none")
                    for k in parts)
        poly, sw = None, 2.0
        for k in parts:
            if local(k) == "polygon":
                poly = k
            if local(k) in ("path", "line"):
                sw = number(k.get("stroke-width"), 2)
        if not shaft or poly is None:
            continue
        v = numbers(poly.get("points", ""))
        if len(v) < 6:
            continue
        ys = v[1::2]
        tip = _tip(v)
        hidden = tip is not None and any(b[0] + 10 <= tip[0] <= b[2] - 10 and
                                         b[1] + 10 <= tip[1] <= b[3] - 10 for b in boxes)
        heads.append(GtHead(max(ys) - min(ys), sw, not hidden))
    return heads


def require_shape(shapes: dict, key: str, arrow: str) -> GtShape:
    """The original reads ``gt_shapes[arrow["from"]]`` unguarded (eval_arrows.py:707)."""
    if key not in shapes:
        raise OriginalFails(f"ground-truth {arrow}: an end near no shape falls back to "
                            f"{key}, which the ground truth does not have (the original "
                            "fails on this input too)")
    return shapes[key]
