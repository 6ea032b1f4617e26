"""The removal proof of a re-scoring reuses the previous verdict only where the edit cannot
meet the candidates (proof_reuse.py), and the result is always the cold scoring's: edits
far from the candidates are reused; an edit over a candidate, one that makes a candidate
visible, and a defs edit prove again. Also: the one geometric bound the reuse relies on
(cairo's extents of a shape, grown by EXTENTS_MARGIN, hold every pixel CairoSVG and resvg
ink for it) checked against real renders of corpus shapes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from svgloo.engine.scoring.score import ScoreSettings, score_text

from conftest import CORPUS

SIZE = 96  # the proof also runs at 1024 px (MIN_PROOF_SIZE)

# A hairline (0.01 units: ~2/255 at 96 px, so a candidate; ~26/255 at 1024 px) hidden
# under an opaque rect: proven removable. A rect far from it, and a circle painted by a
# gradient in <defs>.
SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">
<defs><linearGradient id="g"><stop offset="0" stop-color="#f80"/><stop offset="1"
 stop-color="#08f"/></linearGradient></defs>
<line x1="15" y1="30" x2="45" y2="30" stroke="#000" stroke-width="0.01"/>
<rect x="10" y="20" width="40" height="20" fill="#0a0"/>
<rect x="60" y="60" width="30" height="30" fill="#a00"/>
<circle cx="75" cy="20" r="10" fill="url(#g)"/>
</svg>"""


def _json(run) -> dict:
    return {k: v for k, v in run.result.items() if k != "timings"}


def _statuses(run) -> list[str]:
    return [u["removal"]["status"] for u in run.result["units"]]


def _again_and_cold(text, run, settings, pool):
    again = score_text(text, "t.svg", settings, pool=pool, previous=run)
    cold = score_text(text, "t.svg", settings, pool=pool)
    assert _json(again) == _json(cold)
    return again, cold


@pytest.fixture(scope="module")
def first(render_pool):
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    run = score_text(SVG, "t.svg", settings, pool=render_pool)
    assert _statuses(run) == ["proven", "visible", "visible", "visible"]
    return settings, run


def test_a_colour_edit_far_from_the_candidates_keeps_the_verdict(render_pool, first):
    settings, run = first
    again, cold = _again_and_cold(SVG.replace('fill="#a00"', 'fill="#0a5"'), run, settings,
                                  render_pool)
    assert again.proof.reused and not cold.proof.reused
    assert again.result["timings"]["proof_renders"] < cold.result["timings"]["proof_renders"]
    # and the next edit of the same element reuses the extents measured for this one
    third, _ = _again_and_cold(SVG.replace('fill="#a00"', 'fill="#05a"'), again, settings,
                               render_pool)
    assert third.proof.reused


def test_an_edit_over_a_candidate_proves_again(render_pool, first):
    settings, run = first
    again, cold = _again_and_cold(SVG.replace('fill="#0a0"', 'fill="#00a"'), run, settings,
                                  render_pool)
    assert not again.proof.reused
    assert _statuses(again) == _statuses(run)


def test_an_edit_that_makes_a_candidate_visible_proves_again(render_pool, first):
    """The cover turns translucent: the hairline is still a candidate at 96 px (same
    candidate set) but shows at 1024 px; the kept verdict would say "proven"."""
    settings, run = first
    text = SVG.replace('fill="#0a0"', 'fill="#0a0" fill-opacity="0.2"')
    again, cold = _again_and_cold(text, run, settings, render_pool)
    assert not again.proof.reused
    assert again.proof.candidates == run.proof.candidates
    assert _statuses(run)[0] == "proven" and _statuses(again)[0] == "visible"
    assert "1024 px" in again.result["units"][0]["removal"]["reason"]


def test_a_defs_edit_proves_again(render_pool, first):
    settings, run = first
    again, _ = _again_and_cold(SVG.replace('stop-color="#08f"', 'stop-color="#80f"'), run,
                               settings, render_pool)
    assert not again.proof.reused


@pytest.mark.slow
def test_colour_edits_of_an_emoji_reuse_the_proof_and_equal_cold(corpus_dir, render_pool):
    """The Neovim latency test's edits (a colour in the middle of a 122-unit emoji)."""
    path = corpus_dir / "noto" / "emoji_u1f4b6.svg"
    text = path.read_text()
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    run = score_text(text, str(path), settings, pool=render_pool)
    found = list(re.finditer(r"fill[=:]\"?#([0-9A-Fa-f]{6})", text))
    at = found[len(found) // 2].start(1)
    reused = []
    for colour in ("123456", "abcdef", "0f0f0f"):
        text = text[:at] + colour + text[at + 6:]
        again = score_text(text, str(path), settings, pool=render_pool, previous=run)
        cold = score_text(text, str(path), settings, pool=render_pool)
        assert _json(again) == _json(cold)
        reused.append(again.proof.reused)
        run = again
    assert all(reused)


def _alone(us, elements, sizes, pool, name):
    """((element, renderer, size), the element drawn alone) for each."""
    from svgloo.engine.proving.proof import RENDERERS, job_render_pictures
    from svgloo.engine.reading.units import text_keeping

    keys = [(e, r, size) for e in elements for r in RENDERERS for size in sizes]
    jobs = [([text_keeping(us, {u.index for u in us.units if u.element == e})], size,
             pool.limits, name, r) for e, r, size in keys]
    return [(k, p) for k, [p] in zip(keys, pool.map(job_render_pictures, jobs, name))]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["noto/emoji_u1f4b6.svg", "logos/pypi.svg",
                                  "twemoji/1f46f.svg"])
def test_extents_hold_every_inked_pixel_in_both_renderers(render_pool, name):
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.proving.proof_reuse import (SHAPES, _marked_alone, _pixel_box, job_extents,
                                                   ink_mask)
    from svgloo.engine.reading.units import extract_units

    path = CORPUS / name
    if not path.exists():
        pytest.skip("the shared corpus is not present")
    us = extract_units(parse_document(path.read_text(), name))
    sizes = (SIZE, 1024)
    elements = sorted({u.element for u in us.units
                       if us.doc.elements[u.element].tag in SHAPES})
    elements = elements[::max(1, len(elements) // 12)]  # hidden layers too (the emoji's)
    limits = render_pool.limits
    boxes = render_pool.map(job_extents, [(_marked_alone(us, e), sizes, limits, name)
                                          for e in elements], name)
    checked = 0
    for (e, r, size), picture in _alone(us, elements, sizes, render_pool, name):
        box = _pixel_box(boxes[elements.index(e)][size], size)
        own, crop = ink_mask(picture)
        if own is None:
            continue
        assert box is not None, (name, e, r, size)
        inked = np.zeros(picture.shape[:2], bool)
        inked[own[0]:own[1], own[2]:own[3]] = crop
        inked[box[0]:box[1], box[2]:box[3]] = False
        assert not inked.any(), (name, e, r, size, box, own)
        checked += 1
    assert checked


def test_an_edit_of_a_shape_that_draws_nothing_keeps_the_verdict(render_pool, first):
    """A candidate in a hidden group (the emoji's template layer) recoloured: it inks
    nothing before or after, so no picture changes; the cover is not even needed."""
    settings, run = first
    hidden = SVG.replace("</svg>", '<g display="none" opacity="0.5"><rect x="5" y="5" '
                         'width="90" height="90" fill="#123"/></g></svg>')
    run = score_text(hidden, "t.svg", settings, pool=render_pool, previous=run)
    assert _statuses(run)[-1] == "proven"
    again, _ = _again_and_cold(hidden.replace('fill="#123"', 'fill="#321"'), run, settings,
                               render_pool)
    assert again.proof.reused


@pytest.mark.slow
@pytest.mark.parametrize("name", ["noto/emoji_u1f4b6.svg", "logos/pypi.svg",
                                  "logos/ember-tomster.svg"])
def test_candidate_masks_hold_every_pixel_each_shape_inks_in_both_renderers(render_pool,
                                                                             name):
    """The bound single checks are kept on: where a shape inks in CairoSVG, captured among
    the other shapes in one pass (proof_reuse.candidate_boxes) and grown by
    EXTENTS_MARGIN px, holds every pixel CairoSVG and resvg ink for it drawn alone."""
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.proving.proof_reuse import _local_elements, candidate_boxes, ink_mask
    from svgloo.engine.reading.units import extract_units

    path = CORPUS / name
    if not path.exists():
        pytest.skip("the shared corpus is not present")
    us = extract_units(parse_document(path.read_text(), name))
    sizes = (SIZE, 1024)
    limits = render_pool.limits
    local = sorted(_local_elements(us, {u.element for u in us.units}))
    elements = local[::max(1, len(local) // 12)]
    first = {e: min(u.index for u in us.units if u.element == e) for e in elements}
    masks, _ = candidate_boxes(us, sorted(first.values()), sizes, limits, render_pool, {},
                               name)
    checked = 0
    for (e, r, size), picture in _alone(us, elements, sizes, render_pool, name):
        own, crop = ink_mask(picture)
        if own is None:
            continue
        (box, allowed) = masks[first[e]][size]
        assert box is not None, (name, e, r, size)
        inked = np.zeros(picture.shape[:2], bool)
        inked[own[0]:own[1], own[2]:own[3]] = crop
        inked[box[0]:box[1], box[2]:box[3]] &= ~allowed
        assert not inked.any(), (name, e, r, size, int(inked.sum()))
        checked += 1
    assert checked  # (the emoji has a hidden template layer: those ink nothing)


# Two hairlines each hidden under an opaque rect, far apart, and a bare thinner hairline
# (~1/255 at 96 px: a candidate; ~13/255 at 1024 px: it fails the proof). The three cannot
# ink on the same pixel: the failing set is split, each group proven on its own.
SPLIT = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">
<line x1="5" y1="20" x2="25" y2="20" stroke="#000" stroke-width="0.01"/>
<rect x="2" y="10" width="26" height="20" fill="#0a0"/>
<line x1="70" y1="80" x2="90" y2="80" stroke="#000" stroke-width="0.01"/>
<rect id="cover" x="65" y="70" width="30" height="20" fill="#a00"/>
<line x1="5" y1="60" x2="40" y2="60" stroke="#000" stroke-width="0.005"/>
</svg>"""


@pytest.fixture(scope="module")
def split(render_pool):
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    run = score_text(SPLIT, "t.svg", settings, pool=render_pool)
    assert _statuses(run) == ["proven", "visible", "proven", "visible", "visible"]
    assert "1024 px" in run.result["units"][4]["removal"]["reason"]
    assert run.result["bulk_removal"]["units"] == [0, 2]
    return settings, run


def test_an_edit_over_one_candidate_keeps_the_other_groups_checks(render_pool, split):
    """The cover of the right hairline recoloured: the checks removing that hairline are
    made again, the others (the left hairline's, the bare one's) keep their numbers."""
    settings, run = split
    again, cold = _again_and_cold(SPLIT.replace('fill="#a00"', 'fill="#00a"'), run,
                                  settings, render_pool)
    assert not again.proof.reused
    assert 0 < again.proof.kept_checks < len(again.proof.checks)
    assert again.result["timings"]["proof_renders"] < cold.result["timings"]["proof_renders"]
    assert _statuses(again) == _statuses(run)


def test_a_kept_check_never_hides_what_the_edit_uncovers(render_pool, split):
    """The right cover turns translucent: its hairline now shows at 1024 px. Its checks are
    made again (a kept one would still say "proven"); the far groups' are kept."""
    settings, run = split
    text = SPLIT.replace('fill="#a00"', 'fill="#a00" fill-opacity="0.2"')
    again, cold = _again_and_cold(text, run, settings, render_pool)
    assert again.proof.kept_checks > 0
    assert _statuses(again) == ["proven", "visible", "visible", "visible", "visible"]
    assert "1024 px" in again.result["units"][2]["removal"]["reason"]
    # and back: the next edit starts from a proof that was itself partly kept
    back, _ = _again_and_cold(SPLIT, again, settings, render_pool)
    assert _statuses(back) == _statuses(run) and back.proof.kept_checks > 0


def test_an_edit_of_a_candidate_remakes_the_checks_that_remove_it(render_pool, split):
    """The bare hairline (a candidate) recoloured white: removing it changes nothing at
    1024 px any more but on a dark page; its checks are made again, with the new numbers."""
    settings, run = split
    text = SPLIT.replace('stroke="#000" stroke-width="0.005"',
                         'stroke="#fff" stroke-width="0.005"')
    again, cold = _again_and_cold(text, run, settings, render_pool)
    assert again.proof.kept_checks > 0
    assert again.result["units"][4]["removal"] == cold.result["units"][4]["removal"]


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", ["logos/ember-tomster.svg", "logos/pypi.svg"])
def test_colour_edits_next_to_candidates_equal_cold(render_pool, name):
    """Corpus files whose proof bisects: shapes whose ink meets a candidate's recoloured
    one after another (the proof partly kept, partly made again), each re-scoring equal to
    a cold one."""
    from svgloo.engine.proving.proof import proof_sizes
    from svgloo.engine.proving.proof_reuse import candidate_boxes, mask_meets
    from svgloo.engine.rendering.render import render_extents

    path = CORPUS / name
    if not path.exists():
        pytest.skip("the shared corpus is not present")
    text = path.read_text()
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    run = score_text(text, name, settings, pool=render_pool)
    us = run.units
    candidates = list(run.proof.candidates)
    sizes, _ = proof_sizes(us, SIZE, render_pool.limits)
    masks, _ = candidate_boxes(us, candidates, sizes, render_pool.limits, render_pool, {},
                               name)
    colour = re.compile(r'(fill|stroke)(?:="|:\s*)#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{3})\b')
    near = []
    for el in us.doc.elements:
        found = colour.search(text, el.start, el.start_tag_end)
        if el.tag != "path" or found is None:
            continue
        box = render_extents(text[:el.start] + '<path data-svgloo-capture="e" '
                             + text[el.start + 5:], 1024).get("e")
        if box is None:
            continue
        b = (int(box[0]), int(box[1]) + 1, int(box[2]), int(box[3]) + 1)
        if any(mask_meets(masks[i][1024], b) for i in candidates):
            near.append(found.start(2))
    assert near, name
    kept = 0
    for at in near[:: max(1, len(near) // 3)][:3]:
        edited = text[:at] + ("123" if text[at:at + 3] != "123" else "321") + text[at + 3:]
        again, _ = _again_and_cold(edited, run, settings, render_pool)
        kept += again.proof.kept_checks
        run, text = again, edited
    assert kept  # the edits did not all prove from scratch


# Two identical rects on the pixel grid at both sizes (coordinates multiple of 3: 96 and
# 1024 px): either alone draws nothing the other does not, both together hide the blue rect
# under them. A green dot over one corner of them.
TWINS = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 96 96">
<rect x="12" y="12" width="72" height="72" fill="#00f"/>
<rect x="30" y="30" width="42" height="42" fill="#f00"/>
<rect x="30" y="30" width="42" height="42" fill="#f00"/>
<circle cx="70" cy="70" r="8" fill="#0f0"/>
</svg>"""


@pytest.fixture(scope="module")
def twins(render_pool):
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    run = score_text(TWINS, "t.svg", settings, pool=render_pool)
    # removing both fails; the first alone is proven, the second dropped with it
    assert _statuses(run) == ["visible", "proven", "visible", "visible"]
    return settings, run


def test_a_failing_check_the_edit_cannot_reach_everywhere_fails_unrendered(render_pool,
                                                                           twins):
    """The dot recoloured: it meets the twins, so no check is kept whole; but removing both
    twins moved pixels far from the dot, which still move: that check fails again
    unrendered while bisecting, and is rendered when the dropped twin's numbers are
    reported. The result is the cold one's."""
    settings, run = twins
    again, cold = _again_and_cold(TWINS.replace("#0f0", "#0a0"), run, settings, render_pool)
    assert again.proof.kept_checks == 1 and not again.proof.inexact
    assert again.result["units"][2]["removal"] == cold.result["units"][2]["removal"]
    assert _statuses(again) == _statuses(run)


def test_a_failing_check_is_rendered_where_the_edit_reaches_every_moved_pixel(render_pool,
                                                                             twins):
    """The rect under the twins turns their red: removing both twins changes nothing now.
    Every pixel the old check moved lies where that rect inks, so it is not kept failing
    (it would have kept the second twin "visible")."""
    settings, run = twins
    text = TWINS.replace("#00f", "#f00")
    again, cold = _again_and_cold(text, run, settings, render_pool)
    assert again.proof.kept_checks == 0
    assert _statuses(again) == ["visible", "proven", "proven", "visible"]


# An exporter's template layer, hidden, whose shapes are the only candidates; a visible
# shape over where they would be.
LAYERED = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">
<g id="template" style="display:none"><rect x="10" y="10" width="80" height="80" fill="#123"/>
<circle cx="50" cy="50" r="30" fill="#456"/></g>
<circle cx="50" cy="50" r="20" fill="#f80"/>
</svg>"""


@pytest.mark.parametrize("visible", [False, True])
def test_hidden_candidates_keep_the_verdict_unmeasured(render_pool, visible):
    """The visible circle recoloured over the hidden layer: the one-check proof is kept
    without measuring the candidates (nothing draws them). The same layer shown again by
    its inline style being display:inline is measured, and the proof made again."""
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    text = LAYERED.replace("display:none", "display:inline") if visible else LAYERED
    if visible:  # drawn, under the circle: visible units, no one-check proof to keep
        text = text.replace('<circle cx="50" cy="50" r="20" fill="#f80"/>',
                            '<circle cx="50" cy="50" r="45" fill="#f80"/>')
    run = score_text(text, "t.svg", settings, pool=render_pool)
    again, _ = _again_and_cold(text.replace("#f80", "#08f"), run, settings, render_pool)
    if visible:
        # the rect shows at the corners; the circle under the big one is a candidate
        assert _statuses(run) == ["visible", "proven", "visible"]
        assert again.proof.candidate_extents  # measured: the layer is drawn
    else:
        assert _statuses(run) == ["proven", "proven", "visible"]
        assert again.proof.reused and not again.proof.candidate_extents


def test_what_the_reuse_measures_is_measured_beside_the_leave_one_out(render_pool, first,
                                                                      monkeypatch):
    """After an edit the proof's reuse measures where the edited shape inks, before and
    after, and where the candidates ink (a proof of one check): those jobs now start in a
    thread of their own once the layers are drawn (EarlyMeasures), and the proof itself
    measures nothing. The result is the cold one."""
    import threading

    from svgloo.engine.processes.workers import RenderPool

    settings, run = first
    calls = []
    real = RenderPool.map

    def spy(self, fn, jobs, *a, **k):
        calls.append((fn.__name__, threading.current_thread() is threading.main_thread()))
        return real(self, fn, jobs, *a, **k)

    monkeypatch.setattr(RenderPool, "map", spy)
    again = score_text(SVG.replace('fill="#a00"', 'fill="#0a5"'), "t.svg", settings,
                       pool=render_pool, previous=run)
    measures = [c for c in calls if c[0] in ("job_extents", "job_candidate_extents")]
    assert {name for name, _ in measures} == {"job_extents", "job_candidate_extents"}
    assert not any(in_main for _, in_main in measures)
    assert again.proof.reused
    cold = score_text(SVG.replace('fill="#a00"', 'fill="#0a5"'), "t.svg", settings,
                      pool=render_pool)
    assert _json(again) == _json(cold)
    assert again.result["timings"]["proof_renders"] < cold.result["timings"]["proof_renders"]


def test_the_one_pass_reference_test_is_the_per_id_search_on_random_texts():
    """_referenced reads the names after every "#" of a text once; it answers as a search
    for "#id" not followed by a name character does, ids with other characters included."""
    import random

    from svgloo.engine.proving.proof_reuse import _referenced

    def searched(text, ident):
        return bool(ident) and re.search("#" + re.escape(ident) + r"(?![\w.:-])",
                                         text) is not None

    picks = random.Random(0)
    alphabet = "ab#.:-_ x(é)1"
    for _ in range(20000):
        text = "".join(picks.choice(alphabet) for _ in range(picks.randrange(0, 30)))
        ident = "".join(picks.choice(alphabet.replace("#", ""))
                        for _ in range(picks.randrange(0, 4)))
        assert _referenced(text, ident) == searched(text, ident), (text, ident)


def test_a_check_the_edit_reaches_is_rendered_ahead_and_not_again(render_pool, first,
                                                                  monkeypatch):
    """Recolouring the hairline's cover meets the candidate: the previous proof's check is
    rendered ahead at the first size, beside the leave-one-out (EarlyMeasures), and the
    proof takes it from there - it renders only the proof size itself. The result is the
    cold one."""
    import threading

    from svgloo.engine.processes.workers import RenderPool

    settings, run = first
    calls = []
    real = RenderPool.map

    def spy(self, fn, jobs, *a, **k):
        if fn.__name__ == "job_picture_changes":
            calls.append((threading.current_thread() is threading.main_thread(), jobs[0][2]))
        return real(self, fn, jobs, *a, **k)

    monkeypatch.setattr(RenderPool, "map", spy)
    text = SVG.replace('fill="#0a0"', 'fill="#00a"')
    again = score_text(text, "t.svg", settings, pool=render_pool, previous=run)
    assert (False, SIZE) in calls and (True, SIZE) not in calls
    assert (True, 1024) in calls  # the hairline passes at 96 px: the proof size is next
    monkeypatch.setattr(RenderPool, "map", real)
    cold = score_text(text, "t.svg", settings, pool=render_pool)
    assert _json(again) == _json(cold)
    assert _statuses(again) == _statuses(run)
