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
from dataclasses import dataclass

from lsprotocol import types

from svgloo.structure.purity import mixed_concepts

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"
SOURCE = "svgloo"
PURITY_THRESHOLD = 0.6

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


def describe_unit(row: dict) -> str:
    """`<rect id="stray">` or `subpath 2 of <path id="p">`."""
    ident = f' id="{row["id"]}"' if row.get("id") else ""
    element = f"<{row['tag']}{ident}>"
    if row.get("kind") == "subpath":
        return f"subpath {int(row['subpath']) + 1} of {element}"
    return element


def fix_data(row: dict, lines: LineIndex, version: int | None) -> dict:
    """What a quick fix needs to find the unit again and check it is still there."""
    start, end = row["offsets"]
    return {"unit": row["index"], "kind": row.get("kind", "element"),
            "subpath": row.get("subpath"), "offsets": [start, end], "version": version,
            "hash": text_hash(lines.engine_slice(start, end))}


# engine/svgloo/engine/findings.py kinds: a speck is shown, a mostly hidden unit only hinted at.
FINDING_SEVERITY = {"speck": types.DiagnosticSeverity.Information,
                    "mostly_hidden": types.DiagnosticSeverity.Hint}


def score_diagnostics(result: dict, lines: LineIndex, options: DiagnosticOptions,
                      version: int | None = None) -> list[types.Diagnostic]:
    """Warnings for harmful units, Information/Hint for the engine's findings (specks,
    mostly hidden units), Unnecessary hints for units with no visible effect."""
    out: list[types.Diagnostic] = []
    ref = (result.get("reference") or {}).get("source", "")
    size = result.get("render_size")
    for row in result.get("units", []):
        start, end = row["offsets"]
        rng = lines.engine_range(start, end)
        what = describe_unit(row)
        if options.harmful and row.get("verdict") == "harmful":
            delta = float(row["delta"])
            out.append(types.Diagnostic(
                range=rng, severity=types.DiagnosticSeverity.Warning, source=SOURCE,
                code="harmful",
                message=(f"{what} is harmful: delta {delta:+.4f} (removing it brings the "
                         f"picture {-delta:.4f} closer to the reference, {ref})"),
                data=fix_data(row, lines, version)))
        for finding in row.get("findings") or []:
            # Render-proven, weight-free findings (engine/svgloo/engine/findings.py): never "harmful".
            kind = finding.get("kind")
            if kind not in FINDING_SEVERITY:
                continue
            out.append(types.Diagnostic(
                range=rng, severity=FINDING_SEVERITY[kind], source=SOURCE, code=kind,
                message=f"{what}: {finding.get('message', kind)}",
                data=fix_data(row, lines, version)))
        if options.invisible and not row.get("visible", True):
            out.append(types.Diagnostic(
                range=rng, severity=types.DiagnosticSeverity.Hint, source=SOURCE,
                code="invisible", tags=[types.DiagnosticTag.Unnecessary],
                message=f"{what} has no visible effect (no pixel changes at {size} px "
                        "when it is removed)",
                data=fix_data(row, lines, version)))
    return out


def structure_rows(structure: dict, spans: list[tuple[int, int]]) -> list[dict]:
    """Per structure unit: offsets, purity, primary concept and the concepts it mixes
    (names with their share of the unit's attribution, largest first; empty when it draws
    one thing: svgloo.structure.purity decides). ``spans`` are the engine offsets of the
    structure's units (whole elements), in unit order."""
    concepts = structure.get("concepts", [])
    names = [c.get("name", "?") for c in concepts]
    attribution = structure.get("attribution") or []
    rows = []
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
            source=SOURCE, code="low-purity", data=data,
            # rounded down: a purity of 0.598 must not read "0.60 (< 0.6)"
            message=f"element mixes concepts {mixed}; purity "
                    f"{math.floor(float(purity) * 100) / 100:.2f} "
                    f"(< {options.purity_threshold:g})"))
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

def hover_markdown(row: dict, structure_row: dict | None, result: dict) -> str:
    lines = [f"**svgloo** {describe_unit(row)}", "",
             f"- delta: `{float(row['delta']):+.5f}` ({row['verdict']}; reference: "
             f"{(result.get('reference') or {}).get('source', '?')})",
             f"- footprint: {row['footprint_pixels']} px of {result.get('render_size')}"
             f"x{result.get('render_size')}" + ("" if row.get("visible", True)
                                                else " (no visible effect)")]
    if structure_row is not None:
        purity = structure_row.get("purity")
        lines.append(f"- primary concept: {structure_row.get('primary') or 'none'}")
        if purity is not None:
            lines.append(f"- purity: {float(purity):.2f}" +
                         ("" if structure_row.get("active") else " (inactive)"))
    return "\n".join(lines)


def summary_title(result: dict) -> str:
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
