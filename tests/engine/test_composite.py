"""The live-pixel compositing equals the unit-by-unit chain of "over", bit for bit (the
engine picks one or the other by the work each would do; both are tested here)."""

from __future__ import annotations

import numpy as np
import pytest

import svgloo.engine.leave_one_out.loo as loo
from svgloo.engine.rendering.composite import composite_without, over_u8, paste, tight
from svgloo.engine.reading.document import load_document
from svgloo.engine.rendering.render import over_white
from svgloo.engine.reading.units import extract_units

# Overlap-heavy (577 units, 23,600 region x layer pairs), a compound-path emoji (windows,
# local blocks) and a logo with group opacity.
FILES = ["logos/memgraph.svg", "noto/emoji_u1f9af.svg", "logos/tastejs.svg",
         "logos/safari.svg", "twemoji/1f46f.svg"]


def chain_of_over(size, blocks, block_layer, without_layer, unit_region, full):
    """The leave-one-out images as the engine computed them before (one unit at a time:
    the blocks below, the block without the unit, every later block meeting the region)."""
    out = {}
    below = np.zeros((size, size, 4), np.uint8)
    for b, block in enumerate(blocks):
        for k in block.units:
            region = unit_region[k]
            if region is None:
                out[k] = (None, None)
                continue
            y0, y1, x0, x1 = region
            canvas = below[y0:y1, x0:x1].copy()
            if len(block) > 1:
                canvas = over_u8(paste(region, without_layer[k]), canvas)
            for j in range(b + 1, len(blocks)):
                box, pixels = block_layer[j]
                if box is None:
                    continue
                by0, by1, bx0, bx1 = box
                iy0, iy1, ix0, ix1 = max(y0, by0), min(y1, by1), max(x0, bx0), min(x1, bx1)
                if iy0 >= iy1 or ix0 >= ix1:
                    continue
                view = canvas[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0]
                canvas[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0] = over_u8(
                    pixels[iy0 - by0:iy1 - by0, ix0 - bx0:ix1 - bx0], view)
            out[k] = tight(region, over_white(canvas), full)
        box, pixels = block_layer[b]
        if box is not None:
            y0, y1, x0, x1 = box
            below[y0:y1, x0:x1] = over_u8(pixels, below[y0:y1, x0:x1])
    return out


def _same(a, b) -> bool:
    return a[0] == b[0] and (a[1] is None and b[1] is None
                             or a[1] is not None and b[1] is not None
                             and np.array_equal(a[1], b[1]))


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", FILES)
def test_live_pixel_compositing_equals_the_unit_by_unit_chain(corpus_dir, render_pool,
                                                               monkeypatch, name):
    seen = []
    real = loo._composite

    def spy(size, blocks, stack, patches, full, stage, *rest):
        seen.append((size, blocks, stack.block_layer, dict(stack.without_layer),
                     list(stack.unit_region), full))
        return real(size, blocks, stack, patches, full, stage, *rest)

    monkeypatch.setattr(loo, "_composite", spy)
    us = extract_units(load_document(corpus_dir / name))
    result = loo.loo_fast(us, 192, pool=render_pool)
    [(size, blocks, block_layer, without_layer, unit_region, full)] = seen
    expected = chain_of_over(size, blocks, block_layer, without_layer, unit_region, full)
    assert len(expected) == len(us.units)
    for k, patch in enumerate(result.patches):
        assert _same((patch.box, patch.pixels), expected[k]), f"unit {k}"
    # each method, on every unit and on a subset (as after an edit)
    some = set(range(0, len(us.units), 3))
    for method in ("live", "chain"):
        for only in (None, some):
            got = {}
            composite_without(size, [b.units for b in blocks], block_layer, without_layer,
                              unit_region, full, got.__setitem__, only,
                              method)
            assert set(got) == (some if only else set(range(len(us.units))))
            assert all(_same(got[k], expected[k]) for k in got), (method, bool(only))


def test_opaque_and_empty_pixels_are_exact_shortcuts():
    """The two facts the compositing rests on, for every value below."""
    dst = np.stack(np.meshgrid(np.arange(256), np.arange(256)), -1).reshape(-1, 2)
    below = np.zeros((len(dst), 4), np.uint8)
    below[:, 0] = dst[:, 0]
    below[:, 3] = np.maximum(dst[:, 0], dst[:, 1])
    empty = np.zeros_like(below)
    assert np.array_equal(over_u8(empty, below), below)
    opaque = np.zeros_like(below)
    opaque[:, 0], opaque[:, 3] = dst[:, 1], 255
    assert np.array_equal(over_u8(opaque, below), opaque)


# --- many layers that all overlap (issue 37): bounded chunks, same bytes ---------------

def _stack_of(text: str, size: int, render_pool):
    """The layer stack loo_fast composites for ``text`` at ``size``."""
    from svgloo.engine.reading.document import parse_document

    seen = []

    def spy(size, blocks, stack, patches, full, stage, *rest):
        seen.append((size, [list(b.units) for b in blocks], stack.block_layer,
                     dict(stack.without_layer), list(stack.unit_region), full))
        raise _Stop

    us = extract_units(parse_document(text, "stacked.svg"))
    real = loo._composite
    loo._composite = spy
    try:
        with pytest.raises(_Stop):
            loo.loo_fast(us, size, pool=render_pool)
    finally:
        loo._composite = real
    return seen[0]


class _Stop(Exception):
    pass


def test_stacked_translucent_layers_composite_in_chunks_bit_for_bit(render_pool):
    """160 translucent rects, each overlapping every other: the chunked sweep (one chunk,
    and many small ones with their checkpoints and tails) gives the bytes of the
    unit-by-unit chain of "over" for every unit."""
    from svgloo.engine.rendering.composite_sweep import sweep_without
    from svgloo.validation.big_inputs import stacked_rects

    size, block_units, block_layer, without_layer, unit_region, full = _stack_of(
        stacked_rects(160), 96, render_pool)
    assert len(block_units) == 160

    class Block:
        def __init__(self, units):
            self.units = units

        def __len__(self):
            return len(self.units)

    expected = chain_of_over(size, [Block(u) for u in block_units], block_layer,
                             without_layer, unit_region, full)
    assert sum(p[0] is not None for p in expected.values()) > 100  # most units show
    wanted = [k for units in block_units for k in units]
    for max_records in (10 ** 9, 3 * 58 * 58):  # everything at once; ~3 units a chunk
        got = {}
        sweep_without(size, block_units, block_layer, without_layer, unit_region, full,
                      got.__setitem__, wanted, max_records=max_records)
        assert list(got) == wanted  # in z-order
        assert all(_same(got[k], expected[k]) for k in wanted), max_records


def test_compositing_many_overlapping_layers_holds_a_bounded_amount_of_memory(
        render_pool):
    """300 stacked translucent rects at 192 px: every unit's region is a third of the
    canvas. Held all at once, their pixels took ~250 MB of records; in chunks the
    compositing's peak stays under 60 MB (numpy reports its buffers to tracemalloc)."""
    import tracemalloc

    from svgloo.validation.big_inputs import stacked_rects

    size, block_units, block_layer, without_layer, unit_region, full = _stack_of(
        stacked_rects(300), 192, render_pool)
    region_pixels = sum((r[1] - r[0]) * (r[3] - r[2]) for r in unit_region if r)
    assert region_pixels > 3_000_000
    got = {}
    tracemalloc.start()
    try:
        composite_without(size, block_units, block_layer, without_layer, unit_region,
                          full, lambda k, p: got.__setitem__(k, p), None, "live")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    patches = sum(p[1].nbytes for p in got.values() if p[1] is not None)
    assert len(got) == 300
    assert peak - patches < 60 * 2 ** 20, (peak / 2 ** 20, patches / 2 ** 20)


def test_compositing_stops_when_the_documents_budget_is_spent(render_pool):
    """The compositing runs in the main process: it calls the budget's check as it goes,
    and the check's error stops it."""
    from svgloo.validation.big_inputs import stacked_rects

    size, block_units, block_layer, without_layer, unit_region, full = _stack_of(
        stacked_rects(120), 96, render_pool)
    calls = []

    def check():
        calls.append(1)
        if len(calls) > 3:
            raise TimeoutError("budget spent")

    for method in ("live", "chain"):
        calls.clear()
        with pytest.raises(TimeoutError):
            composite_without(size, block_units, block_layer, without_layer, unit_region,
                              full, lambda k, p: None, None, method, check=check)


def test_over_is_cairos_rounded_over_for_every_colour_and_alpha():
    """over_u8 against pixman's arithmetic written out in Python integers, for every
    (destination value, source alpha) pair in each channel, with source colours that
    saturate (not premultiplied) as well as premultiplied ones, on a strided view too."""
    d, a = np.meshgrid(np.arange(256), np.arange(256))
    d, a = d.ravel(), a.ravel()
    dst = np.stack([d, 255 - d, d // 2, (d * 7) % 256], -1).astype(np.uint8)
    src = np.stack([(a * d) // 255, d, 255 - a, a], -1).astype(np.uint8)

    def div_255(x):
        x = x + 128
        return (x + (x >> 8)) >> 8

    want = np.minimum(src.astype(np.int64)
                      + div_255(dst.astype(np.int64) * (255 - a[:, None])), 255)
    assert np.array_equal(over_u8(src, dst), want.astype(np.uint8))
    image = dst.reshape(256, 256, 4)
    view, over = image[3:200:2, 10:250], src.reshape(256, 256, 4)[3:200:2, 10:250]
    assert np.array_equal(over_u8(over, view), want.reshape(256, 256, 4)[3:200:2, 10:250])


def test_over_white_is_min_of_colour_and_alpha_plus_the_white_showing_through():
    """over_white_u8 against its definition, for every (colour, alpha) pair (premultiplied
    or not), on a (n, 4) array and on a strided view of an image."""
    from svgloo.engine.rendering.over import over_white_u8

    c, a = np.meshgrid(np.arange(256), np.arange(256))
    c, a = c.ravel(), a.ravel()
    rgba = np.stack([c, 255 - c, (c * a) // 255, a], -1).astype(np.uint8)
    want = (np.minimum(rgba[:, :3].astype(np.int64), a[:, None]) + 255 - a[:, None])
    assert np.array_equal(over_white_u8(rgba), want.astype(np.uint8))
    image = rgba.reshape(256, 256, 4)
    view = image[3:200:2, 10:250]
    assert np.array_equal(over_white_u8(view), want.reshape(256, 256, 3)[3:200:2, 10:250])
