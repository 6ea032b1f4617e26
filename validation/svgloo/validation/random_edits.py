"""Seeded random edits of an SVG text (bench_loo --incremental and the tests of incremental
re-scoring), the kinds an author makes in an editor: a colour
changed, a shape moved a little, an element removed, an element added (a copy of one,
recoloured, right after it)."""

from __future__ import annotations

import random
import re

from svgloo.engine.reading.document import parse_document
from svgloo.engine.reading.units import extract_units

KINDS = ("colour", "move", "remove", "add")
_COLOUR = re.compile(r"(#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|(?<=[\"':\s])(?:red|blue|green|"
                     r"black|white|none|gray|grey|orange|yellow|purple)\b)")
_NUMBER = re.compile(r"-?\d*\.?\d+(?:[eE][-+]?\d+)?")
_FILL = re.compile(r"""\sfill\s*=\s*(["'])([^"']*)\1""")
_ID = re.compile(r"""\sid\s*=\s*(["'])[^"']*\1""")


def _start_tag_end(text: str, start: int) -> int:
    quote = None
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == ">":
            return i
    return len(text)


def random_edit(text: str, kind: str, rng: random.Random, name: str = "<edit>") -> str:
    """``text`` with one edit of ``kind`` at a random unit element (the text itself when the
    document has no unit)."""
    doc = parse_document(text, name)
    elements = sorted({u.element for u in extract_units(doc).units})
    if not elements:
        return text
    span = doc.elements[rng.choice(elements)]
    start, end = span.start, span.end
    colour = f"#{rng.randrange(0x1000000):06x}"
    if kind == "colour":
        tag_end = _start_tag_end(text, start)
        found = list(_COLOUR.finditer(text, start, tag_end))
        if found:
            m = rng.choice(found)
            return text[:m.start()] + colour + text[m.end():]
        fill = _FILL.search(text, start, tag_end)
        if fill:  # a paint server or a colour keyword: a colour instead
            return text[:fill.start(2)] + colour + text[fill.end(2):]
        name_end = start + 1
        while text[name_end] not in " \t\r\n/>":
            name_end += 1
        return text[:name_end] + f' fill="{colour}"' + text[name_end:]
    if kind == "move":
        tag_end = _start_tag_end(text, start)
        found = [m for m in _NUMBER.finditer(text, start, tag_end)
                 if text[m.start() - 1] not in "#" and not text[m.start() - 1].isalpha()]
        if not found:
            return text
        m = rng.choice(found)
        value = float(m.group()) + rng.choice((-1, 1)) * rng.uniform(0.3, 3.0)
        return text[:m.start()] + f"{value:.3f}" + text[m.end():]
    if kind == "remove":
        return text[:start] + text[end:]
    if kind == "add":
        copy = _ID.sub("", text[start:end], count=1)
        copy = _COLOUR.sub(colour, copy, count=1)
        return text[:end] + copy + text[end:]
    raise ValueError(kind)
