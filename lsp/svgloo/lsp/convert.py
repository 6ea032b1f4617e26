"""Pure conversions: engine results (code-point offsets) -> LSP positions, ranges,
diagnostics, hover text and code lens titles, in the client's position encoding.

Nothing here talks to a client or runs the engine; every function takes plain data
(the editor text, the ``svgloo.score/1`` / ``svgloo.structure/1`` dicts) and returns
lsprotocol objects, so it is unit-testable on its own.

Offsets: the engine's offsets index ``Document.text``, which is the editor text minus a
leading byte order mark. ``LineIndex`` takes the editor text and an engine offset and adds
that one character back (``engine_base``).
"""

from __future__ import annotations

import bisect
import math
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, cast

from lsprotocol import types

from svgloo.engine.wording.describe import describe_element, describe_unit
from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD
from svgloo.engine.wording.plain_words import (MAX_MESSAGE, finding_note, fit, harmful_note, named,
                                       removal_note)
from svgloo.engine.result_types import GroupFixData, ScoreResult, UnitFixData, UnitRow
from svgloo.structure.purity import mixed_concepts

GroupKind = Literal["speck", "invisible", "mostly_hidden"]

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"
SOURCE = "svgloo"
PURITY_THRESHOLD = 0.6
MAX_DIAGNOSTICS = 50   # per document, the summary included (docs/lsp.md)


class DiagnosticCode(str, Enum):
    """The ``code`` of every svgloo diagnostic, as it goes over the wire (editors' filters
    and the quick fixes match these strings). A refusal's code is the engine error's class
    name instead (``refusal_diagnostic``), which is not listed here."""

    HARMFUL = "harmful"
    INVISIBLE = "invisible"              # removal proven by rendering (engine proof.py)
    SPECK = "speck"                      # engine findings.py kinds
    MOSTLY_HIDDEN = "mostly_hidden"
    UNVERIFIED = "unverified"            # looks invisible, removal not provable
    CHECKING = "removal-check-running"   # scored without the proof yet (docs/two-speeds.md)
    RENDERERS_DIFFER = "renderers-differ"
    LOW_PURITY = "low-purity"            # structure analysis
    MORE = "more"                        # the cap's summary

    # str() and f-strings give the wire value on every Python (3.11 changed str() of a
    # str-mixin Enum to "DiagnosticCode.HARMFUL").
    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]  # str's, not Enum's: the point

# The LSP's line terminators (the same ones Document.position uses).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def encoding_name(kind) -> str:
    """Normalise a PositionEncodingKind (or string, or None) to utf-8/utf-16/utf-32."""
    value = getattr(kind, "value", kind) or UTF16
    value = str(value).lower()
    return value if value in (UTF8, UTF16, UTF32) else UTF16


def code_units(s: str, encoding: str) -> int:
    """Length of ``s`` in the encoding's code units."""
    if encoding == UTF32:
        return len(s)
    if encoding == UTF8:
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _units_of_char(ch: str, encoding: str) -> int:
    cp = ord(ch)
    if encoding == UTF32:
        return 1
    if encoding == UTF16:
        return 2 if cp > 0xFFFF else 1
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


def chars_for_units(line: str, units: int, encoding: str) -> int:
    """Number of code points of ``line`` covered by ``units`` code units. A position that
    falls inside a character (half a surrogate pair, part of a UTF-8 sequence) rounds
    down to that character's start; a position past the end clamps to the end."""
    if encoding == UTF32:
        return max(0, min(units, len(line)))
    used = 0
    for i, ch in enumerate(line):
        if used >= units:
            return i
        step = _units_of_char(ch, encoding)
        if used + step > units:
            return i
        used += step
    return len(line)


def engine_base(text: str) -> int:
    """How far engine offsets are shifted against the editor text (a BOM is dropped)."""
    return 1 if text.startswith("\ufeff") else 0


def text_hash(s: str) -> str:
    return hashlib.sha1(s.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class LineIndex:
    """Offsets <-> LSP positions for one text, in one position encoding."""

    def __init__(self, text: str, encoding: str = UTF16):
        self.text = text
        self.encoding = encoding_name(encoding)
        self.base = engine_base(text)
        self.starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]

    def _line_end(self, line: int) -> int:
        """Offset of the end of a line's content (before its terminator)."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1]
            if self.text[end - 2:end] == "\r\n":
                return end - 2
            return end - 1
        return len(self.text)

    # text offsets (editor text) -------------------------------------------------------
    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return types.Position(line=line, character=code_units(self.text[start:offset],
                                                              self.encoding))

    def offset(self, position: types.Position) -> int:
        if position.line < 0:
            return 0
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        line = self.text[start:self._line_end(position.line)]
        return start + chars_for_units(line, position.character, self.encoding)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    # engine offsets (Document.text, no BOM) -------------------------------------------
    def engine_range(self, start: int, end: int) -> types.Range:
        return self.range(start + self.base, end + self.base)

    def engine_slice(self, start: int, end: int) -> str:
        return self.text[start + self.base:end + self.base]

    def line_column(self, line: int, column: int) -> types.Position:
        """An engine (line, code-point column) position, e.g. from an InputError."""
        if line >= len(self.starts):
            return self.position(len(self.text))
        start = self.starts[line]
        content = self.text[start:self._line_end(line)]
        if line == 0 and self.base:
            column += self.base
        return self.position(start + max(0, min(column, len(content))))


# --- settings that shape diagnostics ----------------------------------------------------

@dataclass(frozen=True)
class DiagnosticOptions:
    harmful: bool = True
    invisible: bool = True
    purity: bool = True
    purity_threshold: float = PURITY_THRESHOLD
    max_per_document: int = MAX_DIAGNOSTICS


def fix_data(row: UnitRow, lines: LineIndex, version: int | None) -> UnitFixData:
    """What a quick fix needs to find the unit again and check it is still there."""
    start, end = row["offsets"]
    return {"unit": row["index"], "kind": row.get("kind", "element"),
            "subpath": row.get("subpath"), "offsets": [start, end], "version": version,
            "hash": text_hash(lines.engine_slice(start, end))}


# engine/svgloo/engine/scoring/findings.py kinds: a speck is shown, a mostly hidden unit only hinted at.
FINDING_SEVERITY = {DiagnosticCode.SPECK: types.DiagnosticSeverity.Information,
                    DiagnosticCode.MOSTLY_HIDDEN: types.DiagnosticSeverity.Hint}

# --- how many diagnostics a document gets (docs/lsp.md, "Grouping and the cap") ----------
# Findings of one kind are grouped: the units of one element (a compound path's subpaths)
# into one diagnostic on that element, and once ROLLUP_MIN elements have the same finding,
# all of that kind into one diagnostic on the root <svg>. Each member is listed in the
# diagnostic's relatedInformation (up to MAX_RELATED) and its quick fix removes them all.
GROUPED_KINDS = (DiagnosticCode.SPECK, DiagnosticCode.INVISIBLE, DiagnosticCode.MOSTLY_HIDDEN)
ROLLUP_MIN = 10
# Specks are strays when they are few. TEXTURE_MIN of them in one path, or in one document,
# are a drawing's grain, stipple, chalk or fine detail: one Hint, never "stray?".
TEXTURE_MIN = 10
MAX_RELATED = 100


def invisible_rule(result: ScoreResult) -> str:
    """What "no visible effect" was checked against: the engine's removal proof
    (engine proof.py), in its own words."""
    bulk: Mapping[str, Any] = result.get("bulk_removal") or {}
    if bulk.get("checked"):
        return bulk["checked"]
    for row in result.get("units", []):
        removal: Mapping[str, Any] = row.get("removal") or {}
        if removal.get("status") == "proven":
            return removal.get("reason", "").split(": ", 1)[-1]
    return "proven by rendering"


@dataclass(frozen=True)
class UnitFinding:
    """One unit's finding of one kind, before grouping."""

    kind: str          # a DiagnosticCode: SPECK, INVISIBLE or MOSTLY_HIDDEN
    row: UnitRow       # the svgloo.score/1 unit row
    message: str       # the single-unit diagnostic's message: plain words, <= MAX_MESSAGE
    detail: Mapping[str, Any]  # the engine's finding (empty for "invisible")
    proof: str = ""    # the long text behind the message: the finding's numbers or the proof


def unit_findings(result: ScoreResult, options: DiagnosticOptions) -> list[UnitFinding]:
    """Every unit's groupable findings, in document order."""
    out = []
    for row in result.get("units", []):
        what = describe_unit(row)
        for finding in row.get("findings") or []:
            # Render-proven, weight-free findings (engine findings.py): never "harmful".
            if finding.get("kind") in FINDING_SEVERITY:
                long = finding.get("detail") or finding.get("message") or finding["kind"]
                out.append(UnitFinding(finding["kind"], row,
                                       named(what, finding_note(finding, row)), finding,
                                       f"{what}: {long}"))
        removal: Mapping[str, Any] = row.get("removal") or {}
        if options.invisible and removal.get("status") == "proven":
            # The engine's proof (engine proof.py) says exactly what was checked: it goes
            # to the related information, the message says what to do.
            out.append(UnitFinding(DiagnosticCode.INVISIBLE, row,
                                   named(what, removal_note(removal) or ""), {},
                                   f"{what} has no visible effect: {removal.get('reason', '')}"))
    return out


def element_of(rows: list[UnitRow]) -> list[int]:
    """For each unit row, the number of its element among the rows' elements: the
    subpaths of one split path are consecutive rows numbered 0, 1, 2..."""
    out: list[int] = []
    prev = None
    for row in rows:
        same = (prev is not None and row.get("kind") == "subpath" == prev.get("kind")
                and row.get("subpath") == (prev.get("subpath") or 0) + 1)
        if not out:
            out.append(0)
        else:
            out.append(out[-1] if same else out[-1] + 1)
        prev = row
    return out


def _pixels_span(members: list[UnitFinding]) -> str:
    pixels = [int(m.row.get("footprint_pixels", 0)) for m in members]
    lo, hi = min(pixels), max(pixels)
    return f"{lo} px" if lo == hi else f"{lo}-{hi} px"


def group_message(kind: str, members: list[UnitFinding], where: str | None,
                  result: ScoreResult) -> tuple[str, types.DiagnosticSeverity]:
    """The message and severity of a group: ``where`` is the element (``path#x``)
    whose subpaths these are, or None for separate elements across the document."""
    n = len(members)
    # Plain words within MAX_MESSAGE (engine plain_words.py); each member's numbers and the
    # proof are in the related information (group_diagnostic), the quick fix removes them.
    if where and len(where) > 40:
        where = fit(where, 40)
    things = f"subpaths of {where}" if where else "elements"
    if kind == DiagnosticCode.SPECK:
        if n >= TEXTURE_MIN:
            # A deliberate texture, not N strays (docs/lsp.md): one Hint.
            return (f"{n} {things} are specks ({_pixels_span(members)} each): a texture "
                    "or fine detail, so not flagged one by one", types.DiagnosticSeverity.Hint)
        return (f"{n} specks in {where or 'separate elements'} ({_pixels_span(members)} "
                "each): stray points or slivers? remove them if unintended",
                types.DiagnosticSeverity.Information)
    if kind == DiagnosticCode.MOSTLY_HIDDEN:
        return (f"{n} {things} are mostly hidden behind later shapes: remove them if "
                "nothing should show", types.DiagnosticSeverity.Hint)
    return (f"{n} {things} have no visible effect: safe to remove together",
            types.DiagnosticSeverity.Hint)


def root_range(lines: LineIndex) -> types.Range:
    """The root element's ``<svg`` (the first start tag), or the document's start."""
    for m in _TOKEN.finditer(lines.text):
        if m.group(2):
            return lines.range(m.start(), m.start() + 1 + len(m.group(2)))
    return lines.range(lines.base, lines.base)


def group_data(kind: str, members: list[UnitFinding], lines: LineIndex,
               version: int | None) -> GroupFixData:
    """What the group's quick fix needs: every member's unit, span and the pixels it
    changes alone (a removal proof allows the set no more), and one hash over their text."""
    offsets = [list(m.row["offsets"]) for m in members]
    group = cast(GroupKind, str(kind))  # one of the three group codes
    return {"group": group, "units": [m.row["index"] for m in members], "offsets": offsets,
            "kinds": [m.row.get("kind", "element") for m in members],
            "footprints": [int(m.row.get("footprint_pixels", 0)) for m in members],
            "version": version,
            "hash": text_hash("\0".join(lines.engine_slice(s, e) for s, e in offsets))}


def group_diagnostic(kind: str, members: list[UnitFinding], where: str | None,
                     rng: types.Range, result: ScoreResult, lines: LineIndex,
                     version: int | None, uri: str | None) -> types.Diagnostic:
    message, severity = group_message(kind, members, where, result)
    related = None
    if uri:
        # Each member with its own numbers and proof: the detail the message leaves out.
        related = [types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=lines.engine_range(*m.row["offsets"])),
            message=m.proof) for m in members[:MAX_RELATED]]
        if kind == DiagnosticCode.INVISIBLE:
            related.insert(0, types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=rng),
                message=f"removing them together: {invisible_rule(result)}"))
        if len(members) > MAX_RELATED:
            message = fit(message, MAX_MESSAGE - 22) + f" ({MAX_RELATED} listed)"
    return types.Diagnostic(
        range=rng, severity=severity, source=SOURCE, code=DiagnosticCode(kind),
        message=fit(message),
        related_information=related,
        tags=([types.DiagnosticTag.Unnecessary]
              if kind == DiagnosticCode.INVISIBLE and where else None),
        data=group_data(kind, members, lines, version))


def score_diagnostics(result: ScoreResult, lines: LineIndex, options: DiagnosticOptions,
                      version: int | None = None,
                      uri: str | None = None) -> list[types.Diagnostic]:
    """Warnings for harmful units (one each). The engine's findings (specks, mostly hidden
    units) and units with no visible effect are grouped by kind: the units of one element
    (two or more subpaths of a path) make one diagnostic on it, and when a kind is found in
    ROLLUP_MIN or more elements, all of that kind make one diagnostic on the root.
    ``uri`` names the document in the groups' related information. "No visible effect"
    means the engine proved the removal (``removal.status == "proven"``); units svgloo
    cannot vouch for get a plain hint with the reason, and where the two renderers
    disagree an Information diagnostic sits on the elements the engine names."""
    out: list[types.Diagnostic] = []
    ref = (result.get("reference") or {}).get("source", "")
    rows = result.get("units", [])
    if options.harmful:
        for row in rows:
            if row.get("verdict") != "harmful":
                continue
            delta = float(row["delta"])
            rng = lines.engine_range(*row["offsets"])
            out.append(types.Diagnostic(
                range=rng, severity=types.DiagnosticSeverity.Warning, source=SOURCE,
                code=DiagnosticCode.HARMFUL,
                message=named(describe_unit(row), harmful_note()),
                related_information=own_detail(
                    uri, rng, f"{describe_unit(row)} is harmful: delta {delta:+.4f} (removing "
                    f"it brings the picture {-delta:.4f} closer to the reference, {ref})"),
                data=fix_data(row, lines, version)))
    element = dict(zip((r["index"] for r in rows), element_of(rows)))
    found = unit_findings(result, options)
    for kind in GROUPED_KINDS:
        of_kind = [f for f in found if f.kind == kind]
        by_element: dict[int, list[UnitFinding]] = {}
        for f in of_kind:
            by_element.setdefault(element[f.row["index"]], []).append(f)
        if len(by_element) >= ROLLUP_MIN:
            # as many places as this would be a wall of diagnostics: one on the root
            out.append(group_diagnostic(kind, of_kind, None, root_range(lines), result,
                                        lines, version, uri))
            continue
        for members in by_element.values():
            if len(members) >= 2:
                first, last = members[0].row["offsets"], members[-1].row["offsets"]
                out.append(group_diagnostic(kind, members, describe_element(members[0].row),
                                            lines.engine_range(first[0], last[1]), result,
                                            lines, version, uri))
                continue
            [f] = members
            rng = lines.engine_range(*f.row["offsets"])
            out.append(types.Diagnostic(
                range=rng,
                severity=FINDING_SEVERITY.get(kind, types.DiagnosticSeverity.Hint),
                source=SOURCE, code=DiagnosticCode(kind), message=f.message,
                related_information=own_detail(uri, rng, f.proof),
                tags=([types.DiagnosticTag.Unnecessary]
                      if kind == DiagnosticCode.INVISIBLE else None),
                data=fix_data(f.row, lines, version)))
    if options.invisible:
        out.extend(unverified_diagnostics(rows, lines, result.get("render_size"), uri))
        out.extend(checking_diagnostics(result, lines))
    out.extend(disagreement_diagnostics(result, lines, uri))
    return sorted(out, key=lambda d: (d.range.start.line, d.range.start.character))


def own_detail(uri: str | None, rng: types.Range,
               detail: str) -> list[types.DiagnosticRelatedInformation] | None:
    """The long text behind a one-unit diagnostic's short message, as related information
    on the unit itself (editors show it under the message); None without a document URI."""
    if not uri:
        return None
    return [types.DiagnosticRelatedInformation(location=types.Location(uri=uri, range=rng),
                                               message=detail)]


def unverified_diagnostics(rows: list[UnitRow], lines: LineIndex, size,
                           uri: str | None = None) -> list[types.Diagnostic]:
    """A plain hint, with no fix, for each unit without a footprint whose removal svgloo
    cannot vouch for (engine proof.py: filters, CSS-only properties, refused images...)."""
    out = []
    for row in rows:
        removal: Mapping[str, Any] = row.get("removal") or {}
        if removal.get("status") != "unverified":
            continue
        rng = lines.engine_range(*row["offsets"])
        out.append(types.Diagnostic(
            range=rng, severity=types.DiagnosticSeverity.Hint,
            source=SOURCE, code=DiagnosticCode.UNVERIFIED,
            message=named(describe_unit(row), removal_note(removal) or ""),
            related_information=own_detail(
                uri, rng, f"{describe_unit(row)} looks invisible to CairoSVG at {size} px, "
                f"but svgloo cannot vouch for that: {removal.get('reason', '')}")))
    return out


def checking_diagnostics(result: ScoreResult, lines: LineIndex) -> list[types.Diagnostic]:
    """While the result has no removal proof yet (scored without it: the language server's
    first answer), one hint on the root saying that the units without a footprint are
    being checked: none of them is offered for deletion until the proof has passed."""
    waiting = [r for r in result.get("units", []) if not r.get("visible", True)
               and (removal := r.get("removal")) is not None
               and removal.get("status") == "unchecked"]
    if not waiting:
        return []
    n = len(waiting)
    return [types.Diagnostic(
        range=root_range(lines), severity=types.DiagnosticSeverity.Hint, source=SOURCE,
        code=DiagnosticCode.CHECKING,
        message=f"{n} unit{'s' if n != 1 else ''} show{'' if n != 1 else 's'} no footprint: "
                "the removal check is running (two renderers, three sizes); nothing is "
                "offered for deletion until it has passed")]


def _severity_rank(d: types.Diagnostic) -> int:
    return int(d.severity or types.DiagnosticSeverity.Hint)


def capped(diagnostics: list[types.Diagnostic], lines: LineIndex,
           limit: int = MAX_DIAGNOSTICS) -> list[types.Diagnostic]:
    """At most ``limit`` diagnostics: the most severe (errors, warnings, information,
    hints; in document order within each), and in place of the rest one Information on
    the root saying how many more there are and of which kinds."""
    if limit <= 0 or len(diagnostics) <= limit:
        return diagnostics
    ranked = sorted(range(len(diagnostics)), key=lambda i: (_severity_rank(diagnostics[i]), i))
    keep = sorted(ranked[:limit - 1])
    left = [diagnostics[i] for i in ranked[limit - 1:]]
    kinds: dict[str, int] = {}
    for d in left:
        kinds[str(d.code)] = kinds.get(str(d.code), 0) + 1
    what = ", ".join(f"{n} {code}" for code, n in sorted(kinds.items(), key=lambda t: -t[1]))
    message = (f"{len(left)} more svgloo diagnostics not shown ({what}): raise "
               "svgloo.diagnostics.maxPerDocument to see them")
    if len(message) > MAX_MESSAGE:   # many kinds: the count and what to do matter most
        message = (f"{len(left)} more svgloo diagnostics not shown: raise "
                   "svgloo.diagnostics.maxPerDocument to see them")
    summary = types.Diagnostic(
        range=root_range(lines), severity=types.DiagnosticSeverity.Information, source=SOURCE,
        code=DiagnosticCode.MORE, message=message)
    return [diagnostics[i] for i in keep] + [summary]


def document_diagnostics(result: ScoreResult, structure: list[dict] | None, lines: LineIndex,
                         options: DiagnosticOptions, version: int | None = None,
                         uri: str | None = None) -> list[types.Diagnostic]:
    """Everything the server publishes for a scored document: the score's diagnostics
    (grouped), the purity diagnostics of the structure rows when there are any, capped at
    ``options.max_per_document``."""
    out = score_diagnostics(result, lines, options, version, uri)
    if structure is not None:
        out += purity_diagnostics(structure, lines, options, version)
    return capped(out, lines, options.max_per_document)


def disagreement_diagnostics(result: ScoreResult, lines: LineIndex,
                             uri: str | None = None) -> list[types.Diagnostic]:
    """Information on each element the engine names where CairoSVG's full picture differs
    from resvg's (``renderer_disagreement``), or on the root when none is named."""
    differ = result.get("renderer_disagreement")
    if not differ:
        return []
    detail = next((w for w in result.get("warnings", []) if w.startswith("CairoSVG draws")),
                  "CairoSVG draws this file differently from a browser-grade renderer")
    spots = [tuple(e["offsets"]) for e in differ.get("named", [])] or [(0, 0)]
    out = []
    for start, end in spots:
        rng = lines.engine_range(start, end)
        out.append(types.Diagnostic(
            range=rng, severity=types.DiagnosticSeverity.Information, source=SOURCE,
            code=DiagnosticCode.RENDERERS_DIFFER,
            message="svgloo's renderer and browsers draw this differently: check what you "
                    "remove here by eye",
            related_information=own_detail(uri, rng, detail)))
    return out


def structure_rows(structure: dict, spans: list[tuple[int, int]]) -> list[dict]:
    """Per structure unit: offsets, purity, primary concept and the concepts it mixes
    (names with their share of the unit's attribution, largest first; empty when it draws
    one thing: svgloo.structure.purity decides). ``spans`` are the engine offsets of the
    structure's units (whole elements), in unit order."""
    concepts = structure.get("concepts", [])
    names = [c.get("name", "?") for c in concepts]
    attribution = structure.get("attribution") or []
    rows: list[dict] = []
    for u in structure.get("units", []):
        i = int(u.get("index", len(rows)))
        if i >= len(spans):
            continue
        weights = attribution[i] if i < len(attribution) else []
        primary = u.get("primary")
        if isinstance(primary, int) and 0 <= primary < len(names):
            primary = names[primary]
        rows.append({"index": i, "offsets": list(spans[i]), "active": bool(u.get("active")),
                     "purity": u.get("purity"), "primary": primary,
                     "mix": mixed_concepts(weights, concepts)})
    return rows


def purity_diagnostics(rows: list[dict], lines: LineIndex, options: DiagnosticOptions,
                       version: int | None = None) -> list[types.Diagnostic]:
    """An Information diagnostic per active unit whose purity is below the threshold and
    that mixes at least two distinct concepts (svgloo.structure.purity: shares under 10%
    and same-paint colour regions do not count)."""
    if not options.purity:
        return []
    out = []
    for row in rows:
        purity = row.get("purity")
        if (not row["active"] or purity is None or float(purity) >= options.purity_threshold
                or len(row["mix"]) < 2):
            continue
        start, end = row["offsets"]
        shown = row["mix"][:4]
        mixed = ", ".join(f"{name} ({share:.0%})" for name, share in shown)
        if len(row["mix"]) > len(shown):
            mixed += f" and {len(row['mix']) - len(shown)} more"
        data = {"structure_unit": row["index"], "offsets": [start, end], "version": version,
                "hash": text_hash(lines.engine_slice(start, end)), "purity": float(purity)}
        out.append(types.Diagnostic(
            range=lines.engine_range(start, end), severity=types.DiagnosticSeverity.Information,
            source=SOURCE, code=DiagnosticCode.LOW_PURITY, data=data,
            # rounded down: a purity of 0.598 must not read "0.60 (< 0.6)"
            message=fit(f"element mixes concepts {mixed}; purity "
                        f"{math.floor(float(purity) * 100) / 100:.2f} "
                        f"(< {options.purity_threshold:g})")))
    return out


# libxml2 names the element left open: "... tag mismatch: rect line 3 and svg" or
# "Premature end of data in tag g line 1" (1-based line of the element's start tag).
_UNCLOSED = re.compile(r"(?:tag mismatch: |end of data in tag )([\w:.-]+) line (\d+)")
_TOKEN = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>"
                    r"|</([\w:.-]+)\s*>|<([\w:.-]+)(?:\s[^>]*?)?(/?)>", re.S)


def unclosed_tag_span(text: str, name: str, line: int, until: int) -> tuple[int, int] | None:
    """Offsets of ``<name`` for the element named ``name`` whose start tag is on ``line``
    (0-based) and that is still open at offset ``until``: where a malformed-XML error
    belongs, rather than on the closing tag where the parser noticed it."""
    stack: list[tuple[str, int]] = []
    for m in _TOKEN.finditer(text, 0, until):
        if m.group(1):
            for k in range(len(stack) - 1, -1, -1):
                if stack[k][0] == m.group(1):
                    del stack[k:]
                    break
        elif m.group(2) and not m.group(3):
            stack.append((m.group(2), m.start()))
    for tag, start in reversed(stack):
        if tag == name and text.count("\n", 0, start) == line:
            return start, start + 1 + len(name)
    return None


NOT_ANALYSED = "svgloo did not analyse this document: "
_ROOT_TAG = re.compile(r"<(?:[\w.-]+:)?svg(?=[\s/>])")


def root_tag_span(text: str) -> tuple[int, int] | None:
    """Offsets of ``<svg`` of the root start tag (the first one outside a comment), found
    with a plain search: a refused document may be too big or too broken to parse."""
    for m in _ROOT_TAG.finditer(text):
        if text.rfind("<!--", 0, m.start()) <= text.rfind("-->", 0, m.start()):
            return m.start(), m.end()
    return None


def refusal_diagnostic(exc: BaseException, lines: LineIndex) -> types.Diagnostic:
    """The one diagnostic for a document the engine did not analyse: without it the
    editor would show no diagnostics, which reads as "no problems".

    A defect of the document itself (``InputError``: malformed XML, not SVG) is an Error
    where it is: for malformed XML the start tag of the element left open when the parser
    names one, else where the parser stopped. Anything else (a limit of svgloo's, a
    renderer failure, a bad setting, an internal error) says nothing against the file: a
    Warning on the root ``<svg`` tag. The message is the engine's own, after the words
    that say the document was not analysed."""
    from svgloo.engine.errors import InputError, SvglooError

    message = getattr(exc, "message", None) if isinstance(exc, SvglooError) else None
    if message is None:
        message = (f"internal error ({type(exc).__name__}: {exc}); the language server's "
                   "log has the details")
    if not isinstance(exc, InputError):
        span = root_tag_span(lines.text)
        rng = lines.range(*span) if span else lines.range(lines.base, lines.base)
        return types.Diagnostic(range=rng, severity=types.DiagnosticSeverity.Warning,
                                source=SOURCE, code=type(exc).__name__,
                                message=NOT_ANALYSED + message)
    line = getattr(exc, "line", None)
    column = getattr(exc, "column", None)
    if line is None:
        start = lines.position(lines.base)
    else:
        start = lines.line_column(int(line), int(column or 0))
    begin = lines.offset(start)
    end_offset = begin
    if begin < len(lines.text) and lines.text[begin] not in "\r\n":
        end_offset = begin + 1
    unclosed = _UNCLOSED.search(message)
    if unclosed:
        # Scan up to the tag at which the parser noticed (lxml's column may point just past
        # it), so that tag's own close does not count.
        noticed = max(lines.text.rfind("<", 0, begin + 1), 0)
        span = unclosed_tag_span(lines.text, unclosed.group(1), int(unclosed.group(2)) - 1,
                                 end_offset if "end of data" in message else noticed)
        if span is not None:
            start, end_offset = lines.position(span[0]), span[1]
    return types.Diagnostic(range=types.Range(start=start, end=lines.position(end_offset)),
                            severity=types.DiagnosticSeverity.Error, source=SOURCE,
                            code=type(exc).__name__, message=NOT_ANALYSED + message)


# --- hover and code lens ------------------------------------------------------------------

def hover_markdown(row: UnitRow, structure_row: dict | None, result: ScoreResult) -> str:
    lines = [f"**svgloo** {describe_unit(row)}", "",
             f"- delta: `{float(row['delta']):+.5f}` ({row['verdict']}; reference: "
             f"{(result.get('reference') or {}).get('source', '?')})",
             f"- footprint: {row['footprint_pixels']} px of {result.get('render_size')}"
             f"x{result.get('render_size')}" + ("" if row.get("visible", True)
                                                else f" (none above {CHANGED_THRESHOLD}/255)")]
    removal = row.get("removal")
    if removal and removal.get("status") == "unchecked":
        lines.append("- removal: the removal check is running; nothing is offered for "
                     "deletion until it has passed")
    elif removal:
        lines.append(f"- removal: {removal.get('status')} ({removal.get('reason', '')})")
    for finding in row.get("findings") or []:
        # the numbers behind the diagnostic's short message
        lines.append(f"- {finding.get('detail') or finding.get('message', finding.get('kind'))}")
    if structure_row is not None:
        purity = structure_row.get("purity")
        lines.append(f"- primary concept: {structure_row.get('primary') or 'none'}")
        if purity is not None:
            lines.append(f"- purity: {float(purity):.2f}" +
                         ("" if structure_row.get("active") else " (inactive)"))
    return "\n".join(lines)


def summary_title(result: ScoreResult) -> str:
    s = result.get("summary", {})
    return (f"svgloo: {s.get('harmful', 0)} harmful, {s.get('invisible', 0)} invisible, "
            f"{s.get('helpful', 0)} helpful of {s.get('units', 0)} units "
            f"({result.get('backbone')}, reference: "
            f"{(result.get('reference') or {}).get('kind', '?')})")


def metrics_title(structure: dict) -> str:
    m = structure.get("metrics", {})

    def fmt(key):
        v = m.get(key)
        return "n/a" if v is None else f"{float(v):.2f}"

    return (f"purity {fmt('purity')} · coverage {fmt('coverage')} · "
            f"compactness {fmt('compactness')} · locality {fmt('locality')}")
