"""Layers rendered through the render pool, each once: by key in a caller's layer cache,
several to a render pass where they can be captured from one drawing of the document.

A layer's key is a hash of its text and the raster size (``layer_key``): a long-lived
caller (the daemon, the language server) keeps the cache, so after a small edit only the
layers whose text changed are rendered again; findings read the same keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableMapping
from dataclasses import dataclass

from svgloo.engine.leave_one_out.layers import LayerTexts
from svgloo.engine.limits import Limits
from svgloo.engine.progress import Stage
from svgloo.engine.rendering.raster import NO_LAYER, Layer
from svgloo.engine.rendering.render import CAPTURE_ATTR
from svgloo.engine.rendering.render_jobs import job_capture_layers, job_render_layers
from svgloo.engine.reading.units import UnitSet
from svgloo.engine.processes.workers import RenderPool, chunked


def layer_key(text: str, size: int) -> str:
    """The cache key of the layer ``text`` renders to at ``size``."""
    return hashlib.blake2b(f"{size}\0{text}".encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class RenderItem:
    """A layer to render: its text; for a capture, the units that a shared pass keeps for
    it and the element whose drawing is captured; ``box_only`` when only its box is used
    (a capture under a group effect misses the group's opacity)."""

    text: str
    keep: frozenset[int] | set[int] | None = None
    element: int | None = None
    box_only: bool = False


class Captures:
    """Texts for capture passes: the document with every kept unit element's start tag
    marked with its element index, keeping a chosen set of units (the rest pruned as in
    any layer text). Items captured in one pass must draw different elements.

    The text is the layer text with the marks inserted: what the layer texts of the
    marked document give (tests/engine/test_layers.py), without parsing that document."""

    def __init__(self, us: UnitSet, texts: LayerTexts):
        doc = us.doc
        self.texts = texts  # the layer texts, unmarked
        self._element_of = [u.element for u in us.units]
        self._mark: dict[int, tuple[int, int, str]] = {}
        for element in set(self._element_of):
            name_end = doc.elements[element].start + 1
            while doc.text[name_end] not in " \t\r\n/>":
                name_end += 1
            self._mark[element] = (name_end, name_end, f' {CAPTURE_ATTR}="{element}"')

    def keeping(self, keep: set[int]) -> str:
        marks = [self._mark[e] for e in {self._element_of[k] for k in keep}]
        return self.texts.keeping(keep, marks)

    @staticmethod
    def passes(items: list[RenderItem], workers: int) -> list[list[int]]:
        """Pack item indices into passes, no element twice in a pass, spread over at least
        ``workers`` passes when there is enough to share."""
        count = workers if len(items) >= 8 else 1
        passes: list[list[int]] = [[] for _ in range(count)]
        used: list[set[int | None]] = [set() for _ in range(count)]
        for n, item in enumerate(items):
            order = sorted(range(len(passes)), key=lambda p: len(passes[p]))
            target = next((p for p in order if item.element not in used[p]), None)
            if target is None:
                passes.append([])
                used.append(set())
                target = len(passes) - 1
            passes[target].append(n)
            used[target].add(item.element)
        return [p for p in passes if p]


class LayerRenderer:
    """Renders layers through the pool, reusing a caller's layer cache: captured in shared
    passes where the item allows it, else one render per layer text."""

    def __init__(self, name: str, size: int, limits: Limits, pool: RenderPool,
                 cache: MutableMapping | None, per_job: int):
        self.name, self.size, self.limits, self.pool = name, size, limits, pool
        self.cache = cache if cache is not None else {}
        self.per_job = per_job
        self.renders = 0
        self.capture: Captures | None = None
        self.last_keys: list[str] = []  # the keys of the last render()'s items
        self.element_keys: dict[int, tuple[str, ...]] = {}  # compound path -> its windows' keys

    def render(self, items: list[RenderItem], stage: Stage) -> list[Layer]:
        """The items' layers; ``stage`` advances by one step per item."""
        keys = [("box:" if item.box_only else "") + layer_key(item.text, self.size)
                for item in items]
        self.last_keys = keys
        # Results are kept here for this call: the cache may be bounded and evict what it
        # was just given (a daemon's layer cache on a large document).
        got: dict[str, Layer] = {}
        for key in set(keys):
            try:
                got[key] = self.cache[key]
            except KeyError:
                pass
        missing = list({key: i for i, key in enumerate(keys) if key not in got}.values())
        stage.advance(len(items) - len(missing))  # cached, or the same as another item
        captured = [i for i in missing if items[i].keep is not None and self.capture]
        single = [i for i in missing if items[i].keep is None or not self.capture]
        if captured:
            passes = Captures.passes([items[i] for i in captured], self.pool.workers)
            assert self.capture is not None  # captured is empty without it
            jobs: list[tuple] = [(self.capture.keeping(set().union(*(items[captured[n]].keep or ()
                                                               for n in p))),
                     self.size, self.limits, self.name) for p in passes]
            for p, found in zip(passes, self.pool.map(job_capture_layers, jobs, self.name,
                                                      on_done=lambda j: stage.advance(
                                                          len(passes[j])))):
                for n in p:
                    i = captured[n]
                    got[keys[i]] = found.get(str(items[i].element), NO_LAYER)
                    self.cache[keys[i]] = got[keys[i]]
            self.renders += len(jobs)
        jobs = [([items[i].text for i in chunk], self.size, self.limits, self.name)
                for chunk in chunked(single, self.per_job)]
        fresh = [layer for chunk in self.pool.map(job_render_layers, jobs, self.name,
                                                  on_done=lambda j: stage.advance(
                                                      len(jobs[j][0])))
                 for layer in chunk]
        for i, layer in zip(single, fresh):
            got[keys[i]] = self.cache[keys[i]] = layer
        self.renders += len(single)
        return [got[key] for key in keys]


__all__ = ["layer_key", "RenderItem", "Captures", "LayerRenderer"]
