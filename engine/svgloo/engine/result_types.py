"""The ``svgloo.score/1`` result as types: what ``score.py`` emits and front ends read.

The result travels as plain JSON (CLI ``--json``, the daemon's API, the language server),
so these are ``TypedDict``s over the same dicts, not classes that change the wire format.
``tests/engine/test_result_types.py`` checks real results against them key by key, so a
key added to ``score.py`` without a type here (or the other way round) fails a test.

Keys marked ``NotRequired`` are those a result may lack: the removal proof's (a per-unit
``removal``, the summary's ``proven_removable``/``unverified``, ``bulk_removal``,
``renderer_disagreement``) appear only where the engine runs that proof; a result scored
without it (``ScoreSettings.prove`` off) has every unit's ``removal`` "unchecked" and the
summary's ``unchecked`` count instead.
"""

# No `from __future__ import annotations` here: on Python 3.11 a TypedDict whose
# annotations are strings counts its NotRequired keys as required (__required_keys__).
import sys
from typing import Literal

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # Python 3.10: the backports (a dependency there); typing's TypedDict ignores NotRequired
    from typing_extensions import NotRequired, TypedDict

Verdict = Literal["helpful", "harmful", "neutral"]
UnitKind = Literal["element", "subpath"]
ReferenceKind = Literal["image", "text", "self"]
FindingKind = Literal["speck", "mostly_hidden"]
# "unchecked": the removal proof has not run on this result (ScoreSettings.prove off);
# such a unit is never offered for deletion until a proof says "proven".
RemovalStatus = Literal["proven", "unverified", "visible", "unchecked"]


class Position(TypedDict):
    line: int        # 0-based
    character: int   # 0-based, code points


class Range(TypedDict):
    start: Position
    end: Position


class SpeckFinding(TypedDict):
    """engine/findings.py ``speck_finding``: a unit visible on a tiny share of the canvas."""

    kind: Literal["speck"]
    severity: Literal["information"]
    message: str   # plain words, <= 120 characters (plain_words.py)
    detail: str    # the numbers behind it
    footprint_pixels: int
    footprint_fraction: float
    threshold: float


class MostlyHiddenFinding(TypedDict):
    """engine/findings.py ``hidden_finding``: most of what a unit draws alone is covered."""

    kind: Literal["mostly_hidden"]
    severity: Literal["hint"]
    message: str   # plain words, <= 120 characters (plain_words.py)
    detail: str    # the numbers behind it
    hidden_share: float
    drawn_pixels: int
    hidden_pixels: int
    threshold: float


Finding = SpeckFinding | MostlyHiddenFinding


class Removal(TypedDict):
    """Whether a unit may be deleted, by the engine's removal proof."""

    status: RemovalStatus
    reason: str


class UnitRow(TypedDict):
    """One scoring unit: a leaf element, or one subpath of a split compound path."""

    index: int
    tag: str
    id: str | None
    kind: UnitKind
    subpath: int | None          # 0-based subpath number when kind == "subpath"
    offsets: list[int]           # [start, end): code points of the decoded text
    range: Range
    delta: float
    verdict: Verdict
    footprint_pixels: int
    visible: bool
    findings: list[Finding]
    removal: NotRequired[Removal]


class Summary(TypedDict):
    units: int
    helpful: int
    harmful: int
    neutral: int
    invisible: int
    specks: int
    mostly_hidden: int
    proven_removable: NotRequired[int]
    unverified: NotRequired[int]
    unchecked: NotRequired[int]      # only without the proof: units not yet checked


class Reference(TypedDict):
    kind: ReferenceKind
    source: str


class BackboneDetail(TypedDict):
    description: str
    reason: str


class Thresholds(TypedDict):
    helpful: float
    harmful: float
    source: str


class FindingThresholds(TypedDict):
    speck: float
    hidden: float


class Timings(TypedDict):
    parse_s: float
    render_s: float
    composite_s: float
    score_s: float
    findings_s: float
    renders: int
    total_s: float
    proof_s: NotRequired[float]
    proof_renders: NotRequired[int]


class BulkRemoval(TypedDict):
    units: list[int]
    checked: str


class NamedElement(TypedDict):
    element: int
    tag: str
    id: str | None
    offsets: list[int]


class RendererDisagreement(TypedDict):
    pixels: int
    box: list[int] | None
    threshold: int
    named: list[NamedElement]


class ScoreResult(TypedDict):
    """The whole ``svgloo.score/1`` object (README, ``svgloo score --json``)."""

    schema: Literal["svgloo.score/1"]
    file: str
    backbone: str
    backbone_detail: BackboneDetail
    reference: Reference
    method: Literal["fast", "naive"]
    render_size: int
    subpaths: bool
    thresholds: Thresholds
    finding_thresholds: FindingThresholds
    full_score: float
    units: list[UnitRow]
    summary: Summary
    warnings: list[str]
    notes: list[str]
    timings: Timings
    bulk_removal: NotRequired[BulkRemoval | None]
    renderer_disagreement: NotRequired[RendererDisagreement | None]


def is_proven(result: ScoreResult) -> bool:
    """Whether the removal proof has run on this result: only then may its removal
    verdicts be offered (a result scored without it has no ``bulk_removal`` key)."""
    return "bulk_removal" in result


# --- what a language-server diagnostic carries for its quick fix (Diagnostic.data) -----
# As ruff-lsp does: the fix is found again from this, after checking that the text it was
# computed on is still there (``hash`` of the span, ``version`` of the document).

class UnitFixData(TypedDict):
    """One unit's diagnostic (harmful, invisible, speck, mostly_hidden)."""

    unit: int
    kind: UnitKind
    subpath: int | None
    offsets: list[int]
    version: int | None
    hash: str


class GroupFixData(TypedDict):
    """A grouped diagnostic: every member's unit, span, kind and footprint."""

    group: Literal["speck", "invisible", "mostly_hidden"]
    units: list[int]
    offsets: list[list[int]]
    kinds: list[UnitKind]
    footprints: list[int]
    version: int | None
    hash: str


class PurityFixData(TypedDict):
    """A low-purity diagnostic (structure analysis): the element to split."""

    structure_unit: int
    offsets: list[int]
    version: int | None
    hash: str
    purity: float


FixData = UnitFixData | GroupFixData | PurityFixData


__all__ = ["Verdict", "UnitKind", "ReferenceKind", "FindingKind", "RemovalStatus",
           "Position", "Range", "SpeckFinding", "MostlyHiddenFinding", "Finding", "Removal",
           "UnitRow", "Summary", "Reference", "BackboneDetail", "Thresholds",
           "FindingThresholds", "Timings", "BulkRemoval", "NamedElement",
           "RendererDisagreement", "ScoreResult", "UnitFixData", "GroupFixData",
           "PurityFixData", "FixData", "is_proven"]
