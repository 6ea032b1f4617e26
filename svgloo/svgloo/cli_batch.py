"""``svgloo batch DIR``: score and/or structure-analyse every SVG under a folder."""

from __future__ import annotations

import sys


def register(sub) -> None:
    from svgloo.cli_score import add_scoring_arguments

    p = sub.add_parser("batch", help="score/structure every SVG under a folder, in parallel",
                       description="Score and/or structure-analyse every SVG under a folder "
                                   "(recursively) in worker processes. Writes results.jsonl "
                                   "(one JSON line per file) and summary.csv; re-running "
                                   "skips files already done with the same content and "
                                   "settings.")
    p.add_argument("dir", help="folder of SVG files")
    p.add_argument("--out", default="svgloo-batch",
                   help="output folder (default ./svgloo-batch)")
    p.add_argument("--workers", type=int, default=default_workers(),
                   help="worker processes, each rendering with one engine worker (default: "
                        f"one per CPU core, here {default_workers()}); with a model backbone "
                        "(clip): render workers of the one process that holds the model, "
                        "scoring this many files plus one at once")
    p.add_argument("--structure", action="store_true", help="also run structure analysis")
    p.add_argument("--html", metavar="FILE",
                   help="also write a self-contained HTML report: a sortable row per file "
                        "with its thumbnail, verdict counts and its worst units' footprints")
    p.add_argument("--no-score", dest="score", action="store_false",
                   help="skip leave-one-out scoring (with --structure)")
    p.add_argument("--shard", metavar="I/N",
                   help="process only every N-th file starting at I (0-based), for "
                        "splitting a run over machines")
    p.add_argument("--limit", type=int, help="only the first N files (sorted by path)")
    p.add_argument("--retry-errors", action="store_true",
                   help="re-run files whose previous row is an error")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="run each file as a Ray task (the [cluster] extra): without ADDRESS "
                        "on a local Ray instance with --workers CPUs, else on that cluster "
                        "(auto, HOST:6379, ray://HOST:10001); with a model backbone (clip) "
                        "an actor holds the model and batches the tasks' images")
    p.add_argument("--ray-encoders", type=int, metavar="N",
                   help="with --ray and a model backbone: encoder actors holding the model, "
                        "each batching the images of its share of the files (default: one "
                        "per GPU of the cluster, at least one)")
    proof = p.add_mutually_exclusive_group()
    proof.add_argument("--proof", dest="proof", action="store_true",
                       help="also prove which units may be deleted (two renderers, several "
                            "sizes: docs/proofs.md); results.jsonl then holds each unit's "
                            "removal status. Several times slower")
    proof.add_argument("--no-proof", dest="proof", action="store_false",
                       help="scoring only, the default: verdicts, footprints and findings, "
                            "no removal proof (summary.csv and the HTML report show no "
                            "removals; see docs/batch.md)")
    add_scoring_arguments(p)
    p.set_defaults(func=run, proof=False)


def default_workers() -> int:
    """One batch worker per core this process may use."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def model_backbone(settings) -> bool:
    """Whether the settings' backbone embeds images with a model (CLIP): such a batch
    holds one copy of it and batches images across files (validation/pipeline.py); the
    weight-free pixel backbone scores in one process per worker."""
    from svgloo.engine.scoring.backbones import GROUP, choose_backbone
    from svgloo.engine.errors import ConfigError
    from svgloo.engine.protocols import load_plugin
    from svgloo.validation.pipeline import embeds_images

    try:
        return embeds_images(load_plugin(GROUP, choose_backbone(settings.backbone,
                                                                settings.weights).name))
    except (KeyError, ImportError, ConfigError):
        return False  # each file's row says what is wrong with the backbone


def run(args) -> int:
    from svgloo.cli_score import plural, settings_from_args
    from svgloo.engine.errors import ConfigError
    from svgloo.engine.processes import worker_start
    from svgloo.validation.batch import find_svgs, run_batch, shard
    from svgloo.validation.executors import make_executor

    if not args.score and not args.structure:
        raise ConfigError(None, "nothing to do: --no-score without --structure")
    if args.workers < 1:
        raise ConfigError(None, "--workers must be at least 1")
    if args.ray_encoders is not None and (args.ray is None or args.ray_encoders < 1):
        raise ConfigError(None, "--ray-encoders needs --ray and at least 1")
    files = find_svgs(args.dir)
    if args.limit:
        files = files[:args.limit]
    files = shard(files, args.shard)
    settings = settings_from_args(args).with_(prove=args.proof)
    if args.ray is None and worker_start.direct_fork_possible():
        # Before numpy is imported (model_backbone imports it): the renderer loaded here
        # keeps this process single-threaded, so that local batch workers are forked
        # from it with the renderer loaded, not each importing it again (0.3 s a worker).
        worker_start.load_renderer_here()
    # a model backbone is held once and fed images of several files at once
    model = args.score and model_backbone(settings)
    if args.ray is None and not model:
        worker_start.allow_direct_fork()
    executor = make_executor(args.workers, args.ray, settings if model else None,
                             encoders=args.ray_encoders)
    counts = run_batch(files, args.out, settings, do_score=args.score,
                       do_structure=args.structure, workers=args.workers,
                       retry_errors=args.retry_errors, progress=sys.stderr.isatty(),
                       executor=executor)
    fps = counts["files_per_second"]
    print(f"{plural(counts['files'], 'file')}: {counts['ok']} ok, "
          f"{plural(counts['error'], 'error')}, {counts['skipped']} skipped (already done) "
          f"in {counts['seconds']:.1f} s"
          + (f" ({fps:.2f} files/s with {plural(args.workers, 'worker')}"
             + (f", {counts['images_per_second']:.0f} leave-one-out images/s"
                if counts["images_per_second"] else "") + ")" if fps else ""))
    print(f"results: {args.out}/results.jsonl, summary: {args.out}/summary.csv")
    if args.html:
        from svgloo.validation.html_report import write_batch_report

        settings = settings_from_args(args)
        report = write_batch_report(args.out, files, counts["settings_key"], args.html, settings.limits)
        print(f"report: {report}")
    return 1 if counts["error"] else 0
