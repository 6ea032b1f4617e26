"""Label concepts: what the file itself names - a group's or element's ``<title>``,
``inkscape:label``, ``aria-label``, or a meaningful ``id``.

Generated names are skipped: ``path123``, ``g45``, ``Layer_1``, ``svg_3``, ``XMLID_12_``,
``Capa_1``, hex- or uuid-like strings, bare numbers. Only elements that draw something
(a group with a scoring unit inside, or a unit itself) outside ``<defs>``-like containers
count; the root ``<svg>`` is the whole picture, not a concept. Repeated names are one
concept whose elements are all the elements that carry the name.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import numpy as np

from svgloo.engine.protocols import Concept

INKSCAPE_NS = "http://www.inkscape.org/namespaces/inkscape"
MAX_CONCEPTS = 16

_GENERATED = re.compile(
    r"""^(?:[a-z]{1,2}|path|group|grp|layer|capa|ebene|calque|livello|shape|svg|xmlid|svgid
    |clip|clippath|mask|defs|lineargradient|radialgradient|gradient|filter|pattern|symbol
    |use|image|img|text|tspan|rect|rectangle|circle|ellipse|line|polyline|polygon|object
    |obj|vector|union|subtract|intersect|frame|mesh|component|instance|artwork|layer\s?copy
    |copy|untitled|element|node|item|icon|surface|id)[\s_.:-]*\d+(?:[\s_.:-]+\d+)*[\s_-]*$""",
    re.IGNORECASE | re.VERBOSE)
_HEXLIKE = re.compile(r"^[0-9a-f]{6,}$|^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$",
                      re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def is_generated(name: str) -> bool:
    s = name.strip()
    if len(s) < 2 or not any(c.isalpha() for c in s):
        return True
    if _GENERATED.match(s) or _HEXLIKE.match(s):
        return True
    if s.lower().startswith(("xmlid_", "svgid_", "__", "_x")) and any(c.isdigit() for c in s):
        return True
    # mostly digits and punctuation (e.g. "a1b2c3d4", "_1_2_")
    digits = sum(c.isdigit() for c in s)
    return digits >= 4 and digits > sum(c.isalpha() for c in s)


_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{2,4})_")


def humanize_id(ident: str) -> str:
    """``redFlower_head`` -> "red flower head"; Illustrator's ``_x5F_`` escapes decoded;
    trailing copy numbers dropped (``hair_3_``, ``ears-174`` -> "hair", "ears")."""
    s = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), ident)
    s = _CAMEL.sub(" ", s)
    s = re.sub(r"[_\-.:]+", " ", s)
    words = s.lower().split()
    while len(words) > 1 and words[-1].isdigit():
        words.pop()
    return " ".join(words)


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def element_label(node) -> str | None:
    """The name an element gives itself, or None."""
    for child in node:
        if _local(child.tag) == "title":
            text = " ".join("".join(child.itertext()).split())
            if text and not is_generated(text):
                return text
    for attr in (f"{{{INKSCAPE_NS}}}label", "aria-label"):
        value = node.get(attr)
        if value and not is_generated(value):
            return " ".join(value.split())
    ident = node.get("id")
    if ident and not is_generated(ident):
        name = humanize_id(ident)
        if name and not is_generated(name):
            return name
    return None


def labelled_elements(doc, units=None) -> list[tuple[str, int]]:
    """(name, element index) for each labelled element that draws at least one unit."""
    from svgloo.engine.reading.units import extract_units

    units = units if units is not None else extract_units(doc, False)
    starts = sorted(doc.elements[u.element].start for u in units.units)
    out = []
    for i, node in enumerate(doc.nodes):
        if i == 0 or node is doc.root:
            continue
        el = doc.elements[i]
        k = bisect.bisect_left(starts, el.start)
        if k == len(starts) or starts[k] >= el.end:
            continue  # draws nothing (or inside <defs>)
        name = element_label(node)
        if name:
            out.append((name, i))
    return out


class LabelConceptSource:
    name = "labels"

    def __init__(self, **_: Any):
        pass

    def concepts(self, doc: Any, render_rgb: np.ndarray, options: dict | None = None) -> list[Concept]:
        options = options or {}
        by_name: dict[str, list[int]] = {}
        spelled: dict[str, str] = {}
        for name, element in labelled_elements(doc, options.get("units")):
            key = name.lower()
            spelled.setdefault(key, name)
            by_name.setdefault(key, []).append(element)
        return [Concept(spelled[k], "labels", tuple(v))
                for k, v in list(by_name.items())[:MAX_CONCEPTS]]
