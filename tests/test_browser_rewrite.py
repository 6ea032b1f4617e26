"""``svgloo fix --rewrite`` refereed by Chromium: without ``--browser`` rewrites Chromium
draws differently from CairoSVG and resvg are never offered (engine cleanup/shapes.py,
rewrite.py); with it Chromium judges each rewrite (validation/chromium_judge.py) and
rounding is offered. Each file is rewritten and drawn by Chromium before and after, as an
``<img>`` and in an ``<object>``; no pixel may move by more than ``BROWSER_TOLERANCE``
(4/255)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import CORPUS
from svgloo.engine.fixing.cleanup.rewrite import rewrite_text
from svgloo.engine.limits import DEFAULT_LIMITS
from svgloo.engine.proving.proof import BROWSER_TOLERANCE
from svgloo.validation.bench_rewrite import chromium_moves

pytestmark = pytest.mark.slow

SIZE = 384
SIZES = (384, 1024)
# Round-capped lines: merged into one path Skia strokes them differently (17/255 in
# feather/align-justify.svg).
LINES = ('<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24" '
         'fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round">'
         '<line x1="21" y1="10" x2="3" y2="10"/><line x1="21" y1="6" x2="3" y2="6"/>'
         '<line x1="21" y1="14" x2="3" y2="14"/></svg>')


# 60 small rects at 2-decimal positions, many drawn twice (Illustrator's windows): as
# path data Skia antialiases them differently (27/255 on 1,769 px).
NIGHT = "noto/emoji_u1f303.svg"


@pytest.mark.parametrize("name", [NIGHT, "lines"])
def test_rewrites_keep_chromiums_picture(name, chromium, tmp_path, render_pool):
    if name == "lines":
        text = LINES
    elif not (CORPUS / name).is_file():
        pytest.skip("the shared corpus is not present")
    else:
        text = (CORPUS / name).read_text()
    done = rewrite_text(text, text, f"{name}.svg", SIZES, DEFAULT_LIMITS, render_pool)
    assert done.changed and len(done.text) < len(text)
    moved = chromium_moves(chromium, text.encode(), done.text.encode(), SIZE)
    assert max(moved.values()) <= BROWSER_TOLERANCE, (moved, done.kept, done.text)


# Six of its paths rounded within their 1/512 px bins pass CairoSVG and resvg at 2/255 but
# move Chromium's <object> picture by 30/255 (tuning split; docs/fix.md).
LATERAL = "logos/lateral-icon.svg"


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    from svgloo.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _corpus_text(name: str) -> str:
    if not (CORPUS / name).is_file():
        pytest.skip("the shared corpus is not present")
    return (CORPUS / name).read_text()


def _worst(chromium, before: str, after: str, tmp_path) -> int:
    """Chromium's largest change, both embeddings, at the analysis size and 1024 px."""
    return max(max(chromium_moves(chromium, before.encode(), after.encode(), size).values())
               for size in SIZES)


def test_a_rounding_the_proof_accepts_but_chromium_refuses_is_left_out(chromium, tmp_path,
                                                                      render_pool):
    from svgloo.validation.chromium_judge import ChromiumJudge

    text = _corpus_text(LATERAL)
    proof_only = rewrite_text(text, text, LATERAL, SIZES, DEFAULT_LIMITS, render_pool,
                              rounding=True)
    assert "precision" in proof_only.kept, proof_only        # the proof lets it round ...
    assert _worst(chromium, text, proof_only.text, tmp_path) > BROWSER_TOLERANCE  # ... wrongly
    judge = ChromiumJudge(chromium)
    try:
        judged = rewrite_text(text, text, LATERAL, SIZES, DEFAULT_LIMITS, render_pool,
                              rounding=True, judge=judge)
    finally:
        judge.close()
    assert judged.refused.get("precision"), judged            # Chromium said no to some
    assert judged.kept.get("precision"), judged               # and yes to others
    assert len(judged.text) < len(text)
    assert _worst(chromium, text, judged.text, tmp_path) <= BROWSER_TOLERANCE


def test_fix_browser_round_rounds_and_writes_a_smaller_file_chromium_draws_alike(
        capsys, chromium, tmp_path):
    """``fix --rewrite --browser --round`` rounds what Chromium accepts; ``--browser``
    alone rounds nothing (a rounding Chromium accepts at the judged sizes can still move
    it at another: docs/fix.md), nor does ``--round`` without a browser (refused)."""
    text = _corpus_text(LATERAL)
    path = tmp_path / "lateral-icon.svg"
    path.write_text(text)
    code, out, err = run_cli(capsys, "fix", "--rewrite", "--browser", "--round", str(path))
    assert code == 0, err
    written = path.read_text()
    assert len(written.encode()) < len(text.encode())
    assert " precision" in out and "refereed in Chromium" in out, out
    assert _worst(chromium, text, written, tmp_path) <= BROWSER_TOLERANCE

    path.write_text(text)
    code, out, err = run_cli(capsys, "fix", "--rewrite", "--browser", str(path))
    assert code == 0, err
    assert "precision" not in out and "refereed in Chromium" in out, out
    assert len(path.read_bytes()) < len(text.encode())

    code, out, err = run_cli(capsys, "fix", "--rewrite", "--round", str(path))
    assert code == 2 and "--round needs --rewrite --browser" in err, (code, err)


# Absolute points with seven decimals: rounded within their 1/512 px bins, CairoSVG and
# resvg draw them alike (the proof passes such a rounding).
LONG = ("M10.1234567 20.7654321L41.2345678 22.9876543 44.5678901 47.4321098"
        "C43.3333333 49.7777777 30.1111111 52.0000001 18.8888888 40.6543210Z")


def test_fix_rewrite_without_browser_rounds_nothing(capsys, tmp_path):
    import re

    path = tmp_path / "long.svg"
    path.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" '
                    f'viewBox="0 0 64 64">\n  <path fill="#06c" d="{LONG}"/>\n</svg>\n')
    code, out, err = run_cli(capsys, "fix", "--rewrite", str(path))
    assert code == 0, err
    written = path.read_text()
    assert "rewrote" in out and "precision" not in out, out
    # Digits past float32's are dropped (cleanup/browser_digits.py), nothing more: each
    # number is still the float32 it was (numpy's correctly rounded reading here).
    number = r"-?(?:\d+\.?\d*|\.\d+)"
    d = re.search(r' d="([^"]+)"', written).group(1)
    before, after = re.findall(number, LONG), re.findall(number, d)
    assert len(before) == len(after), written
    assert all(np.float32(a) == np.float32(b) for a, b in zip(before, after)), written
    assert "10.123457" in d and "20.765432" in d, written  # 10.1234567, 20.7654321
