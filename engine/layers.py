"""Document texts that keep only some units: the inputs of layer and leave-one-out renders.

A layer keeps a few units, yet the renderer would still parse every group, gradient,
clip path and symbol of the document. With pruning on, a layer text keeps only:
- the kept units and all their ancestors (transforms, opacity, clips stay as written);
- the resources (children of ``<defs>``; gradients, clip paths, masks, patterns, markers,
  filters and symbols anywhere) that a kept unit, one of its ancestors or a stylesheet
  references, directly or through other resources, and the ancestors of those;
- ``<style>`` and font elements.
Everything else draws nothing for this layer: groups with no kept unit below them,
unreferenced resources. Each text is the source with those spans cut out.
"""

from __future__ import annotations

import re

from svgloo.engine.blocks import stylesheet_text
from svgloo.engine.document import Document
from svgloo.engine.safety import href_of
from svgloo.engine.units import TextEdit, UnitSet, apply_edits, edits_keeping

_URL_ID = re.compile(r"url\(\s*['\"]?#([^'\")\s]+)")
_RESOURCE_TAGS = frozenset({"clipPath", "mask", "pattern", "marker", "linearGradient",
                            "radialGradient", "filter", "symbol"})
_ALWAYS_TAGS = frozenset({"style", "font", "font-face"})


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
        self.doc = doc
        self.prune = prune_resources
        self._units_by_element: dict[int, list[int]] = {}
        for u in us.units:
            self._units_by_element.setdefault(u.element, []).append(u.index)
        n = len(doc.nodes)
        self._parent = [-1] * n
        for i, node in enumerate(doc.nodes):
            parent = node.getparent()
            if parent is not None:
                self._parent[i] = doc.index_of(parent)

        ids: dict[str, int] = {}
        for i, node in enumerate(doc.nodes):
            ident = node.get("id")
            if ident is not None:
                ids.setdefault(ident, i)
        resources = self._resources(doc)
        owner: dict[int, int] = {}   # element inside a resource -> that resource
        for r in resources:
            for el in doc.nodes[r].iter():
                if isinstance(el.tag, str):
                    owner[doc.index_of(el)] = r
        resource_refs = {r: _subtree_refs(doc.nodes[r]) for r in resources}

        def closure(start_ids: set[str]) -> frozenset[int]:
            needed: set[int] = set()
            todo, seen = list(start_ids), set()
            while todo:
                ident = todo.pop()
                if ident in seen:
                    continue
                seen.add(ident)
                e = ids.get(ident)
                if e is None or e not in owner:
                    continue
                r = owner[e]
                if r not in needed:
                    needed.add(r)
                    todo.extend(resource_refs[r])
            return frozenset(needed)

        always = {i for i, e in enumerate(doc.elements) if e.tag in _ALWAYS_TAGS}
        self._always = frozenset(always | closure(set(_URL_ID.findall(stylesheet_text(doc)))))
        # A unit needs what it references and what its ancestors reference (a group's
        # clip-path or mask applies to everything below it).
        self._needs: dict[int, frozenset[int]] = {}
        for e in self._units_by_element:
            refs = _subtree_refs(doc.nodes[e])
            p = self._parent[e]
            while p >= 0:
                refs |= _refs(doc.nodes[p])
                p = self._parent[p]
            self._needs[e] = closure(refs)
        # Units, resources and style/font elements are kept or cut whole: what lies inside
        # them is never cut on its own.
        atomic = set(self._units_by_element) | set(resources) | always
        inside_atomic = set()
        for e in atomic:
            inside_atomic.update(doc.index_of(el) for el in doc.nodes[e].iter()
                                 if isinstance(el.tag, str) and el is not doc.nodes[e])
        # A masked group is never cut, even with nothing kept below it (CairoSVG paints
        # the mask over the canvas under the group whether or not the group draws), and
        # neither is what it references.
        masked = {i for i, node in enumerate(doc.nodes)
                  if (node.get("mask") or "mask" in (node.get("style") or ""))
                  and i not in self._units_by_element}
        for i in masked:
            self._always = self._always | {i} | closure(_refs(doc.nodes[i]))
        self._cuttable = [i for i in range(1, n) if i not in inside_atomic
                          and i not in masked]

    @staticmethod
    def _resources(doc: Document) -> list[int]:
        """Top-most resource elements."""
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
        """The document text with only the units in ``keep`` (unit indices)."""
        doc = self.doc
        partial: list[TextEdit] = []
        kept_elements: set[int] = set()
        for e, members in self._units_by_element.items():
            kept = [m for m in members if m in keep]
            if not kept:
                continue
            kept_elements.add(e)
            if len(kept) < len(members):
                partial.extend(self._partial_path(e, set(kept)))
        if not self.prune:
            cuts = [TextEdit(doc.elements[e].start, doc.elements[e].end, "")
                    for e in self._units_by_element if e not in kept_elements]
            return apply_edits(doc.text, cuts + partial)
        seeds = set(kept_elements) | self._always
        for e in kept_elements:
            seeds |= self._needs[e]
        kept_all = {0}
        for e in seeds:
            while e >= 0 and e not in kept_all:
                kept_all.add(e)
                e = self._parent[e]
        parent = self._parent
        cuts = [TextEdit(doc.elements[i].start, doc.elements[i].end, "")
                for i in self._cuttable if i not in kept_all and parent[i] in kept_all]
        return apply_edits(doc.text, cuts + partial)

    def _partial_path(self, element: int, kept: set[int]) -> list[TextEdit]:
        units = tuple(self.us.units[i] for i in self._units_by_element[element])
        single = UnitSet(self.us.doc, units, {element: self.us.splits[element]})
        return edits_keeping(single, kept)

    def without(self, unit: int) -> str:
        return self.keeping(set(range(len(self.us.units))) - {unit})
