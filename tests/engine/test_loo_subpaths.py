"""Compound paths: each subpath's leave-one-out image is rebuilt in its window only, and
must equal the naive method (one full render per subpath) within 2/255."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import MutableMapping

import numpy as np
import pytest

from svgloo.engine.reading.document import parse_document
from svgloo.engine.leave_one_out.loo import loo_fast, loo_naive
from svgloo.engine.reading.units import extract_units

TOLERANCE = 2  # /255 per channel


def _worst(fast, naive, n):
    worst = int(np.abs(fast.full.astype(int) - naive.full).max())
    for k in range(n):
        worst = max(worst, int(np.abs(fast.image_without(k).astype(int)
                                      - naive.image_without(k)).max()))
    return worst


def _svg(body: str, view: str = "0 0 100 100") -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{view}">'
            f'<defs><linearGradient id="bb"><stop offset="0" stop-color="red"/>'
            f'<stop offset="1" stop-color="blue"/></linearGradient>'
            f'<linearGradient id="us" gradientUnits="userSpaceOnUse" x1="0" x2="100">'
            f'<stop offset="0" stop-color="red"/><stop offset="1" stop-color="blue"/>'
            f'</linearGradient>'
            f'<marker id="dot" markerWidth="4" markerHeight="4" refX="2" refY="2">'
            f'<circle cx="2" cy="2" r="2" fill="orange"/></marker></defs>'
            f'<rect x="5" y="5" width="50" height="50" fill="#8c8"/>{body}'
            f'<circle cx="70" cy="30" r="12" fill="purple" fill-opacity="0.6"/></svg>')


SQUARES = " ".join(f"M{12 + (i % 5) * 16} {12 + (i // 5) * 16}h9v9h-9z" for i in range(20))
CASES = {
    # a frame with holes, even-odd: removing the frame fills nothing, a hole fills in
    "evenodd_frame_and_holes": f'<path fill-rule="evenodd" d="M2 2H98V98H2Z {SQUARES}"/>',
    # nonzero with a reversed inner subpath (a hole only by winding)
    "nonzero_hole": '<path d="M10 10h60v60h-60z M20 20v40h40v-40z M80 80h10v10h-10z"/>',
    # relative movetos chained through closed and open subpaths
    "relative_m": '<path fill="teal" d="m10.3 10.7 h20 v20 h-20 z m30 0 h15 l-5 12 z '
                  'm-30 40 c5 -10 15 -10 20 0 s15 10 20 0 m10 10 l12 3 l-4 9"/>',
    "stroke_miter": '<path fill="none" stroke="navy" stroke-width="3" stroke-linejoin="miter" '
                    'stroke-miterlimit="10" d="M10 10 L40 14 L10 18 M50 10 l10 40 l3 -40 '
                    'M20 60 L80 64 L20 68 M70 75 l20 2 l-19 2"/>',
    "stroke_and_fill_round": '<path fill="gold" stroke="black" stroke-width="4" '
                             'stroke-linejoin="round" stroke-linecap="round" '
                             'd="M10 10h30v30h-30z M35 35h30v30h-30z M70 10l20 20"/>',
    "arcs_and_curves": '<path fill="crimson" d="M10 50 a15 15 0 1 0 30 0 a15 15 0 1 0 -30 0 z '
                       'M50 20 C60 0 80 40 90 20 Z M55 70 q10 -20 20 0 t20 0 z"/>',
    "transformed": '<g transform="rotate(17 50 50) scale(0.9)"><path fill="#333" '
                   f'fill-rule="evenodd" transform="translate(3.3 1.7)" d="M2 2H98V98H2Z {SQUARES}"/></g>',
    "user_space_gradient": f'<path fill="url(#us)" fill-rule="evenodd" d="M2 2H98V98H2Z {SQUARES}"/>',
    # clipped by paths (exported files: a clipPath of <path>s, or of a <use> of one): the
    # clip's own paths must not be drawn as the windowed path (the left square stays, the
    # right one is clipped away)
    "clip_path_of_paths": '<clipPath id="half"><path d="M0 0H50V100H0Z"/></clipPath>'
                          '<path clip-path="url(#half)" fill="teal" d="M10 10h20v20h-20z '
                          'M60 10h30v20h-30z M10 50h80v20h-80z M20 80h10v10h-10z"/>',
    "clip_path_use": '<defs><path id="leftside" d="M0 0H50V100H0Z"/></defs>'
                     '<clipPath id="half2"><use href="#leftside"/></clipPath>'
                     '<path clip-path="url(#half2)" fill="teal" d="M10 10h20v20h-20z '
                     'M60 10h30v20h-30z M10 50h80v20h-80z"/>',
    # non-local: these fall back to the whole-path method and must still be exact
    "bounding_box_gradient": f'<path fill="url(#bb)" d="M2 2h10v10h-10z {SQUARES}"/>',
    "markers": '<path fill="none" stroke="black" marker-start="url(#dot)" marker-end="url(#dot)" '
               'd="M10 10 L30 30 M50 50 L70 60 M80 20 L90 90"/>',
    "dashes": '<path fill="none" stroke="black" stroke-dasharray="4 3" '
              'd="M10 10 L90 12 M10 30 L90 35 M10 60 L90 58"/>',
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_subpath_leave_one_out_equals_naive(render_pool, name):
    us = extract_units(parse_document(_svg(CASES[name]), f"{name}.svg"))
    assert any(u.kind == "subpath" for u in us.units)
    fast = loo_fast(us, pool=render_pool)
    naive = loo_naive(us, pool=render_pool)
    assert _worst(fast, naive, len(us.units)) <= TOLERANCE
    # every subpath that draws something changes the picture when it goes
    if name == "evenodd_frame_and_holes":
        assert all(fast.patches[k].box is not None for k in range(1, len(us.units) - 1))


def test_windows_are_kept_only_where_their_subpath_changes_the_path(render_pool):
    """issue 25: a subpath's window spans the canvas's width, and a path of thousands of
    subpaths held every window whole (61 MB of the main process's 127 MB at 4,900). Each
    subpath's layer without it is kept only where it differs from the whole path's layer
    - its region, all that compositing reads - and the patches stay exact."""
    us = extract_units(parse_document(_svg(CASES["evenodd_frame_and_holes"]), "t.svg"))
    fast = loo_fast(us, pool=render_pool)
    holes = [u.index for u in us.units if u.kind == "subpath" and u.subpath > 0]
    assert len(holes) == 20
    for k in holes:
        box, pixels = fast.stack.without_layer[k]
        assert box is not None and box == fast.stack.unit_region[k]
        assert pixels.shape == (box[1] - box[0], box[3] - box[2], 4)
        # a 9-unit hole at 384 px (35 px and its edges), not a window 384 px wide
        assert box[3] - box[2] <= 40 and box[1] - box[0] <= 40
    naive = loo_naive(us, pool=render_pool)
    assert _worst(fast, naive, len(us.units)) <= TOLERANCE


def test_local_and_non_local_paths_are_told_apart(render_pool):
    from svgloo.engine.leave_one_out.blocks import compute_blocks, unaffected_units
    from svgloo.engine.leave_one_out.layer_render import Captures, LayerRenderer
    from svgloo.engine.leave_one_out.layers import LayerTexts
    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.engine.leave_one_out.loo import absolute_subpaths
    from svgloo.engine.progress import WorkProgress
    from svgloo.engine.leave_one_out.subpath_windows import subpath_windows, windowed_paths

    def handled(name):
        us = absolute_subpaths(extract_units(parse_document(_svg(CASES[name]), "t.svg")))
        renderer = LayerRenderer("t.svg", 96, DEFAULT_LIMITS, render_pool, None, 8)
        renderer.capture = Captures(us, LayerTexts(us, True))
        blocks = compute_blocks(us)
        paths = windowed_paths(us, blocks, unaffected_units(us))
        stage = WorkProgress(None).stage(0)
        handled, _windows = subpath_windows(us, blocks, paths, renderer, 96, stage, stage)
        return bool(handled)

    assert handled("evenodd_frame_and_holes") and handled("user_space_gradient")
    assert handled("clip_path_of_paths") and handled("clip_path_use")
    assert not handled("bounding_box_gradient")
    assert not handled("markers")
    assert not handled("dashes")


class TinyCache(MutableMapping):
    """A layer cache that keeps only its last two entries, like a full LRU cache."""

    def __init__(self):
        self.data: OrderedDict = OrderedDict()

    def __getitem__(self, key):
        return self.data[key]

    def __setitem__(self, key, value):
        self.data[key] = value
        while len(self.data) > 2:
            self.data.popitem(last=False)

    def __delitem__(self, key):
        del self.data[key]

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


def test_a_cache_that_evicts_what_it_was_given_changes_nothing(render_pool):
    # issue 12, item 3: one even-odd path (a frame and 40 squares) plus a few elements,
    # through a layer cache far too small to hold one document's layers.
    squares = " ".join(f"M{4 + (i % 8) * 12} {4 + (i // 8) * 12}h6v6h-6z" for i in range(40))
    svg = _svg(f'<path fill-rule="evenodd" d="M1 1H99V99H1Z {squares}"/>'
               '<rect x="60" y="60" width="20" height="20" opacity="0.5"/>')
    us = extract_units(parse_document(svg, "frame.svg"))
    plain = loo_fast(us, size=128, pool=render_pool)
    cache = TinyCache()
    small = loo_fast(us, size=128, pool=render_pool, layer_cache=cache)
    again = loo_fast(us, size=128, pool=render_pool, layer_cache=cache)
    assert len(cache) == 2
    for result in (small, again):
        assert np.array_equal(result.full, plain.full)
        for k in range(len(us.units)):
            assert np.array_equal(result.image_without(k), plain.image_without(k))


def _canvas(layer, size):
    out = np.zeros((size, size, 4), np.int16)
    box, crop = layer
    if box is not None:
        y0, y1, x0, x1 = box
        out[y0:y1, x0:x1] = crop
    return out


LOCAL = ["evenodd_frame_and_holes", "nonzero_hole", "relative_m", "stroke_miter",
         "stroke_and_fill_round", "arcs_and_curves", "transformed", "user_space_gradient",
         "clip_path_of_paths", "clip_path_use"]


@pytest.mark.parametrize("name", LOCAL)
def test_subpaths_drawn_alone_in_their_windows_equal_their_own_layers(render_pool, name):
    """What fast draws alone on the way (for findings) is each subpath's layer as the
    engine renders it for a document keeping that subpath only."""
    from svgloo.engine.scoring.findings import render_layers
    from svgloo.engine.limits import DEFAULT_LIMITS

    us = extract_units(parse_document(_svg(CASES[name]), f"{name}.svg"))
    fast = loo_fast(us, size=128, pool=render_pool, alone=True)
    subpaths = [u.index for u in us.units if u.kind == "subpath"]
    assert sorted(fast.alone) == subpaths  # every subpath of the (windowed) path
    own = render_layers(us, [frozenset({k}) for k in subpaths], 128, DEFAULT_LIMITS,
                        render_pool)
    for k, layer in zip(subpaths, own):
        assert int(np.abs(_canvas(fast.alone[k], 128) - _canvas(layer, 128)).max()) <= TOLERANCE
    if name.startswith("clip_path"):  # the square right of the clip draws nothing
        assert fast.alone[subpaths[1]] == (None, None) and own[1] == (None, None)
    assert loo_fast(us, size=128, pool=render_pool).alone == {}  # only when asked


def test_a_path_of_many_subpaths_costs_memory_linear_in_them(render_pool):
    """issue 25: every subpath used to get its own set of all its path's subpaths, n^2
    entries (at 1,200 subpaths ~35 MB of Python objects beside the ~12 MB the method needs;
    at 10,000, 5 GB). Now one set per path, shared: the fast method's own allocations for
    1,200 subpaths stay under 25 MB. A bound on memory, not on time."""
    import tracemalloc

    from svgloo.engine.leave_one_out.loo import whole_paths
    from svgloo.validation.bench_loo import synthetic_path

    us = extract_units(parse_document(synthetic_path(1200), "many.svg"))
    whole = whole_paths(us)
    assert len(whole) == 1200 and len({id(s) for s in whole.values()}) == 1  # one path
    assert whole[0] == frozenset(range(1200))
    tracemalloc.start()
    try:
        fast = loo_fast(us, size=128, pool=render_pool)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 25 * 2 ** 20, f"{peak / 2 ** 20:.0f} MB"
    # and the result is the right one: every square is a hole whose removal fills it
    assert all(fast.patches[k].box is not None for k in range(1, 1200))
