"""``svgloo eval``: score stored model outputs with a benchmark's own metrics.

    svgloo eval list
    svgloo eval SUITE TASK --data PATH --pred PATH [--json] [--out FILE] [--limit N]
                [--workers N] [--no-edit] [--loo] [--weights NAME=PATH ...] [--plot PNG]

Suites are plugins of the ``svgloo.evals`` entry-point group (see svgloo/evals/base.py).
"""

from __future__ import annotations

import json
import sys


def register(sub) -> None:
    p = sub.add_parser("eval", help="score stored model outputs with a benchmark's metrics",
                       description="Score stored predictions with the metrics of an SVG "
                                   "benchmark, reproduced from its original code. "
                                   "'svgloo eval list' shows the suites and their tasks.")
    p.add_argument("suite", help="suite name, or 'list'")
    p.add_argument("task", nargs="?", help="the suite's task (see 'svgloo eval list')")
    p.add_argument("--data", help="the benchmark's data (its checkout folder or task file)")
    p.add_argument("--pred", help="predictions: JSONL of {id, response} or {id, svg}, or a "
                                  "folder of <id>.svg")
    p.add_argument("--json", action="store_true", help="print the svgloo.eval/1 JSON")
    p.add_argument("--out", help="also write the svgloo.eval/1 JSON to this file")
    p.add_argument("--limit", type=int, help="score only the first N samples")
    p.add_argument("--workers", type=int, default=1, help="samples scored in parallel")
    p.add_argument("--no-edit", action="store_true",
                   help="score the unedited originals as predictions (baseline, self-test)")
    p.add_argument("--loo", action="store_true",
                   help="attach per-element leave-one-out deltas to each scored row")
    p.add_argument("--loo-backbone", help="backbone for --loo (default: the suite's metric)")
    p.add_argument("--weights", action="append", default=[], metavar="NAME=PATH",
                   help="local weights for a model metric (e.g. clip=/path/ViT-L-14.pt); "
                        "without them model metrics are reported as skipped")
    p.add_argument("--plot", metavar="PNG", help="write metric histograms to this PNG")
    p.set_defaults(func=run)


def _weights(items: list[str]) -> dict:
    from svgloo.evals.engine import ConfigError

    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigError(None, f"--weights wants NAME=PATH, got {item!r}")
        out[name.strip().lower()] = path
    return out


def run(args) -> int:
    from svgloo.evals.base import discover_suites, load_suite
    from svgloo.evals.engine import ConfigError
    from svgloo.evals.report import print_table, write_histograms
    from svgloo.evals.runner import RunOptions, run_eval

    if args.suite == "list":
        for name, ep in sorted(discover_suites().items()):
            try:
                suite = ep.load()()
            except Exception as exc:  # a broken third-party plugin must not hide the others
                print(f"{name}: cannot load ({type(exc).__name__}: {exc})")
                continue
            print(f"{name}: {suite.description}")
            print(f"  reproduces: {suite.upstream}")
            print(f"  tasks: {', '.join(suite.tasks)}")
        return 0
    if not args.task or not args.data:
        raise ConfigError(None, "usage: svgloo eval SUITE TASK --data PATH --pred PATH")
    suite = load_suite(args.suite)
    options = RunOptions(limit=args.limit, workers=max(1, args.workers), no_edit=args.no_edit,
                         loo=args.loo, loo_backbone=args.loo_backbone,
                         weights=_weights(args.weights))
    result = run_eval(suite, args.task, args.data, args.pred, options)
    if args.out:
        from svgloo.evals.engine import atomic_write_text

        atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    if args.plot:
        write_histograms(result, args.plot)
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_table(result)
    return 0
