"""Two speeds of answer, one truth: a scoring without the removal proof, proven later
(deferred_proof.prove_run), gives exactly the svgloo.score/1 JSON of a scoring with it (all
but the timings, key order included), cold and after edits, and until then nothing is
offered for deletion."""

from __future__ import annotations

import json
import random

import pytest

from svgloo.engine.scoring.deferred_proof import is_proven, prove_run
from svgloo.engine.scoring.score import ScoreSettings, score_text
from svgloo.validation.random_edits import random_edit

SIZE = 96  # small renders keep it short; the proof still runs at its own size (1024 px+)
# Files where the proof has something to say: proven units and a bulk removal
# (yeoman, ember-tomster), unverified ones and the renderers' disagreement
# (lateral-icon), one unit proven among 212 (tastejs; the last two are slow: 2 min each
# at load 20 on 2 cores).
FILES = ["logos/yeoman.svg", "logos/lateral-icon.svg",
         pytest.param("logos/ember-tomster.svg", marks=pytest.mark.slow),
         pytest.param("logos/tastejs.svg", marks=pytest.mark.slow)]


def _json(run) -> str:
    """The result but its timings, as JSON text: equal texts are equal results in the
    same key order."""
    result = dict(run.result)
    result.pop("timings")
    return json.dumps(result)


def _settings(pool, **kw) -> ScoreSettings:
    return ScoreSettings(backbone="pixel", size=SIZE, limits=pool.limits, **kw)


@pytest.mark.parametrize("name", FILES)
def test_a_proof_asked_later_equals_a_scoring_with_the_proof(corpus_dir, render_pool, name):
    path = corpus_dir / name
    text = path.read_text()
    full = score_text(text, str(path), _settings(render_pool), pool=render_pool)
    quick = score_text(text, str(path), _settings(render_pool, prove=False), pool=render_pool)
    # The first answer: the leave-one-out's, and nothing to delete.
    assert not is_proven(quick.result) and is_proven(full.result)
    assert {r["removal"]["status"] for r in quick.result["units"]} == {"unchecked"}
    assert quick.result["summary"]["unchecked"] == len(quick.result["units"])
    assert "proven_removable" not in quick.result["summary"]
    assert "renderer_disagreement" not in quick.result
    for a, b in zip(quick.result["units"], full.result["units"]):
        assert {k: v for k, v in a.items() if k != "removal"} == \
            {k: v for k, v in b.items() if k != "removal"}
    later = prove_run(quick, pool=render_pool)
    assert _json(later) == _json(full)
    assert later.settings == full.settings
    assert "proof_s" in later.result["timings"]
    assert quick.result["units"][0]["removal"]["status"] == "unchecked"  # not changed
    assert prove_run(later, pool=render_pool) is later


@pytest.mark.slow
@pytest.mark.parametrize("name", FILES[:2])  # (lateral-icon: 100 s at load 20)
def test_edits_scored_quickly_then_proven_equal_cold_scorings(corpus_dir, render_pool, name):
    """Proven, edited and re-scored without the proof twice, then proven: each step equals
    a cold scoring of its text; a scoring with the proof after unproven ones too."""
    path = corpus_dir / name
    text, label = path.read_text(), str(path)
    rng = random.Random(name)
    cache: dict = {}
    run = score_text(text, label, _settings(render_pool), pool=render_pool, layer_cache=cache)
    for step, kind in enumerate(["colour", "colour", "move", "colour"]):
        text = random_edit(text, kind, rng, label)
        prove_now = step == 3
        run = score_text(text, label, _settings(render_pool, prove=prove_now),
                         pool=render_pool, layer_cache=cache, previous=run)
        cold = score_text(text, label, _settings(render_pool), pool=render_pool)
        if not prove_now:
            assert not is_proven(run.result)
            assert run.proof_basis is not None  # the last proof, carried for the reuse
            if step == 1:
                continue  # proven only after the next edit: the basis is two texts old
            run = prove_run(run, pool=render_pool)
        assert _json(run) == _json(cold), f"step {step}: {kind} edit of {name}"


def test_the_proof_asked_later_reuses_the_last_proof_as_a_scoring_would(corpus_dir,
                                                                          render_pool):
    """After a colour edit the proof's reuse (proof_reuse.py) keeps what it kept when the
    proof ran inside the scoring: the same checks reused, the same outcome."""
    path = corpus_dir / "logos/yeoman.svg"
    text, label = path.read_text(), str(path)
    first = score_text(text, label, _settings(render_pool), pool=render_pool)
    edited = random_edit(text, "colour", random.Random("reuse"), label)
    inline = score_text(edited, label, _settings(render_pool), pool=render_pool,
                        previous=first)
    quick = score_text(edited, label, _settings(render_pool, prove=False), pool=render_pool,
                       previous=first)
    later = prove_run(quick, pool=render_pool)
    assert later.proof.reused == inline.proof.reused
    assert later.proof.kept_checks == inline.proof.kept_checks
    assert later.proof.reused or later.proof.kept_checks > 0
    assert _json(later) == _json(inline)


def test_a_stale_proof_stops_when_asked(corpus_dir, render_pool):
    from svgloo.engine.errors import Cancelled

    path = corpus_dir / "logos/yeoman.svg"
    quick = score_text(path.read_text(), str(path), _settings(render_pool, prove=False),
                       pool=render_pool)

    def stop():
        raise Cancelled("a newer text")

    with pytest.raises(Cancelled):
        prove_run(quick, pool=render_pool, should_stop=stop)
    assert not is_proven(quick.result)


# A stylesheet whose selectors depend on siblings: the document is one block.
_SIBLING_CSS = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
                '<style>circle:nth-child(3) { fill: red }</style>'
                '<rect width="10" height="10"/><circle cx="15" cy="15" r="5"/></svg>')


@pytest.mark.parametrize("name, text, drawn", [
    # Leave-one-out renders naively: the picture is not read.
    ("sibling-css.svg", _SIBLING_CSS, set()),
    # Shapes only, text rendered as written: the leave-one-out's full render is CairoSVG's.
    ("feather/alert-octagon.svg", None, {"cairosvg"}),
])
def test_a_scoring_without_the_proof_draws_only_the_pictures_it_reads(
        corpus_dir, render_pool, name, text, drawn):
    if text is None:
        text = (corpus_dir / name).read_text()
    quick = score_text(text, name, _settings(render_pool, prove=False), pool=render_pool)
    assert quick.loo.method == ("naive" if text is _SIBLING_CSS else "fast")
    assert set(quick.pictures._threads) == drawn
    full = score_text(text, name, _settings(render_pool), pool=render_pool)
    assert set(full.pictures._threads) == {"cairosvg", "resvg"}
