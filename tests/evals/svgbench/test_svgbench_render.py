"""The PNG the judge sees: the engine's CairoSVG path, and the original's Chromium page."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from svgloo.evals.engine import SvglooError
from svgloo.evals.svgbench.render import find_chromium, render_chromium

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80">'
       '<rect width="120" height="80" fill="#0000ff"/></svg>')


def test_chromium_refuses_external_references_before_starting_a_browser():
    hostile = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
               'width="10" height="10"><image xlink:href="http://example.invalid/x.png" '
               'width="10" height="10"/></svg>')
    with pytest.raises(SvglooError, match="external references are refused"):
        render_chromium(hostile)


@pytest.mark.slow
@pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed "
                                                    "(apt install chromium)")
def test_chromium_page_window_and_padding():
    img = Image.open(io.BytesIO(render_chromium(SVG))).convert("RGB")
    assert img.size == (120 + 40, 80 + 40)             # --window-size = (w + 40, h + 40)
    assert img.getpixel((5, 5)) == (255, 255, 255)     # the body's 20 px white padding
    assert img.getpixel((80, 60)) == (0, 0, 255)       # the rectangle
