"""The language server's in-process scoring starts from the document's last run, so an edit
costs what it changes (engine: score_document's ``previous``)."""

from __future__ import annotations

from svgloo.engine.scoring.score import ScoreSettings, score_text
from svgloo.lsp.server import Settings, _score_in_process


def test_an_edit_is_scored_from_the_last_run_and_equals_a_cold_scoring(corpus_dir,
                                                                        render_pool):
    path = corpus_dir / "noto" / "emoji_u1f4b6.svg"  # 122 units
    text = path.read_text()
    edited = text.replace("fill:#29B6F6", "fill:#123456", 1)
    assert edited != text
    settings = {**Settings(backbone="pixel", render_size=96).engine_dict(),
                "limits": render_pool.limits}
    cache: dict = {}
    first = _score_in_process(text, str(path), settings, None, cache)
    again = _score_in_process(edited, str(path), settings, None, cache, first)
    assert again.loo.composited is not None  # not a cold scoring
    assert len(again.loo.composited) < len(again.units.units) / 4
    cold = score_text(edited, str(path), ScoreSettings(**settings)).result
    assert {k: v for k, v in again.result.items() if k != "timings"} == \
        {k: v for k, v in cold.items() if k != "timings"}
