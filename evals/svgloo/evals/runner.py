"""Run one suite task over stored predictions and build the ``svgloo.eval/1`` result.

Samples are scored on ``workers`` threads; every render goes through one render pool
(worker processes with the engine's memory, CPU and time limits), so a hostile prediction
costs its own row, never the run. A sample svgloo itself failed on (a limit of svgloo's, a
render worker that died, an internal error) gets the ``error`` status and is never scored:
it is left out of the suite's summary and counted in ``summary.status_counts``. ``loo`` attaches
the engine's leave-one-out deltas for
each scored prediction against the sample's reference (``score_document``; nothing here
re-implements LOO).
"""

from __future__ import annotations

import tempfile
import time
from typing import cast
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .base import ERROR, INVALID, OK, SCHEMA, STATUSES, EvalContext, Prediction, Scored, \
    infrastructure_failure
from .engine import DEFAULT_LIMITS, ConfigError, RenderPool, ScoreSettings, SvglooError, \
    parse_document, score_document
from .predictions import load_predictions


@dataclass
class RunOptions:
    limit: int | None = None
    workers: int = 1
    no_edit: bool = False
    loo: bool = False
    loo_backbone: str | None = None   # default: the suite's own (``loo_backbone`` attribute)
    weights: dict = field(default_factory=dict)
    progress: bool | None = None      # None: on terminals only
    suite_options: dict = field(default_factory=dict)   # a suite's own (judge URL, render)
    ray: str | None = None            # "local" or a Ray address: one Ray task per sample


def run_eval(suite, task: str, data: str | Path, predictions: str | Path | None,
             options: RunOptions = RunOptions()) -> dict:
    if task not in suite.tasks:
        raise ConfigError(None, f"suite {suite.name} has no task {task!r} "
                                f"(tasks: {', '.join(suite.tasks)})")
    t0 = time.perf_counter()
    samples = suite.load(Path(data), task)
    if options.limit is not None:
        samples = samples[:max(0, options.limit)]
    preds: dict[str, Prediction] = {}
    if predictions is not None:
        preds = load_predictions(predictions, task)
    elif not options.no_edit:
        raise ConfigError(None, "give --pred PATH (or --no-edit for the baseline)")
    pool = RenderPool(workers=max(1, options.workers), limits=DEFAULT_LIMITS)
    ctx = EvalContext(pool=pool, weights=dict(options.weights),
                      options={**options.suite_options, "no_edit": options.no_edit},
                      limits=DEFAULT_LIMITS)
    warnings = []
    used: set[str] = getattr(suite, "weights_used", lambda t: set())(task)
    for name in sorted(set(options.weights) - used):
        warnings.append(f"--weights {name}=... is not used by {suite.name} {task}; "
                        "its metric stays skipped")
    known = {s.id for s in samples}
    unknown = sorted(set(preds) - known)
    if unknown and options.limit is None:
        warnings.append(f"{len(unknown)} predictions match no sample id "
                        f"(e.g. {', '.join(unknown[:3])})")
    bar = _progress(len(samples), f"{suite.name} {task}", options.progress)
    loo_dir = tempfile.TemporaryDirectory(prefix="svgloo-eval-") if options.loo else None

    def one(sample, remote=None):
        t = time.perf_counter()
        if remote is not None:   # scored by a Ray task: (Scored, its seconds there)
            scored, t = remote[0], time.perf_counter() - remote[1]
        else:
            scored = _score(suite, sample, preds.get(sample.id), ctx)
        row = {"id": sample.id, "status": scored.status, "metrics": scored.metrics,
               "reason": scored.reason}
        if sample.level:
            row["level"] = sample.level
        if options.loo and scored.status == OK and scored.svg and sample.reference_svg:
            row["loo"] = _loo(suite, sample, scored.svg, options, pool, Path(loo_dir.name))
        row["time_s"] = round(time.perf_counter() - t, 4)
        bar.update(1)
        return row

    try:
        if options.ray is not None:
            rows = _on_ray(suite, samples, preds, ctx, options, one)
        elif options.workers > 1:
            with ThreadPoolExecutor(options.workers) as ex:
                rows = list(ex.map(one, samples))
        else:
            rows = [one(s) for s in samples]
    finally:
        bar.close()
        pool.close()
        if loo_dir is not None:
            loo_dir.cleanup()
    total = time.perf_counter() - t0
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    summary = suite.aggregate([r for r in rows if r["status"] != ERROR], task)
    summary["status_counts"] = counts
    if counts[ERROR]:
        warnings.append(f"{counts[ERROR]} of {len(rows)} samples not scored (status "
                        f"'{ERROR}': svgloo's own failure, see their reasons); the summary "
                        "leaves them out")
    return {
        "schema": SCHEMA,
        "suite": suite.name,
        "upstream": suite.upstream,
        "task": task,
        "data": str(data),
        "predictions": "--no-edit (originals scored as predictions)" if options.no_edit
        else str(predictions),
        "config": suite.config(task),
        "samples": rows,
        "summary": summary,
        "skipped_metrics": suite.skipped_metrics(task, ctx),
        "models": {name: path for name, path in options.weights.items() if name in used},
        "warnings": warnings,
        "timings": {"total_s": round(total, 3),
                    "per_sample_s": round(total / len(rows), 4) if rows else None,
                    "workers": options.workers},
    }


def _score(suite, sample, prediction, ctx) -> Scored:
    """The suite's verdict; svgloo's own failures become the ``error`` status (never a
    score), bad settings stop the run."""
    try:
        return suite.score(sample, prediction, ctx)
    except ConfigError:
        raise
    except RecursionError as exc:  # a pathological prediction: the original's Python too
        return Scored(INVALID, reason=f"{sample.id}: prediction too complex to score "
                                      f"({type(exc).__name__})")
    except Exception as exc:  # noqa: BLE001 - every failure is sorted just below
        if not infrastructure_failure(exc):  # a document error a suite let through
            return Scored(INVALID, reason=str(exc))
        what = str(exc) if isinstance(exc, SvglooError) else \
            f"internal error: {type(exc).__name__}: {exc}"
        return Scored(ERROR, reason=f"{sample.id}: not scored: {what}")


_worker_state: dict = {}   # per Ray worker process: its suites and one render pool


def score_sample_job(suite_name: str, sample, prediction, options: dict, weights: dict):
    """A Ray task: score one sample in a worker, with that worker's own render pool (the
    engine's limits apply there too). Returns (Scored, seconds)."""
    t = time.perf_counter()
    if "pool" not in _worker_state:
        from multiprocessing import util

        _worker_state["pool"] = RenderPool(workers=1, limits=DEFAULT_LIMITS)
        util.Finalize(None, _worker_state["pool"].close, exitpriority=10)
    suites = _worker_state.setdefault("suites", {})
    if suite_name not in suites:
        from .base import load_suite

        suites[suite_name] = load_suite(suite_name)
    ctx = EvalContext(pool=_worker_state["pool"], weights=weights, options=options,
                      limits=DEFAULT_LIMITS)
    return _score(suites[suite_name], sample, prediction, ctx), time.perf_counter() - t


def _on_ray(suite, samples, preds, ctx, options: RunOptions, one) -> list[dict]:
    """Every sample as a Ray task (svgloo.validation's executor); rows are built here
    exactly as for local scoring, in sample order."""
    from svgloo.validation.executors import make_executor

    executor = make_executor(options.workers, options.ray)
    jobs = [(i, (suite.name, s, preds.get(s.id), ctx.options, ctx.weights))
            for i, s in enumerate(samples)]
    rows: dict[int, dict] = {}
    for i, result, error in executor.run(score_sample_job, jobs):
        if error is not None:   # the task's worker died: svgloo's failure, not scored
            result = (Scored(ERROR, reason=f"{samples[i].id}: not scored: worker failed: "
                                           f"{error}"), 0.0)
        rows[i] = one(samples[i], remote=result)
    return [rows[i] for i in range(len(samples))]


def _loo(suite, sample, svg: str, options: RunOptions, pool, tmp: Path) -> dict:
    """Per-element deltas of the prediction against the sample's reference, from the
    engine's scorer with the suite's pairwise-metric backbone."""
    backbone = cast(str, options.loo_backbone or getattr(suite, "loo_backbone", "pixel"))  # a suite names one
    ref = tmp / f"{_safe(sample.id)}.ref.svg"
    ref.write_text(sample.reference_svg, encoding="utf-8")
    # Deltas and verdicts only: which units may be deleted (the removal proof, often most
    # of a scoring's time) is never shown here, so it is not computed.
    settings = ScoreSettings(backbone=backbone, size=suite.protocol.size, reference=str(ref),
                             prove=False)
    try:
        doc = parse_document(svg, f"{sample.id} (prediction)", settings.limits)
        run = score_document(doc, settings, pool=pool)
    except SvglooError as exc:
        return {"error": str(exc)}
    res = run.result
    return {"backbone": res["backbone"], "render_size": res["render_size"],
            "full_score": res["full_score"],
            "units": [{"index": u["index"], "tag": u["tag"], "id": u["id"],
                       "subpath": u["subpath"], "line": u["range"]["start"]["line"] + 1,
                       "delta": u["delta"], "verdict": u["verdict"]}
                      for u in res["units"]]}


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "sample"


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, desc: str, enabled: bool | None):
    import sys

    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="sample", leave=False, file=sys.stderr)
