"""Removing several units at once, proven by rendering.

Leave-one-out judges each unit with all the others present: two identical shapes drawn on
top of each other each have "no visible effect", yet removing both erases the shape. So a
removal of more than one unit is only offered after the picture *without all of them* was
rendered and compared with the full picture, with the same tolerance that decides "no
visible effect" for one unit (no pixel changes by more than ``CHANGED_THRESHOLD``/255).
When the whole set changes the picture it is narrowed greedily, every step re-checked by
rendering, and the caller learns which units remain provably removable and how many were
dropped.

Units that are meant to change the picture a little (specks: stray points and slivers) are
removed with an allowance: each may change as many pixels as it changes alone (its
leave-one-out footprint), and a set passes when the picture without all of them changes no
more pixels than the sum of theirs - so removing them together takes away only what they
draw one at a time, never a shape they make only together.

Plain functions; every render goes through the engine's render workers
(``loo.job_render_full`` in a ``RenderPool``), never a renderer of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from svgloo.engine.document import parse_document
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.loo import CHANGED_THRESHOLD, job_render_full
from svgloo.engine.units import UnitSet, extract_units, text_without
from svgloo.engine.workers import RenderPool, shared_pool
from svgloo.engine.settings import DEFAULT_RENDER_SIZE


@dataclass(frozen=True)
class RemovalCheck:
    """The outcome of proving a multi-unit removal."""

    requested: tuple[int, ...]   # unit indices asked for, sorted
    removable: tuple[int, ...]   # the largest set found whose removal keeps the picture
    dropped: tuple[int, ...]     # asked for, but kept: removing them too changes the picture
    renders: int                 # renders spent on the proof (the full picture included)

    @property
    def complete(self) -> bool:
        """True when the whole requested set is provably removable."""
        return not self.dropped


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels whose largest channel difference exceeds the "no visible effect" tolerance."""
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    return int((diff > CHANGED_THRESHOLD).sum())


def check_removal(us: UnitSet, units: Iterable[int], size: int = DEFAULT_RENDER_SIZE,
                  limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None,
                  should_stop: Callable[[], bool] | None = None,
                  allowed: Mapping[int, int] | None = None) -> RemovalCheck:
    """Which of ``units`` (indices into ``us``) can be removed together with no visible
    change at ``size`` px. The whole set is tried first (one render); if it changes the
    picture, groups are added greedily in document order, halving a group that fails,
    so a set of n units costs between 2 and about 2n renders.

    ``allowed``: changed pixels each unit may account for (its own footprint at ``size``;
    missing units 0); a set passes when the picture without it changes no more pixels
    than its units' allowances add up to. None: no pixel may change.

    ``should_stop``, polled between renders, lets a caller abandon stale work; it raises
    whatever the caller wants by raising inside it."""
    pool = pool or shared_pool(limits)
    name = us.doc.name
    requested = tuple(sorted(set(int(i) for i in units)))
    for i in requested:
        if not 0 <= i < len(us.units):
            raise ValueError(f"unit {i} is not a unit of {name}")
    renders = 0

    def render(text: str) -> np.ndarray:
        nonlocal renders
        if should_stop is not None:
            should_stop()
        [(rgb, _seconds)] = pool.map(job_render_full, [(text, size, limits, name)], name)
        renders += 1
        return rgb

    if not requested:
        return RemovalCheck((), (), (), 0)
    full = render(us.doc.text)

    allowance = allowed or {}

    def keeps_picture(remove: set[int]) -> bool:
        budget = sum(max(0, int(allowance.get(i, 0))) for i in remove)
        return changed_pixels(full, render(text_without(us, remove))) <= budget

    accepted: set[int] = set()
    dropped: list[int] = []

    def add(group: list[int]) -> None:
        if keeps_picture(accepted | set(group)):
            accepted.update(group)
        elif len(group) == 1:
            dropped.append(group[0])
        else:
            half = len(group) // 2
            add(group[:half])
            add(group[half:])

    add(list(requested))
    return RemovalCheck(requested, tuple(sorted(accepted)), tuple(sorted(dropped)), renders)


def check_removal_text(text: str, name: str, units: Iterable[int], size: int = DEFAULT_RENDER_SIZE,
                       subpaths: bool = True, limits: Limits = DEFAULT_LIMITS,
                       pool: RenderPool | None = None,
                       should_stop: Callable[[], bool] | None = None,
                       allowed: Mapping[int, int] | None = None) -> RemovalCheck:
    """``check_removal`` on a document held in memory; unit indices are those of
    ``extract_units(parse_document(text, name), subpaths)`` (what ``svgloo.score/1`` reports)."""
    us = extract_units(parse_document(text, name, limits), subpaths)
    return check_removal(us, units, size, limits, pool, should_stop, allowed)


__all__ = ["RemovalCheck", "changed_pixels", "check_removal", "check_removal_text"]
