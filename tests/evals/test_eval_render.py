"""Each suite's renders equal CairoSVG called exactly as the original code calls it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from eval_testlib import FIXTURES, TWEMOJI, answer_for, cairosvg_rgb

from svgloo.evals import svgeditbench, svgenius
from svgloo.evals.render import RenderProtocol, render

pytestmark = pytest.mark.skipif(not TWEMOJI.is_dir(), reason="shared corpus not present")


def test_svgeditbench_render_is_cairosvg_72px_on_white(render_pool):
    """The paper's protocol: svg2png(bytestring, background_color="white",
    output_width=72, output_height=72); every Twemoji original and its four regenerated
    answers (Crop to Half is letterboxed) render byte-identically."""
    files = sorted(TWEMOJI.glob("*.svg"))
    assert len(files) == 60
    for f in files:
        original = f.read_text(encoding="utf-8")
        for svg in [original] + [answer_for(t, original) for t in ("upsidedown", "transparency",
                                                                    "croptohalf")]:
            ours = render(svg, svgeditbench.PROTOCOL, f.name, pool=render_pool)
            theirs = cairosvg_rgb(svg, background_color="white", output_width=72,
                                  output_height=72)
            assert ours.shape == theirs.shape == (72, 72, 3)
            assert np.array_equal(ours, theirs), f.name


def _fixture_svgs() -> list[str]:
    out = []
    for item in json.loads((FIXTURES / "svgenius" / "easy_styleedit.json").read_text()):
        [(_, it)] = item.items()
        out += [it["original"], it["modified"]]
    return out


def test_svgenius_render_is_its_rasterize_call(render_pool):
    """data_util.rasterize_svg: svg2png(bytestring, background_color='white',
    output_width=224, output_height=224, dpi=128, scale=2) -> PIL RGB. The fixtures include
    a stroke width in mm, which depends on the dpi."""
    svgs = _fixture_svgs() + [f.read_text() for f in sorted(TWEMOJI.glob("*.svg"))[:10]]
    assert any("mm" in s for s in svgs)
    for svg in svgs:
        ours = render(svg, svgenius.PROTOCOL, pool=render_pool)
        theirs = cairosvg_rgb(svg, background_color="white", output_width=224,
                              output_height=224, dpi=128, scale=2)
        assert np.array_equal(ours, theirs)


def test_dpi_is_passed_through(render_pool):
    """The same document at dpi 96 differs (mm units), so the equality above is not luck."""
    svg = next(s for s in _fixture_svgs() if "mm" in s)
    at_96 = render(svg, RenderProtocol(size=224, dpi=96), pool=render_pool)
    assert not np.array_equal(at_96, render(svg, svgenius.PROTOCOL, pool=render_pool))
