"""What svgloo proves removable leaves a real browser's picture unchanged, on every corpus file.

Each corpus file is scored with the pixel backbone (self-analysis, the analysis size); every
unit whose ``removal.status`` is "proven" is removed alone, with the editor's own quick-fix
edit, and the ``bulk_removal`` set is removed at once, with the bulk fix's edits. Headless
Chromium draws the file before and after each removal (tests/browser.py) at the analysis
size, and the bulk set also at the proofs' larger size; where a file offers more than
``SINGLES_PER_FILE`` units alone, that many are refereed (spread over the file). Compared as
premultiplied RGBA and on a white and a dark page, no pixel
may move by more than the referee's tolerance (below). Files with nothing offered cost no
browser time.

The referee's tolerance is what the proof promises in a browser, ``BROWSER_TOLERANCE``
(/255 per channel, alpha included): 2/255 above ``PROOF_TOLERANCE``, what the proof checks in
CairoSVG and resvg, because Chromium draws with Skia, whose antialiasing where edges meet
moves a pixel a little more than the proof renderers' (logos/pypi.svg: 4/255 in both, 6/255
in Chromium). Both stay far below anything a person sees (the issue's failures moved pixels
by 44/255 and 157/255).
"""

from __future__ import annotations

import pytest

from browser_referee import Candidates, proven_removals, referee, sampled

from conftest import corpus_files
from svgloo.engine.settings import DEFAULT_RENDER_SIZE

pytestmark = pytest.mark.slow

SIZE = DEFAULT_RENDER_SIZE  # the analysis size the proofs are made at (ScoreSettings' default)
SINGLES_PER_FILE = 48  # single removals refereed per file (see browser_referee.sampled)


@pytest.fixture(scope="module")
def proof():
    return pytest.importorskip(
        "svgloo.engine.proving.proof",
        reason="this build has no removal proofs (svgloo.engine.proving.proof): nothing to referee")


@pytest.fixture(scope="module")
def proof_tolerance(proof) -> int:
    return int(proof.PROOF_TOLERANCE)


@pytest.fixture(scope="module")
def browser_tolerance(proof) -> int:
    return int(proof.BROWSER_TOLERANCE)


@pytest.fixture(scope="module")
def large_size(proof) -> int:
    """The bulk set is refereed again at the size proofs are made at beside the analysis
    size (the document's own, at least this): a removal proven at 384 px once lost a sliver
    of a logo's lettering at 4096 px."""
    return int(getattr(proof, "MIN_PROOF_SIZE", 1024))


# Known disagreements between the proof and Chromium, each a finding to fix in the engine;
# strict, so a fix turns the entry into a failure that asks for its removal.
KNOWN: dict[str, str] = {}


def _corpus_params():
    for p in corpus_files():
        key = f"{p.parent.name}/{p.name}"
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
        yield pytest.param(p, id=key, marks=marks)


# A hang detector only: the largest files are scored with proofs in two renderers at two
# sizes before Chromium sees them (logos/sugarss.svg took over 600 s on a loaded machine).
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("path", list(_corpus_params()))
def test_proven_removals_leave_chromiums_picture_unchanged(corpus_dir, chromium, render_pool,
                                                           proof_tolerance, browser_tolerance,
                                                           large_size, path):
    from svgloo.engine.scoring.score import ScoreSettings, score_file

    run = score_file(str(path), ScoreSettings(backbone="pixel", size=SIZE), pool=render_pool)
    candidates = sampled(proven_removals(run.result), SINGLES_PER_FILE)
    tolerance = browser_tolerance
    verdicts = referee(chromium, path.name, run.units, candidates, SIZE, tolerance)
    if candidates.bulk:
        verdicts += referee(chromium, f"{path.name} at {large_size} px", run.units,
                            Candidates((), candidates.bulk), large_size, tolerance)
    changed = [v.line() for v in verdicts if v.changed]
    assert not changed, (f"proven removable (tolerance {proof_tolerance}/255, referee "
                         f"{browser_tolerance}/255), yet Chromium's picture "
                         "changes:\n" + "\n".join(changed))


def test_the_referee_sees_a_removal_that_changes_chromiums_picture(chromium):
    """The check above can fail: offered as if proven, a blurred white glow on a dark ground
    (the issue's kind of failure) is caught; a rect at opacity 0 is not, alone or in bulk."""
    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.reading.units import extract_units

    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
            '<filter id="glow"><feGaussianBlur stdDeviation="8"/></filter>'
            '<rect width="100" height="100" fill="#222"/>'
            '<circle cx="50" cy="50" r="20" fill="white" filter="url(#glow)"/>'
            '<rect x="10" y="10" width="10" height="10" fill="white" opacity="0"/></svg>')
    us = extract_units(parse_document(text, "glow.svg"))
    verdicts = referee(chromium, "glow.svg", us, Candidates((1, 2), (1, 2)), SIZE, 6)
    by_units = {v.units: v for v in verdicts}
    assert by_units[(1,)].changed > 1000 and by_units[(1,)].worst > 100
    assert by_units[(2,)].changed == 0 and by_units[(2,)].worst == 0
    assert by_units[(1, 2)].changed == by_units[(1,)].changed


def test_sampling_keeps_small_files_whole_and_spreads_over_large_ones():
    small = Candidates((3, 5, 8), (3, 5))
    assert sampled(small, 3) is small
    large = sampled(Candidates(tuple(range(100, 200)), (1, 2)), 10)
    assert large.singles == tuple(range(100, 200, 10)) and large.bulk == (1, 2)


def test_coincident_subpaths_move_chromiums_edges_and_are_unverified(chromium, proof,
                                                                      browser_tolerance,
                                                                      large_size):
    """logos/yeoman.svg's old failure, by hand: one outline written twice in one path. Without
    one copy, CairoSVG's and resvg's pictures are unchanged (they compute the coverage of the
    union exactly), so the two-renderer proof would accept the removal; Chromium's edge
    pixels move (Skia adds up the antialiased coverage of each copy). svgloo calls both
    copies unverified and offers neither."""
    from pathlib import Path

    from svgloo.engine.reading.document import parse_document
    from svgloo.engine.scoring.score import ScoreSettings, score_text
    from svgloo.engine.reading.units import extract_units, text_without

    path = Path(__file__).parent / "fixtures" / "proofs" / "coincident_subpaths.svg"
    text = path.read_text()
    us = extract_units(parse_document(text, path.name))
    assert [u.kind for u in us.units] == ["subpath", "subpath"]
    found, _ = proof.text_changes(text, text_without(us, {1}), (SIZE, large_size))
    assert found == []  # what the two renderers see: nothing
    [verdict] = referee(chromium, path.name, us, Candidates((1,), None), SIZE,
                        browser_tolerance)
    assert verdict.changed > 50 and verdict.worst > 12, verdict.line()
    result = score_text(text, path.name, ScoreSettings(backbone="pixel", size=SIZE)).result
    for row in result["units"]:
        assert not row["visible"]
        assert row["removal"]["status"] == "unverified", row["removal"]
        assert "coincide with subpath" in row["removal"]["reason"]
    assert result["bulk_removal"] is None

