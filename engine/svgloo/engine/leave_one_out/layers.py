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
from collections.abc import Iterable, Set

from svgloo.engine.leave_one_out.blocks import stylesheet_text
from svgloo.engine.reading.document import Document
from svgloo.engine.reading.safety import href_of
from svgloo.engine.reading.units import TextEdit, UnitSet, edits_keeping, splice

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
        inside_atomic: set[int] = set()
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
        # Per element, its children that a layer cuts unless they are kept, in runs of
        # siblings with only whitespace between them: a run is cut as one span. Whitespace
        # between elements draws nothing outside text, and a <text> is one unit whose
        # insides are never cut. A layer's text then costs time in what it keeps, not in
        # the size of the document.
        self._runs: dict[int, list[list[int]]] = {}
        self._run_of: dict[int, tuple[int, int]] = {}  # child -> (run, position in it)
        previous: dict[int, int] = {}
        for i in range(1, n):
            if i in inside_atomic or i in masked:
                previous.pop(self._parent[i], None)  # a child that stays breaks the run
                continue
            p = self._parent[i]
            runs = self._runs.setdefault(p, [])
            j = previous.get(p)
            if j is None or doc.text[doc.elements[j].end:doc.elements[i].start].strip():
                runs.append([])
            runs[-1].append(i)
            self._run_of[i] = (len(runs) - 1, len(runs[-1]) - 1)
            previous[p] = i
        self._element_of = [u.element for u in us.units]
        # keep -> text: leave-one-out and findings ask for the same layers (a unit alone).
        self._memo: dict[frozenset[int], str] = {}

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

    def keeping(self, keep: Set[int],
                insert: Iterable[tuple[int, int, str]] = ()) -> str:
        """The document text with only the units in ``keep`` (unit indices). Costs time
        in the size of what is kept and its siblings, not of the document: fast layers
        call this once per unit. ``insert``: (offset, offset, text) insertions inside
        kept elements' start tags (capture marks)."""
        if not insert:
            key = frozenset(keep)
            if key not in self._memo:
                self._memo[key] = self._keeping(keep, ())
            return self._memo[key]
        return self._keeping(keep, insert)

    def _keeping(self, keep: Set[int], insert: Iterable[tuple[int, int, str]]) -> str:
        doc = self.doc
        kept_units: dict[int, set[int]] = {}
        for i in keep:
            kept_units.setdefault(self._element_of[i], set()).add(i)
        spans: list[tuple[int, int, str]] = list(insert)
        for e, kept in kept_units.items():
            if len(kept) < len(self._units_by_element[e]):
                spans.extend((ed.start, ed.end, ed.new_text)
                             for ed in self._partial_path(e, kept))
        if not self.prune:
            spans.extend((doc.elements[e].start, doc.elements[e].end, "")
                         for e in self._units_by_element if e not in kept_units)
            return splice(doc.text, spans)
        seeds = set(kept_units) | self._always
        for e in kept_units:
            seeds |= self._needs[e]
        kept_all = {0}
        for e in seeds:
            while e >= 0 and e not in kept_all:
                kept_all.add(e)
                e = self._parent[e]
        # Kept children split their run; each remaining piece of a run is one cut.
        splits: dict[tuple[int, int], list[int]] = {}
        for e in kept_all:
            where = self._run_of.get(e)
            if where is not None:
                splits.setdefault((self._parent[e], where[0]), []).append(where[1])
        elements = doc.elements
        for p in kept_all:
            for r, run in enumerate(self._runs.get(p, ())):
                lo = 0
                for kept_at in sorted(splits.get((p, r), ())) + [len(run)]:
                    if kept_at > lo:
                        spans.append((elements[run[lo]].start, elements[run[kept_at - 1]].end,
                                      ""))
                    lo = kept_at + 1
        return splice(doc.text, spans)

    def _partial_path(self, element: int, kept: set[int]) -> list[TextEdit]:
        units = tuple(self.us.units[i] for i in self._units_by_element[element])
        single = UnitSet(self.us.doc, units, {element: self.us.splits[element]})
        return edits_keeping(single, kept)

    def without(self, unit: int) -> str:
        return self.keeping(set(range(len(self.us.units))) - {unit})
