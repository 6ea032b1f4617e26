"""Progress counts the work of every stage against a total fixed before the first report."""

from __future__ import annotations

import pytest

from svgloo.engine.progress import WorkProgress
from svgloo.engine.score import ScoreSettings, score_file
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
    first, second = work.stage(10), work.stage(5)
    work.start()
    first.advance(3)
    first.finish()          # 7 reserved steps were not needed: they count as done
    second.advance(99)      # never more than reserved
    assert seen[0] == (0, 15) and seen[-1] == (15, 15)
    assert work.done == work.total == 15


def test_nothing_is_reported_before_every_stage_is_reserved():
    seen = []
    work = WorkProgress(lambda d, t: seen.append((d, t)))
    early = work.stage(1)
    early.finish()          # e.g. the full render, done before the other stages exist
    later = work.stage(4)
    assert seen == []
    work.start()
    later.finish()
    assert seen == [(1, 5), (5, 5)]
