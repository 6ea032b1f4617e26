"""Document texts that keep only some units: the inputs of layer and leave-one-out renders.

A layer keeps a few units, yet the renderer would still parse every gradient, clip path
and symbol of the document. Resources (children of ``<defs>``, and gradients, clip paths,
masks, patterns, markers, filters and symbols anywhere) that no kept unit, none of its
ancestors and no stylesheet references - directly or through other resources - draw
nothing, so a layer text leaves them out. Each text is one join of precomputed pieces.
"""

from __future__ import annotations

import re

from .blocks import stylesheet_text
from .document import Document
from .safety import href_of
from .units import UnitSet, apply_edits, edits_keeping

_URL_ID = re.compile(r"url\(\s*['\"]?#([^'\")\s]+)")
_RESOURCE_TAGS = frozenset({"clipPath", "mask", "pattern", "marker", "linearGradient",
                            "radialGradient", "filter", "symbol"})


def _refs(node) -> set[str]:
    """Ids referenced by one element's own attributes."""
    found = set()
    href = href_of(node)
    if href and href.startswith("#"):
        found.add(href[1:])
    for value in node.attrib.values():
        if "url(" in value:
            found.update(_URL_ID.findall(value))
    return found


def _subtree_refs(node) -> set[str]:
    found: set[str] = set()
    for el in node.iter():
        if isinstance(el.tag, str):
            found |= _refs(el)
    return found


class LayerTexts:
    def __init__(self, us: UnitSet, prune_resources: bool = True):
        self.us = us
        doc = us.doc
        self.text = doc.text
        self._units_by_element: dict[int, list[int]] = {}
        for u in us.units:
            self._units_by_element.setdefault(u.element, []).append(u.index)

        resources = self._resources(doc) if prune_resources else []
        # Pieces in document order: ("unit", element) or ("res", element).
        pieces = sorted([(doc.elements[e].start, "unit", e) for e in self._units_by_element] +
                        [(doc.elements[e].start, "res", e) for e in resources])
        self._kinds: list[tuple[str, int]] = []
        self._gaps: list[str] = []
        self._texts: list[str] = []
        pos = 0
        for start, kind, e in pieces:
            span = doc.elements[e]
            self._gaps.append(self.text[pos:span.start])
            self._texts.append(self.text[span.start:span.end])
            self._kinds.append((kind, e))
            pos = span.end
        self._tail = self.text[pos:]

        # Which resource pieces each unit needs (transitively), and what is always needed.
        res_piece = {e: k for k, (kind, e) in enumerate(self._kinds) if kind == "res"}
        ids = {}
        for i, node in enumerate(doc.nodes):
            ident = node.get("id")
            if ident is not None:
                ids.setdefault(ident, i)
        owner_piece: dict[int, int] = {}   # any element inside a resource -> its piece
        for e, k in res_piece.items():
            for el in doc.nodes[e].iter():
                if isinstance(el.tag, str):
                    owner_piece[doc.index_of(el)] = k
        res_refs = {k: _subtree_refs(doc.nodes[e]) for e, k in res_piece.items()}

        def closure(start_ids: set[str]) -> frozenset[int]:
            needed: set[int] = set()
            todo = list(start_ids)
            seen: set[str] = set()
            while todo:
                ident = todo.pop()
                if ident in seen:
                    continue
                seen.add(ident)
                e = ids.get(ident)
                if e is None or e not in owner_piece:
                    continue
                k = owner_piece[e]
                if k not in needed:
                    needed.add(k)
                    todo.extend(res_refs[k])
            return frozenset(needed)

        always = set(_URL_ID.findall(stylesheet_text(doc)))
        # Ancestors' references (a group's clip-path) count for every unit below them.
        for node in doc.nodes:
            tag = node.tag
            if isinstance(tag, str) and doc.index_of(node) not in owner_piece \
                    and doc.index_of(node) not in self._units_by_element:
                always |= _refs(node) if not _inside_unit(node, self._units_by_element,
                                                             doc) else set()
        self._always = closure(always)
        self._needs: dict[int, frozenset[int]] = {}
        for e in self._units_by_element:
            self._needs[e] = closure(_subtree_refs(doc.nodes[e]))

    @staticmethod
    def _resources(doc: Document) -> list[int]:
        """Top-most prunable resource elements."""
        out = []
        skip: set = set()
        for i, node in enumerate(doc.nodes):
            parent = node.getparent()
            if parent is not None and parent in skip:
                skip.add(node)
                continue
            tag = doc.elements[i].tag
            parent_tag = doc.elements[doc.index_of(parent)].tag if parent is not None else None
            if tag in ("style", "script"):
                continue
            if tag in _RESOURCE_TAGS or (parent_tag == "defs" and node.get("id") is not None):
                out.append(i)
                skip.add(node)
        return out

    def keeping(self, keep: set[int]) -> str:
        needed = set(self._always)
        for e, members in self._units_by_element.items():
            if any(m in keep for m in members):
                needed |= self._needs[e]
        parts: list[str] = []
        for k, (gap, piece, (kind, e)) in enumerate(zip(self._gaps, self._texts, self._kinds)):
            parts.append(gap)
            if kind == "res":
                if k in needed:
                    parts.append(piece)
                continue
            members = self._units_by_element[e]
            kept = [m for m in members if m in keep]
            if len(kept) == len(members):
                parts.append(piece)
            elif kept:
                parts.append(self._partial_path(e, piece, set(kept)))
        parts.append(self._tail)
        return "".join(parts)

    def _partial_path(self, element: int, piece: str, kept: set[int]) -> str:
        start = self.us.doc.elements[element].start
        units = tuple(self.us.units[i] for i in self._units_by_element[element])
        single = UnitSet(self.us.doc, units, {element: self.us.splits[element]})
        edits = edits_keeping(single, kept)
        return apply_edits(piece, [type(e)(e.start - start, e.end - start, e.new_text)
                                   for e in edits])

    def without(self, unit: int) -> str:
        return self.keeping(set(range(len(self.us.units))) - {unit})


def _inside_unit(node, units_by_element, doc) -> bool:
    parent = node.getparent()
    while parent is not None:
        if doc.index_of(parent) in units_by_element:
            return True
        parent = parent.getparent()
    return False
