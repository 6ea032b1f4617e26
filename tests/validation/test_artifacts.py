"""Artifact injection (reproducible, parses, ground truth found) and detection scores."""

from __future__ import annotations

import random

import pytest

from svgloo.validation.artifacts import (ATTR, aggregate, bench_file, evaluate, flag_lowest,
                                     inject_artifacts, prf, top_level_children, view_box)
from svgloo.engine.document import load_document, parse_document
from svgloo.engine.units import extract_units

SMALL = ["feather/bold.svg", "twemoji/1f314.svg"]


def test_prf_hand_computed():
    # 2 of 3 flags correct, 2 of 4 artifacts hit: P = 2/3, R = 1/2, F1 = 4/7
    m = prf(2, 3, 2, 4)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(0.5)
    assert m["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert prf(0, 3, 0, 3) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_evaluate_counts_flags_and_artifacts():
    truth = {0: {5}, 1: {7, 8}, 2: {9}}
    ev = evaluate([7, 8, 1], truth)   # two flags on artifact 1, one false flag
    assert (ev["correct"], ev["hit"], ev["hit_ids"]) == (2, 1, [1])
    m = aggregate([{"all_visible": True, "artifacts": [
        {"id": 0, "kind": "shape"}, {"id": 1, "kind": "stray"}, {"id": 2, "kind": "shape"}],
        "detectors": {"x": {**ev, "ssim_change": 0.1}}}])["x"]
    assert m["precision"] == pytest.approx(2 / 3) and m["recall"] == pytest.approx(1 / 3)
    assert m["recall_by_kind"] == {"shape": 0.0, "stray": 1.0}


def test_flag_lowest_one_unit_per_element():
    doc = parse_document('<svg xmlns="http://www.w3.org/2000/svg">'
                         '<path d="M0 0h5v5zM10 10h5v5z"/><rect width="3" height="3"/>'
                         '<circle r="2"/></svg>', "p.svg")
    us = extract_units(doc)
    assert len(us) == 4  # two subpaths, rect, circle
    assert flag_lowest([-3, -2, -1, 0], us, 2) == [0, 2]


def test_injection_is_reproducible_and_parses(corpus_dir):
    for rel in SMALL:
        text = load_document(corpus_dir / rel).text
        a = inject_artifacts(text, rel, random.Random(7))
        b = inject_artifacts(text, rel, random.Random(7))
        c = inject_artifacts(text, rel, random.Random(8))
        assert a.text == b.text and a.text != c.text
        doc = parse_document(a.text, rel)  # parses
        marked = [n for n in doc.nodes if n.get(ATTR)]
        assert len(marked) == 3
        assert sorted(n.get(ATTR) for n in marked) == sorted(x.kind for x in a.artifacts)
        # every artifact contributes units; nothing else is ground truth
        assert all(a.truth[x.id] for x in a.artifacts)
        clean_units = len(extract_units(parse_document(text, rel)))
        assert len(a.units) == clean_units + sum(len(s) for s in a.truth.values())
        # removing the artifacts' markup gives the clean text back
        stripped = a.text
        for x in a.artifacts:
            stripped = stripped.replace(x.markup, "", 1)
        assert stripped == text


def test_artifacts_sit_in_the_view_box(corpus_dir):
    text = load_document(corpus_dir / "feather/bold.svg").text
    inj = inject_artifacts(text, "bold.svg", random.Random(3), kinds=("shape",))
    x0, y0, w, h = view_box(inj.doc)
    assert (x0, y0, w, h) == (0, 0, 24, 24)
    for n in inj.doc.nodes:
        if n.get(ATTR) == "shape":
            cx = float(n.get("cx") if n.get("cx") is not None else n.get("x"))
            assert -0.5 * w <= cx <= 1.5 * w
    # top-level artifacts are children of the root
    tops = top_level_children(inj.doc)
    assert sum(1 for i in tops if inj.doc.nodes[i].get(ATTR)) == 3


@pytest.mark.slow
def test_loo_finds_the_artifacts_on_small_files(corpus_dir, render_pool):
    rows = [bench_file(str(corpus_dir / rel), i, seed=1, pool=render_pool,
                       detectors=("loo", "random")) for i, rel in enumerate(SMALL)]
    for r in rows:
        assert r["all_visible"]
        loo = r["detectors"]["loo"]
        assert loo["correct"] == 3 and loo["hit"] == 3, r
        # removing the flagged (= injected) units restores the clean render
        assert loo["ssim_after"] == pytest.approx(1.0, abs=1e-6)
        assert loo["ssim_change"] > 0
    m = aggregate(rows)
    assert m["loo"]["f1"] == 1.0
    assert m["random"]["f1"] <= m["loo"]["f1"]
