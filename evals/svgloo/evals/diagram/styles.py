"""Paint, dashes, fonts and CSS as the rule-based evaluation reads them.

The original has two CSS readers and uses them for different things, and this matters for
numbers (references to RAIVNLab/VFig@4874af7 ``rule-based-eval/lib``):

* shapes (``class_rules``, eval_shapes.py:39-83): only ``.name { ... }`` rules, the last
  selector of a list; a property comes from the attribute, else the inline ``style``,
  else the element's first class that sets it. Ancestors are not consulted.
* arrows (``selector_rules``/``arrow_value``, eval_arrows.py:19-53): the selector right
  before ``{`` (class, id or tag, a leading ``.`` dropped); a property comes from the
  attribute, else the element's classes, else the nearest ``<g>`` ancestor's attribute or
  classes. The inline ``style`` attribute is never read, so ``style="stroke:#000"`` on a
  line leaves it without a stroke, and it is not an arrow.
"""

from __future__ import annotations

import math
import re

from .geometry import ancestors, kids, local, number, numbers, strict_float, walk

GRADIENT_STYLES = ("gradient-linear", "gradient-radial")


def style_text(el) -> str:
    """An element's leading text, through any comments (xml.etree drops those)."""
    parts = [el.text or ""]
    for k in el:
        if isinstance(k.tag, str):
            break
        parts.append(k.tail or "")
    return "".join(parts)


def class_rules(root) -> dict[str, dict[str, str]]:
    css = {}
    for el in walk(root):
        if local(el) != "style":
            continue
        text = re.sub(r"<!\[CDATA\[|\]\]>", "", style_text(el))
        for m in re.finditer(r"\.([^{,\s]+)\s*\{([^}]*)\}", text):
            props = {}
            for decl in m.group(2).split(";"):
                if ":" in decl:
                    k, v = decl.split(":", 1)
                    props[k.strip()] = v.strip()
            if props:
                css[m.group(1)] = props
    return css


def css_value(el, prop: str, css: dict | None) -> str:
    """Attribute, else inline style, else the first class that sets it; '' if none."""
    value = el.get(prop, "")
    if value:
        return value
    for decl in (el.get("style", "") or "").split(";"):
        if ":" in decl:
            k, v = decl.split(":", 1)
            if k.strip() == prop:
                return v.strip()
    if css:
        for cls in (el.get("class") or "").split():
            if cls in css and prop in css[cls]:
                return css[cls][prop]
    return ""


def selector_rules(root) -> dict[str, dict[str, str]]:
    rules = {}
    for el in walk(root):
        if local(el) != "style":
            continue
        for m in re.finditer(r"([.#]?[\w-]+)\s*\{([^}]*)\}", style_text(el)):
            rules[m.group(1).lstrip(".")] = {
                p.group(1).strip(): p.group(2).strip()
                for p in re.finditer(r"([\w-]+)\s*:\s*([^;]+)", m.group(2))}
    return rules


def arrow_value(el, prop: str, css: dict) -> str:
    value = el.get(prop, "")
    if value:
        return value
    for cls in el.get("class", "").split():
        if cls in css and prop in css[cls]:
            return css[cls][prop]
    for a in ancestors(el):
        if local(a) == "g":
            value = a.get(prop, "")
            if value:
                return value
            for cls in a.get("class", "").split():
                if cls in css and prop in css[cls]:
                    return css[cls][prop]
    return ""


def font_of(el, css: dict | None = None) -> str:
    """The element's font-family, else a direct <tspan>'s, else the nearest ancestor's
    (eval_shapes.py:86)."""
    for candidate in [el] + [k for k in kids(el) if local(k) == "tspan"] + list(ancestors(el)):
        f = css_value(candidate, "font-family", css or {})
        if f:
            return f
    return ""


# ---------------------------------------------------------------- paint servers

def _pattern_style(pattern) -> str:
    """What a pattern tile shows, from its direct children (eval_shapes.py:337-368)."""
    children = kids(pattern)
    tags = [local(k) for k in children]
    lines = [k for k in children if local(k) == "line"]
    if "circle" in tags:
        return "dots"
    if len(lines) >= 2:
        return "crosshatch"
    if lines:
        y1, y2 = number(lines[0].get("y1")), number(lines[0].get("y2"))
        return "hatching" if abs(y1 - y2) > 1 else "horizontal-lines"
    if "path" in tags:
        angles = set()
        for p in (k for k in children if local(k) == "path"):
            for seg in re.findall(r"[Mm]\s*([-\d.]+)[,\s]+([-\d.]+).*?[Ll]\s*([-\d.]+)"
                                  r"[,\s]+([-\d.]+)", p.get("d", "")):
                x0, y0, x1, y1 = (strict_float(s, "pattern path") for s in seg)
                dx, dy = x1 - x0, y1 - y0
                if abs(dx) > 0.1 or abs(dy) > 0.1:
                    angles.add(round(math.atan2(dy, dx) * 180 / math.pi / 15) * 15 % 180)
        return "crosshatch" if len(angles) >= 2 else "hatching" if angles else "pattern"
    return "pattern"


def fill_styles(root) -> dict[str, str]:
    """id → fill style for the direct children of every <defs> (eval_shapes.py:331): a
    server defined elsewhere is unknown, and ``url()`` to an unknown id reads "pattern"."""
    out = {}
    for d in walk(root):
        if local(d) != "defs":
            continue
        for k in kids(d):
            tag, key = local(k), k.get("id", "")
            if tag == "pattern":
                out[key] = _pattern_style(k)
            elif tag == "linearGradient":
                out[key] = "gradient-linear"
            elif tag == "radialGradient":
                out[key] = "gradient-radial"
    return out


def _first_stop_colour(gradient) -> str | None:
    for stop in kids(gradient):
        if local(stop) != "stop":
            continue
        c = stop.get("stop-color", "")
        if not c:
            m = re.search(r"stop-color\s*:\s*([^;]+)", stop.get("style", ""))
            c = m.group(1).strip() if m else ""
        if c and c.lower() != "none":
            return c
    return None


def gradient_colours(root, with_patterns: bool = False) -> dict[str, str]:
    """id → the first stop colour of every gradient (eval_shapes.py:373); with_patterns
    adds each pattern's first <rect>'s fill, as the ground-truth reader does (main.py:99)."""
    out = {}
    for el in walk(root):
        tag, key = local(el), el.get("id", "")
        if not key:
            continue
        if tag in ("linearGradient", "radialGradient"):
            c = _first_stop_colour(el)
            if c:
                out[key] = c
        elif tag == "pattern" and with_patterns:
            rect = next((k for k in kids(el) if local(k) == "rect"), None)
            if rect is not None:
                c = rect.get("fill", "")
                if c and c.lower() != "none":
                    out[key] = c
    return out


def resolve_colour(fill: str, colours: dict) -> str:
    """``url(#id)`` → the server's colour when known, else unchanged."""
    if fill.startswith("url(#"):
        return colours.get(fill[5:-1], fill)
    return fill


def fill_style(el, styles: dict, css: dict | None = None) -> str:
    fill = css_value(el, "fill", css)
    if fill.startswith("url(#"):
        return styles.get(fill[5:-1], "pattern")
    return "solid" if fill and fill.lower() != "none" else "none"


def dash_kind(dasharray: str | None) -> str:
    """solid without numbers; ≥ 4 numbers → dash-dot; first ≤ 3 → dotted; else dashed
    (eval_shapes.py:408)."""
    nums = numbers(dasharray) if dasharray else []
    if not nums:
        return "solid"
    if len(nums) >= 4:
        return "dash-dot"
    return "dotted" if nums[0] <= 3 else "dashed"


def border_style(el, css: dict | None = None) -> str:
    return dash_kind(css_value(el, "stroke-dasharray", css))
