"""``svgloo fix FILE|FOLDER...``: apply proven removals (engine/fix.py) and write the result
atomically, print it as a unified diff, or only say what would go.

A file is written only if it is still what was read (engine/file_update.py): a save made
while the proof ran is kept and the file is reported as changed. A file that cannot be
written (a full disk, a read-only folder) is one error line; the run goes on with the next
file and ends non-zero with a count."""

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
    p.add_argument("paths", nargs="+", metavar="FILE|FOLDER",
                   help="SVG files, or folders: every .svg below them (not *.ref.svg)")
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
                   help="also referee in headless Chromium (as an <img> and in an "
                        "<object>): every rewrite and the result, so rects as paths and "
                        "merged paths can be tried; a file whose picture moves by more than "
                        "4/255 there is not changed; needs a Chromium "
                        "(apt-get install chromium)")
    p.add_argument("--round", action="store_true",
                   help="with --rewrite --browser: also round path data, each rounding "
                        "judged by Chromium at the proof's sizes (it may still move the "
                        "picture at other sizes; see docs/fix.md)")
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
    from svgloo.engine.reading.files import resolve_within

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
    from svgloo.engine.fixing import fix as engine_fix
    from svgloo.engine.errors import InputError
    from svgloo.engine.reading.file_update import read_for_update, write_if_unchanged
    from svgloo.engine.reading.files import encode_like

    writing = not (args.dry_run or args.diff)
    with read_for_update(path, settings.limits.max_file_bytes) as read:
        data = read.data
        if data.startswith(b"\x1f\x8b"):
            raise InputError(path, "a compressed .svgz file; fix works on plain .svg files")
        if writing and not writable(path):
            raise InputError(path, "read-only file; not changed (use --diff to see the fix)")
        fixed = engine_fix.fix_text(data, path, kinds, settings, pool, rewrite=args.rewrite,
                                    judge=getattr(args, "judge", None),
                                    rounding=getattr(args, "round", False))
        new_bytes = encode_like(fixed.text, data, path) if fixed.changed else data
        refereed = ""
        if fixed.changed and getattr(args, "chromium", None) is not None:
            from svgloo.engine.proving.pictures import BROWSER_TOLERANCE
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
            try:
                write_if_unchanged(read, new_bytes)
            except OSError as exc:   # a full disk, a read-only folder: the file is as it was
                raise InputError(path, f"cannot write: {exc.strerror or exc}; the file is "
                                       "unchanged") from None
    return summary(fixed, len(data) - len(new_bytes), args.dry_run or args.diff) + refereed


def browser_change(chromium, before: bytes, after: bytes, size: int) -> dict[str, int]:
    """Chromium's largest change /255 from ``before`` to ``after``, per embedding."""
    from svgloo.validation.chromium import embedded_change

    return embedded_change(chromium, before, after, size)


def run(args) -> int:
    from svgloo.engine.errors import InputError
    from svgloo.engine.fixing.fix import parse_kinds
    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.engine.scoring.score import ScoreSettings
    from svgloo.engine.processes.workers import shared_pool

    first = args.paths[0]
    kinds = parse_kinds(args.only, first)
    if getattr(args, "round", False) and not (args.rewrite and args.browser):
        raise InputError(first, "--round needs --rewrite --browser: only Chromium can "
                                "refuse a rounding the proof renderers accept")
    if "harmful" in kinds and not args.reference:
        raise InputError(first, "--only harmful needs --reference FILE: against its "
                                "own picture nothing is harmful")
    files: list[tuple[str, str | None]] = []
    empty_folders = []
    for target in args.paths:
        if os.path.isdir(target):
            found = svg_files(target)
            files += found
            if not found:
                empty_folders.append(target)
        elif os.path.lexists(target):
            files.append((target, None))
        else:
            files.append((target, "no such file or folder"))
    settings = ScoreSettings(backbone=args.backbone, size=args.size, reference=args.reference,
                             limits=DEFAULT_LIMITS)
    pool = shared_pool(settings.limits)
    args.chromium = args.judge = None
    if getattr(args, "browser", False):
        from svgloo.validation.chromium import BrowserError, Chromium, find_chromium
        from svgloo.validation.chromium_judge import ChromiumJudge

        if find_chromium() is None:
            raise InputError(first, "--browser needs a Chromium (apt-get install chromium, "
                                    "or set SVGLOO_CHROMIUM)")
        try:
            args.chromium = Chromium()
        except BrowserError as exc:
            raise InputError(first, f"--browser: Chromium did not start: {exc}") from None
        # the same browser judges inside the rewrite stage (one Chromium for the run)
        args.judge = ChromiumJudge(args.chromium)
    try:
        return _fix_all(args, files, empty_folders, kinds, settings, pool)
    finally:
        if args.judge is not None:
            args.judge.close()
        if args.chromium is not None:
            args.chromium.close()


def _fix_all(args, files: list[tuple[str, str | None]], empty_folders: list[str], kinds,
             settings, pool) -> int:
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
    for target in empty_folders:
        print(f"{target}: no .svg files", file=report)
    if failed and len(files) > 1:
        print(f"svgloo: fix: {failed} of {len(files)} files not fixed (see above)",
              file=sys.stderr)
    return 2 if failed else 0


__all__ = ["register", "run", "svg_files", "unified_diff", "summary", "fix_one"]
