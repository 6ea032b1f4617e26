"""The five concept edits on a hand-made SVG with two concepts, and edit precision."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from svgloo.engine.reading.document import parse_document
from svgloo.validation.edits import (EDITS, change_map, edit_precision, edit_text, mask_centre,
                                     parent_ctm, parse_transform)
from svgloo.engine.rendering.render import over_white, render_rgba
from svgloo.engine.reading.units import extract_units

S = 100  # render size == view box size: one user unit is one pixel
SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
       '<rect x="10" y="10" width="30" height="30" fill="#ff0000"/>'       # A (unit 0)
       '<rect x="50" y="50" width="30" height="30" fill="#0000ff"/>'       # B (unit 1)
       '<rect x="60" y="60" width="30" height="30" style="fill:#00ff00"/>'  # A (unit 2)
       '</svg>')
A, B = [0, 2], [1]


def box(y0, y1, x0, x1):
    m = np.zeros((S, S), bool)
    m[y0:y1, x0:x1] = True
    return m


MASK_A = box(10, 40, 10, 40) | box(60, 90, 60, 90)
MASK_B = box(50, 80, 50, 80)


def render(text):
    return over_white(render_rgba(text, S))


@pytest.fixture(scope="module")
def setup():
    us = extract_units(parse_document(SVG, "two.svg"))
    return us, render(SVG)


def changed(text, before):
    return change_map(before, render(text)) > 0.02


def test_masks_match_the_render(setup):
    _, before = setup
    # hand-made masks are where the concepts' colours are drawn
    assert (before[MASK_A & ~MASK_B] != 255).any(axis=1).all()
    assert ((before != 255).any(axis=2) == (MASK_A | MASK_B)).all()


def test_color_changes_exactly_the_concept(setup):
    us, before = setup
    d = changed(edit_text(us, A, "color", size=S, rng=random.Random(1)), before)
    assert (d == MASK_A).all()


def test_delete_changes_exactly_the_concept(setup):
    us, before = setup
    d = changed(edit_text(us, A, "delete", size=S), before)
    assert (d == MASK_A).all()
    p = edit_precision(before, render(edit_text(us, A, "delete", size=S)), MASK_A, [MASK_B])
    assert p["precision"] == 1.0 and p["collateral"] == 0.0


def test_move_changes_old_and_new_places_only(setup):
    us, before = setup
    d = changed(edit_text(us, A, "move", size=S), before)
    step = 20 / math.sqrt(2)  # 14.14 px right and down
    assert 14 < step < 15
    # new places (partly covered edge pixels included): [24.1, 54.1) and [74.1, 104.1)
    allowed = MASK_A | box(24, 55, 24, 55) | box(74, 100, 74, 100)
    assert not (d & ~allowed).any()
    # rect 3 now starts at 74.1: the blue square shows again between 60 and 74
    assert d[65, 65] and d[95, 95] and d[45, 45] and d[15, 15] and not d[5, 5]
    # rect 1 moved under the blue square: no change where B covers it
    assert not d[52, 52]


def test_scale_shrinks_about_the_concept_centre(setup):
    us, before = setup
    centre = mask_centre(MASK_A)
    assert centre == (50.0, 50.0)
    after = render(edit_text(us, A, "scale", size=S, centre=centre))
    # rect 1 becomes [22, 43), rect 3 [57, 78): both drawn there, background elsewhere
    assert tuple(after[30, 30]) == (255, 0, 0) and tuple(after[12, 12]) == (255, 255, 255)
    assert tuple(after[70, 70]) == (0, 255, 0) and tuple(after[85, 85]) == (255, 255, 255)
    d = change_map(before, after) > 0.02
    assert not (d & ~(MASK_A | box(22, 43, 22, 43) | box(57, 78, 57, 78))).any()
    assert d[41, 41] and not d[45, 45] and not d[52, 52]  # B keeps what A did not cover


def test_regroup_changes_only_the_overlap(setup):
    us, before = setup
    text = edit_text(us, A, "regroup", size=S)
    doc = parse_document(text, "r.svg")
    fills = [n.get("fill") or n.get("style") for n in doc.nodes[1:]]
    assert fills == ["#ff0000", "fill:#00ff00", "#0000ff"]
    d = changed(text, before)
    assert (d == box(60, 80, 60, 80)).all()
    p = edit_precision(before, render(text), MASK_B, [MASK_A])
    assert p["precision"] == 1.0  # the change lies inside B's mask
    p = edit_precision(before, render(text), MASK_A, [MASK_B])
    assert p["precision"] == 1.0  # and inside A's: the overlap counts for the target


def test_precision_hand_computed():
    before = np.full((4, 4, 3), 255, np.uint8)
    after = before.copy()
    after[0, 0] = (0, 255, 255)      # change 1.0 in the target
    after[0, 1] = (255, 51, 255)     # change 0.8 in the target
    after[3, 3] = (255, 255, 102)    # change 0.6 in the other concept
    after[2, 0] = 0                  # outside every mask: ignored
    t = np.zeros((4, 4), bool)
    t[0, :2] = True
    o = np.zeros((4, 4), bool)
    o[3, 3] = True
    p = edit_precision(before, after, t, [o])
    assert p["target"] == pytest.approx(1.8) and p["collateral"] == pytest.approx(0.6)
    assert p["precision"] == pytest.approx(1.8 / 2.4)
    assert math.isnan(edit_precision(before, before, t, [o])["precision"])


def test_move_converts_through_ancestor_transforms():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 50 50">'
           '<g transform="scale(2)"><rect x="2" y="2" width="5" height="5"/></g></svg>')
    doc = parse_document(svg, "g.svg")
    us = extract_units(doc)
    # parent of the rect: render scale 2 (100 px / 50) times the group's scale(2)
    assert np.allclose(parent_ctm(doc, 2, 100)[:2, :2], 4 * np.eye(2))
    after = render(edit_text(us, [0], "move", size=S))
    ys, xs = np.nonzero((after != 255).any(axis=2))
    step = 20 / math.sqrt(2)
    assert abs(xs.min() - (8 + step)) <= 1 and abs(ys.min() - (8 + step)) <= 1


def test_parse_transform():
    m = parse_transform("translate(10 5) rotate(90) scale(2, 3)")
    p = m @ np.array([1.0, 1.0, 1.0])
    assert np.allclose(p[:2], [10 - 3, 5 + 2])
    assert set(EDITS) == {"color", "delete", "move", "scale", "regroup"}


def test_edits_on_run_and_correlations(setup, render_pool):
    from scipy.stats import pearsonr

    from svgloo.validation.edits import aggregate_edits, edits_on_run

    us, before = setup
    result = {"concepts": [{"name": "A", "units": A}, {"name": "B", "units": B}],
              "metrics": {"purity": 1.0}, "units": [{"active": True}] * 3}
    heat = np.stack([MASK_A, MASK_B]).astype(np.float32)
    row = edits_on_run("two.svg", 0, result, us, before, heat, size=S, pool=render_pool)
    got = {(r["concept"], r["edit"]): r["precision"] for r in row["edits"]}
    assert len(got) == 10
    assert got[("A", "delete")] == 1.0 and got[("A", "color")] == 1.0
    assert got[("B", "delete")] == 1.0  # B's own pixels; the covered overlap is A's
    assert got[("B", "regroup")] is None  # one element: nothing moves, nothing changes
    assert row["active_units"] == 3 and row["concepts_with_units"] == 2
    assert row["mean_by_edit"]["delete"] == 1.0
    # correlations across files against scipy directly; a trivial file (one concept)
    # with perfect values is counted, not correlated
    pts = [(0.2, 0.5), (0.5, 0.7), (0.9, 0.8), (0.4, 0.4), (0.7, 0.6)]
    rows = [dict(row, metrics={"purity": p}, mean_precision=m) for p, m in pts]
    rows.append(dict(row, metrics={"purity": 1.0}, mean_precision=1.0, concepts_with_units=1))
    s = aggregate_edits(rows)
    ref = pearsonr([p for p, _ in pts], [m for _, m in pts])
    c = s["correlations"]["purity"]
    assert c["r"] == pytest.approx(ref.statistic) and c["p"] == pytest.approx(ref.pvalue)
    assert c["n"] == 5
    assert s["files"] == {"measured": 6, "trivial": 1, "correlated": 5}
    # Fisher z interval by hand: tanh(atanh(r) +- 1.96 / sqrt(n - 3))
    half = 1.959964 / math.sqrt(5 - 3)
    assert c["low"] == pytest.approx(math.tanh(math.atanh(ref.statistic) - half), abs=1e-5)
    assert c["high"] == pytest.approx(math.tanh(math.atanh(ref.statistic) + half), abs=1e-5)
    assert s["per_edit"]["delete"]["n"] == 12 and s["per_edit"]["regroup"]["n"] == 6
    # every file has the same per-edit precision here, so per-edit r is undefined
    assert s["correlations_by_edit"]["purity"]["delete"]["r"] is None


def test_edits_scored_with_independent_masks(setup, render_pool):
    """Edit concept A, score with other masks: the target is the best-IoU mask."""
    from svgloo.validation.edits import edits_on_run, matched_masks

    us, before = setup
    result = {"concepts": [{"name": "A", "units": A}, {"name": "B", "units": B}],
              "metrics": {}, "units": [{"active": True}] * 3}
    heat = np.stack([MASK_A, MASK_B]).astype(np.float32)
    # an independent segmentation: the left square alone, and everything else drawn
    left = box(10, 40, 10, 40)
    rest = (MASK_A | MASK_B) & ~left
    target, others, iou = matched_masks(MASK_A, [left, rest])
    # IoU(A, left) = 900 / 1800; IoU(A, rest) = 900 / (1800 + 1400 - 900)
    assert iou == pytest.approx(0.5) and target is left and len(others) == 1
    row = edits_on_run("two.svg", 0, result, us, before, heat, size=S, pool=render_pool,
                       eval_masks=[left, rest])
    got = {(r["concept"], r["edit"]): r for r in row["edits"]}
    # deleting A turns the left square white (900 px, each a full 255 change: target)
    # and its green square (drawn on top, 900 px) white or blue, all in "rest":
    # precision 900 / (900 + 900), where the shared masks said 1.0
    d = got[("A", "delete")]
    assert d["match_iou"] == pytest.approx(0.5)
    assert (d["target"], d["collateral"]) == (pytest.approx(900), pytest.approx(900))
    assert d["precision"] == pytest.approx(0.5)
