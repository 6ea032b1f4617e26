"""A quiet editor: findings grouped per element and per document, textures told apart from
strays, a cap per document with a summary, and the group's fix proven by the engine
(svgloo.lsp.convert / actions, no server process; the server's own path is in
test_lsp.py::test_specks_of_one_path_are_one_diagnostic_with_one_proven_fix)."""

from __future__ import annotations

import numpy as np
import pytest
from lsprotocol import types

from svgloo.engine.wording.plain_words import MAX_MESSAGE
from svgloo.engine.reading.document import parse_document
from svgloo.engine.proving.removal import changed_pixels, check_removal_text
from svgloo.engine.reading.units import apply_edits, extract_units, text_without
from svgloo.lsp import actions
from svgloo.lsp.convert import (MAX_DIAGNOSTICS, ROLLUP_MIN, TEXTURE_MIN, DiagnosticOptions,
                                LineIndex, capped, document_diagnostics, score_diagnostics)

URI = "file:///tmp/grain.svg"
SIZE = 192
SPECK = "h.5v.5h-.5z"  # 0.5 units: 3-4 px at 192 px, under the 0.02% speck threshold (7 px)


def grain_svg(specks: int) -> tuple[str, list[str]]:
    """One path: a big square, then ``specks`` tiny squares as further subpaths."""
    subpaths = ["M10 10h60v60h-60z"] + [f"M{75 + 2 * (k % 10)} {75 + 2 * (k // 10)}{SPECK}"
                                        for k in range(specks)]
    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">\n'
            f'<path id="grain" fill="#000" d="{" ".join(subpaths)}"/>\n</svg>\n')
    return text, subpaths


def scored(text: str) -> dict:
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    return score_text(text, "<grain>", ScoreSettings(size=SIZE)).result


def span(lines: LineIndex, text: str, needle: str) -> types.Range:
    start = text.index(needle)
    return lines.range(start, start + len(needle))


def test_specks_of_one_path_are_one_diagnostic_listing_each_subpath():
    text, subpaths = grain_svg(3)
    result = scored(text)
    # the engine calls each of the three small subpaths a speck...
    assert [r["index"] for r in result["units"]
            if any(f["kind"] == "speck" for f in r["findings"])] == [1, 2, 3]
    lines = LineIndex(text)
    diags = score_diagnostics(result, lines, DiagnosticOptions(), version=4, uri=URI)
    # ...and the editor shows them as one diagnostic on the path, not three
    [speck] = [d for d in diags if d.code == "speck"]
    assert len(diags) == 1
    assert speck.message.startswith('3 specks in path#grain')
    assert "stray points or slivers?" in speck.message
    assert speck.severity == types.DiagnosticSeverity.Information
    related = speck.related_information
    assert [r.location.range for r in related] == [span(lines, text, s) for s in subpaths[1:]]
    assert all(r.location.uri == URI for r in related)
    assert speck.range == types.Range(start=related[0].location.range.start,
                                      end=related[-1].location.range.end)
    assert speck.data["units"] == [1, 2, 3] and speck.data["version"] == 4


def test_many_specks_in_one_path_are_a_texture_not_strays():
    text, subpaths = grain_svg(TEXTURE_MIN + 2)
    result = scored(text)
    assert sum(bool(r["findings"]) for r in result["units"]) == TEXTURE_MIN + 2
    diags = score_diagnostics(result, LineIndex(text), DiagnosticOptions(), uri=URI)
    [texture] = diags
    assert texture.severity == types.DiagnosticSeverity.Hint
    assert "texture" in texture.message and "stray" not in texture.message
    assert len(texture.related_information) == TEXTURE_MIN + 2


# What the engine's proof (engine proof.py) says of a unit it proved removable.
PROVEN = {"status": "proven", "reason": "removed together with the other proven units: "
          "CairoSVG and resvg at 64, 384 and 1024 px: no pixel moves by more than 2/255 in any "
          "channel, alpha included (on any page colour). Removed alone: CairoSVG at 384 px "
          "over white, within 2/255 (its leave-one-out); it is neither a subpath overlapping "
          "other proven subpaths of its path nor an element another refers to, the ways one "
          "unit can undo another's removal"}


def row(index: int, start: int, end: int, **kw) -> dict:
    visible = kw.pop("visible", True)
    return {"index": index, "tag": kw.pop("tag", "rect"), "id": None, "kind": "element",
            "subpath": None, "offsets": [start, end], "delta": kw.pop("delta", 0.0),
            "verdict": kw.pop("verdict", "neutral"), "footprint_pixels": kw.pop("px", 5),
            "visible": visible, "findings": kw.pop("findings", []),
            "removal": kw.pop("removal", None) or (
                {"status": "visible", "reason": "its footprint"} if visible else PROVEN)}


SPECK_FINDING = {"kind": "speck", "message": "speck: visible on 5 px", "threshold": 0.0002}


def many_elements(n: int, **kw) -> tuple[str, dict]:
    """A document of ``n`` separate <rect>s, one a line, and a result whose rows are
    given ``kw``."""
    head = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">\n'
    rect = '<rect x="1" y="1" width="1" height="1"/>\n'
    text = head + rect * n + "</svg>\n"
    rows = [row(k, len(head) + k * len(rect), len(head) + (k + 1) * len(rect) - 1, **kw)
            for k in range(n)]
    return text, {"render_size": 384, "units": rows, "reference": {"source": "ref.png"}}


def test_a_finding_in_many_elements_is_one_diagnostic_on_the_root():
    text, result = many_elements(ROLLUP_MIN, findings=[SPECK_FINDING])
    lines = LineIndex(text)
    [rollup] = score_diagnostics(result, lines, DiagnosticOptions(), uri=URI)
    assert rollup.range == span(lines, text, "<svg")
    assert rollup.message.startswith(f"{ROLLUP_MIN} elements are specks")
    assert "texture or fine detail" in rollup.message  # ROLLUP_MIN >= TEXTURE_MIN
    assert len(rollup.related_information) == ROLLUP_MIN
    # one element fewer: each is shown where it is
    text, result = many_elements(ROLLUP_MIN - 1, findings=[SPECK_FINDING])
    diags = score_diagnostics(result, LineIndex(text), DiagnosticOptions(), uri=URI)
    assert len(diags) == ROLLUP_MIN - 1 and all(d.code == "speck" for d in diags)
    # each carries its own detail (the finding's numbers) as related information on itself
    assert all([r.location.range for r in d.related_information] == [d.range] for d in diags)
    assert all(r.message.endswith(SPECK_FINDING["message"])
               for d in diags for r in d.related_information)
    assert all(len(d.message) <= MAX_MESSAGE for d in diags)


def test_the_invisible_message_states_the_rule_that_was_checked():
    text, result = many_elements(1, visible=False, px=0)
    [hint] = score_diagnostics(result, LineIndex(text), DiagnosticOptions(), uri=URI)
    # plain words in the message, the engine's proof in its own words beneath it
    assert hint.message == "rect: no visible effect: safe to remove"
    [proof] = hint.related_information
    assert proof.message.endswith(PROVEN["reason"]) and proof.location.range == hint.range
    assert hint.tags == [types.DiagnosticTag.Unnecessary]
    # a unit without a footprint that the proof did not vouch for gets no such hint
    result["units"][0]["removal"] = {"status": "unverified", "reason": "it uses CSS filter"}
    [plain] = score_diagnostics(result, LineIndex(text), DiagnosticOptions())
    assert plain.code == "unverified" and not plain.tags and plain.data is None


def test_the_cap_keeps_the_most_severe_and_says_how_many_more():
    n = MAX_DIAGNOSTICS + 5
    text, result = many_elements(n, verdict="harmful", delta=-0.01)
    result["units"][-1].update(verdict="neutral", visible=False, footprint_pixels=0,
                               removal=PROVEN)
    lines = LineIndex(text)
    diags = document_diagnostics(result, None, lines, DiagnosticOptions(), uri=URI)
    assert len(diags) == MAX_DIAGNOSTICS
    *kept, summary = diags
    # the Warnings come first (in document order), the Hint goes into the summary
    assert [d.code for d in kept] == ["harmful"] * (MAX_DIAGNOSTICS - 1)
    assert [d.range.start.line for d in kept] == list(range(1, MAX_DIAGNOSTICS))
    left = n - (MAX_DIAGNOSTICS - 1)
    assert summary.message.startswith(f"{left} more svgloo diagnostics not shown "
                                      f"({left - 1} harmful, 1 invisible)")
    assert "maxPerDocument" in summary.message and len(summary.message) <= MAX_MESSAGE
    assert summary.range == span(lines, text, "<svg")
    # a client's setting: 0 means no cap
    diags = document_diagnostics(result, None, lines,
                                 DiagnosticOptions(max_per_document=0), uri=URI)
    assert len(diags) == n
    assert capped(diags[:3], lines, 3) == diags[:3]


def test_the_group_fix_removes_every_speck_proven_by_the_engine():
    text, subpaths = grain_svg(3)
    result = scored(text)
    lines = LineIndex(text)
    [speck] = score_diagnostics(result, lines, DiagnosticOptions(), version=1, uri=URI)
    us = extract_units(parse_document(text, "<grain>"))
    members = actions.group_units(us, lines, speck.data)
    assert [u.index for u in members] == [1, 2, 3]
    allowed = actions.group_allowance(members, speck.data)
    assert allowed == {r["index"]: r["footprint_pixels"] for r in result["units"][1:]}
    check = check_removal_text(text, "<grain>", [1, 2, 3], size=SIZE, allowed=allowed)
    assert check.removable == (1, 2, 3)
    action = actions.remove_group_action(URI, 1, lines, us, members, check, speck)
    assert action.title.startswith("Remove these 3 specks (proven by rendering")
    [change] = action.edit.document_changes
    fixed = apply_edits(text, [_engine_edit(lines, e) for e in change.edits])
    assert fixed == text_without(us, {1, 2, 3})
    assert all(s not in fixed for s in subpaths[1:]) and subpaths[0] in fixed
    # independently: the picture lost the specks' pixels and nothing else
    from svgloo.engine.rendering.render import over_white, render_rgba

    before = over_white(render_rgba(text, SIZE))
    after = over_white(render_rgba(fixed, SIZE))
    assert 0 < changed_pixels(before, after) <= sum(allowed.values())
    # a stale diagnostic (the text moved) offers nothing
    moved = text.replace("<path", "<path class='x'")
    assert actions.group_units(extract_units(parse_document(moved, "m")), LineIndex(moved),
                               speck.data) is None


def _engine_edit(lines: LineIndex, e: types.TextEdit):
    from svgloo.engine.reading.units import TextEdit

    return TextEdit(lines.offset(e.range.start), lines.offset(e.range.end), e.new_text)


def test_an_allowance_never_lets_units_take_a_shape_they_draw_together():
    """Two identical small squares on top of each other each change nothing alone (an
    allowance of 0 each); removing both erases the square: the proof keeps one. (2 px a
    unit: the squares' edges are on pixel edges, so one alone changes no pixel.)"""
    sq = '<rect x="40" y="40" width="4" height="4" fill="#000"/>'
    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 96 96">'
            f'<rect x="0" y="0" width="10" height="10" fill="#c00"/>{sq}{sq}</svg>')
    check = check_removal_text(text, "<twins>", [1, 2], size=SIZE, allowed={1: 0, 2: 0})
    assert len(check.removable) == 1 and len(check.dropped) == 1
    # a unit allowed what it draws alone may go; with no allowance it may not
    dot = text.replace(sq + sq, sq)
    with_allowance = check_removal_text(dot, "<dot>", [1], size=SIZE, allowed={1: 10_000})
    assert with_allowance.removable == (1,)
    assert check_removal_text(dot, "<dot>", [1], size=SIZE).removable == ()


@pytest.mark.parametrize("n", [2, 5])
def test_element_numbers_follow_split_paths(n):
    from svgloo.lsp.convert import element_of

    rows = ([row(0, 0, 1)] + [dict(row(1 + k, 2 + k, 3 + k), kind="subpath", subpath=k)
                              for k in range(n)]
            + [dict(row(1 + n, 50, 51), kind="subpath", subpath=0), row(2 + n, 60, 61)])
    assert element_of(rows) == [0] + [1] * n + [2, 3]
    assert np.array_equal(element_of([]), [])


def test_the_cap_is_a_setting():
    from svgloo.lsp.server import Settings

    assert Settings().diagnostics.max_per_document == MAX_DIAGNOSTICS
    assert Settings().updated({"diagnostics": {"maxPerDocument": 5}}) \
        .diagnostics.max_per_document == 5
    for bad in (-1, "7", True, 2.5):
        assert Settings().updated({"diagnostics": {"maxPerDocument": bad}}) \
            .diagnostics.max_per_document == MAX_DIAGNOSTICS


def test_a_bad_setting_is_named_and_its_default_used():
    from svgloo.engine.settings import DEFAULT_RENDER_SIZE
    from svgloo.lsp.server import Settings

    settings, problems = Settings().parsed({"renderSize": "big", "useDaemon": "false",
                                            "helpfulThreshold": 0.01, "backbone": "pixel",
                                            "diagnostics": {"harmful": 1, "invisible": False}})
    assert settings.render_size == DEFAULT_RENDER_SIZE and settings.use_daemon is True
    assert settings.diagnostics.harmful is True and settings.diagnostics.invisible is False
    assert (settings.helpful_threshold, settings.backbone) == (0.01, "pixel")
    assert sorted(problems) == ["diagnostics.harmful must be bool, not int",
                                "renderSize must be int, not str",
                                "useDaemon must be bool, not str"]
