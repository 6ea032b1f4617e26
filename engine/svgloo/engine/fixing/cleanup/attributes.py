"""Attribute values in their shortest form: path data, numbers, colours, ``style``, and
attributes that only restate a default.

One job per kind of value (``paths``, ``numbers``, ``colours``, ``defaults``, ``style``),
each edit reading the value it finds when it is applied, so that the jobs compose in any
subset the proof keeps. Nothing here rounds: every rewrite is the same value spelled
shorter (device_rounding.py rounds).
"""

from __future__ import annotations

import re

from svgloo.engine.fixing.cleanup.edits import Context, Edit, drop_attributes, in_svg, local
from svgloo.engine.fixing.cleanup.numbers import is_number, short_colour, shorten_numbers
from svgloo.engine.fixing.cleanup.path_short import PathDataError, shortest

# Attributes holding one plain number, or a list of numbers, spelled shorter exactly.
NUMBER_ATTRIBUTES = frozenset({
    "x", "y", "width", "height", "cx", "cy", "r", "rx", "ry", "x1", "y1", "x2", "y2", "fx",
    "fy", "fr", "opacity", "fill-opacity", "stroke-opacity", "stop-opacity", "flood-opacity",
    "stroke-width", "stroke-miterlimit", "stroke-dashoffset", "offset", "stdDeviation",
    "font-size", "dx", "dy", "rotate", "pathLength"})
NUMBER_LIST_ATTRIBUTES = frozenset({"transform", "gradientTransform", "patternTransform",
                                    "viewBox", "points", "stroke-dasharray"})
COLOUR_ATTRIBUTES = frozenset({"fill", "stroke", "stop-color", "flood-color",
                               "lighting-color", "color"})
# Inherited properties and their initial values: such an attribute can go only when
# nothing above the element sets the property (else it stops an inherited value).
INHERITED_DEFAULTS = {
    "fill": ("black", "#000", "#000000"), "fill-opacity": ("1",), "fill-rule": ("nonzero",),
    "stroke": ("none",), "stroke-width": ("1",), "stroke-opacity": ("1",),
    "stroke-linecap": ("butt",), "stroke-linejoin": ("miter",),
    "stroke-miterlimit": ("4",), "stroke-dasharray": ("none",), "stroke-dashoffset": ("0",),
    "clip-rule": ("nonzero",), "visibility": ("visible",)}
# Properties that are not inherited: the initial value is what the element gets anyway.
PLAIN_DEFAULTS = {"opacity": ("1",), "clip-path": ("none",), "mask": ("none",),
                  "filter": ("none",), "stop-opacity": ("1",), "flood-opacity": ("1",)}
# Attributes with no effect on a drawing: an obsolete hint and document-version labels.
INERT_ATTRIBUTES = frozenset({"enable-background", "version", "baseProfile"})
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
TEXT_CONTENT = frozenset({"text", "tspan", "textPath", "foreignObject"})
# Element-specific geometry defaults: x="0" on a rect is the rect without it.
GEOMETRY_DEFAULTS = {"rect": {"x": "0", "y": "0"}, "circle": {"cx": "0", "cy": "0"},
                     "ellipse": {"cx": "0", "cy": "0"}, "use": {"x": "0", "y": "0"},
                     "image": {"x": "0", "y": "0"},
                     "line": {"x1": "0", "y1": "0", "x2": "0", "y2": "0"}}


def _css_properties(sheet: str) -> set[str]:
    return set(re.findall(r"([\w-]+)\s*:", sheet))


def _declarations(style: str) -> list[tuple[str, str]]:
    out = []
    for part in style.split(";"):
        key, sep, value = part.partition(":")
        if sep and key.strip():
            out.append((key.strip(), value.strip()))
    return out


def _set_by_ancestors(ctx: Context) -> dict[int, set[str]]:
    """Node index -> the inherited properties some ancestor sets (attribute or style)."""
    index = {id(n): i for i, n in enumerate(ctx.nodes)}
    out: dict[int, set[str]] = {}
    for i, node in enumerate(ctx.nodes):
        parent = node.getparent()
        j = index.get(id(parent)) if parent is not None else None
        above = set(out.get(j, set())) if j is not None else set()
        if parent is not None and isinstance(parent.tag, str):
            above |= {k for k in parent.attrib if k in INHERITED_DEFAULTS}
            above |= {k.lower() for k, _ in _declarations(parent.get("style") or "")}
        out[i] = above
    return out


def _is_default(name: str, value: str, tag: str) -> bool:
    v = value.strip().lower()
    if name in PLAIN_DEFAULTS and v in PLAIN_DEFAULTS[name]:
        return True
    if name in INHERITED_DEFAULTS and v in INHERITED_DEFAULTS[name]:
        return True
    return GEOMETRY_DEFAULTS.get(tag, {}).get(name) == v


def edits(ctx: Context) -> list[Edit]:
    out: list[Edit] = []
    sheet_properties = _css_properties(ctx.stylesheet)
    uses = any(local(n.tag) == "use" for n in ctx.nodes)
    # xml:space decides how blanks in text are drawn; with no text it decides nothing
    texts = any(local(n.tag) in TEXT_CONTENT for n in ctx.nodes)
    above = _set_by_ancestors(ctx)
    for i, node in enumerate(ctx.nodes):
        if not in_svg(node):
            continue
        tag = local(node.tag)
        d = node.get("d")
        if tag == "path" and d is not None:
            try:
                new, kept = shortest(d), shortest(d, spelling="keep")
            except PathDataError:
                new = kept = d
            safer = Edit("paths", i, "change", _set("d", kept), len(d) - len(kept)) \
                if len(kept) < len(d) else None
            if len(new) < len(d) and new != kept:
                out.append(Edit("paths", i, "change", _set("d", new), len(d) - len(new),
                                fallback=safer))
            elif safer is not None:
                out.append(safer)
        numbers = {}
        for name, value in node.attrib.items():
            if name in NUMBER_ATTRIBUTES and is_number(value) or \
                    name in NUMBER_LIST_ATTRIBUTES:
                new = _number_list(value) if name in NUMBER_LIST_ATTRIBUTES else \
                    shorten_numbers(value.strip())
                if len(new) < len(value):
                    numbers[name] = new
        if numbers:
            out.append(Edit("numbers", i, "change", _set_all(numbers),
                            sum(len(node.get(k)) - len(v) for k, v in numbers.items())))
        colours = {name: short_colour(value) for name, value in node.attrib.items()
                   if name in COLOUR_ATTRIBUTES}
        colours = {k: v for k, v in colours.items() if len(v) < len(node.get(k))}
        if colours:
            out.append(Edit("colours", i, "change", _set_all(colours),
                            sum(len(node.get(k)) - len(v) for k, v in colours.items())))
        style = node.get("style")
        inline = {k.lower() for k, _ in _declarations(style or "")}
        dropped = []
        for name, value in node.attrib.items():
            if i == 0 and name in ("x", "y"):        # the outermost <svg> ignores them
                dropped.append(name)
            elif name == XML_SPACE and not texts:
                dropped.append(name)
            elif name in INERT_ATTRIBUTES or name in inline and name in _PRESENTATION:
                dropped.append(name)  # a style declaration overrides the attribute
            elif _is_default(name, value, tag) and not (
                    name in INHERITED_DEFAULTS and (name in above[i] or uses or
                                                    name in sheet_properties)):
                dropped.append(name)
        if dropped:
            out.append(Edit("defaults", i, "change", drop_attributes(dropped),
                            sum(len(k) + len(node.get(k)) + 4 for k in dropped)))
        if style is not None:
            new = _short_style(style, tag, above[i], uses, sheet_properties)
            if len(new) < len(style):
                out.append(Edit("style", i, "change", _set("style", new) if new else
                                drop_attributes(["style"]), len(style) - len(new)))
    return out


_PRESENTATION = frozenset(INHERITED_DEFAULTS) | frozenset(PLAIN_DEFAULTS) | frozenset({
    "stop-color", "flood-color", "lighting-color", "color", "display", "font-family",
    "font-size", "font-weight", "font-style", "text-anchor", "letter-spacing",
    "word-spacing", "dominant-baseline"})


def _short_style(style: str, tag: str, above: set[str], uses: bool,
                 sheet_properties: set[str]) -> str:
    """A ``style`` value minified: declarations that restate an initial value dropped (with
    the same care as attributes), colours and numbers shortened, no blanks, no final ``;``.
    Later declarations of a property win, so only the last of each is kept."""
    kept: dict[str, str] = {}
    for key, value in _declarations(style):
        lowered = key.lower()
        if "!important" in value.lower() or "/*" in value:
            kept[lowered] = value
            continue
        if lowered in INERT_ATTRIBUTES:
            continue
        if _is_default(lowered, value, tag) and lowered not in GEOMETRY_DEFAULTS.get(tag, {}) \
                and not (lowered in INHERITED_DEFAULTS and (lowered in above or uses or
                                                             lowered in sheet_properties)):
            kept.pop(lowered, None)
            continue
        if lowered in COLOUR_ATTRIBUTES:
            value = short_colour(value)
        elif lowered in NUMBER_ATTRIBUTES and is_number(value):
            value = shorten_numbers(value)
        kept[lowered] = value
    return ";".join(f"{k}:{v}" for k, v in kept.items())


def _number_list(value: str) -> str:
    text = shorten_numbers(value.strip())
    text = re.sub(r"\s*,\s*", " ", text)
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([()])\s*", r"\1", text)


def _set(name: str, value: str):
    def change(node) -> None:
        node.set(name, value)
    return change


def _set_all(values: dict[str, str]):
    def change(node) -> None:
        for name, value in values.items():
            if name in node.attrib:
                node.set(name, value)
    return change


__all__ = ["edits", "NUMBER_ATTRIBUTES", "NUMBER_LIST_ATTRIBUTES", "COLOUR_ATTRIBUTES"]
