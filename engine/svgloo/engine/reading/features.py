"""Features CairoSVG does not draw as browsers do: where svgloo cannot vouch for a render.

A unit that uses one of these (itself, through an ancestor, or through what its ``<use>``
draws) is never called removable: its removal is "unverified", with the reason read here.
The properties are read as a browser would see them: presentation attributes, ``style``
attributes and ``<style>`` sheets (matched with cssselect2, CairoSVG's own matcher).
"""

from __future__ import annotations

import functools
import re

from svgloo.engine.reading.document import XLINK_NS, Document
from svgloo.engine.reading.pathdata import PathSyntaxError, _commands, subpath_edges
from svgloo.engine.reading.units import UnitSet

_ALLOWED_DATA = ("data:image/png", "data:image/jpeg", "data:image/jpg")
# CSS properties browsers apply that CairoSVG ignores (``d`` as a property: SVG 2).
CSS_ONLY = ("d", "mix-blend-mode", "isolation", "paint-order", "transform-box")
_ROUND_CAPS = ("round", "square")


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _style_declarations(value: str) -> dict[str, str]:
    props = {}
    for decl in value.split(";"):
        key, sep, val = decl.partition(":")
        if sep:
            props[key.strip().lower()] = val.strip()
    return props


def _sheet_declarations(doc: Document) -> dict[int, dict[str, str]]:
    """Element index -> the declarations ``<style>`` sheets give it (later rules win)."""
    sheets = [n.text for n, e in zip(doc.nodes, doc.elements) if e.tag == "style" and n.text]
    if not sheets:
        return {}
    import cssselect2
    import tinycss2

    matcher = cssselect2.Matcher()
    for sheet in sheets:
        for rule in tinycss2.parse_stylesheet(sheet, skip_comments=True, skip_whitespace=True):
            if rule.type != "qualified-rule":
                continue
            decls = _style_declarations(tinycss2.serialize(rule.content))
            try:
                selectors = cssselect2.compile_selector_list(rule.prelude)
            except cssselect2.SelectorError:
                continue
            for selector in selectors:
                if selector.pseudo_element is None and not selector.never_matches:
                    matcher.add_selector(selector, decls)
    out: dict[int, dict[str, str]] = {}
    for wrapper in cssselect2.ElementWrapper.from_xml_root(doc.root).iter_subtree():
        matches = matcher.match(wrapper)
        if not matches:
            continue
        merged: dict[str, str] = {}
        for _specificity, _order, _pseudo, decls in sorted(matches):
            merged.update(decls)
        index = doc._index_of.get(wrapper.etree_element)
        if index is not None:
            out[index] = merged
    return out


def _css_filter_reason(value: str) -> str:
    v = value.strip().lower()
    if v.startswith("url("):
        return f"an SVG filter (filter: {value.strip()[:40]}), which CairoSVG draws " \
               "differently from browsers (blurs and shadows are skipped)"
    return f"CSS filter: {value.strip()[:40]}, which CairoSVG ignores"


_PARAMS = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "A": 7, "Z": 0}
_TOKEN = re.compile(r"([MLTHVCSQAZmlthvcsqaz])|([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def _zero_length_subpath(d: str) -> bool:
    """Whether path data has a subpath that draws no length (``M5 5 Z``, ``M5 5 L5 5``,
    ``M5 5 h0``): browsers draw a dot there with round or square caps. Arc flags written
    without separators make the path unreadable here: then False."""
    tokens = _TOKEN.findall(d)
    x = y = 0.0
    start = (0.0, 0.0)
    # None: no subpath; "open": a moveto only (not stroked at all); False: zero-length
    # segments only; True: something with length was drawn
    moved: bool | str | None = None  # None, "open" or whether the subpath moved
    i, command = 0, None
    while i < len(tokens):
        letter, number = tokens[i]
        if letter:
            command = letter
            i += 1
            if command in "Zz":
                if moved in (False, "open"):
                    return True
                x, y = start
                moved = None
                continue
        elif command is None or command in "Zz":
            return False
        n = _PARAMS[command.upper()]
        args = [t[1] for t in tokens[i:i + n]]
        if len(args) < n or any(not a for a in args):
            return False
        values = [float(a) for a in args]
        i += n
        rel = command.islower()
        upper = command.upper()
        if upper == "M":
            if moved is False:
                return True
            x, y = (x + values[0], y + values[1]) if rel else (values[0], values[1])
            start, moved = (x, y), "open"
            command = "l" if rel else "L"  # further pairs are linetos
            continue
        if upper == "H":
            points = [(x + values[0] if rel else values[0], y)]
        elif upper == "V":
            points = [(x, y + values[0] if rel else values[0])]
        elif upper == "A":
            points = [(x + values[5], y + values[6]) if rel else (values[5], values[6])]
        else:
            points = [((x + values[k], y + values[k + 1]) if rel else (values[k], values[k + 1]))
                      for k in range(0, n, 2)]
        if any(p != (x, y) for p in points):
            moved = True
        elif moved in (None, "open"):
            moved = False
        x, y = points[-1]
    return moved is False


def element_reasons(doc: Document) -> dict[int, str]:
    """Element index -> why svgloo cannot vouch for how it (and what it contains) draws."""
    found = doc.memo.get("element_reasons")
    if found is None:
        found = doc.memo["element_reasons"] = _element_reasons(doc)
    return dict(found)


def _element_reasons(doc: Document) -> dict[int, str]:
    sheet = _sheet_declarations(doc)
    reasons: dict[int, str] = {}
    for i, (node, el) in enumerate(zip(doc.nodes, doc.elements)):
        props = {k.rsplit("}", 1)[-1]: v for k, v in node.attrib.items()}
        props.update(sheet.get(i, {}))
        props.update(_style_declarations(node.get("style") or ""))
        reason = _reason(el.tag, node, props)
        if reason:
            reasons[i] = reason
    return reasons


# Lengths in these units: CairoSVG and resvg read no number (and draw nothing, or a
# default), Chromium resolves them (Q: quarter-millimetres; viewport, line-height and
# container units). CSS units are case-insensitive.
_UNREAD_UNITS = re.compile(
    r"(?<![\w.])[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?"
    r"(q|[sld]?v(?:w|h|i|b|min|max)|ic|r?lh|r?cap|rex|rch|ric|cq(?:w|h|i|b|min|max))"
    r"(?![\w%])", re.I)
# Attributes and properties that hold lengths (not d, points, viewBox or transform,
# where a letter after a number is a command or nothing).
LENGTH_PROPERTIES = frozenset({
    "x", "y", "width", "height", "r", "rx", "ry", "cx", "cy", "x1", "y1", "x2", "y2", "fx",
    "fy", "fr", "dx", "dy", "stroke-width", "stroke-dasharray", "stroke-dashoffset",
    "font-size", "letter-spacing", "word-spacing", "baseline-shift", "refX", "refY",
    "markerWidth", "markerHeight", "textLength", "font"})
_NUMBER_START = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def _browser_only_reason(tag: str, node, props: dict[str, str]) -> str | None:
    """Values both proof renderers ignore or draw as nothing while Chromium draws them
    (docs/renderers.md): then neither proof renderer can see a removal's effect."""
    if tag == "svg" and node.getparent() is None and \
            props.get("display", "").strip().lower() == "none":
        return ('display="none" on the root <svg>, which CairoSVG and resvg draw as nothing '
                "and Chromium draws")
    width = _NUMBER_START.match(props.get("stroke-width", ""))
    if width and float(width.group(1)) < 0:
        return (f"a negative stroke-width ({props['stroke-width'].strip()[:20]}), which "
                "CairoSVG and resvg draw as no stroke and Chromium as the default width")
    for key in sorted(LENGTH_PROPERTIES & props.keys()):
        unit = _UNREAD_UNITS.search(props[key])
        if unit:
            return (f"the CSS unit {unit.group(1)} ({key}: {props[key].strip()[:30]}), which "
                    "CairoSVG and resvg do not read and Chromium does")
    origin = props.get("transform-origin", "").strip().lower()
    if origin and origin not in ("0 0", "0px 0px", "0", "initial", "left top", "top left"):
        return (f"transform-origin: {origin[:30]}, which CairoSVG and resvg ignore (on text "
                "both draw it unmoved) and Chromium applies")
    return None


def _reason(tag: str, node, props: dict[str, str]) -> str | None:
    browser_only = _browser_only_reason(tag, node, props)
    if browser_only:
        return browser_only
    value = props.get("filter", "").strip()
    if value and value.lower() != "none":
        return _css_filter_reason(value)
    for key in CSS_ONLY:
        if key == "d" and key in (node.attrib or {}):
            inline = _style_declarations(node.get("style") or "")
            if "d" not in inline and props.get("d") == node.get("d"):
                continue  # the d attribute itself, not the CSS property
        value = props.get(key, "").strip()
        if value and value.lower() not in ("none", "normal", "auto", "fill", "view-box"):
            return f"the CSS property {key}: {value[:40]}, which CairoSVG does not draw"
    if props.get("vector-effect", "").strip().lower() == "non-scaling-stroke":
        return "vector-effect: non-scaling-stroke, which CairoSVG ignores"
    href, xlink = node.get("href"), node.get(f"{{{XLINK_NS}}}href")
    if tag == "use" and href is not None and xlink is not None and href.strip() != xlink.strip():
        return (f"both href ({href.strip()[:30]}) and xlink:href ({xlink.strip()[:30]}); "
                "browsers follow href (SVG 2), CairoSVG xlink:href")
    if tag in ("image", "feImage"):
        link = (href if href is not None else xlink or "").strip()
        if link.startswith("data:"):
            if not link[:40].lower().replace(" ", "").startswith(_ALLOWED_DATA):
                mime = link[5:].split(",")[0].split(";")[0] or "text"
                return f"an embedded {mime} image, which svgloo's renderer does not draw " \
                       "(only PNG and JPEG)"
        elif link and not link.startswith("#"):
            return f"an external file ({link[:40]}), which svgloo does not fetch; " \
                   "browsers show it"
    if tag == "path" and props.get("stroke-linecap", "").strip().lower() in _ROUND_CAPS \
            and _zero_length_subpath(node.get("d") or ""):
        return "a zero-length subpath with round or square caps: browsers draw a dot " \
               "there, CairoSVG does not"
    return None


def _inherited_linecap(doc: Document) -> dict[int, str]:
    """stroke-linecap is inherited: element index -> the value in force."""
    out: dict[int, str] = {}
    for i, node in enumerate(doc.nodes):
        value = _style_declarations(node.get("style") or "").get("stroke-linecap") \
            or node.get("stroke-linecap")
        if value is None:
            parent = node.getparent()
            value = out.get(doc._index_of.get(parent, -1)) if parent is not None else None
        if value is not None:
            out[i] = value
    return out


def unit_reasons(us: UnitSet) -> dict[int, str]:
    """Unit index -> why its removal cannot be vouched for: a feature on its element, an
    ancestor, or (for ``<use>``) anything in what it draws."""
    key = ("unit_reasons", tuple((u.element, u.kind, u.subpath) for u in us.units))
    found = us.doc.memo.get(key)
    if found is None:
        found = us.doc.memo[key] = _unit_reasons(us)
    return dict(found)


def _unit_reasons(us: UnitSet) -> dict[int, str]:
    doc = us.doc
    own = element_reasons(doc)
    caps = _inherited_linecap(doc)
    for i, el in enumerate(doc.elements):
        if i not in own and el.tag == "path" and caps.get(i, "").strip().lower() in _ROUND_CAPS \
                and _zero_length_subpath(doc.nodes[i].get("d") or ""):
            own[i] = ("a zero-length subpath with round or square caps: browsers draw a dot "
                      "there, CairoSVG does not")
    ids: dict[str, int] = {}
    for i, node in enumerate(doc.nodes):
        ident = node.get("id")
        if ident is not None:
            ids.setdefault(ident, i)

    def inside(i: int) -> str | None:
        """A reason anywhere in element i's subtree, following <use> references (a walk
        with its own stack: documents may nest deeper than Python's recursion limit)."""
        seen: set[int] = set()
        stack = [(i, "")]
        while stack:
            j, via = stack.pop()
            if j in seen:
                continue
            seen.add(j)
            if j in own:
                return via + own[j]
            node = doc.nodes[j]
            if doc.elements[j].tag == "use":
                link = (node.get("href") or node.get(f"{{{XLINK_NS}}}href") or "").strip()
                if link.startswith("#") and link[1:] in ids:
                    stack.append((ids[link[1:]], "what it draws has "))
            for child in reversed(node):
                k = doc._index_of.get(child)
                if k is not None:
                    stack.append((k, via))
        return None

    out: dict[int, str] = coincident_subpaths(us)
    for index, masked_reason in masked_box_reasons(us).items():
        out.setdefault(index, masked_reason)
    for u in us.units:
        if u.index in out:
            continue
        reason = inside(u.element)
        node = doc.nodes[u.element].getparent()
        while reason is None and node is not None:
            j = doc._index_of.get(node)
            if j in own:
                reason = f"an ancestor <{doc.elements[j].tag}> has {own[j]}"
            node = node.getparent()
        if reason is not None:
            out[u.index] = "it uses " + reason if not reason.startswith(("an ancestor", "what")) \
                else reason
    return out


@functools.lru_cache(maxsize=1024)
def path_edges(d: str) -> tuple[frozenset, ...] | None:
    """Each subpath's edges (pathdata.subpath_edges), cached per path data; None when the
    data does not parse."""
    try:
        return tuple(subpath_edges(d))
    except PathSyntaxError:
        return None


def coincident_subpaths(us: UnitSet) -> dict[int, str]:
    """Subpath units that share an edge with another subpath of their path (the same line,
    curve or arc, either way round): the edge is drawn twice on top of itself. CairoSVG and
    resvg compute a fill's coverage exactly, so one copy or two look the same to them;
    Chromium's Skia accumulates the antialiased coverage of each copy, so removing the
    second copy moves the shape's edge pixels in a browser (up to 15/255 on the corpus's
    logos/yeoman.svg, whose face is one outline written three times) and no proof in the
    two renderers can vouch for it."""
    out: dict[int, str] = {}
    for element, split in us.splits.items():
        edges = path_edges(us.doc.text[split.value_start:split.value_end])
        if edges is None or len(edges) != len(split.subpaths):
            continue
        first: dict[tuple, int] = {}    # edge -> the first subpath that draws it
        shared: dict[int, int] = {}     # subpath -> another subpath it shares an edge with
        for k, mine in enumerate(edges):
            for edge in mine:
                j = first.setdefault(edge, k)
                if j != k:
                    shared.setdefault(k, j)
                    shared.setdefault(j, k)
        for u in us.units_of_element(element) if shared else ():
            other = shared.get(u.subpath) if u.subpath is not None else None
            if other is not None:
                out[u.index] = (
                    f"its edges coincide with subpath {other}'s of the same path (drawn twice, "
                    "on top of each other): browsers (Skia) antialias such edges differently "
                    "from CairoSVG and resvg, so what removing it changes in a browser cannot "
                    "be proven")
    return out


# --- masked groups: Chromium sizes the masked layer by the group's bounding box ----------

_BOXED_SHAPES = frozenset({"path", "rect", "circle", "ellipse", "line", "polyline",
                           "polygon"})


def _masked(props: dict[str, str]) -> bool:
    value = props.get("mask", "").strip().lower()
    return bool(value) and value != "none"


def _shape_points(node) -> tuple[list[tuple[float, float]], list[tuple[float, float]]] | None:
    """(points the shape's outline passes through, points its outline stays within the
    box of) in its own user space; None for anything else or what does not parse. For a
    curve the first are its ends, the second adds its control points (a Bezier curve lies
    in their hull); an arc's ends, and those ends grown by its larger radius."""
    tag = _local(node.tag)

    def num(name: str) -> float:
        value = _NUMBER_START.match(node.get(name) or "0")
        if value is None or (node.get(name) or "0").strip() != value.group(1):
            raise ValueError(name)
        return float(value.group(1))

    try:
        if tag == "rect":
            x, y, w, h = num("x"), num("y"), num("width"), num("height")
            corners = [(x, y), (x + w, y + h)]
            return corners, corners
        if tag in ("circle", "ellipse"):
            cx, cy = num("cx"), num("cy")
            rx = num("r") if tag == "circle" else num("rx")
            ry = num("r") if tag == "circle" else num("ry")
            extremes = [(cx - rx, cy), (cx + rx, cy), (cx, cy - ry), (cx, cy + ry)]
            return extremes, extremes
        if tag == "line":
            ends = [(num("x1"), num("y1")), (num("x2"), num("y2"))]
            return ends, ends
        if tag in ("polyline", "polygon"):
            values = [float(v) for v in _TOKEN_NUMBERS.findall(node.get("points") or "")]
            pairs = list(zip(values[0::2], values[1::2]))
            return (pairs, pairs) if pairs else None
        if tag == "path":
            on, hull = [], []
            x = y = sx = sy = 0.0
            for up, rel, args, *_ in _commands(node.get("d") or ""):
                if up == "Z":
                    x, y = sx, sy
                    continue
                if up in "HV":
                    value = args[0] + ((x if up == "H" else y) if rel else 0.0)
                    x, y = (value, y) if up == "H" else (x, value)
                    on.append((x, y))
                    hull.append((x, y))
                    continue
                if up == "A":
                    ex, ey = (x + args[5], y + args[6]) if rel else (args[5], args[6])
                    r = max(abs(args[0]), abs(args[1]))
                    hull += [(x - 2 * r, y - 2 * r), (x + 2 * r, y + 2 * r)]
                    x, y = ex, ey
                    on.append((x, y))
                    continue
                pairs = [((x + args[k], y + args[k + 1]) if rel else (args[k], args[k + 1]))
                         for k in range(0, len(args), 2)]
                hull += pairs
                x, y = pairs[-1]
                on.append((x, y))
                if up == "M":
                    sx, sy = x, y
            return (on, hull) if on else None
    except (ValueError, PathSyntaxError):
        return None
    return None


_TOKEN_NUMBERS = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _box(points) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def masked_box_reasons(us: UnitSet) -> dict[int, str]:
    """Units inside a masked element whose removal may change that element's bounding box.
    Chromium (in a document or inline, not in an ``<img>``) sizes the masked layer by the
    group's box, so removing a hidden unit that reaches the box's edge moves the mask's
    edge (a real logo: 38/255 on 545 px); CairoSVG and resvg do not. A unit is left
    proven only when its shape lies inside the box of the group's other shapes, with no
    transform between them; anything else there is unverified."""
    doc = us.doc
    sheet = _sheet_declarations(doc)
    masked: list[int] = []
    for i, node in enumerate(doc.nodes):
        props = {k.rsplit("}", 1)[-1]: v for k, v in node.attrib.items()}
        props.update(sheet.get(i, {}))
        props.update(_style_declarations(node.get("style") or ""))
        if _masked(props) and len(node):
            masked.append(i)
    if not masked:
        return {}
    out: dict[int, str] = {}
    for group in masked:
        root = doc.nodes[group]
        inside = [doc._index_of[n] for n in root.iter() if n is not root and
                  doc._index_of.get(n) is not None]
        plain = all(not doc.nodes[j].get("transform") and doc.elements[j].tag in
                    _BOXED_SHAPES | {"g"} for j in inside)
        points = {j: _shape_points(doc.nodes[j]) for j in inside
                  if doc.elements[j].tag in _BOXED_SHAPES} if plain else {}
        for u in us.units:
            if u.element not in inside or u.index in out:
                continue
            mine = points.get(u.element)
            # the other shapes' box from points their outlines pass through (it can only
            # be larger), the unit's from points its outline stays within (it can only be
            # smaller): "inside" is then never claimed where it does not hold
            others = [p[0] for j, p in points.items() if j != u.element and p is not None]
            if plain and mine is not None and others and None not in points.values():
                x0, y0, x1, y1 = _box([q for group in others for q in group])
                m0, n0, m1, n1 = _box(mine[1])
                if x0 <= m0 and y0 <= n0 and m1 <= x1 and n1 <= y1:
                    continue  # the group's box stays what the other shapes make it
            out[u.index] = (f"it lies in a masked <{doc.elements[group].tag}>, whose "
                            "bounding box sizes the masked layer in browsers (in a page or "
                            "an <object>), and removing it may change that box; CairoSVG "
                            "and resvg do not size it so")
    return out
