"""The rounding search of ``fix --rewrite --round`` (cleanup/rounding_search.py) and the
device boxes it blames by (cleanup/path_boxes.py). Pictures are drawn by CairoSVG called
directly, not through the engine's workers or its proof."""

from __future__ import annotations

import io

import numpy as np
import pytest
from lxml import etree

from conftest import CORPUS
from svgloo.engine.fixing.cleanup import device_rounding, path_boxes, rounding_search
from svgloo.engine.fixing.cleanup.edits import Context, apply
from svgloo.engine.fixing.cleanup.rewrite import ROUNDING_CHECKS, Stage, keep_proven
from svgloo.engine.limits import DEFAULT_LIMITS

SIZES = (384, 1024)
GRUNT = "logos/grunt.svg"            # 52 long-decimal paths, fills only
SEABORN_ICON = "logos/seaborn-icon.svg"  # strokes of 0.25 over fills


def _cairo(text: str, size: int) -> np.ndarray:
    import cairosvg
    from PIL import Image

    png = cairosvg.svg2png(bytestring=text.encode(), output_width=size, output_height=size)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"), dtype=np.int16)


def _corpus(name: str) -> str:
    if not (CORPUS / name).is_file():
        pytest.skip("the shared corpus is not present")
    return (CORPUS / name).read_text()


def _tree(text: str):
    return etree.fromstring(text.encode(), etree.XMLParser(huge_tree=True))


@pytest.mark.parametrize("name", [GRUNT, SEABORN_ICON])
def test_a_rounding_changes_no_pixel_outside_its_box(name):
    """Each path rounded alone (the coarser rounding: it moves points most), drawn by
    CairoSVG: every pixel that changes at all lies in that path's device box."""
    text = _corpus(name)
    root = _tree(text)
    ctx = Context.of(root)
    edits = device_rounding.edits(ctx, SIZES, bound_px=device_rounding.BOUND_PX)[:10]
    assert len(edits) >= 5, len(edits)
    boxes = path_boxes.device_boxes(ctx, SIZES, [e.node for e in edits])
    assert boxes is not None and set(boxes) == {e.node for e in edits}
    full = _cairo(text, 384)
    changed_somewhere = 0
    for edit in edits:
        rounded = etree.tostring(apply(root, [edit]), encoding="unicode")
        ys, xs = np.nonzero(np.abs(_cairo(rounded, 384) - full).max(axis=2))
        x0, y0, x1, y1 = boxes[edit.node][0]
        inside = (xs + 0.5 >= x0) & (xs + 0.5 <= x1) & (ys + 0.5 >= y0) & (ys + 0.5 <= y1)
        assert inside.all(), (edit.node, list(zip(xs[~inside], ys[~inside]))[:5])
        changed_somewhere += bool(xs.size)
    assert changed_somewhere, "no rounding changed a pixel: the test would show nothing"


def test_a_path_under_a_mask_filter_or_marker_is_not_rounded():
    d = "M10.1234567 20.7654321L41.2345678 22.9876543 44.5678901 47.4321098Z"
    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
            '<defs><mask id="m"><rect width="64" height="64" fill="#fff"/></mask>'
            '<filter id="f"><feGaussianBlur stdDeviation="1"/></filter></defs>'
            f'<path id="plain" d="{d}"/>'
            f'<g mask="url(#m)"><path id="masked" d="{d}"/></g>'
            f'<g style="filter:url(#f)"><path id="filtered" d="{d}"/></g>'
            f'<path id="marked" marker-end="url(#x)" d="{d}"/></svg>')
    ctx = Context.of(_tree(text))
    rounded = {ctx.nodes[e.node].get("id") for e in device_rounding.edits(ctx, SIZES)}
    assert rounded == {"plain"}, rounded


def _stage(text: str, name: str, render_pool) -> Stage:
    return Stage(text, text, name, SIZES, DEFAULT_LIMITS, render_pool)


def test_the_search_rounds_more_than_halving_with_the_same_proofs(render_pool):
    """On a real logo, blaming moved pixels on boxes keeps more roundings than halving
    refused groups (what rounding did before), within the same number of proofs; what it
    keeps passes CairoSVG's picture, drawn here, within 2/255 at both sizes."""
    text = _corpus(GRUNT)
    stage = _stage(text, GRUNT, render_pool)
    ctx = Context.of(stage.root)
    candidates = device_rounding.edits(ctx, SIZES)
    boxes = path_boxes.device_boxes(ctx, SIZES, [e.node for e in candidates]) or {}
    kept, refused, untried = rounding_search.keep_rounded(stage, candidates, boxes,
                                                          ROUNDING_CHECKS)
    spent = stage.checks
    assert spent <= ROUNDING_CHECKS and not untried, (spent, len(untried))
    assert refused, "grunt has roundings the proof refuses: the search was not tested"
    halving = _stage(text, GRUNT, render_pool)
    halved, _, _ = keep_proven(halving, [], candidates, spent)
    assert len(kept) > len(halved), (len(kept), len(halved))
    result = stage.text(kept)
    for size in SIZES:
        assert np.abs(_cairo(result, size) - _cairo(text, size)).max() <= 2


def test_the_search_never_forces_a_rounding_it_cannot_blame(render_pool):
    """Boxes that hold none of the moved pixels: nothing is kept, all is left untried."""
    text = _corpus(GRUNT)
    stage = _stage(text, GRUNT, render_pool)
    ctx = Context.of(stage.root)
    candidates = device_rounding.edits(ctx, SIZES, bound_px=device_rounding.BOUND_PX)
    nowhere = {e.node: [(-9.0, -9.0, -8.0, -8.0)] * len(SIZES) for e in candidates}
    kept, refused, untried = rounding_search.keep_rounded(stage, candidates, nowhere,
                                                          ROUNDING_CHECKS)
    assert not kept and not refused and len(untried) == len(candidates)
    assert stage.checks == 1
