"""The fast crop of a drawn layer (one max over ARGB32 words for its box, four channel
copies for its colour) gives the bytes of the plain computation: numpy's any() over the
alpha plane and a fancy index from cairo's B, G, R, A to R, G, B, A, done here from
cairo's own surface."""

from __future__ import annotations

import numpy as np
import pytest

from svgloo.engine.limits import DEFAULT_LIMITS
from svgloo.engine.reading.document import load_document
from svgloo.engine.reading.units import extract_units, text_keeping
from svgloo.engine.rendering import render
from svgloo.engine.rendering.raster import NO_LAYER

from conftest import CORPUS

# Opaque and translucent shapes, strokes reaching the canvas edge, gradients, text.
FILES = ["logos/memgraph.svg", "logos/safari.svg", "noto/emoji_u1f9af.svg",
         "logos/tastejs.svg", "feather/bold.svg", "fontawesome/angle-down.svg"]
ALPHA = 3 if np.little_endian else 0
TO_RGBA = [2, 1, 0, 3] if np.little_endian else [1, 2, 3, 0]


def _plain_layer(native: np.ndarray):
    alpha = native[..., ALPHA]
    rows = np.flatnonzero(alpha.any(axis=1))
    if rows.size == 0:
        return NO_LAYER
    cols = np.flatnonzero(alpha.any(axis=0))
    y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    return (y0, y1, x0, x1), np.ascontiguousarray(native[y0:y1, x0:x1][..., TO_RGBA])


@pytest.mark.parametrize("name", FILES)
def test_render_layer_crops_as_the_plain_computation(name):
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"{name} is not in the shared corpus")
    us = extract_units(load_document(path))
    n = len(us.units)
    for k in sorted({0, n - 1, *range(0, n, max(1, n // 8))}):
        text = text_keeping(us, {k})
        surface, native = render._render_native(text, 96, DEFAULT_LIMITS, name)
        expected = _plain_layer(native)
        del surface
        box, pixels = render.render_layer(text, 96)
        assert box == expected[0], f"{name} unit {k}"
        if box is not None:
            assert pixels.flags.c_contiguous
            np.testing.assert_array_equal(pixels, expected[1], err_msg=f"{name} unit {k}")


def _strided_native(h: int, w: int, pad: int, rng) -> np.ndarray:
    """A (h, w, 4) view into rows of ``w + pad`` pixels, as cairo strides its surfaces."""
    buf = rng.integers(0, 256, (h, (w + pad) * 4), dtype=np.uint8)
    return buf[:, : w * 4].reshape(h, w, 4)


def test_alpha_box_reads_alpha_alone_at_the_edges_of_a_strided_surface():
    rng = np.random.default_rng(7)
    native = _strided_native(9, 11, 3, rng)
    native[..., ALPHA] = 0  # colour without alpha counts as nothing,
    native[2, :] = 255  # white included (the largest word without alpha)
    native[2, :, ALPHA] = 0
    assert render._alpha_box(native) is None
    native[0, 10, ALPHA] = 1  # top row, last column: the weakest alpha
    native[8, 0, ALPHA] = 255
    assert render._alpha_box(native) == (0, 9, 0, 11)
    native[0, 10, ALPHA] = native[8, 0, ALPHA] = 0
    native[4, 5, ALPHA] = 3
    assert render._alpha_box(native) == (4, 5, 5, 6)
    native[4, 5, ALPHA] = 0
    native[1:8, 7, ALPHA] = 9
    assert render._alpha_box(native) == (1, 8, 7, 8)


def test_to_rgba_is_the_fancy_index_on_random_strided_pixels():
    native = _strided_native(13, 17, 5, np.random.default_rng(3))
    np.testing.assert_array_equal(render._to_rgba(native),
                                  np.ascontiguousarray(native[..., TO_RGBA]))
    window = native[2:9, 4:15]
    np.testing.assert_array_equal(render._to_rgba(window),
                                  np.ascontiguousarray(window[..., TO_RGBA]))
