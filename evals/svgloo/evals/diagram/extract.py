"""Shapes and arrows out of a ground-truth diagram SVG and out of a generated one.

Ground truth (VFig's format): shapes carry ``id="shape_N"``; labels are ``<text>`` inside
or near them; arrows are ``<g>`` with a shaft (``line``/``path``) and a ``polygon`` head,
ideally between ``<!-- Arrows -->`` and ``<!-- Shapes -->``. A generated SVG has no such
conventions, so its shapes and arrows are found by the heuristics of spec §4.3.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from lxml import etree

from . import geometry as geo

MIN_GT_SIDE = 5.0           # ground-truth shapes smaller than this are skipped
MIN_GEN_SIDE = 15.0         # generated shapes smaller than this are not shapes
MIN_ARROW_LENGTH = 20.0
GT_POINT_MARGIN, GT_POINT_MAX = 10.0, 150.0
BACKGROUND_FRACTION = 0.5   # a generated rect over this share of the canvas is background
LABEL_INSIDE_PAD, LABEL_MAX_DISTANCE = 30.0, 150.0
STACK_DX, STACK_DY = 30.0, 40.0
DUPLICATE_CENTRE_DISTANCE = 20.0
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


@dataclass
class Shape:
    key: str                  # "shape_N" (ground truth) or the label (generated)
    label: str
    type: str                 # inferred type (ground truth) or the element tag (generated)
    child_tags: tuple
    box: tuple
    fill: str | None
    fill_style: str
    stroke: str | None
    border_style: str
    font: str | None


@dataclass
class Arrow:
    key: str
    start: tuple
    end: tuple
    color: str | None
    stroke_width: float
    curved: bool
    dash: str | None
    has_head: bool = False
    marker: dict | None = None      # {"vw", "vh", "units"} for a marker head
    source: str | None = None       # ground truth: shape keys
    dest: str | None = None
    head: dict = field(default_factory=dict)   # ground truth: {"width", "sw", "visible"}

    @property
    def length(self) -> float:
        return math.dist(self.start, self.end)


def normalise_label(text: str | None) -> str:
    return " ".join((text or "").lower().split())


def _texts(root) -> list:
    return [t for t in geo.elements(root) if geo.local(t) == "text" and not geo.in_defs(t)]


def canvas_size(root) -> tuple[float, float]:
    vb = [float(n) for n in geo._NUM.findall(root.get("viewBox") or "")]
    if len(vb) == 4 and vb[2] > 0 and vb[3] > 0:
        return vb[2], vb[3]
    return geo.number(root.get("width"), 0.0), geo.number(root.get("height"), 0.0)


# ---------------------------------------------------------------- ground truth

def infer_shape_type(el) -> str:
    """A type name from the ground truth's element (the original's table is not in the
    spec; these were checked against it as a black box): rect → rectangle (rounded or
    square too), circle, ellipse, polygon (any corner count), path; a group with an ellipse
    → 3d-cylinder, any other group → 3d-cube."""
    tag = geo.local(el)
    if tag == "g":   # a group is a 3D shape: with an ellipse a cylinder, else a cube
        kids = [geo.local(k) for k in el.iter() if k is not el and isinstance(k.tag, str)]
        return "3d-cylinder" if "ellipse" in kids else "3d-cube"
    if tag == "rect":   # rounded or square, still a rectangle
        return "rectangle"
    if tag in ("circle", "ellipse"):
        return tag
    return tag


def _gt_shape_elements(root) -> list[tuple[str, object]]:
    found: dict[int, tuple[str, object]] = {}
    for el in geo.elements(root):
        m = re.fullmatch(r"shape_(\d+)", el.get("id") or "")
        if m and int(m.group(1)) not in found:   # the first element per id
            found[int(m.group(1))] = (m.group(0), el)
    return [found[n] for n in sorted(found)]


def _element_box(el):
    """Box of a shape or group, each part shifted by its accumulated translate()."""
    if geo.local(el) == "g":
        parts = [k for k in el.iter() if k is not el and geo.local(k) in geo.SHAPE_TAGS]
        return geo.union(geo.shift(geo.own_box(k), *geo.accumulated_translate(k))
                         for k in parts)
    return geo.shift(geo.own_box(el), *geo.accumulated_translate(el))


def ground_truth_shapes(root, servers: dict) -> dict[str, Shape]:
    items = _gt_shape_elements(root)
    if not items:   # no shape_N ids: the generated-SVG heuristics stand in (a departure)
        return {f"shape_{i}": s for i, s in enumerate(generated_shapes(root, servers).values())}
    _cap(items, "ground-truth shapes")
    texts = _cap(_texts(root), "ground-truth texts")
    used: set[int] = set()
    shapes: dict[str, Shape] = {}
    for key, el in items:
        box = _element_box(el)
        if box is None or geo.width(box) < MIN_GT_SIDE or geo.height(box) < MIN_GT_SIDE:
            continue
        inside = [i for i, t in enumerate(texts)
                  if i not in used and geo.inside(geo.text_anchor_point(t), box)]
        if not inside:
            free = [i for i in range(len(texts)) if i not in used]
            if free:
                inside = [min(free, key=lambda i: geo.distance_to_box(
                    geo.text_anchor_point(texts[i]), box))]
        used.update(inside)
        label = " ".join(geo.text_of(texts[i]) for i in inside) or key
        font = geo.font_family(texts[inside[0]]) if inside else None
        fill, fill_style = geo.fill_of(el, servers)
        stroke, dash, _ = geo.stroke_of(el)
        kids = tuple(geo.local(k) for k in el if isinstance(k.tag, str))
        shapes[key] = Shape(key, label, infer_shape_type(el), kids, box, fill, fill_style,
                            stroke, geo.border_style(dash), font)
    return shapes


def _nearest_shape(point, shapes: dict, exclude: str | None = None) -> str | None:
    best, best_d = None, GT_POINT_MAX
    for key, s in shapes.items():
        if key == exclude:
            continue
        d = geo.distance_to_box(point, (s.box[0] - GT_POINT_MARGIN, s.box[1] - GT_POINT_MARGIN,
                                        s.box[2] + GT_POINT_MARGIN, s.box[3] + GT_POINT_MARGIN))
        if d <= best_d and (best is None or d < best_d):
            best, best_d = key, d
    return best


def _shaft_and_head(g):
    shaft = next((k for k in g if geo.local(k) in ("line", "path")), None)
    head = next((k for k in g if geo.local(k) == "polygon"), None)
    return shaft, head


def _has_shaft_and_head(g) -> bool:
    return all(part is not None for part in _shaft_and_head(g))


def _shaft_ends(shaft) -> tuple | None:
    dx, dy = geo.accumulated_translate(shaft)
    if geo.local(shaft) == "line":
        n = lambda a: geo.number(shaft.get(a))  # noqa: E731
        return (n("x1") + dx, n("y1") + dy), (n("x2") + dx, n("y2") + dy)
    info = geo.parse_path(shaft.get("d") or "")
    if info.start is None or info.end is None:
        return None
    return (info.start[0] + dx, info.start[1] + dy), (info.end[0] + dx, info.end[1] + dy)


def _arrow_groups(root) -> list:
    """Strategy A: <g> between the Arrows and Shapes comments; B: root-level <g> (not a
    shape) with a shaft and a polygon; C: line/path with a marker. The first that finds
    any wins."""
    section, between = [], False
    for node in root.iter():
        if isinstance(node, etree._Comment):
            text = (node.text or "").strip().lower()
            if text.startswith("arrows"):
                between = True
            elif text.startswith("shapes"):
                between = False
            continue
        if between and geo.local(node) == "g" and _has_shaft_and_head(node):
            section.append(("group", node))
    if section:
        return section
    root_level = [("group", g) for g in root if geo.local(g) == "g"
                  and not (g.get("id") or "").startswith("shape_") and _has_shaft_and_head(g)]
    if root_level:
        return root_level
    return [("marker", el) for el in geo.elements(root)
            if geo.local(el) in ("line", "path") and not geo.in_defs(el)
            and (geo.style_value(el, "marker-end") or geo.style_value(el, "marker-start"))]


def ground_truth_heads(root, shapes: dict) -> list[dict]:
    """Polygon heads of root-level <g> arrows: width = the polygon's y-extent, sw = the
    shaft's stroke width (default 2), hidden when the tip lies inside a shape inset 10 px."""
    heads = []
    for g in root:
        if geo.local(g) != "g" or (g.get("id") or "").startswith("shape_"):
            continue
        shaft, head = _shaft_and_head(g)
        if shaft is None or head is None:
            continue
        if (geo.inherited(shaft, "fill") or "none").lower() not in ("none", ""):
            continue
        dx, dy = geo.accumulated_translate(head)
        pts = [(x + dx, y + dy) for x, y in geo.points_attr(head)]
        ends = _shaft_ends(shaft)
        if not pts or ends is None:
            continue
        tip = max(pts, key=lambda p: math.dist(p, ends[0]))
        sw = geo.style_value(shaft, "stroke-width")
        visible = not any(geo.inside(tip, s.box, inset=10.0) for s in shapes.values())
        heads.append({"width": max(p[1] for p in pts) - min(p[1] for p in pts),
                      "sw": geo.number(sw, 2.0) if sw is not None else 2.0,
                      "visible": visible})
    return heads


def ground_truth_arrows(root, shapes: dict) -> list[Arrow]:
    arrows = []
    for kind, el in _arrow_groups(root):
        shaft, head = _shaft_and_head(el) if kind == "group" else (el, None)
        ends = _shaft_ends(shaft)
        if ends is None:
            continue
        source = _nearest_shape(ends[0], shapes) or "shape_0"
        dest = _nearest_shape(ends[1], shapes, exclude=source) or "shape_0"
        sw = geo.inherited(shaft, "stroke-width")
        arrows.append(Arrow(
            key=f"arrow_{len(arrows)}", start=ends[0], end=ends[1],
            color=geo.inherited(shaft, "stroke") or "#000000",
            stroke_width=geo.number(sw, 2.0) if sw else 2.0,
            curved=geo.local(shaft) == "path" and geo.parse_path(shaft.get("d")).curved,
            dash=geo.inherited(shaft, "stroke-dasharray"),
            has_head=head is not None or kind == "marker", source=source, dest=dest))
    return arrows


# ---------------------------------------------------------------- generated

def _visible_stroke(el) -> bool:
    stroke = geo.inherited(el, "stroke")
    if stroke is None or stroke.strip().lower() in ("none", "transparent", ""):
        return False
    sw = geo.inherited(el, "stroke-width")
    return sw is None or geo.number(sw, 1.0) > 0


def is_shape(el, box, canvas: tuple[float, float]) -> bool:
    tag = geo.local(el)
    if tag == "line" or box is None:
        return False
    if geo.width(box) < MIN_GEN_SIDE or geo.height(box) < MIN_GEN_SIDE:
        return False
    fill = (geo.inherited(el, "fill") or "").strip().lower()
    if tag in ("rect", "circle", "ellipse", "polygon"):
        if fill in ("none", "transparent") and not _visible_stroke(el):
            return False
    elif tag in ("polyline", "path"):
        if fill in ("none", "transparent"):
            return False
    else:
        return False
    area = canvas[0] * canvas[1]
    if tag == "rect" and area > 0 and geo.width(box) * geo.height(box) > BACKGROUND_FRACTION * area:
        return False
    return True


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def group_overlapping(items: list) -> list[list]:
    """Connected components of the overlap relation (boxes that share area), in the
    document order of their first member."""
    parent = list(range(len(items)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if _overlap(items[i][1], items[j][1]):
                parent[find(j)] = find(i)
    groups: dict[int, list] = {}
    for i, item in enumerate(items):
        groups.setdefault(find(i), []).append(item)
    return sorted(groups.values(), key=lambda g: items.index(g[0]))


def _text_blocks(texts: list) -> list[dict]:
    """Texts with vertically stacked neighbours (|dx| < 30, |dy| < 40) merged, in order."""
    blocks: list[dict] = []
    for t in texts:
        p = geo.text_anchor_point(t)
        for b in blocks:
            last = b["points"][-1]
            if abs(p[0] - last[0]) < STACK_DX and abs(p[1] - last[1]) < STACK_DY:
                b["points"].append(p)
                b["text"] += " " + geo.text_of(t)
                break
        else:
            blocks.append({"points": [p], "text": geo.text_of(t), "el": t})
    for b in blocks:
        xs, ys = [q[0] for q in b["points"]], [q[1] for q in b["points"]]
        b["point"] = (sum(xs) / len(xs), sum(ys) / len(ys))
    return blocks


def _shape_record(label: str, tag: str, child_tags: tuple, box, el, servers,
                  font: str | None) -> Shape:
    fill, fill_style = geo.fill_of(el, servers)
    stroke, dash, _ = geo.stroke_of(el)
    if fill is None:
        inherited_fill = geo.inherited(el, "fill")
        fill = inherited_fill if inherited_fill is not None else (
            "#000000" if tag != "g" else None)
    return Shape(normalise_label(label), normalise_label(label), tag, child_tags, box, fill,
                 fill_style, stroke, geo.border_style(dash), font)


def generated_shapes(root, servers: dict) -> dict[str, Shape]:
    """Pattern A: a <g> with <text> children is one shape (label = its texts joined, box =
    its shape children's, only the group's and the child's own translate() followed).
    Pattern B: the other shapes, grouped by overlap, labelled with the nearest unused
    text block. Later duplicates (same label, or centres < 20 px apart) are dropped."""
    canvas = canvas_size(root)
    found: list[Shape] = []
    claimed: set = set()
    used_texts: set = set()
    for g in geo.elements(root):
        if geo.local(g) != "g" or geo.in_defs(g) or g in claimed:
            continue
        texts = [k for k in g if geo.local(k) == "text"]
        if not texts:
            continue
        parts = [k for k in g.iter() if geo.local(k) in geo.SHAPE_TAGS]
        if not parts:
            continue
        gdx, gdy = geo.translate_of(g)
        box = geo.union(geo.shift(geo.own_box(k), gdx + geo.translate_of(k)[0],
                                  gdy + geo.translate_of(k)[1]) for k in parts)
        if box is None:
            continue
        claimed.update(g.iter())
        used_texts.update(texts)
        label = " ".join(geo.text_of(t) for t in texts)
        found.append(_shape_record(label, "g", tuple(geo.local(k) for k in parts), box,
                                   parts[0], servers, geo.font_family(texts[0])))
    loose = []   # top-level candidates: root children; a root-level <g> is one unit
    for el in root:
        if el in claimed or geo.local(el) not in geo.SHAPE_TAGS + ("g",):
            continue
        if geo.local(el) == "g":
            parts = [k for k in el.iter() if k not in claimed and geo.local(k) in geo.SHAPE_TAGS]
            box = geo.union(geo.shift(geo.own_box(k), *geo.accumulated_translate(k))
                            for k in parts)
            if parts and is_shape(parts[0], box, canvas):
                loose.append((el, box, parts))
            continue
        box = geo.shift(geo.own_box(el), *geo.accumulated_translate(el))
        if is_shape(el, box, canvas):
            loose.append((el, box, [el]))
    _cap(loose, "shape candidates")
    blocks = _text_blocks(_cap([t for t in _texts(root) if t not in used_texts], "texts"))
    free = list(range(len(blocks)))
    for group in group_overlapping(loose):
        box = geo.union(item[1] for item in group)
        main_item = max(group, key=lambda item: geo.width(item[1]) * geo.height(item[1]))
        main = main_item[0]
        tag = geo.local(main)   # a group of overlapping shapes has its largest one's tag
        parts = [p for item in group for p in item[2]]
        c = geo.centre(box)
        pad = (box[0] - LABEL_INSIDE_PAD, box[1] - LABEL_INSIDE_PAD,
               box[2] + LABEL_INSIDE_PAD, box[3] + LABEL_INSIDE_PAD)
        near = [i for i in free if geo.inside(blocks[i]["point"], pad)] or \
               [i for i in free if math.dist(blocks[i]["point"], c) <= LABEL_MAX_DISTANCE]
        if not near:   # an unlabelled shape is not a diagram node
            continue
        pick = min(near, key=lambda i: math.dist(blocks[i]["point"], c))
        free.remove(pick)
        found.append(_shape_record(blocks[pick]["text"], tag,
                                   tuple(geo.local(p) for p in parts), box,
                                   main,
                                   servers, geo.font_family(blocks[pick]["el"])))
    kept: dict[str, Shape] = {}
    for s in found:
        if s.label in kept or any(
                math.dist(geo.centre(s.box), geo.centre(k.box)) < DUPLICATE_CENTRE_DISTANCE
                for k in kept.values()):
            continue
        kept[s.label] = s
    return kept


def markers(root) -> dict:
    """Marker id -> {"vw", "vh", "units"}. Deliberate quirk kept from the original: the
    head polygon's *y*-extent is stored as ``vw``, and without a polygon
    ``(vw, vh) = (markerHeight, markerWidth)``."""
    out = {}
    for m in geo.elements(root):
        if geo.local(m) != "marker" or not m.get("id"):
            continue
        vw, vh = geo.number(m.get("markerHeight"), 3.0), geo.number(m.get("markerWidth"), 3.0)
        poly = next((k for k in m.iter() if geo.local(k) == "polygon"), None)
        if poly is not None and geo.points_attr(poly):
            ys = [p[1] for p in geo.points_attr(poly)]
            vw = max(ys) - min(ys)
        out[m.get("id")] = {"vw": vw, "vh": vh,
                            "units": m.get("markerUnits") or "strokeWidth"}
    return out


def generated_arrows(root) -> list[Arrow]:
    """Open paths (start ≠ end, no fill, a stroke) and stroked lines at least 20 px long;
    the head is a ``marker-end`` or a polygon sibling in the same <g>."""
    found_markers = markers(root)
    arrows = []
    for el in geo.elements(root):
        tag = geo.local(el)
        if tag not in ("line", "path") or geo.in_defs(el) or not _visible_stroke(el):
            continue
        if tag == "path":
            info = geo.parse_path(el.get("d") or "")
            fill = (geo.inherited(el, "fill") or "").strip().lower()
            if info.closed or info.start is None or info.start == info.end or \
                    fill not in ("none", ""):
                continue
            curved = info.curved
        else:
            curved = False
        ends = _shaft_ends(el)
        if ends is None or math.dist(*ends) < MIN_ARROW_LENGTH:
            continue
        marker = found_markers.get(geo.url_id(geo.style_value(el, "marker-end")) or "")
        parent = el.getparent()
        sibling = next((k for k in parent if geo.local(k) == "polygon"), None) \
            if geo.local(parent) == "g" else None
        sibling_head = sibling is not None
        if marker is None and sibling is not None and geo.points_attr(sibling):
            # a polygon head is measured in user units: its y-extent over the stroke width
            pts = geo.points_attr(sibling)
            marker = {"vw": max(p[1] for p in pts) - min(p[1] for p in pts),
                      "vh": max(p[0] for p in pts) - min(p[0] for p in pts),
                      "units": "userSpaceOnUse", "polygon": True}
        sw = geo.inherited(el, "stroke-width")
        arrows.append(Arrow(key=f"gen_arrow_{len(arrows)}", start=ends[0], end=ends[1],
                            color=geo.inherited(el, "stroke"),
                            stroke_width=geo.number(sw, 1.0) if sw else 1.0, curved=curved,
                            dash=geo.inherited(el, "stroke-dasharray"),
                            has_head=bool(marker) or sibling_head, marker=marker))
        _cap(arrows, "arrow candidates")
    return arrows


def filter_arrows_inside_shapes(arrows: list[Arrow], shapes: dict) -> list[Arrow]:
    """Drop strokes that belong to a shape: ≥ 80% of 11 points along the segment inside
    one box, or the midpoint inside a shape and length < 15% of its diagonal."""
    kept = []
    for a in arrows:
        samples = [(a.start[0] + (a.end[0] - a.start[0]) * k / 10,
                    a.start[1] + (a.end[1] - a.start[1]) * k / 10) for k in range(11)]
        mid = samples[5]
        drop = False
        for s in shapes.values():
            if sum(geo.inside(p, s.box) for p in samples) >= 0.8 * 11:
                drop = True
            elif geo.inside(mid, s.box) and \
                    a.length < 0.15 * math.hypot(geo.width(s.box), geo.height(s.box)):
                drop = True
            if drop:
                break
        if not drop:
            kept.append(a)
    return kept
