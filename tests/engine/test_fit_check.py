"""A file whose leave-one-out cannot fit the document's memory budget is refused before
its renders, in one line that says what to do; files that fit are not slowed down."""

from __future__ import annotations

import time

import pytest

from svgloo.engine.reading.document import parse_document
from svgloo.engine.errors import LimitError
from svgloo.engine.leave_one_out.fit_check import BYTES_PER_PIXEL, estimated_bytes
from svgloo.engine.limits import Limits
from svgloo.engine.leave_one_out.loo import leave_one_out
from svgloo.engine.reading.units import extract_units
from svgloo.validation.big_inputs import scatter, stacked_rects

SIZE = 192
# Each stacked rect covers 60% of the canvas on a side: 115 x 115 px at 192 px.
RECT_PIXELS = 115 * 115


def test_stacked_rects_over_the_budget_are_refused_before_any_layer_is_drawn(
        render_pool, monkeypatch):
    us = extract_units(parse_document(stacked_rects(400), "stacked.svg"))
    need_mb = 400 * RECT_PIXELS * BYTES_PER_PIXEL / 2 ** 20  # ~35 MB
    limits = Limits(document_render_mb=20)
    import svgloo.engine.leave_one_out.loo as loo

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


def _one_path(subpaths: int, wrap: str = "") -> str:
    d = "M0 0" + "m2 0h1z" * (subpaths - 1)
    path = f'<path d="{d}"/>'
    if wrap:
        path = f"<{wrap}>{path}</{wrap}><rect width='5' height='5'/>"
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">{path}</svg>'


def test_a_path_of_far_more_subpaths_than_the_limit_is_refused_before_it_is_split(
        monkeypatch):
    """300,000 subpaths (the limit is 5,000): refused by counting movetos, without
    splitting the path data (which took 48 s and 695 MB at a million subpaths)."""
    from svgloo.engine.reading import units
    from svgloo.engine.reading.preflight import check_scorable

    doc = parse_document(_one_path(300_000), "huge.svg", Limits())
    split = []
    monkeypatch.setattr(units, "split_subpaths", lambda d: split.append(d) or [])
    units._cached_split.cache_clear()
    with pytest.raises(LimitError) as caught:
        check_scorable(doc, Limits())
    assert not split
    assert str(caught.value).endswith(
        "huge.svg: about 300000 scoring units; the limit is 5000 (try --no-subpaths)")


def test_the_cheap_count_refuses_nothing_the_exact_count_would_take():
    from svgloo.engine.reading.unit_count import units_at_most
    from svgloo.engine.reading.preflight import check_scorable

    limits = Limits()
    # Near the limit the exact count decides (the same message as ever).
    with pytest.raises(LimitError, match="6000 scoring units; the limit is 5000"):
        check_scorable(parse_document(_one_path(6000), "near.svg", limits), limits)
    # A path in <defs> is no unit, however many subpaths it has.
    doc = parse_document(_one_path(300_000, "defs"), "defs.svg", limits)
    assert units_at_most(doc) == 1
    _, us = check_scorable(doc, limits)
    assert len(us.units) == 1
    # Without subpaths a compound path is one unit.
    doc = parse_document(_one_path(300_000), "whole.svg", limits)
    _, us = check_scorable(doc, limits, subpaths=False)
    assert len(us.units) == 1
