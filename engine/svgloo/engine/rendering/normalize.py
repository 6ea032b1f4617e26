"""Modern SVG/CSS values rewritten into forms CairoSVG reads, in the copy that is rendered.

CairoSVG 2.x fails the whole file on values every browser draws: ``opacity="100%"`` (and
the other opacities), CSS Color 4 colours (``rgb(0 0 255)``, ``rgb(0 0 255 / 50%)``,
``hsl(240 100% 50%)``) and ``calc()``; it draws ``#rrggbbaa`` and ``#rgba`` colours opaque
(the alpha digits ignored). Hex colours with alpha are rewritten only where a colour is
read - the colour attributes (``fill``, ``stroke``, ``stop-color``, ``flood-color``,
``lighting-color``, ``color``) and after a colon in CSS - never a fragment (``href="#c0ffee"``,
``url(#abcd)``) or an ID selector. The renderers get a rewritten copy; the user's text,
and so every offset a front end shows or edits, is never changed.

Only attribute values and ``<style>`` sheets are rewritten (a ``<text>`` that spells
``rgb(0 0 1)`` keeps its letters), through lxml; documents without such values (a cheap
test on the raw text) are passed through byte for byte.
"""

from __future__ import annotations

import colorsys
import re
from typing import overload

_NUM = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_OPACITY = re.compile(rf"(?<![\w-])((?:fill-|stroke-|stop-|flood-)?opacity\s*:\s*)({_NUM})%")
_OPACITY_VALUE = re.compile(rf"\s*({_NUM})%\s*")
_OPACITY_ATTRS = frozenset({"opacity", "fill-opacity", "stroke-opacity", "stop-opacity",
                            "flood-opacity"})
_COLOR = re.compile(r"(?<![\w-])(rgba?|hsla?)\(([^()]*)\)", re.IGNORECASE)
_CALC = re.compile(r"(?<![\w-])calc\(([^()]*)\)", re.IGNORECASE)
_CALC_TERM = re.compile(rf"\s*({_NUM})(px)?\s*")
_HEX = r"#((?:[0-9a-fA-F]{4}){1,2})(?![\w-])"
_HEX_IN_VALUE = re.compile(rf"(?<![\w(#-]){_HEX}")      # a colour attribute's value
_HEX_IN_CSS = re.compile(rf"(:\s*){_HEX}")                # a declaration's value
_COLOR_ATTRS = frozenset({"fill", "stroke", "stop-color", "flood-color", "lighting-color",
                          "color"})

# A cheap test on the raw text: does anything here need rewriting?
_NEEDS_OPACITY = rf"opacity\s*(?:=\s*[\"']|:)\s*{_NUM}%"
_NEEDS_RGB = rf"rgba?\(\s*{_NUM}%?\s+{_NUM}|rgba?\([^)]*%\s*\)"
_NEEDS_HEX = rf"(?:fill|stroke|color)\s*(?:=\s*[\"']|:)\s*{_HEX}"
_NEEDS = re.compile(rf"{_NEEDS_OPACITY}|calc\(|hsla?\(|{_NEEDS_RGB}|{_NEEDS_HEX}", re.IGNORECASE)
# The same test on ASCII text lowered, one alternative at a time and only where its
# letters occur: each render job's text is tested, and one scan of _NEEDS (its
# alternatives tried at every letter) cost 0.16 ms per 1,000 characters, 30x this.
_LOWER_OPACITY = re.compile(_NEEDS_OPACITY)
_LOWER_RGB = re.compile(_NEEDS_RGB)
_LOWER_HEX = re.compile(_NEEDS_HEX)
_ANY_HEX = re.compile(_HEX)


def _channel(text: str) -> float | None:
    text = text.strip()
    try:
        if text.endswith("%"):
            return max(0.0, min(255.0, float(text[:-1]) * 2.55))
        return max(0.0, min(255.0, float(text)))
    except ValueError:
        return None


def _alpha(text: str | None) -> float | None:
    if text is None:
        return 1.0
    text = text.strip()
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        return None
    return max(0.0, min(1.0, value))


def _color(match: re.Match) -> str:
    """``rgb()``/``rgba()``/``hsl()``/``hsla()`` in any CSS syntax -> ``rgb(r,g,b)`` or
    ``rgba(r,g,b,a)`` with integer channels and a 0-1 alpha; unreadable ones are kept."""
    kind, body = match.group(1).lower(), match.group(2)
    main, slash, alpha_text = body.partition("/")
    parts = [p for p in re.split(r"[\s,]+", main.strip()) if p]
    if len(parts) == 4 and not slash:
        alpha_text, parts = parts[3], parts[:3]
    if len(parts) != 3:
        return match.group(0)
    alpha = _alpha(alpha_text if (slash or alpha_text) else None)
    if kind.startswith("rgb"):
        channels = [_channel(p) for p in parts]
    else:
        try:
            hue = float(parts[0].removesuffix("deg")) / 360 % 1
            sat = float(parts[1].rstrip("%")) / 100
            light = float(parts[2].rstrip("%")) / 100
        except ValueError:
            return match.group(0)
        r, g, b = colorsys.hls_to_rgb(hue, max(0, min(1, light)), max(0, min(1, sat)))
        channels = [r * 255, g * 255, b * 255]
    if alpha is None or None in channels:
        return match.group(0)
    rgb = ",".join(str(int(round(c))) for c in channels if c is not None)
    return f"rgb({rgb})" if alpha >= 1 else f"rgba({rgb},{alpha:g})"


def _hex(digits: str) -> str:
    """``#rgba``/``#rrggbbaa`` digits -> ``rgb(r,g,b)`` (opaque) or ``rgba(r,g,b,a)``."""
    if len(digits) == 4:
        digits = "".join(c * 2 for c in digits)
    r, g, b, a = (int(digits[k:k + 2], 16) for k in range(0, 8, 2))
    return f"rgb({r},{g},{b})" if a == 255 else f"rgba({r},{g},{b},{round(a / 255, 6):g})"


def _calc(match: re.Match) -> str:
    """``calc()`` of plain numbers and px lengths with + - * / -> the number; others kept
    (percentages and font units need a context the value does not have)."""
    body = match.group(1)
    pieces = re.split(r"(\s[+-]\s|[*/])", body)
    terms, ops = pieces[0::2], [p.strip() for p in pieces[1::2]]
    values = []
    for term in terms:
        m = _CALC_TERM.fullmatch(term)
        if not m:
            return match.group(0)
        values.append(float(m.group(1)))
    # * and / first, then + and -, left to right
    stack, pending = [values[0]], []
    for op, value in zip(ops, values[1:]):
        if op == "*":
            stack[-1] *= value
        elif op == "/":
            if value == 0:
                return match.group(0)
            stack[-1] /= value
        else:
            pending.append(op)
            stack.append(value)
    total = stack[0]
    for op, value in zip(pending, stack[1:]):
        total = total + value if op == "+" else total - value
    return repr(round(total, 6))


def normalize_value(value: str, attribute: str | None = None) -> str:
    """One attribute value or style sheet text, rewritten (see module docstring)."""
    if attribute in _OPACITY_ATTRS:
        m = _OPACITY_VALUE.fullmatch(value)
        if m:
            return repr(float(m.group(1)) / 100)
    if attribute in _COLOR_ATTRS:
        value = _HEX_IN_VALUE.sub(lambda m: _hex(m.group(1)), value)
    value = _HEX_IN_CSS.sub(lambda m: m.group(1) + _hex(m.group(2)), value)
    value = _OPACITY.sub(lambda m: m.group(1) + repr(float(m.group(2)) / 100), value)
    value = _COLOR.sub(_color, value)
    return _CALC.sub(_calc, value)


def needs_normalizing(text: str | bytes) -> bool:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not text.isascii():  # re's IGNORECASE knows case pairs lower() does not (long s)
        return _NEEDS.search(text) is not None
    low = text.lower()
    if "calc(" in low or "hsl(" in low or "hsla(" in low:
        return True
    if "rgb" in low and _LOWER_RGB.search(low):
        return True
    if "%" in low and "opacity" in low and _LOWER_OPACITY.search(low):
        return True
    return _ANY_HEX.search(low) is not None and _LOWER_HEX.search(low) is not None


@overload
def normalize_modern(svg_text: str) -> str: ...
@overload
def normalize_modern(svg_text: bytes) -> bytes: ...
def normalize_modern(svg_text: str | bytes) -> str | bytes:
    """The document with modern values rewritten (same type as given); unchanged when it
    has none, or when it does not parse (the renderer then reports that)."""
    if not needs_normalizing(svg_text):
        return svg_text
    from lxml import etree

    data = svg_text.encode("utf-8") if isinstance(svg_text, str) else svg_text
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return svg_text
    for node in root.iter():
        if not isinstance(node.tag, str):
            continue
        for key, value in node.attrib.items():
            local = key.rsplit("}", 1)[-1]
            new = normalize_value(value, local)
            if new != value:
                node.set(key, new)
        if node.tag.rsplit("}", 1)[-1] == "style" and node.text:
            node.text = normalize_value(node.text)
    out = etree.tostring(root)
    return out.decode("utf-8") if isinstance(svg_text, str) else out
