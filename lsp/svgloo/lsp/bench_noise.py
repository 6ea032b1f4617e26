"""How many diagnostics the editor shows: corpus files scored by the engine, then turned
into diagnostics by ``convert.document_diagnostics`` - the function the server publishes
from (default settings: no reference, the default render size, no structure analysis).

    python -m svgloo.lsp.bench_noise [--corpus DIR] [--sample 40] [--seed 26]
                                     [--cache DIR] [FILE ...relative to the corpus]

Prints, for a seeded random sample of the corpus's SVG files and for any files named, the
number of diagnostics per file and by code. ``--cache`` keeps the score results (JSON) so
that a second run (say, on another version of convert.py) costs no renders.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path
from typing import cast

from svgloo.engine.result_types import ScoreResult

from .convert import DiagnosticOptions, LineIndex, document_diagnostics

DEFAULT_CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"  # beside the worktree


def corpus_files(corpus: Path) -> list[str]:
    return sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*.svg"))


def score_result(corpus: Path, name: str, cache: Path | None) -> ScoreResult:
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    stored = cache / (name.replace("/", "__") + ".json") if cache else None
    if stored is not None and stored.is_file():
        return cast(ScoreResult, json.loads(stored.read_text()))  # stored by this function
    path = corpus / name
    result = score_text(path.read_text(encoding="utf-8"), str(path),
                        ScoreSettings()).result
    if stored is not None:
        stored.write_text(json.dumps(result))
    return result


def file_diagnostics(corpus: Path, name: str, cache: Path | None) -> list:
    path = corpus / name
    result = score_result(corpus, name, cache)
    return document_diagnostics(result, None, LineIndex(path.read_text(encoding="utf-8")),
                                DiagnosticOptions(), 1, path.as_uri())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("files", nargs="*", help="more files (relative to the corpus) to count")
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--cache", type=Path)
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        ap.error(f"{args.corpus}: no corpus folder there (--corpus DIR)")
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    sample = random.Random(args.seed).sample(corpus_files(args.corpus), args.sample)
    counts = {name: len(file_diagnostics(args.corpus, name, args.cache)) for name in sample}
    print(f"{len(sample)} files (seed {args.seed}): {sum(counts.values())} diagnostics, "
          f"{sum(n > 0 for n in counts.values())} files show any, at most "
          f"{max(counts.values(), default=0)} in one file")
    for name in args.files:
        diags = file_diagnostics(args.corpus, name, args.cache)
        print(f"{name}: {len(diags)} diagnostics {dict(Counter(str(d.code) for d in diags))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
