"""Model outputs made from ground-truth diagrams by the rewrites a generator makes.

Each ground truth in ``fixtures/`` is rewritten once by every rewrite in ``REWRITES`` (those
that change nothing are left out) and ``COMBINATIONS`` times by two to four of them chosen at
random. Each output is also scored the other way round (``NAME~swapped``: the output as the ground
truth, the fixture as the model's SVG), which puts the ground-truth reader on unseen input:
ids removed (its own shape scan), arrows without the comments, marker arrows.
Everything is seeded (``SEED``, the ground truth's name and the rewrite's), so the same
outputs come back byte for byte: the test regenerates them, checks each one's sha256 against
``fixtures/golden_rewrites.json`` and compares svgloo's numbers with the ones stored there,
which the ORIGINAL code (RAIVNLab/VFig ``rule-based-eval/``, run as a black box) gave.

    python make_rewrites.py OUT_DIR          # writes OUT_DIR/*.svg and OUT_DIR/pairs.json
    python make_rewrites.py --golden RESULTS.json   # -> fixtures/golden_rewrites.json

RESULTS.json is ``{name: {overall, shapes, arrows} | {error}}``: the original's
``main.evaluate_standalone(gen, gt)`` on every row ``[name, gen, gt]`` of pairs.json, with
``overall = 0.5·shapes.composite + 0.5·arrows.composite`` and an exception's
``"TypeName: message"`` as ``error`` (a few lines of Python around your own checkout).

Only this generator and the numbers are in the repository; the original's code is not.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = FIXTURES / "golden_rewrites.json"
GROUND_TRUTHS = ("gt1", "gt2", "arrows_gt", "markers_gt", "noarrows_gt", "rounded_gt",
                 "pipeline_gt", "network_gt", "layers_gt")
SEED = 27
COMBINATIONS = 18
SWAPPED = "~swapped"     # the output as the ground truth, the fixture as the model's SVG
SVG = "http://www.w3.org/2000/svg"
_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
NAMED = {"#000000": "black", "#ffffff": "white", "#ff0000": "red", "#0000ff": "blue",
         "#008000": "green", "#808080": "gray", "#ffa500": "orange"}
FONTS = ("Arial", "Helvetica", "Times New Roman", "Georgia", "Courier New", "Verdana",
         "sans-serif", "'Segoe UI', Tahoma, sans-serif")


@dataclass
class Output:
    name: str      # "<ground truth>.<rewrites joined by +>"
    gt: str        # the ground truth's file stem in fixtures/
    svg: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.svg.encode()).hexdigest()


# ---------------------------------------------------------------- reading the tree

def local(el) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def make(tag: str, **attrs) -> etree._Element:
    el = etree.Element(f"{{{SVG}}}{tag}")
    for k, v in attrs.items():
        el.set(k.replace("_", "-"), str(v))
    return el


def in_defs(el) -> bool:
    return any(local(a) in ("defs", "marker", "pattern") for a in el.iterancestors())


def drawn(root, *tags):
    return [el for el in root.iter() if local(el) in tags and not in_defs(el)]


def nums(text) -> list[float]:
    return [float(n) for n in _NUM.findall(text or "")]


def fmt(v: float) -> str:
    return f"{v:.6g}"


def rough_box(el):
    """A box good enough to pick a shape's label and move things (not the evaluator's)."""
    tag, f = local(el), lambda a: float(el.get(a, 0) or 0)
    if tag == "rect":
        return f("x"), f("y"), f("x") + f("width"), f("y") + f("height")
    if tag == "circle":
        return f("cx") - f("r"), f("cy") - f("r"), f("cx") + f("r"), f("cy") + f("r")
    if tag == "ellipse":
        return f("cx") - f("rx"), f("cy") - f("ry"), f("cx") + f("rx"), f("cy") + f("ry")
    if tag in ("polygon", "polyline", "path"):
        v = nums(el.get("points") or el.get("d"))
        if tag == "path" and re.search(r"[a-z]", el.get("d", "").replace("e", "")):
            v = v[:2] + v[:2]           # relative path: its start stands for it
        xs, ys = v[0::2], v[1::2]
        return (min(xs), min(ys), max(xs), max(ys)) if xs and ys else None
    if tag == "g":
        boxes = [b for b in (rough_box(k) for k in el if isinstance(k.tag, str)) if b]
        if boxes:
            return (min(b[0] for b in boxes), min(b[1] for b in boxes),
                    max(b[2] for b in boxes), max(b[3] for b in boxes))
    return None


def shape_elements(root) -> list:
    seen, out = set(), []
    for el in root.iter():
        key = el.get("id") if isinstance(el.tag, str) else None
        if key and re.fullmatch(r"shape_\d+", key) and key not in seen:
            seen.add(key)
            out.append(el)
    if not out:   # a ground truth without ids (or ids already removed): filled shapes
        out = [el for el in drawn(root, "rect", "circle", "ellipse", "polygon")
               if local(el.getparent()) == "svg" and el.get("fill") not in (None, "none")]
    return out


def label_texts(root) -> list:
    return [t for t in drawn(root, "text") if "".join(t.itertext()).strip()]


def text_point(t):
    return float(t.get("x", 0) or 0), float(t.get("y", 0) or 0)


def label_of(shape, texts):
    """The text nearest the shape's centre (within 120 px), or None."""
    b = rough_box(shape)
    if b is None:
        return None
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    best = min(texts, key=lambda t: (text_point(t)[0] - cx) ** 2 + (text_point(t)[1] - cy) ** 2,
               default=None)
    if best is None:
        return None
    x, y = text_point(best)
    return best if (x - cx) ** 2 + (y - cy) ** 2 < 120 ** 2 else None


def arrow_items(root) -> list:
    """Ground-truth-style arrows: <g> with a shaft and a polygon head, and marker lines."""
    out = []
    for el in root.iter():
        if in_defs(el) or not isinstance(el.tag, str):
            continue
        kids = {local(k) for k in el}
        if local(el) == "g" and kids & {"line", "path"} and "polygon" in kids and \
                not (el.get("id") or "").startswith("shape_"):
            out.append(el)
        elif local(el) in ("line", "path") and el.get("marker-end") and \
                local(el.getparent()) != "g":
            out.append(el)
    return out


def shaft(arrow):
    return arrow if local(arrow) in ("line", "path") else \
        next(k for k in arrow if local(k) in ("line", "path"))


def shaft_ends(s):
    if local(s) == "line":
        return tuple(float(s.get(a, 0)) for a in ("x1", "y1", "x2", "y2"))
    v = nums(s.get("d"))
    return v[0], v[1], v[-2], v[-1]


def move(el, dx: float, dy: float) -> None:
    """Shift an element's own coordinates (not through a transform)."""
    tag = local(el)
    for a, d in (("x", dx), ("cx", dx), ("x1", dx), ("x2", dx), ("y", dy), ("cy", dy),
                 ("y1", dy), ("y2", dy)):
        if el.get(a) is not None and tag != "svg":
            el.set(a, fmt(float(el.get(a)) + d))
    if tag in ("polygon", "polyline"):
        v = nums(el.get("points"))
        el.set("points", " ".join(f"{fmt(v[i] + dx)},{fmt(v[i + 1] + dy)}"
                                  for i in range(0, len(v) - 1, 2)))
    if tag == "path" and not re.search(r"[a-df-z]", el.get("d", "")):   # absolute only
        out, i = [], 0
        for tok in re.findall(r"[A-Za-z]|" + _NUM.pattern, el.get("d")):
            if tok.isalpha():
                out.append(tok)
                if tok in "HV":
                    i = 0 if tok == "H" else 1
                else:
                    i = 0
                continue
            d = dx if i % 2 == 0 else dy
            out.append(fmt(float(tok) + d))
            i += 1
        el.set("d", " ".join(out))
    if tag in ("g", "text", "tspan"):
        for k in el:
            if isinstance(k.tag, str):
                move(k, dx, dy)


# ---------------------------------------------------------------- the rewrites

def ids_removed(root, rng):
    for el in root.iter():
        if isinstance(el.tag, str) and (el.get("id") or "").startswith("shape_"):
            del el.attrib["id"]


def comments_removed(root, rng):
    for c in list(root.iter(etree.Comment)):
        c.getparent().remove(c)


def circles_for_ellipses(root, rng):
    for e in drawn(root, "ellipse"):
        c = make("circle", cx=e.get("cx"), cy=e.get("cy"),
                 r=fmt((float(e.get("rx")) + float(e.get("ry"))) / 2))
        for k, v in e.attrib.items():
            if k not in ("cx", "cy", "rx", "ry"):
                c.set(k, v)
        c.tail = e.tail
        e.getparent().replace(e, c)


def ellipses_for_circles(root, rng):
    for c in drawn(root, "circle"):
        if float(c.get("r", 0)) < 10:
            continue
        r = float(c.get("r"))
        e = make("ellipse", cx=c.get("cx"), cy=c.get("cy"), rx=fmt(r * 1.3), ry=fmt(r))
        for k, v in c.attrib.items():
            if k not in ("cx", "cy", "r"):
                e.set(k, v)
        e.tail = c.tail
        c.getparent().replace(c, e)


def css_classes(root, rng):
    """fill/stroke/dash attributes moved into <style> class rules (several spellings)."""
    rules, n = [], 0
    for el in drawn(root, "rect", "circle", "ellipse", "polygon", "path", "line"):
        props = {k: el.attrib.pop(k) for k in ("fill", "stroke", "stroke-dasharray")
                 if el.get(k) is not None}
        if not props:
            continue
        name = f"c{n}"
        n += 1
        body = "; ".join(f"{k}: {v}" for k, v in props.items())
        form = rng.randrange(4)
        if form == 0:
            rules.append(f".{name} {{ {body} }}")
        elif form == 1:
            rules.append(f"{local(el)}.{name}{{{body};}}")
        elif form == 2:   # a selector list: only the last selector names the rule
            rules.append(f".x{name}, .{name} {{ {body} }}")
        else:             # the fill in its own rule, a second class on the element
            fill = props.pop("fill", None)
            if fill is not None:
                rules.append(f".f{name} {{ fill: {fill} }}")
                el.set("class", f"f{name} ")
            rules.append(f".{name} {{ {'; '.join(f'{k}: {v}' for k, v in props.items())} }}")
        el.set("class", (el.get("class", "") + " " + name).strip())
    if rules:
        style = make("style")
        text = "\n" + "\n".join(rules) + "\n"
        style.text = etree.CDATA(text) if rng.random() < 0.3 else text
        root.insert(0, style)


def style_attributes(root, rng):
    for el in drawn(root, "rect", "circle", "ellipse", "polygon", "path", "line", "text"):
        props = [(k, el.attrib.pop(k)) for k in ("fill", "stroke", "stroke-width",
                                                 "stroke-dasharray", "font-family")
                 if el.get(k) is not None and rng.random() < 0.8]
        if props:
            el.set("style", ";".join(f"{k}:{v}" for k, v in props))


def groups_around_shapes(root, rng):
    """Each shape and its label in a <g>, half of them translated."""
    texts = label_texts(root)
    for s in shape_elements(root):
        if local(s.getparent()) not in ("svg", "g") or s.getparent() is None:
            continue
        t = label_of(s, texts)
        g = make("g")
        s.addprevious(g)
        g.append(s)
        if t is not None and t.getparent() is not None:
            texts.remove(t)
            g.append(t)
        if rng.random() < 0.5:
            dx, dy = rng.choice((10, 25, 40)), rng.choice((5, 20))
            for k in g:
                move(k, -dx, -dy)
            g.set("transform", f"translate({dx},{dy})")


def groups_flattened(root, rng):
    for g in drawn(root, "g"):
        if (g.get("id") or "").startswith("shape_"):
            parent, i = g.getparent(), g.getparent().index(g)
            for k in reversed(list(g)):
                parent.insert(i, k)
            parent.remove(g)


def _relabel(root, fn):
    for t in label_texts(root):
        parts = [t] + [k for k in t.iter() if k is not t]
        for p in parts:
            if p.text and p.text.strip():
                p.text = fn(p.text.strip())


def labels_lowercased_with_period(root, rng):
    _relabel(root, lambda s: s.lower() + ".")


def labels_shortened(root, rng):
    _relabel(root, lambda s: " ".join(s.split()[:-1]) if len(s.split()) > 1 else s[:4])


def labels_recased(root, rng):
    _relabel(root, rng.choice((str.upper, str.title, str.swapcase)))


def labels_repunctuated(root, rng):
    how = rng.randrange(3)
    _relabel(root, lambda s: (s.replace(" ", "-") if how == 0 else
                              s + ":" if how == 1 else re.sub(r"[^\w ]", "", s)))


def labels_split_in_two_lines(root, rng):
    for t in label_texts(root):
        words = "".join(t.itertext()).split()
        if len(words) < 2 or len(t):
            continue
        t.text = words[0]
        second = copy.deepcopy(t)
        second.text = " ".join(words[1:])
        second.set("y", fmt(float(t.get("y", 0)) + 16))
        t.set("y", fmt(float(t.get("y", 0)) - 4))
        t.addnext(second)


def texts_in_tspans(root, rng):
    for t in label_texts(root):
        if len(t) or not t.text:
            continue
        span = make("tspan", x=t.get("x", "0"), dy="0")
        span.text, t.text = t.text, None
        t.append(span)
        if rng.random() < 0.5:
            for a in ("x", "y"):
                t.attrib.pop(a, None)
            span.set("y", "0")


def texts_as_paths(root, rng):
    """Some labels converted to outlines: the text is gone, a filled path stands there."""
    for t in label_texts(root):
        if rng.random() < 0.5:
            x, y = text_point(t)
            p = make("path", d=f"M {fmt(x - 15)} {fmt(y)} h 30 v -10 h -30 Z", fill="#000000")
            p.tail = t.tail
            t.getparent().replace(t, p)


def one_shape_moved(root, rng):
    shapes = shape_elements(root)
    if not shapes:
        return
    s = rng.choice(shapes)
    t = label_of(s, label_texts(root))
    dx, dy = rng.choice((-90, -40, 35, 80)), rng.choice((-60, 0, 45))
    for el in (s, t):
        if el is not None:
            move(el, dx, dy)


def everything_translated(root, rng):
    g = make("g", transform=f"translate({rng.choice((15, 30))}, {rng.choice((10, 25))})")
    for k in list(root):
        if local(k) not in ("defs", "style"):
            g.append(k)
    root.append(g)


def background_added(root, rng):
    vb = nums(root.get("viewBox"))
    root.insert(0, make("rect", x=0, y=0, width=fmt(vb[2]), height=fmt(vb[3]), fill="#fafafa"))


def extras_added(root, rng):
    vb = nums(root.get("viewBox"))
    x, y = vb[2] - 90, vb[3] - 50
    root.append(make("rect", x=fmt(x), y=fmt(y), width=70, height=40, fill="#ffffcc",
                     stroke="#999999"))
    t = make("text", x=fmt(x + 35), y=fmt(y + 25), font_family="Arial")
    t.text = rng.choice(("Legend", "Note", "Extra Step"))
    root.append(t)
    root.append(make("line", x1=fmt(x - 60), y1=fmt(y + 20), x2=fmt(x), y2=fmt(y + 20),
                     stroke="#999999", stroke_width=1))


def one_arrow_dropped(root, rng):
    arrows = arrow_items(root)
    if arrows:
        a = rng.choice(arrows)
        a.getparent().remove(a)


def one_arrow_reversed(root, rng):
    arrows = arrow_items(root)
    if not arrows:
        return
    a = rng.choice(arrows)
    s = shaft(a)
    x1, y1, x2, y2 = shaft_ends(s)
    if local(s) == "line":
        s.set("x1", fmt(x2)), s.set("y1", fmt(y2)), s.set("x2", fmt(x1)), s.set("y2", fmt(y1))
    else:
        v = nums(s.get("d"))
        cmd = re.findall(r"[A-Za-z]", s.get("d"))
        if len(cmd) != 2 or cmd[0] != "M":
            return
        pts = [(v[i], v[i + 1]) for i in range(0, len(v), 2)]
        pts.reverse()
        s.set("d", f"M {fmt(pts[0][0])} {fmt(pts[0][1])} {cmd[1]} " +
              " ".join(f"{fmt(p[0])} {fmt(p[1])}" for p in pts[1:]))
    for head in (k for k in a if local(k) == "polygon"):   # point reflection: tip to start
        v = nums(head.get("points"))
        head.set("points", " ".join(f"{fmt(x1 + x2 - v[i])},{fmt(y1 + y2 - v[i + 1])}"
                                    for i in range(0, len(v) - 1, 2)))


def heads_as_markers(root, rng):
    """Polygon heads replaced by a marker (sizes and units vary)."""
    defs = root.find(f"{{{SVG}}}defs")
    if defs is None:
        defs = make("defs")
        root.insert(0, defs)
    mw, mh = rng.choice((6, 8, 10, 12)), rng.choice((5, 7, 10))
    m = make("marker", id="gen_head", markerWidth=mw, markerHeight=mh, refX=mw, refY=mh / 2,
             orient="auto")
    units = rng.choice((None, "userSpaceOnUse", "strokeWidth"))
    if units:
        m.set("markerUnits", units)
    body = rng.randrange(3)
    if body == 0:
        m.append(make("polygon", points=f"0 0, {mw} {mh / 2}, 0 {mh}", fill="#000000"))
    elif body == 1:
        m.append(make("path", d=f"M0,0 L{mw},{mh / 2} L0,{mh} z", fill="#000000"))
    defs.append(m)
    for a in arrow_items(root):
        if local(a) == "g":
            for head in [k for k in a if local(k) == "polygon"]:
                a.remove(head)
            shaft(a).set("marker-end", "url(#gen_head)")


def markers_resized(root, rng):
    for m in drawn(root, "marker") + [m for m in root.iter() if local(m) == "marker"]:
        f = rng.choice((0.5, 1.5, 2.5))
        for a in ("markerWidth", "markerHeight"):
            if m.get(a):
                m.set(a, fmt(float(m.get(a)) * f))
        for p in (k for k in m if local(k) == "polygon"):
            v = nums(p.get("points"))
            p.set("points", " ".join(fmt(n * f) for n in v))
        if rng.random() < 0.5:
            m.set("markerUnits", "userSpaceOnUse")


def heads_dropped(root, rng):
    for a in arrow_items(root):
        if rng.random() < 0.6:
            if local(a) == "g":
                for head in [k for k in a if local(k) == "polygon"]:
                    a.remove(head)
            else:
                a.attrib.pop("marker-end", None)


def curves_straightened(root, rng):
    for a in arrow_items(root):
        s = shaft(a)
        if local(s) == "path":
            x1, y1, x2, y2 = shaft_ends(s)
            s.set("d", f"M {fmt(x1)} {fmt(y1)} L {fmt(x2)} {fmt(y2)}")


def lines_as_paths(root, rng):
    for a in arrow_items(root):
        s = shaft(a)
        if local(s) == "line":
            x1, y1, x2, y2 = shaft_ends(s)
            p = make("path", d=f"M{fmt(x1)},{fmt(y1)} L{fmt(x2)},{fmt(y2)}", fill="none")
            for k, v in s.attrib.items():
                if k not in ("x1", "y1", "x2", "y2"):
                    p.set(k, v)
            p.tail = s.tail
            s.getparent().replace(s, p)


def colours_respelled(root, rng):
    for el in drawn(root, "rect", "circle", "ellipse", "polygon", "path", "line"):
        for a in ("fill", "stroke"):
            c = (el.get(a) or "").lower()
            if not re.fullmatch(r"#[0-9a-f]{6}", c):
                continue
            how = rng.randrange(4)
            if how == 0 and c in NAMED:
                el.set(a, NAMED[c])
            elif how == 1:
                el.set(a, "rgb({}, {}, {})".format(*(int(c[i:i + 2], 16) for i in (1, 3, 5))))
            elif how == 2:
                el.set(a, "#" + "".join(c[i] for i in (1, 3, 5)))
            else:
                el.set(a, "#{:02x}{:02x}{:02x}".format(
                    *(max(0, min(255, int(c[i:i + 2], 16) + rng.randint(-40, 40)))
                      for i in (1, 3, 5))))


def fills_flattened(root, rng):
    for el in drawn(root, "rect", "circle", "ellipse", "polygon", "path"):
        if (el.get("fill") or "").startswith("url("):
            el.set("fill", rng.choice(("#cccccc", "#dae8fc", "none")))


def dashes_toggled(root, rng):
    for el in drawn(root, "rect", "circle", "ellipse", "polygon", "line", "path"):
        if rng.random() < 0.4:
            if el.get("stroke-dasharray"):
                del el.attrib["stroke-dasharray"]
            else:
                el.set("stroke-dasharray", rng.choice(("4,4", "2 2", "8,3,2,3", "6")))


def rects_as_paths(root, rng):
    for r in drawn(root, "rect"):
        x, y, w, h = (float(r.get(a, 0)) for a in ("x", "y", "width", "height"))
        p = make("path", d=f"M {fmt(x)} {fmt(y)} H {fmt(x + w)} V {fmt(y + h)} H {fmt(x)} Z")
        for k, v in r.attrib.items():
            if k not in ("x", "y", "width", "height", "rx", "ry"):
                p.set(k, v)
        p.tail = r.tail
        r.getparent().replace(r, p)


def polygons_as_rects(root, rng):
    for p in drawn(root, "polygon"):
        if local(p.getparent()) == "g" and not (p.getparent().get("id") or "").startswith("shape_"):
            continue   # an arrow head
        b = rough_box(p)
        r = make("rect", x=fmt(b[0]), y=fmt(b[1]), width=fmt(b[2] - b[0]),
                 height=fmt(b[3] - b[1]))
        for k, v in p.attrib.items():
            if k != "points":
                r.set(k, v)
        r.tail = p.tail
        p.getparent().replace(p, r)


def fonts_changed(root, rng):
    for t in drawn(root, "text"):
        if rng.random() < 0.3:
            t.attrib.pop("font-family", None)
        else:
            t.set("font-family", rng.choice(FONTS))


def squares_and_roundings(root, rng):
    for r in drawn(root, "rect"):
        if rng.random() < 0.5:
            r.set("rx", "12")
        else:
            r.set("height", r.get("width"))


REWRITES = {f.__name__: f for f in (
    ids_removed, comments_removed, circles_for_ellipses, ellipses_for_circles, css_classes,
    style_attributes, groups_around_shapes, groups_flattened, labels_lowercased_with_period,
    labels_shortened, labels_recased, labels_repunctuated, labels_split_in_two_lines,
    texts_in_tspans, texts_as_paths, one_shape_moved, everything_translated,
    background_added, extras_added, one_arrow_dropped, one_arrow_reversed, heads_as_markers,
    markers_resized, heads_dropped, curves_straightened, lines_as_paths, colours_respelled,
    fills_flattened, dashes_toggled, rects_as_paths, polygons_as_rects, fonts_changed,
    squares_and_roundings)}


# ---------------------------------------------------------------- outputs

def rewrite(gt_text: str, names: list[str], seed: str) -> str:
    root = etree.fromstring(gt_text.encode())
    rng = random.Random(seed)
    for name in names:
        REWRITES[name](root, rng)
    return etree.tostring(root, encoding="unicode")


def outputs(fixtures: Path = FIXTURES) -> list[Output]:
    out = []
    for gt in GROUND_TRUTHS:
        text = (fixtures / f"{gt}.svg").read_text(encoding="utf-8")
        plain = rewrite(text, [], "")
        out.append(Output(f"{gt}.identity", gt, plain))
        seen = {plain}
        for name in REWRITES:
            svg = rewrite(text, [name], f"{SEED}:{gt}:{name}")
            if svg not in seen:
                seen.add(svg)
                out.append(Output(f"{gt}.{name}", gt, svg))
        for k in range(COMBINATIONS):
            rng = random.Random(f"{SEED}:{gt}:combination:{k}")
            names = rng.sample(sorted(REWRITES), rng.randint(2, 4))
            svg = rewrite(text, names, f"{SEED}:{gt}:combination:{k}:run")
            if svg not in seen:
                seen.add(svg)
                out.append(Output(f"{gt}.{k:02d}:{'+'.join(names)}", gt, svg))
    return out


def _write_inputs(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, o in enumerate(outputs()):
        path = folder / f"{i:04d}.svg"
        path.write_text(o.svg, encoding="utf-8")
        fixture = str((FIXTURES / f"{o.gt}.svg").resolve())
        rows.append([o.name, str(path), fixture])
        rows.append([o.name + SWAPPED, fixture, str(path)])
    (folder / "pairs.json").write_text(json.dumps(rows, indent=0))
    print(f"{len(rows)} pairs in {folder}")


def _write_golden(results_path: Path) -> None:
    results = json.loads(results_path.read_text())
    lines = []
    for o in outputs():
        for name in (o.name, o.name + SWAPPED):
            entry = {"gt": o.gt, "sha256": o.sha256, **results[name]}
            lines.append(f"  {json.dumps(name)}: {json.dumps(entry, sort_keys=True)}")
    head = ('{\n "_source": "RAIVNLab/VFig@4874af7 rule-based-eval/main.py evaluate_standalone'
            '(gen, gt) run as a black box on the outputs of make_rewrites.py, both ways '
            'round (the code itself is not in this repository); overall = 0.5 shapes.composite + 0.5 '
            'arrows.composite",\n "pairs": {\n')
    GOLDEN.write_text(head + ",\n".join(lines) + "\n }\n}\n", encoding="utf-8")
    print(f"{len(lines)} pairs -> {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1] == "--golden":
        _write_golden(Path(sys.argv[2]))
    else:
        _write_inputs(Path(sys.argv[1]))
