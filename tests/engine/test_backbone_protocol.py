"""protocols.PatchedBackbone: the engine hands a patched backbone its progress callback and
the earlier scoring as one declared type, instead of reading the backbone's signature."""

from __future__ import annotations

import numpy as np

from svgloo.engine.protocols import Backbone, EarlierScoring, PatchedBackbone
from svgloo.engine.scoring.score import ScoreSettings, score_text
from svgloo.evals.backbones import SvgEditBenchMseBackbone
from svgloo.plugins.pixel_backbone import PixelBackbone

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 20">'
       '<rect width="20" height="20" fill="#fff"/><circle cx="9" cy="9" r="5" fill="{}"/>'
       '<rect x="1" y="1" width="3" height="3" fill="#00f"/></svg>')


class Recording(PixelBackbone):
    """The pixel backbone, recording what the engine hands it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict] = []

    def similarity_patched(self, full, patches, prepared, *, on_done=None, previous=None):
        self.calls.append({"on_done": on_done, "previous": previous})
        return super().similarity_patched(full, patches, prepared, on_done=on_done,
                                          previous=previous)


def test_the_backbones_shipped_declare_the_patched_protocol():
    assert isinstance(PixelBackbone(), PatchedBackbone)
    assert isinstance(SvgEditBenchMseBackbone(), PatchedBackbone)
    assert isinstance(PixelBackbone(), Backbone)


def test_an_edit_hands_the_backbone_the_earlier_scoring_and_equals_a_cold_one():
    settings = ScoreSettings(backbone="pixel", size=48)
    backbone = Recording()
    first = score_text(SVG.format("#f00"), "d.svg", settings, backbone=backbone)
    assert backbone.calls[-1]["previous"] is None and callable(backbone.calls[-1]["on_done"])
    again = score_text(SVG.format("#0a0"), "d.svg", settings, backbone=backbone, previous=first)
    earlier = backbone.calls[-1]["previous"]
    assert isinstance(earlier, EarlierScoring)
    assert earlier.full is first.loo.full and earlier.prepared is first.prepared
    assert list(earlier.patches) == list(first.loo.patches)
    cold = score_text(SVG.format("#0a0"), "d.svg", settings, backbone=PixelBackbone())
    assert [u["delta"] for u in again.result["units"]] == \
        [u["delta"] for u in cold.result["units"]]
    assert again.result["full_score"] == cold.result["full_score"]
    assert np.array_equal(again.loo.full, cold.loo.full)


def test_plugins_are_looked_up_once_per_process(monkeypatch):
    """discover() scans the installed packages' metadata once per group (5-8 ms a scan,
    once per file with --backbone auto before); each caller gets a dict of its own."""
    from svgloo.engine import protocols

    scans = []
    real = protocols.entry_points

    def counting(group):
        scans.append(group)
        return real(group=group)

    monkeypatch.setattr(protocols, "entry_points", lambda group: counting(group))
    protocols._entry_points.cache_clear()
    try:
        first = protocols.discover("svgloo.backbones")
        assert "pixel" in first
        first.pop("pixel")
        again = protocols.discover("svgloo.backbones")
        assert "pixel" in again and scans == ["svgloo.backbones"]
        protocols.discover("svgloo.concepts")
        assert scans == ["svgloo.backbones", "svgloo.concepts"]
    finally:
        protocols._entry_points.cache_clear()
