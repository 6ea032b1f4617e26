"""engine/masks.py against scipy.ndimage, which the removal proof used before."""

import numpy as np
import pytest
from scipy import ndimage

from svgloo.engine.rendering.masks import dilate_cross, dilate_square, open_square3

SHAPES = [(1, 1), (1, 7), (2, 2), (3, 3), (4, 9), (17, 5), (64, 64), (96, 41)]


def masks(seed: int):
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        for density in (0.0, 0.3, 0.7, 0.95, 1.0):
            yield rng.random(shape) < density


@pytest.mark.parametrize("seed", range(4))
def test_open_square3_is_scipys_binary_opening(seed):
    for mask in masks(seed):
        want = ndimage.binary_opening(mask, np.ones((3, 3), bool))
        assert np.array_equal(open_square3(mask), want), mask.shape


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("iterations", [1, 2, 3])
def test_dilate_cross_is_scipys_binary_dilation(seed, iterations):
    for mask in masks(seed):
        want = ndimage.binary_dilation(mask, iterations=iterations)
        assert np.array_equal(dilate_cross(mask, iterations), want), mask.shape


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("radius", [0, 1, 2, 3, 5])
def test_dilate_square_is_scipys_binary_dilation_by_a_square(seed, radius):
    for mask in masks(seed):
        want = ndimage.binary_dilation(mask, np.ones((2 * radius + 1,) * 2, bool)) \
            if radius else mask
        assert np.array_equal(dilate_square(mask, radius), want), mask.shape


def test_opening_keeps_squares_and_drops_thin_lines():
    mask = np.zeros((12, 12), bool)
    mask[0:3, 0:3] = True       # a square at the corner stays whole
    mask[6, 2:10] = True        # a one-pixel line (antialiasing along an edge) goes
    mask[8:11, 7:12] = True     # a 3x5 block at the border stays whole
    out = open_square3(mask)
    assert out[0:3, 0:3].all() and out[8:11, 7:12].all()
    assert not out[6].any()
    assert out.sum() == 9 + 15
