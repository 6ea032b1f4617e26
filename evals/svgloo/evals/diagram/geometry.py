"""Reading a diagram SVG the way the rule-based evaluation does: numbers, ``translate()``
(the only transform it follows, and only where it follows it), path points and boxes.

References ``eval_shapes.py:N`` / ``eval_arrows.py:N`` / ``utils.py:N`` / ``main.py:N`` are to
RAIVNLab/VFig@4874af7 ``rule-based-eval/`` (``lib/`` for the first three): the behaviour
each function reproduces. Nothing of that code is copied here (it has no licence).

The original parses with ``xml.etree``, which drops comments and processing instructions;
svgloo parses with lxml, which keeps them, so every walk here goes through ``kids`` and
``walk``, which leave them out.
"""

from __future__ import annotations

import math
import re

SHAPE_TAGS = frozenset({"rect", "circle", "ellipse", "polygon", "polyline", "path"})
# subtrees a text or shape walk does not enter (main.py:410, eval_shapes.py:476)
NOT_DRAWN = frozenset({"defs", "style", "title", "desc", "marker", "filter",
                       "linearGradient", "radialGradient", "pattern", "symbol"})
NUMBER = re.compile(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?")                 # utils.py:25
PATH_TOKEN = re.compile(r"[MmLlHhVvQqCcSsTtAaZz]|[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?")
TRANSLATE = re.compile(r"translate\(\s*([-\d.]+)[,\s]+([-\d.]+)")       # utils.py:28


class OriginalFails(ValueError):
    """An input on which the original raises (so a run records the sample as errored)."""


def strict_float(text: str, what: str) -> float:
    """``float()`` where the original calls it unguarded: a malformed number is an error."""
    try:
        return float(text)
    except ValueError:
        raise OriginalFails(f"{what}: {text!r} is not a number") from None


def local(el) -> str:
    if not isinstance(el.tag, str):
        return ""
    return el.tag.rsplit("}", 1)[-1]


def kids(el) -> list:
    """Element children (comments and processing instructions left out)."""
    return [k for k in el if isinstance(k.tag, str)]


def walk(el) -> list:
    """``el`` and its element descendants in document order."""
    return [k for k in el.iter() if isinstance(k.tag, str)]


def ancestors(el):
    p = el.getparent()
    while p is not None:
        yield p
        p = p.getparent()


def number(text, default: float = 0.0) -> float:
    """A lenient number (utils.py:19): missing, empty, a percentage or unparsable → default."""
    if not text or "%" in text:
        return default
    try:
        return float(text)
    except (TypeError, ValueError):
        return default


def numbers(text) -> list[float]:
    return [float(n) for n in NUMBER.findall(text or "")]


def translate_of(transform) -> tuple[float, float]:
    """The first ``translate(x y)`` with both numbers, else (0, 0) (utils.py:27)."""
    m = TRANSLATE.search(transform or "")
    if not m:
        return 0.0, 0.0
    return strict_float(m.group(1), "translate"), strict_float(m.group(2), "translate")


def centre(b) -> tuple[float, float]:
    return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2


def union(a, b):
    if not a:
        return b
    if not b:
        return a
    return [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]


def area(b) -> float:
    return (b[2] - b[0]) * (b[3] - b[1])


def distance_to_box(x: float, y: float, b, margin: float) -> float:
    """0 inside the box grown by ``margin``, else the distance to it (main.py:491,
    eval_arrows.py:421)."""
    x0, y0, x1, y1 = b[0] - margin, b[1] - margin, b[2] + margin, b[3] + margin
    if x0 <= x <= x1 and y0 <= y <= y1:
        return 0.0
    return math.sqrt(max(x0 - x, 0, x - x1) ** 2 + max(y0 - y, 0, y - y1) ** 2)


# ---------------------------------------------------------------- paths

def _walk_path(d: str, z_returns: bool):
    """Yield (command, x, y) after each segment, the way both of the original's path walkers
    step (eval_shapes.py:210, eval_arrows.py:61): a letter sets the command (a lone Z
    moves nothing); each command takes its argument count and reads only its end point,
    so a letter in a control point's place is swallowed, and one in the end point's place,
    or too few tokens left, skips one token."""
    tokens = PATH_TOKEN.findall(d or "")
    x = y = sx = sy = 0.0
    cmd, i = "M", 0
    takes = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "Q": 4, "S": 4, "C": 6, "A": 7}
    while i < len(tokens):
        if tokens[i].isalpha():
            cmd, i = tokens[i], i + 1
            continue
        uc, rel = cmd.upper(), cmd.islower()
        if uc == "Z" and z_returns:     # a number after Z: back to the subpath start
            x, y, i = sx, sy, i + 1
            yield uc, x, y
            continue
        n = takes.get(uc)
        if n is None or i + n > len(tokens):
            i += 1
            continue
        try:
            if uc in "HV":
                v = float(tokens[i])
            else:
                nx, ny = float(tokens[i + n - 2]), float(tokens[i + n - 1])
        except ValueError:       # a letter where the end point belongs
            i += 1
            continue
        if uc == "H":
            x = x + v if rel else v
        elif uc == "V":
            y = y + v if rel else v
        else:
            x, y = (x + nx, y + ny) if rel else (nx, ny)
        if uc == "M":
            sx, sy = x, y
        i += n
        yield uc, x, y


def path_points(d: str) -> list[tuple[float, float]]:
    """Segment end points only (eval_shapes.py:210): a curve's box is its end points'."""
    return [(x, y) for cmd, x, y in _walk_path(d, z_returns=False) if cmd != "Z"]


def path_end(d: str) -> tuple[float, float]:
    """Where the pen stops (eval_arrows.py:61); Z returns to the subpath start."""
    end = (0.0, 0.0)
    for _, x, y in _walk_path(d, z_returns=True):
        end = (x, y)
    return end


def path_length(d: str) -> float:
    """Sum of straight segment lengths, movetos left out (eval_arrows.py:98)."""
    total, px, py = 0.0, 0.0, 0.0
    for cmd, x, y in _walk_path(d, z_returns=True):
        if cmd != "M":
            total += math.sqrt((x - px) ** 2 + (y - py) ** 2)
        px, py = x, y
    return total


def path_start(d: str) -> tuple[float, float] | None:
    """The leading moveto's point, or None when ``d`` does not open with one
    (eval_arrows.py:57)."""
    m = re.match(r"[Mm]\s*([-\d.]+)[,\s]+([-\d.]+)", (d or "").strip())
    if not m:
        return None
    return strict_float(m.group(1), "path start"), strict_float(m.group(2), "path start")


def is_curved(d: str) -> bool:
    """Any Q/T/S/C/A command (eval_arrows.py:139)."""
    return any(t in "QqTtSsCcAa" for t in PATH_TOKEN.findall(d or "") if t.isalpha())


# ---------------------------------------------------------------- boxes

def box(el, tag: str | None = None, ox: float = 0.0, oy: float = 0.0):
    """[x0, y0, x1, y1] from the geometry attributes, shifted by (ox, oy); the element's own
    transform is never applied (eval_shapes.py:186). None for other tags and for polygons
    with fewer than two points."""
    tag = tag or local(el)
    n = lambda a: number(el.get(a))  # noqa: E731
    if tag == "rect":
        x, y = n("x"), n("y")
        return [x + ox, y + oy, x + n("width") + ox, y + n("height") + oy]
    if tag == "circle":
        cx, cy, r = n("cx"), n("cy"), n("r")
        return [cx - r + ox, cy - r + oy, cx + r + ox, cy + r + oy]
    if tag == "ellipse":
        cx, cy, rx, ry = n("cx"), n("cy"), n("rx"), n("ry")
        return [cx - rx + ox, cy - ry + oy, cx + rx + ox, cy + ry + oy]
    if tag in ("polygon", "polyline"):
        v = numbers(el.get("points", ""))
        if len(v) < 4:
            return None
        xs, ys = [p + ox for p in v[0::2]], [p + oy for p in v[1::2]]
        return [min(xs), min(ys), max(xs), max(ys)]
    if tag == "path":
        pts = path_points(el.get("d", ""))
        if len(pts) < 2:
            return None
        xs, ys = [p[0] + ox for p in pts], [p[1] + oy for p in pts]
        return [min(xs), min(ys), max(xs), max(ys)]
    return None


def defs_by_id(root) -> dict:
    """id → element for everything inside the root's own <defs> children
    (eval_shapes.py:106)."""
    out = {}
    for d in kids(root):
        if local(d) == "defs":
            for el in walk(d):
                if el.get("id"):
                    out[el.get("id")] = el
    return out


def href(el) -> str:
    return el.get("href") or el.get("{http://www.w3.org/1999/xlink}href", "")


def _def_box(ref, defs: dict, ox: float, oy: float, depth: int = 0):
    if depth > 50:       # a <use> cycle: the original recurses until Python stops it
        raise OriginalFails("<use> references form a cycle")
    tag = local(ref)
    if tag in SHAPE_TAGS:
        return box(ref, tag, ox, oy)
    if tag == "use":
        nested = defs.get(href(ref).lstrip("#"))
        if nested is None:
            return None
        return _def_box(nested, defs, ox + number(ref.get("x", 0)),
                        oy + number(ref.get("y", 0)), depth + 1)
    if tag == "g":
        tx, ty = translate_of(ref.get("transform", ""))
        merged = None
        for k in kids(ref):
            merged = union(merged, _def_box(k, defs, ox + tx, oy + ty, depth + 1))
        return merged
    return None


def use_box(use, defs: dict, ox: float = 0.0, oy: float = 0.0):
    """The box of what a <use> points at, moved by its x/y (eval_shapes.py:143)."""
    ref = defs.get(href(use).lstrip("#"))
    if ref is None:
        return None
    return _def_box(ref, defs, ox + number(use.get("x", 0)), oy + number(use.get("y", 0)))


def group_box_with_uses(g, defs: dict, ox: float = 0.0, oy: float = 0.0):
    """Union of a group's shapes, <use>s and subgroups, each group's own translate()
    followed (eval_shapes.py:164)."""
    tx, ty = translate_of(g.get("transform", ""))
    gx, gy = ox + tx, oy + ty
    merged = None
    for k in kids(g):
        tag = local(k)
        if tag in SHAPE_TAGS:
            b = box(k, tag, gx, gy)
        elif tag == "use":
            b = use_box(k, defs, gx, gy)
        elif tag == "g":
            b = group_box_with_uses(k, defs, gx, gy)
        else:
            continue
        merged = union(merged, b) if b else merged
    return merged


def has_shape_or_use_below(g) -> bool:
    for k in kids(g):
        tag = local(k)
        if tag in SHAPE_TAGS or tag == "use" or (tag == "g" and has_shape_or_use_below(k)):
            return True
    return False


def canvas_size(root) -> tuple[float, float]:
    """viewBox's width and height (split on whitespace only), else width/height, else
    800×600 (utils.py:131)."""
    vb = root.get("viewBox")
    if vb:
        parts = vb.split()
        if len(parts) < 4:
            raise OriginalFails(f"viewBox {vb!r} does not split into four numbers on spaces")
        return strict_float(parts[2], "viewBox"), strict_float(parts[3], "viewBox")
    return number(root.get("width"), 800), number(root.get("height"), 600)
