"""PSS against golden outputs of SVGenius's own ``evaluate_svg_string``.

tests/evals/svgenius_pss_golden.json: the original code's final_reward and dimension
scores on the 35 pairs of fixtures/svgenius/pss_pairs.json (how: its ``_provenance`` key):
self-comparisons, dropped / extra / reordered / recoloured paths, other canvases, empty
fills, 12-path grids (ids compared as strings) and invalid documents (<g>, <rect>, no
xmlns, a path without d).
"""

from __future__ import annotations

import json

import pytest
from eval_testlib import FIXTURES, HERE

pytest.importorskip("svgelements")
pytest.importorskip("svgpathtools")

from svgloo.evals.pss import pss
from svgloo.evals.runner import RunOptions, run_eval
from svgloo.evals.svgenius import SvgeniusSuite

GOLDEN = json.loads((HERE / "svgenius_pss_golden.json").read_text())
PAIRS = json.loads((FIXTURES / "svgenius" / "pss_pairs.json").read_text())
DIMENSIONS = ("global_iou", "path_count", "shape", "color", "position", "order")


@pytest.mark.slow
def test_pss_and_its_dimensions_equal_the_original(render_pool):
    assert len(PAIRS) == 35
    for pair in PAIRS:
        gold = GOLDEN[pair["name"]]
        got = pss(pair["reference"], pair["generated"], pool=render_pool)
        assert got["valid"] == gold["valid"], (pair["name"], got.get("reason"))
        assert got["pss"] == pytest.approx(gold["pss"], abs=1e-9), pair["name"]
        for dim in DIMENSIONS:
            if dim in gold:
                assert got[dim] == pytest.approx(gold[dim], abs=1e-9), (pair["name"], dim)


def _numeric_order(reference_ids, generated_ids) -> float:
    n = len(reference_ids)
    agree = sum((reference_ids[i] < reference_ids[j]) == (generated_ids[i] < generated_ids[j])
                for i in range(n) for j in range(i + 1, n))
    pairs = n * (n - 1) // 2
    return ((2 * agree - pairs) / pairs + 1) / 2


def test_order_compares_ids_as_strings(render_pool):
    """With 12 paths, "path_10" < "path_2": the original's order score is not the
    numeric Kendall tau, and svgloo keeps that."""
    pair = next(p for p in PAIRS if p["name"] == "grid12_swap_2_and_10")
    got = pss(pair["reference"], pair["generated"], pool=render_pool)
    ref = list(range(12))
    gen = ref[:2] + [10] + ref[3:10] + [2] + ref[11:]
    assert got["order"] == GOLDEN[pair["name"]]["order"]
    assert got["order"] != pytest.approx(_numeric_order(ref, gen))
    assert "<g>" not in pair["generated"]


def test_invalid_pairs_say_why(render_pool):
    reasons = {p["name"]: pss(p["reference"], p["generated"], pool=render_pool)["reason"]
               for p in PAIRS if p["name"] in ("a_group_invalid", "a_no_xmlns", "a_missing_d")}
    assert reasons["a_group_invalid"] == "Contains disallowed element: g"
    assert reasons["a_no_xmlns"] == "Missing or incorrect SVG namespace"
    assert reasons["a_missing_d"] == "Path element 1 missing 'd' attribute"


def test_suite_reports_pss_for_image_to_svg():
    result = run_eval(SvgeniusSuite(), "i2s", FIXTURES / "svgenius" / "easy_i2s.json",
                      FIXTURES / "svgenius" / "easy_i2s.pred.jsonl", RunOptions(progress=False))
    rows = {r["id"]: r["metrics"] for r in result["samples"]}
    # references 1 and 3 use <circle> / <defs>, <rect>: PSS rejects them, as the original
    # does, and scores 0; reference 2 is paths only
    for sid in ("sample_1", "sample_3"):
        assert rows[sid]["pss_valid"] is False and rows[sid]["pss"] == 0.0
    assert rows["sample_2"]["pss_valid"] is True and 0 < rows["sample_2"]["pss"] < 1
    assert rows["sample_2"]["pss_color"] < 1 == rows["sample_2"]["pss_path_count"]
    assert "pss" not in {s["name"] for s in result["skipped_metrics"]}
    assert result["summary"]["pss"] == pytest.approx(sum(m["pss"] for m in rows.values()) / 3)
