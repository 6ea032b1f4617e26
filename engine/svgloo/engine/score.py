"""The engine's scoring entry point: document -> units -> LOO images -> deltas -> result.

Every front end (CLI, daemon, language server, viewer) calls ``score_document`` (or
``score_file`` / ``score_text``) and reads the ``svgloo.score/1`` JSON it returns.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from svgloo.engine.backbones import choose_backbone, get_backbone
from svgloo.engine.document import Document, load_document, parse_document
from svgloo.engine.errors import ConfigError
from svgloo.engine.findings import FindingThresholds, count_findings, find_all, findings_steps
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.loo import LooResult, leave_one_out
from svgloo.engine.preflight import check_scorable
from svgloo.engine.progress import ARRAY_STEP, Stage, WorkProgress
from svgloo.engine.proof import Disagreement, ProofResult, prove_removals
from svgloo.engine.proof_reuse import EarlyMeasures
from svgloo.engine.reference import ReferenceSpec, load_reference, resolve_reference
from svgloo.engine.reference_checks import reference_warnings
from svgloo.engine.render_jobs import FullPictures, job_render_full
from svgloo.engine.result_types import ScoreResult, UnitRow, Verdict
from svgloo.engine.safety import check_document
from svgloo.engine.units import UnitSet
from svgloo.engine.workers import RenderPool, shared_pool
from svgloo.engine.settings import DEFAULT_RENDER_SIZE, ScoreSettings

SCHEMA = "svgloo.score/1"


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
    proof: object = field(default=None, repr=False)  # proof_reuse.ProofState

    def footprint(self, unit: int) -> np.ndarray:
        if unit not in self.footprints_cache:
            self.footprints_cache[unit] = self.loo.patches[unit].footprint(self.loo.full)
        return self.footprints_cache[unit]


def _render_svg_reference(path: str, size: int, limits: Limits, pool: RenderPool) -> np.ndarray:
    return render_document(load_document(path, limits), size, limits, pool)


def score_document(doc: Document, settings: ScoreSettings = ScoreSettings(), *,
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
    t_parse = time.perf_counter() - t0

    choice = choose_backbone(settings.backbone, settings.weights)
    if backbone is None:
        backbone = get_backbone(choice.name, settings.weights, settings.device,
                                settings.precision)
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
    if previous is not None and (previous.settings != settings
                                 or previous.result.get("backbone") != backbone.name):
        previous = None
    # The document's pictures in both renderers, from now on beside the layers: the
    # leave-one-out's full render and the proof's comparison of the renderers.
    pictures = FullPictures(doc.text, settings.size, limits, pool, doc.name,
                            ("cairosvg", "resvg") if settings.prove else ("cairosvg",))
    # After an edit, what the proof's reuse measures starts once the layers are drawn.
    early = EarlyMeasures(previous.proof, units, limits, pool, pictures) \
        if previous is not None and previous.proof is not None else None
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
    warnings += reference_warnings(doc, spec, reference.image if spec.kind == "image" else None,
                                   limits)
    prepared = backbone.prepare(reference)
    full_score = float(backbone.similarity(loo.full[None], prepared)[0])
    if hasattr(backbone, "similarity_patched"):
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
    found = find_all(units, [r["footprint_pixels"] for r in unit_rows], settings.size,
                     limits, pool, thresholds, layer_cache, finding, loo.alone,
                     texts=loo.texts)
    finding.finish()
    for row, findings in zip(unit_rows, found):
        row["findings"] = findings
    t_findings = time.perf_counter() - t_findings
    # Which units may be deleted: a stricter proof than the footprint (proof.py).
    invisible = [r["index"] for r in unit_rows if not r["visible"]]
    proof = prove_removals(units, invisible, settings.size, limits, pool,
                           over_white={i: loo.patches[i].largest_change(loo.full)
                                       for i in invisible},
                           previous=previous.proof if previous else None,
                           pictures=pictures, early=early) if settings.prove \
        else _proof_skipped(unit_rows, loo.full.shape[:2])
    for row, removal in zip(unit_rows, proof.status):
        row["removal"] = removal
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
        "method": settings.method,
        "render_size": settings.size,
        "subpaths": settings.subpaths,
        "thresholds": {"helpful": helpful, "harmful": harmful, "source": threshold_source},
        "finding_thresholds": thresholds.to_json(),
        "full_score": round(full_score, 6),
        "units": unit_rows,
        "summary": {**summarize(unit_rows), **count_findings(unit_rows)},
        "bulk_removal": proof.bulk,
        "renderer_disagreement": proof.disagreement.to_json(doc) if proof.disagreement.pixels
        else None,
        "warnings": warnings + proof.warnings,
        "notes": notes,
        "timings": {"parse_s": round(t_parse, 4),
                    "render_s": round(loo.timings.get("render_s", 0.0), 4),
                    "composite_s": round(loo.timings.get("composite_s", 0.0), 4),
                    "score_s": round(t_score, 4),
                    "findings_s": round(t_findings, 4),
                    "proof_s": round(proof.seconds, 4),
                    "proof_renders": proof.renders,
                    "renders": loo.renders,
                    "total_s": round(time.perf_counter() - t0, 4)},
    }
    return ScoreRun(result, doc, units, loo, settings=settings, prepared=prepared,
                    proof=proof.state)


def _proof_skipped(rows: list[UnitRow], shape: tuple[int, int]) -> ProofResult:
    """Scoring only (``prove=False``): no unit is offered for deletion; those without a
    footprint are "unverified", saying why."""
    status = [{"status": "visible", "reason": "removing it changes CairoSVG's picture "
               "(its footprint)"} if r["visible"] else
              {"status": "unverified", "reason": "not checked: scoring only (no removal "
               "proof was asked for)"} for r in rows]
    return ProofResult(status, None, Disagreement(0, None, np.zeros(shape, bool)), [], 0, 0.0)


def _similarity_patched(backbone, loo: LooResult, prepared, stage: Stage,
                        previous: ScoreRun | None = None) -> np.ndarray:
    """A backbone that scores patches itself; it reports each one done when its
    ``similarity_patched`` takes ``on_done`` (a callable, called with a count), and
    reuses what it can of an earlier scoring when it takes ``previous`` (the earlier
    full render, patches and prepared reference; see protocols.Backbone)."""
    import inspect

    try:
        takes = inspect.signature(backbone.similarity_patched).parameters
    except (TypeError, ValueError):  # no signature to read (a builtin): assume not
        takes = {}
    kw = {}
    if "on_done" in takes:
        kw["on_done"] = stage.advance
    if "previous" in takes and previous is not None:
        kw["previous"] = (previous.loo.full, previous.loo.patches, previous.prepared)
    return backbone.similarity_patched(loo.full, loo.patches, prepared, **kw)


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
        "proven_removable": sum(r.get("removal", {}).get("status") == "proven" for r in rows),
        "unverified": sum(r.get("removal", {}).get("status") == "unverified" for r in rows),
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
