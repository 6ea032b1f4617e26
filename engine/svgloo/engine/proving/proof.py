"""What may be deleted: the one place that decides "this can be removed".

A removal is *proven* only when the picture without the removed units equals the full
picture in two renderers - CairoSVG (the analysis renderer) and resvg (a browser-grade
one) - at three sizes: the analysis size, an icon's (``SMALL_PROOF_SIZE``) and the proof
size (the document's own size, at least ``MIN_PROOF_SIZE`` px, at most the render limit),
checked in that order (the analysis size first: scoring has its full pictures).
"Equals" means: no channel of any pixel, premultiplied R, G, B and alpha, and the picture
over a white and over a black page (hence over any page colour), moves by more than
``PROOF_TOLERANCE``/255. A white shape is not nothing on a dark page, and a full-canvas 4%
tint (10/255) is a change. The check is 2/255 stricter than what is promised in a browser
(``BROWSER_TOLERANCE``, 4/255): Skia's antialiasing where edges meet moves pixels a little
more than the proof's renderers do.

Scoring keeps its own, looser footprint threshold (``loo.CHANGED_THRESHOLD``, over white):
``visible`` in the score means "changes CairoSVG's picture by more than 12/255"; only what
is offered for deletion must pass this proof.

Checking is cheap: the whole candidate set is removed at once (one render per renderer and
size); only when that changes a picture is the set bisected. Units whose rendering svgloo
cannot vouch for (features.py) never enter a proof: they are "unverified", with the reason.
So are units that draw where CairoSVG's and resvg's full pictures disagree.

What a unit's "proven" status rests on, exactly (its reason says which applies):
- removed *together* with the other proven units (the bulk set): the full proof above;
- removed *alone* (the editor's one-unit fix): CairoSVG's leave-one-out at the analysis
  size, over white, within PROOF_TOLERANCE (scoring measured it; candidates over it are
  "visible"). Removing a set is not removing each member: two units can undo each other,
  so where one can - a subpath whose box meets another proven subpath's of its path
  (windings add up: an outline written twice in opposite directions draws nothing, either
  copy alone draws it), or an element another refers to (``href``, ``url(#...)``) - the
  unit is also removed alone in both renderers at the analysis size, alpha included; one
  that changes a picture alone is "visible" and the set is proven again without it. For
  the others, what their removal alone does at the proof size, in resvg, or on a dark page
  is not rendered: with plain painting, such a difference needs a unit hidden under
  another that the leave-one-out sees by no more than PROOF_TOLERANCE at the analysis
  size (a sliver under a white cover).

Every render goes through the engine's render workers, never a renderer of its own.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast
from dataclasses import dataclass, field

import numpy as np

from svgloo.engine.reading.features import unit_reasons
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.result_types import BulkRemoval, NamedElement, Removal, RendererDisagreement
from svgloo.engine.rendering.masks import dilate_cross, open_square3
from svgloo.engine.proving.pictures import (BROWSER_TOLERANCE, PROOF_TOLERANCE, RENDERER_NAMES,
                                            RENDERERS, Change, job_picture_changes,
                                            job_render_pictures, picture_change, text_changes,
                                            _where_changed)
from svgloo.engine.proving.proof_reuse import (CheckReuse, EarlyMeasures, ProofState,
                                               candidate_boxes, carry, components, ink_mask,
                                               mask_meets_array, reuse_check, text_key)
from svgloo.engine.rendering.render_jobs import FullPictures
from svgloo.engine.settings import DEFAULT_RENDER_SIZE
from svgloo.engine.reading.units import UnitSet, text_keeping, text_without
from svgloo.engine.processes.workers import RenderPool, shared_pool

MIN_PROOF_SIZE = 1024     # px: small documents are proven at least this large
# px: and at an icon's size. A unit that draws nothing at 384 or 1024 px can still shift
# the anti-aliasing of an edge it shares at 48-100 px (logos/seaborn.svg: one invisible
# subpath moves CairoSVG and resvg by 11-12/255 at 64 px, 1/255 at 384, and Chromium by
# 11/255 at 100 px: docs/fix.md). Its renders cost next to nothing.
SMALL_PROOF_SIZE = 64
# Removals checked per proof: PROOF_MAX_CHECKS plus one per four candidates. Bisecting n
# units never takes more than 2n - 1 checks; the cap bites when many of them fail (the
# corpus's sugarss.svg: 180 of 736 fail together; a full bisection cost 2,102 renders).
PROOF_MAX_CHECKS = 48
DISAGREE_THRESHOLD = 32   # /255: where CairoSVG's and resvg's full pictures differ...
DISAGREE_MIN_PIXELS = 9   # ...in a patch at least 3x3 px (lone edge pixels are antialiasing)


def proof_sizes(us: UnitSet, analysis_size: int, limits: Limits) -> tuple[tuple[int, ...], str]:
    """(sizes to prove at, a note when the document's own size was capped)."""
    own = _document_size(us)
    proof = max(own or 0, MIN_PROOF_SIZE)
    note = ""
    if proof > limits.max_render_size:
        note = (f"the document is {own:g} px; proven at {limits.max_render_size} px, the "
                "render limit")
        proof = limits.max_render_size
    # the analysis size first (callers take sizes[0] for it), then from small to large
    sizes = (int(analysis_size),) + tuple(sorted(
        {SMALL_PROOF_SIZE, int(proof)} - {int(analysis_size)}))
    return sizes, note


def _document_size(us: UnitSet) -> float | None:
    from svgloo.engine.rendering.render import root_size

    root = us.doc.root
    width, height = root_size(root.get("width")), root_size(root.get("height"))
    if width and height:
        return max(width, height)
    box = (root.get("viewBox") or "").replace(",", " ").split()
    try:
        return max(float(box[2]), float(box[3])) if len(box) == 4 else None
    except ValueError:
        return None


class Prover:
    """Answers "does removing these units keep every picture?" with one batch of renders
    per size (one job per renderer; the workers keep the full pictures and send back only
    numbers). The smallest size is asked first: most removals that change something show
    it there, and its renders cost a fraction of the larger."""

    def __init__(self, us: UnitSet, sizes: Iterable[int], limits: Limits = DEFAULT_LIMITS,
                 pool: RenderPool | None = None,
                 should_stop: Callable[[], bool] | None = None,
                 reuse: CheckReuse | None = None, pictures: Mapping | None = None,
                 ahead: Mapping | None = None):
        self.us = us
        # check key -> (its changes at the first size, renders): rendered ahead for this
        # very text (proof_reuse.EarlyMeasures); the renders are counted there
        self.ahead = ahead or {}
        # (renderer, size) -> the document's picture, where the caller has it: sent with
        # the checks, so that no worker renders it again (a 384 px picture pickles in a
        # millisecond; drawing it takes tens)
        self.pictures = dict(pictures or {})
        self.sizes = tuple(sizes)   # in proof_sizes' order: the analysis size first
        self.limits = limits
        self.pool = pool or shared_pool(limits)
        self.should_stop = should_stop
        self.reuse = reuse
        # renders the checks cost (those kept from a previous proof counted as rendered:
        # the numbers are the same as a cold proof's) and the renders actually made
        self.renders = len(self.sizes) * len(RENDERERS)  # the full pictures, once each
        self.rendered = self.renders
        # every check: (kind, frozenset of units removed, sizes) -> (outcome, renders)
        self.checks: dict = {}
        # candidate -> {size: Mask} (or a callable giving it): prove_set
        self.boxes: dict | Callable[[], dict | None] | None = None
        self.kept = 0      # checks kept from the previous proof
        # checks known to fail but not by how much (CheckReuse.fails): their Changes say
        # only where some pixels moved
        self.inexact: set = set()

    def unit_boxes(self) -> dict | None:
        """candidate -> {size: box}: where removing it can change a picture (None: not
        known; then sets are not split)."""
        if callable(self.boxes):
            self.boxes = self.boxes()
        return self.boxes

    def _kept(self, key, detail: bool = True) -> tuple | None:
        """(a check's previous outcome, whether its numbers are exact) where the edit
        cannot change it (CheckReuse.keeps), or, when ``detail`` is not needed, where it
        still fails (CheckReuse.fails); None: it must be rendered."""
        reuse = self.reuse
        if reuse is None:
            return None
        if reuse.keeps(key, key[1]):
            exact = key not in reuse.inexact
            if exact or not detail:
                self.kept += 1
                return reuse.checks[key], exact
        if not detail:
            still = reuse.fails(key, key[1], self.sizes[0])
            if still is not None:
                self.kept += 1
                return still, False
        return None

    def changes(self, remove: Iterable[int], detail: bool = True) -> list[Change]:
        """The pictures that removing ``remove`` changes beyond the tolerance (at the
        first size where any changes). ``detail`` False: only whether anything changes is
        asked - a check that failed before the edit and moved pixels the edit cannot
        reach fails again, unrendered (CheckReuse.fails), and its Changes keep the old
        numbers (it is "inexact": asked later with ``detail``, it is rendered)."""
        remove = frozenset(remove)
        key = ("set", remove, self.sizes)
        if key in self.checks and (not detail or key not in self.inexact):
            return self.checks[key][0]  # asked again in this proof (a group's last check)
        first = key not in self.checks
        got = self._kept(key, detail)
        if got is None:
            sizes, found, renders = self.sizes, [], 0
            if key in self.ahead:  # its first size rendered ahead: the same numbers
                found, renders = self.ahead[key]
                sizes = () if found else self.sizes[1:]
            if sizes:
                text = text_without(self.us, set(remove))
                more, spent = text_changes(self.us.doc.text, text, sizes, self.limits,
                                           self.pool, self.us.doc.name, self.should_stop,
                                           self.pictures)
                found, renders = more, renders + spent
                self.rendered += spent
            got = ((found, renders), True)
        outcome, exact = got
        if exact:
            self.inexact.discard(key)
        else:
            self.inexact.add(key)
        self.checks[key] = outcome
        if first:
            self.renders += outcome[1]
        return outcome[0]

    def each_alone(self, units: Iterable[int], sizes: Iterable[int] | None = None
                   ) -> dict[int, Change]:
        """Each of ``units`` removed alone: unit -> the first picture its removal changes
        (the smallest size first; ``sizes``: a part of the prover's), for those that change
        one. One job per renderer and size for all of them (the full picture is rendered
        once per worker)."""
        sizes = tuple(sorted(self.sizes if sizes is None else sizes))
        keys = {i: ("alone", frozenset({i}), sizes) for i in units}
        outcome: dict[int, Any] = {i: (got[0] if (got := self._kept(keys[i])) else None)
                                   for i in keys}
        todo = [i for i in keys if outcome[i] is None]
        found: dict[int, Change] = {}
        spent = dict.fromkeys(todo, 0)
        for size in sizes:
            if not todo:
                break
            if self.should_stop is not None:
                self.should_stop()
            texts = [text_without(self.us, {i}) for i in todo]
            jobs = [(self.us.doc.text, texts, size, self.limits, self.us.doc.name, renderer,
                     self.pictures.get((renderer, size))) for renderer in RENDERERS]
            results = self.pool.map(job_picture_changes, jobs, self.us.doc.name)
            self.rendered += len(texts) * len(RENDERERS)
            for i in todo:
                spent[i] += len(RENDERERS)
            for renderer, moved in zip(RENDERERS, results):
                for i, (pixels, largest, at) in zip(todo, moved):
                    if pixels and i not in found:
                        found[i] = Change(RENDERER_NAMES[renderer], size, pixels, largest,
                                          at)
            todo = [i for i in todo if i not in found]
        for i in spent:
            outcome[i] = (found.get(i), spent[i])
        for i, key in keys.items():
            got = outcome[i]
            assert got is not None  # every unit has its outcome now
            self.checks[key] = got
            self.renders += got[1]
        return {i: outcome[i][0] for i in keys if outcome[i][0] is not None}


@dataclass(frozen=True)
class RemovalCheck:
    """The outcome of proving a multi-unit removal."""

    requested: tuple[int, ...]   # unit indices asked for, sorted
    removable: tuple[int, ...]   # the largest set found whose removal keeps every picture
    dropped: tuple[int, ...]     # asked for, but kept: removing them too changes a picture
    renders: int                 # renders spent on the proof (the full pictures included)
    checked: str = ""            # one line: what was compared
    why_dropped: dict = field(default_factory=dict)  # unit -> the first Change it caused
    undecided: tuple[int, ...] = ()  # not reached before the check budget ran out

    @property
    def complete(self) -> bool:
        """True when the whole requested set is provably removable."""
        return not self.dropped


def checked_line(sizes: Iterable[int], note: str = "") -> str:
    listed = [str(s) for s in sorted(sizes)]
    sizes_text = (", ".join(listed[:-1]) + " and " if len(listed) > 1 else "") + \
        f"{listed[-1]} px"
    line = (f"CairoSVG and resvg at {sizes_text}: no pixel moves by more than "
            f"{PROOF_TOLERANCE}/255 in any channel, alpha included (on any page colour)")
    return line + (f"; {note}" if note else "")


def prove_set(prover: Prover, units: Iterable[int],
              max_checks: int | None = None) -> RemovalCheck:
    """Which of ``units`` can be removed together keeping every picture. The whole set is
    tried first (one check); if it changes a picture, groups are added greedily in
    document order, halving a group that fails. After ``max_checks`` checks (default
    PROOF_MAX_CHECKS + one per four units) the units not reached yet are left undecided: never
    removable.

    With ``prover.boxes`` (where each unit can change a picture, proof_reuse.candidate_boxes),
    a failing whole set is split first into groups that cannot ink on the same pixel, each
    bisected on its own (the checks share the budget; a check of one group finds the
    pixels that removing the same units with any other groups' units finds there), and
    the union of what each group keeps is checked once more (should that ever change a
    picture, the set is bisected whole)."""
    requested = tuple(sorted(set(int(i) for i in units)))
    for i in requested:
        if not 0 <= i < len(prover.us.units):
            raise ValueError(f"unit {i} is not a unit of {prover.us.doc.name}")
    budget = PROOF_MAX_CHECKS + len(requested) // 4 if max_checks is None else max_checks
    if not requested or budget <= 0:
        return _removal(prover, requested, set(), {}, list(requested))
    checks = [1]
    first = prover.changes(requested, detail=len(requested) == 1)
    if not first:
        return _removal(prover, requested, set(requested), {}, [])
    if len(requested) == 1:
        return _removal(prover, requested, set(), {requested[0]: first[0]}, [])
    boxes = prover.unit_boxes()
    groups = [] if boxes is None else components(
        requested, boxes, lambda i: prover.us.units[i].element)
    if len(groups) > 1:
        accepted: set[int] = set()
        dropped: dict[int, Change] = {}
        undecided: list[int] = []
        for group in groups:
            own: set[int] = set()
            _bisect(prover, group, own, dropped, undecided, checks, budget)
            accepted |= own
        if sum(bool(accepted & set(g)) for g in groups) <= 1 or \
                not prover.changes(accepted, detail=False):
            return _removal(prover, requested, accepted, dropped, undecided)
        checks[0] = 1  # the groups were not independent after all: bisect the whole set
    accepted, dropped, undecided = set(), {}, []
    _bisect(prover, list(requested), accepted, dropped, undecided, checks, budget, tried=True)
    return _removal(prover, requested, accepted, dropped, undecided)


def _removal(prover: Prover, requested, accepted, dropped, undecided) -> RemovalCheck:
    return RemovalCheck(requested, tuple(sorted(accepted)),
                        tuple(sorted(set(dropped) | set(undecided))), prover.renders,
                        checked_line(prover.sizes), dropped, tuple(sorted(undecided)))


def _bisect(prover: Prover, units: list[int], accepted: set[int], dropped: dict,
            undecided: list[int], checks: list[int], budget: int, tried: bool = False
            ) -> None:
    """Greedy bisection of ``units`` on top of ``accepted`` (``tried``: the whole of
    ``units`` is known to fail)."""

    def add(group: list[int], known_bad: bool = False) -> None:
        if not known_bad:
            if checks[0] >= budget:
                undecided.extend(group)
                return
            checks[0] += 1
            found = prover.changes(accepted | set(group), detail=len(group) == 1)
            if not found:
                accepted.update(group)
                return
            if len(group) == 1:
                dropped[group[0]] = found[0]
                return
        half = len(group) // 2
        add(group[:half])
        add(group[half:])

    add(list(units), tried)


def check_removal(us: UnitSet, units: Iterable[int], size: int = DEFAULT_RENDER_SIZE,
                  limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None,
                  should_stop: Callable[[], bool] | None = None,
                  allowed: Mapping[int, int] | None = None) -> RemovalCheck:
    """Which of ``units`` (indices into ``us``) can be removed together with no change in
    CairoSVG's or resvg's picture at ``size`` px and at the proof size (see module doc).
    Units svgloo cannot vouch for (features.py) are dropped without a render.

    ``allowed`` (unit -> changed pixels it may account for, its own footprint at ``size``)
    proves a different claim, for units meant to change the picture a little (specks):
    see ``check_speck_removal``.

    ``should_stop``, polled between renders, lets a caller abandon stale work by raising."""
    if allowed is not None:
        return check_speck_removal(us, units, allowed, size, limits, pool, should_stop)
    requested = tuple(sorted(set(int(i) for i in units)))
    unverified = unit_reasons(us)
    wanted = [i for i in requested if i not in unverified]
    if not requested:
        return RemovalCheck((), (), (), 0)
    sizes, note = proof_sizes(us, size, limits)
    if not wanted:
        return RemovalCheck(requested, (), requested, 0, checked_line(sizes, note))
    prover = Prover(us, sizes, limits, pool, should_stop)
    check = prove_set(prover, wanted)
    dropped = tuple(sorted(set(check.dropped) | (set(requested) - set(wanted))))
    return RemovalCheck(requested, check.removable, dropped, prover.renders,
                        checked_line(sizes, note), check.why_dropped, check.undecided)


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels whose largest channel difference exceeds the scoring footprint's threshold
    (``loo.CHANGED_THRESHOLD``), over white."""
    from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD

    diff = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    return int((diff > CHANGED_THRESHOLD).sum())


def check_speck_removal(us: UnitSet, units: Iterable[int], allowed: Mapping[int, int],
                        size: int = DEFAULT_RENDER_SIZE, limits: Limits = DEFAULT_LIMITS,
                        pool: RenderPool | None = None,
                        should_stop: Callable[[], bool] | None = None) -> RemovalCheck:
    """Removing units that are *meant* to change the picture a little (specks: stray
    points and slivers), with an allowance: each may change as many pixels as it changes
    alone (``allowed``: its leave-one-out footprint at ``size``), and a set passes when the
    picture without all of them (CairoSVG, over white, ``size`` px) changes no more pixels
    than the sum of theirs - so removing them together takes away only what they draw one
    at a time, never a shape they make only together. Same greedy narrowing as prove_set.
    This is not a "no visible effect" proof: the caller shows that these are visible."""
    from svgloo.engine.rendering.render_jobs import job_render_full

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

    def keeps_picture(remove: set[int]) -> bool:
        budget = sum(max(0, int(allowed.get(i, 0))) for i in remove)
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
    return RemovalCheck(requested, tuple(sorted(accepted)), tuple(sorted(dropped)), renders,
                        f"CairoSVG at {size} px: no more pixels change (over 12/255, over "
                        "white) than the units change one at a time")


def check_removal_text(text: str, name: str, units: Iterable[int], size: int = DEFAULT_RENDER_SIZE,
                       subpaths: bool = True, limits: Limits = DEFAULT_LIMITS,
                       pool: RenderPool | None = None,
                       should_stop: Callable[[], bool] | None = None,
                       allowed: Mapping[int, int] | None = None) -> RemovalCheck:
    """``check_removal`` on a document held in memory; unit indices are those of
    ``extract_units(parse_document(text, name), subpaths)`` (what ``svgloo.score/1`` reports)."""
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.reading.units import extract_units

    us = extract_units(parse_document(text, name, limits), subpaths)
    return check_removal(us, units, size, limits, pool, should_stop, allowed)


# --- the proof of a whole scoring: per-unit status, bulk set, disagreement ---------------

@dataclass
class Disagreement:
    """Where CairoSVG's and resvg's full pictures differ (at the analysis size)."""

    pixels: int
    box: tuple[int, int, int, int] | None      # y0, y1, x0, x1
    mask: np.ndarray = field(repr=False)
    elements: list[int] = field(default_factory=list)  # elements with a feature (features.py)

    def to_json(self, doc) -> RendererDisagreement:
        """``named``: the elements (start tags) a front end points at."""
        named: list[NamedElement] = []
        for i in self.elements:
            el = doc.elements[i]
            named.append({"element": i, "tag": el.tag, "id": doc.nodes[i].get("id"),
                          "offsets": [el.start, el.start_tag_end]})
        return {"pixels": self.pixels, "box": list(self.box) if self.box else None,
                "threshold": DISAGREE_THRESHOLD, "named": named}


def disagreement(cairo: np.ndarray, resvg: np.ndarray) -> Disagreement:
    """Pixels where the renderers differ by more than DISAGREE_THRESHOLD, in patches of at
    least 3x3 px (antialiasing differs along every edge by a pixel; that is not it)."""
    mask = _open_where(_changed_over(cairo, resvg, DISAGREE_THRESHOLD))
    pixels = int(mask.sum())
    box = None
    if pixels >= DISAGREE_MIN_PIXELS:
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        box = (int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1)
    else:
        pixels = 0
        mask = np.zeros_like(mask)
    return Disagreement(pixels, box, mask)


def _changed_over(a: np.ndarray, b: np.ndarray, threshold: int) -> np.ndarray:
    """``picture_change(a, b) > threshold``, computed only where the pictures differ at
    all (a few thousand pixels of a 384 px picture: 1 ms, not 10)."""
    h, w = a.shape[:2]
    differ, change = _where_changed(a, b)
    out = np.zeros(h * w, bool)
    out[differ[change > threshold]] = True
    return out.reshape(h, w)


def _open_where(mask: np.ndarray) -> np.ndarray:
    """``open_square3(mask)``, worked out inside the box of its True pixels (nothing
    outside it survives an opening)."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    out = np.zeros_like(mask)
    if rows.size:
        y0, y1, x0, x1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
        out[y0:y1, x0:x1] = open_square3(mask[y0:y1, x0:x1])
    return out


@dataclass
class ProofResult:
    status: list[Removal]         # per unit
    bulk: BulkRemoval | None
    disagreement: Disagreement
    warnings: list[str]
    renders: int
    seconds: float
    state: ProofState | None = field(default=None, repr=False)  # for the next proof


def prove_removals(us: UnitSet, invisible: Iterable[int], size: int = DEFAULT_RENDER_SIZE,
                   limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None,
                   should_stop: Callable[[], bool] | None = None,
                   over_white: dict[int, int] | None = None,
                   previous: ProofState | None = None,
                   pictures: FullPictures | None = None,
                   early: EarlyMeasures | None = None) -> ProofResult:
    """The removal status of every unit of a scored document. ``invisible``: the units
    CairoSVG's leave-one-out found without effect (the only candidates); every other unit
    is "visible". Candidates that use a feature svgloo cannot vouch for, or draw where the
    renderers' full pictures disagree, are "unverified"; the rest are proven together
    (bisected when the set changes a picture); the ones dropped are "visible".

    ``previous``: the state of the proof of an earlier text of the same document (its
    ``ProofResult.state``): its verdict is kept when the edit cannot meet the candidates
    in any of the proof's pictures (proof_reuse.py); the result is that of a call without
    it. ``pictures``: the document's pictures at ``size``, already on their way (the
    scoring started them); ``early``: what the reuse measures, measured early (the
    scoring started it too)."""
    t0 = time.perf_counter()
    pool = pool or shared_pool(limits)
    name = us.doc.name
    if previous is not None and previous.size != size:
        previous = None
    state = ProofState(us, size)
    carry(previous, state)
    invisible = set(int(i) for i in invisible)
    reasons = unit_reasons(us)
    if pictures is None or pictures.text != us.doc.text or pictures.size != size:
        pictures = FullPictures(us.doc.text, size, limits, pool, name)
    cairo, resvg = pictures.get("cairosvg"), pictures.get("resvg")
    renders = 2
    differ = disagreement(cairo, resvg)
    status: dict[int, Removal] = {}
    white = over_white or {}
    for u in us.units:
        if u.index not in invisible:
            status[u.index] = {"status": "visible", "reason": "removing it changes CairoSVG's "
                               f"picture at {size} px (its footprint)"}
        elif u.index in reasons:
            status[u.index] = {"status": "unverified", "reason": reasons[u.index]}
        elif white.get(u.index, 0) > PROOF_TOLERANCE:
            status[u.index] = {"status": "visible", "reason": (
                f"removing it changes CairoSVG's picture at {size} px by up to "
                f"{white[u.index]}/255 over white (under the 12/255 footprint threshold, "
                f"over the proof's {PROOF_TOLERANCE}/255)")}
    candidates = sorted(invisible - set(status))
    if differ.pixels and candidates:
        # Units drawn alone in resvg: those that draw inside the disagreement are unverified.
        # Each drawn alone: kept across edits by the text drawn.
        texts = [text_keeping(us, {i}) for i in candidates]
        keys = [text_key(text) for text in texts]
        known = previous.alone if previous is not None else {}
        todo = [(text, k) for text, k in zip(texts, keys) if k not in known]
        if todo:
            [alone] = pool.map(job_render_pictures,
                               [([text for text, _ in todo], size, limits, name, "resvg")],
                               name)
            renders += len(todo)
            known = {**known, **{k: ink_mask(p) for (_, k), p in zip(todo, alone)}}
        state.alone = {k: known[k] for k in keys}
        near = dilate_cross(differ.mask, iterations=2)
        for i, k in zip(candidates, keys):
            if mask_meets_array(state.alone[k], near):
                status[i] = {"status": "unverified", "reason": (
                    "it draws where CairoSVG's and resvg's pictures of the document differ "
                    f"({differ.pixels} px by more than {DISAGREE_THRESHOLD}/255)")}
        candidates = [i for i in candidates if i not in status]
    bulk = None
    if candidates:
        sizes, note = proof_sizes(us, size, limits)
        checked = checked_line(sizes, note)
        kept = reuse = None
        if previous is not None:
            if early is not None:
                renders += early.give(state)
            kept, reuse, spent = reuse_check(previous, state, candidates, sizes, note, limits,
                                             pool, should_stop)
            renders += spent
        if kept is not None:
            proven, bulk = kept
            status.update(proven)
            state.reused = True
            assert previous is not None  # kept comes from it
            state.checks, state.inexact = previous.checks, previous.inexact
        else:
            prover = Prover(us, sizes, limits, pool, should_stop, reuse,
                            {("cairosvg", size): cairo, ("resvg", size): resvg},
                            early.checks if early is not None else None)
            if reuse is not None:
                prover.boxes = reuse.boxes
            else:
                def boxes():
                    found, spent = candidate_boxes(us, candidates, sizes, limits, pool,
                                                   state.boxes, name)
                    prover.rendered += spent
                    return found
                prover.boxes = boxes
            bulk = _prove_candidates(prover, candidates, sizes, checked, size, status,
                                     over_white is not None)
            renders += prover.rendered
            state.checks, state.kept_checks = prover.checks, prover.kept
            state.inexact = prover.inexact
        state.candidates, state.sizes, state.note = tuple(candidates), sizes, note
        state.outcome = ({i: status[i] for i in candidates}, bulk)
    differ.elements = sorted(_feature_elements(us)) if differ.pixels else []
    warnings = [renderer_warning(us, differ)] if differ.pixels else []
    return ProofResult([status[u.index] for u in us.units], bulk, differ, warnings, renders,
                       time.perf_counter() - t0, state)


def _prove_candidates(prover: Prover, candidates: list[int], sizes: tuple[int, ...],
                      checked: str, size: int, status: dict[int, Removal], by_over_white: bool
                      ) -> dict | None:
    """Prove the candidates together (bisecting), then the entangled ones alone; fills
    their ``status``. Returns the bulk removal or None."""
    check = prove_set(prover, candidates)
    for i, change in check.why_dropped.items():
        status[i] = {"status": "visible", "reason": "removing it together with the "
                     "proven units " + change.describe()}
    for i in check.undecided:
        status[i] = {"status": "unverified", "reason": (
            f"the proof stopped after {PROOF_MAX_CHECKS + len(candidates) // 4} checks "
            f"({prover.renders} renders) before reaching it")}
    check, alone = _prove_entangled_alone(prover, check, status)
    from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD

    by_loo = (f"CairoSVG at {size} px over white, within "
              f"{PROOF_TOLERANCE if by_over_white else CHANGED_THRESHOLD}/255 "
              "(its leave-one-out); it is neither a subpath overlapping other proven "
              "subpaths of its path nor an element another refers to, the ways one unit "
              "can undo another's removal")
    by_proof = (f"CairoSVG and resvg at {prover.sizes[0]} px, no pixel moving by more "
                f"than {PROOF_TOLERANCE}/255, alpha included")
    for i in check.removable:
        status[i] = {"status": "proven", "reason": (
            f"removed together with the other proven units: {checked}. Removed alone: "
            f"{by_proof if i in alone else by_loo}")}
    bulk = None
    if len(check.removable) >= 2:
        bulk = {"units": list(check.removable), "checked": checked}
    return bulk


def entangled(us: UnitSet, units: set[int]) -> set[int]:
    """Units of ``units`` whose removal alone is not implied by removing them all: subpaths
    of a path with another subpath among them (their windings add up: two copies of an
    outline drawn in opposite directions draw nothing together, each draws it alone), and
    units whose element another element refers to (``href``, ``url(#...)``: the referrer
    draws it, or draws through it)."""
    per_path: dict[int, list[int]] = {}
    for i in units:
        u = us.units[i]
        if u.kind == "subpath":
            per_path.setdefault(u.element, []).append(i)
    out = set()
    for element, members in per_path.items():
        if len(members) > 1:
            out |= _overlapping(us, element, members)
    referenced = _referenced_ids(us.doc.text)
    for i in units:
        ident = us.doc.nodes[us.units[i].element].get("id")
        if ident is not None and ident in referenced:
            out.add(i)
    return out


def _overlapping(us: UnitSet, element: int, members: list[int]) -> set[int]:
    """The subpath units among ``members`` (of one path) whose boxes meet another's: only
    there can windings add up (a subpath's fill lies inside its points' box, an arc's
    within twice its radius of its ends). All of them when the path data is unreadable."""
    from svgloo.engine.reading.features import path_edges

    split = us.splits[element]
    edges = path_edges(us.doc.text[split.value_start:split.value_end])
    if edges is None or len(edges) != len(split.subpaths):
        return set(members)
    # members are subpath units of this path
    boxes = {i: _box(edges[cast(int, us.units[i].subpath)]) for i in members}
    out: set[int] = set()
    for i in members:
        for j in members:
            if i != j and _meet(boxes[i], boxes[j]):
                out.update((i, j))
    return out


def _box(edges) -> tuple[float, float, float, float] | None:
    xs, ys = [], []
    for kind, points, extra in edges:
        grow = 0.0
        if kind == "A":
            (x0, y0), (x1, y1) = points
            grow = 2 * max(abs(extra[0]), abs(extra[1]), ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** .5)
        for x, y in points:
            xs += [x - grow, x + grow]
            ys += [y - grow, y + grow]
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


def _meet(a, b) -> bool:
    return a is not None and b is not None and \
        a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


_REFERENCE = re.compile(r"""(?:href\s*=\s*["']\s*#|url\(\s*["']?\s*#)([^"')\s]+)""")


def _referenced_ids(text: str) -> set[str]:
    return set(_REFERENCE.findall(text))


def _prove_entangled_alone(prover: Prover, check: RemovalCheck, status: dict[int, Removal]
                           ) -> tuple[RemovalCheck, set[int]]:
    """The proven set's entangled units (``entangled``) each removed alone, in both
    renderers at the analysis size (the smallest; the proof size costs several times as
    much and is left to the joint proof): a unit whose removal alone changes a picture is
    "visible" (it goes only with what undoes it), and the rest of the set is proven again
    without it. At most
    PROOF_MAX_CHECKS such units are checked; any beyond are "unverified". Returns the final
    check and the units proven alone as well."""
    todo = sorted(entangled(prover.us, set(check.removable)))
    if not todo:
        return check, set()
    out: set[int] = set()
    for i in todo[PROOF_MAX_CHECKS:]:
        status[i] = {"status": "unverified", "reason": (
            f"proven only together with other units; its removal alone was not checked "
            f"(the proof checks at most {PROOF_MAX_CHECKS} such units alone)")}
        out.add(i)
    todo = todo[:PROOF_MAX_CHECKS]
    changed = prover.each_alone(todo, prover.sizes[:1])
    for i, change in changed.items():
        status[i] = {"status": "visible", "reason": (
            f"removing it alone {change.describe()}; removed together with units that "
            "undo that (its path's other subpaths, or what refers to it) it changes "
            "nothing, so it goes only with them")}
        out.add(i)
    alone = set(todo) - out
    if not out:
        return check, alone
    again = prove_set(prover, [i for i in check.removable if i not in out])
    for i, change in again.why_dropped.items():
        status[i] = {"status": "visible", "reason": "removing it together with the "
                     "proven units " + change.describe()}
    for i in again.undecided:
        status[i] = {"status": "unverified", "reason": "the proof stopped before reaching it"}
    return again, alone & set(again.removable)


def _feature_elements(us: UnitSet) -> set[int]:
    from svgloo.engine.reading.features import element_reasons

    return set(element_reasons(us.doc))


def renderer_warning(us: UnitSet, differ: Disagreement) -> str:
    """One line: the full pictures differ, where, and which elements/features explain it."""
    from svgloo.engine.reading.features import element_reasons

    reasons = element_reasons(us.doc)
    named = []
    for i in differ.elements[:3]:
        el = us.doc.elements[i]
        ident = us.doc.nodes[i].get("id")
        label = f"<{el.tag}{' id=' + repr(ident) if ident else ''}> (line " \
                f"{us.doc.position(el.start)[0] + 1})"
        if i in reasons:
            label += f": {reasons[i].split(',')[0]}"
        named.append(label)
    more = f" and {len(differ.elements) - 3} more" if len(differ.elements) > 3 else ""
    assert differ.box is not None  # called when the renderers disagree somewhere
    y0, y1, x0, x1 = differ.box
    where = "; ".join(named) + more if named else \
        f"no known cause; around x {x0}-{x1}, y {y0}-{y1} px"
    return (f"CairoSVG draws this file differently from a browser-grade renderer (resvg): "
            f"{differ.pixels} px differ by more than {DISAGREE_THRESHOLD}/255; scores follow "
            f"CairoSVG's picture. {where}")


__all__ = ["PROOF_TOLERANCE", "BROWSER_TOLERANCE", "MIN_PROOF_SIZE", "SMALL_PROOF_SIZE",
           "RemovalCheck", "Change", "Prover",
           "check_removal", "check_removal_text", "check_speck_removal", "changed_pixels",
           "prove_set", "prove_removals", "text_changes", "picture_change", "proof_sizes", "checked_line",
           "disagreement", "ProofResult"]
