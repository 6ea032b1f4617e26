"""The diagram suite's numbers: against golden values from the original code (run on these
fixtures), and against values derived by hand from the definitions (spec §4.3)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from lxml import etree

from svgloo.evals.diagram.colors import color_score
from svgloo.evals.diagram.styles import dash_kind as border_style
from svgloo.evals.diagram.metrics import (aspect_ratio_score, evaluate_pair, font_score,
                                          head_size_score, label_match, label_score,
                                          overlap_score, relative_position_score, type_score)

FIX = Path(__file__).parent / "fixtures"
GOLDEN = json.loads((FIX / "golden.json").read_text())["pairs"]
D = 255 * math.sqrt(3)


def pair(gen: str, gt: str) -> dict:
    return evaluate_pair(etree.parse(str(FIX / f"{gen}.svg")).getroot(),
                         etree.parse(str(FIX / f"{gt}.svg")).getroot())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_every_metric_equals_the_original(name):
    """Golden numbers from running RAIVNLab/VFig@4874af7 on these fixtures."""
    gen, gt = name.split(":")
    got, want = pair(gen, gt), GOLDEN[name]
    for part in ("shapes", "arrows"):
        assert set(want[part]) <= set(got[part]), (part, set(want[part]) - set(got[part]))
        for key, value in want[part].items():
            assert got[part][key] == pytest.approx(value, abs=1e-12), (name, part, key)
    assert got["overall"] == pytest.approx(want["overall"], abs=1e-12)


def test_gen1_against_gt1_by_hand():
    r = pair("gen1", "gt1")
    s = r["shapes"]
    # Process: gradient's first stop #ff0000 vs #ff3300 (dG = 51); Input and Decision exact
    process_fill = 1 - 51 / D
    assert s["fill_color"] == pytest.approx((1 + process_fill + 1) / 3, abs=1e-12)
    assert s["type"] == pytest.approx((1 + 1 + 0.3) / 3)        # polygon drawn as a rect
    assert s["fill_style"] == pytest.approx(2 / 3)              # gradient vs solid
    assert s["border_style"] == pytest.approx(2 / 3)            # dashed vs solid
    assert s["font"] == pytest.approx((1 + 0.5 + 0.5) / 3)      # Georgia~Times, Courier New~Courier
    raw = (1 + (1 + 1 + .3) / 3 + (2 + process_fill) / 3 + 2 / 3 + 1 + 2 / 3 + 1 + 2 / 3 + 1) / 9
    assert s["extra_penalty"] == pytest.approx(1 / 4)           # "Extra": 1 of 3 + 1
    assert s["composite"] == pytest.approx(raw * 0.75, abs=1e-12)
    a = r["arrows"]
    # arrow_0 perfect (marker y-extent 7 vs 12/2 = 6: ratio 1.17 → 1); arrow_1 keeps its
    # source and colour only, and has no head: 3/7
    assert a["composite"] == pytest.approx((1 + 3 / 7) / 2, abs=1e-12)
    assert r["overall"] == pytest.approx(0.5 * s["composite"] + 0.5 * a["composite"])


def test_head_index_advances_twice_per_matched_arrow():
    """Deliberate quirk: arrow_1 reads arrow_2's head (width 10, tip hidden in D), arrow_2
    and arrow_3 the mean width (12+20+10+18)/4 = 15."""
    rows = pair("arrows_gen", "arrows_gt")["per_arrow"]
    # arrow_0: marker y-extent 12 (strokeWidth units) vs 12/2 = 6 → ratio 2 → 0.3
    assert rows["arrow_0"]["head_size"] == 0.3 and rows["arrow_0"]["reversed"]
    # arrow_1: the head it reads is hidden in the ground truth → head and size count as 1
    assert rows["arrow_1"]["head"] == 1.0 and rows["arrow_1"]["head_size"] == 1.0
    # arrow_2: 12 vs 15/2 = 7.5 → ratio 1.6 → 0.6
    assert rows["arrow_2"]["head_size"] == 0.6
    # arrow_3: matched by the stray red line (reversed: its end is near B), no head
    assert rows["arrow_3"]["head_size"] == 0.0 and rows["arrow_3"]["dest"] == 0.0


def test_no_ground_truth_arrows_scores_one_without_a_penalty_key():
    r = pair("noarrows_gen", "noarrows_gt")
    assert r["arrows"]["composite"] == 1.0 and "extra_penalty" not in r["arrows"]
    # the 3x3 px shape_3 is skipped; 'Legend' is the extra shape of 3 + 1
    assert r["shapes"]["n_gt"] == 3 and r["shapes"]["extra_penalty"] == 0.25


def test_overlap_counts_endpoints_inside_other_shapes():
    r = pair("overlap_gen", "markers_gt")
    # one line Left→Right matches Left→Middle by its source; its end lies inside Right
    assert r["per_arrow"]["arrow_0"]["overlap"] == 0.4
    assert r["per_arrow"]["arrow_1"]["matched"] is None
    assert r["arrows"]["overlap"] == pytest.approx(0.2)


def test_pattern_fill_against_itself_is_half():
    r = pair("gt2", "gt2")["per_shape"]
    assert r["shape_0"]["fill_color"] == 0.5            # url(#p1) vs url(#p1)


def test_colour_score():
    assert color_score("#000000", "black") == 1.0
    assert color_score("#ffffff", "#000000") == 0.0
    assert color_score("#ff0000", "#ff3300") == pytest.approx(1 - 51 / D)
    assert color_score("rgb(255,0,0)", "#f00") == 1.0
    assert color_score("url(#a)", "url(#b)") == 0.5
    assert color_score("url(#a)", "#fff") == 0.3
    assert color_score("none", "transparent") == 1.0
    assert color_score("none", "#fff") == 0.0
    assert color_score("#fff", "notacolour") == 0.0


def test_border_style_and_font_and_label():
    assert border_style(None) == "solid" and border_style("none") == "solid"
    assert border_style("2,2") == "dotted" and border_style("6 3") == "dashed"
    assert border_style("8,3,2,3") == "dash-dot"
    assert font_score(None, "Arial") == 0.5
    assert font_score("Arial", "arial, sans-serif") == 1.0
    assert font_score("Helvetica", "Verdana") == 0.5
    assert font_score("Helvetica", "Courier") == 0.0
    assert label_score("Data Store", "data store") == 1.0
    assert label_score("Store", "Data Store") == pytest.approx(5 / 10)   # substring first
    assert label_score("big data store", "data lake store") == pytest.approx(2 / 3)
    assert label_match("worker pool", "pool worker node") == pytest.approx(2 / 3)
    assert label_match("hex node", "hex") == pytest.approx(1 / 2)


def test_type_aspect_position_head_size_overlap():
    assert type_score("rectangle", "rect") == 1.0
    assert type_score("polygon", "rect") == 0.3
    assert type_score("rectangle", "path") == 0.3
    assert type_score("circle", "ellipse") == 0.0
    assert type_score("ellipse", "circle") == 1.0                  # eval_shapes.py:440
    assert type_score("square", "rect") == 1.0 and type_score("square", "polygon") == 0.3
    assert type_score("3d-cylinder", "g", ("rect",)) == 0.4
    assert type_score("3d-cylinder", "g", ("ellipse", "rect")) == 1.0
    assert type_score("3d-cube", "circle") == 0.4
    assert type_score("rectangle", "g", ("rect", "text")) == 1.0
    box = lambda w, h: (0, 0, w, h)  # noqa: E731
    assert aspect_ratio_score(box(120, 100), box(100, 100)) == 1.0     # r = 1.2
    assert aspect_ratio_score(box(210, 100), box(100, 100)) == pytest.approx(1 - 0.9 / 1.8)
    assert aspect_ratio_score(box(300, 100), box(100, 100)) == 0.0
    assert aspect_ratio_score(box(0.5, 100), box(100, 100)) == 0.0
    # a quarter turn: direction 1 - (π/2)/π = 0.5; unit vectors √2 apart: 1 - √2/2
    got = relative_position_score((0, 0), (10, 0), (0, 0), (0, 10))
    assert got == pytest.approx(0.5 * 0.5 + 0.5 * (1 - math.sqrt(2) / 2))
    assert relative_position_score((0, 0), (0.5, 0), (0, 0), (50, 50)) == 1.0
    m = {"vw": 7.0, "vh": 10, "units": "strokeWidth"}
    assert head_size_score(True, m, 2, 12, 2) == 1.0          # 7 vs 6
    assert head_size_score(True, m, 2, 20, 2) == 0.6          # 10/7 = 1.43
    assert head_size_score(True, m, 2, 32, 2) == 0.3          # 16/7 = 2.29
    assert head_size_score(True, m, 2, 40, 2) == 0.1
    assert head_size_score(True, {**m, "units": "userSpaceOnUse"}, 2, 7, 2) == 1.0  # 3.5 vs 3.5
    assert head_size_score(True, None, 2, 12, 2) == 0.0
    assert head_size_score(True, m, 2, 0, 2) == 0.6           # no GT width → 5; 7/5 = 1.4
    assert [overlap_score(n) for n in (0, 1, 2, 3)] == [1.0, 0.4, 0.0, 0.0]
