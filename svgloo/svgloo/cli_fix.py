"""``svgloo fix FILE|FOLDER``: apply proven removals (engine/fix.py) and write the result
atomically, print it as a unified diff, or only say what would go."""

from __future__ import annotations

import difflib
import os
import stat
import sys

NAMES_SHOWN = 4  # element names per kind in a file's line; the rest are counted


def register(sub) -> None:
    from svgloo.engine.settings import DEFAULT_RENDER_SIZE, FIX_KINDS as KINDS

    p = sub.add_parser(
        "fix", help="remove what rendering proves removable, then tidy and prove the result",
        description="Remove the units the engine's removal proof lets go (by default those "
                    "with no visible effect, proven together in CairoSVG and resvg), then "
                    "the containers left empty and the definitions no longer referenced; "
                    "the whole result is proven by rendering before it is written.")
    p.add_argument("file", metavar="FILE|FOLDER",
                   help="an SVG file, or a folder: every .svg below it (not *.ref.svg)")
    p.add_argument("--only", default="invisible", metavar="KINDS",
                   help=f"what to remove, comma-separated: {', '.join(KINDS)} (default "
                        "invisible; harmful needs --reference)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--dry-run", action="store_true",
                     help="only say what would be removed; write nothing")
    how.add_argument("--diff", action="store_true",
                     help="print a unified diff (for patch -p0) instead of writing")
    p.add_argument("--rewrite", action="store_true",
                   help="also spell the file shorter (editor metadata, blanks, numbers, "
                        "colours, styles, path data, ...), each rewrite proven not to "
                        "change the picture; see docs/fix.md")
    p.add_argument("--browser", action="store_true",
                   help="also referee each result in headless Chromium (as an <img> and "
                        "in an <object>): a file whose picture moves by more than 4/255 "
                        "there is not changed; needs a Chromium (apt-get install chromium)")
    p.add_argument("--reference", help="reference image (PNG/JPEG) or SVG, for --only harmful")
    p.add_argument("--backbone", default="pixel",
                   help="similarity backbone for harmful units (default pixel)")
    p.add_argument("--size", type=int, default=DEFAULT_RENDER_SIZE,
                   help=f"analysis size in px (default {DEFAULT_RENDER_SIZE})")
    p.set_defaults(func=run)


def svg_files(folder: str) -> list[tuple[str, str | None]]:
    """(path, None) for every .svg below ``folder`` (sidecar references ``*.ref.svg``
    skipped), or (path, why not) for a link that leads out of the folder (the rule of
    engine.files.resolve_within). Linked folders are not entered; a link to a file of the
    folder is fixed once, under its own name."""
    from svgloo.engine.errors import InputError
    from svgloo.engine.files import resolve_within

    found: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for here, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(here, d)))
        for name in sorted(names):
            if not name.lower().endswith(".svg") or name.lower().endswith(".ref.svg"):
                continue
            path = os.path.join(here, name)
            try:
                real = resolve_within(path, folder, f"the folder {folder}")
            except InputError as exc:
                found.append((path, exc.message))
                continue
            if real not in seen:
                seen.add(real)
                found.append((path, None))
    return found


def unified_diff(old: str, new: str, path: str) -> str:
    """A diff ``patch -p0`` applies, "No newline at end of file" included."""
    lines = []
    for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True), path, path):
        lines.append(line)
        if not line.endswith(("\n", "\r")):
            lines.append("\n\\ No newline at end of file\n")
    return "".join(lines)


def _names(labels: list[str]) -> str:
    shown = ", ".join(labels[:NAMES_SHOWN])
    more = len(labels) - NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def summary(fixed, saved: int, dry_run: bool) -> str:
    """One line: what was (or would be) removed, per kind, the bytes saved, the proof."""
    if not fixed.changed:
        return f"{fixed.name}: nothing to remove" + (
            f" ({fixed.fell_back})" if fixed.fell_back else "")
    parts = [f"{len(labels)} {kind} ({_names(labels)})"
             for kind, labels in fixed.removed.items()]
    if fixed.containers:
        parts.append(f"{len(fixed.containers)} empty container"
                     f"{'s' if len(fixed.containers) != 1 else ''} "
                     f"({_names(fixed.containers)})")
    if fixed.definitions:
        parts.append(f"{len(fixed.definitions)} unused definition"
                     f"{'s' if len(fixed.definitions) != 1 else ''} "
                     f"({_names(fixed.definitions)})")
    verb = "would remove" if dry_run else "removed"
    said = [f"{verb} {', '.join(parts)}"] if parts else []
    if fixed.rewritten:
        said.append(("would rewrite " if dry_run else "rewrote ") + ", ".join(
            f"{n} {job}" for job, n in fixed.rewritten.items()))
    line = f"{fixed.name}: {'; '.join(said)}; {saved:,} bytes saved; proven: " \
           f"{fixed.checked or 'each rewrite and the whole result against the original'}"
    return line + (f"; note: {fixed.fell_back}" if fixed.fell_back else "")


def writable(path: str) -> bool:
    """False for a file without write permission - also for root, whom os.access lets
    write anything: a file marked read-only is not meant to be changed."""
    mode = os.stat(path).st_mode
    return bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) and \
        os.access(path, os.W_OK)


def fix_one(path: str, args, kinds, settings, pool) -> str:
    """Fix one file as ``args`` say; its summary line. SvglooError for a bad file."""
    from svgloo.engine.document import read_svg_bytes
    from svgloo.engine.errors import InputError
    from svgloo.engine.files import atomic_write_bytes, encode_like
    from svgloo.engine.fix import fix_text

    writing = not (args.dry_run or args.diff)
    data = read_svg_bytes(path, settings.limits)
    if data.startswith(b"\x1f\x8b"):
        raise InputError(path, "a compressed .svgz file; fix works on plain .svg files")
    if writing and not writable(path):
        raise InputError(path, "read-only file; not changed (use --diff to see the fix)")
    fixed = fix_text(data, path, kinds, settings, pool, rewrite=args.rewrite)
    new_bytes = encode_like(fixed.text, data, path) if fixed.changed else data
    refereed = ""
    if fixed.changed and getattr(args, "chromium", None) is not None:
        from svgloo.engine.proof import BROWSER_TOLERANCE
        from svgloo.validation.chromium import BrowserError

        try:
            moved = browser_change(args.chromium, data, new_bytes, settings.size)
        except BrowserError as exc:
            raise InputError(path, f"--browser: Chromium could not draw it: {exc}") from None
        worst = max(moved.values())
        if worst > BROWSER_TOLERANCE:
            return (f"{path}: not changed: Chromium moves its picture by up to {worst}/255 "
                    f"(<img> {moved['img']}/255, <object> {moved['object']}/255), which "
                    "the proof renderers do not show")
        refereed = f"; refereed in Chromium: up to {worst}/255 as an <img> and an <object>"
    if fixed.changed and args.diff:
        sys.stdout.write(unified_diff(fixed.original, fixed.text, path))
    elif fixed.changed and writing:
        atomic_write_bytes(path, new_bytes)
    return summary(fixed, len(data) - len(new_bytes), args.dry_run or args.diff) + refereed



def browser_change(chromium, before: bytes, after: bytes, size: int) -> dict[str, int]:
    """Chromium's largest change /255 from ``before`` to ``after``, per embedding."""
    import tempfile

    from svgloo.validation.chromium import embedded_change

    with tempfile.TemporaryDirectory(prefix="svgloo-fix-") as folder:
        return embedded_change(chromium, before, after, size, folder)


def run(args) -> int:
    from svgloo.engine.errors import InputError
    from svgloo.engine.fix import parse_kinds
    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.engine.score import ScoreSettings
    from svgloo.engine.workers import shared_pool

    kinds = parse_kinds(args.only, args.file)
    if "harmful" in kinds and not args.reference:
        raise InputError(args.file, "--only harmful needs --reference FILE: against its "
                                    "own picture nothing is harmful")
    target = args.file
    if os.path.isdir(target):
        files = svg_files(target)
    elif os.path.lexists(target):
        files = [(target, None)]
    else:
        raise InputError(target, "no such file or folder")
    settings = ScoreSettings(backbone=args.backbone, size=args.size, reference=args.reference,
                             limits=DEFAULT_LIMITS)
    pool = shared_pool(settings.limits)
    args.chromium = None
    if getattr(args, "browser", False):
        from svgloo.validation.chromium import BrowserError, Chromium, find_chromium

        if find_chromium() is None:
            raise InputError(target, "--browser needs a Chromium (apt-get install chromium, "
                                     "or set SVGLOO_CHROMIUM)")
        try:
            args.chromium = Chromium()
        except BrowserError as exc:
            raise InputError(target, f"--browser: Chromium did not start: {exc}") from None
    try:
        return _fix_all(args, files, target, kinds, settings, pool)
    finally:
        if args.chromium is not None:
            args.chromium.close()


def _fix_all(args, files, target, kinds, settings, pool) -> int:
    from svgloo.cli import error_line
    from svgloo.engine.errors import SvglooError

    # With --diff the diff owns stdout; the lines go to stderr.
    report = sys.stderr if args.diff else sys.stdout
    failed = 0
    for path, why_not in files:
        if why_not:
            print(f"svgloo: error: {path}: {why_not}", file=sys.stderr)
            failed += 1
            continue
        try:
            print(fix_one(path, args, kinds, settings, pool), file=report, flush=True)
        except SvglooError as exc:
            print(error_line(exc, path), file=sys.stderr, flush=True)
            failed += 1
    if not files:
        print(f"{target}: no .svg files", file=report)
    return 2 if failed else 0


__all__ = ["register", "run", "svg_files", "unified_diff", "summary", "fix_one"]
