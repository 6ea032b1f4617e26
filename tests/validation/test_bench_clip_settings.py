"""The CLIP measurement (validation/bench_clip.py, and tests/measure_clip_gpu.py through
its run_precision) scores without the removal proof: it reads deltas, verdicts and the
encoder's timings, never removals (docs/two-speeds.md)."""

from __future__ import annotations

import pytest

import svgloo.engine.scoring.score as score
from svgloo.validation.bench_clip import run_precision


class _Seen(Exception):
    pass


def test_the_clip_measurement_scores_without_the_removal_proof(monkeypatch, tmp_path):
    seen = []

    def score_file(path, settings, **kw):
        seen.append(settings)
        raise _Seen()

    monkeypatch.setattr(score, "score_file", score_file)
    with pytest.raises(_Seen):
        run_precision([tmp_path / "any.svg"], None, "fp32", None)
    [settings] = seen
    assert settings.prove is False and settings.backbone == "clip"
