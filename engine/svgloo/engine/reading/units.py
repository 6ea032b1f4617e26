"""Document -> scoring units, and the text edits that remove or isolate them.

What a unit is:
- every rendered leaf element (path, rect, circle, ellipse, line, polyline, polygon, text,
  image, use) outside non-rendering containers (defs, symbol, clipPath, mask, pattern,
  marker, gradients, filters, metadata), at any depth of groups;
- a ``<text>`` is one unit with all its ``<tspan>``/``<textPath>`` children: they share one
  text layout, so removing a tspan would re-flow its siblings;
- a ``<use>`` is one unit: the instance it draws. What it references is not a unit of its
  own unless it is also drawn in place (outside ``<defs>``);
- a compound ``<path>`` (two or more movetos) is split into one unit per subpath when
  subpath splitting is on. A subpath unit means "this subpath's contribution to the path
  as drawn": removing a hole subpath fills the hole, because that is what deleting those
  characters from ``d`` does.

All edits are done on the source text, so ancestors (transforms, opacity, clips, masks,
filters, styles) and ``<defs>``/``<style>`` stay byte for byte what the author wrote.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from svgloo.engine.result_types import UnitKind
from svgloo.engine.reading.document import SVG_NS, Document
from svgloo.engine.reading.pathdata import (PathSyntaxError, Subpath, absolute_moveto, remove_subpath,
                                            split_subpaths)

LEAF_TAGS = frozenset({"path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
                       "text", "image", "use"})
NON_RENDERING = frozenset({"defs", "symbol", "clipPath", "mask", "pattern", "marker",
                           "linearGradient", "radialGradient", "filter", "metadata", "title",
                           "desc", "style", "script", "font", "font-face", "glyph",
                           "missing-glyph", "foreignObject", "cursor", "view"})
_D_ATTR = re.compile(r"""\sd\s*=\s*(["'])""")


@dataclass(frozen=True)
class Unit:
    index: int              # document (z) order
    element: int            # index into Document.elements
    tag: str
    id: str | None
    kind: UnitKind          # "element" or "subpath"
    subpath: int | None     # subpath number inside its path, for kind == "subpath"
    start: int              # text offsets: the element's span, or the subpath's part of d
    end: int


@dataclass(frozen=True)
class PathSplit:
    """Where a split path's ``d`` value sits in the text, and its subpaths."""

    element: int
    value_start: int
    value_end: int
    subpaths: tuple[Subpath, ...]


@dataclass(frozen=True)
class UnitSet:
    doc: Document
    units: tuple[Unit, ...]
    splits: dict[int, PathSplit]   # element index -> split, for paths cut into subpaths

    def __len__(self) -> int:
        return len(self.units)

    def units_of_element(self, element: int) -> list[Unit]:
        return [u for u in self.units if u.element == element]


def _is_svg(doc: Document, i: int) -> bool:
    return doc.elements[i].namespace in (SVG_NS, None)


def _locate_d(doc: Document, element: int) -> tuple[int, int] | None:
    el = doc.elements[element]
    tag_text = doc.text[el.start:el.start_tag_end]
    m = _D_ATTR.search(tag_text)
    if not m:
        return None
    value_start = el.start + m.end()
    value_end = doc.text.index(m.group(1), value_start)
    return value_start, value_end


def _raw_d(doc: Document, split_at: tuple[int, int]) -> str:
    # Tabs and newlines are spaces to the path grammar; keep lengths so offsets stay exact.
    return doc.text[split_at[0]:split_at[1]].translate({9: 32, 10: 32, 13: 32})


def unit_elements(doc: Document) -> Iterator[int]:
    """The elements that are scoring units (or split into them), in document order:
    rendered leaves outside non-rendering containers, nothing inside a unit."""
    skip_below: set = set()
    for i, node in enumerate(doc.nodes):
        parent = node.getparent()
        if parent is not None and parent in skip_below:
            skip_below.add(node)
            continue
        el = doc.elements[i]
        if not _is_svg(doc, i) or el.tag in NON_RENDERING:
            skip_below.add(node)
            continue
        if el.tag not in LEAF_TAGS:
            continue
        skip_below.add(node)  # nothing inside a unit is a unit of its own
        yield i


def extract_units(doc: Document, split_subpaths_on: bool = True) -> UnitSet:
    units: list[Unit] = []
    splits: dict[int, PathSplit] = {}
    for i in unit_elements(doc):
        node, el = doc.nodes[i], doc.elements[i]
        ident = node.get("id")
        if el.tag == "path" and split_subpaths_on:
            split = _split_path(doc, i)
            if split is not None:
                splits[i] = split
                for sp in split.subpaths:
                    units.append(Unit(len(units), i, "path", ident, "subpath", sp.index,
                                      split.value_start + sp.start, split.value_start + sp.end))
                continue
        units.append(Unit(len(units), i, el.tag, ident, "element", None, el.start, el.end))
    return UnitSet(doc, tuple(units), splits)


@functools.lru_cache(maxsize=8192)
def _cached_split(raw: str) -> tuple[Subpath, ...] | None:
    """Subpaths of path data, or None when it does not parse. Cached: the same paths are
    split again for every variant of a document (capture texts, the daemon's re-scores)."""
    try:
        return tuple(split_subpaths(raw))
    except PathSyntaxError:
        return None


def _split_path(doc: Document, i: int) -> PathSplit | None:
    where = _locate_d(doc, i)
    if where is None:
        return None
    raw = _raw_d(doc, where)
    if "&" in raw:  # character references: raw text and parsed value differ; keep whole
        return None
    subpaths = _cached_split(raw)
    if subpaths is None:
        return None  # drawn as far as it parses by renderers; scored as one unit
    if len(subpaths) < 2:
        return None
    return PathSplit(i, where[0], where[1], tuple(subpaths))


# --- edits --------------------------------------------------------------------------

@dataclass(frozen=True)
class TextEdit:
    start: int
    end: int
    new_text: str


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (any order) to ``text``."""
    return splice(text, [(e.start, e.end, e.new_text) for e in edits])


def splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace non-overlapping (start, end, new text) spans (any order) of ``text``."""
    out = []
    pos = 0
    for start, end, new_text in sorted(spans):
        if start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:start])
        out.append(new_text)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def d_keeping(raw: str, subpaths: tuple[Subpath, ...], keep: set[int]) -> str:
    """Path data with only the subpaths in ``keep``; each kept subpath whose predecessor
    is gone gets an absolute moveto, so every kept subpath stays where it was drawn."""
    parts = []
    for sp in subpaths:
        if sp.index not in keep:
            continue
        if sp.index == 0 or (sp.index - 1) in keep or not sp.relative:
            parts.append(raw[sp.start:sp.end])
        else:
            parts.append(absolute_moveto(raw, sp) + raw[sp.first_pair_end:sp.end])
    return " ".join(parts)


def edits_keeping(us: UnitSet, keep: set[int]) -> list[TextEdit]:
    """Edits that remove every unit not in ``keep`` (unit indices)."""
    edits: list[TextEdit] = []
    by_element: dict[int, list[Unit]] = {}
    for u in us.units:
        by_element.setdefault(u.element, []).append(u)
    for element, members in by_element.items():
        kept = [u for u in members if u.index in keep]
        if len(kept) == len(members):
            continue
        el = us.doc.elements[element]
        if not kept:
            edits.append(TextEdit(el.start, el.end, ""))
            continue
        split = us.splits[element]
        raw = us.doc.text[split.value_start:split.value_end]
        new_d = d_keeping(raw, split.subpaths, {u.subpath for u in kept if u.subpath is not None})
        edits.append(TextEdit(split.value_start, split.value_end, new_d))
    return edits


def text_keeping(us: UnitSet, keep: set[int]) -> str:
    return apply_edits(us.doc.text, edits_keeping(us, keep))


def text_without(us: UnitSet, remove: set[int]) -> str:
    return text_keeping(us, {u.index for u in us.units} - set(remove))


def removal_edit(us: UnitSet, unit_index: int) -> TextEdit:
    """The smallest edit that removes one unit (what an editor's quick fix applies)."""
    u = us.units[unit_index]
    if u.kind == "element":
        return TextEdit(u.start, u.end, "")
    split = us.splits[u.element]
    assert u.subpath is not None  # not an element: a subpath unit
    raw = us.doc.text[split.value_start:split.value_end]
    return TextEdit(split.value_start, split.value_end,
                    remove_subpath(raw, list(split.subpaths), u.subpath))
