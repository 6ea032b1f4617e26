"""Compound paths, subpath by subpath: each subpath's leave-one-out layer in its window.

Removing subpath k of a path changes the path's pixels only where k fills or strokes, plus
anti-aliasing, and - through cairo's row-by-row scan conversion - along the pixel rows it
reaches: its window (see ``window``). Inside it, the path made of the subpaths that meet
the window, minus k, drawn clipped to the window, is the path without k there; so a path
of n subpaths costs n small window renders instead of n renders of the whole path. The
render side (measuring each subpath's extents, drawing a window) is render.SubpathSurface;
this module decides what to draw, packs it into shared render passes and caches it.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from svgloo.engine.leave_one_out.blocks import Block
from svgloo.engine.rendering.composite import cut_to_change
from svgloo.engine.leave_one_out.layer_render import Captures, LayerRenderer
from svgloo.engine.leave_one_out.paint_free import paint_free
from svgloo.engine.progress import Stage
from svgloo.engine.rendering.raster import NO_LAYER, Box, Layer
from svgloo.engine.rendering.render_jobs import job_subpath_work
from svgloo.engine.reading.units import UnitSet

SUBPATH_MARGIN = 2  # device pixels around a subpath's extents: anti-aliasing reaches 1
# Windows per job when they are cut as they arrive: a window spans the canvas width (6 KB
# a row at 384 px), and a batch of jobs is held whole until cut.
PER_JOB_KEPT = 200


@dataclass(frozen=True)
class SubpathWindow:
    """What the windows give one subpath unit: its window (None: it draws nothing inside
    the canvas), its path drawn without it there, and - when asked - it drawn alone in its
    own window (None when not asked)."""

    region: Box | None
    without: Layer
    alone: Layer | None = None


def windowed_paths(us: UnitSet, blocks: list[Block], unaffected: set[int]) -> dict[int, int]:
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


def run_subpath_jobs(renderer: LayerRenderer, captures: Captures, us: UnitSet, kind: str,
                     work: list[tuple[int, list]], stage: Stage,
                     pieces: dict[int, list[str]] | None = None,
                     keep: Callable[[int, int, Any], Any] | None = None,
                     key_text: Callable[[str], str] | None = None
                     ) -> dict[int, list | str]:
    """Run ``kind`` work per element in shared passes; element -> results in order (or
    the reason it is not local). Each element's results are kept in the renderer's
    layer cache under a key of what decides them (the text keeping that path alone, its
    pieces and the work asked), and its keys in ``renderer.element_keys``: after an edit
    elsewhere, a path's windows are not drawn again.

    ``keep(element, i, result)``: what to keep of each fresh result (its i-th in order),
    applied as results arrive; with it, the jobs are run ``pool.workers`` at a time, so
    that at most that many jobs' whole results are held at once. It must be a function
    of what the cache key covers (it is cached as the result).

    ``key_text``: what of the path's text the key covers (``paint_free``: results that
    do not depend on its opaque colours are kept across colour edits)."""
    members: dict[int, set[int]] = {e: set() for e, _ in work}
    for u in us.units:  # one pass over the units, not one per path
        if u.element in members:
            members[u.element].add(u.index)
    spec = {e: (kind, items if pieces is None else (pieces[e], items)) for e, items in work}
    # A path's results do not depend on the other paths drawn in the same pass (the
    # passes are packed however the workers are counted), so they are cached per path,
    # under the text without capture marks (the same up to the marks; no parse needed).
    # Results cut by ``keep`` are cached apart from whole ones.
    tag = kind if keep is None else kind + "/kept"
    seen = key_text or (lambda text: text)
    keys = {e: f"{tag}:" + _work_key(seen(captures.texts.keeping(members[e])), renderer.size,
                                      spec[e]) for e, _ in work}
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
    per_job = max(16, min(400 if keep is None else PER_JOB_KEPT,
                          -(-total // max(1, renderer.pool.workers * 2))))
    jobs = _pack(work, per_job)
    args = [(captures.keeping(set().union(*(members[e] for e in job))), renderer.size,
             {str(e): spec[e][:1] + ((chunk if pieces is None else (pieces[e], chunk)),)
              for e, (lo, chunk) in job.items()},
             renderer.limits, renderer.name) for job in jobs]
    fresh: dict[int, list | str] = {e: [None] * len(items) for e, items in work}

    def tick(first: int, j: int) -> None:
        stage.advance(sum(len(chunk) for _, chunk in jobs[first + j].values()))

    batch = max(1, len(jobs) if keep is None else renderer.pool.workers)
    for first in range(0, len(jobs), batch):
        found_all = renderer.pool.map(job_subpath_work, args[first:first + batch],
                                      renderer.name, on_done=functools.partial(tick, first))
        for job, found in zip(jobs[first:first + batch], found_all):
            for e, (lo, chunk) in job.items():
                result = found.pop(str(e), None)
                slot = fresh[e]
                if isinstance(result, str) or isinstance(slot, str):
                    fresh[e] = slot if isinstance(slot, str) else result
                    continue
                if result is None:
                    result = [None] * len(chunk)
                elif keep is not None:
                    result = [keep(e, lo + i, r) for i, r in enumerate(result)]
                slot[lo:lo + len(chunk)] = result
        del found_all
    renderer.renders += len(jobs)
    for e, result in fresh.items():
        out[e] = renderer.cache[keys[e]] = result
    return out


def subpath_windows(us: UnitSet, blocks: list[Block], paths: dict[int, int],
                    renderer: LayerRenderer, size: int, boxes_stage: Stage,
                    windows_stage: Stage, alone: bool = False,
                    drawn: Callable[[set[int]], dict[int, Layer]] | None = None
                    ) -> tuple[set[int], dict[int, SubpathWindow]]:
    """Leave-one-out layers of compound paths, one window per subpath.

    Removing subpath k changes the path's pixels only where k fills or strokes (a winding
    number or stroke of k's own), plus anti-aliasing, and - through cairo's row-by-row
    scan conversion - along the pixel rows it reaches: its window (see ``window``). Inside
    it, a subpath whose extents do not meet the window adds no edge, winding or coverage,
    so the path made of the subpaths meeting the window, minus k, drawn clipped to the
    window, is the path without k there. Paths whose drawing depends on the whole path (markers,
    objectBoundingBox paint, dashes, own filter or mask: see render._nonlocal_reason)
    report it and keep the whole-path method. ``paths``: block -> its path element (see
    ``windowed_paths``). Returns the blocks handled here and, for each of their units,
    its ``SubpathWindow``.

    With ``alone``, each subpath is also drawn alone in its window: the path made of it
    only, with its own arc, and bent or not as it is alone.

    ``drawn(handled)``: called once the blocks handled here are known, before any window
    is drawn; returns each handled block's own layer (its whole path). Each unit's layer
    without it is then kept only where it differs from that layer, as the windows
    arrive, and that part is its region (what compositing reads, and all it needs: a
    window spans the canvas's width, a subpath's effect is its own few pixels)."""
    if not paths or renderer.capture is None:
        boxes_stage.finish()
        windows_stage.finish()
        if drawn is not None:
            drawn(set())
        return set(), {}
    captures = renderer.capture
    pieces: dict[int, list[str]] = {}
    for e in paths.values():
        split = us.splits[e]
        raw = us.doc.text[split.value_start:split.value_end]
        pieces[e] = [raw[sp.start:sp.end] for sp in split.subpaths]
    # A subpath's extents are its geometry's: a colour edit keeps them (paint_free).
    boxes = run_subpath_jobs(renderer, captures, us, "boxes", list(pieces.items()), boxes_stage,
                             key_text=paint_free)
    boxes_stage.finish()
    handled = {b for b, e in paths.items() if not isinstance(boxes[e], str)}
    whole = drawn(handled) if drawn is not None else {}
    work = []
    windows_of: dict[int, list] = {}
    own_windows: dict[int, list] = {}
    for b in handled:
        e = paths[b]
        found = boxes[e]
        assert not isinstance(found, str)  # handled: its boxes came back
        wins = [None if item is None else window(item[0], size) for item in found]
        windows_of[e] = wins
        own_windows[e] = list(wins)  # before the whole-path widening below
        bent_fill = [item is not None and item[1] for item in found]
        bent_stroke = [item is not None and item[2] for item in found]
        fills, strokes = sum(bent_fill), sum(bent_stroke)
        has_arc = [bool(_ARC.search(p)) for p in pieces[e]]
        arcs = sum(has_arc)
        arr = np.array([w if w is not None else (0, 0, 0, 0) for w in wins], np.int64)
        variants: list[tuple | None] = []
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
            # An array, not a list of ints: a window meets ~sqrt(n) subpaths, and n lists
            # of Python ints were the largest allocation of a path of thousands of subpaths
            # (40 MB of 110 at 4,900).
            variants.append((win, near.astype(np.int32), arcs - has_arc[k] > 0, bend))
        if alone:
            variants += [None if win is None else (win, [k], has_arc[k], None)
                         for k, win in enumerate(own_windows[e])]
        work.append((e, variants))
    # Units whose subpath draws nothing change nothing: no window to render.
    todo = [(e, [v for v in variants if v is not None]) for e, variants in work]
    keep = None
    if whole:
        block_of = {e: b for b, e in paths.items()}
        withouts = {e: sum(win is not None for win in windows_of[e]) for e in windows_of}
        # The windows asked for, in order: every unit's "without" (cut to where it differs
        # from its whole path), then (if asked) every "alone" (kept as drawn).
        asked = {e: [v[0] for v in variants] for e, variants in todo}

        def keep(e: int, i: int, layer):
            if i >= withouts[e] or not isinstance(layer, Layer):
                return layer
            return cut_to_change(asked[e][i], layer, whole[block_of[e]])
    layers = run_subpath_jobs(renderer, captures, us, "windows", todo, windows_stage, pieces,
                              keep)
    windows_stage.finish()
    units: dict[int, SubpathWindow] = {}
    for b in handled:
        e = paths[b]
        in_order = iter(layers[e])  # every unit's "without", then (if asked) its "alone"
        without = [NO_LAYER if win is None else next(in_order) for win in windows_of[e]]
        drawn_alone = [NO_LAYER if win is None else next(in_order) for win in own_windows[e]] \
            if alone else [None] * len(without)
        for k, win, layer, own in zip(blocks[b].units, windows_of[e], without, drawn_alone):
            # Cut to where it differs from the whole path: that part is its region.
            units[k] = SubpathWindow(layer.box if whole and win is not None else win,
                                     layer, own)
    return handled, units


_ARC = re.compile(r"[aA]")


def _work_key(path_text: str, size: int, spec) -> str:
    """The cache key of a path's subpath work: a digest of the raster size, the text
    keeping that path alone and the work asked (pieces, windows, subpaths drawn in each),
    fed piece by piece (one repr of it all would be a string of megabytes)."""
    h = hashlib.blake2b(f"{size}\0{path_text}\0".encode(), digest_size=16)
    _feed(h, spec)
    return h.hexdigest()


def _feed(h, value) -> None:
    if isinstance(value, np.ndarray):
        h.update(b"a%d:" % value.size)
        h.update(value.astype(np.int64).tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(b"(%d:" % len(value))
        for v in value:
            _feed(h, v)
    else:
        text = repr(value).encode()
        h.update(b"s%d:" % len(text))
        h.update(text)


def window(box: tuple[float, float, float, float], size: int) -> Box | None:
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
