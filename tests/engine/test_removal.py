"""engine/svgloo/engine/proving/removal.py (proof.py): a multi-unit removal is only offered when rendering
proves it."""

from __future__ import annotations

import numpy as np
from lxml import etree

from svgloo.engine.reading.document import parse_document
from svgloo.engine.proving.removal import check_removal, check_removal_text
from svgloo.engine.rendering.render import over_white, render_rgba
from svgloo.engine.reading.units import extract_units, text_without

SVG = "http://www.w3.org/2000/svg"
# Two identical squares on top of each other (each alone has no visible effect), a circle
# with opacity 0 and a visible green square. Edges sit on the pixel grid at 64 px, so
# one square alone draws exactly what the two do.
TWINS = (f'<svg xmlns="{SVG}" viewBox="0 0 16 16">'
         '<rect x="4" y="4" width="8" height="8" fill="#c00"/>'
         '<rect x="4" y="4" width="8" height="8" fill="#c00"/>'
         '<circle cx="8" cy="8" r="3" fill="blue" opacity="0"/>'
         '<path d="M1 1h2v2h-2z" fill="#0a0"/></svg>')


def _picture(text: str, size: int = 64) -> np.ndarray:
    return over_white(render_rgba(text, size))


def _without_elements(text: str, tags_at: list[int]) -> str:
    """An independent removal: drop the n-th children of the root with lxml."""
    root = etree.fromstring(text.encode())
    children = list(root)
    for i in sorted(tags_at, reverse=True):
        root.remove(children[i])
    return etree.tostring(root, encoding="unicode")


def test_twins_cannot_both_go(render_pool):
    us = extract_units(parse_document(TWINS, "twins.svg"))
    assert [u.tag for u in us.units] == ["rect", "rect", "circle", "path"]
    check = check_removal(us, [0, 1, 2], size=64, pool=render_pool)
    assert check.requested == (0, 1, 2)
    assert not check.complete
    assert check.removable == (0, 2) and check.dropped == (1,)
    # Independently: removing both rects visibly changes the picture, one of them does not.
    full = _picture(TWINS)
    both = _picture(_without_elements(TWINS, [0, 1]))
    assert (np.abs(full.astype(int) - both.astype(int)).max(axis=2) > 12).sum() > 100
    kept = _picture(_without_elements(TWINS, [0, 2]))
    assert np.array_equal(full, kept)
    assert np.array_equal(_picture(text_without(us, set(check.removable))), full)


def test_a_removable_set_costs_one_batch(render_pool):
    # The full pictures and the pictures without the set: two renderers at 64 px and at
    # the proof size (1024 px for this small document), eight renders in all.
    check = check_removal_text(TWINS, "twins.svg", [1, 2], size=64, pool=render_pool)
    assert check.complete and check.removable == (1, 2) and check.renders == 8


def test_visible_unit_is_dropped_and_empty_request(render_pool):
    check = check_removal_text(TWINS, "twins.svg", [3], size=64, pool=render_pool)
    assert check.removable == () and check.dropped == (3,)
    assert check_removal_text(TWINS, "t.svg", [], pool=render_pool).renders == 0
