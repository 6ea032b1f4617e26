"""The document's time budget holds wherever scoring is called from: a caller that set
none (the CLI, a script) gets ``limits.document_timeout_s``, and the main process's
stages check it as they go, not only the render workers."""

from __future__ import annotations

import contextvars
import time

import pytest

from svgloo.engine.errors import LimitError
from svgloo.engine.limits import Limits
from svgloo.engine.scoring.score import ScoreSettings, score_text
from svgloo.engine.processes.workers import RenderPool
from svgloo.validation.big_inputs import stacked_rects


def test_scoring_with_no_budget_set_stops_at_the_settings_document_timeout():
    limits = Limits(document_timeout_s=2.0)
    pool = RenderPool(limits=limits)
    try:
        pool.start()
        settings = ScoreSettings(backbone="pixel", size=192, limits=limits)
        t = time.perf_counter()
        with pytest.raises(LimitError) as caught:
            # A fresh context: no budget of the caller's (as in the CLI). 1,000 stacked rects
            # take 30 s of CPU: far over 2 s on any machine (300 once finished within it).
            contextvars.Context().run(score_text, stacked_rects(1000), "stacked.svg",
                                      settings, pool=pool)
        seconds = time.perf_counter() - t
    finally:
        pool.close()
    message = str(caught.value)
    assert "\n" not in message and message.startswith("stacked.svg: ")
    assert "longer than 2 s (document time budget)" in message
    assert seconds < 20  # the stage at work when time ran out stopped soon after
