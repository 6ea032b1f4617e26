"""When checks of a removal proof of an earlier text still hold for an edited one
(incremental re-scoring).

The proof (proof.py) compares, per renderer and size, the picture of the document T with
the picture of T without a set S of candidate units (the whole candidate set, and,
bisecting, other sets). After an edit inside one start tag - of a unit element E - a check
of S gives exactly the old numbers when E is not in S and S cannot meet E in any of the
proof's pictures:

- removing S changes pixels only where S inks. Per candidate, a bound of that: where its
  element inks in CairoSVG, captured among the candidates' elements in one pass per size
  and grown by ``EXTENTS_MARGIN`` px (``candidate_boxes``), for plain shapes
  (``_local_elements``); the whole canvas for anything else. Nothing else may depend on S:
  no candidate is referenced by id, and no stylesheet selects by siblings.
- the edit changes pixels only where E inks before or after it, in T and in T without S
  alike: E is a leaf shape with no group effect above it that moves pixels (opacity, a
  mask, a nested viewport composite pixel by pixel), with no filter or marker and no
  feature svgloo cannot vouch for (features.py), not referenced by id, and no stylesheet
  that could make its attributes select other elements. Where it inks is bounded by
  cairo's fill and stroke extents of E alone (CairoSVG's geometry, which resvg shares for
  such shapes), grown by ``EXTENTS_MARGIN`` px.

Outside E's region both new pictures equal the old ones; inside it S draws nothing, so the
pictures with and without S agree there, before and after. Such a check finds the same
pixels moved by the same amounts (``CheckReuse.keeps``); a proof whose checks all hold
keeps the old verdict (the candidates' statuses and the bulk removal) whole.

A check that failed is also known to fail again, unrendered, when one of the pixels it
moved (it keeps up to 64 of them) lies outside E's region: there both new pictures are the
old ones, whatever S holds, E included (``CheckReuse.fails``). Its counts are then the old
text's, so the proof uses it only where it asks "does anything move?" - bisecting - and
renders it again where the counts are reported (a unit dropped alone). The other checks are
rendered again. Anything else - edits of defs, styles, the structure, several elements -
proves from scratch.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from svgloo.engine.limits import Limits
from svgloo.engine.rendering.masks import dilate_square
from svgloo.engine.rendering.raster import intersects
from svgloo.engine.rendering.renderers import PROOF_RENDERERS
from svgloo.engine.reading.units import TextEdit, UnitSet, apply_edits, edits_keeping
from svgloo.engine.processes.workers import RenderPool

EXTENTS_MARGIN = 3       # px around cairo's extents (antialiasing, resvg's edge pixels)
SHAPES = frozenset({"path", "rect", "circle", "ellipse", "line", "polyline", "polygon"})
_RISKY_TAG = re.compile(r"filter|marker|mask", re.IGNORECASE)
_RISKY_SHEET = re.compile(r"filter|marker|mask|:has|[+~]|:nth-|:first-|:last-|:only-|:not\(|"
                          r":empty", re.IGNORECASE)
MASK_PIXELS = 8_000_000  # candidates' ink kept per size as masks up to this; else boxes
_KEPT_EXTENTS = 32       # extents of E alone kept across edits (keyed by text)

Mask = tuple  # (box (y0, y1, x0, x1), bool crop) or (None, None): pixels a text inks


@dataclass
class ProofState:
    """What a later proof of an edited text of the same document reuses."""

    us: UnitSet
    size: int
    candidates: tuple[int, ...] = ()
    sizes: tuple[int, ...] = ()
    note: str = ""
    # The candidates' statuses and the bulk removal the proof gave them (None: no proof)
    outcome: tuple[dict, dict | None] | None = None
    reused: bool = False                 # this proof's verdict came from the previous one
    kept_checks: int = 0                 # checks whose outcome came from the previous proof
    # hash of a marked text keeping one element -> {size: device box or None}
    extents: dict = field(default_factory=dict, repr=False)
    # hash of a text keeping one candidate -> Mask in resvg at the analysis size
    alone: dict = field(default_factory=dict, repr=False)
    # hash of the text keeping only the candidates -> {(renderer, size): Mask}
    cover: dict = field(default_factory=dict, repr=False)
    # the proof's checks: (kind, frozenset of units removed, sizes) -> (outcome, renders)
    checks: dict = field(default_factory=dict, repr=False)
    # checks known to fail whose numbers are not this text's (Prover.changes)
    inexact: set = field(default_factory=set, repr=False)
    # hash of the marked text keeping the candidates' elements -> their masks per size
    boxes: dict = field(default_factory=dict, repr=False)
    # the same, measured only: {size: {mark: device box}} (_extents_clear)
    candidate_extents: dict = field(default_factory=dict, repr=False)


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def ink_mask(picture: np.ndarray, grow: int = 0) -> Mask:
    """Where an RGBA picture has any alpha, grown by ``grow`` px, as (box, crop)."""
    inked = picture[..., 3] > 0
    rows, cols = np.flatnonzero(inked.any(axis=1)), np.flatnonzero(inked.any(axis=0))
    if rows.size == 0:
        return None, None
    h, w = inked.shape
    y0, y1 = max(0, rows[0] - grow), min(h, rows[-1] + 1 + grow)
    x0, x1 = max(0, cols[0] - grow), min(w, cols[-1] + 1 + grow)
    crop = inked[y0:y1, x0:x1]
    if grow:
        crop = dilate_square(crop, grow)
    return (int(y0), int(y1), int(x0), int(x1)), crop


def mask_meets(mask: Mask, box: tuple | None) -> bool:
    """Whether a Mask has a pixel inside ``box`` (y0, y1, x0, x1)."""
    if box is None or box[1] <= box[0] or box[3] <= box[2]:
        return False
    return masks_meet(mask, (box, np.broadcast_to(np.True_, (box[1] - box[0],
                                                             box[3] - box[2]))))


def mask_meets_array(mask: Mask, array: np.ndarray) -> bool:
    """Whether a Mask and a whole-picture bool array share a pixel."""
    own, crop = mask
    if own is None:
        return False
    y0, y1, x0, x1 = own
    return bool((crop & array[y0:y1, x0:x1]).any())


def job_extents(text: str, sizes: tuple[int, ...], limits: Limits, name: str) -> dict:
    """In a worker: {size: device box of what the marked element inks, or None}."""
    from svgloo.engine.rendering.render import render_extents

    return {size: render_extents(text, size, limits, name).get("e") for size in sizes}


def _common_ends(old: str, new: str) -> tuple[int, int]:
    """(length of the common prefix, of the common suffix not overlapping it)."""
    n = min(len(old), len(new))
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, n - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:] == new[len(new) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return prefix, lo


def _name_end(text: str, start: int) -> int:
    end = start + 1
    while end < len(text) and text[end] not in " \t\r\n/>":
        end += 1
    return end


def edited_element(old: UnitSet, new: UnitSet) -> int | None:
    """The element whose start tag (after its name) holds the whole difference between
    the two texts, when the two documents have the same elements and units otherwise;
    else None."""
    a, b = old.doc, new.doc
    if len(a.elements) != len(b.elements) or len(old.units) != len(new.units):
        return None
    if any(x.tag != y.tag or x.namespace != y.namespace
           for x, y in zip(a.elements, b.elements)):
        return None
    if any((u.element, u.tag, u.kind, u.subpath) != (v.element, v.tag, v.kind, v.subpath)
           for u, v in zip(old.units, new.units)):
        return None
    prefix, suffix = _common_ends(a.text, b.text)
    old_end = len(a.text) - suffix
    starts = [el.start for el in a.elements]
    e = bisect.bisect_left(starts, prefix) - 1
    if e < 0:
        return None
    el, nl = a.elements[e], b.elements[e]
    delta = len(b.text) - len(a.text)
    if not (_name_end(a.text, el.start) <= prefix and old_end < el.start_tag_end
            and nl.start == el.start and nl.start_tag_end == el.start_tag_end + delta
            and nl.end == el.end + delta):
        return None
    return e


def _referenced(text: str, ident: str | None) -> bool:
    """Whether ``text`` holds "#ident" not followed by a name character (a reference)."""
    if not ident:
        return False
    if _NAME.fullmatch(ident):  # the longest name after some "#" is the id itself
        return ident in _names_after_hash(text)
    return re.search("#" + re.escape(ident) + r"(?![\w.:-])", text) is not None


_NAME = re.compile(r"[\w.:-]+")
_AFTER_HASH = re.compile(r"#([\w.:-]*)")


@functools.lru_cache(maxsize=4)
def _names_after_hash(text: str) -> frozenset:
    """The longest run of name characters after each "#" of ``text``: one pass, where a
    search per id cost a pass each (a proof's reuse asks for every candidate's ancestors:
    20 ms on a 158-unit emoji)."""
    return frozenset(_AFTER_HASH.findall(text))


def _sheets(us: UnitSet) -> str:
    doc = us.doc
    return "".join(n.text or "" for n, el in zip(doc.nodes, doc.elements) if el.tag == "style")


def _plain_edit(old: UnitSet, new: UnitSet, e: int, candidates: tuple[int, ...]) -> str | None:
    """The structural conditions of the module doc, on both texts: "any" when they all
    hold; "blank" when they hold but for E being a candidate or under a group effect,
    which does not matter when E inks nothing before and after the edit (a shape in a
    hidden layer: every picture is the same, with or without it); None otherwise."""
    from svgloo.engine.leave_one_out.blocks import global_effect_above, unaffected_units
    from svgloo.engine.reading.features import unit_reasons

    mine = [u.index for u in new.units if u.element == e]
    if not mine or new.doc.elements[e].tag not in SHAPES:
        return None
    verdict = "any"  # E may be a candidate: a check removing it meets the edit
    for us in (old, new):
        node = us.doc.nodes[e]
        el = us.doc.elements[e]
        if len(node) or _RISKY_TAG.search(us.doc.text, el.start, el.start_tag_end):
            return None
        if _RISKY_SHEET.search(_sheets(us)):
            return None
        if any(_referenced(us.doc.text, n.get("id")) for n in _self_and_ancestors(node)):
            return None  # a <use> draws E (or a group holding it) elsewhere too
        if set(mine) & set(unit_reasons(us)):
            return None
        if not set(mine) <= unaffected_units(us) and global_effect_above(us.doc, e):
            verdict = "blank"
    # Nothing may depend on the candidates but their own pixels (and no candidate is
    # "entangled" by a reference in one text and not in the other).
    for us in (old, new):
        for c in {us.units[i].element for i in candidates}:
            if any(_referenced(us.doc.text, n.get("id"))
                   for n in _self_and_ancestors(us.doc.nodes[c])):
                return None
    return verdict


def _self_and_ancestors(node):
    while node is not None:
        yield node
        node = node.getparent()


def _marked_alone(us: UnitSet, e: int) -> str:
    """The text keeping only element ``e``'s units, ``e`` marked for render_extents."""
    from svgloo.engine.rendering.render import CAPTURE_ATTR

    keep = {u.index for u in us.units if u.element == e}
    at = _name_end(us.doc.text, us.doc.elements[e].start)
    return apply_edits(us.doc.text, edits_keeping(us, keep)
                       + [TextEdit(at, at, f' {CAPTURE_ATTR}="e"')])


def _pixel_box(box: tuple | None, size: int) -> tuple | None:
    if box is None:
        return None
    y0, y1, x0, x1 = box
    m = EXTENTS_MARGIN
    return (max(0, int(np.floor(y0)) - m), min(size, int(np.ceil(y1)) + m),
            max(0, int(np.floor(x0)) - m), min(size, int(np.ceil(x1)) + m))


@dataclass
class CheckReuse:
    """What lets a proof keep single checks of the previous proof (``Prover.changes``): the
    previous checks' outcomes, where the edit may change a picture (E's boxes, before and
    after, per size) and where each candidate may ink (``candidate_boxes``)."""

    checks: dict                     # key -> (outcome, renders), see Prover
    edit: dict                       # size -> list of device boxes (y0, y1, x0, x1)
    boxes: dict                      # candidate -> {size: Mask}
    edited: frozenset = frozenset()  # the edited element's units
    inexact: set = field(default_factory=set)  # checks known to fail, numbers not exact

    def keeps(self, key, remove) -> bool:
        """Whether the previous outcome of the check ``key`` (removing ``remove``) holds:
        the edited element is not removed, and no unit removed can ink where the edit
        changes a picture, at any size."""
        if key not in self.checks or self.edited & remove:
            return False
        for i in remove:
            own = self.boxes.get(i)
            if own is None:
                return False
            for size, boxes in self.edit.items():
                if any(mask_meets(own[size], box) for box in boxes):
                    return False
        return True

    def fails(self, key, remove, smallest: int) -> tuple | None:
        """The outcome of the check ``key`` (removing ``remove``) where it is known to fail
        again: it failed before at the smallest size, and some pixel it moved lies outside
        where the edit changes a picture. There the pictures with and without ``remove``
        are the old ones - also when ``remove`` holds units of the edited element: what is
        left of it still inks only inside its extents - so that pixel moves as before. The
        Changes keep only such pixels; their counts are the old ones (not this text's:
        Prover marks the check inexact). None otherwise."""
        outcome = self.checks.get(key)
        if outcome is None or not outcome[0]:
            return None
        found, renders = outcome
        if found[0].size != smallest:
            return None  # it passed at a smaller size, which the edit may now fail
        boxes = self.edit.get(smallest, [])
        kept = []
        for change in found:
            far = tuple(p for p in change.at if not any(
                y0 <= p[0] < y1 and x0 <= p[1] < x1 for y0, y1, x0, x1 in boxes))
            if far:
                kept.append(replace(change, at=far))
        return (kept, renders) if kept else None


def _local_elements(us: UnitSet, elements: set[int]) -> set[int]:
    """The elements of ``elements`` whose removal changes pixels only where they ink, as
    cairo's extents bound it in both renderers (the bound tested for plain shapes): plain
    shapes with no children, no filter, marker or mask on them or an ancestor, no
    ``<switch>`` above them (removing a child can make it draw another), neither they nor
    an ancestor referenced by id (a ``<use>`` would draw them elsewhere); none
    when a stylesheet selects by siblings (a removal restyles others)."""
    if _RISKY_SHEET.search(_sheets(us)):
        return set()
    doc = us.doc
    text = doc.text
    # element -> it and its ancestors pass; kept on the document (a proof's reuse asks
    # for the candidates several times, and the early measures once more)
    plain: dict[int, bool] = doc.memo.setdefault("plain_shapes", {})

    def passes(node) -> bool:
        # up to the first ancestor already known (or the root), then down again
        path = []
        while node is not None and doc.index_of(node) not in plain:
            path.append(node)
            node = node.getparent()
        ok = True if node is None else plain[doc.index_of(node)]
        for node in reversed(path):
            i = doc.index_of(node)
            el = doc.elements[i]
            ok = ok and not (_RISKY_TAG.search(text, el.start, el.start_tag_end)
                             or _referenced(text, node.get("id")) or el.tag == "switch")
            plain[i] = ok
        return ok

    return {e for e in elements
            if doc.elements[e].tag in SHAPES and not len(doc.nodes[e]) and passes(doc.nodes[e])}


def _capture_mark(us: UnitSet, e: int) -> TextEdit:
    """The insertion that marks element ``e`` for a capturing render (an attribute right
    after its tag name)."""
    from svgloo.engine.rendering.render import CAPTURE_ATTR

    at = _name_end(us.doc.text, us.doc.elements[e].start)
    return TextEdit(at, at, f' {CAPTURE_ATTR}="{e}"')


def job_candidate_masks(text: str, sizes: tuple[int, ...], limits: Limits, name: str) -> dict:
    """In a worker: {size: {mark: Mask}}: where each marked element inks (its layer drawn
    in one capturing pass, render.render_captured_layers), grown by EXTENTS_MARGIN px."""
    from svgloo.engine.rendering.render import render_captured_layers

    out: dict[int, dict] = {}
    for size in sizes:
        layers = render_captured_layers(text, size, limits, name)
        out[size] = {}
        for mark, layer in layers.items():
            out[size][mark] = (None, None) if layer.box is None else \
                _grown(layer.box, layer.pixels[..., 3] > 0, size)
        if sum(crop.size for _, crop in out[size].values() if crop is not None) > MASK_PIXELS:
            # many large candidates: their boxes only (a crop of None: the whole box)
            out[size] = {mark: (box, None if box is None else False)
                         for mark, (box, _) in out[size].items()}
    return out


def _unpacked(mask: Mask) -> Mask:
    box, crop = mask
    if box is not None and crop is False:
        crop = np.broadcast_to(np.True_, (box[1] - box[0], box[3] - box[2]))
    return box, crop


def _grown(box: tuple, crop: np.ndarray, size: int) -> Mask:
    """A Mask grown by EXTENTS_MARGIN px (clipped to the canvas)."""
    m = EXTENTS_MARGIN
    y0, y1, x0, x1 = box
    padded = np.zeros((y1 - y0 + 2 * m, x1 - x0 + 2 * m), bool)
    padded[m:m + y1 - y0, m:m + x1 - x0] = crop
    padded = dilate_square(padded, m)
    ty0, tx0 = y0 - m, x0 - m
    cy0, cx0 = max(0, -ty0), max(0, -tx0)
    cy1 = padded.shape[0] - max(0, ty0 + padded.shape[0] - size)
    cx1 = padded.shape[1] - max(0, tx0 + padded.shape[1] - size)
    return ((ty0 + cy0, ty0 + cy1, tx0 + cx0, tx0 + cx1), padded[cy0:cy1, cx0:cx1])


def candidate_boxes(us: UnitSet, candidates, sizes: tuple[int, ...], limits: Limits,
                    pool: RenderPool, known: dict, name: str, render: bool = True
                    ) -> tuple[dict | None, int]:
    """(candidate -> {size: Mask bounding where removing it can change a picture, in both
    renderers}, renders spent). A candidate of a plain shape (``_local_elements``) gets
    where its whole element inks in CairoSVG (every subpath of it: a subpath's removal can
    move an objectBoundingBox gradient over the whole path), drawn among the candidates'
    elements only, grown by EXTENTS_MARGIN px; any other candidate the whole canvas.
    ``known``: text -> masks, kept across edits (the text keeping the candidates' elements
    changes only when they do). ``render`` False: None unless ``known`` has them."""
    elements = {us.units[i].element for i in candidates}
    local = sorted(_local_elements(us, elements))
    whole = {size: ((0, size, 0, size), np.ones((size, size), bool)) for size in sizes}
    out = {i: whole for i in candidates}
    if not local:
        return out, 0
    keep = {u.index for u in us.units if u.element in elements}
    marks = [_capture_mark(us, e) for e in local]
    text = apply_edits(us.doc.text, edits_keeping(us, keep) + marks)
    key = text_key(text)
    found, renders = known.get(key), 0
    if found is None and not render:
        return None, 0
    if found is None:
        [found] = pool.map(job_candidate_masks, [(text, sizes, limits, name)], name)
        renders = len(sizes)
    known[key] = found
    for i in candidates:
        e = us.units[i].element
        if e in local:
            out[i] = {size: _unpacked(found[size].get(str(e), (None, None)))
                      for size in sizes}
    return out, renders


def masks_meet(a: Mask, b: Mask) -> bool:
    """Whether two Masks share a pixel."""
    (ab, ac), (bb, bc) = a, b
    if ab is None or bb is None:
        return False
    y0, y1 = max(ab[0], bb[0]), min(ab[1], bb[1])
    x0, x1 = max(ab[2], bb[2]), min(ab[3], bb[3])
    if y0 >= y1 or x0 >= x1:
        return False
    return bool((ac[y0 - ab[0]:y1 - ab[0], x0 - ab[2]:x1 - ab[2]]
                 & bc[y0 - bb[0]:y1 - bb[0], x0 - bb[2]:x1 - bb[2]]).any())


def components(units, boxes: dict, element_of=None) -> list[list[int]]:
    """``units`` in groups that cannot ink on the same pixel at any size (connected
    components of their boxes; units of one element together), each in document order,
    the groups ordered by their first unit. Removing units of several groups changes each
    group's pixels as removing that group's units alone does."""
    units = sorted(units)
    parent = {i: i for i in units}

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, i in enumerate(units):
        for j in units[a + 1:]:
            if root(i) != root(j) and (
                    boxes[i] is boxes[j]
                    or (element_of is not None and element_of(i) == element_of(j))
                    or any(masks_meet(boxes[i][s], boxes[j][s]) for s in boxes[i])):
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in units:
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def reuse_check(previous: ProofState, state: ProofState, candidates: list[int],
                sizes: tuple[int, ...], note: str, limits: Limits, pool: RenderPool,
                should_stop: Callable[[], bool] | None = None):
    """(the previous proof's outcome - the candidates' statuses and the bulk removal - when
    it holds for ``state``'s text, see the module doc, else None; a CheckReuse when single
    checks of it may hold, else None; the renders spent deciding). Keeps what it measures
    in ``state``."""
    us, old = state.us, previous.us
    if (previous.outcome is None or previous.size != state.size or previous.sizes != sizes
            or previous.note != note or previous.candidates != tuple(candidates)):
        return None, None, 0
    if old.doc.text == us.doc.text:
        return previous.outcome, None, 0
    e = edited_element(old, us)
    plain = None if e is None else _plain_edit(old, us, e, previous.candidates)
    if plain is None:
        return None, None, 0
    assert e is not None  # plain is None otherwise
    name = us.doc.name
    renders = 0
    # Where E inks, before and after the edit (E alone: kept across edits by its text).
    texts, keys = _edit_texts(old, us, e)
    found = {key: state.extents.pop(key) for key in keys if key in state.extents}
    todo = [(text, key) for text, key in zip(texts, keys) if key not in found]
    if todo:  # both at once: one job each, side by side
        if should_stop is not None:
            should_stop()
        measured = pool.map(job_extents, [(text, sizes, limits, name) for text, _ in todo],
                            name)
        renders += len(todo)
        found.update({key: got for (_, key), got in zip(todo, measured)})
    boxes = [found[key] for key in keys]
    state.extents.update(found)
    while len(state.extents) > _KEPT_EXTENTS:
        state.extents.pop(next(iter(state.extents)))
    if all(found[size] is None for found in boxes for size in sizes):
        return previous.outcome, None, renders  # E inks nothing, before or after
    if plain != "any":
        return None, None, renders
    if should_stop is not None:
        should_stop()
    # The candidates' ink costs a capture pass per size: measured again only for a proof
    # that took more than one check (a cold proof measured it when its first check failed).
    bisected = sum(key[0] == "set" for key in previous.checks) > 1
    own, spent = candidate_boxes(us, candidates, sizes, limits, pool, state.boxes, name,
                                 render=bisected)
    renders += spent
    if own is None:  # the whole verdict or nothing: by where the candidates can ink
        held, spent = _extents_clear(us, candidates, sizes, boxes, state, limits, pool,
                                     should_stop)
        renders += spent
        if held is None:  # not all plain shapes: the candidates' cover, drawn
            held, spent = _cover_holds(us, candidates, sizes, boxes, state, limits, pool,
                                       should_stop)
            renders += spent
        return (previous.outcome if held else None), None, renders
    reuse = CheckReuse(previous.checks, _edit_boxes(boxes, sizes), own,
                       _units_of(us, e), previous.inexact)
    if all(reuse.keeps(k, k[1]) for k in previous.checks) and previous.checks:
        return previous.outcome, None, renders  # no check of the proof meets the edit
    return None, reuse, renders


def _edit_boxes(found: list, sizes) -> dict:
    """size -> the pixel boxes where E inks, before and after (``found``: each text's
    {size: device box or None}, as job_extents gives it), grown by EXTENTS_MARGIN px."""
    return {size: [b for b in (_pixel_box(f[size], size) for f in found) if b is not None]
            for size in sizes}


def _units_of(us: UnitSet, e: int) -> frozenset:
    return frozenset(u.index for u in us.units if u.element == e)


def job_candidate_extents(text: str, sizes: tuple[int, ...], limits: Limits,
                          name: str) -> dict:
    """In a worker: {size: {mark: device box or None}} of the marked elements (measured,
    not drawn: render.render_extents)."""
    from svgloo.engine.rendering.render import render_extents

    return {size: render_extents(text, size, limits, name) for size in sizes}


def _edit_texts(old: UnitSet, us: UnitSet, e: int) -> tuple[list[str], list[str]]:
    """The texts measuring where E inks before and after the edit, and their keys."""
    texts = [_marked_alone(source, e) for source in (old, us)]
    return texts, [text_key(text) for text in texts]


def _candidates_text(us: UnitSet, elements: set[int]) -> tuple[str, str] | None:
    """(the text keeping the candidates' elements, each marked to be measured, its key);
    None when one of them is not a plain shape (``_local_elements``)."""
    if _local_elements(us, elements) != elements:
        return None
    keep = {u.index for u in us.units if u.element in elements}
    marks = [_capture_mark(us, e) for e in sorted(elements)]
    text = apply_edits(us.doc.text, edits_keeping(us, keep) + marks)
    return text, text_key(text)


def _measure_candidates(text: str, sizes, limits: Limits, pool: RenderPool, name: str) -> dict:
    """{size: {mark: box}} of a ``_candidates_text``: one job per size, side by side."""
    found: dict = {}
    for part in pool.map(job_candidate_extents, [(text, (size,), limits, name)
                                                 for size in sizes], name):
        found.update(part)
    return found


def _extents_clear(us: UnitSet, candidates, sizes, boxes, state: ProofState, limits: Limits,
                   pool: RenderPool, should_stop) -> tuple[bool | None, int]:
    """(whether no candidate can ink where E inks, before or after, at any size - by cairo's
    extents of each candidate's element, grown by EXTENTS_MARGIN px, the bound of a plain
    shape's ink in both renderers (``_local_elements``) -, the passes spent). None when a
    candidate is not a plain shape. One measuring pass per size over the text keeping the
    candidates' elements, kept while that text is unchanged; cheaper than drawing them
    (``_cover_holds``): nothing is rasterised but the marks' probes. Candidates that no
    renderer draws (``hidden_elements``: a layer an exporter left with display="none") ink nowhere
    and are not measured."""
    elements = {us.units[i].element for i in candidates}
    elements -= hidden_elements(us, elements)
    if not elements:
        return True, 0
    measured = _candidates_text(us, elements)
    if measured is None:
        return None, 0
    text, key = measured
    found, spent = state.candidate_extents.get(key), 0
    if found is None:
        if should_stop is not None:
            should_stop()
        found = _measure_candidates(text, sizes, limits, pool, us.doc.name)
        spent = len(sizes)
    state.candidate_extents = {key: found}
    for size in sizes:
        edit = [_pixel_box(own[size], size) for own in boxes]
        for e in elements:
            box = _pixel_box(found[size].get(str(e)), size)
            if any(intersects(box, b) for b in edit):
                return False, spent
    return True, spent


def hidden_elements(us: UnitSet, elements: set[int]) -> set[int]:
    """The plain shapes of ``elements`` (``_local_elements``: none of them or their ancestors
    referenced by id, which a ``<use>`` could draw) that neither renderer draws: they or an
    ancestor say display none - the inline style's ``display`` if it has one, else the
    attribute, exactly "none", as CairoSVG compares it - and no stylesheet could say
    otherwise."""
    from svgloo.engine.reading.features import _style_declarations

    if _sheets(us).strip():
        return set()
    out = set()
    for e in _local_elements(us, elements):
        node = us.doc.nodes[e]
        while node is not None:
            style = _style_declarations(node.get("style") or "").get("display")
            if (node.get("display") if style is None else style) == "none":
                out.add(e)
                break
            node = node.getparent()
    return out


def _cover_holds(us: UnitSet, candidates, sizes, boxes, state: ProofState, limits: Limits,
                 pool: RenderPool, should_stop) -> tuple[bool, int]:
    """(whether E's boxes, before and after, meet none of the pixels the candidates ink in
    either renderer at any size - the text keeping only them, rendered, grown by a pixel,
    kept while that text is unchanged -, the renders spent)."""
    from svgloo.engine.proving.pictures import RENDERERS, job_render_pictures
    from svgloo.engine.reading.units import text_keeping

    name, renders = us.doc.name, 0
    alone = text_keeping(us, set(candidates))
    key = text_key(alone)
    cover = state.cover.get(key)
    if cover is None:
        if should_stop is not None:
            should_stop()
        jobs = [([alone], size, limits, name, r) for r in RENDERERS for size in sizes]
        pictures = pool.map(job_render_pictures, jobs, name)
        renders += len(jobs)
        cover = {(r, size): ink_mask(picture, grow=1)
                 for (_, size, _, _, r), [picture] in zip(jobs, pictures)}
    state.cover = {key: cover}
    for (_, size), mask in cover.items():
        for found in boxes:
            if mask_meets(mask, _pixel_box(found[size], size)):
                return False, renders
    return True, renders


GUESSED_CHECKS = 2  # checks EarlyMeasures renders ahead, at the proof's first size


class EarlyMeasures:
    """What ``reuse_check`` will measure after an edit, measured while the scoring is still
    busy with its leave-one-out: where E inks before and after (``job_extents``) and, for
    a previous proof of one check, where the candidates ink (``_measure_candidates``). It
    runs in a thread from ``start()`` (the scoring calls it once its layers are drawn, so
    that these jobs queue behind them, not before) and is best effort: anything it did not
    get (an error, another edit) the proof measures itself. Keyed by the texts measured,
    as the proof's own caches are, so a measurement is used only for the very text.

    Then the first GUESSED_CHECKS checks of the previous proof that the edit keeps from
    being reused (they meet E's region) are rendered ahead at the proof's first size
    (``checks``: key -> the changes found there, the renders): a check's outcome is a
    function of the text and the units removed, so the proof takes such a result as its
    own first size when it asks that very check (Prover's ``ahead``), and renders the
    rest. A guess the proof never asks cost a render or two, and nothing else."""

    def __init__(self, previous: ProofState, us: UnitSet, limits: Limits, pool: RenderPool,
                 pictures=None):
        self.extents: dict = {}
        self.candidate_extents: dict = {}
        self.checks: dict = {}
        self.renders = self.edit_renders = 0  # passes, counted as reuse_check counts them
        self._pictures = pictures  # render_jobs.FullPictures of the new text, or None
        self._thread = threading.Thread(target=self._run, args=(previous, us, limits, pool),
                                        daemon=True)
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread.ident is None:
                self._thread.start()

    def wait(self) -> None:
        """Wait for what was started (nothing, if it never was)."""
        if self._thread.ident is not None:
            self._thread.join()

    def _run(self, previous: ProofState, us: UnitSet, limits: Limits, pool: RenderPool):
        try:
            self._measure(previous, us, limits, pool)
        except BaseException:  # noqa: BLE001 - best effort: the proof measures what is missing itself
            pass

    def _measure(self, previous: ProofState, us: UnitSet, limits: Limits,
                 pool: RenderPool) -> None:
        old, name, sizes = previous.us, us.doc.name, previous.sizes
        if previous.outcome is None or not previous.candidates or not sizes:
            return
        e = edited_element(old, us)
        plain = None if e is None else _plain_edit(old, us, e, previous.candidates)
        if plain is None:
            return
        assert e is not None  # plain is None otherwise
        texts, keys = _edit_texts(old, us, e)
        todo = [(text, key) for text, key in zip(texts, keys) if key not in previous.extents]
        # E's extents in a thread of their own, beside the candidates' (both are jobs of
        # a few ms to a few tens; side by side on the workers, not one after the other)
        edit = threading.Thread(target=self._measure_edit, args=(todo, sizes, limits, pool,
                                                                 name), daemon=True)
        edit.start()
        try:
            # the candidates' extents, unless the proof reads their masks (kept), or
            # nothing more
            if plain == "any" and sum(key[0] == "set" for key in previous.checks) <= 1:
                elements = {us.units[i].element for i in previous.candidates}
                elements -= hidden_elements(us, elements)
                found = _candidates_text(us, elements) if elements else None
                if found is not None and found[1] not in previous.candidate_extents:
                    self.candidate_extents = {found[1]: _measure_candidates(
                        found[0], sizes, limits, pool, name)}
                    self.renders += len(sizes)
        finally:
            edit.join()
        if plain == "any":
            self._render_ahead(previous, us, e, keys, limits, pool)

    def _render_ahead(self, previous: ProofState, us: UnitSet, e: int, keys: list,
                      limits: Limits, pool: RenderPool) -> None:
        """Render the checks the new proof will most likely render first (see the class
        doc), as reuse_check and the Prover would decide from what is measured now."""
        from svgloo.engine.proving.pictures import text_changes
        from svgloo.engine.reading.units import text_without

        sizes, name = previous.sizes, us.doc.name
        found = [self.extents.get(k, previous.extents.get(k)) for k in keys]
        if any(f is None for f in found):
            return
        edit = _edit_boxes(found, sizes)
        if not any(edit.values()):
            return  # E inks nothing: the verdict is kept
        candidates = previous.candidates
        own, _ = candidate_boxes(us, candidates, sizes, limits, pool, dict(previous.boxes),
                                 name, render=False)
        if own is None:
            if sum(key[0] == "set" for key in previous.checks) > 1:
                return  # the candidates' masks are drawn by the proof itself
            probe = ProofState(us, previous.size)
            probe.candidate_extents = {**previous.candidate_extents, **self.candidate_extents}
            clear, _ = _extents_clear(us, candidates, sizes, found, probe, limits, pool, None)
            guesses = [] if clear is not False else [("set", frozenset(candidates), sizes)]
        else:
            reuse = CheckReuse(previous.checks, edit, own, _units_of(us, e),
                               previous.inexact)
            guesses = [key for key in previous.checks if key[0] == "set"
                       and not reuse.keeps(key, key[1])
                       and (len(key[1]) == 1 or reuse.fails(key, key[1], sizes[0]) is None)]
        pictures = {}
        if self._pictures is not None and self._pictures.size == sizes[0]:
            pictures = {(r, sizes[0]): self._pictures.get(r) for r in PROOF_RENDERERS}
        for key in guesses[:GUESSED_CHECKS]:
            self.checks[key] = text_changes(us.doc.text, text_without(us, set(key[1])),
                                            sizes[:1], limits, pool, name, None, pictures)
            self.renders += self.checks[key][1]

    def _measure_edit(self, todo, sizes, limits: Limits, pool: RenderPool, name: str):
        try:
            if todo:
                measured = pool.map(job_extents, [(text, sizes, limits, name)
                                                  for text, _ in todo], name)
                self.extents = {key: got for (_, key), got in zip(todo, measured)}
                self.edit_renders = len(todo)
        except BaseException:  # noqa: BLE001 - best effort, as _run
            pass

    def give(self, state: ProofState) -> int:
        """Wait, then add what was measured to ``state``'s caches; returns the passes."""
        self.wait()
        state.extents.update(self.extents)
        state.candidate_extents.update(self.candidate_extents)
        return self.renders + self.edit_renders


def carry(previous: ProofState | None, state: ProofState) -> None:
    """Start ``state`` with what the previous state measured that a text can still match:
    the candidates' cover and the most recent extents (both keyed by the text drawn)."""
    if previous is None:
        return
    state.cover = dict(previous.cover)
    state.candidate_extents = dict(previous.candidate_extents)
    state.boxes = dict(list(previous.boxes.items())[-2:])
    for key in list(previous.extents)[-_KEPT_EXTENTS:]:
        state.extents[key] = previous.extents[key]


__all__ = ["ProofState", "EarlyMeasures", "reuse_check", "edited_element", "ink_mask", "mask_meets",
           "mask_meets_array", "carry", "text_key", "EXTENTS_MARGIN", "CheckReuse",
           "candidate_boxes", "components"]
