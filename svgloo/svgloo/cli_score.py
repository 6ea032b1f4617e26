"""``svgloo score FILE``: score one file and print a table or the svgloo.score/1 JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from svgloo.engine.limits import DEFAULT_LIMITS, ELEMENTS_FLAG, ELEMENTS_SETTING, FILE_FLAG, \
    FILE_SETTING, raised
from svgloo.engine.wording.plain_words import removal_note
from svgloo.engine.settings import ScoreSettings

# Every default below is ScoreSettings' own (engine/settings.py): written once.
DEFAULT = ScoreSettings()


def add_reference_arguments(p) -> None:
    """--reference / --prompt, for commands that score against one reference."""
    ref = p.add_mutually_exclusive_group()
    ref.add_argument("--reference", help="reference image (PNG/JPEG) or SVG")
    ref.add_argument("--prompt", help="text reference (needs a text-capable backbone)")


def add_scoring_arguments(p) -> None:
    """Options shared by every command that scores (score, watch, batch)."""
    p.add_argument("--backbone", default=DEFAULT.backbone,
                   help="similarity backbone: auto (clip when its weights are present, else "
                        "pixel), pixel, clip, or any installed plugin")
    p.add_argument("--weights", help="local checkpoint for the backbone (e.g. CLIP weights)")
    p.add_argument("--device", help="torch device for model backbones (default: cuda if "
                                    "available, else cpu)")
    p.add_argument("--precision", choices=["fp32", "bf16", "int8"],
                   default=DEFAULT.precision,
                   help="model backbones (clip): numeric precision of the image encoder; "
                        "bf16 and int8 are faster on CPUs and drift slightly from fp32 "
                        "(see the README's measurements). Default fp32")
    p.add_argument("--preprocess", choices=["auto", "host", "device"],
                   default=DEFAULT.preprocess,
                   help="model backbones (clip): where images are resized and normalised: "
                        "host (open_clip's PIL transform), device (on the model's device, "
                        "within one 8-bit level of it), auto (device on CUDA, else host). "
                        "Default auto")
    p.add_argument("--method", choices=["fast", "naive"], default=DEFAULT.method,
                   help="leave-one-out method (default fast; naive renders the document once "
                        "per unit)")
    p.add_argument("--size", type=int, default=DEFAULT.size,
                   help=f"render size in pixels (default {DEFAULT.size})")
    p.add_argument("--no-subpaths", dest="subpaths", action="store_false",
                   help="score compound paths as whole elements")
    p.add_argument("--helpful-threshold", type=float, default=None, metavar="DELTA",
                   help="a unit is helpful when removing it lowers the score by more than "
                        "this (delta > DELTA); default: the backbone's own (clip: the "
                        "paper's 0.005; pixel: 0.0008, calibrated, see docs/validation.md)")
    p.add_argument("--harmful-threshold", type=float, default=None, metavar="DELTA",
                   help="a unit is harmful when removing it raises the score by more than "
                        "-DELTA (delta < DELTA); default: the backbone's own (clip: the "
                        "paper's -0.005; pixel: -0.0008, calibrated); in between the two "
                        "thresholds it is neutral")
    speck = DEFAULT.speck_threshold
    p.add_argument("--speck-threshold", type=float, default=DEFAULT.speck_threshold,
                   metavar="FRACTION",
                   help="flag a unit as a speck when its visible footprint is at most this "
                        f"fraction of the canvas, and not zero (default {speck:g} = "
                        f"{speck * 100:g}%%, {round(speck * DEFAULT.size ** 2)} px at "
                        f"{DEFAULT.size} px; 0 turns specks off)")
    p.add_argument("--hidden-threshold", type=float, default=DEFAULT.hidden_threshold,
                   metavar="SHARE",
                   help="flag a unit as mostly hidden when at least this share of what it "
                        "draws alone is covered by later elements (default 0.95; above 1 "
                        "turns it off)")
    add_limit_arguments(p)


def add_limit_arguments(p) -> None:
    """The two safety limits a large real drawing can hit, raised for this command."""
    p.add_argument(FILE_FLAG, type=float, default=None, metavar="MIB",
                   help=f"refuse files larger than this many MiB (default "
                        f"{DEFAULT_LIMITS.max_file_bytes / 2 ** 20:g}; setting: "
                        f"{FILE_SETTING})")
    p.add_argument(ELEMENTS_FLAG, type=int, default=None, metavar="N",
                   help=f"refuse documents with more elements than this (default "
                        f"{DEFAULT_LIMITS.max_elements}; setting: {ELEMENTS_SETTING})")


def limits_from_args(args):
    """The engine's limits (with the environment's settings), raised by the flags."""
    from svgloo.engine.errors import ConfigError

    mib, elements = getattr(args, "max_file_mib", None), getattr(args, "max_elements", None)
    for flag, value in ((FILE_FLAG, mib), (ELEMENTS_FLAG, elements)):
        if value is not None and not value > 0:
            raise ConfigError(None, f"{flag} must be a positive number, not {value:g}")
    return raised(DEFAULT_LIMITS, max_file_mib=mib, max_elements=elements)


def settings_from_args(args):
    return ScoreSettings(backbone=args.backbone, method=args.method, size=args.size,
                         subpaths=args.subpaths, reference=getattr(args, "reference", None),
                         prompt=getattr(args, "prompt", None),
                         helpful_threshold=args.helpful_threshold,
                         harmful_threshold=args.harmful_threshold, weights=args.weights,
                         device=args.device, speck_threshold=args.speck_threshold,
                         hidden_threshold=args.hidden_threshold,
                         precision=getattr(args, "precision", DEFAULT.precision),
                         preprocess=getattr(args, "preprocess", DEFAULT.preprocess),
                         limits=limits_from_args(args))


def register(sub) -> None:
    p = sub.add_parser("score", help="score every element of one SVG file",
                       description="Leave-one-out scores for every unit of an SVG file.")
    p.add_argument("file", help="SVG file (.svg or .svgz)")
    add_reference_arguments(p)
    add_scoring_arguments(p)
    p.add_argument("--json", action="store_true", help="print the svgloo.score/1 JSON object")
    p.add_argument("--footprints", metavar="DIR",
                   help="write one footprint heatmap PNG per unit (unit-0007.png) and a "
                        "contact sheet, harmful and flagged units first")
    p.add_argument("--daemon", action="store_true",
                   help="score through the svgloo daemon: one already running is used "
                        "(no start-up: its renderer and models are loaded, its results "
                        "cached), else one is started in the background (it stays up; "
                        "'svgloo daemon stop' ends it); scores in this process only when no "
                        "daemon can be reached or started")
    p.set_defaults(func=run, exit_at_once=True)


def progress_bar(desc: str, enabled: bool | None = None):
    """A tqdm progress callback ``(done, total)`` on stderr, shown on terminals only. The
    engine counts steps of every stage (renders, composites, similarities, findings), so
    the bar shows a percentage and the time left, not a count of mixed things. Off a
    terminal it does nothing, without importing tqdm (0.02-0.03 s of a small file's run)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        def ignore(done: int, total: int) -> None:
            pass

        ignore.close = lambda: None  # type: ignore[attr-defined]
        return ignore
    from tqdm import tqdm

    bar = tqdm(total=0, desc=desc, leave=False, file=sys.stderr,
               bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}")

    def update(done: int, total: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.n = done
        bar.refresh()

    update.close = bar.close  # type: ignore[attr-defined]
    return update


# Up to this many characters, a one-shot ``svgloo score`` forks its render workers from
# itself (``start_render_workers``): a worker then also holds the parsed document, a few MB
# at most, out of its render memory limit (1536 MB). Larger files take long enough that
# the fork server's start does not matter.
DIRECT_FORK_MAX_CHARS = 1_000_000


def start_render_workers(doc=None, program: bool = False) -> None:
    """Start the render workers now, so that their start overlaps with the rest of the
    command instead of preceding the first render.

    ``program`` (svgloo running as a program, single-threaded so far) and a small ``doc``:
    this process loads the renderer itself, then forks its workers directly, here, before
    any thread is started (no second interpreter importing the renderer again: issue 25).
    Otherwise a fork server is started (a fork-exec) and the workers, which wait for it,
    from a thread, so that its imports overlap with importing the engine, parsing and
    loading the backbone. Either way each worker limits itself the same way
    (workers._limit_worker)."""
    import os
    import threading

    from svgloo.engine.processes import worker_start

    if program and (doc is None or len(doc.text) <= DIRECT_FORK_MAX_CHARS):
        worker_start.allow_direct_fork()
        worker_start.load_renderer_here()
        if worker_start.direct_fork_now():
            from svgloo.engine.processes.workers import shared_pool

            try:
                shared_pool(DEFAULT_LIMITS).start()
            except Exception:  # noqa: BLE001 - the real work reports any problem with the pool
                pass
            return

    from svgloo.engine.processes.workers import shared_pool, start_fork_server

    start_fork_server()

    def start() -> None:
        pool = shared_pool(DEFAULT_LIMITS)
        try:
            pool.map(os.getpid, [()] * pool.workers, "render workers")
        except Exception:  # noqa: BLE001 - the real work reports any problem with the pool
            pass

    threading.Thread(target=start, name="svgloo-start-workers", daemon=True).start()


def run(args) -> int:
    try:
        return _run(args)
    except BaseException:
        # A bad file fails in milliseconds: do not wait for the workers' start to exit.
        from svgloo.engine.processes.workers import close_all_pools

        close_all_pools()
        raise


def read_checked(path: str, args):
    """The parsed document, checked against the limits: every error about the file itself
    (missing, unreadable, malformed, over a limit, too many units) is raised here, before
    any render worker or fork server is started and before the rest of the engine is
    imported. Returns the document for ``score_document``."""
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.reading.preflight import check_scorable

    limits = limits_from_args(args)
    doc = load_document(path, limits)
    check_scorable(doc, limits, args.subpaths, args.method)
    return doc


def _run(args) -> int:
    doc = read_checked(args.file, args)  # before a daemon or a worker is started
    result = None
    if args.daemon:
        result = _try_daemon(args.file, settings_from_args(args))
    if result is None:
        start_render_workers(doc, program=getattr(args, "program", False))
    settings = settings_from_args(args)
    from svgloo.engine.scoring.score import score_document

    run_ = None
    if result is None:
        bar = progress_bar(f"scoring {args.file}")
        try:
            run_ = score_document(doc, settings, progress=bar)
        finally:
            bar.close()
        result = run_.result
    if args.footprints:
        if run_ is None:  # the daemon sent JSON only; footprints need the arrays
            run_ = score_document(doc, settings)
        write_footprints_reporting(run_, args.footprints)
    if args.json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print_table(result)
    return 0


def _try_daemon(path: str, settings):
    """Score through a running daemon; None when none is up (then score in-process)."""
    try:
        from svgloo.daemon.client import DaemonUnavailable, UntrustedDaemon, score_via_daemon
    except ImportError:
        return None
    try:
        return score_via_daemon(path, settings)
    except UntrustedDaemon as exc:  # nothing was sent; say why the daemon was not used
        print(f"svgloo: warning: not using the daemon: {exc}", file=sys.stderr)
        return None
    except DaemonUnavailable:
        return None


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 unit', '2 units' (``many`` for irregular plurals)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def write_footprints_reporting(run, out_dir) -> None:
    """write_footprints with a progress bar on terminals and a closing line with the speed
    and what the contact sheet shows."""
    import time

    from svgloo.engine.reporting.plots import write_footprints

    bar = progress_bar(f"writing footprints to {out_dir}")
    t0 = time.perf_counter()
    try:
        written = write_footprints(run, out_dir, progress=bar)
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    rate = f" ({len(written) / seconds:.0f} images/s)" if seconds > 0 else ""
    print(f"wrote {plural(len(written), 'image')} to {out_dir} in {seconds:.1f} s{rate}; "
          f"{written.sheet_note}", file=sys.stderr)


def position(r: dict) -> str:
    """Where a unit starts, as line:column (both 1-based), so units of a one-line file
    are told apart."""
    start = r["range"]["start"]
    return f"{start['line'] + 1}:{start['character'] + 1}"


def print_table(result: Mapping[str, Any], out=None) -> None:
    out = out or sys.stdout
    rows = result["units"]
    name_w = max([len(_label(r)) for r in rows] + [8])
    at_w = max([len(position(r)) for r in rows] + [9])
    print(f"{result['file']}", file=out)
    print(f"  backbone: {result['backbone']} ({result['backbone_detail']['description']}; "
          f"{result['backbone_detail']['reason']})", file=out)
    print(f"  reference: {reference_text(result['reference'])}", file=out)
    print(f"  method: {result['method']}, {result['render_size']} px, full score "
          f"{result['full_score']:.4f}", file=out)
    for w in result.get("warnings", []):
        print(f"  warning: {w}", file=out)
    print(file=out)
    print(f"  {'unit':>4}  {'element':<{name_w}}  {'line:col':>{at_w}}  {'delta':>9}  "
          f"{'verdict':<8}  {'footprint':>9}  findings", file=out)
    for r in rows:
        fp = f"{r['footprint_pixels']} px" if r["visible"] else _removal_cell(r)
        print(f"  {r['index']:>4}  {_label(r):<{name_w}}  {position(r):>{at_w}}"
              f"  {r['delta']:>+9.5f}  {r['verdict']:<8}  {fp:>9}  {_findings_cell(r)}"
              .rstrip(), file=out)
        removal = r.get("removal") or {}
        if not r["visible"] and removal.get("status") in ("unverified", "visible"):
            # plain words (engine plain_words.py); the proof's reason is in --json
            print(f"        {removal_note(removal)}", file=out)
    s = result["summary"]
    print(file=out)
    print(f"  {plural(s['units'], 'unit')}: {s['helpful']} helpful, {s['harmful']} harmful, "
          f"{s['neutral']} neutral; {s['invisible']} with no footprint (no pixel over 12/255 "
          "in CairoSVG)", file=out)
    if "proven_removable" in s:
        bulk = result.get("bulk_removal")
        print(f"  removal: {s['proven_removable']} proven removable, {s['unverified']} "
              f"unverified; proof: {(bulk or {}).get('checked') or _checked(result)}", file=out)
    if "finding_thresholds" in result:
        th = result["finding_thresholds"]
        print(f"  findings: {plural(s['specks'], 'speck')} (visible on <= {th['speck']:.4%} "
              f"of the canvas), {s['mostly_hidden']} mostly hidden (>= {th['hidden']:.0%} of what "
              "they draw alone covered by later elements)", file=out)
    for note in result.get("notes", []):
        print(f"  note: {note}", file=out)
    t = result["timings"]
    if t.get("cached"):
        cold = t.get("cold_total_s")
        print(f"  cached answer from the daemon in {t['total_s']:.2f} s (nothing rendered now"
              + (f"; computing it took {cold:.2f} s)" if cold is not None else ")"), file=out)
    else:
        print(f"  {plural(t['renders'], 'render')} in {t['total_s']:.2f} s", file=out)


def reference_text(reference: dict) -> str:
    """What the units were compared against, in words: ``--reference x.svg (an SVG
    rendered the same way as the file)``, ``--reference x.png (an image)``,
    ``<title>/<desc> (text)``, or the self-analysis sentence."""
    kind, source = reference.get("kind"), reference.get("source", "?")
    if kind == "image":
        svg = source.lower().endswith((".svg", ".svgz"))
        return f"{source} ({'an SVG rendered the same way as the file' if svg else 'an image'})"
    if kind == "text":
        return f"{source} (text)"
    return source


def _removal_cell(row: Mapping[str, Any]) -> str:
    """The footprint cell of a unit with no footprint: what the removal proof found."""
    status = (row.get("removal") or {}).get("status")
    return {"proven": "removable", "unverified": "unverified",
            "visible": "0 px"}.get(status or "", "invisible")


def _checked(result: Mapping[str, Any]) -> str:
    proven = [r for r in result["units"] if (r.get("removal") or {}).get("status") == "proven"]
    if proven:
        return proven[0]["removal"]["reason"].split(": ", 1)[-1]
    return "no candidate (nothing without a footprint that svgloo can vouch for)"


def _findings_cell(r: dict) -> str:
    cells = []
    for f in r.get("findings", []):
        if f["kind"] == "mostly_hidden":
            cells.append(f"hidden {f['hidden_share']:.0%}")
        else:
            cells.append(f["kind"])
    return ", ".join(cells)


def _label(r: dict) -> str:
    from svgloo.engine.wording.describe import describe_unit

    return describe_unit(r)   # the same name the footprint tiles and reports use
