"""Model metrics: skipped without weights, computed from the user's weights when given.

The CLIP path is exercised with a tiny randomly initialised open_clip model built by
tests/plugins/tiny_models.py and loaded through the ordinary loading code; its CLIPScore is checked
against open_clip called directly (100 * cosine of normalised embeddings).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from eval_testlib import FIXTURES

from svgloo.evals.runner import RunOptions, run_eval
from svgloo.evals.svgenius import SvgeniusSuite, pss_available

DATA = FIXTURES / "svgenius" / "easy_t2s.json"
PRED = FIXTURES / "svgenius" / "easy_t2s.pred.jsonl"


def test_without_weights_every_model_metric_is_skipped_with_a_reason():
    result = run_eval(SvgeniusSuite(), "t2s", DATA, PRED, RunOptions(progress=False))
    skipped = {s["name"]: s["reason"] for s in result["skipped_metrics"]}
    assert set(skipped) == {"clip", "rclip", "aesthetic", "hpsv2", "fid"} | (
        set() if pss_available() else {"pss"})
    assert "--weights clip=PATH" in skipped["clip"]
    assert all(r["status"] == "ok" and not {"clip", "rclip"} & set(r["metrics"])
               for r in result["samples"])
    assert result["models"] == {}
    assert result["summary"]["samples_evaluated"] == 3 and "clip" not in result["summary"]


def test_unused_weights_are_reported_not_ignored():
    result = run_eval(SvgeniusSuite(), "i2s", FIXTURES / "svgenius" / "easy_i2s.json",
                      FIXTURES / "svgenius" / "easy_i2s.pred.jsonl",
                      RunOptions(progress=False, weights={"lpips": "/nowhere/vgg.pth"}))
    assert any("--weights lpips" in w for w in result["warnings"])
    assert "lpips" in {s["name"] for s in result["skipped_metrics"]}


@pytest.mark.torch
def test_clip_score_from_user_weights(tmp_path):
    torch = pytest.importorskip("torch")
    open_clip = pytest.importorskip("open_clip")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
    from tiny_models import tiny_clip_checkpoint
    from PIL import Image

    from svgloo.evals.render import render
    from svgloo.evals.svgenius import PROTOCOL, extract_svg

    cfg, ckpt, model, preprocess = tiny_clip_checkpoint(tmp_path)
    result = run_eval(SvgeniusSuite(), "t2s", DATA, PRED, RunOptions(
        progress=False, weights={"clip": str(ckpt), "clip-config": str(cfg)}))
    assert {s["name"] for s in result["skipped_metrics"]} == {"aesthetic", "hpsv2", "fid"} | (
        set() if pss_available() else {"pss"})
    assert result["models"] == {"clip": str(ckpt), "clip-config": str(cfg)}
    tokenizer = open_clip.get_tokenizer(cfg.stem)
    samples = SvgeniusSuite().load(DATA, "t2s")
    preds = [json.loads(line) for line in PRED.read_text().splitlines()]
    for sample, pred, row in zip(samples, preds, result["samples"]):
        def score(svg, caption=sample.inputs["caption"]):
            image = preprocess(Image.fromarray(render(svg, PROTOCOL))).unsqueeze(0)
            with torch.no_grad():
                a = model.encode_image(image)
                b = model.encode_text(tokenizer([caption]))
            a, b = a / a.norm(dim=-1, keepdim=True), b / b.norm(dim=-1, keepdim=True)
            return float((a * b).sum()) * 100
        c_gen = score(extract_svg(pred["response"]))
        c_ref = score(sample.inputs["reference"])
        assert row["metrics"]["clip"] == pytest.approx(c_gen, abs=1e-4)
        want = 1 - max(0.0, (c_ref - c_gen) / c_ref) if c_ref > 0 else c_gen
        assert row["metrics"]["rclip"] == pytest.approx(want, abs=1e-4)
    assert np.isfinite(result["summary"]["clip"])
