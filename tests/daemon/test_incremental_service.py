"""The warm service re-scores an edited document from its previous scoring, per document,
and answers what a cold scoring of the new text answers."""

from __future__ import annotations

import pytest

from svgloo.daemon.cache import ResultCache
from svgloo.daemon.service import ScoringService
from svgloo.engine.scoring.score import ScoreSettings, score_text

pytestmark = pytest.mark.slow

FILE = "noto/emoji_u1f4b5.svg"  # 123 units
SETTINGS = {"backbone": "pixel", "size": 96}


def _without_timings(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in ("timings", "daemon")}


@pytest.fixture
def service(tmp_path, render_pool):
    svc = ScoringService(cache=ResultCache(tmp_path, disk=False), limits=render_pool.limits,
                         pool=render_pool)
    yield svc
    svc.close()


def test_an_edit_is_rescored_from_the_documents_last_run(service, corpus_dir, render_pool):
    text = (corpus_dir / FILE).read_text()
    first_colour = text.index("#", text.index("<path"))
    edited = text[:first_colour] + "#123456" + text[first_colour + 7:]
    uri = "file:///tmp/edited.svg"
    first = service.run(kind="score", text=text, uri=uri, settings=SETTINGS)
    assert first.error is None
    assert service.status()["cache"]["incremental_scorings"] == 0
    again = service.run(kind="score", text=edited, uri=uri, settings=SETTINGS)
    assert again.error is None and not again.cached
    assert service.status()["cache"]["incremental_scorings"] == 1
    settings = ScoreSettings(**SETTINGS, limits=render_pool.limits)
    cold = score_text(edited, "/tmp/edited.svg", settings, pool=render_pool).result
    assert _without_timings(again.result) == _without_timings(cold)
    # Another document, or other settings, start cold.
    service.run(kind="score", text=edited, uri="file:///tmp/other.svg", settings=SETTINGS)
    service.run(kind="score", text=text, uri=uri, settings={**SETTINGS, "size": 64})
    assert service.status()["cache"]["incremental_scorings"] == 1
    assert service.status()["cache"]["documents_kept"] == 3


def test_the_two_steps_score_then_prove_the_kept_run(service, corpus_dir, render_pool):
    """``prove: false`` answers without the removal proof; the same text with ``prove:
    true`` proves the kept run (no second leave-one-out) and answers what a cold scoring
    with the proof answers; after an edit the two steps again equal a cold scoring."""
    from svgloo.engine.result_types import is_proven

    text = (corpus_dir / "logos/yeoman.svg").read_text()  # units proven, a bulk removal
    uri = "file:///tmp/two-steps.svg"
    quick = service.run(kind="score", text=text, uri=uri, settings={**SETTINGS, "prove": False})
    assert quick.error is None and not is_proven(quick.result)
    proven = service.run(kind="score", text=text, uri=uri, settings={**SETTINGS, "prove": True})
    assert proven.error is None and not proven.cached
    assert service.status()["cache"]["proofs_after_scoring"] == 1
    settings = ScoreSettings(**SETTINGS, limits=render_pool.limits)
    cold = score_text(text, "/tmp/two-steps.svg", settings, pool=render_pool).result
    assert _without_timings(proven.result) == _without_timings(cold)
    assert cold["summary"]["proven_removable"] > 0 and cold["bulk_removal"]

    first_colour = text.index("#", text.index("<path"))
    edited = text[:first_colour] + "#123456" + text[first_colour + 7:]
    service.run(kind="score", text=edited, uri=uri, settings={**SETTINGS, "prove": False})
    again = service.run(kind="score", text=edited, uri=uri, settings={**SETTINGS, "prove": True})
    assert service.status()["cache"]["proofs_after_scoring"] == 2
    assert service.status()["cache"]["incremental_scorings"] == 1
    cold = score_text(edited, "/tmp/two-steps.svg", settings, pool=render_pool).result
    assert _without_timings(again.result) == _without_timings(cold)
