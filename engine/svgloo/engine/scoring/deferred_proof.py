"""The removal proof, later: two speeds of answer, one truth.

A scoring with ``ScoreSettings.prove`` off answers with the leave-one-out alone (deltas,
verdicts, footprints, findings): every unit's ``removal`` is "unchecked" and there is no
``bulk_removal``. ``prove_run`` adds the proof to such a run when a removal is on the
table (the editor's quick fix, ``svgloo fix``, the viewer's Remove), and gives exactly
what a scoring with the proof on gives for the same text: the same proof (proof.py), fed
the same leave-one-out numbers, and after an edit the same reuse of the last proof of an
earlier text (proof_reuse.py), whose outcome never depends on what it reuses.

``with_proof`` is the one place a proof's outcome enters a result, for both paths.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from svgloo.engine.proving.proof import ProofResult, prove_removals
from svgloo.engine.result_types import Removal, ScoreResult, UnitRow, is_proven

UNCHECKED: Removal = {"status": "unchecked",
                      "reason": "not checked yet: this answer was scored without the removal "
                                "proof; nothing is offered for deletion until it has run"}


def unchecked_rows(rows: list[UnitRow]) -> None:
    """Mark every row's removal "unchecked" (a scoring without the proof)."""
    for row in rows:
        row["removal"] = UNCHECKED.copy()


def removal_counts(rows: list[UnitRow]) -> dict[str, int]:
    """The summary's removal counts: the proof's, or how many units wait for it."""
    statuses = [r.get("removal", {}).get("status") for r in rows]
    if "unchecked" in statuses:
        return {"unchecked": statuses.count("unchecked")}
    return {"proven_removable": statuses.count("proven"),
            "unverified": statuses.count("unverified")}


def with_proof(result: ScoreResult, proof: ProofResult, doc) -> ScoreResult:
    """``result`` (scored without the proof, or about to get its first) with the proof's
    outcome: each unit's removal, the summary's counts, ``bulk_removal``, the renderers'
    disagreement, the proof's warnings and timings. The keys come in the order a scoring
    with the proof always gave them, so the JSON reads the same either way."""
    rows = result["units"]
    for row, removal in zip(rows, proof.status):
        row["removal"] = removal
    out: dict = {}
    value: Any  # each key's own type; the keys rewritten below are named
    for key, value in result.items():
        if key in ("bulk_removal", "renderer_disagreement"):
            continue
        if key == "summary":
            counts = {k: v for k, v in value.items()
                      if k not in ("proven_removable", "unverified", "unchecked")}
            # proven_removable and unverified after the verdict counts, before findings
            # (summarize's order, then count_findings')
            head = {k: counts.pop(k) for k in ("units", "helpful", "harmful", "neutral",
                                               "invisible") if k in counts}
            value = {**head, **removal_counts(rows), **counts}
        if key == "warnings":
            value = list(value) + proof.warnings
        if key == "timings":
            value = _timings_with_proof(value, proof)
        out[key] = value
        if key == "summary":
            out["bulk_removal"] = proof.bulk
            out["renderer_disagreement"] = (proof.disagreement.to_json(doc)
                                            if proof.disagreement.pixels else None)
    return out  # type: ignore[return-value]


def _timings_with_proof(timings: dict, proof: ProofResult) -> dict:
    out = {}
    for key, value in timings.items():
        if key in ("proof_s", "proof_renders"):
            continue
        if key == "total_s":
            value = round(value + proof.seconds, 4)
        out[key] = value
        if key == "findings_s":
            out["proof_s"] = round(proof.seconds, 4)
            out["proof_renders"] = proof.renders
    return out


def run_proof(run, *, pool=None, should_stop: Callable[[], bool] | None = None,
              previous=None, early=None) -> ProofResult:
    """The removal proof of a scored run (score.ScoreRun): its candidates are the units
    leave-one-out found without a footprint, each with its largest over-white change."""
    settings = run.settings
    limits = settings.limits
    invisible = [r["index"] for r in run.result["units"] if not r["visible"]]
    over_white = {i: run.loo.patches[i].largest_change(run.loo.full) for i in invisible}
    return prove_removals(run.units, invisible, settings.size, limits, pool, should_stop,
                          over_white=over_white, previous=previous,
                          pictures=run.pictures, early=early)


def prove_run(run, *, pool=None, should_stop: Callable[[], bool] | None = None):
    """``run`` (a score.ScoreRun) with the removal proof: the run a scoring of the same
    text with ``prove`` on would give (its result, and the proof state a later edit
    reuses). A run already proven is returned as it is. ``should_stop`` is polled between
    renders and abandons stale work by raising (engine errors.Cancelled).

    After an edit it reuses the last proof of an earlier text (``run.proof_basis``,
    carried from run to run while nothing proved) where proof_reuse.py shows that a cold
    proof would find the same numbers."""
    from svgloo.engine.processes.workers import shared_pool

    if run.proof is not None or is_proven(run.result):
        return run
    pool = pool or shared_pool(run.settings.limits)
    proof = run_proof(run, pool=pool, should_stop=should_stop, previous=run.proof_basis)
    result = with_proof(copy.deepcopy(run.result), proof, run.doc)
    return replace(run, result=result, settings=run.settings.with_(prove=True),
                   proof=proof.state, proof_basis=None, footprints_cache=run.footprints_cache)


__all__ = ["UNCHECKED", "unchecked_rows", "is_proven", "removal_counts", "with_proof",
           "run_proof", "prove_run"]
