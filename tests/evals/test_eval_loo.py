"""Suite metrics as LOO backbones, and ``svgloo eval --loo``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from eval_testlib import TWEMOJI, answer_for, build_svgeditbench

from svgloo.cli import main
from svgloo.evals.backbones import SvgEditBenchMseBackbone, SvgeniusPssIouBackbone
from svgloo.evals.render import render
from svgloo.evals.runner import RunOptions, run_eval
from svgloo.evals.svgeditbench import PROTOCOL, SvgEditBenchSuite
from svgloo.evals.metrics import mse
from svgloo.engine.protocols import Reference

pytestmark = pytest.mark.skipif(not TWEMOJI.is_dir(), reason="shared corpus not present")


def test_patched_similarity_equals_whole_images():
    rng = np.random.default_rng(0)
    full = rng.integers(0, 256, (72, 72, 3), dtype=np.uint8)
    ref = rng.integers(0, 256, (72, 72, 3), dtype=np.uint8)

    class P:
        def __init__(self, box, pixels):
            self.box, self.pixels = box, pixels

    patches = [P(None, None), P((3, 20, 5, 9), rng.integers(0, 256, (17, 4, 3), dtype=np.uint8))]
    bb = SvgEditBenchMseBackbone()
    prep = bb.prepare(Reference("image", "test", image=ref))
    whole = []
    for p in patches:
        img = full.copy()
        if p.box:
            y0, y1, x0, x1 = p.box
            img[y0:y1, x0:x1] = p.pixels
        whole.append(img)
    assert np.allclose(bb.similarity_patched(full, patches, prep),
                       bb.similarity(np.stack(whole), prep), atol=1e-12)
    assert bb.similarity(full[None], prep)[0] == pytest.approx(1 - mse(full, ref), abs=1e-12)


def test_score_with_the_suite_backbone_is_one_minus_its_mse(tmp_path, capsys):
    original = (TWEMOJI / "1f37b.svg").read_text()
    answer = tmp_path / "answer.svg"
    target = tmp_path / "target.svg"
    answer.write_text(original)
    target.write_text(answer_for("upsidedown", original))
    assert main(["score", str(answer), "--backbone", "svgeditbench-mse", "--reference",
                 str(target), "--size", "72", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    suite_mse = mse(render(original, PROTOCOL), render(target.read_text(), PROTOCOL))
    assert result["backbone"] == "svgeditbench-mse"
    # The engine draws compound paths with absolute movetos (README, "Fast leave-one-out"):
    # edge pixels may differ from the file as written by float rounding, not more.
    assert result["full_score"] == pytest.approx(1 - suite_mse, abs=2e-5)
    assert any(u["verdict"] == "harmful" for u in result["units"])


def test_eval_loo_attaches_engine_deltas(tmp_path):
    bench = build_svgeditbench(tmp_path / "seb", sorted(TWEMOJI.glob("*.svg"))[:3])
    result = run_eval(SvgEditBenchSuite(), "upsidedown", bench, None,
                      RunOptions(no_edit=True, loo=True, progress=False))
    for row in result["samples"]:
        loo = row["loo"]
        assert loo["backbone"] == "svgeditbench-mse" and loo["render_size"] == 72
        assert loo["full_score"] == pytest.approx(1 - row["metrics"]["mse"], abs=2e-5)
        assert loo["units"] and all({"tag", "line", "delta", "verdict"} <= set(u)
                                    for u in loo["units"])


def test_eval_loo_scores_without_the_removal_proof(tmp_path, monkeypatch):
    """--loo reports deltas and verdicts, never removals: the removal proof (most of a
    large file's scoring) is not computed (docs/two-speeds.md)."""
    import svgloo.engine.scoring.score as score

    def no_proof(*args, **kw):
        raise AssertionError("the removal proof ran for --loo")

    monkeypatch.setattr(score, "run_proof", no_proof)
    bench = build_svgeditbench(tmp_path / "seb", sorted(TWEMOJI.glob("*.svg"))[:1])
    result = run_eval(SvgEditBenchSuite(), "upsidedown", bench, None,
                      RunOptions(no_edit=True, loo=True, progress=False))
    [row] = result["samples"]
    assert "error" not in row["loo"] and row["loo"]["units"]


def test_pss_iou_backbone_patched_equals_whole_and_is_an_iou():
    rng = np.random.default_rng(1)
    full = np.full((40, 40, 3), 255, np.uint8)
    full[5:20, 5:20] = (200, 10, 10)
    ref = np.full((40, 40, 3), 255, np.uint8)
    ref[10:30, 10:30] = (0, 0, 0)

    class P:
        def __init__(self, box, pixels):
            self.box, self.pixels = box, pixels

    removed = np.full((15, 15, 3), 255, np.uint8)  # the red square removed
    patches = [P(None, None), P((5, 20, 5, 20), removed),
               P((0, 6, 30, 40), rng.integers(0, 256, (6, 10, 3), dtype=np.uint8))]
    bb = SvgeniusPssIouBackbone()
    prep = bb.prepare(Reference("image", "test", image=ref))
    whole = []
    for p in patches:
        img = full.copy()
        if p.box:
            y0, y1, x0, x1 = p.box
            img[y0:y1, x0:x1] = p.pixels
        whole.append(img)
    assert np.allclose(bb.similarity_patched(full, patches, prep),
                       bb.similarity(np.stack(whole), prep), atol=1e-12)
    # hand-derived: overlap 10x10 of a 15x15 and a 20x20 square
    assert bb.similarity(full[None], prep)[0] == pytest.approx(100 / (225 + 400 - 100))


def test_score_with_the_pss_iou_backbone(tmp_path, capsys):
    original = (TWEMOJI / "1f37b.svg").read_text()
    answer, target = tmp_path / "answer.svg", tmp_path / "target.svg"
    answer.write_text(original)
    target.write_text(answer_for("croptohalf", original))
    assert main(["score", str(answer), "--backbone", "svgenius-pss-iou", "--reference",
                 str(target), "--size", "64", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert 0 < result["full_score"] < 1 and result["backbone"] == "svgenius-pss-iou"
