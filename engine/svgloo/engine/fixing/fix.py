"""``svgloo fix``: apply proven removals, tidy what they leave behind, prove the result.

Three steps, each a text edit on the source (everything else stays byte for byte):

1. Units go that the proof module (proof.py) lets go - never a proof of its own:
   ``invisible``: the units the scoring proved removable together (``removal.status ==
   "proven"``, the editor's bulk fix); ``hidden``: mostly hidden units, with the same strict
   proof (``check_removal``), together with the invisible ones; ``specks`` and ``harmful``
   (the latter only against a reference): each may change what it changes alone, nothing
   more (``check_speck_removal``, the editor's speck-group fix).
2. What that leaves behind: ``<g>``/``<defs>`` with nothing left inside, and definitions
   (clip paths, masks, gradients, patterns, filters, markers) that were referenced and no
   longer are. ``<symbol>`` and anything else in ``<defs>`` stay: another file may use them
   (``<use href="sprite.svg#icon">``), which no render of this file can show.
   An element alone on its line takes its line with it: no blank lines are left.
3. The whole result is proven by rendering (``proof.text_changes``: CairoSVG and resvg, the
   analysis and the proof size, 2/255 on any page): against the original when only strict
   removals were asked for, else against the exact text the allowance proof saw (so the
   tidying changes nothing). When that fails, the last proven step is kept and said so.
4. With ``rewrite``: the same picture spelled in fewer bytes (cleanup/rewrite.py: editor
   metadata, blanks, groups, unused ids and definitions, shorter numbers, colours, styles
   and path data, shapes as paths), each rewrite and the whole result proven the same way.
   With a ``judge`` (``fix --browser``: Chromium in both embeddings) every rewrite must
   pass it too, and rects as paths and merged paths are offered (only the judge can veto
   what they change in a browser); without one they stay off. ``rounding`` (``--round``)
   only when asked for.
5. With a ``judge``, the result as a whole is judged once more (the removals too): a
   result it refuses falls back to the removals alone, then to the file as it was.

A result longer than the original is never returned (``never_grow``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from svgloo.engine.fixing.cleanup.rewrite import Judge, rewrite_text
from svgloo.engine.wording.describe import describe_unit
from svgloo.engine.reading.document import Document, parse_document
from svgloo.engine.errors import ConfigError
from svgloo.engine.limits import Limits
from svgloo.engine.proving.proof import (check_removal, check_speck_removal, checked_line,
                                         proof_sizes, text_changes)
from svgloo.engine.settings import FIX_KINDS
from svgloo.engine.reading.units import UnitSet, edits_keeping, text_without
from svgloo.engine.processes.workers import RenderPool, shared_pool

KINDS = FIX_KINDS
STRICT_KINDS = ("invisible", "hidden")       # proven: no picture changes
CONTAINERS = frozenset({"g", "defs"})
# Definitions removed once nothing references them. Not <symbol> (sprite sheets are used
# from other files) and not shapes kept in <defs> for the same reason.
DEFINITIONS = frozenset({"clipPath", "mask", "linearGradient", "radialGradient", "pattern",
                         "filter", "marker"})
_REFERENCE = re.compile(r"""url\(\s*['"]?\s*#([^\s'")]+)|href\s*=\s*["']\s*#([^"'\s]+)""")
# Ids a script or an animation may reach without url(#)/href="#": leave definitions alone.
_DYNAMIC = re.compile(r"<(?:[\w.-]+:)?(?:script|animate\w*|set)[\s/>]")
MAX_TIDY_ROUNDS = 32


@dataclass
class FixResult:
    """What ``fix_text`` did to one document."""

    name: str
    original: str
    text: str                                       # the fixed text (== original: nothing)
    removed: dict[str, list[str]] = field(default_factory=dict)  # kind -> unit labels
    containers: list[str] = field(default_factory=list)  # empty <g>/<defs> removed
    definitions: list[str] = field(default_factory=list)  # unused definitions removed
    checked: str = ""                               # what the final proof compared
    fell_back: str = ""                             # why the tidying was not kept, if so
    renders: int = 0
    rewritten: dict[str, int] = field(default_factory=dict)  # rewrite job -> edits kept
    rewrite_note: str = ""                          # why nothing was rewritten, if so
    judged: int = 0                                 # texts the judge (Chromium) compared

    @property
    def changed(self) -> bool:
        return self.text != self.original


def parse_kinds(only: str | None, name: str | None = None) -> tuple[str, ...]:
    """``--only invisible,specks`` -> ("invisible", "specks"); ConfigError for others."""
    kinds = tuple(dict.fromkeys(k.strip() for k in (only or "invisible").split(",")
                                if k.strip()))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ConfigError(name, f"--only takes {', '.join(KINDS)} (comma-separated), not "
                                f"{', '.join(unknown) or repr(only)}")
    return kinds


# --- step 1: which units go -------------------------------------------------------------

def _has_finding(row: dict, kind: str) -> bool:
    return any(f["kind"] == kind for f in row.get("findings", []))


def choose_units(us: UnitSet, result: Mapping[str, Any], kinds: tuple[str, ...], size: int,
                 limits: Limits, pool: RenderPool) -> tuple[dict[int, str], set[int], int]:
    """(unit -> the kind it goes as, the units the allowance proof covers, renders spent).
    Every set comes out of the proof module: the scoring's proven units, ``check_removal``
    (strict) or ``check_speck_removal`` (each unit may change what it changes alone)."""
    rows = result["units"]
    renders = 0
    proven = [r["index"] for r in rows if (r.get("removal") or {}).get("status") == "proven"]
    strict: set[int] = set(proven) if "invisible" in kinds else set()
    if "hidden" in kinds:
        hidden = [r["index"] for r in rows if _has_finding(r, "mostly_hidden")]
        if hidden:
            check = check_removal(us, sorted(strict | set(hidden)), size, limits, pool)
            strict, renders = set(check.removable), renders + check.renders
    loose: dict[int, int] = {}   # unit -> pixels it may change: its own footprint
    if "specks" in kinds:
        loose.update({r["index"]: r["footprint_pixels"] for r in rows
                      if _has_finding(r, "speck")})
    if "harmful" in kinds:
        loose.update({r["index"]: r["footprint_pixels"] for r in rows
                      if r["verdict"] == "harmful"})
    allowance_covers: set[int] = set()
    if loose:
        allowed = {**{i: 0 for i in strict}, **loose}
        check = check_speck_removal(us, sorted(allowed), allowed, size, limits, pool)
        renders += check.renders
        allowance_covers = set(check.removable)
        strict &= allowance_covers
        loose = {i: fp for i, fp in loose.items() if i in allowance_covers}
    chosen: dict[int, str] = {}
    for i in sorted(strict | set(loose)):
        row = rows[i]
        if "invisible" in kinds and i in proven:
            chosen[i] = "invisible"
        elif "specks" in kinds and i in loose and _has_finding(row, "speck"):
            chosen[i] = "specks"
        elif "hidden" in kinds and _has_finding(row, "mostly_hidden") and i in strict:
            chosen[i] = "hidden"
        else:
            chosen[i] = "harmful"
    return chosen, allowance_covers, renders


# --- text edits that leave no blank lines -------------------------------------------------

def _whole_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """``start``-``end`` widened to whole lines when nothing but blanks shares them."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end + 1
    if text[line_start:start].strip() or text[end:line_end].strip():
        return start, end
    return line_start, line_end


def cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the (start, end) spans: nested spans fold into their outer one,
    spans with only blanks between them merge, and a span alone on its lines takes them."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        elif merged and not text[merged[-1][1]:start].strip():
            merged[-1][1] = end
        else:
            merged.append([start, end])
    out, pos = [], 0
    for start, end in merged:
        start, end = _whole_lines(text, start, end)
        start = max(start, pos)
        out.append(text[pos:start])
        pos = end
    out.append(text[pos:])
    return "".join(out)


def text_removing(us: UnitSet, remove: set[int]) -> str:
    """``units.text_without`` with the whole-element removals cut by ``cut``; subpath
    removals are the units module's own edits of ``d``."""
    keep = {u.index for u in us.units} - remove
    spans, edits = [], []
    for e in edits_keeping(us, keep):
        if e.new_text == "":
            spans.append((e.start, e.end))
        else:
            edits.append(e)
    text = us.doc.text
    # Edits of d lie inside elements that stay: apply them from the end, then cut.
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[:e.start] + e.new_text + text[e.end:]
        shift = len(e.new_text) - (e.end - e.start)
        spans = [(s + shift if s >= e.end else s, t + shift if t >= e.end else t)
                 for s, t in spans]
    return cut(text, spans)


# --- step 2: what removals leave behind -------------------------------------------------

def _label(doc: Document, i: int) -> str:
    ident = doc.nodes[i].get("id")
    return doc.elements[i].tag + (f"#{ident}" if ident else "")


def referenced_ids(text: str) -> set[str]:
    """Ids named by ``url(#id)`` or ``href="#id"`` anywhere in the text (CSS included)."""
    return {a or b for a, b in _REFERENCE.findall(text)}


def leftovers(doc: Document, referenced_before: set[str]) -> tuple[list[int], list[int]]:
    """(empty containers, definitions no longer referenced) of a document: element
    indices. A container is empty when nothing is inside it but blanks; one whose id is
    referenced stays. A definition goes when its id was referenced in the original and is
    not now (its own text aside)."""
    now: dict[str, int] = {}
    for a, b in _REFERENCE.findall(doc.text):
        now[a or b] = now.get(a or b, 0) + 1
    dynamic = bool(_DYNAMIC.search(doc.text))
    empty, unused = [], []
    for i, (el, node) in enumerate(zip(doc.elements, doc.nodes)):
        if i == 0:
            continue  # the root
        ident = node.get("id")
        if el.tag in CONTAINERS and len(node) == 0 and not (node.text or "").strip() \
                and not (ident and ident in now):
            empty.append(i)
        elif el.tag in DEFINITIONS and ident and ident in referenced_before and not dynamic:
            own = len(referenced_ids_list(doc.span_text(i), ident))
            if now.get(ident, 0) <= own:
                unused.append(i)
    return empty, unused


def referenced_ids_list(text: str, ident: str) -> list[str]:
    return [a or b for a, b in _REFERENCE.findall(text) if (a or b) == ident]


def tidy(text: str, name: str, referenced_before: set[str], limits: Limits
         ) -> tuple[str, list[str], list[str]]:
    """(text without empty containers and unused definitions, their labels: containers,
    definitions), round after round: removing one can empty its parent."""
    containers: list[str] = []
    definitions: list[str] = []
    for _ in range(MAX_TIDY_ROUNDS):
        doc = parse_document(text, name, limits)
        empty, unused = leftovers(doc, referenced_before)
        if not empty and not unused:
            break
        containers += [_label(doc, i) for i in empty]
        definitions += [_label(doc, i) for i in unused]
        text = cut(text, [(doc.elements[i].start, doc.elements[i].end)
                          for i in empty + unused])
    return text, containers, definitions


# --- the whole fix ------------------------------------------------------------------------

def fix_scored(us: UnitSet, result: Mapping[str, Any], kinds: tuple[str, ...], limits: Limits,
               pool: RenderPool | None = None, rewrite: bool = False,
               judge: Judge | None = None, rounding: bool = False) -> FixResult:
    """Fix a document already scored (``score_document``'s ScoreRun: its units and
    ``svgloo.score/1`` result). ``harmful`` needs a reference: refused without one.
    ``rewrite``: then the rewrite stage (cleanup/rewrite.py) spells the result shorter,
    each rewrite proven against the original picture (against the proven removal when
    specks or harmful units went, which may change it). ``judge``: a third judge of every
    rewrite and of the whole result (module doc, steps 4 and 5). Never longer than the
    original."""
    pool = pool or shared_pool(limits)
    fixed = _remove_and_tidy(us, result, kinds, limits, pool)
    sizes, _note = proof_sizes(us, int(result["render_size"]), limits)
    baseline = us.doc.text if set(kinds) <= set(STRICT_KINDS) else fixed.text
    removed_only = fixed.text
    if rewrite:
        done = rewrite_text(fixed.text, baseline, us.doc.name, sizes, limits, pool,
                            rounding=rounding, judge=judge)
        fixed.renders += done.renders
        fixed.judged += done.judged
        fixed.rewrite_note = done.note
        if done.changed:
            fixed.text, fixed.rewritten = done.text, done.kept
    if judge is not None and fixed.changed:
        fixed = _judged(fixed, removed_only, baseline, sizes, judge)
    return never_grow(fixed)


def _judged(fixed: FixResult, removed_only: str, baseline: str, sizes: tuple[int, ...],
            judge: Judge) -> FixResult:
    """``fixed`` when the judge accepts it against ``baseline`` (the rewrite stage judged
    it already: then it is not drawn again by a caching judge), else the removals alone,
    else the file as it was."""
    for text in dict.fromkeys((fixed.text, removed_only)):
        if text == fixed.original:
            break
        fixed.judged += 1
        if judge(baseline, text, sizes):
            if text != fixed.text:
                fixed.text, fixed.rewritten = text, {}
                fixed.fell_back = "the browser judge refused the rewritten result; kept " \
                                  "the removals alone"
            return fixed
    return FixResult(fixed.name, fixed.original, fixed.original, renders=fixed.renders,
                     judged=fixed.judged,
                     fell_back="the browser judge refused the result; left it as it was")


def never_grow(fixed: FixResult,
               size_of: Callable[[str], int] = lambda text: len(text.encode("utf-8"))
               ) -> FixResult:
    """``fixed`` as it is, or unchanged when its text would be longer than the original
    (rewriting subpaths can respell ``zm`` as ``z m``): a fix never grows a file."""
    if fixed.changed and size_of(fixed.text) > size_of(fixed.original):
        return FixResult(fixed.name, fixed.original, fixed.original, renders=fixed.renders,
                         fell_back="the result was larger than the file; left it as it was")
    return fixed


def _remove_and_tidy(us: UnitSet, result: Mapping[str, Any], kinds: tuple[str, ...], limits: Limits,
                     pool: RenderPool) -> FixResult:
    """Steps 1 to 3 of the module's doc: proven removals, tidying, the whole proof."""
    doc = us.doc
    size = int(result["render_size"])
    if "harmful" in kinds and result["reference"].get("kind") == "self":
        raise ConfigError(doc.name, "--only harmful needs a reference (--reference FILE): "
                                    "against its own picture nothing is harmful")
    fixed = FixResult(doc.name, doc.text, doc.text)
    chosen, allowance_covers, renders = choose_units(us, result, kinds, size, limits, pool)
    fixed.renders = renders
    if not chosen:
        return fixed
    rows = result["units"]
    for i, kind in chosen.items():
        fixed.removed.setdefault(kind, []).append(describe_unit(rows[i]))
    remove = set(chosen)
    # The text each proof saw: the original (strict kinds only), or exactly the text
    # without the units that the allowance proof let go together.
    proven_text = text_without(us, remove)
    baseline = doc.text if not allowance_covers else proven_text
    cut_text = text_removing(us, remove)
    tidied, containers, definitions = tidy(cut_text, doc.name,
                                           referenced_ids(doc.text), limits)
    sizes, note = proof_sizes(us, size, limits)
    fixed.checked = ("the whole result against the original: " if baseline is doc.text else
                     "the tidying against the proven removal: ") + checked_line(sizes, note)
    candidates = [(tidied, True)] + ([(cut_text, False)] if cut_text != tidied else [])
    for text, kept in candidates:
        if text == baseline:
            fixed.text = text
            return fixed
        found, spent = text_changes(baseline, text, sizes, limits, pool, doc.name)
        fixed.renders += spent
        if not found:
            fixed.text = text
            if kept:
                fixed.containers, fixed.definitions = containers, definitions
            return fixed
        if kept and (containers or definitions):
            fixed.fell_back = ("removing the empty containers and unused definitions "
                               f"{found[0].describe()}; kept them")
    # Even the blank lines matter to some renderer: the text the proof saw, unchanged.
    fixed.text = proven_text
    fixed.fell_back = (fixed.fell_back + "; " if fixed.fell_back else "") + \
        "kept the blank lines the removal leaves (removing them changed a picture)"
    return fixed


def fix_text(text: str | bytes, name: str, kinds: tuple[str, ...] = ("invisible",),
             settings=None, pool: RenderPool | None = None, rewrite: bool = False,
             judge: Judge | None = None, rounding: bool = False) -> FixResult:
    """Score a document (pixel backbone unless ``settings`` say otherwise) and fix it;
    with ``rewrite``, spell the result shorter too (``fix_scored``). Given the file's
    bytes, "never longer" is measured in the file's own encoding."""
    from svgloo.engine.reading.files import encode_like
    from svgloo.engine.scoring.score import ScoreSettings, score_document

    settings = settings or ScoreSettings(backbone="pixel")
    pool = pool or shared_pool(settings.limits)
    doc = parse_document(text, name, settings.limits)
    # A fix removes only what the removal proof passed: always scored with it.
    run = score_document(doc, settings.with_(prove=True), pool=pool)
    fixed = fix_scored(run.units, run.result, kinds, settings.limits, pool, rewrite, judge,
                       rounding)
    if isinstance(text, bytes):
        fixed = never_grow(fixed, lambda t: len(encode_like(t, text, name)))
    return fixed


__all__ = ["KINDS", "FixResult", "parse_kinds", "choose_units", "cut", "text_removing",
           "referenced_ids", "leftovers", "tidy", "fix_scored", "never_grow", "fix_text"]
