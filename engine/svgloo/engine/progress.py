"""Progress of one analysis, counted in steps of real work against a total fixed up front.

A scoring runs in stages (layer renders, subpath windows, composites, similarity, findings)
whose sizes are known, or bounded, before the first render starts. Each stage reserves its
steps when the analysis starts; a stage that turns out smaller gives its unused steps back
as done when it finishes. So the ``(done, total)`` a front end sees only grows, moves as
work is done in every stage, and reaches ``total`` when the analysis ends - not when the
first batch of renders does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

ProgressFn = Callable[[int, int], None]

REPORT_INTERVAL_S = 0.1  # reports in between are dropped (a bar needs no more)

# What one step weighs on the bar. A leave-one-out step renders (the whole document in the
# naive method, a layer or a window in the fast one); a similarity or a findings step is
# array work on images already rendered. Counted alike, the naive method's renders were a
# third of the steps and ~97% of the time (the bar sat at 0-33% for 90% of the run).
# Measured on logos/tastejs.svg (212 units, pixel backbone, 384 px, the shared 2-core
# machine at load ~12): naive 230 ms per render, 2.5 ms per similarity, 3.7 ms per findings
# step (a ratio near 100); fast: 80% of the time in the leave-one-out stages. On light
# files a render costs far less, so the weight is 20, not 100.
RENDER_STEP = 20
ARRAY_STEP = 1


class WorkProgress:
    """Steps done out of steps reserved, reported to ``callback(done, total)``. The
    callback may raise to stop the analysis (the daemon and the language server cancel
    work that way): the error goes up through whichever stage reported."""

    def __init__(self, callback: ProgressFn | None):
        self.callback = callback
        self.total = 0
        self.done = 0
        self._lock = threading.Lock()
        self._last_report = 0.0
        self._started = False

    @classmethod
    def of(cls, progress: "WorkProgress | ProgressFn | None") -> "WorkProgress":
        return progress if isinstance(progress, WorkProgress) else cls(progress)

    def stage(self, steps: int, weight: int = RENDER_STEP) -> "Stage":
        """Reserve ``steps`` for a stage (before ``start``), each worth ``weight`` on the
        bar: RENDER_STEP (the default: the leave-one-out stages render) or ARRAY_STEP."""
        steps, weight = max(0, int(steps)), max(1, int(weight))
        with self._lock:
            self.total += steps * weight
        return Stage(self, steps, weight)

    def start(self) -> None:
        """Every stage is reserved: reports may begin (work done before is counted)."""
        with self._lock:
            self._started = True
        self._add(0)

    def _add(self, steps: int) -> None:
        with self._lock:
            self.done = min(self.total, self.done + steps)
            now = time.monotonic()
            due = self._started and (self.done >= self.total or steps == 0
                                     or now - self._last_report >= REPORT_INTERVAL_S)
            if due:
                self._last_report = now
            done, total = self.done, self.total
        if due and self.callback is not None:
            self.callback(done, total)


class Stage:
    """One stage's reserved steps."""

    def __init__(self, owner: WorkProgress, reserved: int, weight: int = 1):
        self.owner = owner
        self.reserved = reserved
        self.weight = weight
        self.used = 0

    def advance(self, steps: int = 1) -> None:
        steps = min(steps, self.reserved - self.used)
        if steps > 0:
            self.used += steps
            self.owner._add(steps * self.weight)

    def finish(self) -> None:
        """The stage is over: whatever it reserved and did not use counts as done."""
        self.advance(self.reserved - self.used)
