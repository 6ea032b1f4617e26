"""Unit tests for svgloo.lsp.convert and svgloo.lsp.actions (no server process)."""

from __future__ import annotations

import numpy as np
import pytest
from lsprotocol import types
from lxml import etree

from svgloo.engine.reading.document import parse_document
from svgloo.engine.errors import InputError
from svgloo.engine.reading.units import apply_edits, extract_units
from svgloo.lsp import actions
from svgloo.lsp.convert import (UTF8, UTF16, UTF32, DiagnosticOptions, LineIndex,
                                chars_for_units, code_units, refusal_diagnostic,
                                score_diagnostics)

EMOJI = "\U0001F3B1"  # billiards ball: astral, 2 UTF-16 units, 4 UTF-8 bytes


def expected_position(text: str, offset: int, encoding: str) -> tuple[int, int]:
    """Independent reference: LSP position of a code-point offset (text with \\n only)."""
    line = text.count("\n", 0, offset)
    prefix = text[text.rfind("\n", 0, offset) + 1:offset]
    if encoding == UTF16:
        return line, len(prefix.encode("utf-16-le")) // 2
    if encoding == UTF8:
        return line, len(prefix.encode("utf-8"))
    return line, len(prefix)


@pytest.mark.parametrize("encoding", [UTF8, UTF16, UTF32])
def test_positions_round_trip_with_astral_characters(encoding):
    text = f"<svg>\n  <title>{EMOJI}é{EMOJI}</title><rect/>\n\u00e9<g/>\n"
    lines = LineIndex(text, encoding)
    for offset in range(len(text) + 1):
        pos = lines.position(offset)
        assert (pos.line, pos.character) == expected_position(text, offset, encoding)
        assert lines.offset(pos) == offset


def test_utf16_counts_surrogate_pairs():
    assert code_units(EMOJI, UTF16) == 2
    assert code_units(EMOJI, UTF8) == 4
    assert code_units(EMOJI, UTF32) == 1
    # A position inside a surrogate pair rounds down to the character's start.
    assert chars_for_units("a" + EMOJI + "b", 2, UTF16) == 1
    assert chars_for_units("a" + EMOJI + "b", 3, UTF16) == 2
    assert chars_for_units("ab", 99, UTF16) == 2


def test_harmful_range_after_emoji_title(tmp_path):
    """The engine's code-point offsets land on the element in UTF-16 and UTF-8."""
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    clean = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 36 36">'
             f"<title>{EMOJI} ball {EMOJI}</title>"
             '<circle fill="#31373D" cx="18" cy="18" r="14"/></svg>')
    stray = '<rect x="2" y="26" width="9" height="7" fill="#F4900C"/>'
    at = clean.index("</svg>")
    dirty = clean[:at] + stray + clean[at:]
    (tmp_path / "ball.ref.svg").write_text(clean, encoding="utf-8")
    run = score_text(dirty, str(tmp_path / "ball.svg"), ScoreSettings(size=96))
    for encoding in (UTF16, UTF8):
        diags = score_diagnostics(run.result, LineIndex(dirty, encoding), DiagnosticOptions(),
                                  version=7)
        warnings = [d for d in diags if d.severity == types.DiagnosticSeverity.Warning]
        assert len(warnings) == 1
        rng = warnings[0].range
        assert (rng.start.line, rng.start.character) == expected_position(dirty, at, encoding)
        assert (rng.end.line, rng.end.character) == expected_position(dirty, at + len(stray),
                                                                      encoding)
        assert warnings[0].code == "harmful" and warnings[0].data["version"] == 7
    # UTF-16 and UTF-8 columns really differ here (the test would not notice otherwise).
    assert expected_position(dirty, at, UTF16) != expected_position(dirty, at, UTF8)


def test_bom_shifts_engine_offsets():
    text = "\ufeff<svg xmlns='http://www.w3.org/2000/svg'><rect width='1' height='1'/></svg>"
    doc = parse_document(text, "bom.svg")
    el = doc.elements[1]
    lines = LineIndex(text, UTF16)
    assert lines.engine_slice(el.start, el.end) == "<rect width='1' height='1'/>"
    assert lines.engine_range(el.start, el.end).start.character == text.index("<rect")


def test_refusal_diagnostic_at_parse_error():
    text = f'<svg xmlns="http://www.w3.org/2000/svg">\n<title>{EMOJI}</title><rect>\n</svg>\n'
    with pytest.raises(InputError) as info:
        parse_document(text, "bad.svg")
    with pytest.raises(etree.XMLSyntaxError) as lx:
        etree.fromstring(text.encode())
    d = refusal_diagnostic(info.value, LineIndex(text, UTF16))
    assert d.severity == types.DiagnosticSeverity.Error
    assert lx.value.lineno - 1 == 2  # where libxml2 noticed: </svg>
    # Where the error is: the <rect> left open, after a title holding an astral
    # character (2 UTF-16 code units).
    line1 = text.split("\n")[1]
    col = len(line1[:line1.index("<rect")].encode("utf-16-le")) // 2
    assert (d.range.start.line, d.range.start.character) == (1, col)
    assert (d.range.end.line, d.range.end.character) == (1, col + len("<rect"))
    assert "malformed XML" in d.message


def test_a_refusal_that_is_not_the_documents_fault_is_a_warning_on_the_root_tag():
    from svgloo.engine.errors import LimitError
    from svgloo.engine.limits import Limits

    text = (f'\ufeff<?xml version="1.0"?>\n<!-- {EMOJI} <svg> in a comment -->\n'
            f'<svg xmlns="http://www.w3.org/2000/svg">'
            + "<g>" * 20 + "</g>" * 20 + "</svg>\n")
    with pytest.raises(LimitError) as info:
        parse_document(text, "deep.svg", Limits(max_nesting_depth=10))
    root = text.index("<svg xmlns")
    for enc in (UTF8, UTF16, UTF32):
        d = refusal_diagnostic(info.value, LineIndex(text, enc))
        assert d.severity == types.DiagnosticSeverity.Warning and d.source == "svgloo"
        assert d.code == "LimitError"
        assert d.message == ("svgloo did not analyse this document: elements nest more "
                             "than 10 levels deep (svgloo's nesting limit); flatten some "
                             "groups to analyse it")
        assert (d.range.start.line, d.range.start.character) == expected_position(text, root,
                                                                                  enc)
        assert (d.range.end.line, d.range.end.character) == expected_position(
            text, root + len("<svg"), enc)


def test_an_internal_error_is_a_warning_too():
    text = '<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>'
    d = refusal_diagnostic(ZeroDivisionError("division by zero"), LineIndex(text, UTF16))
    assert d.severity == types.DiagnosticSeverity.Warning
    assert d.message.startswith("svgloo did not analyse this document: internal error "
                                "(ZeroDivisionError: division by zero)")
    assert (d.range.start.character, d.range.end.character) == (0, 4)
    # no <svg> tag to be found: the start of the document
    d = refusal_diagnostic(ZeroDivisionError("x"), LineIndex("<!-- <svg> -->", UTF16))
    assert d.range.start == d.range.end == types.Position(line=0, character=0)


def test_unclosed_tag_in_a_one_line_file():
    from svgloo.lsp.convert import unclosed_tag_span

    text = ('<svg xmlns="http://www.w3.org/2000/svg"><g><!-- <g> --><rect/></g>'
            '<g id="open"><rect/></svg>')
    with pytest.raises(InputError) as info:
        parse_document(text, "bad.svg")
    d = refusal_diagnostic(info.value, LineIndex(text, UTF16))
    at = text.index('<g id="open"')
    assert (d.range.start.character, d.range.end.character) == (at, at + 2)
    end = text.index("</svg>")
    assert unclosed_tag_span(text, "g", 0, end) == (at, at + 2)
    assert unclosed_tag_span(text, "g", 1, end) is None


def test_split_path_keeps_stroke_render(corpus_dir):
    """Splitting a stroked compound path draws the same picture."""
    from svgloo.engine.rendering.render import render_rgba

    text = (corpus_dir / "feather" / "thumbs-down.svg").read_text()
    us = extract_units(parse_document(text, "thumbs-down.svg"))
    [element] = list(us.splits)
    edit = actions.split_path_edit(us, element)
    after = apply_edits(text, [edit])
    root = etree.fromstring(after.encode())
    paths = root.findall(".//{http://www.w3.org/2000/svg}path")
    assert len(paths) == len(us.splits[element].subpaths)
    for p in paths:
        assert p.get("d").lstrip().startswith("M")
    before_px = render_rgba(text, 96).astype(int)
    after_px = render_rgba(after, 96).astype(int)
    assert np.abs(before_px - after_px).max() <= 2


def test_purity_diagnostics_name_the_mixed_concepts():
    text = ('<svg xmlns="http://www.w3.org/2000/svg"><title>' + EMOJI + '</title>'
            '<path d="M0 0h4v4z M6 6h2v2z"/><rect width="1" height="1"/></svg>')
    doc = parse_document(text, "mix.svg")
    spans = [(u.start, u.end) for u in extract_units(doc, False).units]
    structure = {"concepts": [{"name": "wheel"}, {"name": "frame"}],
                 "attribution": [[0.6, 0.4], [1.0, 0.0]],
                 "units": [{"index": 0, "active": True, "primary": "wheel", "purity": 0.6 * 0.6},
                           {"index": 1, "active": True, "primary": "wheel", "purity": 1.0}],
                 "metrics": {"purity": 0.7}}
    from svgloo.lsp.convert import purity_diagnostics, structure_rows
    lines = LineIndex(text, UTF16)
    diags = purity_diagnostics(structure_rows(structure, spans), lines, DiagnosticOptions(), 3)
    assert len(diags) == 1
    [d] = diags
    assert d.severity == types.DiagnosticSeverity.Information and d.code == "low-purity"
    assert "wheel (60%)" in d.message and "frame (40%)" in d.message
    start = text.index("<path")
    assert d.range.start.character == len(text[:start].encode("utf-16-le")) // 2
    # The split quick fix applies to that element.
    us = extract_units(doc)
    action = actions.split_path_action("file:///mix.svg", 3, lines, us, d)
    assert action is not None
    edit = action.edit.document_changes[0]
    assert edit.text_document.version == 3
    assert edit.edits[0].new_text.count("<path") == 2


def test_purity_diagnostics_skip_negligible_shares_and_one_paint_regions():
    text = '<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0h4v4z M6 6h2v2z"/></svg>'
    spans = [(text.index("<path"), text.index("/>") + 2)]
    lines = LineIndex(text, UTF16)
    from svgloo.lsp.convert import purity_diagnostics, structure_rows

    def diagnose(concepts, weights):
        structure = {"concepts": concepts, "attribution": [weights],
                     "units": [{"index": 0, "active": True, "primary": 0,
                                "purity": max(weights) / sum(weights)}]}
        return purity_diagnostics(structure_rows(structure, spans), lines, DiagnosticOptions())

    named = [{"name": "wheel"}, {"name": "frame"}, {"name": "bell"}]
    [d] = diagnose(named, [0.55, 0.445, 0.005])
    assert "wheel (55%)" in d.message and "frame (44%)" in d.message
    assert "bell" not in d.message and "(0%)" not in d.message
    black = [{"name": f"black region, {where}", "source": "regions", "color": "#000000"}
             for where in ("top", "left", "bottom")]
    assert diagnose(black, [0.34, 0.33, 0.33]) == []
    assert diagnose(named, [0.95, 0.04, 0.01]) == []


def test_remove_all_invisible_is_one_non_overlapping_edit_set():
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    ghost1 = '<rect x="50" y="50" width="4" height="4"/>'      # outside the viewBox
    ghost2 = '<circle cx="-9" cy="-9" r="2"/>'
    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 36 36">\n  ' + ghost1 +
            '\n  <circle fill="#31373D" cx="18" cy="18" r="14"/>\n  ' + ghost2 + '\n</svg>\n')
    run = score_text(text, "<ghosts>", ScoreSettings(size=96))
    lines = LineIndex(text, UTF16)
    diags = score_diagnostics(run.result, lines, DiagnosticOptions(), 4)
    hints = [d for d in diags if d.code == "invisible"]
    assert len(hints) == 2
    assert all(d.tags == [types.DiagnosticTag.Unnecessary] for d in hints)
    us = extract_units(parse_document(text, "<ghosts>"))
    candidates = actions.invisible_units(us, run.result)
    assert len(candidates) == 2
    check = actions.bulk_check(us, run.result)  # proven by the engine while scoring
    assert check.complete and check.removable == tuple(candidates)
    action = actions.remove_invisible_action("file:///g.svg", 4, lines, us, check, hints)
    assert action is not None and "(2, proven together)" in action.title
    edits = action.edit.document_changes[0].edits
    offsets = [(lines.offset(e.range.start), lines.offset(e.range.end)) for e in edits]
    assert all(a[1] <= b[0] for a, b in zip(offsets, offsets[1:]))  # sorted, disjoint
    out = text
    for (start, end), e in sorted(zip(offsets, edits), reverse=True):
        out = out[:start] + e.new_text + out[end:]
    assert out == text.replace(ghost1, "").replace(ghost2, "")


def test_unverified_units_get_a_reason_and_no_fix_and_disagreement_is_information():
    """A unit CairoSVG draws nothing of, but browsers do (a CSS filter, a blurred shadow),
    is never hinted as removable: a plain hint says why, with no quick fix; where the
    renderers' pictures differ, an Information diagnostic sits on the element."""
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">\n'
            '<defs><filter id="soft"><feGaussianBlur stdDeviation="6"/></filter></defs>\n'
            '<circle id="shadow" cx="50" cy="50" r="25" filter="url(#soft)"/>\n'
            '<rect width="0" height="10" style="filter: invert(1)"/>\n</svg>\n')
    run = score_text(text, "<shadow>", ScoreSettings(backbone="pixel", size=96))
    lines = LineIndex(text, UTF16)
    diags = score_diagnostics(run.result, lines, DiagnosticOptions(), 1, "file:///s.svg")
    assert not [d for d in diags if d.code == "invisible"]
    [unverified] = [d for d in diags if d.code == "unverified"]
    # plain words in the message; the exact feature in the related information
    assert unverified.message == "rect: looks invisible, but it uses a filter: check before " \
                                 "removing" and not unverified.tags
    assert "CSS filter: invert(1)" in unverified.related_information[0].message
    assert unverified.data is None  # no fix data: no Remove quick fix
    # on each element with a feature CairoSVG draws differently: the shadow first
    differ = [d for d in diags if d.code == "renderers-differ"]
    assert [d.range.start.line for d in differ] == [2, 3]
    assert differ[0].severity == types.DiagnosticSeverity.Information
    assert "browsers draw this differently" in differ[0].message
    detail = differ[0].related_information[0].message
    assert "resvg" in detail and "shadow" in detail
    us = extract_units(parse_document(text, "<shadow>"))
    assert actions.invisible_units(us, run.result) == []
    assert actions.bulk_check(us, run.result) is None


def test_current_units_is_none_for_bad_text_and_lets_bugs_through(monkeypatch):
    """A text that no longer parses has no units (no fix is offered); a bug in the engine
    is not swallowed as "no units" but reaches the handler's log."""
    import svgloo.lsp.actions as actions

    assert actions.current_units("<svg xmlns='http://www.w3.org/2000/svg'><rect>", "x") is None
    assert actions.current_units("<html/>", "x") is None

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(actions, "extract_units", broken)
    with pytest.raises(RuntimeError):
        actions.current_units("<svg xmlns='http://www.w3.org/2000/svg'/>", "x")



def test_split_path_numbers_each_new_path_id_by_its_own_subpath():
    """Each split-off path gets the id of its own subpath (``id-2``, ``id-3``), not the last
    subpath's: the renaming function is made in a loop, so it must not read the loop variable
    late."""
    text = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 20">\n'
            '  <path id="ring" fill="red" d="M0 0h4v4z M6 6h2v2z M10 10h3v3z"/>\n</svg>\n')
    us = extract_units(parse_document(text, "ring.svg"))
    [element] = list(us.splits)
    after = apply_edits(text, [actions.split_path_edit(us, element)])
    paths = etree.fromstring(after.encode()).findall(".//{http://www.w3.org/2000/svg}path")
    assert [p.get("id") for p in paths] == ["ring", "ring-2", "ring-3"]
    assert [p.get("d").split()[0] for p in paths] == ["M0", "M6", "M10"]
