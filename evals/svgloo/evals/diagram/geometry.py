"""Reading a diagram SVG the way the rule-based evaluation does: presentation attributes
(an inline ``style`` wins), axis-aligned boxes from the geometry attributes, path points,
``translate()`` only (every other transform is ignored, as in the original), and the
paint servers and markers in ``<defs>``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from lxml import etree

Box = tuple[float, float, float, float]   # x0, y0, x1, y1

SHAPE_TAGS = ("rect", "circle", "ellipse", "polygon", "polyline", "path")
CONTAINERS_NOT_DRAWN = ("defs", "marker", "pattern", "clipPath", "mask", "symbol",
                        "linearGradient", "radialGradient")
_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_PATH_TOKEN = re.compile(r"[MmLlHhVvCcSsQqTtAaZz]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ARGS = {"m": 2, "l": 2, "h": 1, "v": 1, "c": 6, "s": 4, "q": 4, "t": 2, "a": 7, "z": 0}


def local(el) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def elements(root):
    """Drawn elements in document order (comments and processing instructions left out)."""
    return [el for el in root.iter() if isinstance(el.tag, str)]


def style_value(el, name: str) -> str | None:
    """``name`` from the inline style (which wins) or the attribute; None if unset."""
    style = el.get("style") or ""
    for decl in style.split(";"):
        key, sep, value = decl.partition(":")
        if sep and key.strip() == name:
            return value.strip()
    value = el.get(name)
    return value.strip() if value is not None else None


def inherited(el, name: str) -> str | None:
    while el is not None and isinstance(el.tag, str):
        value = style_value(el, name)
        if value is not None:
            return value
        el = el.getparent()
    return None


def number(value, default: float = 0.0) -> float:
    m = _NUM.match((value or "").strip())
    return float(m.group()) if m else default


def translate_of(el) -> tuple[float, float]:
    """The element's own ``translate()``; rotate/scale/matrix are not followed."""
    tx = ty = 0.0
    for m in re.finditer(r"translate\(([^)]*)\)", el.get("transform") or ""):
        nums = [float(n) for n in _NUM.findall(m.group(1))]
        if nums:
            tx += nums[0]
            ty += nums[1] if len(nums) > 1 else 0.0
    return tx, ty


def accumulated_translate(el) -> tuple[float, float]:
    tx = ty = 0.0
    while el is not None and isinstance(el.tag, str):
        dx, dy = translate_of(el)
        tx, ty = tx + dx, ty + dy
        el = el.getparent()
    return tx, ty


def shift(box: Box | None, dx: float, dy: float) -> Box | None:
    if box is None:
        return None
    return box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy


def union(boxes) -> Box | None:
    boxes = [b for b in boxes if b is not None]
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))


def width(b: Box) -> float:
    return b[2] - b[0]


def height(b: Box) -> float:
    return b[3] - b[1]


def centre(b: Box) -> tuple[float, float]:
    return (b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0


def inside(p, b: Box, inset: float = 0.0, strict: bool = False) -> bool:
    x0, y0, x1, y1 = b[0] + inset, b[1] + inset, b[2] - inset, b[3] - inset
    if strict:
        return x0 < p[0] < x1 and y0 < p[1] < y1
    return x0 <= p[0] <= x1 and y0 <= p[1] <= y1


def distance_to_box(p, b: Box) -> float:
    dx = max(b[0] - p[0], 0.0, p[0] - b[2])
    dy = max(b[1] - p[1], 0.0, p[1] - b[3])
    return math.hypot(dx, dy)


def points_attr(el) -> list[tuple[float, float]]:
    nums = [float(n) for n in _NUM.findall(el.get("points") or "")]
    return list(zip(nums[0::2], nums[1::2]))


@dataclass
class PathInfo:
    points: list            # end and control points, absolute
    start: tuple | None
    end: tuple | None
    closed: bool
    curved: bool            # any Q/T/S/C/A command


def parse_path(d: str) -> PathInfo:
    tokens = _PATH_TOKEN.findall(d or "")
    pts: list = []
    x = y = sx = sy = 0.0
    start = end = None
    closed = curved = False
    cmd = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.isalpha():
            cmd = tok
            i += 1
            if cmd in "Zz":
                x, y = sx, sy
                closed = True
                end = (x, y)
                continue
        elif cmd is None:
            break
        n = _ARGS[cmd.lower()]
        args = tokens[i:i + n]
        if len(args) < n or any(a.isalpha() for a in args):
            break
        i += n
        v = [float(a) for a in args]
        rel = cmd.islower()
        c = cmd.lower()
        if c in "qtsca":
            curved = True
        if c == "h":
            x = x + v[0] if rel else v[0]
        elif c == "v":
            y = y + v[0] if rel else v[0]
        elif c == "a":
            x, y = (x + v[5], y + v[6]) if rel else (v[5], v[6])
        else:
            for k in range(0, n - 2, 2):   # control points
                pts.append((x + v[k], y + v[k + 1]) if rel else (v[k], v[k + 1]))
            x, y = (x + v[-2], y + v[-1]) if rel else (v[-2], v[-1])
        pts.append((x, y))
        if c == "m":
            sx, sy = x, y
            if start is None:
                start = (x, y)
            cmd = "l" if rel else "L"   # implicit lineto after a moveto
        closed = False
        end = (x, y)
    return PathInfo(pts, start, end, closed, curved)


def own_box(el) -> Box | None:
    """The element's box in its own coordinates (its transform not applied)."""
    tag = local(el)
    g = lambda name: number(el.get(name))  # noqa: E731
    if tag == "rect":
        return g("x"), g("y"), g("x") + g("width"), g("y") + g("height")
    if tag == "circle":
        r = g("r")
        return g("cx") - r, g("cy") - r, g("cx") + r, g("cy") + r
    if tag == "ellipse":
        return g("cx") - g("rx"), g("cy") - g("ry"), g("cx") + g("rx"), g("cy") + g("ry")
    if tag == "line":
        return (min(g("x1"), g("x2")), min(g("y1"), g("y2")),
                max(g("x1"), g("x2")), max(g("y1"), g("y2")))
    if tag in ("polygon", "polyline"):
        pts = points_attr(el)
    elif tag == "path":
        pts = parse_path(el.get("d") or "").points
    else:
        return None
    if not pts:
        return None
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def text_of(el) -> str:
    return " ".join("".join(el.itertext()).split())


def text_anchor_point(el) -> tuple[float, float]:
    """Where a ``<text>`` sits: its x/y (the first tspan's when it has none), translated."""
    x, y = el.get("x"), el.get("y")
    if x is None or y is None:
        for t in el.iter():
            if local(t) == "tspan" and t.get("x") is not None:
                x, y = x or t.get("x"), y or t.get("y")
                break
    dx, dy = accumulated_translate(el)
    return number(x) + dx, number(y) + dy


def font_family(el) -> str | None:
    value = inherited(el, "font-family")
    if value is None:
        for t in el.iter():
            if isinstance(t.tag, str) and style_value(t, "font-family"):
                return style_value(t, "font-family")
    return value


def in_defs(el) -> bool:
    p = el.getparent()
    while p is not None:
        if local(p) in CONTAINERS_NOT_DRAWN:
            return True
        p = p.getparent()
    return False


def url_id(value: str | None) -> str | None:
    m = re.search(r"url\(\s*['\"]?#([^)'\"]+)['\"]?\s*\)", value or "")
    return m.group(1) if m else None


def paint_servers(root) -> dict:
    """id -> {"style": fill style name, "color": first stop colour or None}.

    Fill style names (the original's): ``gradient-linear``, ``gradient-radial``; patterns by their content:
    circles → ``dots``, lines in two or more directions → ``crosshatch``, in one →
    ``hatching``, anything else → ``pattern``."""
    out = {}
    for el in elements(root):
        tag, key = local(el), el.get("id")
        if not key:
            continue
        if tag in ("linearGradient", "radialGradient"):
            stop = next((s for s in el.iter() if local(s) == "stop"), None)
            color = style_value(stop, "stop-color") if stop is not None else None
            out[key] = {"style": "gradient-linear" if tag == "linearGradient"
                        else "gradient-radial", "color": color}
        elif tag == "pattern":
            kids = [k for k in el.iter() if k is not el and isinstance(k.tag, str)]
            if any(local(k) == "circle" for k in kids):
                style = "dots"
            else:
                directions = set()
                for k in kids:
                    if local(k) == "line":
                        dx = number(k.get("x2")) - number(k.get("x1"))
                        dy = number(k.get("y2")) - number(k.get("y1"))
                        if dx or dy:
                            directions.add(round(math.degrees(math.atan2(dy, dx))) % 180)
                    elif local(k) == "path":
                        info = parse_path(k.get("d") or "")
                        if info.start and info.end and info.start != info.end:
                            dx, dy = info.end[0] - info.start[0], info.end[1] - info.start[1]
                            directions.add(round(math.degrees(math.atan2(dy, dx))) % 180)
                style = ("crosshatch" if len(directions) >= 2 else
                         "hatching" if directions else "pattern")
            out[key] = {"style": style, "color": None}
    return out


def border_style(dasharray: str | None) -> str:
    """solid without a dash array; ≥ 4 numbers → dash-dot; first number ≤ 3 → dotted;
    else dashed."""
    if not dasharray or dasharray.strip().lower() == "none":
        return "solid"
    nums = [float(n) for n in _NUM.findall(dasharray)]
    if not nums:
        return "solid"
    if len(nums) >= 4:
        return "dash-dot"
    return "dotted" if nums[0] <= 3 else "dashed"


def fill_of(el, servers: dict) -> tuple[str | None, str]:
    """(fill colour, fill style) of a shape: the element's own fill, else the first
    descendant's. A gradient resolves to its first stop's colour; a pattern stays
    ``url(#id)`` (so it compares at 0.5)."""
    candidates = [el] + [k for k in el.iter() if k is not el and isinstance(k.tag, str)
                         and local(k) in SHAPE_TAGS]
    for c in candidates:
        fill = style_value(c, "fill")
        if fill is None:
            continue
        ref = url_id(fill)
        if ref is not None:
            server = servers.get(ref, {"style": "pattern", "color": None})
            if server["style"].startswith("gradient") and server["color"]:
                return server["color"], server["style"]
            return fill, server["style"]
        return fill, "solid"
    return None, "solid"


def stroke_of(el) -> tuple[str | None, str | None, float | None]:
    """(stroke colour, dash array, stroke width): the element's, else the first
    descendant shape's."""
    candidates = [el] + [k for k in el.iter() if k is not el and isinstance(k.tag, str)
                         and local(k) in SHAPE_TAGS]
    for c in candidates:
        stroke = style_value(c, "stroke")
        if stroke is not None:
            sw = style_value(c, "stroke-width")
            return stroke, style_value(c, "stroke-dasharray"), \
                (number(sw) if sw is not None else None)
    return None, None, None
