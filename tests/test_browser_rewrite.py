"""``svgloo fix --rewrite`` refereed by Chromium: rewrites Chromium draws differently from
CairoSVG and resvg are never offered (engine cleanup/shapes.py). Each file is rewritten and
drawn by Chromium before and after, as an ``<img>`` and in an ``<object>``; no pixel may
move by more than ``BROWSER_TOLERANCE`` (4/255)."""

from __future__ import annotations

import pytest

from conftest import CORPUS
from svgloo.engine.fixing.cleanup.rewrite import rewrite_text
from svgloo.engine.limits import DEFAULT_LIMITS
from svgloo.engine.proving.proof import BROWSER_TOLERANCE
from svgloo.validation.bench_rewrite import chromium_moves

pytestmark = pytest.mark.slow

SIZE = 384
SIZES = (384, 1024)
# Round-capped lines: merged into one path Skia strokes them differently (17/255 in
# feather/align-justify.svg).
LINES = ('<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24" '
         'fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round">'
         '<line x1="21" y1="10" x2="3" y2="10"/><line x1="21" y1="6" x2="3" y2="6"/>'
         '<line x1="21" y1="14" x2="3" y2="14"/></svg>')


# 60 small rects at 2-decimal positions, many drawn twice (Illustrator's windows): as
# path data Skia antialiases them differently (27/255 on 1,769 px).
NIGHT = "noto/emoji_u1f303.svg"


@pytest.mark.parametrize("name", [NIGHT, "lines"])
def test_rewrites_keep_chromiums_picture(name, chromium, tmp_path, render_pool):
    if name == "lines":
        text = LINES
    elif not (CORPUS / name).is_file():
        pytest.skip("the shared corpus is not present")
    else:
        text = (CORPUS / name).read_text()
    done = rewrite_text(text, text, f"{name}.svg", SIZES, DEFAULT_LIMITS, render_pool)
    assert done.changed and len(done.text) < len(text)
    moved = chromium_moves(chromium, text.encode(), done.text.encode(), SIZE, tmp_path)
    assert max(moved.values()) <= BROWSER_TOLERANCE, (moved, done.kept, done.text)
