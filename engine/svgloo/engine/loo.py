"""Leave-one-out images: ``naive`` (one full render per unit) and ``fast`` (layers).

Both return the same thing: the full render and, per unit, a ``Patch`` - the box outside
which the leave-one-out image equals the full render, and the pixels inside it.

``fast``: render each block of units (see blocks.py) as its own transparent layer, and a
multi-unit block once more without each of its units (a local block: each member alone,
then its overlapping neighbours without it). Cairo draws each element with "over" onto
the canvas, so the picture is the layers composited in z-order; the image without unit
k, inside the box where k's block has pixels, is

    (layers above k's block) over (k's block without k) over (layers below)

on transparent, then over white. A forward sweep keeps "layers below"; the layers above
that touch the box are composited in z-order, with cairo's own 8-bit rounding, so each
leave-one-out image costs a few small composites instead of a render of the document.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field

import numpy as np

from svgloo.engine.composite import composite_without, diff_box, over_u8, paste  # noqa: F401
from svgloo.engine.blocks import Block, compute_blocks, has_structural_css, unaffected_units
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.pathdata import with_absolute_movetos
from svgloo.engine.render import (CAPTURE_ATTR, over_white, render_captured_layers, render_layer,
                                  render_rgba, render_subpath_work)
from svgloo.engine.layers import LayerTexts
from svgloo.engine.document import parse_document
from svgloo.engine.units import TextEdit, UnitSet, apply_edits, extract_units
from svgloo.engine.progress import ProgressFn, Stage, WorkProgress
from svgloo.engine.workers import RenderPool, chunked, shared_pool

Box = tuple[int, int, int, int]  # y0, y1, x0, x1 (half-open)

CHANGED_THRESHOLD = 12  # /255: the published code's changed-pixel threshold


@dataclass(frozen=True)
class Patch:
    """The leave-one-out image equals the full render outside ``box``."""

    box: Box | None
    pixels: np.ndarray | None  # RGB uint8 of the leave-one-out image inside ``box``

    def materialize(self, full: np.ndarray) -> np.ndarray:
        image = full.copy()
        if self.box is not None:
            y0, y1, x0, x1 = self.box
            image[y0:y1, x0:x1] = self.pixels
        return image

    def _change(self, full: np.ndarray) -> np.ndarray:
        """Per-pixel max-channel |full - without| inside the box, as integers 0-255."""
        y0, y1, x0, x1 = self.box
        diff = np.abs(full[y0:y1, x0:x1].astype(np.int16) - self.pixels.astype(np.int16))
        return diff.max(axis=2)

    def footprint(self, full: np.ndarray) -> np.ndarray:
        """Per-pixel max-channel |full - without| / 255 as float32 (H, W)."""
        fp = np.zeros(full.shape[:2], np.float32)
        if self.box is not None:
            y0, y1, x0, x1 = self.box
            fp[y0:y1, x0:x1] = self._change(full) / 255.0
        return fp

    def largest_change(self, full: np.ndarray) -> int:
        """The most any channel moves without the unit (0-255; 0 outside the box)."""
        return 0 if self.box is None else int(self._change(full).max())

    def footprint_pixels(self, full: np.ndarray) -> int:
        """Pixels that change by more than CHANGED_THRESHOLD/255 without the unit."""
        if self.box is None:
            return 0
        return int((self._change(full) > CHANGED_THRESHOLD).sum())


@dataclass
class LooResult:
    full: np.ndarray                 # RGB uint8 (S, S, 3): the document over white
    patches: list[Patch]
    method: str
    renders: int
    blocks: list[Block] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    # unit -> its layer drawn alone (box, RGBA crop), where fast drew it on the way (the
    # subpaths of windowed compound paths, when asked): findings need not render them.
    alone: dict[int, tuple] = field(default_factory=dict)
    # What an edit is compared with (fast only; see loo_fast's ``previous``): per block,
    # the keys of every layer it was composited from, and those layers and regions.
    block_keys: list[tuple] | None = field(default=None, repr=False)
    block_layer: list[tuple] | None = field(default=None, repr=False)
    without_layer: dict[int, tuple] | None = field(default=None, repr=False)
    unit_region: list[Box | None] | None = field(default=None, repr=False)
    # Units whose patch was composited in this call (None: all of them).
    composited: set[int] | None = field(default=None, repr=False)
    # unit -> Patch.footprint_pixels, as counted (kept from ``previous`` with the patch).
    footprint_counts: dict[int, int] = field(default_factory=dict, repr=False)
    # The layer texts fast built (findings reuse them for the same units).
    texts: LayerTexts | None = field(default=None, repr=False)

    def footprint_pixels(self, unit: int) -> int:
        if unit not in self.footprint_counts:
            self.footprint_counts[unit] = self.patches[unit].footprint_pixels(self.full)
        return self.footprint_counts[unit]

    def image_without(self, unit: int) -> np.ndarray:
        return self.patches[unit].materialize(self.full)


def union_box(a: Box | None, b: Box | None) -> Box | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3])


# --- worker jobs (top level so they pickle) -------------------------------------------

def job_render_layers(texts: list[str], size: int, limits: Limits, name: str):
    """Render texts as transparent layers, cropped to their alpha box."""
    return [render_layer(text, size, limits, name) for text in texts]


def job_render_full(text: str, size: int, limits: Limits, name: str):
    t = time.perf_counter()
    rgba = render_rgba(text, size, limits, name)
    return over_white(rgba), time.perf_counter() - t


def job_render_without(texts: list[str], size: int, limits: Limits, name: str,
                       full: np.ndarray):
    """Naive leave-one-out renders, returned as patches against ``full``."""
    out = []
    for text in texts:
        rgb = over_white(render_rgba(text, size, limits, name))
        box = diff_box(rgb, full)
        out.append((box, None if box is None else rgb[box[0]:box[1], box[2]:box[3]].copy()))
    return out


def absolute_subpaths(us: UnitSet, limits: Limits = DEFAULT_LIMITS) -> UnitSet:
    """The same units in a text whose compound paths start every subpath with an absolute
    moveto (see pathdata.with_absolute_movetos). Both methods render this text, full
    render included: without it, removing a subpath nudges every later subpath that
    starts with a relative ``m`` by cairo's fixed-point rounding, which changes edge
    pixels anywhere in the path - noise that is no part of the subpath's contribution."""
    doc = us.doc
    edits = []
    for split in us.splits.values():
        if any(sp.relative for sp in split.subpaths):
            raw = doc.text[split.value_start:split.value_end]
            edits.append(TextEdit(split.value_start, split.value_end,
                                  with_absolute_movetos(raw, list(split.subpaths))))
    if not edits:
        return us
    canonical = extract_units(parse_document(apply_edits(doc.text, edits), doc.name, limits),
                              True)
    if [(u.element, u.subpath) for u in canonical.units] != \
            [(u.element, u.subpath) for u in us.units]:
        return us  # cannot happen for data that split; keep the text as written
    return canonical


# --- the two methods ------------------------------------------------------------------


def _jobs_per_chunk(full_seconds: float, limits: Limits) -> int:
    # Keep each job well inside the render timeout, and big enough to amortise IPC.
    per = max(full_seconds, 0.002)
    return int(max(1, min(64, (limits.render_timeout_s / 4) / per)))


def render_full(us: UnitSet, size: int, pool: RenderPool, limits: Limits):
    [(full, seconds)] = pool.map(job_render_full, [(us.doc.text, size, limits, us.doc.name)],
                                 us.doc.name)
    return full, seconds


def loo_naive(us: UnitSet, size: int = 384, limits: Limits = DEFAULT_LIMITS,
              pool: RenderPool | None = None,
              progress: WorkProgress | ProgressFn | None = None) -> LooResult:
    pool = pool or shared_pool(limits)
    work = WorkProgress.of(progress)
    n = len(us.units)
    full_stage, renders = work.stage(1), work.stage(n)
    work.start()
    t0 = time.perf_counter()
    us = absolute_subpaths(us, limits)
    full, full_s = render_full(us, size, pool, limits)
    full_stage.finish()
    texts = LayerTexts(us, prune_resources=False)
    per_job = _jobs_per_chunk(full_s, limits)
    jobs = [([texts.without(i) for i in chunk], size, limits, us.doc.name, full)
            for chunk in chunked(range(n), per_job)]
    results = pool.map(job_render_without, jobs, us.doc.name,
                       on_done=lambda j: renders.advance(len(jobs[j][0])))
    renders.finish()
    patches = [Patch(box, px) for chunk in results for box, px in chunk]
    return LooResult(full, patches, "naive", renders=n + 1,
                     timings={"render_s": time.perf_counter() - t0})


def loo_fast(us: UnitSet, size: int = 384, limits: Limits = DEFAULT_LIMITS,
             pool: RenderPool | None = None,
             progress: WorkProgress | ProgressFn | None = None,
             layer_cache: MutableMapping | None = None, alone: bool = False,
             previous: LooResult | None = None) -> LooResult:
    """``layer_cache``: optional mapping (hash of layer text and size) -> rendered layer,
    kept by a long-lived caller (the daemon) so that after a small edit only the layers
    whose text changed are rendered again. ``alone``: also draw each windowed subpath
    alone, in its window (``LooResult.alone``; findings use them). ``previous``: the
    result for an earlier text of the same document (same size): units whose patch
    cannot have changed keep it (see _unchanged_units); the patches are those of a call
    without ``previous``, bit for bit."""
    pool = pool or shared_pool(limits)
    t0 = time.perf_counter()
    us = absolute_subpaths(us, limits)
    blocks = compute_blocks(us)
    if len(us.units) > 1 and len(blocks) == 1 and not blocks[0].local:
        # One block holding every unit (a mask, a filter on everything): its units can
        # only be rendered whole-but-one, which is the naive method without the layers
        # and composites fast would add on top.
        result = loo_naive(us, size, limits, pool, progress)
        result.blocks = blocks
        return result
    work = WorkProgress.of(progress)
    n = len(us.units)
    full_stage = work.stage(1)

    def full_render():
        full = render_full(us, size, pool, limits)
        full_stage.finish()
        return full

    # The full render runs beside the layer renders (the pool is shared and thread-safe).
    full_job = _background(full_render)
    unaffected = unaffected_units(us)
    # Every stage's steps, reserved before any is reported: subpath boxes and windows of
    # compound paths, round 1 (every block, and members of multi-unit blocks), round 2
    # (members of local blocks), and each unit's composite.
    paths = _windowed_paths(us, blocks, unaffected)
    in_paths = sum(len(blocks[b]) for b in paths)
    multi = [len(block) for block in blocks if len(block) > 1]
    stages = {"boxes": work.stage(in_paths), "windows": work.stage(in_paths * (1 + alone)),
              "round1": work.stage(len(blocks) + sum(multi)),
              "round2": work.stage(sum(len(b) for b in blocks if len(b) > 1 and b.local)),
              "composite": work.stage(n)}
    work.start()
    # Structural selectors see siblings, resources included: then keep every resource.
    texts = LayerTexts(us, prune_resources=not has_structural_css(us.doc))
    renderer = _LayerRenderer(us.doc.name, size, limits, pool, layer_cache,
                              _jobs_per_chunk(_guess_render_seconds(us) / max(1, n) * 4, limits))
    # Layers are captured in shared render passes where possible (see _Captures): exact
    # for units with no group effect above them; for members of local blocks "alone"
    # only the box is needed, which a capture gets right anyway.
    renderer.capture = _Captures(us, texts)
    element_of = [u.element for u in us.units]

    # Compound paths drawn with no group effect above them: each subpath in its window.
    unit_region: list[Box | None] = [None] * n
    without_layer: dict[int, tuple] = {}
    alone_layer: dict[int, tuple] | None = {} if alone else None
    windowed = _subpath_windows(us, blocks, paths, renderer, size, unit_region,
                                without_layer, stages["boxes"], stages["windows"],
                                alone_layer)

    # Round 1: every block as a layer; members of local blocks alone (to find where each
    # acts); members of other multi-unit blocks: the block without each of them.
    local_multi = [b for b, blk in enumerate(blocks)
                   if len(blk) > 1 and blk.local and b not in windowed]
    round1: list[tuple[str, int]] = [("block", b) for b in range(len(blocks))]
    for b, block in enumerate(blocks):
        if len(block) > 1 and b not in windowed:
            kind = "solo" if block.local else "without"
            round1.extend((kind, k) for k in block.units)
    # "Alone" for a subpath means its whole path (see blocks.py): every subpath of a path
    # gets the path's box, and neighbourhoods hold whole paths only.
    # One shared set per path (not one per subpath: a path of n subpaths would hold n^2).
    whole = _whole_paths(us)
    items = []
    solo_texts: dict = {}
    for kind, i in round1:
        text = _layer_text(texts, blocks, (kind, i), whole, solo_texts)
        if kind == "block" and len(blocks[i]) == 1 and blocks[i].lo in unaffected:
            items.append(_Item(text, {blocks[i].lo}, element_of[blocks[i].lo]))
        elif kind == "solo":
            items.append(_Item(text, whole.get(i, {i}), element_of[i], box_only=True))
        else:
            items.append(_Item(text))
    layers1 = renderer.render(items, stages["round1"])
    stages["round1"].finish()
    # Each block's layers by key: a block whose keys are all as before drew the same.
    block_of = {k: b for b, block in enumerate(blocks) for k in block.units}
    layer_keys: list[list[str]] = [[] for _ in blocks]
    for b, e in paths.items():
        if b in windowed:
            layer_keys[b].extend(renderer.element_keys.get(e, ()))
    for (kind, i), key in zip(round1, renderer.last_keys):
        layer_keys[i if kind == "block" else block_of[i]].append(key)
    block_layer = [None] * len(blocks)
    solo: dict[int, tuple] = {}
    for (kind, i), layer in zip(round1, layers1):
        if kind == "block":
            block_layer[i] = layer
        elif kind == "solo":
            solo[i] = layer
        else:
            without_layer[i] = layer

    # Round 2, local blocks: each member's neighbourhood (members overlapping it), without
    # it. Inside the member's own box that equals the whole block without it.
    round2: list[tuple[int, set[int]]] = []
    for b in local_multi:
        members = list(blocks[b].units)
        boxes = {k: _grow(solo[k][0], 1, size) for k in members}
        for k in members:
            unit_region[k] = boxes[k]
            if boxes[k] is None:
                without_layer[k] = (None, None)
                continue
            near = {j for j in members if j != k and _intersects(boxes[j], boxes[k])}
            if near:
                round2.append((k, near))
            else:
                without_layer[k] = (None, None)
    # A local block of unaffected units is one compound path: its variants are captured.
    layers2 = renderer.render([
        _Item(texts.keeping(near), near, element_of[k]) if near <= unaffected and
        len({element_of[j] for j in near}) == 1 else _Item(texts.keeping(near))
        for k, near in round2], stages["round2"])
    stages["round2"].finish()
    for (k, _), layer, key in zip(round2, layers2, renderer.last_keys):
        without_layer[k] = layer
        layer_keys[block_of[k]].append(key)
    t_render = time.perf_counter() - t0

    # Where each unit's leave-one-out image can differ from the full render: its own
    # layer's box (singletons), its window or box (local blocks), or what its block draws
    # with and without it. Within that, only where the block's layer changes without the
    # unit: elsewhere the whole stack is the same with or without it, so the composite
    # would only redraw the full render (a subpath's window spans the canvas's width).
    for b, block in enumerate(blocks):
        if len(block) == 1:
            unit_region[block.lo] = block_layer[b][0]
            continue
        for k in block.units:
            if not block.local and b not in windowed:
                unit_region[k] = union_box(block_layer[b][0], without_layer[k][0])
            unit_region[k] = _changed_box(unit_region[k], without_layer[k], block_layer[b])

    full, _ = full_job.result()
    block_keys = [tuple(keys) for keys in layer_keys]
    only = _unchanged_units(previous, blocks, block_keys, block_layer, unit_region, full)
    patches: list[Patch | None] = [None] * n
    counts: dict[int, int] = {}
    if only is not None:
        patches = list(previous.patches)
        # A kept patch's footprint reads the full render inside it: unchanged there too.
        counts = {k: c for k, c in previous.footprint_counts.items() if k in only}
        only = set(range(n)) - only
        stages["composite"].advance(n - len(only))
    _composite(size, blocks, block_layer, without_layer, unit_region, patches, full,
               stages["composite"], only)
    stages["composite"].finish()
    return LooResult(full, patches, "fast", renders=renderer.renders + 1, blocks=blocks,
                     timings={"render_s": t_render,
                              "composite_s": time.perf_counter() - t0 - t_render},
                     alone=alone_layer or {}, block_keys=block_keys,
                     block_layer=block_layer, without_layer=without_layer,
                     unit_region=unit_region, composited=only, footprint_counts=counts,
                     texts=texts)


def _unchanged_units(previous: LooResult | None, blocks: list[Block],
                     block_keys: list[tuple], block_layer: list[tuple],
                     unit_region: list[Box | None], full: np.ndarray) -> set[int] | None:
    """Units whose leave-one-out patch is the one in ``previous`` (None: no previous
    result to compare with, or a different structure: composite every unit).

    A unit's patch is a function of its region, the layers of its own block, the other
    blocks' layers inside its region, and the full render inside its region (the patch
    is shrunk to where it differs from it). A block whose layer keys are all as before
    drew the same pixels; a block that changed changed pixels only inside its old and
    new layer boxes, and the full render only inside the box where the two differ. So a
    unit of an unchanged block whose region meets none of those boxes keeps its patch."""
    if (previous is None or previous.block_keys is None or previous.blocks != blocks
            or previous.full.shape != full.shape
            or len(previous.block_keys) != len(block_keys)):
        return None
    changed: Box | None = diff_box(previous.full, full)
    units: set[int] = set()
    for b, keys in enumerate(block_keys):
        if keys == previous.block_keys[b]:
            units.update(blocks[b].units)
        else:
            changed = union_box(changed, union_box(previous.block_layer[b][0],
                                                   block_layer[b][0]))
    return {k for k in units if not _intersects(unit_region[k], changed)}


class _background:
    """Run ``fn(*args)`` in a thread; ``result()`` waits and re-raises its error."""

    def __init__(self, fn, *args):
        self._result = self._error = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn, args):
        try:
            self._result = fn(*args)
        except BaseException as exc:  # handed to the caller in result()
            self._error = exc

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def _guess_render_seconds(us: UnitSet) -> float:
    """A rough full-render time from the document's size (about 1 ms per 2 KB of text
    on this renderer), used only to size render jobs."""
    return 0.005 + len(us.doc.text) / 2_000_000


def _whole_paths(us: UnitSet) -> dict[int, frozenset[int]]:
    """Subpath unit -> every subpath of its path: the same frozenset object for all the
    subpaths of one path, so memory and time stay linear in the number of subpaths."""
    of_element: dict[int, set[int]] = {}
    for u in us.units:
        if u.kind == "subpath":
            of_element.setdefault(u.element, set()).add(u.index)
    shared = {e: frozenset(members) for e, members in of_element.items()}
    return {u.index: shared[u.element] for u in us.units if u.kind == "subpath"}


def _layer_text(texts: LayerTexts, blocks: list[Block], request: tuple[str, int],
                whole: dict[int, frozenset[int]], memo: dict | None = None) -> str:
    kind, i = request
    if kind == "block":
        return texts.keeping(set(blocks[i].units))
    if kind == "solo":
        keep = whole.get(i, frozenset((i,)))
        if memo is None:
            return texts.keeping(keep)
        # The subpaths of one path share one text ("alone" is their whole path): build it
        # once, not once per subpath (each costs the path's length).
        if id(keep) not in memo:
            memo[id(keep)] = (keep, texts.keeping(keep))
        return memo[id(keep)][1]
    block = next(b for b in blocks if b.lo <= i <= b.hi)
    return texts.keeping(set(block.units) - {i})


# --- compound paths, subpath by subpath ------------------------------------------------

SUBPATH_MARGIN = 2  # device pixels around a subpath's extents: anti-aliasing reaches 1


def job_subpath_work(text: str, size: int, job: dict, limits: Limits, name: str) -> dict:
    return render_subpath_work(text, size, job, limits, name)


def _windowed_paths(us: UnitSet, blocks: list[Block], unaffected: set[int]) -> dict[int, int]:
    """block index -> path element, for blocks that are exactly the subpaths of one path
    with no group effect above it (its layers are then captured exactly)."""
    out = {}
    for b, block in enumerate(blocks):
        if len(block) < 2 or not block.local:
            continue
        element = us.units[block.lo].element
        split = us.splits.get(element)
        if (split is not None and len(split.subpaths) == len(block)
                and all(us.units[i].element == element and i in unaffected
                        for i in block.units)):
            out[b] = element
    return out


def _pack(work: list[tuple[int, list]], per_job: int) -> list[dict[int, tuple[int, list]]]:
    """Split each element's work list into chunks of at most ``per_job`` and pack chunks
    into jobs (no element twice in a job): [{element: (offset, chunk)}, ...]."""
    jobs: list[dict] = []
    sizes: list[int] = []
    for element, items in work:
        for lo in range(0, len(items), per_job):
            chunk = items[lo:lo + per_job]
            j = next((j for j in range(len(jobs)) if element not in jobs[j]
                      and sizes[j] + len(chunk) <= per_job), None)
            if j is None:
                jobs.append({})
                sizes.append(0)
                j = len(jobs) - 1
            jobs[j][element] = (lo, chunk)
            sizes[j] += len(chunk)
    return jobs


def _run_subpath_jobs(renderer, captures: "_Captures", us: UnitSet, kind: str,
                      work: list[tuple[int, list]], stage: Stage, pieces: dict[int, list[str]] | None = None
                      ) -> dict[int, list | str]:
    """Run ``kind`` work per element in shared passes; element -> results in order (or
    the reason it is not local). Each element's results are kept in the renderer's
    layer cache under a key of what decides them (the text keeping that path alone, its
    pieces and the work asked), and its keys in ``renderer.element_keys``: after an edit
    elsewhere, a path's windows are not drawn again."""
    members: dict[int, set[int]] = {e: set() for e, _ in work}
    for u in us.units:  # one pass over the units, not one per path
        if u.element in members:
            members[u.element].add(u.index)
    spec = {e: (kind, items if pieces is None else (pieces[e], items)) for e, items in work}
    # A path's results do not depend on the other paths drawn in the same pass (the
    # passes are packed however the workers are counted), so they are cached per path,
    # under the text without capture marks (the same up to the marks; no parse needed).
    keys = {e: f"{kind}:" + _layer_key(f"{captures.texts.keeping(members[e])}\0{spec[e]!r}",
                                        renderer.size) for e, _ in work}
    out: dict[int, list | str] = {}
    for e, items in work:
        renderer.element_keys[e] = renderer.element_keys.get(e, ()) + (keys[e],)
        try:
            out[e] = renderer.cache[keys[e]]
            stage.advance(len(items))
        except KeyError:
            pass
    work = [(e, items) for e, items in work if e not in out]
    total = sum(len(items) for _, items in work)
    per_job = max(16, min(400, -(-total // max(1, renderer.pool.workers * 2))))
    jobs = _pack(work, per_job)
    args = [(captures.keeping(set().union(*(members[e] for e in job))), renderer.size,
             {str(e): spec[e][:1] + ((chunk if pieces is None else (pieces[e], chunk)),)
              for e, (lo, chunk) in job.items()},
             renderer.limits, renderer.name) for job in jobs]
    fresh: dict[int, list | str] = {e: [None] * len(items) for e, items in work}

    def tick(j: int) -> None:
        stage.advance(sum(len(chunk) for _, chunk in jobs[j].values()))

    for job, found in zip(jobs, renderer.pool.map(job_subpath_work, args, renderer.name,
                                                  on_done=tick)):
        for e, (lo, chunk) in job.items():
            result = found.get(str(e))
            if isinstance(result, str) or isinstance(fresh[e], str):
                fresh[e] = fresh[e] if isinstance(fresh[e], str) else result
                continue
            fresh[e][lo:lo + len(chunk)] = \
                result if result is not None else [None] * len(chunk)
    renderer.renders += len(jobs)
    for e, result in fresh.items():
        out[e] = renderer.cache[keys[e]] = result
    return out


def _subpath_windows(us, blocks, paths, renderer, size, unit_region, without_layer,
                     boxes_stage: Stage, windows_stage: Stage,
                     alone_layer: dict[int, tuple] | None = None) -> set[int]:
    """Leave-one-out layers of compound paths, one window per subpath.

    Removing subpath k changes the path's pixels only where k fills or strokes (a winding
    number or stroke of k's own), plus anti-aliasing, and - through cairo's row-by-row
    scan conversion - along the pixel rows it reaches: its window (see _window). Inside
    it, a subpath whose extents do not meet the window adds no edge, winding or coverage,
    so the path made of the subpaths meeting the window, minus k, drawn clipped to the
    window, is the path without k there. Paths whose drawing depends on the whole path (markers,
    objectBoundingBox paint, dashes, own filter or mask: see render._nonlocal_reason)
    report it and keep the whole-path method. Returns the blocks handled here.

    With ``alone_layer`` (a dict to fill), each subpath is also drawn alone in its window:
    the path made of it only, with its own arc, and bent or not as it is alone."""
    if not paths or renderer.capture is None:
        boxes_stage.finish()
        windows_stage.finish()
        return set()
    captures = renderer.capture
    pieces: dict[int, list[str]] = {}
    for e in paths.values():
        split = us.splits[e]
        raw = us.doc.text[split.value_start:split.value_end]
        pieces[e] = [raw[sp.start:sp.end] for sp in split.subpaths]
    boxes = _run_subpath_jobs(renderer, captures, us, "boxes", list(pieces.items()), boxes_stage)
    boxes_stage.finish()
    handled = {b for b, e in paths.items() if not isinstance(boxes[e], str)}
    work = []
    windows_of: dict[int, list] = {}
    own_windows: dict[int, list] = {}
    for b in handled:
        e = paths[b]
        found = boxes[e]
        wins = [None if item is None else _window(item[0], size) for item in found]
        windows_of[e] = wins
        own_windows[e] = list(wins)  # before the whole-path widening below
        bent_fill = [item is not None and item[1] for item in found]
        bent_stroke = [item is not None and item[2] for item in found]
        fills, strokes = sum(bent_fill), sum(bent_stroke)
        has_arc = [bool(_ARC.search(p)) for p in pieces[e]]
        arcs = sum(has_arc)
        arr = np.array([w if w is not None else (0, 0, 0, 0) for w in wins], np.int64)
        variants = []
        for k, win in enumerate(wins):
            if win is None:
                variants.append(None)
                continue
            if ((has_arc[k] and arcs == 1) or (bent_fill[k] and fills == 1)
                    or (bent_stroke[k] and strokes == 1)):
                # Not local: CairoSVG draws the whole path with a fine curve tolerance
                # once it has an arc, and cairo draws a rectilinear path with exact box
                # coverage, any other by sampling; without its only arc or only bent
                # subpath, the whole path is drawn anew. The whole path without k then.
                win = wins[k] = (0, size, 0, size)
            near = np.flatnonzero((arr[:, 0] < win[1]) & (arr[:, 1] > win[0])
                                  & (arr[:, 2] < win[3]) & (arr[:, 3] > win[2]))
            near = near[near != k]
            # The window's path must be drawn the way the whole path without k is.
            bend = None
            if strokes - bent_stroke[k] > 0 and not any(bent_stroke[j] for j in near):
                bend = "both"
            elif fills - bent_fill[k] > 0 and not any(bent_fill[j] for j in near):
                bend = "fill"
            variants.append((win, [int(j) for j in near], arcs - has_arc[k] > 0, bend))
        if alone_layer is not None:
            variants += [None if win is None else (win, [k], has_arc[k], None)
                         for k, win in enumerate(own_windows[e])]
        work.append((e, variants))
    # Units whose subpath draws nothing change nothing: no window to render.
    todo = [(e, [v for v in variants if v is not None]) for e, variants in work]
    layers = _run_subpath_jobs(renderer, captures, us, "windows", todo, windows_stage, pieces)
    windows_stage.finish()
    for b in handled:
        e = paths[b]
        found = iter(layers[e])
        for k, win in zip(blocks[b].units, windows_of[e]):
            unit_region[k] = win
            without_layer[k] = (None, None) if win is None else next(found)
        if alone_layer is not None:
            for k, win in zip(blocks[b].units, own_windows[e]):
                alone_layer[k] = (None, None) if win is None else next(found)
    return handled


_ARC = re.compile(r"[aA]")


def _window(box: tuple[float, float, float, float], size: int) -> Box | None:
    """The rows a subpath's extents reach (plus a margin), across the whole canvas width.
    Whole rows, because cairo's scan converter works row by row over every edge crossing
    a pixel row: an edge's coverage can change (by up to 1/15) with which other edges
    share its rows, however far away. Rows are independent of each other."""
    y0, y1, x0, x1 = box
    if x1 < 0 or x0 > size:
        return None
    win = (max(0, math.floor(y0) - SUBPATH_MARGIN), min(size, math.ceil(y1) + SUBPATH_MARGIN),
           0, size)
    return win if win[0] < win[1] else None


def job_capture_layers(text: str, size: int, limits: Limits, name: str) -> dict:
    return render_captured_layers(text, size, limits, name)


@dataclass(frozen=True)
class _Item:
    """A layer to render: its text; for a capture, the units that a shared pass keeps for
    it and the element whose drawing is captured; ``box_only`` when only its box is used
    (a capture under a group effect misses the group's opacity)."""

    text: str
    keep: frozenset[int] | set[int] | None = None
    element: int | None = None
    box_only: bool = False


class _Captures:
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
    def passes(items: list[_Item], workers: int) -> list[list[int]]:
        """Pack item indices into passes, no element twice in a pass, spread over at least
        ``workers`` passes when there is enough to share."""
        count = workers if len(items) >= 8 else 1
        passes: list[list[int]] = [[] for _ in range(count)]
        used: list[set[int]] = [set() for _ in range(count)]
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


class _LayerRenderer:
    """Renders layers through the pool, reusing a caller's layer cache: captured in shared
    passes where the item allows it, else one render per layer text."""

    def __init__(self, name, size, limits, pool, cache, per_job):
        self.name, self.size, self.limits, self.pool = name, size, limits, pool
        self.cache = cache if cache is not None else {}
        self.per_job = per_job
        self.renders = 0
        self.capture: _Captures | None = None
        self.last_keys: list[str] = []  # the keys of the last render()'s items
        self.element_keys: dict[int, tuple[str, ...]] = {}  # compound path -> its windows' keys

    def render(self, items: list[_Item], stage: Stage) -> list[tuple]:
        """The items' layers; ``stage`` advances by one step per item."""
        keys = [("box:" if item.box_only else "") + _layer_key(item.text, self.size)
                for item in items]
        self.last_keys = keys
        # Results are kept here for this call: the cache may be bounded and evict what it
        # was just given (a daemon's layer cache on a large document).
        got: dict[str, tuple] = {}
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
            passes = _Captures.passes([items[i] for i in captured], self.pool.workers)
            jobs = [(self.capture.keeping(set().union(*(items[captured[n]].keep
                                                               for n in p))),
                     self.size, self.limits, self.name) for p in passes]
            for p, found in zip(passes, self.pool.map(job_capture_layers, jobs, self.name,
                                                      on_done=lambda j: stage.advance(
                                                          len(passes[j])))):
                for n in p:
                    i = captured[n]
                    got[keys[i]] = found.get(str(items[i].element), (None, None))
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


def _grow(box: Box | None, margin: int, size: int) -> Box | None:
    if box is None:
        return None
    return (max(0, box[0] - margin), min(size, box[1] + margin),
            max(0, box[2] - margin), min(size, box[3] + margin))


def _intersects(a: Box | None, b: Box | None) -> bool:
    return (a is not None and b is not None and a[0] < b[1] and b[0] < a[1]
            and a[2] < b[3] and b[2] < a[3])


def _layer_key(text: str, size: int) -> str:
    return hashlib.blake2b(f"{size}\0{text}".encode(), digest_size=16).hexdigest()


def _changed_box(region: Box | None, without: tuple, layer: tuple) -> Box | None:
    """The part of ``region`` where two layers differ (None: nowhere)."""
    if region is None:
        return None
    box = diff_box(paste(region, without), paste(region, layer))
    if box is None:
        return None
    return region[0] + box[0], region[0] + box[1], region[2] + box[2], region[2] + box[3]


def _composite(size, blocks, block_layer, without_layer, unit_region, patches, full,
               stage: Stage, only: set[int] | None = None):
    """Leave-one-out images (see composite.py): for unit k of block b, inside k's region,
    the blocks below b, then b without k, then every later block, in z-order - cairo's
    own order. ``only``: the units to composite (the others' patches are left as they
    are)."""
    def done(k, patch):
        patches[k] = Patch(*patch)
        stage.advance()

    composite_without(size, [block.units for block in blocks], block_layer, without_layer,
                      unit_region, full, done, only)


def leave_one_out(us: UnitSet, method: str = "fast", size: int = 384,
                  limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None,
                  progress: WorkProgress | ProgressFn | None = None,
                  layer_cache: MutableMapping | None = None, alone: bool = False,
                  previous: LooResult | None = None) -> LooResult:
    """``alone``: fast also returns the layers it can draw alone on the way; ``previous``:
    an earlier result of the same document whose unchanged patches fast keeps (see
    loo_fast)."""
    if method == "naive":
        return loo_naive(us, size, limits, pool, progress)
    if method == "fast":
        return loo_fast(us, size, limits, pool, progress, layer_cache=layer_cache,
                        alone=alone, previous=previous)
    raise ValueError(f"unknown leave-one-out method {method!r} (fast or naive)")
