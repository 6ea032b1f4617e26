"""``svgloo eval``: score stored model outputs with a benchmark's own metrics.

    svgloo eval list
    svgloo eval SUITE TASK --data PATH --pred PATH [--json] [--out FILE] [--limit N]
                [--workers N] [--no-edit] [--loo] [--weights NAME=PATH ...] [--plot PNG]

Suites are plugins of the ``svgloo.evals`` entry-point group (see evals/svgloo/evals/base.py).
Exit status: 0, or 1 when a sample could not be scored (status "error"), 2 on bad input.
"""

from __future__ import annotations

import json
import os
import sys


def register(sub) -> None:
    p = sub.add_parser("eval", help="score stored model outputs with a benchmark's metrics",
                       description="Score stored predictions with the metrics of an SVG "
                                   "benchmark, reproduced from its original code. "
                                   "'svgloo eval list' shows the suites and their tasks.")
    p.add_argument("suite", help="suite name, or 'list'")
    p.add_argument("task", nargs="?", help="the suite's task or command (see 'svgloo eval list')")
    p.add_argument("args", nargs="*", metavar="ARG",
                   help="a suite command's arguments (diagram pair GEN.svg GT.svg, "
                        "diagram check DIR)")
    p.add_argument("--data", help="the benchmark's data (its checkout folder or task file)")
    p.add_argument("--pred", action="append", help="predictions: JSONL of {id, response} or "
                   "{id, svg}, or a folder of <id>.svg (diagram run: one folder per model, "
                   "repeatable)")
    p.add_argument("--gt", help="diagram run: the folder of ground-truth SVGs")
    p.add_argument("--superset", action="store_true",
                   help="diagram run: also score every model on the samples all kept models "
                        "scored cleanly")
    p.add_argument("--impl", choices=("svgloo", "upstream"), default="svgloo",
                   help="diagram: svgloo's clean-room code (default) or the original from "
                        "--upstream-dir")
    p.add_argument("--upstream-dir", help="diagram --impl upstream: your checkout of "
                                          "RAIVNLab/VFig (or its rule-based-eval folder)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="score each sample as a Ray task (the [cluster] extra): without "
                        "ADDRESS on a local Ray instance with --workers CPUs")
    judge = p.add_argument_group("judge (svgbench): any OpenAI-compatible endpoint")
    judge.add_argument("--judge-url", help="base URL, e.g. http://127.0.0.1:8000/v1")
    judge.add_argument("--judge-model", help="model name the endpoint serves (the original: "
                                             "gpt-4.1)")
    judge.add_argument("--judge-key-env", metavar="VAR",
                       help="environment variable holding the API key (never on the "
                            "command line)")
    judge.add_argument("--judge-concurrency", type=int, default=4,
                       help="requests in flight at most (default 4)")
    judge.add_argument("--judge-timeout", type=float, default=120, help="seconds per request")
    judge.add_argument("--repeat", type=int, default=1, metavar="K",
                       help="ask the judge K times per sample and report the spread")
    judge.add_argument("--render", choices=("cairosvg", "chromium"), default="cairosvg",
                       help="svgbench: the PNG the judge sees (chromium = the original's "
                            "browser page and window size)")
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
    p.add_argument("--html", metavar="FILE",
                   help="write a self-contained HTML report (histograms, sortable samples)")
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
            except Exception as exc:  # noqa: BLE001 - a broken third-party plugin must not hide the others
                print(f"{name}: cannot load ({type(exc).__name__}: {exc})")
                continue
            print(f"{name}: {suite.description}")
            print(f"  reproduces: {suite.upstream}")
            print(f"  tasks: {', '.join(suite.tasks)}")
        return 0
    if not args.task:
        raise ConfigError(None, "usage: svgloo eval SUITE TASK --data PATH --pred PATH")
    if args.repeat < 1 or args.judge_concurrency < 1:
        raise ConfigError(None, "--repeat and --judge-concurrency must be at least 1")
    if args.judge_key_env and not os.environ.get(args.judge_key_env):
        raise ConfigError(None, f"--judge-key-env {args.judge_key_env}: that variable is "
                                "not set")
    suite = load_suite(args.suite)
    if args.task in getattr(suite, "commands", ()):   # a suite's own command (diagram run)
        return int(suite.run_command(args) or 0)
    if not args.data and not getattr(suite, "builtin_data", None):
        raise ConfigError(None, "usage: svgloo eval SUITE TASK --data PATH --pred PATH")
    if args.args:
        raise ConfigError(None, f"unexpected arguments: {' '.join(args.args)}")
    if args.pred and len(args.pred) > 1:
        raise ConfigError(None, f"{args.suite} {args.task} takes one --pred")
    options = RunOptions(limit=args.limit, workers=max(1, args.workers), no_edit=args.no_edit,
                         loo=args.loo, loo_backbone=args.loo_backbone,
                         weights=_weights(args.weights),
                         suite_options={k: getattr(args, k) for k in (
                             "judge_url", "judge_model", "judge_key_env", "judge_concurrency",
                             "judge_timeout", "repeat", "render")},
                         ray=args.ray)
    result = run_eval(suite, args.task, args.data or suite.builtin_data, args.pred[0] if args.pred else None,
                      options)
    if args.out:
        from svgloo.evals.engine import atomic_write_text

        atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    if args.plot:
        write_histograms(result, args.plot)
    if args.html:
        from svgloo.validation.html_report import write_eval_report

        print(f"report: {write_eval_report(result, args.html)}", file=sys.stderr)
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_table(result)
    return _exit_code(result)


def _exit_code(result: dict) -> int:
    """1 when svgloo failed on a sample (status "error": not scored, so the summary is not
    the benchmark's number for every sample); 0 otherwise."""
    errors = result["summary"].get("status_counts", {}).get("error", 0)
    if errors:
        print(f"svgloo: error: {errors} of {len(result['samples'])} samples were not scored "
              "(status 'error': a limit of svgloo's, a render worker that died or an "
              "internal error; each row's reason says which)", file=sys.stderr)
        return 1
    return 0
