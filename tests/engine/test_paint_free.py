"""A colour edit keeps what depends on geometry only: each subpath's extents are not
measured again, and the re-scoring still equals a cold one."""

from __future__ import annotations

import numpy as np
import pytest

from svgloo.engine.leave_one_out.paint_free import paint_free
from svgloo.engine.rendering.render import render_rgba
from svgloo.engine.scoring.score import ScoreSettings, score_text

SIZE = 96


def _compound(fill: str) -> str:
    """A rect under one compound path of 9 curved subpaths at fractional positions (the
    subpaths are scored in windows, and drawn alone for the findings)."""
    subpaths = "".join(f"M{2.3 + 6.1 * (i % 3)} {3.7 + 5.9 * (i // 3)}c1.7-1.1 3.9 .4 3.6 2.3"
                       f"s-2.2 2.9-3.4 1.2z" for i in range(9))
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
            '<rect x="1" y="1" width="14" height="9" fill="#3a7"/>'
            f'<g fill="{fill}"><path d="{subpaths}"/></g></svg>')


def test_opaque_colours_are_spelled_one_way_and_nothing_else_is():
    a = '<path fill="#12ab9f" stroke="rgb(1, 2, 3)" style="fill:#fff;stroke: #0a0b0c"/>'
    b = '<path fill="#000000" stroke="rgb(250,20,30)" style="fill:#123;stroke: #ffffff"/>'
    assert paint_free(a) == paint_free(b) != a
    # Colours that are not opaque, or not colours, keep their spelling.
    for kept in ('fill="#12ab9f80"', 'fill="none"', 'fill="url(#g)"', 'fill="currentColor"',
                 'fill="rgba(1,2,3,.5)"', 'fill="red"', 'fill="#12ab9"'):
        assert paint_free(f"<path {kept}/>") == f"<path {kept}/>"
    # Where a colour may become alpha (a luminance mask, a filter), nothing is respelled.
    masked = '<mask id="m"><rect fill="#fff"/></mask><path fill="#f00" mask="url(#m)"/>'
    assert paint_free(masked) == masked


@pytest.mark.parametrize("one, other", [("#f00", "#0a8cd2"), ("#123", "rgb(240, 200, 10)")])
def test_coverage_does_not_depend_on_an_opaque_colour(one, other):
    """The premise, checked in CairoSVG itself: the alpha of a drawing in one opaque
    colour is that of the same drawing in another, pixel for pixel."""
    a = render_rgba(_compound(one), SIZE)
    b = render_rgba(_compound(other), SIZE)
    assert np.array_equal(a[..., 3], b[..., 3])
    assert not np.array_equal(a[..., :3], b[..., :3])


def _asked(calls: list) -> dict[str, int]:
    """Subpath work items sent to the workers, by kind ("boxes", "windows")."""
    out = {"boxes": 0, "windows": 0}
    for fn, jobs in calls:
        if fn.__name__ != "job_subpath_work":
            continue
        for job in jobs:
            for kind, work in job[2].values():
                out[kind] += len(work if kind == "boxes" else work[1])
    return out


def test_a_colour_edit_measures_no_subpath_again(render_pool, monkeypatch):
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    calls: list = []
    real_map = render_pool.map

    def spy(fn, jobs, *args, **kwargs):
        calls.append((fn, list(jobs)))
        return real_map(fn, jobs, *args, **kwargs)

    monkeypatch.setattr(render_pool, "map", spy)
    cache: dict = {}
    run = score_text(_compound("#f00"), "t.svg", settings, pool=render_pool, layer_cache=cache)
    cold_asked = _asked(calls)
    assert cold_asked["boxes"] == 9 and cold_asked["windows"] == 18  # without, alone

    # An opaque colour keeps the extents' key; a translucent one does not (measured again).
    for fill, measured_again in [("#0a8cd2", False), ("rgb(240, 200, 10)", False),
                                 ("#0a8cd280", True)]:
        calls.clear()
        again = score_text(_compound(fill), "t.svg", settings, pool=render_pool,
                           layer_cache=cache, previous=run)
        asked = _asked(calls)
        assert asked == {"boxes": 9 if measured_again else 0, "windows": 18}, fill
        cold = score_text(_compound(fill), "t.svg", settings, pool=render_pool, layer_cache={})
        for result in (again.result, cold.result):
            result.pop("timings")
        assert again.result == cold.result, fill
        run = again
