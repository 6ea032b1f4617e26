"""render_region_rgba: a box of a large canvas equals the same crop of a full render."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import EXAMPLES


def test_region_equals_crop_of_full_render():
    from svgloo.engine.rendering.render import render_region_rgba, render_rgba

    text = (EXAMPLES / "billiards.svg").read_text()
    full = render_rgba(text, 1000)
    for box in [(0, 1000, 0, 1000), (50, 900, 20, 990), (700, 1000, 3, 301)]:
        y0, y1, x0, x1 = box
        region = render_region_rgba(text, 1000, box)
        assert region.shape == (y1 - y0, x1 - x0, 4)
        diff = np.abs(region.astype(int) - full[y0:y1, x0:x1])
        assert diff.max() <= 16 and diff.mean() < 0.2  # antialiasing rounding only
        assert (diff.max(axis=2) > 2).mean() < 0.005
    # one pixel off is clearly worse than the region: the placement is exact
    aligned = np.abs(render_region_rgba(text, 1000, (50, 899, 20, 989)).astype(int)
                     - full[50:899, 20:989]).mean()
    shifted = np.abs(render_region_rgba(text, 1000, (51, 900, 21, 990)).astype(int)
                     - full[50:899, 20:989]).mean()
    assert shifted > 5 * aligned


def test_region_over_the_limit_is_refused():
    from svgloo.engine.errors import RenderError
    from svgloo.engine.limits import Limits
    from svgloo.engine.rendering.render import render_region_rgba

    with pytest.raises(RenderError, match="limit"):
        render_region_rgba("<svg xmlns='http://www.w3.org/2000/svg'/>", 10_000,
                           (0, 300, 0, 300), Limits(max_render_size=256))
