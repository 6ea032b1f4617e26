"""The ``diagram`` suite of ``svgloo eval``.

    svgloo eval diagram pair GEN.svg GT.svg [--json] [--impl upstream --upstream-dir PATH]
    svgloo eval diagram run --gt DIR --pred DIR [--pred DIR ...] [--superset] [--out FILE]
    svgloo eval diagram check DIR
    svgloo eval diagram samples --data GT_DIR --pred PRED_DIR     (the framework's runner)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..base import INVALID, MISSING, OK, EvalContext, EvalSample, Prediction, Scored
from ..engine import ConfigError, InputError, SvglooError, atomic_write_text, parse_document
from ..render import RenderProtocol
from . import UPSTREAM
from .metrics import evaluate_pair
from .runs import average, check_folder, evaluate_files, run, zero_sample


def _evaluator(args):
    if getattr(args, "impl", "svgloo") == "upstream":
        if not getattr(args, "upstream_dir", None):
            raise ConfigError(None, "--impl upstream needs --upstream-dir PATH (your checkout "
                                    "of RAIVNLab/VFig or its rule-based-eval folder)")
        from .upstream import load_upstream

        return load_upstream(args.upstream_dir)
    return evaluate_files


def _extract_svg(text: str) -> str | None:
    start, end = text.find("<svg"), text.rfind("</svg>")
    return text[start:end + 6] if start >= 0 and end > start else None


class DiagramSuite:
    name = "diagram"
    upstream = UPSTREAM
    description = ("rule-based diagram evaluation: shapes (label, type, colours, styles, "
                   "position, font, aspect) and arrows (ends, head, size, curve, colour, "
                   "overlap), no rendering, no model")
    tasks = ("samples",)
    commands = ("pair", "run", "check")
    protocol = RenderProtocol(size=256, call="(only for --loo: the evaluation renders nothing)")
    loo_backbone = "pixel"

    # ---- the framework's Protocol

    def load(self, data: Path, task: str) -> list[EvalSample]:
        folder = Path(data)
        if not folder.is_dir():
            raise InputError(str(folder), "the diagram suite wants a folder of ground-truth "
                                          "SVGs (--data GT_DIR)")
        samples = []
        for p in sorted(folder.glob("*.svg")):
            samples.append(EvalSample(p.stem, task, {"gt_path": str(p)},
                                      reference_svg=p.read_text(encoding="utf-8",
                                                                errors="replace")))
        if not samples:
            raise InputError(str(folder), "no .svg files")
        return samples

    def score(self, sample: EvalSample, prediction: Prediction | None,
              ctx: EvalContext) -> Scored:
        zeros = _flat(zero_sample())
        if prediction is None:
            return Scored(MISSING, zeros, "no prediction (scored 0, as the original does)")
        text = prediction.svg if prediction.svg is not None else \
            _extract_svg(prediction.response or "")
        if text is None:
            return Scored(INVALID, zeros, "no <svg> in the response (scored 0)")
        reason = ctx.too_large(text)
        if reason:
            return Scored(INVALID, zeros, reason)
        try:
            gen = parse_document(text, f"{sample.id} (prediction)", ctx.limits).root
            gt = parse_document(Path(sample.inputs["gt_path"]).read_bytes(),
                                sample.inputs["gt_path"], ctx.limits).root
            result = evaluate_pair(gen, gt)
        except (SvglooError, ValueError) as exc:   # ValueError: TooComplex
            return Scored(INVALID, zeros, f"{exc} (scored 0)")
        return Scored(OK, _flat(result), svg=text)

    def aggregate(self, rows: list[dict], task: str) -> dict:
        samples = [r["metrics"]["detail"] for r in rows if "detail" in r["metrics"]]
        avg = average(samples)
        return {"overall": avg["overall"], "shapes": avg["shapes"], "arrows": avg["arrows"],
                "missing_count": sum(r["status"] == MISSING for r in rows),
                "errored_count": sum(r["status"] not in (OK, MISSING) for r in rows)}

    def config(self, task: str) -> dict:
        return {"render": None, "weights": {"shapes": "9 metrics, 1/9 each",
                                            "arrows": "7 metrics, 1/7 each",
                                            "overall": "0.5 shapes + 0.5 arrows"},
                "match_threshold": 0.5, "impl": "svgloo (clean-room)"}

    def skipped_metrics(self, task: str, ctx: EvalContext) -> list[dict]:
        return []

    # ---- the suite's own commands

    def run_command(self, args) -> int:
        if args.task == "pair":
            return self._pair(args)
        if args.task == "run":
            return self._run(args)
        return self._check(args)

    def _pair(self, args) -> int:
        if len(args.args) != 2:
            raise ConfigError(None, "usage: svgloo eval diagram pair GEN.svg GT.svg")
        gen, gt = (Path(a) for a in args.args)
        for p in (gen, gt):
            if not p.is_file():
                raise InputError(str(p), "file not found")
        result = _evaluator(args)(gen, gt)
        out = {"schema": "svgloo.eval/1", "suite": self.name, "upstream": self.upstream,
               "task": "pair", "impl": getattr(args, "impl", "svgloo"),
               "gen": str(gen), "gt": str(gt), **result}
        _emit(out, args)
        if not args.json:
            print(f"diagram pair  {gen.name} vs {gt.name}  (impl {out['impl']})")
            for part in ("shapes", "arrows"):
                line = ", ".join(f"{k}={v:.4f}" for k, v in result[part].items()
                                 if isinstance(v, float))
                print(f"  {part}: {line}")
            print(f"  overall: {result['overall']:.4f}")
        return 0

    def _run(self, args) -> int:
        preds = args.pred or []
        if not args.gt or not preds:
            raise ConfigError(None, "usage: svgloo eval diagram run --gt DIR --pred DIR "
                                    "[--pred DIR ...] [--superset]")
        for d in [args.gt, *preds]:
            if not Path(d).is_dir():
                raise InputError(str(d), "not a folder")
        results = run(Path(args.gt), [Path(p) for p in preds], superset=args.superset,
                      evaluate=_evaluator(args))
        out = {"schema": "svgloo.eval/1", "suite": self.name, "upstream": self.upstream,
               "task": "run", "impl": getattr(args, "impl", "svgloo"), "results": results}
        _emit(out, args)
        if not args.json:
            for eval_set, models in results.items():
                print(f"diagram run  {eval_set}  (impl {out['impl']})")
                print(f"  {'model':<24} {'overall':>8} {'shapes':>8} {'arrows':>8} "
                      f"{'missing':>8} {'errored':>8}" + ("  superset" if args.superset else ""))
                for name, e in models.items():
                    line = (f"  {name:<24} {e['overall']:>8.4f} {e['shapes']['composite']:>8.4f} "
                            f"{e['arrows']['composite']:>8.4f} {e['missing_count']:>8} "
                            f"{e['errored_count']:>8}")
                    if args.superset:
                        line += (" excluded" if e["superset_high_failure"] else
                                 f"  {e['superset_overall']:.4f} (n={e['superset_n']})")
                    print(line)
        return 0

    def _check(self, args) -> int:
        if len(args.args) != 1 or not Path(args.args[0]).is_dir():
            raise ConfigError(None, "usage: svgloo eval diagram check DIR")
        problems = check_folder(Path(args.args[0]))
        for name, problem in problems:
            print(f"{name}: {problem}")
        n = len(list(Path(args.args[0]).glob("*.svg")))
        print(f"{n - len(problems)}/{n} SVG files are well-formed with an <svg> root")
        return 1 if problems else 0


def _flat(result: dict) -> dict:
    """Table columns: overall and the two composites; everything else under ``detail``."""
    detail = {"overall": result["overall"],
              "shapes": {k: v for k, v in result["shapes"].items() if isinstance(v, float)},
              "arrows": {k: v for k, v in result["arrows"].items() if isinstance(v, float)}}
    return {"overall": result["overall"], "shapes": result["shapes"]["composite"],
            "arrows": result["arrows"]["composite"], "detail": detail}


def _emit(out: dict, args) -> None:
    if getattr(args, "out", None):
        atomic_write_text(args.out, json.dumps(out, indent=1) + "\n")
    if args.json:
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
