"""Blind spots of the removal proof, refereed by Chromium: features that CairoSVG and resvg
both draw as nothing (or ignore) while Chromium draws them. Removing such a unit changes
neither proof renderer's picture, so a two-renderer proof would call it removable; svgloo
must call it ``unverified`` with the reason instead (engine features.py).

Each case is one small file: a grey background and one unit using the feature. For each,
the test shows the three facts that make it a blind spot, then svgloo's answer:
Chromium's picture changes when the unit goes (as an ``<img>`` and opened as the document,
the two ways pages embed an SVG), neither proof renderer's does (``proof.text_changes``),
and the scoring leaves the unit unverified, naming the feature.
"""

from __future__ import annotations

import pytest

from browser import largest_difference
from svgloo.engine.reading.document import parse_document
from svgloo.engine.proving.proof import BROWSER_TOLERANCE, text_changes
from svgloo.engine.scoring.score import ScoreSettings, score_document

pytestmark = pytest.mark.slow

SIZE = 200
BACKGROUND = '<rect width="100" height="100" fill="#ccc"/>'


def document(body: str, root_attributes: str = "") -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE}" '
            f'viewBox="0 0 100 100"{root_attributes}>{BACKGROUND}{body}</svg>')


# name -> (the unit that uses the feature, root attributes, what the reason names,
#          the embeddings where Chromium draws it)
BOTH = ("img", "document")
CASES = {
    "negative stroke-width": (
        '<path d="M10 50H90" stroke="red" stroke-width="-8"/>', "", "negative stroke-width",
        BOTH),
    "unit Q": ('<rect width="120Q" height="120Q" fill="red"/>', "", "unit Q", BOTH),
    "unit vw": ('<rect width="40vw" height="40vw" fill="red"/>', "", "unit vw", BOTH),
    "unit vh": ('<rect width="40vh" height="40vh" fill="red"/>', "", "unit vh", BOTH),
    "unit vi": ('<rect width="40vi" height="40vi" fill="red"/>', "", "unit vi", BOTH),
    "unit vb": ('<rect width="40vb" height="40vb" fill="red"/>', "", "unit vb", BOTH),
    "unit ic": ('<rect width="3ic" height="3ic" fill="red"/>', "", "unit ic", BOTH),
    "unit lh": ('<rect width="3lh" height="3lh" fill="red"/>', "", "unit lh", BOTH),
    "unit rlh": ('<rect width="3rlh" height="3rlh" fill="red"/>', "", "unit rlh", BOTH),
    'display="none" on the root': (
        '<rect width="50" height="50" fill="red"/>', ' display="none"', 'display="none"',
        BOTH),
}


def _unit_row(result: dict, tag: str) -> dict:
    rows = [r for r in result["units"] if r["tag"] == tag and r["index"] > 0]
    assert rows, f"no <{tag}> unit in {[r['tag'] for r in result['units']]}"
    return rows[-1]


def _chromium_change(chromium, tmp_path, before: str, after: str, how: str) -> int:
    if how == "img":
        a, b = chromium.render([before.encode(), after.encode()], SIZE)
    else:
        pictures = []
        for k, text in enumerate((before, after)):
            path = tmp_path / f"page{k}.svg"
            path.write_text(text)
            pictures.append(chromium.render_document(path, SIZE, SIZE))
        a, b = pictures
    return largest_difference(a, b)[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_feature_only_chromium_draws_is_unverified(case, chromium, tmp_path, render_pool):
    unit, root_attributes, named, embeddings = CASES[case]
    full = document(unit, root_attributes)
    without = document("", root_attributes)
    for how in embeddings:
        moved = _chromium_change(chromium, tmp_path, full, without, how)
        assert moved > BROWSER_TOLERANCE, f"{case}: Chromium ({how}) does not draw it"
    found, _ = text_changes(full, without, (SIZE, 1024), pool=render_pool, name=case)
    assert not found, f"{case}: a proof renderer sees it ({found[0].describe()})"
    run = score_document(parse_document(full, case), ScoreSettings(backbone="pixel"),
                         pool=render_pool)
    row = _unit_row(run.result, unit.split()[0][1:])
    assert row["removal"]["status"] == "unverified", row["removal"]
    assert named in row["removal"]["reason"]


MASKED = ('<defs><mask id="m"><rect width="100" height="100" fill="#fff"/></mask></defs>'
          '<g mask="url(#m)"><rect x="40" y="40" width="20" height="20" fill="red" '
          'stroke="blue" stroke-width="20"/>{hidden}</g>')
# Hidden (transparent) lines: one reaches past the group's other shapes, one lies inside.
REACHING = '<path d="M0 0H100V100" fill="none" stroke="#000" stroke-opacity="0"/>'
INSIDE = '<path d="M45 45H55V55" fill="none" stroke="#000" stroke-opacity="0"/>'


def test_a_hidden_shape_that_sizes_a_masked_group_is_unverified(chromium, tmp_path,
                                                                 render_pool):
    """The masked layer is sized by the group's bounding box (its mask region is 10%
    around it by default): removing a transparent line that widens the box clips the
    blue stroke in Chromium, in both embeddings. Such a unit is unverified; a hidden
    shape inside the box of the group's other shapes is not."""
    full = document(MASKED.format(hidden=REACHING))
    without = document(MASKED.format(hidden=""))
    for how in BOTH:
        assert _chromium_change(chromium, tmp_path, full, without, how) > BROWSER_TOLERANCE
    run = score_document(parse_document(full, "masked.svg"), ScoreSettings(backbone="pixel"),
                         pool=render_pool)
    row = _unit_row(run.result, "path")
    assert row["removal"]["status"] == "unverified", row["removal"]
    assert "masked <g>" in row["removal"]["reason"]

    inside = document(MASKED.format(hidden=INSIDE))
    run = score_document(parse_document(inside, "inside.svg"), ScoreSettings(backbone="pixel"),
                         pool=render_pool)
    row = _unit_row(run.result, "path")
    assert "masked" not in (row["removal"] or {}).get("reason", ""), row["removal"]
