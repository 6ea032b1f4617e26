"""A file whose leave-one-out cannot fit the document's memory budget is refused before
its renders, in one line that says what to do; files that fit are not slowed down."""

from __future__ import annotations

import time

import pytest

from svgloo.engine.document import parse_document
from svgloo.engine.errors import LimitError
from svgloo.engine.fit_check import BYTES_PER_PIXEL, estimated_bytes
from svgloo.engine.limits import Limits
from svgloo.engine.loo import leave_one_out
from svgloo.engine.units import extract_units
from svgloo.validation.big_inputs import scatter, stacked_rects

SIZE = 192
# Each stacked rect covers 60% of the canvas on a side: 115 x 115 px at 192 px.
RECT_PIXELS = 115 * 115


def test_stacked_rects_over_the_budget_are_refused_before_any_layer_is_drawn(
        render_pool, monkeypatch):
    us = extract_units(parse_document(stacked_rects(400), "stacked.svg"))
    need_mb = 400 * RECT_PIXELS * BYTES_PER_PIXEL / 2 ** 20  # ~35 MB
    limits = Limits(document_render_mb=20)
    import svgloo.engine.loo as loo

    drawn = []
    monkeypatch.setattr(loo, "compute_blocks", lambda us: drawn.append(1) or [])
    t = time.perf_counter()
    with pytest.raises(LimitError) as caught:
        leave_one_out(us, "fast", SIZE, limits, render_pool)
    assert time.perf_counter() - t < 30  # one render job of a few units, even loaded
    assert not drawn
    message = str(caught.value)
    assert "\n" not in message and "stacked.svg" in message
    assert "400 units" in message and "20 MB" in message
    assert "--size 128 or less" in message  # 192 * sqrt(20 / 35) = 145 -> 128
    estimate = estimated_bytes(us, SIZE, limits, render_pool) / 2 ** 20
    assert abs(estimate - need_mb) < 0.05 * need_mb


def test_many_small_dots_are_not_refused_and_small_files_render_nothing_to_check(
        render_pool, monkeypatch):
    limits = Limits(document_render_mb=20)
    dots = extract_units(parse_document(scatter(1000), "scatter.svg"))
    # The worst case (every dot drawing the whole canvas) is over; the measured is not.
    assert 1000 * SIZE * SIZE * BYTES_PER_PIXEL > 20 * 2 ** 20
    assert estimated_bytes(dots, SIZE, limits, render_pool) < 5 * 2 ** 20
    small = extract_units(parse_document(stacked_rects(20), "small.svg"))
    assert estimated_bytes(small, SIZE, limits, render_pool) is None
