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

The parts live beside this module: the worker jobs in render_jobs.py, layer rendering and
its cache keys in layer_render.py, compound paths subpath by subpath in
subpath_windows.py, the compositing itself in composite.py (overlap-heavy stacks in
composite_sweep.py, in bounded chunks), boxes and layers in raster.py; a file whose
layers and images cannot fit is refused first (fit_check.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, MutableMapping
from typing import cast
from dataclasses import dataclass, field

import numpy as np

from svgloo.engine.leave_one_out.blocks import Block, compute_blocks, has_structural_css, unaffected_units
from svgloo.engine.rendering.composite import (changed_box, composite_without, diff_box,
                                     patched_crop, tight)
from svgloo.engine.reading.document import parse_document
from svgloo.engine.leave_one_out.fit_check import check_fits
from svgloo.engine.leave_one_out.layer_render import Captures, LayerRenderer, RenderItem
from svgloo.engine.leave_one_out.layers import LayerTexts
from svgloo.engine.limits import DEFAULT_LIMITS, Limits, budget_check
from svgloo.engine.reading.pathdata import with_absolute_movetos
from svgloo.engine.progress import ProgressFn, Stage, WorkProgress
from svgloo.engine.rendering.raster import NO_LAYER, Box, Layer, grow, intersects, union_box
from svgloo.engine.rendering.render import over_white
from svgloo.engine.rendering.render_jobs import job_render_full, job_render_without
from svgloo.engine.settings import DEFAULT_RENDER_SIZE
from svgloo.engine.leave_one_out.subpath_windows import subpath_windows, windowed_paths
from svgloo.engine.reading.units import TextEdit, UnitSet, apply_edits, extract_units
from svgloo.engine.processes.workers import RenderPool, chunked, shared_pool

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
        assert self.box is not None and self.pixels is not None  # a patch that differs
        y0, y1, x0, x1 = self.box
        # |a - b| in uint8 as max - min, and the channels' maximum as two elementwise
        # maxima: the same integers as int16 arithmetic and .max(axis=2), whose reduction
        # over a last axis of 3 took 7 ms of every 300 x 300 patch (18x slower; batch
        # footprints were 8% of a small icon's scoring).
        a, b = full[y0:y1, x0:x1], self.pixels
        diff = np.maximum(a, b)
        diff -= np.minimum(a, b)
        return np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2])

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
class LayerStack:
    """What fast composites the leave-one-out images from (see composite.py), kept in its
    result for the next call's ``previous``: per block, its layer and the keys of every
    layer it was composited from; per unit, its region (where its image can differ from
    the full render, None: nowhere) and, for a member of a multi-unit block, that block
    drawn without it."""

    block_layer: list[Layer]
    block_keys: list[tuple[str, ...]]
    unit_region: list[Box | None]
    without_layer: dict[int, Layer]


@dataclass
class LooResult:
    full: np.ndarray                 # RGB uint8 (S, S, 3): the document over white
    patches: list[Patch]
    method: str
    renders: int
    blocks: list[Block] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    # unit -> its layer drawn alone, where fast drew it on the way (the subpaths of
    # windowed compound paths, when asked): findings need not render them.
    alone: dict[int, Layer] = field(default_factory=dict)
    # What an edit is compared with (fast only; see loo_fast's ``previous``).
    stack: LayerStack | None = field(default=None, repr=False)
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


def loo_naive(us: UnitSet, size: int = DEFAULT_RENDER_SIZE, limits: Limits = DEFAULT_LIMITS,
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


def loo_fast(us: UnitSet, size: int = DEFAULT_RENDER_SIZE, limits: Limits = DEFAULT_LIMITS,
             pool: RenderPool | None = None,
             progress: WorkProgress | ProgressFn | None = None,
             layer_cache: MutableMapping | None = None, alone: bool = False,
             previous: LooResult | None = None, pictures=None,
             on_drawn: Callable[[], None] | None = None) -> LooResult:
    """``layer_cache``: optional mapping (hash of layer text and size) -> rendered layer,
    kept by a long-lived caller (the daemon) so that after a small edit only the layers
    whose text changed are rendered again. ``alone``: also draw each windowed subpath
    alone, in its window (``LooResult.alone``; findings use them). ``previous``: the
    result for an earlier text of the same document (same size): units whose patch
    cannot have changed keep it (see _since_previous); the patches are those of a call
    without ``previous``, bit for bit. ``pictures`` (render_jobs.FullPictures of the
    document's text at ``size``, on their way): the full render is CairoSVG's picture over
    white when the text rendered is that one (see absolute_subpaths). ``on_drawn`` is
    called once the layers are drawn (the workers are free for other jobs)."""
    pool = pool or shared_pool(limits)
    t0 = time.perf_counter()
    us = absolute_subpaths(us, limits)
    blocks = compute_blocks(us)
    if len(blocks) == 1 and not blocks[0].local:
        # One block holding every unit (a mask drawn as content, a filter on
        # everything): its units can only be rendered whole-but-one, which is the naive
        # method without the layers and composites fast would add on top. So too for a
        # single unit: what the document draws without it need not be blank (a mask
        # CairoSVG draws as content, see blocks.resources_keep_their_place).
        result = loo_naive(us, size, limits, pool, progress)
        result.blocks = blocks
        return result
    work = WorkProgress.of(progress)
    n = len(us.units)
    full_stage = work.stage(1)

    def full_render():
        if pictures is not None and (pictures.text, pictures.size) == (us.doc.text, size):
            full = over_white(pictures.get("cairosvg")), 0.0
        else:
            full = render_full(us, size, pool, limits)
        full_stage.finish()
        return full

    # The full render runs beside the layer renders (the pool is shared and thread-safe).
    full_job = _background(full_render)
    unaffected = unaffected_units(us)
    # Every stage's steps, reserved before any is reported: subpath boxes and windows of
    # compound paths, round 1 (every block, and members of multi-unit blocks), round 2
    # (members of local blocks), and each unit's composite.
    paths = windowed_paths(us, blocks, unaffected)
    in_paths = sum(len(blocks[b]) for b in paths)
    multi = [len(block) for block in blocks if len(block) > 1]
    stages = {"boxes": work.stage(in_paths), "windows": work.stage(in_paths * (1 + alone)),
              "round1": work.stage(len(blocks) + sum(multi)),
              "round2": work.stage(sum(len(b) for b in blocks if len(b) > 1 and b.local)),
              "composite": work.stage(n)}
    work.start()
    # Structural selectors see siblings, resources included: then keep every resource.
    texts = LayerTexts(us, prune_resources=not has_structural_css(us.doc))
    renderer = LayerRenderer(us.doc.name, size, limits, pool, layer_cache,
                             _jobs_per_chunk(_guess_render_seconds(us) / max(1, n) * 4, limits))
    # Layers are captured in shared render passes where possible (see Captures): exact
    # for units with no group effect above them; for members of local blocks "alone"
    # only the box is needed, which a capture gets right anyway.
    renderer.capture = Captures(us, texts)
    element_of = [u.element for u in us.units]

    # Compound paths drawn with no group effect above them: each subpath in its window.
    # Round 1 runs once the windowed paths are known and before their windows are drawn:
    # each window is kept only where it differs from its path's own layer, as it arrives
    # (a window spans the canvas's width; a path of thousands of subpaths held every
    # window whole: 61 MB of the main process's 127 MB at 4,900 subpaths).
    unit_region: list[Box | None] = [None] * n
    without_layer: dict[int, Layer] = {}
    alone_layer: dict[int, Layer] = {}
    block_layer: list[Layer] = [NO_LAYER] * len(blocks)
    solo: dict[int, Layer] = {}
    round1: list[tuple[str, int]] = [("block", b) for b in range(len(blocks))]
    round1_keys: list[str] = []

    def round_one(windowed: set[int]) -> dict[int, Layer]:
        """Round 1: every block as a layer; members of local blocks alone (to find where
        each acts); members of other multi-unit blocks: the block without each of them.
        Returns the windowed blocks' layers."""
        for b, block in enumerate(blocks):
            if len(block) > 1 and b not in windowed:
                kind = "solo" if block.local else "without"
                round1.extend((kind, k) for k in block.units)
        # "Alone" for a subpath means its whole path (see blocks.py): every subpath of a
        # path gets the path's box, and neighbourhoods hold whole paths only. One shared
        # set per path (not one per subpath: a path of n subpaths would hold n^2).
        whole = whole_paths(us)
        items = []
        solo_texts: dict = {}
        for kind, i in round1:
            text = _layer_text(texts, blocks, (kind, i), whole, solo_texts)
            if kind == "block" and len(blocks[i]) == 1 and blocks[i].lo in unaffected:
                items.append(RenderItem(text, {blocks[i].lo}, element_of[blocks[i].lo]))
            elif kind == "solo":
                items.append(RenderItem(text, whole.get(i, {i}), element_of[i],
                                        box_only=True))
            else:
                items.append(RenderItem(text))
        layers1 = renderer.render(items, stages["round1"])
        stages["round1"].finish()
        round1_keys.extend(renderer.last_keys)
        for (kind, i), layer in zip(round1, layers1):
            if kind == "block":
                block_layer[i] = layer
            elif kind == "solo":
                solo[i] = layer
            else:
                without_layer[i] = layer
        return {b: block_layer[b] for b in windowed}

    windowed, windows = subpath_windows(us, blocks, paths, renderer, size, stages["boxes"],
                                        stages["windows"], alone, drawn=round_one)
    for k, win in windows.items():
        unit_region[k], without_layer[k] = win.region, win.without
        if alone:
            assert win.alone is not None  # drawn alone when asked
            alone_layer[k] = win.alone
    local_multi = [b for b, blk in enumerate(blocks)
                   if len(blk) > 1 and blk.local and b not in windowed]
    # Each block's layers by key: a block whose keys are all as before drew the same.
    block_of = {k: b for b, block in enumerate(blocks) for k in block.units}
    layer_keys: list[list[str]] = [[] for _ in blocks]
    for b, e in paths.items():
        if b in windowed:
            layer_keys[b].extend(renderer.element_keys.get(e, ()))
    for (kind, i), key in zip(round1, round1_keys):
        layer_keys[i if kind == "block" else block_of[i]].append(key)

    # Round 2, local blocks: each member's neighbourhood (members overlapping it), without
    # it. Inside the member's own box that equals the whole block without it.
    round2: list[tuple[int, set[int]]] = []
    for b in local_multi:
        members = list(blocks[b].units)
        boxes = {k: grow(solo[k].box, 1, size) for k in members}
        for k in members:
            unit_region[k] = boxes[k]
            if boxes[k] is None:
                without_layer[k] = NO_LAYER
                continue
            near = {j for j in members if j != k and intersects(boxes[j], boxes[k])}
            if near:
                round2.append((k, near))
            else:
                without_layer[k] = NO_LAYER
    # A local block of unaffected units is one compound path: its variants are captured.
    layers2 = renderer.render([
        RenderItem(texts.keeping(near), near, element_of[k]) if near <= unaffected and
        len({element_of[j] for j in near}) == 1 else RenderItem(texts.keeping(near))
        for k, near in round2], stages["round2"])
    stages["round2"].finish()
    for (k, _), layer, key in zip(round2, layers2, renderer.last_keys):
        without_layer[k] = layer
        layer_keys[block_of[k]].append(key)
    t_render = time.perf_counter() - t0
    if on_drawn is not None:
        on_drawn()

    # Where each unit's leave-one-out image can differ from the full render: its own
    # layer's box (singletons), its window or box (local blocks), or what its block draws
    # with and without it. Within that, only where the block's layer changes without the
    # unit: elsewhere the whole stack is the same with or without it, so the composite
    # would only redraw the full render (a subpath's window spans the canvas's width).
    check = budget_check(us.doc.name)
    for b, block in enumerate(blocks):
        if check is not None and b % 64 == 0:
            check()  # each block below costs a few region-sized comparisons
        if len(block) == 1:
            unit_region[block.lo] = block_layer[b].box
            continue
        for k in block.units:
            if not block.local and b not in windowed:
                unit_region[k] = union_box(block_layer[b].box, without_layer[k].box)
            unit_region[k] = changed_box(unit_region[k], without_layer[k], block_layer[b])

    full, _ = full_job.result()
    stack = LayerStack(block_layer, [tuple(keys) for keys in layer_keys], unit_region,
                       without_layer)
    since = _since_previous(previous, blocks, stack, full)
    patches: list[Patch | None] = [None] * n
    counts: dict[int, int] = {}
    only = partial = None
    if since is not None:
        assert previous is not None  # since compares with it
        kept, partial = since
        patches = list(previous.patches)
        # A kept patch's footprint reads the full render inside it: unchanged there too.
        counts = {k: c for k, c in previous.footprint_counts.items() if k in kept}
        only = set(range(n)) - kept
        stages["composite"].advance(n - len(only))
    _composite(size, blocks, stack, patches, full, stages["composite"], only, partial,
               previous, budget_check(us.doc.name))
    stages["composite"].finish()
    # _composite gave every unit its patch
    return LooResult(full, cast("list[Patch]", patches), "fast", renders=renderer.renders + 1, blocks=blocks,
                     timings={"render_s": t_render,
                              "composite_s": time.perf_counter() - t0 - t_render},
                     alone=alone_layer, stack=stack, composited=only,
                     footprint_counts=counts, texts=texts)


def _since_previous(previous: LooResult | None, blocks: list[Block], stack: LayerStack,
                    full: np.ndarray) -> tuple[set[int], dict[int, Box]] | None:
    """(the units whose leave-one-out patch is the one in ``previous``; unit -> the part
    of its region where its image may have changed, for the others that can be
    composited there only) - None: no previous result to compare with, or a different
    structure: composite every unit whole.

    A unit's patch is a function of its region, the layers of its own block, the other
    blocks' layers inside its region, and the full render inside its region (the patch
    is shrunk to where it differs from it). A block whose layer keys are all as before
    drew the same pixels; a block that changed changed pixels only inside its old and
    new layer boxes, and the full render only inside the box where the two differ. So a
    unit of an unchanged block whose region meets none of those boxes keeps its patch,
    and one whose region meets them has the same image outside them."""
    before = previous.stack if previous is not None else None
    if (before is None or previous is None or previous.blocks != blocks or previous.full.shape != full.shape
            or len(before.block_keys) != len(stack.block_keys)):
        return None
    changed: Box | None = diff_box(previous.full, full)
    units: set[int] = set()
    for b, keys in enumerate(stack.block_keys):
        if keys == before.block_keys[b]:
            units.update(blocks[b].units)
        else:
            changed = union_box(changed, union_box(before.block_layer[b].box,
                                                   stack.block_layer[b].box))
    kept = {k for k in units if not intersects(stack.unit_region[k], changed)}
    partial = {}
    for k in units - kept:
        region = stack.unit_region[k]
        if region == before.unit_region[k] and previous.patches[k] is not None:
            assert region is not None and changed is not None  # the region meets changed
            partial[k] = (max(region[0], changed[0]), min(region[1], changed[1]),
                          max(region[2], changed[2]), min(region[3], changed[3]))
    return kept, partial


class _background:
    """Run ``fn(*args)`` in a thread; ``result()`` waits and re-raises its error."""

    def __init__(self, fn, *args):
        self._result = self._error = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn, args):
        try:
            self._result = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller in result()
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


def whole_paths(us: UnitSet) -> dict[int, frozenset[int]]:
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


def _composite(size: int, blocks: list[Block], stack: LayerStack,
               patches: list[Patch | None], full: np.ndarray, stage: Stage,
               only: set[int] | None = None, partial: dict[int, Box] | None = None,
               previous: LooResult | None = None,
               check: Callable[[], None] | None = None) -> None:
    """Leave-one-out images (see composite.py): for unit k of block b, inside k's region,
    the blocks below b, then b without k, then every later block, in z-order - cairo's
    own order. ``only``: the units to composite (the others' patches are left as they
    are). ``partial`` (unit -> a part of its region, see _since_previous): those units
    are composited in that part only, the rest of their region being their image in
    ``previous``; the patch is then cut from the whole region, as any other."""
    partial = partial or {}
    regions = [partial.get(k, region) for k, region in enumerate(stack.unit_region)]

    def done(k, patch):
        if k in partial:
            patch = _merged(k, stack.unit_region[k], partial[k], patch, previous, full)
        patches[k] = Patch(*patch)
        stage.advance()

    composite_without(size, [block.units for block in blocks], stack.block_layer,
                      stack.without_layer, regions, full, done, only, check=check)


def _merged(k: int, region: Box, part: Box, fresh: tuple, previous: LooResult,
            full: np.ndarray) -> tuple:
    """(box, pixels) of unit k's image inside ``region``, shrunk to where it differs from
    ``full``: its image in ``previous`` there (the previous full render with its previous
    patch), but inside ``part`` the one just composited (``fresh``: where that differs
    from ``full``, which it equals elsewhere in ``part``)."""
    y0, x0 = region[0], region[2]
    old = previous.patches[k]
    image = patched_crop(previous.full, old.box, old.pixels, region)
    py0, py1, px0, px1 = part
    image[py0 - y0:py1 - y0, px0 - x0:px1 - x0] = full[py0:py1, px0:px1]
    box, pixels = fresh
    if box is not None:
        by0, by1, bx0, bx1 = box
        image[by0 - y0:by1 - y0, bx0 - x0:bx1 - x0] = pixels
    return tight(region, image, full)


def leave_one_out(us: UnitSet, method: str = "fast", size: int = DEFAULT_RENDER_SIZE,
                  limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None,
                  progress: WorkProgress | ProgressFn | None = None,
                  layer_cache: MutableMapping | None = None, alone: bool = False,
                  previous: LooResult | None = None, pictures=None,
                  on_drawn: Callable[[], None] | None = None) -> LooResult:
    """``alone``: fast also returns the layers it can draw alone on the way; ``previous``:
    an earlier result of the same document whose unchanged patches fast keeps;
    ``pictures``: the document's pictures, on their way; ``on_drawn``: called once fast's
    layers are drawn (see loo_fast)."""
    pool = pool or shared_pool(limits)
    # A file whose layers and images cannot fit is refused now, not after its renders.
    check_fits(us, size, limits, pool)
    if method == "naive":
        return loo_naive(us, size, limits, pool, progress)
    if method == "fast":
        return loo_fast(us, size, limits, pool, progress, layer_cache=layer_cache,
                        alone=alone, previous=previous, pictures=pictures,
                        on_drawn=on_drawn)
    raise ValueError(f"unknown leave-one-out method {method!r} (fast or naive)")
