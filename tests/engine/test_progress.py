"""Progress counts the work of every stage against a total fixed before the first report."""

from __future__ import annotations

import pytest

from svgloo.engine.progress import WorkProgress
from svgloo.engine.scoring.score import ScoreSettings, score_file
from svgloo.plugins.pixel_backbone import PixelBackbone

from conftest import CORPUS


class WatchingBackbone(PixelBackbone):
    """The pixel backbone, noting the progress reported when scoring starts."""

    def __init__(self, events):
        super().__init__()
        self.events = events
        self.at_prepare = None

    def prepare(self, reference):
        self.at_prepare = self.events[-1] if self.events else (0, 0)
        return super().prepare(reference)


@pytest.mark.parametrize("name,method", [("logos/pypi.svg", "fast"),
                                         ("noto/emoji_u1f9af.svg", "fast"),
                                         ("logos/tastejs.svg", "naive")])
def test_progress_grows_to_a_fixed_total_at_the_very_end(name, method, render_pool):
    events = []
    backbone = WatchingBackbone(events)
    run = score_file(str(CORPUS / name), ScoreSettings(backbone="pixel", method=method),
                     pool=render_pool, backbone=backbone, progress=lambda d, t: events.append((d, t)))
    n = len(run.result["units"])
    totals = {t for _, t in events}
    assert len(totals) == 1, "the total changed while the work went on"
    total = totals.pop()
    done = [d for d, _ in events]
    assert done == sorted(done) and done[-1] == total
    # When the leave-one-out images are all made, every unit still has to be scored and
    # its findings looked for: the bar is not full (it once showed 100% at this point).
    assert backbone.at_prepare[0] <= total - 2 * n


def test_a_stage_gives_back_what_it_did_not_use_when_it_finishes():
    seen = []
    work = WorkProgress(lambda d, t: seen.append((d, t)))
    first, second = work.stage(10, weight=1), work.stage(5, weight=1)
    work.start()
    first.advance(3)
    first.finish()          # 7 reserved steps were not needed: they count as done
    second.advance(99)      # never more than reserved
    assert seen[0] == (0, 15) and seen[-1] == (15, 15)
    assert work.done == work.total == 15


def test_nothing_is_reported_before_every_stage_is_reserved():
    seen = []
    work = WorkProgress(lambda d, t: seen.append((d, t)))
    early = work.stage(1, weight=1)
    early.finish()          # e.g. the full render, done before the other stages exist
    later = work.stage(4, weight=1)
    assert seen == []
    work.start()
    later.finish()
    assert seen == [(1, 5), (5, 5)]


def test_a_step_counts_its_stages_weight():
    seen = []
    work = WorkProgress(lambda d, t: seen.append((d, t)))
    renders, sums = work.stage(3, weight=20), work.stage(10, weight=1)
    work.start()
    renders.advance(1)
    assert work.done == 20
    renders.finish()
    sums.advance(5)
    assert work.done == 65
    sums.finish()
    assert seen[0] == (0, 70) and seen[-1] == (70, 70)


def test_naive_bar_follows_the_renders(render_pool):
    """The naive method's time is its whole-document renders (one per unit); scoring and
    findings after them are array work. While it renders, the bar moves in whole renders;
    when the last render is done (the backbone starts preparing) it stands above 85%, not
    at a third (before: every step counted 1, so n+1 renders of 2n+1+findings steps)."""
    from svgloo.engine.progress import RENDER_STEP

    events = []
    backbone = WatchingBackbone(events)
    run = score_file(str(CORPUS / "logos/tastejs.svg"),
                     ScoreSettings(backbone="pixel", method="naive", size=96),
                     pool=render_pool, backbone=backbone,
                     progress=lambda d, t: events.append((d, t)))
    n = len(run.result["units"])
    total = events[-1][1]
    renders = run.result["timings"]["renders"]
    assert renders == n + 1
    done_at_prepare = backbone.at_prepare[0]
    assert done_at_prepare / total > 0.85
    assert done_at_prepare < total           # the scoring and findings are still to come
    # Every report during the renders is a whole number of renders: the bar moves with them.
    during = [d for d, _ in events if d <= done_at_prepare]
    assert all(d % RENDER_STEP == 0 for d in during)
    assert len({d for d in during}) > 3
