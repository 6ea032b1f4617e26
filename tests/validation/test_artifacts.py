"""Artifact injection (the paper's protocol: one of each kind, palette colours, paths,
random depth), the non-rendering baselines, the references that are not the clean render,
and detection scores on real corpus files."""

from __future__ import annotations

import random

import numpy as np
import pytest

from svgloo.engine.reading.document import load_document, parse_document
from svgloo.engine.reading.units import extract_units
from svgloo.validation.artifacts import (ATTR, KINDS, _NUM, aggregate, bench_file,
                                         calibrate_threshold, container_matrix, containers,
                                         counterpart, degrade, evaluate, evaluate_threshold,
                                         flag_lowest, inject_artifacts, palette, prf,
                                         rank_values, shape_markup, syntax_scores, view_box)

SMALL = ["feather/bold.svg", "twemoji/1f314.svg"]


def test_prf_hand_computed():
    # 2 of 3 flags correct, 2 of 4 artifacts hit: P = 2/3, R = 1/2, F1 = 4/7
    m = prf(2, 3, 2, 4)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(0.5)
    assert m["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert prf(0, 3, 0, 3) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_evaluate_and_aggregate_count_flags_artifacts_and_hidden_ones():
    truth = {0: {5}, 1: {7, 8}, 2: {9}}
    ev = evaluate([7, 8, 1], truth)   # two flags on artifact 1, one false flag
    assert (ev["correct"], ev["hit"], ev["hit_ids"]) == (2, 1, [1])
    row = {"all_visible": False, "artifacts": [
        {"id": 0, "kind": "shape", "visible_px": 40}, {"id": 1, "kind": "stray",
                                                       "visible_px": 0},
        {"id": 2, "kind": "duplicate", "visible_px": 30}],
        "settings": {"oracle": {"loo": {**ev, "mae_change": -0.1}}}}
    m = aggregate([row], "oracle")["loo"]
    assert m["precision"] == pytest.approx(2 / 3) and m["recall"] == pytest.approx(1 / 3)
    assert m["recall_by_kind"] == {"duplicate": 0.0, "shape": 0.0, "stray": 1.0}
    # the one artifact found is hidden: recall over visible artifacts is 0 of 2
    assert m["hidden_artifacts"] == 1 and m["recall_visible"] == 0.0
    assert aggregate([row], "cross") == {}
    assert aggregate([row], "oracle", only_visible=True) == {}


def test_flag_lowest_one_unit_per_element():
    doc = parse_document('<svg xmlns="http://www.w3.org/2000/svg">'
                         '<path d="M0 0h5v5zM10 10h5v5z"/><rect width="3" height="3"/>'
                         '<circle r="2"/></svg>', "p.svg")
    us = extract_units(doc)
    assert len(us) == 4  # two subpaths, rect, circle
    assert flag_lowest([-3, -2, -1, 0], us, 2) == [0, 2]


def test_injection_follows_the_protocol(corpus_dir):
    for rel in SMALL + ["noto/emoji_u1f9d8_1f3fd.svg"]:
        text = load_document(corpus_dir / rel).text
        a = inject_artifacts(text, rel, random.Random(7))
        b = inject_artifacts(text, rel, random.Random(7))
        c = inject_artifacts(text, rel, random.Random(8))
        assert a.text == b.text and a.text != c.text
        # one artifact of each kind
        assert sorted(x.kind for x in a.artifacts) == sorted(KINDS)
        doc = parse_document(a.text, rel)  # parses
        marked = [n for n in doc.nodes if n.get(ATTR)]
        assert sorted(n.get(ATTR) for n in marked) == sorted(KINDS)
        # shapes and strays are paths painted with the file's own colours
        colours = palette(parse_document(text, rel))
        for n in marked:
            if n.get(ATTR) in ("shape", "stray"):
                assert n.tag.endswith("path")
                paint = n.get("fill") if n.get(ATTR) == "shape" else n.get("stroke")
                if paint is None:  # written in style="" like the file's
                    paint = dict(d.split(":") for d in n.get("style").split(";"))[
                        "fill" if n.get(ATTR) == "shape" else "stroke"]
                assert paint in colours
        assert all(a.truth[x.id] for x in a.artifacts)
        clean_units = len(extract_units(parse_document(text, rel)))
        assert len(a.units) == clean_units + sum(len(s) for s in a.truth.values())
        stripped = a.text
        for x in a.artifacts:
            stripped = stripped.replace(x.markup, "", 1)
        assert stripped == text


NESTED = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
          '<rect width="100" height="100" fill="#eeeeee"/>'
          '<g transform="translate(50 10) scale(2)"><g transform="rotate(30)">'
          '<rect width="5" height="5" fill="#123456"/></g></g></svg>')


def test_palette_containers_and_depth():
    doc = parse_document(NESTED, "n.svg")
    assert palette(doc) == ["#eeeeee", "#123456"]
    assert containers(doc) == [0, 2, 3]
    # artifacts land at every depth over seeds, always in the root's coordinates
    depths = {x.depth for s in range(40)
              for x in inject_artifacts(NESTED, "n.svg", random.Random(s)).artifacts}
    assert {1, 2, 3} <= depths


def test_shapes_in_groups_keep_their_place_in_the_picture():
    doc = parse_document(NESTED, "n.svg")
    m = container_matrix(doc, 3)   # translate(50 10) scale(2) rotate(30)
    vb = view_box(doc)
    plain = shape_markup(random.Random(5), vb, 0, "#000", None)
    nested = shape_markup(random.Random(5), vb, 0, "#000", m)
    p = np.array([float(x) for x in _NUM.findall(plain.split('d="')[1].split('"')[0])])
    q = np.array([float(x) for x in _NUM.findall(nested.split('d="')[1].split('"')[0])])
    q = q.reshape(-1, 2)
    back = (m @ np.c_[q, np.ones(len(q))].T).T[:, :2].ravel()
    assert back == pytest.approx(p, rel=2e-3, abs=0.05)
    assert not np.allclose(q.ravel(), p)


SYNTAX = ('<svg xmlns="http://www.w3.org/2000/svg">'
          '<path d="M0 0h5v5z" fill="#111111"/>'        # 0: same d as 3: 1
          '<path d="M9 9h5v5z" fill="#111111"/>'        # 1
          '<rect width="3" height="3" fill="#abcdef"/>'  # 2: unique colour + rect: 2
          '<path d="M0 0h5v5z" fill="#222222"/>'        # 3: same d as 0 + unique: 2
          '<circle r="2" fill="#111111"/></svg>')       # 4: circle: 1


def test_syntax_prior_by_hand():
    us = extract_units(parse_document(SYNTAX, "s.svg"))
    assert syntax_scores(us) == [1.0, 0.0, 2.0, 2.0, 1.0]
    # ties go to later units: 3 before 2, then 4 before 0
    assert flag_lowest(rank_values("syntax", us), us, 4) == [3, 2, 4, 0]
    assert flag_lowest(rank_values("last_k", us), us, 2) == [4, 3]


def test_degraded_reference_is_deterministic_and_close():
    rng = np.random.default_rng(0)
    img = np.full((64, 64, 3), 255, np.uint8)
    img[16:48, 16:48] = (200, 30, 30)
    img[30:34] = rng.integers(0, 255, (4, 64, 3))
    d = degrade(img)
    assert d.shape == img.shape and d.dtype == np.uint8
    assert np.array_equal(d, degrade(img))
    diff = np.abs(d.astype(int) - img.astype(int))
    assert diff.max() > 40               # edges and the noise band are gone
    assert diff[22:26, 22:26].max() < 12  # a flat interior survives


def test_counterpart_pairs_emoji_sets(corpus_dir):
    files = sorted(str(p) for p in corpus_dir.rglob("*.svg"))
    tw = str(corpus_dir / "twemoji/1f307.svg")
    assert counterpart(tw, files) == (str(corpus_dir / "noto/emoji_u1f307.svg"), "exact")
    assert counterpart(str(corpus_dir / "noto/emoji_u1f307.svg"), files) == (tw, "exact")
    f, match = counterpart(str(corpus_dir / "twemoji/1f46f.svg"), files)
    assert match == "base" and f.endswith("emoji_u1f46f_200d_2642.svg")
    assert counterpart(str(corpus_dir / "feather/bold.svg"), files) is None


def test_threshold_calibration_by_hand():
    rows = [{"artifacts": [{"units": [0], "visible_px": 50}, {"units": [1], "visible_px": 0}],
             "deltas": {"oracle": [-0.02, 0.0, 0.01, -0.001, 0.03]}}]
    # unit 1 is a hidden artifact: left out. t = -0.0005: unit 0 and unit 3 flagged,
    # one right -> P 1/2, R 1; t = -0.01: only unit 0 -> P 1, R 1 (best)
    assert evaluate_threshold(rows, -0.0005)["f1"] == pytest.approx(2 / 3)
    fit = calibrate_threshold(rows, "oracle", candidates=[-0.0005, -0.01, -0.05])
    assert fit["threshold"] == -0.01 and fit["f1"] == 1.0
    assert fit["units"] == 4 and fit["artifact_units"] == 1


@pytest.mark.slow
def test_detectors_on_small_corpus_files(corpus_dir, render_pool):
    rows = [bench_file(str(corpus_dir / rel), i, seed=1, pool=render_pool,
                       detectors=("loo", "random", "last_k", "syntax"))
            for i, rel in enumerate(SMALL)]
    for r in rows:
        assert set(r["settings"]) == {"oracle", "degraded"}
        loo = r["settings"]["oracle"]["loo"]
        visible = {a["id"] for a in r["artifacts"] if a["visible_px"] > 0}
        assert visible <= set(loo["hit_ids"]), r
        if loo["hit"] == 3:
            # removing the flagged (= injected) units restores the clean render
            assert loo["mae_after"] == pytest.approx(0.0, abs=1e-9)
        assert len(r["deltas"]["oracle"]) == r["units"]
    m = aggregate(rows, "oracle")
    assert set(m) == {"loo", "random", "last_k", "syntax"}
    assert m["random"]["f1"] <= m["loo"]["f1"]
