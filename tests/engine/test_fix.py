"""engine/fix.py: proven removals, then the leftovers, with the whole result proven."""

from __future__ import annotations

import pytest

from conftest import result_test_limits
from svgloo.engine.reading.document import parse_document
from svgloo.engine.fixing.fix import cut, fix_text, leftovers, parse_kinds, referenced_ids
from svgloo.engine.errors import ConfigError
from svgloo.engine.proving.proof import proof_sizes, text_changes
from svgloo.engine.scoring.score import ScoreSettings
from svgloo.engine.reading.units import extract_units

HEAD = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">\n'
SHAPE = '  <rect x="8" y="8" width="48" height="48" fill="#336699"/>\n'

# A display:none layer whose content uses a clip path; an empty <g> shell around a
# zero-width rect; an unrelated <symbol> a sprite user may reach from another file.
LAYER = (HEAD + '  <defs>\n    <clipPath id="clip">\n      <rect width="32" height="32"/>\n'
         '    </clipPath>\n    <symbol id="icon"><circle r="3"/></symbol>\n  </defs>\n'
         + SHAPE +
         '  <g id="hidden-layer" style="display:none">\n'
         '    <circle cx="20" cy="20" r="10" fill="red" clip-path="url(#clip)"/>\n'
         '  </g>\n  <g>\n    <g>\n      <rect x="10" y="10" width="0" height="10"/>\n'
         '    </g>\n  </g>\n</svg>\n')

# Two identical shapes on top of each other: each alone has no visible effect, removing
# both erases the shape.
STACKED = (HEAD + '  <rect id="a" x="8" y="8" width="48" height="48" fill="#336699"/>\n'
           '  <rect id="b" x="8" y="8" width="48" height="48" fill="#336699"/>\n</svg>\n')


@pytest.fixture(scope="module")
def settings():
    return ScoreSettings(backbone="pixel", limits=result_test_limits())


def fix(text, settings, render_pool, kinds=("invisible",)):
    return fix_text(text, "t.svg", kinds, settings, render_pool)


def independent_check(original: str, fixed: str, render_pool, settings) -> list:
    """The proof module's comparison of the two texts, run here on its own."""
    us = extract_units(parse_document(original, "t.svg"))
    sizes, _ = proof_sizes(us, 384, settings.limits)
    found, _ = text_changes(original, fixed, sizes, settings.limits, render_pool, "t.svg")
    return found


def test_fix_proves_even_when_given_settings_without_the_proof(settings, render_pool):
    """svgloo fix removes what the removal proof passed: settings that would score
    without it (docs/two-speeds.md) still give the same fix, not an empty one."""
    quick = settings.with_(prove=False)
    assert fix(LAYER, quick, render_pool).text == fix(LAYER, settings, render_pool).text
    assert fix(LAYER, quick, render_pool).removed == {"invisible": ["circle", "rect"]}


def test_a_hidden_layer_goes_with_its_clip_path_and_the_empty_defs_stays_for_the_symbol(
        settings, render_pool):
    fixed = fix(LAYER, settings, render_pool)
    assert fixed.removed == {"invisible": ["circle", "rect"]}
    assert "g#hidden-layer" in fixed.containers and fixed.containers.count("g") == 2
    assert fixed.definitions == ["clipPath#clip"]
    assert '<symbol id="icon">' in fixed.text  # may be used from another file
    assert "clipPath" not in fixed.text and "<g" not in fixed.text
    # nothing else moved: the kept lines are the original's, in order, and no blank line
    kept = [line for line in LAYER.splitlines() if line in fixed.text.splitlines()]
    assert fixed.text.splitlines() == kept
    assert all(line.strip() for line in fixed.text.splitlines())
    assert not fixed.fell_back
    assert independent_check(LAYER, fixed.text, render_pool, settings) == []


def test_of_two_stacked_identical_shapes_one_stays(settings, render_pool):
    fixed = fix(STACKED, settings, render_pool)
    assert fixed.text.count("<rect") == 1
    assert sum(len(v) for v in fixed.removed.values()) == 1
    assert independent_check(STACKED, fixed.text, render_pool, settings) == []


def test_an_unreferenced_definition_from_the_start_stays_and_a_visible_file_is_untouched(
        settings, render_pool):
    # Never referenced in this file: perhaps used from outside; fix only tidies up what
    # its own removals leave behind.
    text = (HEAD + '  <defs>\n    <clipPath id="spare"><rect width="5" height="5"/></clipPath>'
            '\n  </defs>\n' + SHAPE + '</svg>\n')
    fixed = fix(text, settings, render_pool)
    assert not fixed.changed and fixed.text == text


def test_harmful_is_refused_without_a_reference(settings, render_pool):
    with pytest.raises(ConfigError, match="needs a reference"):
        fix(STACKED, settings, render_pool, ("harmful",))


def test_specks_go_with_the_allowance_and_the_rest_stays(settings, render_pool):
    speck = '  <rect x="60" y="1" width="0.5" height="0.5" fill="#000"/>\n'
    text = HEAD + SHAPE + speck + '</svg>\n'
    assert not fix(text, settings, render_pool).changed  # visible: not "invisible"
    fixed = fix(text, settings, render_pool, ("specks",))
    assert fixed.removed == {"specks": ["rect"]}
    assert fixed.text == HEAD + SHAPE + "</svg>\n"
    assert fixed.checked.startswith("the tidying against the proven removal")


def test_cut_merges_neighbours_and_takes_whole_lines():
    text = "a\n  <x/><y/>\n  <z/> tail\nb\n"
    x, y, z = text.index("<x/>"), text.index("<y/>"), text.index("<z/>")
    assert cut(text, [(x, x + 4), (y, y + 4)]) == "a\n  <z/> tail\nb\n"
    assert cut(text, [(z, z + 4)]) == "a\n  <x/><y/>\n   tail\nb\n"  # shares its line


def test_leftovers_keep_a_referenced_group_and_references_count_in_css():
    text = (HEAD + '<style>.a{fill:url(#grad)}</style><defs><linearGradient id="grad"/>'
            '<linearGradient id="gone"/></defs><g id="target"/><use href="#target"/>'
            '<g></g></svg>')
    doc = parse_document(text, "t.svg")
    assert referenced_ids(text) == {"grad", "target"}
    empty, unused = leftovers(doc, {"grad", "gone"})
    assert [doc.elements[i].tag for i in empty] == ["g"]
    assert doc.nodes[empty[0]].get("id") is None
    assert [doc.nodes[i].get("id") for i in unused] == ["gone"]


def test_only_takes_known_kinds():
    assert parse_kinds("specks, invisible") == ("specks", "invisible")
    assert parse_kinds(None) == ("invisible",)
    with pytest.raises(ConfigError, match="--only takes"):
        parse_kinds("invisible,everything")


@pytest.mark.parametrize("name", ["logos/ember-tomster.svg", "logos/foundation.svg"])
def test_corpus_files_fixed_text_is_proven_against_the_original(corpus_dir, settings,
                                                                render_pool, name):
    path = corpus_dir / name
    if not path.exists():
        pytest.skip(f"{name} is not in the corpus")
    original = path.read_bytes()
    fixed = fix_text(original, str(path), ("invisible",), settings, render_pool)
    assert fixed.changed  # bench_fix: both lose elements with no visible effect
    assert parse_document(fixed.text, "fixed.svg")  # still well-formed SVG
    assert independent_check(fixed.original, fixed.text, render_pool, settings) == []
    blank = [sum(not line.strip() for line in t.splitlines()) for t in (fixed.original, fixed.text)]
    assert blank[1] <= blank[0]  # no blank line left behind


# --- the referee: Chromium draws the fixed file as it draws the original -----------------


@pytest.fixture(scope="module")
def referee_browser(request):
    """The session's warm Chromium (conftest's ``chromium`` fixture, tests/browser.py);
    skipped where the harness or a Chromium is missing."""
    browser = pytest.importorskip("browser", reason="tests/browser.py (the Chromium harness) "
                                                    "is not in this tree")
    try:
        return request.getfixturevalue("chromium")
    except pytest.FixtureLookupError:
        if browser.find_chromium() is None:
            pytest.skip("no Chromium on this machine")
        chromium = browser.Chromium()
        request.addfinalizer(chromium.close)
        return chromium


@pytest.mark.parametrize("name", ["logos/ember-tomster.svg", "logos/foundation.svg",
                                  "logos/mailchimp-freddie.svg", "logos/github-octocat.svg"])
def test_chromium_draws_the_fixed_corpus_file_as_the_original(corpus_dir, settings,
                                                              render_pool, referee_browser,
                                                              name):
    from browser import pixels_over

    from svgloo.engine.reading.files import encode_like
    from svgloo.engine.proving.proof import BROWSER_TOLERANCE

    path = corpus_dir / name
    original = path.read_bytes()
    fixed = fix_text(original, str(path), ("invisible",), settings, render_pool)
    assert fixed.changed
    before, after = referee_browser.render(
        [original, encode_like(fixed.text, original, str(path))], 384)
    assert pixels_over(before, after, BROWSER_TOLERANCE) == 0


def test_a_tidying_that_changes_the_picture_is_not_kept(settings, render_pool, monkeypatch):
    """The final proof is real: a tidying step that (wrongly) takes a visible shape away is
    caught by rendering, and the proven unit removal is kept without it."""
    import svgloo.engine.fixing.fix as fix_module

    real_tidy = fix_module.tidy

    def careless_tidy(text, name, referenced, limits):
        tidied, containers, definitions = real_tidy(text, name, referenced, limits)
        return tidied.replace(SHAPE, ""), containers + ["rect"], definitions

    monkeypatch.setattr(fix_module, "tidy", careless_tidy)
    fixed = fix(LAYER, settings, render_pool)
    assert SHAPE in fixed.text and "clip-path=" not in fixed.text  # the circle went
    assert fixed.containers == [] and fixed.definitions == []
    assert fixed.fell_back.startswith("removing the empty containers and unused definitions "
                                      "changes ")
    assert independent_check(LAYER, fixed.text, render_pool, settings) == []
