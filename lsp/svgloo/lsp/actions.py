"""Quick fixes: remove a unit, remove every unit with no visible effect, split a compound
path. Every fix is computed from the document's *current* text (re-parsed here) after
checking that the unit the diagnostic was about is still there, and is returned as a
versioned workspace edit, so a client never applies it to newer text.

``quick_fixes`` is the code-action request's logic (which fix each diagnostic gets); the
server only hands it the request's diagnostics and, for group diagnostics, the engine's
removal proofs (``group_proof_requests``), which need rendering."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lsprotocol import types

from svgloo.engine.wording.describe import describe_unit, unit_row_names
from svgloo.engine.reading.document import parse_document
from svgloo.engine.errors import SvglooError
from svgloo.engine.reading.pathdata import standalone_subpath
from svgloo.engine.result_types import ScoreResult, UnitRow
from svgloo.engine.reading.units import TextEdit, UnitSet, edits_keeping, extract_units, removal_edit

from .convert import SOURCE, DiagnosticCode, LineIndex, text_hash

_ID_ATTR = re.compile(r"""(\sid\s*=\s*)(["'])(.*?)\2""", re.S)


def current_units(text: str, name: str, subpaths: bool = True) -> UnitSet | None:
    """The current text's units, or None when it no longer parses (malformed, over a
    limit: the engine's SvglooError). Anything else is a bug and reaches the log."""
    try:
        return extract_units(parse_document(text, name), subpaths)
    except SvglooError:
        return None


def still_there(lines: LineIndex, data: dict) -> bool:
    """Is the text the diagnostic was computed on still at the same offsets?"""
    try:
        start, end = data["offsets"]
        return text_hash(lines.engine_slice(int(start), int(end))) == data["hash"]
    except (KeyError, TypeError, ValueError):
        return False


def find_unit(us: UnitSet, data: dict):
    """The unit of the current text matching a diagnostic's data (same kind and span)."""
    start, end = (int(v) for v in data["offsets"])
    for u in us.units:
        if u.start == start and u.end == end and u.kind == data.get("kind", u.kind):
            return u
    return None


def to_lsp_edits(edits: list[TextEdit], lines: LineIndex) -> list[types.TextEdit]:
    return [types.TextEdit(range=lines.engine_range(e.start, e.end), new_text=e.new_text)
            for e in sorted(edits, key=lambda e: e.start)]


def versioned_edit(uri: str, version: int | None, edits: list[types.TextEdit],
                   versioned: bool = True) -> types.WorkspaceEdit:
    if not versioned:
        return types.WorkspaceEdit(changes={uri: edits})
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=edits)])


def _action(title: str, uri: str, version, edits, lines, diagnostics, versioned,
            preferred=False, kind=types.CodeActionKind.QuickFix) -> types.CodeAction:
    return types.CodeAction(title=title, kind=kind, diagnostics=diagnostics or None,
                            is_preferred=preferred or None,
                            edit=versioned_edit(uri, version, to_lsp_edits(edits, lines),
                                                versioned))


def remove_unit_action(uri: str, version, lines: LineIndex, us: UnitSet,
                       diagnostic: types.Diagnostic, versioned: bool = True):
    data = diagnostic.data if isinstance(diagnostic.data, dict) else None
    if not data or "offsets" not in data or not still_there(lines, data):
        return None
    u = find_unit(us, data)
    if u is None:
        return None
    edit = removal_edit(us, u.index)
    title = f"Remove {describe_unit(unit_row_names(u))}"  # the unit's name in the message
    return _action(title, uri, version, [edit], lines, [diagnostic], versioned,
                   preferred=diagnostic.code == DiagnosticCode.HARMFUL)


def invisible_units(us: UnitSet, result: ScoreResult) -> list[int]:
    """The units the result *proves* removable (``removal.status == "proven"``: no change
    in CairoSVG's or resvg's picture, see engine/proof.py), when the result was computed on
    exactly this text (every unit matches); else none. ``visible`` alone never offers a
    deletion: a unit CairoSVG does not draw may still show in a browser."""
    rows = result.get("units", [])
    if len(rows) != len(us.units):
        return []
    for row, u in zip(rows, us.units):
        if [u.start, u.end] != list(row["offsets"]):
            return []
    return [row["index"] for row in rows if _removal_status(row) == "proven"]


def _removal_status(row: UnitRow) -> str | None:
    removal = row.get("removal")
    return removal.get("status") if removal else None


def bulk_check(us: UnitSet, result: ScoreResult):
    """The result's proven bulk removal (``bulk_removal``) as an ``engine.proof.
    RemovalCheck``, when the result was computed on exactly this text; else None."""
    from svgloo.engine.proving.proof import RemovalCheck

    bulk = result.get("bulk_removal")
    proven = invisible_units(us, result)
    if not bulk or not proven:
        return None
    removable = tuple(sorted(int(i) for i in bulk.get("units", [])))
    return RemovalCheck(tuple(proven), removable,
                        tuple(sorted(set(proven) - set(removable))), 0,
                        bulk.get("checked", ""))


def remove_invisible_action(uri: str, version, lines: LineIndex, us: UnitSet, check,
                            diagnostics: list[types.Diagnostic], versioned: bool = True):
    """One edit set removing the units that rendering proved removable together
    (``engine.proof.RemovalCheck``); the title says how many of the proven units that is.
    Not offered when fewer than two remain (each unit's own fix covers one)."""
    removable = set(check.removable)
    if len(removable) < 2:
        return None
    edits = edits_keeping(us, {u.index for u in us.units} - removable)
    n, k = len(check.requested), len(removable)
    if k == n:
        title = f"Remove all elements with no visible effect ({n}, proven together)"
    else:
        title = (f"Remove {k} of {n} elements with no visible effect ({n - k} must stay: "
                 f"removing {'it' if n - k == 1 else 'them'} too would change the picture)")
    return _action(title, uri, version, edits, lines, diagnostics, versioned)


def group_units(us: UnitSet, lines: LineIndex, data: dict) -> list | None:
    """The current text's units of a group diagnostic (``convert.group_data``), when
    every member's text is still at the same offsets; else None."""
    try:
        offsets = [(int(s), int(e)) for s, e in data["offsets"]]
        kinds = list(data.get("kinds") or [None] * len(offsets))
        if text_hash("\0".join(lines.engine_slice(s, e) for s, e in offsets)) != data["hash"]:
            return None
    except (KeyError, TypeError, ValueError):
        return None
    by_span = {(u.start, u.end, u.kind): u for u in us.units}
    members = [by_span.get((s, e, kind)) for (s, e), kind in zip(offsets, kinds)]
    return None if any(u is None for u in members) else members


def group_allowance(members: list, data: dict) -> dict[int, int] | None:
    """The pixels each member may change in a removal proof: its own footprint when the
    diagnostic was computed (a speck draws a little). None for units with no visible
    effect: their removal takes the engine's full proof (two renderers, alpha, 2/255)."""
    if data.get("group") == DiagnosticCode.INVISIBLE:
        return None
    return {u.index: int(fp) for u, fp in zip(members, data.get("footprints") or [])}


GROUP_NOUNS: dict[str, str] = {DiagnosticCode.SPECK: "specks",
                                 DiagnosticCode.INVISIBLE: "units with no visible effect",
                                 DiagnosticCode.MOSTLY_HIDDEN: "mostly hidden units"}


def remove_group_action(uri: str, version, lines: LineIndex, us: UnitSet, members: list,
                        check, diagnostic: types.Diagnostic, versioned: bool = True):
    """One edit set removing the members of a group diagnostic that the engine's removal
    proof (``engine.removal.check_removal`` with each member's footprint as its allowance)
    lets go together; None when none may."""
    removable = set(check.removable)
    if not removable:
        return None
    edits = edits_keeping(us, {u.index for u in us.units} - removable)
    noun = GROUP_NOUNS.get(str(diagnostic.code), "units")
    n, k = len(members), len(removable)
    proof = ("proven by rendering: the picture stays the same"
             if diagnostic.code == DiagnosticCode.INVISIBLE
             else "proven by rendering: nothing else changes")
    if k == n:
        title = f"Remove these {n} {noun} ({proof})"
    else:
        title = (f"Remove {k} of these {n} {noun} ({n - k} must stay: removing "
                 f"{'it' if n - k == 1 else 'them'} too would change more than "
                 f"{'it draws' if n - k == 1 else 'they draw'} alone)")
    return _action(title, uri, version, edits, lines, [diagnostic], versioned)


def _position_key(p: types.Position) -> tuple[int, int]:
    return p.line, p.character


def diagnostics_in_range(diagnostics: list[types.Diagnostic],
                         rng: types.Range) -> list[types.Diagnostic]:
    """The diagnostics a code-action request is about: those whose range overlaps the
    request's range (for a bare cursor: contains it). Clients send every diagnostic of
    the cursor's line, which in a one-line SVG is the whole file. Innermost first."""
    lo, hi = _position_key(rng.start), _position_key(rng.end)
    out = [d for d in diagnostics
           if _position_key(d.range.start) <= hi and lo <= _position_key(d.range.end)]
    return sorted(out, key=lambda d: (d.range.end.line - d.range.start.line,
                                      d.range.end.character - d.range.start.character))


def unique(actions: list[types.CodeAction]) -> list[types.CodeAction]:
    """One action per title: a unit with several diagnostics (no visible effect and
    mostly hidden) is removed by one entry, which names all of them."""
    out: dict[str, types.CodeAction] = {}
    for a in actions:
        if a.title in out:
            first = out[a.title]
            first.diagnostics = [*(first.diagnostics or []), *(a.diagnostics or [])]
            first.is_preferred = first.is_preferred or a.is_preferred
        else:
            out[a.title] = a
    return list(out.values())


def preferred_first(actions: list[types.CodeAction]) -> list[types.CodeAction]:
    """The preferred fix first (stable otherwise)."""
    return sorted(actions, key=lambda a: not a.is_preferred)


def _with_id(new_id: str, m: re.Match) -> str:
    """An ``id="..."`` attribute (``_ID_ATTR``'s match) with ``new_id`` as its value."""
    return f"{m.group(1)}{m.group(2)}{new_id}{m.group(2)}"


def split_path_edit(us: UnitSet, element: int) -> TextEdit | None:
    """Replace a compound ``<path>`` by one ``<path>`` per subpath, each with the same
    attributes (and children) and a standalone ``d``. An ``id`` stays on the first
    path; the others get ``id-2``, ``id-3``... Not offered when the id is referenced."""
    split = us.splits.get(element)
    if split is None:
        return None
    doc = us.doc
    el = doc.elements[element]
    source = doc.text[el.start:el.end]
    raw = doc.text[split.value_start:split.value_end].translate({9: 32, 10: 32, 13: 32})
    head = source[:split.value_start - el.start]
    tail = source[split.value_end - el.start:]
    ident = doc.nodes[element].get("id")
    if ident and re.search(r"#" + re.escape(ident) + r"\b", doc.text):
        return None
    line_start = doc.text.rfind("\n", 0, el.start) + 1
    indent = doc.text[line_start:el.start]
    sep = "\n" + indent if indent.strip() == "" and line_start > 0 else ""
    parts = []
    for sp in split.subpaths:
        h = head
        if ident and sp.index > 0:
            # the new id bound now: this subpath's, whenever the function runs
            h = _ID_ATTR.sub(functools.partial(_with_id, f"{ident}-{sp.index + 1}"), h, count=1)
        parts.append(h + standalone_subpath(raw, sp).strip() + tail)
    return TextEdit(el.start, el.end, sep.join(parts))


def split_path_action(uri: str, version, lines: LineIndex, us: UnitSet,
                      diagnostic: types.Diagnostic, versioned: bool = True):
    data = diagnostic.data if isinstance(diagnostic.data, dict) else None
    if not data or "offsets" not in data or not still_there(lines, data):
        return None
    start, end = (int(v) for v in data["offsets"])
    for i, el in enumerate(us.doc.elements):
        if el.start == start and el.end == end and i in us.splits:
            edit = split_path_edit(us, i)
            if edit is None:
                return None
            n = len(us.splits[i].subpaths)
            return _action(f"Split compound path into {n} separate paths", uri, version,
                           [edit], lines, [diagnostic], versioned)
    return None


# --- a code-action request: which fix each diagnostic gets -----------------------------

# The codes whose diagnostic is about one unit that its own fix removes.
REMOVABLE_CODES = (DiagnosticCode.HARMFUL, DiagnosticCode.INVISIBLE, DiagnosticCode.SPECK,
                   DiagnosticCode.MOSTLY_HIDDEN)


def requested_diagnostics(diagnostics: Sequence[types.Diagnostic],
                          rng: types.Range) -> list[types.Diagnostic]:
    """svgloo's own diagnostics (with fix data) that a code-action request at ``rng`` is
    about, innermost first (``diagnostics_in_range``)."""
    return diagnostics_in_range([d for d in diagnostics
                                 if d.source == SOURCE and isinstance(d.data, dict)], rng)


@dataclass(frozen=True)
class GroupProofRequest:
    """A group diagnostic's members to prove removable together (engine
    ``removal.check_removal`` with ``allowed`` pixels each), for ``quick_fixes``."""

    position: int                  # of the diagnostic in the request's list
    members: list
    allowed: dict[int, int] | None

    @property
    def candidates(self) -> list[int]:
        return [u.index for u in self.members]


def group_proof_requests(us: UnitSet, lines: LineIndex,
                         diagnostics: list[types.Diagnostic]) -> list[GroupProofRequest]:
    """The removal proofs the group diagnostics among ``diagnostics`` need, in order; a
    group whose members' text changed needs none (it gets no fix)."""
    out = []
    for position, d in enumerate(diagnostics):
        data = d.data or {}  # requested_diagnostics: svgloo's, with their data
        if "group" not in data:
            continue
        members = group_units(us, lines, data)
        if members:
            out.append(GroupProofRequest(position, members, group_allowance(members, data)))
    return out


def quick_fixes(uri: str, version, lines: LineIndex, us: UnitSet,
                diagnostics: list[types.Diagnostic], group_checks: dict[int, object],
                result: ScoreResult | None, versioned: bool = True) -> list[types.CodeAction]:
    """The code actions for ``diagnostics`` (``requested_diagnostics``) on the current
    text: a group diagnostic's proven removal (``group_checks``: position in
    ``diagnostics`` -> the engine's ``RemovalCheck`` of its ``GroupProofRequest``, absent
    when not proven), one unit's removal, a compound path's split; and, for units with no
    visible effect, the removal of all of them that scoring proved together (``result``:
    the stored result, None unless computed on this text), unless a group's fix is
    exactly that. One action per title, the preferred fix first."""
    requests = {r.position: r for r in group_proof_requests(us, lines, diagnostics)}
    out = []
    for position, d in enumerate(diagnostics):
        if "group" in (d.data or {}):
            request, check = requests.get(position), group_checks.get(position)
            a = (remove_group_action(uri, version, lines, us, request.members, check, d,
                                     versioned)
                 if request is not None and check is not None else None)
        elif d.code in REMOVABLE_CODES:
            a = remove_unit_action(uri, version, lines, us, d, versioned)
        elif d.code == DiagnosticCode.LOW_PURITY:
            a = split_path_action(uri, version, lines, us, d, versioned)
        else:
            a = None
        if a is not None:
            out.append(a)
    invisible = [d for d in diagnostics if d.code == DiagnosticCode.INVISIBLE]
    if invisible and result is not None:
        # The engine proved the bulk set while scoring (engine proof.py, bulk_removal).
        check = bulk_check(us, result)
        covered = check is not None and any(
            sorted((d.data or {}).get("units", [])) == list(check.removable) for d in invisible
            if "group" in (d.data or {}))  # the group's own fix is this one
        if check is not None and not covered:
            a = remove_invisible_action(uri, version, lines, us, check, invisible, versioned)
            if a is not None:
                out.append(a)
    return preferred_first(unique(out))
