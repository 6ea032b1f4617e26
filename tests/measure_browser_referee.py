"""How often svgloo's removals change Chromium's picture, over the corpus: counts.

    python tests/measure_browser_referee.py [--definition invisible|proven] [FILE_OR_DIR ...]

Scores every file with the pixel backbone (self-analysis, the analysis size 384), takes what
svgloo offers to remove under the chosen definition (browser_referee.py says what each
means), has Chromium draw the file before and after each removal (browser.py), and prints
how many single-unit removals and bulk fixes change Chromium's picture by more than
t/255 for several tolerances t, with the worst cases. "invisible" is the definition before
the proof contract (visible == False, the editor's bulk fix); "proven" needs the contract's
``removal`` fields. Files svgloo cannot score are counted and named, not fatal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser import Chromium
from browser_referee import invisible_removals, proven_removals, referee
from svgloo.engine.settings import DEFAULT_RENDER_SIZE

TOLERANCES = (0, 1, 2, 4, 8, 12)
SIZE = DEFAULT_RENDER_SIZE


def files_of(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.glob("**/*.svg")) if p.is_dir() else [p]
    return out


def main(argv: list[str] | None = None) -> int:
    from svgloo.engine.errors import SvglooError
    from svgloo.engine.scoring.score import ScoreSettings, score_file

    default_corpus = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[str(default_corpus)])
    ap.add_argument("--definition", choices=("invisible", "proven"), default="invisible")
    ap.add_argument("--worst", type=int, default=10, help="worst cases to list")
    args = ap.parse_args(argv)

    settings = ScoreSettings(backbone="pixel", size=SIZE)
    files = files_of(args.paths)
    verdicts, failed, seconds = [], [], []
    offered_units = bulk_offered = 0
    with Chromium() as chromium:
        for path in files:
            try:
                run = score_file(str(path), settings)
            except SvglooError as exc:
                failed.append(f"{path}: {exc}")
                continue
            if args.definition == "proven":
                candidates = proven_removals(run.result)
            else:
                candidates = invisible_removals(run, SIZE)
            offered_units += len(candidates.singles)
            bulk_offered += candidates.bulk is not None
            if candidates.singles or candidates.bulk:
                t0 = time.perf_counter()
                verdicts += referee(chromium, str(path), run.units, candidates, SIZE, 0)
                seconds.append(time.perf_counter() - t0)
        print(f"referee: {chromium.version}, {SIZE} px, definition {args.definition!r}")

    singles = [v for v in verdicts if not v.what.startswith("bulk")]
    bulks = [v for v in verdicts if v.what.startswith("bulk")]
    print(f"files: {len(files)} ({len(failed)} not scored)")
    print(f"units offered for removal: {offered_units} in "
          f"{len({v.file for v in singles})} files; bulk fixes offered: {bulk_offered}")
    print("changing Chromium's picture by more than t/255: in RGBA or on a white or dark page "
          "| on the white page alone")
    print("tolerance | units (files) | bulk fixes | units (files), white | bulk fixes, white")
    for t in TOLERANCES:
        row = []
        for key in (lambda v: v.worst, lambda v: v.worst_on_white):
            bad = [v for v in singles if key(v) > t]
            bad_bulk = [v for v in bulks if key(v) > t]
            row.append(f"{len(bad):>4} ({len({v.file for v in bad})}) | "
                       f"{len(bad_bulk)} of {len(bulks)}")
        print(f"  t={t:>2}   | " + " | ".join(row))
    if seconds:
        print(f"Chromium time per file with something to referee ({len(seconds)} files): "
              f"median {statistics.median(seconds) * 1000:.0f} ms, worst "
              f"{max(seconds) * 1000:.0f} ms, total {sum(seconds):.1f} s for "
              f"{len(verdicts) + len(seconds)} renders")
    print(f"worst {args.worst} (pixels counted at any difference):")
    for v in sorted(verdicts, key=lambda v: (-v.worst, -v.changed))[:args.worst]:
        print("  " + v.line())
    for line in failed:
        print("not scored: " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
