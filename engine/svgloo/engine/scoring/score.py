"""The engine's scoring entry point: document -> units -> LOO images -> deltas -> result.

Every front end (CLI, daemon, language server, viewer) calls ``score_document`` (or
``score_file`` / ``score_text``) and reads the ``svgloo.score/1`` JSON it returns.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Final, cast

import numpy as np

from svgloo.engine.scoring.backbones import choose_backbone, get_backbone
from svgloo.engine.reading.document import Document, load_document, parse_document
from svgloo.engine.errors import ConfigError
from svgloo.engine.leave_one_out.fit_check import check_fits
from svgloo.engine.scoring.findings import FindingThresholds, count_findings, find_all, findings_steps
from svgloo.engine.limits import (DEFAULT_LIMITS, DocumentBudget, Limits, current_budget,
                                  document_budget)
from svgloo.engine.leave_one_out.loo import LooResult, leave_one_out
from svgloo.engine.reading.preflight import check_scorable
from svgloo.engine.progress import ARRAY_STEP, Stage, WorkProgress
from svgloo.engine.protocols import EarlierScoring, PatchedBackbone
from svgloo.engine.scoring.deferred_proof import (removal_counts, run_proof, unchecked_rows,
                                                 with_proof)
from svgloo.engine.proving.proof_reuse import EarlyMeasures, ProofState
from svgloo.engine.scoring.reference import ReferenceSpec, load_reference, resolve_reference
from svgloo.engine.scoring.reference_checks import mismatch_warning, reference_warnings
from svgloo.engine.rendering.render_jobs import FullPictures, job_render_full
from svgloo.engine.rendering.renderers import PROOF_RENDERERS
from svgloo.engine.result_types import ScoreResult, Summary, UnitRow, Verdict
from svgloo.engine.reading.safety import check_document
from svgloo.engine.reading.units import UnitSet
from svgloo.engine.processes.workers import RenderPool, shared_pool
from svgloo.engine.settings import DEFAULT_RENDER_SIZE, ScoreSettings

SCHEMA: Final = "svgloo.score/1"


PAPER_THRESHOLDS = (0.005, -0.005)  # helpful, harmful: the paper's, for CLIP ViT-B/32


def thresholds_for(settings: ScoreSettings, backbone) -> tuple[float, float, str]:
    """(helpful, harmful, where they come from): the settings' when given, else the
    backbone's own (a backbone's ``helpful_threshold``/``harmful_threshold`` attributes),
    else the paper's."""
    helpful = settings.helpful_threshold
    harmful = settings.harmful_threshold
    source = "given"
    if helpful is None or harmful is None:
        own = (getattr(backbone, "helpful_threshold", None),
               getattr(backbone, "harmful_threshold", None))
        source = f"{backbone.name} backbone" if None not in own else "the paper's"
        if None in own:
            own = PAPER_THRESHOLDS
        if helpful is None:
            helpful = own[0]
        if harmful is None:
            harmful = own[1]
        if settings.helpful_threshold is not None or settings.harmful_threshold is not None:
            source = f"given and {source}"
    assert helpful is not None and harmful is not None  # each given, or from own or the paper's
    return float(helpful), float(harmful), source


def verdict(delta: float, helpful: float, harmful: float) -> Verdict:
    if delta > helpful:
        return "helpful"
    if delta < harmful:
        return "harmful"
    return "neutral"


@dataclass
class ScoreRun:
    """A finished scoring: the JSON result plus the arrays front ends draw from."""

    result: ScoreResult
    doc: Document
    units: UnitSet
    loo: LooResult
    footprints_cache: dict = field(default_factory=dict, repr=False)
    # What a later scoring of an edited text reuses (score_document's ``previous``).
    settings: ScoreSettings | None = field(default=None, repr=False)
    prepared: object = field(default=None, repr=False)
    proof: ProofState | None = field(default=None, repr=False)
    # Scored without the proof: the last proof of an earlier text of this document, which
    # the proof asked for later (deferred_proof.prove_run) or the next scoring reuses.
    proof_basis: ProofState | None = field(default=None, repr=False)
    # The document's full pictures, for a proof asked later.
    pictures: FullPictures | None = field(default=None, repr=False)

    def footprint(self, unit: int) -> np.ndarray:
        if unit not in self.footprints_cache:
            self.footprints_cache[unit] = self.loo.patches[unit].footprint(self.loo.full)
        return self.footprints_cache[unit]


def _render_svg_reference(path: str, size: int, limits: Limits, pool: RenderPool) -> np.ndarray:
    return render_document(load_document(path, limits), size, limits, pool)


def score_document(doc: Document, settings: ScoreSettings = ScoreSettings(), *,
                   progress=None, **kw) -> ScoreRun:
    """Score every unit of a parsed document (see _score_document) within the document's
    budget: the caller's (the daemon and the viewer set one) or, where none is set, one
    of ``settings.limits.document_timeout_s`` started here. Every stage checks it: the
    render pool on each job, the main process's stages as they report progress."""
    budget = current_budget(doc.name)
    if budget is None:
        limits = settings.limits
        pool = kw.get("pool")
        if pool is not None and pool.limits.document_timeout_s > limits.document_timeout_s:
            # A pool built with a longer document limit (the tests' hang detector, so
            # that a loaded machine cannot fail them) gives the document that long.
            limits = replace(limits, document_timeout_s=pool.limits.document_timeout_s)
        with document_budget(DocumentBudget.from_limits(doc.name, limits)):
            return score_document(doc, settings, progress=progress, **kw)
    if progress is None or callable(progress):
        report = progress

        def progress(done: int, total: int) -> None:
            budget.check()  # raises the budget's one-line LimitError once it is spent
            if report is not None:
                report(done, total)
    return _score_document(doc, settings, progress=progress, **kw)


def _score_document(doc: Document, settings: ScoreSettings = ScoreSettings(), *,
                   pool: RenderPool | None = None, progress=None,
                   backbone=None, layer_cache=None,
                   previous: ScoreRun | None = None) -> ScoreRun:
    """Score every unit of a parsed document. Raises SvglooError subclasses only.

    ``progress(done, total)`` is called as the work goes (steps of every stage: renders,
    composites, similarities, findings; see progress.py); ``backbone`` overrides the
    settings' backbone with a loaded instance; ``layer_cache`` (a mapping kept by the
    caller) lets the fast method reuse layer renders across calls; ``previous`` (the run
    of an earlier text of the same document, same settings and backbone) lets it keep
    what the edit cannot have changed: the result is that of a call without it."""
    t0 = time.perf_counter()
    limits = settings.limits
    pool = pool or shared_pool(limits)
    warnings, units = check_scorable(doc, limits, settings.subpaths, settings.method)
    # Before the document's pictures take the workers: a file that cannot fit is told so
    # in seconds (fit_check.py).
    check_fits(units, settings.size, limits, pool)
    t_parse = time.perf_counter() - t0

    choice = choose_backbone(settings.backbone, settings.weights)
    if backbone is None:
        backbone = get_backbone(choice.name, settings.weights, settings.device,
                                settings.precision, settings.preprocess)
    spec = resolve_reference(doc.name, doc, takes_text=backbone.takes_text,
                             reference=settings.reference, prompt=settings.prompt)
    if spec.kind == "text" and not backbone.takes_text:
        raise ConfigError(doc.name, f"the {backbone.name} backbone cannot compare against "
                                    f"text ({spec.source}); use --backbone clip or give a "
                                    "reference image")

    thresholds = FindingThresholds(settings.speck_threshold, settings.hidden_threshold)
    work = WorkProgress.of(progress)
    scoring = work.stage(len(units.units), ARRAY_STEP)
    finding = work.stage(findings_steps(units, thresholds), ARRAY_STEP)
    # Findings render units alone; a shared cache reuses loo_fast's single-unit layers.
    layer_cache = {} if layer_cache is None else layer_cache
    if previous is not None and (not _same_scoring(previous.settings, settings)
                                 or previous.result.get("backbone") != backbone.name):
        previous = None
    # The last proof of an earlier text, whichever run proved it (a run scored without
    # the proof carries its predecessor's): the proof's reuse starts from it.
    basis = None if previous is None else (
        previous.proof if previous.proof is not None else previous.proof_basis)
    # The document's pictures in both renderers, from now on beside the layers: the
    # leave-one-out's full render and the proof's comparison of the renderers. Without
    # the proof each starts when first asked for: the leave-one-out reads CairoSVG's only
    # when it renders the text as written (not after absolute_subpaths, not naively), and
    # a batch paid for a picture nobody looked at in 13 of the 56 held-out corpus files
    # and 53 of the other 164.
    pictures = FullPictures(doc.text, settings.size, limits, pool, doc.name,
                            PROOF_RENDERERS if settings.prove else ())
    # After an edit, what the proof's reuse measures starts once the layers are drawn.
    early = EarlyMeasures(basis, units, limits, pool, pictures) \
        if settings.prove and basis is not None else None
    loo = leave_one_out(units, settings.method, settings.size, limits, pool, work,
                        layer_cache=layer_cache, alone=findings_steps(units, thresholds) > 0,
                        previous=previous.loo if previous else None, pictures=pictures,
                        on_drawn=early.start if early is not None else None)
    if early is not None:
        early.start()  # (naive draws no layers)
    t_score = time.perf_counter()
    reference = load_reference(
        spec, settings.size, loo.full,
        lambda p: _render_svg_reference(p, settings.size, limits, pool))
    unfair = reference_warnings(doc, spec, reference.image if spec.kind == "image" else None,
                                limits)
    warnings += unfair
    prepared = backbone.prepare(reference)
    full_score = float(backbone.similarity(loo.full[None], prepared)[0])
    if not unfair:  # a blank or ill-proportioned reference is warned about already
        warnings += mismatch_warning(spec, backbone.name, full_score)
    if isinstance(backbone, PatchedBackbone):
        scores = _similarity_patched(backbone, loo, prepared, scoring, previous)
    else:
        scores = _similarity_batched(backbone, loo, prepared, full_score, scoring)
    scoring.finish()
    t_score = time.perf_counter() - t_score

    helpful, harmful, threshold_source = thresholds_for(settings, backbone)
    unit_rows: list[UnitRow] = []
    for u, s in zip(units.units, scores):
        delta = full_score - float(s)
        fp_pixels = loo.footprint_pixels(u.index)
        (l0, c0), (l1, c1) = doc.position(u.start), doc.position(u.end)
        unit_rows.append({
            "index": u.index, "tag": u.tag, "id": u.id, "kind": u.kind,
            "subpath": u.subpath, "offsets": [u.start, u.end],
            "range": {"start": {"line": l0, "character": c0},
                      "end": {"line": l1, "character": c1}},
            "delta": round(delta, 6), "verdict": verdict(delta, helpful, harmful),
            "footprint_pixels": fp_pixels, "visible": fp_pixels > 0,
            "findings": [],  # filled in below, once every unit's footprint is known
        })
    t_findings = time.perf_counter()
    # The units of the text the leave-one-out drew (compound paths with absolute movetos,
    # see loo.absolute_subpaths): their layers are the ones it drew and cached, and the
    # subpaths it drew alone (loo.alone) come from that text too.
    drawn = loo.texts.us if loo.texts is not None else units
    found = find_all(drawn, [r["footprint_pixels"] for r in unit_rows], settings.size,
                     limits, pool, thresholds, layer_cache, finding, loo.alone,
                     texts=loo.texts)
    finding.finish()
    for row, findings in zip(unit_rows, found):
        row["findings"] = findings
    t_findings = time.perf_counter() - t_findings
    # Which units may be deleted is the removal proof's (with_proof, below), unless it
    # is asked for later (deferred_proof.prove_run): until then, none.
    unchecked_rows(unit_rows)
    notes = []
    if spec.kind == "self":
        notes.append("self-analysis: the reference is the full render, so no unit can be "
                     "harmful; give --reference or --prompt to find harmful units")
    result: ScoreResult = {
        "schema": SCHEMA,
        "file": doc.name,
        "backbone": backbone.name,
        "backbone_detail": {"description": backbone.description, "reason": choice.reason
                            if choice.name == backbone.name else "given by the caller"},
        "reference": spec.to_json(),
        "method": settings.method,  # type: ignore[typeddict-item]  # preflight allows METHODS only
        "render_size": settings.size,
        "subpaths": settings.subpaths,
        "thresholds": {"helpful": helpful, "harmful": harmful, "source": threshold_source},
        "finding_thresholds": thresholds.to_json(),
        "full_score": round(full_score, 6),
        "units": unit_rows,
        "summary": cast(Summary, {**summarize(unit_rows), **count_findings(unit_rows)}),
        "warnings": warnings,
        "notes": notes,
        "timings": {"parse_s": round(t_parse, 4),
                    "render_s": round(loo.timings.get("render_s", 0.0), 4),
                    "composite_s": round(loo.timings.get("composite_s", 0.0), 4),
                    "score_s": round(t_score, 4),
                    "findings_s": round(t_findings, 4),
                    "renders": loo.renders,
                    "total_s": round(time.perf_counter() - t0, 4)},
    }
    run = ScoreRun(result, doc, units, loo, settings=settings, prepared=prepared,
                   pictures=pictures)
    if not settings.prove:
        run.proof_basis = basis
        return run
    # A stricter proof than the footprint (proof.py), the same call prove_run makes later.
    proof = run_proof(run, pool=pool, previous=basis, early=early)
    run.result = with_proof(result, proof, doc)
    run.proof = proof.state
    return run


def _same_scoring(earlier: ScoreSettings | None, settings: ScoreSettings) -> bool:
    """Whether a run scored with ``earlier`` can start a scoring with ``settings``: the
    same settings, whether either proves or not (the proof is added or reused apart)."""
    return earlier is not None and earlier.with_(prove=settings.prove) == settings


def _similarity_patched(backbone: PatchedBackbone, loo: LooResult, prepared, stage: Stage,
                        previous: ScoreRun | None = None) -> np.ndarray:
    """A backbone that scores patches itself (protocols.PatchedBackbone): it reports each
    patch done, and may reuse what it can of an earlier scoring of the same document."""
    earlier = None if previous is None else EarlierScoring(
        full=previous.loo.full, patches=previous.loo.patches, prepared=previous.prepared)
    return backbone.similarity_patched(loo.full, loo.patches, prepared,
                                       on_done=stage.advance, previous=earlier)


def _similarity_batched(backbone, loo: LooResult, prepared, full_score: float,
                        stage: Stage, batch: int | None = None) -> np.ndarray:
    """Similarity of every leave-one-out image. A unit whose image is the full render
    (nothing changes without it) scores the full render's similarity without a model
    pass; the rest go through the backbone in batches of its own preferred size."""
    batch = batch or int(getattr(backbone, "batch_size", 32) or 32)
    scores = np.full(len(loo.patches), full_score, np.float64)
    changed = [i for i, p in enumerate(loo.patches) if p.box is not None]
    stage.advance(len(loo.patches) - len(changed))
    for start in range(0, len(changed), batch):
        chunk = changed[start:start + batch]
        images = np.stack([loo.patches[i].materialize(loo.full) for i in chunk])
        scores[chunk] = backbone.similarity(images, prepared)
        stage.advance(len(chunk))
    return scores


def summarize(rows: list[UnitRow]) -> dict[str, int]:
    return {
        "units": len(rows),
        "helpful": sum(r["verdict"] == "helpful" for r in rows),
        "harmful": sum(r["verdict"] == "harmful" for r in rows),
        "neutral": sum(r["verdict"] == "neutral" for r in rows),
        "invisible": sum(not r["visible"] for r in rows),
        **removal_counts(rows),
    }


def score_file(path: str, settings: ScoreSettings = ScoreSettings(), **kw) -> ScoreRun:
    return score_document(load_document(path, settings.limits), settings, **kw)


def score_text(text: str | bytes, name: str, settings: ScoreSettings = ScoreSettings(),
               **kw) -> ScoreRun:
    """Score a document held in memory (an editor buffer); ``name`` is its path or URI and
    is used for reference resolution when it is a real path."""
    return score_document(parse_document(text, name, settings.limits), settings, **kw)


def render_document(doc: Document, size: int = DEFAULT_RENDER_SIZE,
                    limits: Limits = DEFAULT_LIMITS,
                    pool: RenderPool | None = None) -> np.ndarray:
    """RGB render of a parsed document, through the safety checks and the worker pool."""
    check_document(doc, limits)
    pool = pool or shared_pool(limits)
    [(rgb, _)] = pool.map(job_render_full, [(doc.text, size, limits, doc.name)], doc.name)
    return rgb


__all__ = ["ScoreSettings", "ScoreRun", "ReferenceSpec", "score_document", "score_file",
           "score_text", "render_document", "verdict", "SCHEMA"]
