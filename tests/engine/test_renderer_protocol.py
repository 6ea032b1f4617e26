"""rendering/renderers.py: both renderers behind one Protocol, picked by name in one place."""

from __future__ import annotations

import numpy as np
import pytest

from svgloo.engine.limits import DEFAULT_LIMITS
from svgloo.engine.rendering import renderers
from svgloo.engine.rendering.render_jobs import draw_picture
from svgloo.engine.rendering.renderers import PROOF_RENDERERS, RENDERERS, Renderer, get_renderer

SQUARE = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
          '<rect x="0" y="0" width="5" height="10" fill="#ff0000" fill-opacity="0.5"/></svg>')


@pytest.mark.parametrize("name", PROOF_RENDERERS)
def test_each_proof_renderer_draws_the_same_premultiplied_layout(name):
    renderer = get_renderer(name)
    assert isinstance(renderer, Renderer)
    picture = draw_picture(SQUARE, 20, DEFAULT_LIMITS, "square.svg", name)
    assert picture.shape == (20, 20, 4) and picture.dtype == np.uint8
    # Left half: red at half opacity, premultiplied (128, 0, 0, 128) within a step;
    # right half empty.
    assert np.abs(picture[10, 2].astype(int) - [128, 0, 0, 128]).max() <= 1
    assert picture[10, 17].tolist() == [0, 0, 0, 0]


def test_a_third_renderer_is_one_class_and_one_entry(monkeypatch):
    class Flat:
        name, label = "flat", "Flat"

        def draw(self, text, size, limits, name):
            return np.full((size, size, 4), 7, np.uint8)

    assert isinstance(Flat(), Renderer)
    monkeypatch.setitem(renderers.RENDERERS, "flat", Flat())
    assert draw_picture(SQUARE, 4, DEFAULT_LIMITS, "square.svg", "flat").max() == 7


def test_an_unknown_renderer_is_named_in_the_error():
    with pytest.raises(ValueError, match="unknown renderer 'skia' .*cairosvg, resvg"):
        get_renderer("skia")
    assert set(PROOF_RENDERERS) <= set(RENDERERS)
