"""The code-action request's logic as plain functions (svgloo.lsp.actions.quick_fixes and
friends): diagnostics and the engine's proofs in, code actions out, no server and no
rendering. The edits are checked by applying them to the text and comparing with the text
written without those elements by hand."""

from __future__ import annotations

from lsprotocol import types

from svgloo.engine.reading.document import parse_document
from svgloo.engine.proving.proof import RemovalCheck
from svgloo.engine.reading.units import extract_units
from svgloo.lsp import actions
from svgloo.lsp.convert import (DiagnosticCode, LineIndex, UnitFinding, fix_data, group_data,
                                text_hash)

URI = "file:///tmp/fixes.svg"
RED = '<rect id="red" x="1" y="1" width="8" height="8" fill="red"/>'
GHOST1 = '<rect id="g1" x="50" y="50" width="4" height="4"/>'
GHOST2 = '<circle id="g2" cx="-9" cy="-9" r="2"/>'
DOT1 = '<rect id="d1" x="20" y="20" width=".2" height=".2"/>'
DOT2 = '<rect id="d2" x="22" y="22" width=".2" height=".2"/>'
TEXT = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 36 36">\n  '
        + "\n  ".join([RED, GHOST1, GHOST2, DOT1, DOT2]) + "\n</svg>\n")


def units():
    return extract_units(parse_document(TEXT, "<fixes>"))


def row(us, ident: str) -> dict:
    """The score/1 row of the element with this id (only what the fixes read)."""
    [u] = [u for u in us.units if us.doc.nodes[u.element].get("id") == ident]
    return {"index": u.index, "kind": u.kind, "offsets": [u.start, u.end],
            "footprint_pixels": 3}


def diagnostic(code, data, lines: LineIndex, source="svgloo") -> types.Diagnostic:
    start, end = data["offsets"][0] if "group" in data else data["offsets"]
    return types.Diagnostic(range=lines.engine_range(start, end), message=str(code),
                            code=code, source=source, data=data)


def applied(text: str, action: types.CodeAction, lines: LineIndex) -> str:
    edits = action.edit.document_changes[0].edits
    spans = [(lines.offset(e.range.start), lines.offset(e.range.end), e.new_text)
             for e in edits]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def test_each_diagnostic_gets_its_fix_and_others_none():
    us, lines = units(), LineIndex(TEXT)
    red, ghost = row(us, "red"), row(us, "g1")
    harmful = diagnostic(DiagnosticCode.HARMFUL, fix_data(red, lines, 3), lines)
    # from the client, codes arrive as plain strings
    invisible = diagnostic("invisible", fix_data(ghost, lines, 3), lines)
    summary = diagnostic(DiagnosticCode.MORE, {"offsets": [0, 4]}, lines)   # no fix
    foreign = diagnostic("harmful", fix_data(ghost, lines, 3), lines, source="xmllint")
    everything = types.Range(start=types.Position(0, 0), end=types.Position(9, 0))
    ours = actions.requested_diagnostics([summary, invisible, foreign, harmful], everything)
    assert foreign not in ours and {id(d) for d in ours} == {id(summary), id(invisible),
                                                             id(harmful)}
    fixes = actions.quick_fixes(URI, 3, lines, us, ours, {}, None)
    # the harmful unit's removal is the preferred fix and comes first
    assert [a.title for a in fixes] == ["Remove rect#red", "Remove rect#g1"]
    assert fixes[0].is_preferred and not fixes[1].is_preferred
    assert fixes[0].diagnostics == [harmful] and fixes[1].diagnostics == [invisible]
    assert fixes[0].edit.document_changes[0].text_document.version == 3
    assert applied(TEXT, fixes[0], lines) == TEXT.replace(RED, "")
    assert applied(TEXT, fixes[1], lines) == TEXT.replace(GHOST1, "")


def test_a_stale_diagnostic_gets_no_fix():
    us, lines = units(), LineIndex(TEXT)
    data = fix_data(row(us, "red"), lines, 3)
    data["hash"] = text_hash("<rect/>")  # computed on other text
    stale = diagnostic(DiagnosticCode.HARMFUL, data, lines)
    assert actions.quick_fixes(URI, 3, lines, us, [stale], {}, None) == []


def test_a_group_gets_the_proven_removal_and_none_without_a_proof():
    us, lines = units(), LineIndex(TEXT)
    members = [UnitFinding(DiagnosticCode.SPECK, row(us, i), "", {}) for i in ("d1", "d2")]
    group = diagnostic(DiagnosticCode.SPECK,
                       group_data(DiagnosticCode.SPECK, members, lines, 3), lines)
    [request] = actions.group_proof_requests(us, lines, [group])
    assert request.position == 0 and request.allowed == {m.row["index"]: 3 for m in members}
    both = tuple(request.candidates)
    assert both == tuple(m.row["index"] for m in members)
    assert actions.quick_fixes(URI, 3, lines, us, [group], {}, None) == []  # not proven
    proven = RemovalCheck(both, both, (), 1)
    [fix] = actions.quick_fixes(URI, 3, lines, us, [group], {0: proven}, None)
    assert fix.title.startswith("Remove these 2 specks (proven by rendering")
    assert applied(TEXT, fix, lines) == TEXT.replace(DOT1, "").replace(DOT2, "")
    one = RemovalCheck(both, both[:1], both[1:], 1)
    [fix] = actions.quick_fixes(URI, 3, lines, us, [group], {0: one}, None)
    assert fix.title.startswith("Remove 1 of these 2 specks (1 must stay")
    assert applied(TEXT, fix, lines) == TEXT.replace(DOT1, "")


def test_units_with_no_visible_effect_get_the_bulk_removal_scoring_proved():
    us, lines = units(), LineIndex(TEXT)
    ghosts = [row(us, "g1"), row(us, "g2")]
    rows = []
    for u in us.units:  # a result computed on exactly this text
        proven = u.index in {g["index"] for g in ghosts}
        rows.append({"index": u.index, "offsets": [u.start, u.end],
                     "removal": {"status": "proven" if proven else "needed"}})
    result = {"units": rows, "bulk_removal": {"units": [g["index"] for g in ghosts],
                                              "checked": "CairoSVG and resvg"}}
    hints = [diagnostic(DiagnosticCode.INVISIBLE, fix_data(g, lines, 3), lines)
             for g in ghosts]
    titles = [a.title for a in actions.quick_fixes(URI, 3, lines, us, hints, {}, result)]
    assert titles == ["Remove rect#g1", "Remove circle#g2",
                      "Remove all elements with no visible effect (2, proven together)"]
    # without a result computed on this text, only each unit's own fix
    assert len(actions.quick_fixes(URI, 3, lines, us, hints, {}, None)) == 2
