"""Leave-one-out images: ``naive`` (one full render per unit) and ``fast`` (layers).

Both return the same thing: the full render and, per unit, a ``Patch`` - the box outside
which the leave-one-out image equals the full render, and the pixels inside it.

``fast``: render each block of units (see blocks.py) as its own transparent layer, and a
multi-unit block once more without each of its units. Cairo draws each element with
"over" onto the canvas, so the picture is the layers composited in z-order; the image
without unit k, inside the box where k's block has pixels, is

    (layers above k's block) over (k's block without k) over (layers below) over white.

A backward sweep stores "layers above" for each block's box, a forward sweep keeps
"layers below"; each leave-one-out image costs one composite inside its box instead of a
render of the whole document. Sweeps run in chunks so memory stays bounded.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field

import numpy as np

from .blocks import Block, compute_blocks, has_structural_css
from .limits import DEFAULT_LIMITS, Limits
from .render import over_white, render_rgba
from .layers import LayerTexts
from .units import UnitSet
from .workers import RenderPool, chunked, shared_pool

Box = tuple[int, int, int, int]  # y0, y1, x0, x1 (half-open)

CHANGED_THRESHOLD = 12  # /255: the published code's changed-pixel threshold
SWEEP_MEMORY_BYTES = 256 * 1024 * 1024


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

    def footprint(self, full: np.ndarray) -> np.ndarray:
        """Per-pixel max-channel |full - without| / 255 as float32 (H, W)."""
        fp = np.zeros(full.shape[:2], np.float32)
        if self.box is not None:
            y0, y1, x0, x1 = self.box
            diff = np.abs(full[y0:y1, x0:x1].astype(np.int16) - self.pixels.astype(np.int16))
            fp[y0:y1, x0:x1] = diff.max(axis=2) / 255.0
        return fp

    def footprint_pixels(self, full: np.ndarray) -> int:
        if self.box is None:
            return 0
        y0, y1, x0, x1 = self.box
        diff = np.abs(full[y0:y1, x0:x1].astype(np.int16) - self.pixels.astype(np.int16))
        return int((diff.max(axis=2) > CHANGED_THRESHOLD).sum())


@dataclass
class LooResult:
    full: np.ndarray                 # RGB uint8 (S, S, 3): the document over white
    patches: list[Patch]
    method: str
    renders: int
    blocks: list[Block] = field(default_factory=list)
    timings: dict = field(default_factory=dict)

    def image_without(self, unit: int) -> np.ndarray:
        return self.patches[unit].materialize(self.full)


def alpha_box(rgba: np.ndarray) -> Box | None:
    alpha = rgba[..., 3]
    rows = np.flatnonzero(alpha.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(alpha.any(axis=0))
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def diff_box(a: np.ndarray, b: np.ndarray) -> Box | None:
    changed = (a != b).any(axis=2)
    rows = np.flatnonzero(changed.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(changed.any(axis=0))
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def union_box(a: Box | None, b: Box | None) -> Box | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3])


# --- worker jobs (top level so they pickle) -------------------------------------------

def job_render_layers(texts: list[str], size: int, limits: Limits, name: str):
    """Render texts as transparent layers, cropped to their alpha box."""
    out = []
    for text in texts:
        rgba = render_rgba(text, size, limits, name)
        box = alpha_box(rgba)
        out.append((box, None if box is None else rgba[box[0]:box[1], box[2]:box[3]].copy()))
    return out


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


# --- text builders --------------------------------------------------------------------

# --- the two methods ------------------------------------------------------------------

ProgressFn = Callable[[int, int], None]


def _jobs_per_chunk(full_seconds: float, limits: Limits) -> int:
    # Keep each job well inside the render timeout, and big enough to amortise IPC.
    per = max(full_seconds, 0.002)
    return int(max(1, min(64, (limits.render_timeout_s / 4) / per)))


def render_full(us: UnitSet, size: int, pool: RenderPool, limits: Limits):
    [(full, seconds)] = pool.map(job_render_full, [(us.doc.text, size, limits, us.doc.name)],
                                 us.doc.name)
    return full, seconds


def loo_naive(us: UnitSet, size: int = 384, limits: Limits = DEFAULT_LIMITS,
              pool: RenderPool | None = None, progress: ProgressFn | None = None) -> LooResult:
    pool = pool or shared_pool(limits)
    t0 = time.perf_counter()
    full, full_s = render_full(us, size, pool, limits)
    texts = LayerTexts(us, prune_resources=False)
    n = len(us.units)
    per_job = _jobs_per_chunk(full_s, limits)
    jobs = [([texts.without(i) for i in chunk], size, limits, us.doc.name, full)
            for chunk in chunked(range(n), per_job)]
    done = [0]

    def tick(j):
        done[0] += len(jobs[j][0])
        if progress:
            progress(done[0], n)

    results = pool.map(job_render_without, jobs, us.doc.name, on_done=tick)
    patches = [Patch(box, px) for chunk in results for box, px in chunk]
    return LooResult(full, patches, "naive", renders=n + 1,
                     timings={"render_s": time.perf_counter() - t0})


def loo_fast(us: UnitSet, size: int = 384, limits: Limits = DEFAULT_LIMITS,
             pool: RenderPool | None = None, progress: ProgressFn | None = None,
             sweep_memory_bytes: int = SWEEP_MEMORY_BYTES,
             layer_cache: MutableMapping | None = None) -> LooResult:
    """``layer_cache``: optional mapping (hash of layer text and size) -> rendered layer,
    kept by a long-lived caller (the daemon) so that after a small edit only the layers
    whose text changed are rendered again."""
    pool = pool or shared_pool(limits)
    t0 = time.perf_counter()
    full, full_s = render_full(us, size, pool, limits)
    n = len(us.units)
    blocks = compute_blocks(us)
    # Structural selectors see siblings, resources included: then keep every resource.
    texts = LayerTexts(us, prune_resources=not has_structural_css(us.doc))

    # One render per block, plus one per unit of each multi-unit block.
    requests: list[tuple[int, int | None]] = []  # (block, unit left out or None)
    layer_texts: list[str] = []
    for b, block in enumerate(blocks):
        members = set(block.units)
        requests.append((b, None))
        layer_texts.append(texts.keeping(members))
        if len(block) > 1:
            for k in block.units:
                requests.append((b, k))
                layer_texts.append(texts.keeping(members - {k}))
    keys = [_layer_key(t, size) for t in layer_texts]
    cache = layer_cache if layer_cache is not None else {}
    missing = [i for i, key in enumerate(keys) if key not in cache]
    per_job = _jobs_per_chunk(full_s / max(1, n) * 4, limits)
    jobs = [([layer_texts[i] for i in chunk], size, limits, us.doc.name)
            for chunk in chunked(missing, per_job)]
    total = len(missing)
    done = [0]

    def tick(j):
        done[0] += len(jobs[j][0])
        if progress:
            progress(min(done[0], total), total)

    fresh = [layer for chunk in pool.map(job_render_layers, jobs, us.doc.name, on_done=tick)
             for layer in chunk]
    for i, layer in zip(missing, fresh):
        cache[keys[i]] = layer
    rendered = [cache[key] for key in keys]
    t_render = time.perf_counter() - t0

    block_layer: list[tuple[Box | None, np.ndarray | None]] = [(None, None)] * len(blocks)
    without_layer: dict[int, tuple[Box | None, np.ndarray | None]] = {}
    for (b, k), layer in zip(requests, rendered):
        if k is None:
            block_layer[b] = layer
        else:
            without_layer[k] = layer
    regions: list[Box | None] = []
    for b, block in enumerate(blocks):
        region = block_layer[b][0]
        if len(block) > 1:
            for k in block.units:
                region = union_box(region, without_layer[k][0])
        regions.append(region)

    patches: list[Patch | None] = [None] * n
    _composite(size, blocks, block_layer, without_layer, regions, patches,
               sweep_memory_bytes)
    return LooResult(full, patches, "fast", renders=len(missing) + 1, blocks=blocks,
                     timings={"render_s": t_render,
                              "composite_s": time.perf_counter() - t0 - t_render})


def _layer_key(text: str, size: int) -> str:
    return hashlib.blake2b(f"{size}\0{text}".encode(), digest_size=16).hexdigest()


def _to_float(layer: np.ndarray) -> np.ndarray:
    return layer.astype(np.float32) * (1.0 / 255.0)


def _over(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """Premultiplied ``top`` over ``bottom`` (both float RGBA or bottom RGB opaque)."""
    inv = 1.0 - top[..., 3:4]
    if bottom.shape[-1] == 3:
        return top[..., :3] + bottom * inv
    return top + bottom * inv


def _paste(region: Box, layer: tuple[Box | None, np.ndarray | None]) -> np.ndarray:
    """The layer inside ``region`` as float RGBA (zeros where it has no pixels)."""
    y0, y1, x0, x1 = region
    out = np.zeros((y1 - y0, x1 - x0, 4), np.float32)
    box, pixels = layer
    if box is not None:
        by0, by1, bx0, bx1 = box
        out[by0 - y0:by1 - y0, bx0 - x0:bx1 - x0] = _to_float(pixels)
    return out


def _composite(size, blocks, block_layer, without_layer, regions, patches, budget):
    area = lambda r: 0 if r is None else (r[1] - r[0]) * (r[3] - r[2])  # noqa: E731
    # Chunks of consecutive blocks whose stored "above" crops fit the memory budget.
    chunks: list[tuple[int, int]] = []
    start, used = 0, 0
    for b in range(len(blocks)):
        cost = area(regions[b]) * 16
        if b > start and used + cost > budget:
            chunks.append((start, b))
            start, used = b, 0
        used += cost
    chunks.append((start, len(blocks)))

    below = np.ones((size, size, 3), np.float32)  # white ground, then blocks in z-order
    for c0, c1 in chunks:
        above_crops: dict[int, np.ndarray] = {}
        above = np.zeros((size, size, 4), np.float32)
        for b in range(len(blocks) - 1, c0 - 1, -1):
            if c0 <= b < c1 and regions[b] is not None:
                y0, y1, x0, x1 = regions[b]
                above_crops[b] = above[y0:y1, x0:x1].copy()
            box, pixels = block_layer[b]
            if box is not None and b > c0:  # block b lies under everything added so far
                y0, y1, x0, x1 = box
                above[y0:y1, x0:x1] = _over(above[y0:y1, x0:x1], _to_float(pixels))
        for b in range(c0, c1):
            block = blocks[b]
            region = regions[b]
            if region is None:
                for k in block.units:
                    patches[k] = Patch(None, None)
            else:
                y0, y1, x0, x1 = region
                under = below[y0:y1, x0:x1]
                top = above_crops.pop(b)
                for k in block.units:
                    middle = under if len(block) == 1 else _over(_paste(region,
                                                                        without_layer[k]), under)
                    rgb = _over(top, middle)
                    patches[k] = Patch(region, np.clip(np.rint(rgb * 255.0), 0, 255)
                                       .astype(np.uint8))
            box, pixels = block_layer[b]
            if box is not None:
                y0, y1, x0, x1 = box
                below[y0:y1, x0:x1] = _over(_to_float(pixels), below[y0:y1, x0:x1])


def leave_one_out(us: UnitSet, method: str = "fast", size: int = 384,
                  limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None,
                  progress: ProgressFn | None = None,
                  layer_cache: MutableMapping | None = None) -> LooResult:
    if method == "naive":
        return loo_naive(us, size, limits, pool, progress)
    if method == "fast":
        return loo_fast(us, size, limits, pool, progress, layer_cache=layer_cache)
    raise ValueError(f"unknown leave-one-out method {method!r} (fast or naive)")
