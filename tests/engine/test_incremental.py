"""Re-scoring an edited document from its previous scoring gives the cold scoring's
result (the whole svgloo.score/1 JSON but its timings), after seeded random edits of
every kind: a colour changed, a shape moved, an element removed, an element added."""

from __future__ import annotations

import random

import numpy as np
import pytest

from svgloo.engine.scoring.score import ScoreSettings, score_text

from conftest import corpus_files
from svgloo.validation.random_edits import KINDS, random_edit

SIZE = 96          # small renders keep CI short; validation/bench_loo runs 384 px
STRIDE = 6         # every 6th corpus file here (all of them: bench_loo --incremental)


def _json(run) -> dict:
    result = dict(run.result)
    result.pop("timings")
    return result


def _edits_agree(path, settings, pool, rounds: int = 1) -> list[tuple[str, set | None]]:
    """Score, then edit and re-score from the previous run, comparing each re-scoring
    with a cold one (no previous run, no layer cache). Returns (edit, units composited)."""
    text = path.read_text()
    name = str(path)
    cache: dict = {}
    run = score_text(text, name, settings, pool=pool, layer_cache=cache)
    rng = random.Random(str(path.name))
    out = []
    for kind in KINDS * rounds:
        edited = random_edit(text, kind, rng, name)
        again = score_text(edited, name, settings, pool=pool, layer_cache=cache,
                           previous=run)
        cold = score_text(edited, name, settings, pool=pool, layer_cache={})
        assert _json(again) == _json(cold), f"{kind} edit of {path.name}"
        assert np.array_equal(again.loo.full, cold.loo.full)
        out.append((kind, again.loo.composited))
        run, text = again, edited
    return out


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("path", corpus_files()[::STRIDE],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rescoring_after_random_edits_equals_cold_scoring(corpus_dir, render_pool, path):
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    _edits_agree(path, settings, render_pool)


@pytest.mark.parametrize("name", ["logos/react-styleguidist.svg", "logos/lighthouse.svg"])
def test_rescoring_a_masked_logo_after_edits_equals_cold_scoring(corpus_dir, render_pool,
                                                                 name):
    """Masked groups are blocks of their own (blocks.resources_keep_their_place): two
    rounds of every kind of edit, each re-scored from the run before, equal the cold
    scoring, and the previous run is used (not every re-scoring is a cold one)."""
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    edits = _edits_agree(corpus_dir / name, settings, render_pool, rounds=2)
    assert any(composited is not None for _, composited in edits)  # not all cold


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", ["logos/memgraph.svg", "noto/emoji_u1f9af.svg",
                                  "logos/safari.svg"])
def test_a_colour_edit_recomposites_a_few_units_only(corpus_dir, render_pool, name):
    """The re-scoring is incremental, not a cold one in disguise: after a colour edit the
    large files composite a fraction of their units (and still agree, above)."""
    path = corpus_dir / name
    settings = ScoreSettings(backbone="pixel", size=SIZE, limits=render_pool.limits)
    [(kind, composited)] = [e for e in _edits_agree(path, settings, render_pool)
                            if e[0] == "colour"]
    n = len(score_text(path.read_text(), name, settings, pool=render_pool).result["units"])
    assert composited is not None and len(composited) < n / 3


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", ["twemoji/1f46f.svg", "logos/safari.svg"])
def test_rescoring_against_a_reference_image_equals_cold_scoring(corpus_dir, render_pool,
                                                                 tmp_path, name):
    """With a reference image the reference's statistics are kept and only the full
    render changes; the sums of untouched patches are reused against it."""
    from PIL import Image

    from svgloo.engine.scoring.score import render_document
    from svgloo.engine.reading.document import load_document

    image = render_document(load_document(corpus_dir / name), SIZE, render_pool.limits,
                            render_pool)
    degraded = image.copy()
    degraded[SIZE // 3:SIZE // 2] = 255 - degraded[SIZE // 3:SIZE // 2]
    reference = tmp_path / "ref.png"
    Image.fromarray(degraded).save(reference)
    settings = ScoreSettings(backbone="pixel", size=SIZE, reference=str(reference),
                             limits=render_pool.limits)
    _edits_agree(corpus_dir / name, settings, render_pool, rounds=2)


def test_a_previous_run_with_other_settings_is_not_used(render_pool):
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 20">'
           '<rect width="10" height="10" fill="#f00"/><circle cx="12" cy="12" r="6"/></svg>')
    small = ScoreSettings(backbone="pixel", size=32, limits=render_pool.limits)
    large = small.with_(size=48)
    run = score_text(svg, "t.svg", small, pool=render_pool)
    again = score_text(svg.replace("#f00", "#0f0"), "t.svg", large, pool=render_pool,
                       previous=run)
    cold = score_text(svg.replace("#f00", "#0f0"), "t.svg", large, pool=render_pool)
    assert again.loo.composited is None
    assert _json(again) == _json(cold)


@pytest.mark.parametrize("name", ["logos/safari.svg", "noto/emoji_u1f99a.svg"])
def test_units_composited_near_an_edit_only_have_the_cold_patches(corpus_dir, render_pool,
                                                                  monkeypatch, name):
    """After a colour edit, a unit whose region meets the edit but whose own block is
    unchanged is composited only where the layers or the full render changed; the rest of
    its image is its previous one. Its patch is the cold leave-one-out's, bit for bit."""
    import svgloo.engine.leave_one_out.loo as loo
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.reading.units import extract_units

    path = corpus_dir / name
    text = path.read_text()
    cache: dict = {}
    units = extract_units(parse_document(text, str(path)))
    before = loo.loo_fast(units, 384, render_pool.limits, render_pool, layer_cache=cache)
    edited = random_edit(text, "colour", random.Random(name), str(path))
    units = extract_units(parse_document(edited, str(path)))
    merged = []
    real = loo._merged
    monkeypatch.setattr(loo, "_merged", lambda k, *a: merged.append(k) or real(k, *a))
    again = loo.loo_fast(units, 384, render_pool.limits, render_pool, layer_cache=cache,
                         previous=before)
    cold = loo.loo_fast(units, 384, render_pool.limits, render_pool, layer_cache={})
    assert merged and again.composited and len(again.composited) < len(units.units) / 3
    for k, (a, c) in enumerate(zip(again.patches, cold.patches)):
        assert a.box == c.box, k
        assert (a.pixels is None) == (c.pixels is None) and (
            a.pixels is None or np.array_equal(a.pixels, c.pixels)), k
