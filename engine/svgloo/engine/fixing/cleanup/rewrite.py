"""The rewrite stage of ``svgloo fix --rewrite``: the same picture in fewer bytes.

The rewrite modules propose edits (editor.py: editor metadata and comments; attributes.py:
path data, numbers, colours, styles and defaults spelled shorter; structure.py: blanks,
groups, ids and definitions; shapes.py: shapes as paths;
device_rounding.py: path data rounded). None of them decides what
stays: every subset tried is serialised and proven against the baseline with the proof
module's own check of a rewritten text (``proof.text_changes``: CairoSVG and resvg, the
analysis and the proof size, 2/255 over any page), never a check of its own.

All the exact edits are tried at once; when that changes a picture, the edits are split by
job, then halved, and each part is tried on top of what was kept (a rewrite that fails is
left out, not forced). Shapes become paths on top of that (shapes.py); then, only when
asked for (``rounding``), path data is rounded, each number to the fewest decimals that
keep it where the renderers snap it (device_rounding.py), split and halved the same way.
Checks
are capped per stage (``MAX_CHECKS``); what the cap leaves untried stays as it was.

The result is never longer than the text it started from: a longer one is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from svgloo.engine.fixing.cleanup import attributes, device_rounding, editor, shapes, structure
from svgloo.engine.fixing.cleanup.edits import Context, Edit, apply
from svgloo.engine.reading.document import parse_document
from svgloo.engine.errors import SvglooError
from svgloo.engine.limits import Limits
from svgloo.engine.proving.proof import text_changes
from svgloo.engine.processes.workers import RenderPool

MAX_CHECKS = 16            # proofs of the exact edits
ROUNDING_CHECKS = 12       # proofs of roundings
_XML_DECLARATION = re.compile(r"<\?xml\s[^>]*\?>")
_ENCODING = re.compile(r"""encoding\s*=\s*["']([^"']+)["']""")
_DOCTYPE = re.compile(r"<!DOCTYPE[^\[>]*>", re.I)
_PI = re.compile(r"<\?(?!xml\s)[^>]*\?>")


@dataclass
class RewriteResult:
    """What the rewrite stage did to one text."""

    text: str                                        # the rewritten text (or the input)
    kept: dict[str, int] = field(default_factory=dict)     # job -> edits kept
    refused: dict[str, int] = field(default_factory=dict)  # job -> edits the proof refused
    untried: int = 0                                 # edits the check cap left untried
    checks: int = 0
    renders: int = 0
    note: str = ""                                   # why nothing was rewritten, if so

    original: str = ""

    @property
    def changed(self) -> bool:
        return self.text != self.original


def _prolog(text: str, root_start: int) -> str:
    """What comes before the root, as short as it can be: the XML declaration only when it
    names an encoding other than UTF-8 (without it the file would be read as UTF-8),
    processing instructions such as ``<?xml-stylesheet?>`` (they draw); no DOCTYPE without
    an internal subset, no comments, no blanks."""
    head = text[:root_start]
    out = []
    declaration = _XML_DECLARATION.match(head.lstrip("\ufeff"))
    if declaration:
        encoding = _ENCODING.search(declaration.group(0))
        if encoding and encoding.group(1).lower().replace("_", "-") not in ("utf-8", "utf8"):
            out.append(declaration.group(0))
    out += _PI.findall(head)
    return "".join(out)


def _epilogue(text: str, root_end: int) -> str:
    return "".join(_PI.findall(text[root_end:]))


class Stage:
    """One text being rewritten: its tree, the proof to pass, and the checks spent."""

    def __init__(self, text: str, baseline: str, name: str, sizes: tuple[int, ...],
                 limits: Limits, pool: RenderPool,
                 should_stop: Callable[[], bool] | None = None):
        doc = parse_document(text, name, limits)
        self.root = doc.root
        self.prolog = _prolog(text, doc.elements[0].start)
        self.epilogue = _epilogue(text, doc.elements[0].end)
        self.baseline, self.name, self.sizes = baseline, name, sizes
        self.limits, self.pool, self.should_stop = limits, pool, should_stop
        self.checks = self.renders = 0
        self._outcomes: dict[str, bool] = {}

    def text(self, edits: list[Edit]) -> str:
        tree = apply(self.root, edits)
        etree.cleanup_namespaces(tree)
        return self.prolog + etree.tostring(tree, encoding="unicode", with_tail=False) + \
            self.epilogue

    def keeps_picture(self, text: str) -> bool:
        """The proof of a rewritten text (proof.text_changes), once per distinct text."""
        if text not in self._outcomes:
            found, renders = text_changes(self.baseline, text, self.sizes, self.limits,
                                          self.pool, self.name, self.should_stop)
            self.checks += 1
            self.renders += renders
            self._outcomes[text] = not found
        return self._outcomes[text]


def _split(group: list[Edit]) -> list[list[Edit]]:
    jobs = list(dict.fromkeys(e.job for e in group))
    if len(jobs) > 1:
        return [[e for e in group if e.job == job] for job in jobs]
    half = len(group) // 2
    return [group[:half], group[half:]]


def keep_proven(stage: Stage, kept: list[Edit], candidates: list[Edit], budget: int
                ) -> tuple[list[Edit], list[Edit], list[Edit]]:
    """(edits kept, refused, left untried): ``candidates`` tried on top of ``kept``, all at
    once, then split by job and halved wherever the proof refuses a part."""
    kept = list(kept)
    refused: list[Edit] = []
    queue = [candidates] if candidates else []
    spent = 0
    while queue and spent < budget:
        group = queue.pop(0)
        before = stage.checks
        if stage.keeps_picture(stage.text(kept + group)):
            kept += group
        elif any(e.fallback is not None for e in group):
            # the safer spelling of the same edits first, before splitting them up
            queue.insert(0, [e.fallback or e for e in group])
            refused += [e for e in group if e.fallback is not None]
        elif len(group) == 1:
            refused += group
        else:
            queue[:0] = _split(group)
        spent += stage.checks - before
    untried = [e for group in queue for e in group]
    return kept, refused, untried


def rewrite_text(text: str, baseline: str, name: str, sizes: tuple[int, ...], limits: Limits,
                 pool: RenderPool, should_stop: Callable[[], bool] | None = None,
                 rounding: bool = False) -> RewriteResult:
    """``text`` rewritten in fewer characters, every kept rewrite proven against
    ``baseline`` (the original picture), the whole result included. ``rounding``: also
    round path data (device_rounding.py). Off unless asked for: Chromium drawing an SVG
    as a document (an ``<object>``, inline) snaps as finely as the proof renderers do, so
    a rounding both of them accept can still move its pixels (logos/lateral-icon.svg:
    six paths rounded within their 1/512 px bins moved Chromium's <object> picture by
    30/255, its <img> by 1/255)."""
    try:
        stage = Stage(text, baseline, name, sizes, limits, pool, should_stop)
    except SvglooError as exc:
        return RewriteResult(text, note=f"not rewritten: {exc.message}", original=text)
    if "<!ENTITY" in text or re.search(r"<!DOCTYPE[^>]*\[", text):
        return RewriteResult(text, note="not rewritten: the file has a DTD internal subset",
                             original=text)
    result = RewriteResult(text, original=text)
    ctx = Context.of(stage.root)
    exact = editor.edits(ctx) + structure.edits(ctx) + attributes.edits(ctx)
    # Shapes to paths change how an outline is written, not what it is: proven on top of
    # the exact edits, so a refusal costs those nothing.
    kept, refused, untried = keep_proven(stage, [], exact, MAX_CHECKS)
    exact_text = stage.text(kept)
    if not kept and not stage.keeps_picture(stage.text([])):
        result.checks, result.renders = stage.checks, stage.renders
        result.note = "not rewritten: the file written out again changes a picture"
        return result
    try:
        reshaping = Stage(exact_text, baseline, name, sizes, limits, pool, should_stop)
    except SvglooError:
        reshaping = None
    for job in (shapes.shape_edits,):
        if reshaping is None:
            break
        reshaping.checks, reshaping.renders = stage.checks, stage.renders
        reshaped, refused_shapes, untried_shapes = keep_proven(
            reshaping, [], job(Context.of(reshaping.root)), MAX_CHECKS // 2)
        refused += refused_shapes
        untried += untried_shapes
        stage.checks, stage.renders = reshaping.checks, reshaping.renders
        if reshaped:
            exact_text = reshaping.text(reshaped)
            kept = kept + reshaped
            try:
                reshaping = Stage(exact_text, baseline, name, sizes, limits, pool,
                                  should_stop)
            except SvglooError:
                reshaping = None
    # Rounding, on the text the exact edits made.
    final_kept = list(kept)
    rounding_refused: list[Edit] = []
    try:
        rounder = Stage(exact_text, baseline, name, sizes, limits, pool, should_stop) \
            if rounding else None
    except SvglooError:
        rounder = None
    if rounder is not None:
        rounder.checks, rounder.renders = stage.checks, stage.renders
        tried = device_rounding.edits(Context.of(rounder.root), sizes)
        round_kept, rounding_refused, untried_here = keep_proven(
            rounder, [], tried, ROUNDING_CHECKS)
        untried += untried_here
        if round_kept:
            stage, final_kept = rounder, round_kept
            kept_text = rounder.text(round_kept)
        else:
            kept_text = exact_text
        stage.checks, stage.renders = rounder.checks, rounder.renders
    else:
        kept_text = exact_text
    # The whole result once more (a text already proven is not rendered again).
    if kept_text != text and not stage.keeps_picture(kept_text):
        kept_text, final_kept = exact_text, kept
    result.checks, result.renders = stage.checks, stage.renders
    if len(kept_text.encode("utf-8")) >= len(text.encode("utf-8")):
        result.note = "not rewritten: the proven rewrites saved nothing"
        return result
    result.text = kept_text
    # written out again: empty elements as <a/>, no XML declaration, comments or blanks
    # around the root, attributes in double quotes
    result.kept["markup"] = 1
    for e in kept:
        result.kept[e.job] = result.kept.get(e.job, 0) + 1
    rounded_nodes = {e.node for e in final_kept if e.job.startswith("precision")}
    if rounded_nodes:
        result.kept["precision"] = len(rounded_nodes)
    for e in refused + rounding_refused:
        job_name = "precision" if e.job.startswith("precision") else e.job
        if job_name != "precision" or e.node not in rounded_nodes:
            result.refused[job_name] = result.refused.get(job_name, 0) + 1
    result.untried = len(untried)
    return result


__all__ = ["MAX_CHECKS", "RewriteResult", "keep_proven", "rewrite_text"]
