"""The PNG the judge sees: the engine's CairoSVG path, and the original's Chromium page."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from svgloo.evals.engine import SvglooError
from svgloo.evals.svgbench.render import find_chromium, render_chromium

# (Chromium lays out very small windows at a minimum width: keep the page a real size)
SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300" width="400" '
       'height="300"><rect width="400" height="300" fill="#0000ff"/></svg>')


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
    assert img.size == (400 + 40, 300 + 40)            # --window-size = (w + 40, h + 40)
    assert img.getpixel((10, 10)) == (255, 255, 255)   # the body's 20 px white padding
    assert img.getpixel((19, 100)) == (255, 255, 255)
    assert img.getpixel((20, 20)) == (0, 0, 255)       # the SVG starts at (20, 20)
    # the page is 300 + 40 px plus the inline baseline gap, so the window scrolls and the
    # scroll bar narrows the SVG (max-width: 100%): the original's page does the same
    assert img.getpixel((200, 150)) == (0, 0, 255)
