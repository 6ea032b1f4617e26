"""Run-level bookkeeping of the diagram evaluation (spec §4.3 "Aggregates"): pairing
prediction files with ground-truth stems, zeros for missing or failing samples, per-model
averages key by key, the superset view, and the well-formedness check of a folder."""

from __future__ import annotations

from pathlib import Path

from ..engine import DEFAULT_LIMITS, LimitError, SvglooError, parse_document
from .metrics import ARROW_METRICS, SHAPE_METRICS, ZERO_ARROWS, ZERO_SHAPES, evaluate_pair

SUPERSET_MAX_BAD = 0.51     # a model with more missing + errored samples is left out
SHAPE_KEYS = SHAPE_METRICS + ("extra_penalty", "composite")
ARROW_KEYS = ARROW_METRICS + ("extra_penalty", "composite")


def read_root(path: Path):
    """The safe parser (no entities, no network, the engine's size limits)."""
    path = Path(path)
    if path.stat().st_size > DEFAULT_LIMITS.max_file_bytes:
        raise LimitError(str(path), f"file is larger than {DEFAULT_LIMITS.max_file_bytes} bytes")
    return parse_document(path.read_bytes(), str(path), DEFAULT_LIMITS).root


def evaluate_files(gen: Path, gt: Path) -> dict:
    return evaluate_pair(read_root(gen), read_root(gt))


def find_prediction(stem: str, files: dict[str, Path]) -> Path | None:
    """``stem.svg``, else the first (sorted) ``stem_*.svg`` / ``stem-*.svg``."""
    if stem in files:
        return files[stem]
    for name in sorted(files):
        if name.startswith(stem + "_") or name.startswith(stem + "-"):
            return files[name]
    return None


def _svgs(folder: Path) -> dict[str, Path]:
    return {p.stem: p for p in sorted(Path(folder).glob("*.svg")) if p.is_file()}


def _trim(sample: dict) -> dict:
    return {"overall": sample["overall"],
            "shapes": {k: sample["shapes"][k] for k in SHAPE_KEYS if k in sample["shapes"]},
            "arrows": {k: sample["arrows"][k] for k in ARROW_KEYS if k in sample["arrows"]}}


def zero_sample() -> dict:
    return {"overall": 0.0, "shapes": dict(ZERO_SHAPES), "arrows": dict(ZERO_ARROWS)}


def average(samples: list[dict]) -> dict:
    """Key by key: a key absent from some samples (``extra_penalty`` of a ground truth
    without arrows) is averaged over the samples that have it, as the original does."""
    def mean_of(part):
        keys = [k for k in (SHAPE_KEYS if part == "shapes" else ARROW_KEYS)
                if any(k in s[part] for s in samples)]
        return {k: sum(s[part][k] for s in samples if k in s[part]) /
                sum(1 for s in samples if k in s[part]) for k in keys}
    if not samples:
        return {"overall": 0.0, "shapes": dict(ZERO_SHAPES), "arrows": dict(ZERO_ARROWS)}
    return {"overall": sum(s["overall"] for s in samples) / len(samples),
            "shapes": mean_of("shapes"), "arrows": mean_of("arrows")}


def score_model(gt_dir: Path, pred_dir: Path, evaluate=evaluate_files) -> dict:
    """Every ground-truth sample against one model's folder."""
    gts, preds = _svgs(gt_dir), _svgs(pred_dir)
    per_sample, missing, errored = {}, [], {}
    for stem, gt in gts.items():
        pred = find_prediction(stem, preds)
        if pred is None:
            missing.append(stem)
            per_sample[stem] = zero_sample()
            continue
        try:
            per_sample[stem] = _trim(evaluate(pred, gt))
        except (SvglooError, ValueError, ZeroDivisionError, KeyError, IndexError,
                RecursionError) as exc:
            errored[stem] = f"{pred.name}: {exc}"
            per_sample[stem] = zero_sample()
    return {"samples": per_sample, "missing_samples": missing, "errored_samples": errored}


def run(gt_dir: Path, pred_dirs: list[Path], superset: bool = False,
        evaluate=evaluate_files) -> dict:
    """``{eval_set: {model: {overall, shapes, arrows, missing_count, errored_count,
    missing_samples, errored_samples, per_sample, superset_*}}}`` (the original's
    ``all_eval_results.json`` layout, per-sample scores added)."""
    gt_dir = Path(gt_dir)
    n = len(_svgs(gt_dir))
    models = {}
    for pred_dir in pred_dirs:
        scored = score_model(gt_dir, Path(pred_dir), evaluate)
        entry = average(list(scored["samples"].values()))
        entry.update(n_samples=n, missing_count=len(scored["missing_samples"]),
                     errored_count=len(scored["errored_samples"]),
                     missing_samples=scored["missing_samples"],
                     errored_samples=scored["errored_samples"], per_sample=scored["samples"])
        models[Path(pred_dir).name] = entry
    if superset:
        apply_superset(models, n)
    return {gt_dir.name: models}


def apply_superset(models: dict, n: int) -> None:
    """Models with missing + errored > 0.51·N are excluded (zeros); the others are
    averaged over the samples every one of them scored cleanly."""
    kept = {m: e for m, e in models.items()
            if e["missing_count"] + e["errored_count"] <= SUPERSET_MAX_BAD * n}
    clean = None
    for e in kept.values():
        ok = set(e["per_sample"]) - set(e["missing_samples"]) - set(e["errored_samples"])
        clean = ok if clean is None else clean & ok
    common = sorted(clean or ())
    for name, e in models.items():
        if name not in kept:
            z = average([])
            e.update(superset_high_failure=True, superset_n=len(common),
                     superset_overall=0.0, superset_shapes=z["shapes"],
                     superset_arrows=z["arrows"])
            continue
        avg = average([e["per_sample"][s] for s in common])
        e.update(superset_high_failure=False, superset_n=len(common),
                 superset_samples=common, superset_overall=avg["overall"],
                 superset_shapes=avg["shapes"], superset_arrows=avg["arrows"])


def check_folder(folder: Path) -> list[tuple[str, str]]:
    """(file, problem) for each .svg that does not parse or whose root is not <svg>."""
    problems = []
    for path in sorted(Path(folder).glob("*.svg")):
        try:
            read_root(path)
        except SvglooError as exc:
            problems.append((path.name, str(exc)))
        except OSError as exc:
            problems.append((path.name, f"cannot read: {exc.strerror}"))
    return problems
