"""Leave-one-out images of many overlapping layers in bounded memory: a forward sweep
over the layers, a few units at a time, that follows only the pixels still different.

The image without unit k (of block b) is, pixel by pixel, the chain of cairo's 8-bit
"over" (composite.over_u8) starting from the prefix P(b-1) (blocks 0..b-1 composited)
with b drawn without k, then every later block in z-order. The whole stack is the same
chain started from P(b). Three exact facts keep that cheap:

- where the two chains hold the same four bytes after some block j, they stay equal to
  the end (the same functions are applied to the same value): the pixel is the whole
  stack's there. Translucent layers shrink the difference every time one is drawn over
  it, so on a stack of hundreds of overlapping layers a pixel's difference dies within a
  few dozen layers (an opaque pixel ends it at once: "over" then returns the source);
- a layer pixel that is 0 in all four channels leaves the value below as it is, so a
  pixel that no later block draws on is final;
- so only the pixels of a unit that still differ ("records": pixel, unit, value) are
  carried from block to block, and they are dropped when they meet the whole stack's
  value or when no later block draws there.

Exactness rules out the textbook shortcut (image without k = suffix(k+1..N) over
prefix(1..k-1)): with 8-bit rounding, "over" is not associative, so a precomposited
suffix gives other bytes than cairo's order. The sweep keeps cairo's order per pixel.

Memory: the units are taken in z-order chunks whose regions hold at most
``MAX_RECORDS`` pixels together; each chunk sweeps from a checkpoint of the prefix at its
first block (one canvas, saved as the previous chunk's sweep passes it) until none of its
records is left, so at most three canvases, the chunk's records and one chunk of patches
are held, whatever the number of units. Time: one sweep over all layers (the whole stack
and where each pixel is last drawn on), plus per chunk the layers until its records die.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from svgloo.engine.rendering.over import _nonzero_words, over_u8, over_white_u8, paste, tight
from svgloo.engine.rendering.raster import Box, Layer

# Pixels of the regions of one chunk of units: bounds the records (about 20 bytes each)
# and the sweep's temporary arrays to a few tens of MB.
MAX_RECORDS = 2_000_000
CHECK_EVERY = 8  # blocks between two calls of ``check`` (the document's time budget)


def _words(rgba: np.ndarray) -> np.ndarray:
    """An RGBA array (C-contiguous in its last two axes' layout) as one uint32 per pixel:
    comparing pixels is then one operation, not four and a reduction."""
    return rgba.view(np.uint32)[..., 0]


def whole_and_last_drawn(size: int, block_layer: Sequence[Layer],
                         check: Callable[[], None] | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(the whole stack composited over transparent, RGBA; per pixel the last block whose
    layer is not 0 there, -1: none)."""
    below = np.zeros((size, size, 4), np.uint8)
    last_drawn = np.full((size, size), -1, np.int32)
    for j, (box, pixels) in enumerate(block_layer):
        if check is not None and j % CHECK_EVERY == 0:
            check()
        if box is None:
            continue
        y0, y1, x0, x1 = box
        below[y0:y1, x0:x1] = over_u8(pixels, below[y0:y1, x0:x1])
        last_drawn[y0:y1, x0:x1][_nonzero_words(pixels)] = j
    return below, last_drawn


def _chunks(wanted: list[int], unit_region: Sequence[Box | None],
            max_records: int) -> list[list[int]]:
    chunks: list[list[int]] = [[]]
    held = 0
    for k in wanted:
        region = unit_region[k]
        area = 0 if region is None else (region[1] - region[0]) * (region[3] - region[2])
        if chunks[-1] and held + area > max_records:
            chunks.append([])
            held = 0
        chunks[-1].append(k)
        held += area
    return chunks


class _Records:
    """The pixels of a chunk's units where their chain still differs from the whole
    stack's: position, unit (index in the chunk), value, and the last block that draws
    there. A record that meets the whole stack's value is marked dead and dropped at the
    next compaction; one that no later block draws on keeps its value to the end."""

    def __init__(self):
        self.y = np.zeros(0, np.int32)
        self.x = np.zeros(0, np.int32)
        self.unit = np.zeros(0, np.int32)
        self.value = np.zeros((0, 4), np.uint8)
        self.last = np.zeros(0, np.int32)
        self.alive = np.zeros(0, bool)
        self.dead = 0
        # In the tail (see _tail): the whole stack's prefix at each record, sorted by y.
        self.prefix: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.y) - self.dead

    def add(self, y, x, unit, value, last) -> None:
        self.y = np.concatenate((self.y, y))
        self.x = np.concatenate((self.x, x))
        self.unit = np.concatenate((self.unit, unit))
        self.value = np.concatenate((self.value, value))
        self.last = np.concatenate((self.last, last))
        self.alive = np.concatenate((self.alive, np.ones(len(y), bool)))

    def kill(self, indices: np.ndarray) -> None:
        self.alive[indices] = False
        self.dead += len(indices)
        if self.dead > len(self.y) // 2:
            self._select(self.alive)

    def _select(self, keep: np.ndarray) -> None:
        self.y, self.x, self.unit = self.y[keep], self.x[keep], self.unit[keep]
        self.value, self.last, self.alive = self.value[keep], self.last[keep], self.alive[keep]
        if self.prefix is not None:
            self.prefix = self.prefix[keep]
        self.dead = int(len(self.alive) - np.count_nonzero(self.alive))

    def sort_by_row(self) -> None:
        """Drop the dead records and sort the rest by row."""
        alive = np.flatnonzero(self.alive)
        self._select(alive[np.argsort(self.y[alive], kind="stable")])

    def final(self) -> tuple[np.ndarray, ...]:
        """(y, x, unit, value) of the records still alive: their values are final."""
        keep = self.alive
        return self.y[keep], self.x[keep], self.unit[keep], self.value[keep]


class _Dense:
    """A unit's chain over its whole region while most of it still differs (dense array
    operations are several times cheaper than gathers and scatters of records)."""

    def __init__(self, i: int, region: Box, value: np.ndarray, live: np.ndarray,
                 horizon: int):
        self.i, self.region, self.value, self.live = i, region, value, live
        self.count = int(np.count_nonzero(live))
        self.horizon = horizon  # the last block drawing on any of its live pixels


# A unit's chain goes from dense to records once at most this share of its region is live.
DENSE_SHARE = 1 / 8
# Past the chunk's last block, dense chains that are still mostly live after this many
# blocks go on as records all the same (the canvas is no longer updated then).
DENSE_AFTER = 16


def sweep_without(size: int, block_units: Sequence[Sequence[int]],
                  block_layer: Sequence[Layer], without_layer: dict[int, Layer],
                  unit_region: Sequence[Box | None], full: np.ndarray,
                  on_unit: Callable[[int, tuple], None], wanted: list[int],
                  check: Callable[[], None] | None = None,
                  max_records: int = MAX_RECORDS) -> None:
    """``on_unit(k, (box, rgb))`` for every unit of ``wanted`` (in z-order), as
    composite.composite_without: k's image inside its region, shrunk to where it differs
    from ``full``. ``check`` is called every few blocks (it raises to stop the work)."""
    n_blocks = len(block_layer)
    block_of = {k: b for b, units in enumerate(block_units) for k in units}
    whole_rgba, last_drawn = whole_and_last_drawn(size, block_layer, check)
    whole = over_white_u8(whole_rgba)
    del whole_rgba
    chunks = _chunks(wanted, unit_region, max_records)
    checkpoint = np.zeros((size, size, 4), np.uint8)  # P(first block of the chunk - 1)
    for c, chunk in enumerate(chunks):
        first = block_of[chunk[0]]
        next_first = block_of[chunks[c + 1][0]] if c + 1 < len(chunks) else None
        below = checkpoint.copy()
        below_words = _words(below)
        saved = None if next_first is not None and next_first != first else checkpoint
        records = _Records()
        dense: list[_Dense] = []
        dense_final: dict[int, _Dense] = {}
        by_block: dict[int, list[int]] = {}
        for i, k in enumerate(chunk):
            by_block.setdefault(block_of[k], []).append(i)
        # The sweep goes at least to the chunk's last block, and to the block before the
        # next chunk's first (where the next checkpoint is taken).
        last_block = max(block_of[chunk[-1]], (next_first or 0) - 1)
        j = first
        while j < n_blocks:
            if check is not None and (j - first) % CHECK_EVERY == 0:
                check()
            box, pixels = block_layer[j]
            hit = None
            touched: list[tuple[_Dense, Box]] = []
            if box is not None:
                y0, y1, x0, x1 = box
                if len(records):
                    hit = np.flatnonzero(records.alive & (records.y >= y0) & (records.y < y1)
                                         & (records.x >= x0) & (records.x < x1))
                    if hit.size:
                        src = pixels[records.y[hit] - y0, records.x[hit] - x0]
                        records.value[hit] = over_u8(src, records.value[hit])
                for d in dense:
                    ry0, ry1, rx0, rx1 = d.region
                    iy0, iy1, ix0, ix1 = max(y0, ry0), min(y1, ry1), max(x0, rx0), min(x1, rx1)
                    if iy0 >= iy1 or ix0 >= ix1:
                        continue
                    part = (slice(iy0 - ry0, iy1 - ry0), slice(ix0 - rx0, ix1 - rx0))
                    d.value[part] = over_u8(pixels[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0],
                                            d.value[part])
                    touched.append((d, (iy0, iy1, ix0, ix1)))
            # The chains of block j's units start from P(j - 1), b drawn without them.
            starts = []
            for i in by_block.get(j, ()):
                k = chunk[i]
                region = unit_region[k]
                if region is None:
                    continue
                ry0, ry1, rx0, rx1 = region
                start = below[ry0:ry1, rx0:rx1].copy()
                if len(block_units[j]) > 1:
                    start = over_u8(paste(region, without_layer[k]), start)
                starts.append((i, region, start))
            if box is not None:
                below[y0:y1, x0:x1] = over_u8(pixels, below[y0:y1, x0:x1])
            if next_first is not None and j == next_first - 1:
                saved = below.copy()
            # Records equal to the whole stack's prefix stay equal: drop them.
            if hit is not None and hit.size:
                same = _words(records.value[hit]) == below_words[records.y[hit], records.x[hit]]
                records.kill(hit[same])
            for d, (iy0, iy1, ix0, ix1) in touched:
                ry0, rx0 = d.region[0], d.region[2]
                part = (slice(iy0 - ry0, iy1 - ry0), slice(ix0 - rx0, ix1 - rx0))
                before = int(np.count_nonzero(d.live[part]))
                d.live[part] = _words(d.value)[part] != below_words[iy0:iy1, ix0:ix1]
                d.count += int(np.count_nonzero(d.live[part])) - before
            for i, region, start in starts:
                ry0, ry1, rx0, rx1 = region
                live = _words(start) != below_words[ry0:ry1, rx0:rx1]
                lasts = last_drawn[ry0:ry1, rx0:rx1]
                horizon = int(lasts[live].max()) if live.any() else -1
                dense.append(_Dense(i, region, start, live, horizon))
            # Chains that are mostly the whole stack's go on as records; chains that no
            # later block draws on are final.
            still = []
            for d in dense:
                area = d.live.size
                if d.count == 0:
                    continue
                if d.horizon <= j:
                    dense_final[d.i] = d
                elif d.count <= area * DENSE_SHARE or j >= last_block + DENSE_AFTER:
                    _to_records(d, records, last_drawn)
                else:
                    still.append(d)
            dense = still
            if j >= last_block and not dense:
                # Every unit of the chunk has started, the next checkpoint is taken and
                # the chains are down to a few pixels each: the rest needs the whole
                # stack's prefix only where records are.
                _tail(records, below, block_layer, j + 1, check)
                break
            j += 1
        for d in dense:
            dense_final[d.i] = d
        _emit(chunk, records.final(), dense_final, unit_region, whole, full, on_unit)
        if next_first is not None:
            checkpoint = saved if saved is not None else checkpoint


def _to_records(d: _Dense, records: _Records, last_drawn: np.ndarray) -> None:
    ys, xs = np.nonzero(d.live)
    value = d.value[ys, xs]
    ys, xs = (ys + d.region[0]).astype(np.int32), (xs + d.region[2]).astype(np.int32)
    records.add(ys, xs, np.full(len(ys), d.i, np.int32), value, last_drawn[ys, xs])


def _tail(records: _Records, below: np.ndarray, block_layer: Sequence[Layer], start: int,
          check: Callable[[], None] | None) -> None:
    """The blocks from ``start`` on, applied to the records only: each carries the whole
    stack's prefix at its pixel as well as its own value, so no canvas is updated (a few
    records at the edges of a unit can stay different for hundreds of blocks, each of
    which would otherwise cost a canvas-sized composite per chunk). Records sorted by
    row: a block finds its own by two binary searches."""
    if not len(records):
        return
    records.sort_by_row()  # (dead records dropped)
    records.prefix = below[records.y, records.x]
    # Past the last block drawing on any record, nothing changes.
    end = min(len(block_layer), int(records.last.max()) + 1)
    for j in range(start, end):
        if not len(records):
            return
        if check is not None and j % CHECK_EVERY == 0:
            check()
        box, pixels = block_layer[j]
        if box is None:
            continue
        y0, y1, x0, x1 = box
        lo, hi = np.searchsorted(records.y, (y0, y1))
        if lo == hi:
            continue
        inside = np.flatnonzero(records.alive[lo:hi] & (records.x[lo:hi] >= x0)
                                & (records.x[lo:hi] < x1)) + lo
        if not inside.size:
            continue
        src = pixels[records.y[inside] - y0, records.x[inside] - x0]
        value = over_u8(src, records.value[inside])
        prefix = over_u8(src, records.prefix[inside])
        records.value[inside], records.prefix[inside] = value, prefix
        records.kill(inside[_words(value) == _words(prefix)])


def _emit(chunk: list[int], final: tuple[np.ndarray, ...], dense: dict[int, _Dense],
          unit_region: Sequence[Box | None], whole: np.ndarray, full: np.ndarray,
          on_unit: Callable[[int, tuple], None]) -> None:
    y, x, unit, value = final
    if len(y):
        order = np.argsort(unit, kind="stable")
        y, x, unit, value = y[order], x[order], unit[order], value[order]
        bounds = np.searchsorted(unit, np.arange(len(chunk) + 1))
    for i, k in enumerate(chunk):
        region = unit_region[k]
        if region is None:
            on_unit(k, (None, None))
            continue
        ry0, ry1, rx0, rx1 = region
        image = whole[ry0:ry1, rx0:rx1].copy()
        d = dense.get(i)
        if d is not None:
            image[d.live] = over_white_u8(d.value[d.live])
        if len(y) and bounds[i] < bounds[i + 1]:
            s = slice(bounds[i], bounds[i + 1])
            image[y[s] - ry0, x[s] - rx0] = over_white_u8(value[s])
        on_unit(k, tight(region, image, full))


__all__ = ["sweep_without", "whole_and_last_drawn", "MAX_RECORDS"]
