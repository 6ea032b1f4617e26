"""The rewrite stage of ``svgloo fix --rewrite``: the same picture in fewer bytes.

The rewrite modules propose edits (editor.py: editor metadata and comments; attributes.py:
path data, numbers, colours, styles and defaults spelled shorter; browser_digits.py: the
digits of path data no reader keeps; structure.py: blanks, groups, ids and definitions;
shapes.py: shapes as paths;
device_rounding.py: path data rounded). None of them decides what
stays: every subset tried is serialised and proven against the baseline with the proof
module's own check of a rewritten text (``proof.text_changes``: CairoSVG and resvg, the
analysis and the proof size, 2/255 over any page), never a check of its own.

All the exact edits are tried at once; when that changes a picture, the edits are split by
job, then halved, and each part is tried on top of what was kept (a rewrite that fails is
left out, not forced). Shapes become paths on top of that (shapes.py); then, only when
asked for (``rounding``), path data is rounded, each number to the fewest decimals that
keep it where the renderers snap it (device_rounding.py), split and halved the same way.
With a ``judge`` (``fix --browser``: Chromium) each text must pass it too, after the proof;
then rects as paths and merged sibling paths are offered, and rounding (coarser first)
when asked for.
Roundings are not halved but searched by where the proof saw pixels move
(rounding_search.py: a rounding can only move pixels inside its path's device box), so a
logo's hundred paths cost a few proofs, not one per refused path. Checks are capped per
stage (``MAX_CHECKS``); what the cap leaves untried stays as it was.

The result is never longer than the text it started from: a longer one is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from svgloo.engine.fixing.cleanup import (attributes, browser_digits, device_rounding, editor,
                                          path_boxes, rounding_search, shapes, structure)
from svgloo.engine.fixing.cleanup.edits import Context, Edit, apply
from svgloo.engine.reading.document import parse_document
from svgloo.engine.errors import SvglooError
from svgloo.engine.limits import Limits
from svgloo.engine.proving.pictures import Change
from svgloo.engine.proving.proof import text_changes
from svgloo.engine.processes.workers import RenderPool

MAX_CHECKS = 16            # proofs of the exact edits
ROUNDING_CHECKS = 12       # proofs of roundings

# A third judge of a rewritten text, called only once the proof passed it: (the baseline
# text, the candidate text, the proven sizes) -> True when the candidate keeps the picture.
# ``fix --browser`` passes Chromium (svgloo.validation.chromium_judge); the engine knows it
# only as this callable (it may not import the validation layer).
Judge = Callable[[str, str, tuple[int, ...]], bool]
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
    judged: int = 0                                  # texts the judge (Chromium) drew
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
                 should_stop: Callable[[], bool] | None = None, judge: Judge | None = None):
        doc = parse_document(text, name, limits)
        self.root = doc.root
        self.prolog = _prolog(text, doc.elements[0].start)
        self.epilogue = _epilogue(text, doc.elements[0].end)
        self.baseline, self.name, self.sizes = baseline, name, sizes
        self.limits, self.pool, self.should_stop = limits, pool, should_stop
        self.judge = judge
        self.checks = self.renders = self.judged = 0
        self._outcomes: dict[str, bool] = {}
        self._changes: dict[str, list[Change]] = {}

    def text(self, edits: list[Edit]) -> str:
        tree = apply(self.root, edits)
        etree.cleanup_namespaces(tree)
        return self.prolog + etree.tostring(tree, encoding="unicode", with_tail=False) + \
            self.epilogue

    def proof_changes(self, text: str) -> list[Change]:
        """What the proof (proof.text_changes) saw move in a rewritten text; once per text."""
        if text not in self._changes:
            found, renders = text_changes(self.baseline, text, self.sizes, self.limits,
                                          self.pool, self.name, self.should_stop)
            self.checks += 1
            self.renders += renders
            self._changes[text] = found
        return self._changes[text]

    def keeps_picture(self, text: str) -> bool:
        """The proof of a rewritten text, then the judge when there is one (only on what
        the proof passed: the proof is never loosened); once per text."""
        if text not in self._outcomes:
            kept = not self.proof_changes(text)
            if kept and self.judge is not None and text != self.baseline:
                self.judged += 1
                kept = self.judge(self.baseline, text, self.sizes)
            self._outcomes[text] = kept
        return self._outcomes[text]

    def spent_from(self, other: "Stage") -> "Stage":
        """Carry the counts and verdicts of ``other`` on (stages follow each other on one
        text, against one baseline: a text judged once is not drawn again)."""
        self.checks, self.renders, self.judged = other.checks, other.renders, other.judged
        self._outcomes, self._changes = other._outcomes, other._changes
        return self


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


def _keep_roundings(stage: Stage, ctx: Context, candidates: list[Edit], budget: int
                    ) -> tuple[list[Edit], list[Edit], list[Edit]]:
    """Roundings searched by where the proof saw pixels move (rounding_search), then what
    that left (paths without a device box, or all of them when the judge refused the
    proven set) tried by halving, within ``budget`` proofs in all."""
    boxes = path_boxes.device_boxes(ctx, stage.sizes, [e.node for e in candidates]) or {}
    before = stage.checks
    kept, refused, left = rounding_search.keep_rounded(stage, candidates, boxes, budget)
    rest = left + [e for e in candidates if e.node not in boxes]
    more, refused_more, untried = keep_proven(stage, kept, rest,
                                              budget - (stage.checks - before))
    return more, refused + refused_more, untried


def rewrite_text(text: str, baseline: str, name: str, sizes: tuple[int, ...], limits: Limits,
                 pool: RenderPool, should_stop: Callable[[], bool] | None = None,
                 rounding: bool = False, judge: Judge | None = None) -> RewriteResult:
    """``text`` rewritten in fewer characters, every kept rewrite proven against
    ``baseline`` (the original picture), the whole result included.

    ``judge`` (``fix --browser``: Chromium in both embeddings) must also accept every text
    kept. With a judge, the rewrites that only it can veto are offered too: rects as paths
    and sibling paths merged. Without one they stay off (a rect as a path or merged strokes
    move Chromium's picture where the proof renderers show nothing: shapes.py).

    ``rounding``: also round path data, off unless asked for. A rounding CairoSVG and
    resvg both accept can still move Chromium drawing the SVG as a document
    (logos/lateral-icon.svg: six paths rounded within their 1/512 px bins moved its
    <object> picture by 30/255, its <img> by 1/255); one Chromium accepts at the judged
    sizes can still move it at another (a logo: 25/255 at 100 px, 0 at 384; docs/fix.md).
    With a judge a coarser rounding (a bound in device px) is tried first."""
    try:
        stage = Stage(text, baseline, name, sizes, limits, pool, should_stop, judge)
    except SvglooError as exc:
        return RewriteResult(text, note=f"not rewritten: {exc.message}", original=text)
    if "<!ENTITY" in text or re.search(r"<!DOCTYPE[^>]*\[", text):
        return RewriteResult(text, note="not rewritten: the file has a DTD internal subset",
                             original=text)
    result = RewriteResult(text, original=text)
    ctx = Context.of(stage.root)
    # browser_digits last: its edits respell the path data they find, the paths job's
    # spelling of it included (apply() keeps this order for the edits of one node)
    exact = editor.edits(ctx) + structure.edits(ctx) + attributes.edits(ctx) + \
        browser_digits.edits(ctx)
    kept, refused, untried = keep_proven(stage, [], exact, MAX_CHECKS)
    exact_text, exact_kept = stage.text(kept), list(kept)
    if not kept and not stage.keeps_picture(stage.text([])):
        result.checks, result.renders = stage.checks, stage.renders
        result.judged = stage.judged
        result.note = "not rewritten: the file written out again changes a picture"
        return result

    def on(text_now: str) -> Stage | None:
        try:
            return Stage(text_now, baseline, name, sizes, limits, pool, should_stop,
                         judge).spent_from(stage)
        except SvglooError:
            return None

    # Then, each on top of what was kept, one job at a time: shapes as paths (an outline
    # written another way: a refusal costs the exact edits nothing), with a judge sibling
    # paths merged, and rounding. A stage's edits are proposed on the text before it.
    later: list[tuple[str, Callable[[Context], list[Edit]], int]] = [
        ("shapes", lambda c: shapes.shape_edits(c, rects=judge is not None), MAX_CHECKS // 2)]
    if judge is not None:
        later.append(("merged", shapes.merge_edits, MAX_CHECKS // 2))
    if rounding:
        later.append(("precision", lambda c: device_rounding.edits(
            c, sizes, bound_px=device_rounding.BOUND_PX if judge is not None else None),
            ROUNDING_CHECKS))
    kept_text = exact_text
    rounded_nodes: set[int] = set()
    for job_name, job, budget in later:
        here = on(kept_text)
        if here is None:
            continue
        here_ctx = Context.of(here.root)
        if job_name == "precision":
            done, refused_here, untried_here = _keep_roundings(here, here_ctx, job(here_ctx),
                                                               budget)
        else:
            done, refused_here, untried_here = keep_proven(here, [], job(here_ctx), budget)
        stage = here
        untried += untried_here
        if job_name == "precision":
            rounded_nodes = {e.node for e in done}
            refused += list({e.node: e for e in refused_here
                             if e.node not in rounded_nodes}.values())
        else:
            refused += refused_here
        if done:
            kept_text = here.text(done)
            kept = kept + done
    # The whole result once more (a text already proven is not rendered again).
    if kept_text != text and not stage.keeps_picture(kept_text):
        kept_text, kept, rounded_nodes = exact_text, exact_kept, set()
        result.note = "the later rewrites failed the whole proof; kept the exact ones"
    result.checks, result.renders, result.judged = stage.checks, stage.renders, stage.judged
    if len(kept_text.encode("utf-8")) >= len(text.encode("utf-8")):
        result.note = "not rewritten: the proven rewrites saved nothing"
        return result
    result.text = kept_text
    # written out again: empty elements as <a/>, no XML declaration, comments or blanks
    # around the root, attributes in double quotes
    result.kept["markup"] = 1
    for e in kept:
        job_name = "precision" if e.job.startswith("precision") else e.job
        if job_name != "precision":
            result.kept[job_name] = result.kept.get(job_name, 0) + 1
    if rounded_nodes and kept:
        result.kept["precision"] = len(rounded_nodes)
    for e in refused:
        job_name = "precision" if e.job.startswith("precision") else e.job
        result.refused[job_name] = result.refused.get(job_name, 0) + 1
    result.untried = len(untried)
    return result


__all__ = ["MAX_CHECKS", "Judge", "RewriteResult", "keep_proven", "rewrite_text"]
