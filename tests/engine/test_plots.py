"""Footprint pictures: the colormap and heatmaps against matplotlib's, the contact sheet's
tiles (invisible units collapsed, labels as in the CLI table) and its layout (the title
band above the tiles, a legend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from svgloo.engine.wording.describe import describe_unit
from svgloo.engine.reporting.plots import (INFERNO, PAD, TILE, contact_sheet, heatmap_rgb, sheet_tiles,
                                           tile_lines)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_inferno_table_is_matplotlibs():
    from matplotlib import colormaps

    expected = (colormaps["inferno"](np.arange(256) / 255.0)[:, :3] * 255).astype(np.uint8)
    assert np.array_equal(INFERNO, expected)


def test_heatmap_matches_the_matplotlib_blend():
    """The former implementation: matplotlib's colormap on the whole canvas."""
    from matplotlib import colormaps

    rng = np.random.default_rng(3)
    full = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    fp = np.zeros((64, 64), np.float32)
    fp[10:30, 40:60] = rng.random((20, 20), dtype=np.float32)
    norm = fp / fp.max()
    heat = (colormaps["inferno"](norm)[..., :3] * 255).astype(np.float32)
    base = full.astype(np.float32) * 0.35 + 255 * 0.65
    alpha = np.clip(norm * 1.5, 0, 1)[..., None]
    expected = (base * (1 - alpha) + heat * alpha).astype(np.uint8)
    assert np.abs(heatmap_rgb(full, fp).astype(int) - expected).max() <= 1
    # no footprint: just the dimmed render
    assert np.abs(heatmap_rgb(full, np.zeros((64, 64), np.float32)).astype(int)
                  - base.astype(np.uint8)).max() <= 1


def _row(i, tag="path", ident=None, subpath=None, visible=True, verdict="neutral", delta=0.0,
         pixels=10, findings=()):
    return {"index": i, "tag": tag, "id": ident, "subpath": subpath, "visible": visible,
            "verdict": verdict, "delta": delta, "footprint_pixels": pixels if visible else 0,
            "findings": list(findings),
            "range": {"start": {"line": i, "character": 2}, "end": {"line": i, "character": 9}}}


def test_units_with_no_visible_effect_share_one_tile():
    rows = [_row(0, delta=0.2, verdict="helpful"), _row(1, visible=False),
            _row(2, tag="rect", ident="stray", delta=-0.1, verdict="harmful"),
            _row(3, visible=False), _row(4, visible=False), _row(5, delta=0.01)]
    tiles, shown = sheet_tiles(rows)
    assert [t["index"] if isinstance(t, dict) else [r["index"] for r in t] for t in tiles] == [
        2, 0, 5, [1, 3, 4]]
    assert shown == 6
    tiles, shown = sheet_tiles(rows, max_units=1)
    assert len(tiles) == 2 and shown == 4      # the harmful one, and the 3 invisible ones


def test_tile_labels_are_the_cli_tables_names():
    from svgloo.cli_score import _label

    stray = _row(2, tag="rect", ident="stray", delta=-0.1, verdict="harmful")
    sub = _row(3, subpath=0, findings=[{"kind": "speck"}])
    assert tile_lines(stray)[0] == _label(stray) == describe_unit(stray) == "rect#stray"
    assert tile_lines(sub)[0] == _label(sub) == "path subpath 1"
    assert tile_lines(sub)[2] == "line 4:3, speck"
    assert tile_lines(stray)[1] == "-0.1000 harmful"


@pytest.fixture(scope="module")
def billiards_run():
    from svgloo.engine.scoring.score import ScoreSettings, score_file

    return score_file(str(EXAMPLES / "billiards-with-stray.svg"), ScoreSettings(backbone="pixel"))


def test_sheet_title_and_legend_sit_above_the_tiles(billiards_run, tmp_path):
    from PIL import Image

    note = contact_sheet(billiards_run, tmp_path / "sheet.png")
    assert "shows all" in note
    sheet = np.asarray(Image.open(tmp_path / "sheet.png").convert("RGB")).astype(int)
    thumb = np.asarray(Image.fromarray(billiards_run.loo.full).resize(
        (TILE, TILE), Image.Resampling.BILINEAR)).astype(int)
    # where the full-render tile was pasted: the first row of tiles
    tops = [y for y in range(0, 200)
            if np.array_equal(sheet[y:y + TILE, PAD:PAD + TILE], thumb)]
    assert len(tops) == 1
    top = tops[0]
    # (row top - 1 holds the other tiles' verdict-coloured frames)
    inked = np.flatnonzero((sheet[:top - 1] < 250).any(axis=(1, 2)))
    assert len(inked) > 20                  # a title and a legend were drawn above
    assert inked.max() < top - 4            # and end with a blank gap before the tiles
    header = sheet[:top].reshape(-1, 3)
    # the legend shows the heat scale (the colormap's last colour) and the verdict colours
    assert (np.abs(header - INFERNO[-2].astype(int)).max(axis=1) <= 3).any()
    assert (np.abs(header - [0xd7, 0x30, 0x27]).max(axis=1) == 0).any()


def test_a_speck_is_circled_and_magnified_on_its_tile():
    from PIL import Image

    from svgloo.engine.reporting.plots import SPECK_INSET, SPECK_MARK, dimmed, mark_speck

    size = 384
    full = np.full((size, size, 3), 200, np.uint8)
    footprint = np.zeros((size, size), np.float32)
    footprint[300, 290] = 1.0                     # one pixel: nothing of it survives 160 px
    heat = heatmap_rgb(full, footprint, dimmed(full))
    plain = Image.fromarray(heat).resize((TILE, TILE), Image.Resampling.BILINEAR)
    hot = heat[300, 290]
    assert not (np.asarray(plain) == hot).all(axis=2).any()   # lost when shrunk
    marked = np.asarray(mark_speck(plain, heat, footprint)).astype(int)
    mark = np.argwhere((marked == SPECK_MARK).all(axis=2))
    # outside the inset's frame (top left, away from the speck), the ring
    ring = mark[(mark[:, 0] > SPECK_INSET + 1) | (mark[:, 1] > SPECK_INSET + 1)]
    # the ring is centred on where the speck is on the tile
    cy, cx = (300 + 0.5) * TILE / size, (290 + 0.5) * TILE / size
    assert len(ring) > 20
    assert abs(ring[:, 0].mean() - cy) < 3 and abs(ring[:, 1].mean() - cx) < 3
    # the speck's own pixel, magnified: a block of its heat colour in the opposite corner
    block = np.argwhere((marked == hot).all(axis=2))
    assert len(block) >= (SPECK_INSET // 12) ** 2
    assert block[:, 0].max() < TILE / 2 and block[:, 1].max() < TILE / 2


def test_the_sheet_marks_specks_and_only_specks(tmp_path):
    from PIL import Image

    from svgloo.engine.reporting.plots import SPECK_MARK
    from svgloo.engine.scoring.score import ScoreSettings, score_text

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 384 384">'
           '<rect x="0" y="0" width="200" height="200" fill="#c00"/>'
           '<rect id="stray" x="300" y="300" width="1" height="1" fill="#000"/></svg>')
    sheets = {}
    for threshold in (0.0002, 0.0):               # 0 turns specks off
        run = score_text(svg, "specks.svg",
                         ScoreSettings(backbone="pixel", speck_threshold=threshold))
        assert sum(bool(u["findings"]) for u in run.result["units"]) == (threshold > 0)
        contact_sheet(run, tmp_path / f"{threshold}.png")
        sheets[threshold] = np.asarray(Image.open(tmp_path / f"{threshold}.png").convert("RGB"))
    marked = [(sheet == SPECK_MARK).all(axis=2).sum() for sheet in sheets.values()]
    assert marked[0] > 40 and marked[1] == 0, marked
