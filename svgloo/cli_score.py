"""``svgloo score FILE``: score one file and print a table or the svgloo.score/1 JSON."""

from __future__ import annotations

import json
import sys

from svgloo.engine.limits import DEFAULT_LIMITS


def add_reference_arguments(p) -> None:
    """--reference / --prompt, for commands that score against one reference."""
    ref = p.add_mutually_exclusive_group()
    ref.add_argument("--reference", help="reference image (PNG/JPEG) or SVG")
    ref.add_argument("--prompt", help="text reference (needs a text-capable backbone)")


def add_scoring_arguments(p) -> None:
    """Options shared by every command that scores (score, watch, batch)."""
    p.add_argument("--backbone", default="auto",
                   help="similarity backbone: auto (clip when its weights are present, else "
                        "pixel), pixel, clip, or any installed plugin")
    p.add_argument("--weights", help="local checkpoint for the backbone (e.g. CLIP weights)")
    p.add_argument("--device", help="torch device for model backbones (default: cuda if "
                                    "available, else cpu)")
    p.add_argument("--precision", choices=["fp32", "bf16", "int8"], default="fp32",
                   help="model backbones (clip): numeric precision of the image encoder; "
                        "bf16 and int8 are faster on CPUs and drift slightly from fp32 "
                        "(see the README's measurements). Default fp32")
    p.add_argument("--method", choices=["fast", "naive"], default="fast",
                   help="leave-one-out method (default fast; naive renders the document once "
                        "per unit)")
    p.add_argument("--size", type=int, default=384, help="render size in pixels (default 384)")
    p.add_argument("--no-subpaths", dest="subpaths", action="store_false",
                   help="score compound paths as whole elements")
    p.add_argument("--helpful-threshold", type=float, default=0.005)
    p.add_argument("--harmful-threshold", type=float, default=-0.005)


def settings_from_args(args):
    from svgloo.engine.score import ScoreSettings

    return ScoreSettings(backbone=args.backbone, method=args.method, size=args.size,
                         subpaths=args.subpaths, reference=getattr(args, "reference", None),
                         prompt=getattr(args, "prompt", None),
                         helpful_threshold=args.helpful_threshold,
                         harmful_threshold=args.harmful_threshold, weights=args.weights,
                         device=args.device, precision=getattr(args, "precision", "fp32"),
                         limits=DEFAULT_LIMITS)


def register(sub) -> None:
    p = sub.add_parser("score", help="score every element of one SVG file",
                       description="Leave-one-out scores for every unit of an SVG file.")
    p.add_argument("file", help="SVG file (.svg or .svgz)")
    add_reference_arguments(p)
    add_scoring_arguments(p)
    p.add_argument("--json", action="store_true", help="print the svgloo.score/1 JSON object")
    p.add_argument("--footprints", metavar="DIR",
                   help="write one footprint heatmap PNG per unit and a contact sheet")
    p.add_argument("--daemon", action="store_true",
                   help="use a running svgloo daemon when one is up (else score in-process)")
    p.set_defaults(func=run)


def progress_bar(desc: str, enabled: bool | None = None):
    """A tqdm progress callback ``(done, total)`` on stderr, shown on terminals only."""
    from tqdm import tqdm

    if enabled is None:
        enabled = sys.stderr.isatty()
    bar = tqdm(total=0, desc=desc, unit="render", disable=not enabled, leave=False,
               file=sys.stderr)

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    update.close = bar.close  # type: ignore[attr-defined]
    return update


def start_render_workers() -> None:
    """Start the render workers in the background now, so that their start (a fork
    server, imports, a warm-up render: most of a small file's wall time) overlaps with
    importing the engine, parsing and loading the backbone instead of preceding them."""
    import os
    import threading

    def start() -> None:
        from svgloo.engine.workers import shared_pool

        pool = shared_pool(DEFAULT_LIMITS)
        try:
            pool.map(os.getpid, [()] * pool.workers, "render workers")
        except Exception:  # the real work reports any problem with the pool
            pass

    threading.Thread(target=start, name="svgloo-start-workers", daemon=True).start()


def run(args) -> int:
    if not args.daemon:
        start_render_workers()
    try:
        return _run(args)
    except BaseException:
        # A bad file fails in milliseconds: do not wait for the workers' start to exit.
        from svgloo.engine.workers import close_all_pools

        close_all_pools()
        raise


def _run(args) -> int:
    settings = settings_from_args(args)
    result = None
    if args.daemon:
        result = _try_daemon(args.file, settings)
        if result is None:
            start_render_workers()
    from svgloo.engine.score import score_file

    run_ = None
    if result is None:
        bar = progress_bar(f"scoring {args.file}")
        try:
            run_ = score_file(args.file, settings, progress=bar)
        finally:
            bar.close()
        result = run_.result
    if args.footprints:
        if run_ is None:  # the daemon sent JSON only; footprints need the arrays
            run_ = score_file(args.file, settings)
        from svgloo.engine.plots import write_footprints

        paths = write_footprints(run_, args.footprints)
        print(f"wrote {len(paths)} images to {args.footprints}", file=sys.stderr)
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_table(result)
    return 0


def _try_daemon(path: str, settings):
    """Score through a running daemon; None when none is up (then score in-process)."""
    try:
        from svgloo.daemon.client import DaemonUnavailable, score_via_daemon
    except ImportError:
        return None
    try:
        return score_via_daemon(path, settings)
    except DaemonUnavailable:
        return None


def print_table(result: dict, out=sys.stdout) -> None:
    rows = result["units"]
    name_w = max([len(_label(r)) for r in rows] + [8])
    print(f"{result['file']}", file=out)
    print(f"  backbone: {result['backbone']} ({result['backbone_detail']['description']}; "
          f"{result['backbone_detail']['reason']})", file=out)
    print(f"  reference: {result['reference']['kind']} - {result['reference']['source']}",
          file=out)
    print(f"  method: {result['method']}, {result['render_size']} px, full score "
          f"{result['full_score']:.4f}", file=out)
    for w in result.get("warnings", []):
        print(f"  warning: {w}", file=out)
    print(file=out)
    print(f"  {'unit':>4}  {'element':<{name_w}}  {'line':>5}  {'delta':>9}  {'verdict':<8}  "
          f"{'footprint':>9}", file=out)
    for r in rows:
        fp = f"{r['footprint_pixels']}" if r["visible"] else "invisible"
        print(f"  {r['index']:>4}  {_label(r):<{name_w}}  {r['range']['start']['line'] + 1:>5}"
              f"  {r['delta']:>+9.5f}  {r['verdict']:<8}  {fp:>9}", file=out)
    s = result["summary"]
    print(file=out)
    print(f"  {s['units']} units: {s['helpful']} helpful, {s['harmful']} harmful, "
          f"{s['neutral']} neutral; {s['invisible']} with no visible effect", file=out)
    for note in result.get("notes", []):
        print(f"  note: {note}", file=out)
    t = result["timings"]
    print(f"  {t['renders']} renders in {t['total_s']:.2f} s", file=out)


def _label(r: dict) -> str:
    label = r["tag"] + (f"#{r['id']}" if r["id"] else "")
    if r["subpath"] is not None:
        label += f" subpath {r['subpath']}"
    return label
