"""Pictures of results: footprint heatmaps and a contact sheet, drawn with Pillow.

matplotlib drew the contact sheet as one axes per tile: on a 122-unit emoji the sheet took
29 of the 33 s spent writing footprints (laying out 121 axes and their titles), and each
heatmap went through matplotlib's colormap. Now every picture is numpy arithmetic on
uint8 arrays, a lookup table for the colormap and Pillow for text and PNG encoding.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from svgloo.engine.wording.describe import describe_unit

VERDICT_COLORS = {"helpful": "#1a9850", "harmful": "#d73027", "neutral": "#777777"}

# matplotlib's "inferno" colormap, 256 RGB entries (generated once with
# ``(matplotlib.colormaps["inferno"](np.arange(256) / 255)[:, :3] * 255).astype(np.uint8)``;
# tests/engine/test_plots.py checks it against matplotlib).
_INFERNO_HEX = (
    "00000300000400000601000701010901010b02010e02021003021204031404031605041806041b07051d08061f090621"
    "0a07230b07260d08280e082a0f092d10092f120a32130a34140b36160b39170b3b190b3e1a0b401c0c431d0c451f0c47"
    "200c4a220b4c240b4e260b50270b52290b542b0a562d0a582e0a5a300a5c32095d34095f3509603709613909623b0964"
    "3c09653e0966400966410967430a68450a69460a69480b6a4a0b6a4b0c6b4d0c6b4f0d6c500d6c520e6c530e6d550f6d"
    "570f6d58106d5a116d5b116e5d126e5f126e60136e62146e63146e65156e66156e68166e6a176e6b176e6d186e6e186e"
    "70196e72196d731a6d751b6d761b6d781c6d7a1c6d7b1d6c7d1d6c7e1e6c801f6b811f6b83206b85206a86216a88216a"
    "8922698b22698d23698e24689024689125679325679526669626669827659928649b28649c29639e2963a02a62a12b61"
    "a32b61a42c60a62c5fa72d5fa92e5eab2e5dac2f5cae305baf315bb1315ab23259b43358b53357b73456b83556ba3655"
    "bb3754bd3753be3852bf3951c13a50c23b4fc43c4ec53d4dc73e4cc83e4bc93f4acb4049cc4148cd4247cf4446d04544"
    "d14643d24742d44841d54940d64a3fd74b3ed94d3dda4e3bdb4f3adc5039dd5238de5337df5436e05634e25733e35832"
    "e45a31e55b30e65c2ee65e2de75f2ce8612be9622aea6428eb6527ec6726ed6825ed6a23ee6c22ef6d21f06f1ff0701e"
    "f1721df2741cf2751af37719f37918f47a16f57c15f57e14f68012f68111f78310f7850ef8870df8880cf88a0bf98c09"
    "f98e08f99008fa9107fa9306fa9506fa9706fb9906fb9b06fb9d06fb9e07fba007fba208fba40afba60bfba80dfbaa0e"
    "fbac10fbae12fbb014fbb116fbb318fbb51afbb71cfbb91efabb21fabd23fabf25fac128f9c32af9c52cf9c72ff8c931"
    "f8cb34f8cd37f7cf3af7d13cf6d33ff6d542f5d745f5d948f4db4bf4dc4ff3de52f3e056f3e259f2e45df2e660f1e864"
    "f1e968f1eb6cf1ed70f1ee74f1f079f1f27df2f381f2f485f3f689f4f78df5f891f6fa95f7fb99f9fc9dfafda0fcfea4"
)
INFERNO = np.frombuffer(bytes.fromhex(_INFERNO_HEX), np.uint8).reshape(256, 3)

TILE = 160          # px, the image part of a contact-sheet tile
# A speck (engine findings.py) changes a few pixels of the analysis render: shrunk into a
# tile it vanishes. Its tile circles where it is and shows it magnified in a corner, in a
# colour that neither the heat scale nor a verdict uses.
SPECK_MARK = (0, 160, 255)
SPECK_INSET = 56    # px, the magnified corner
SPECK_RING_MIN = 7  # px, the smallest ring radius on the tile
LABEL_LINES = 3
PAD = 8
BACKGROUND = (255, 255, 255)


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed), for the benchmark and
    structure plots."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def dimmed(full: np.ndarray) -> np.ndarray:
    """The render faded towards white: the background every heatmap is drawn on."""
    return (full.astype(np.float32) * 0.35 + 255 * 0.65).astype(np.uint8)


def heatmap_rgb(full: np.ndarray, footprint: np.ndarray,
                base: np.ndarray | None = None) -> np.ndarray:
    """The render dimmed, with the footprint as an 'inferno' heatmap on top (RGB uint8).
    The footprint is scaled to its own peak; the colormap is indexed as matplotlib
    indexes a 256-entry map (``int(x * 256)``, clipped). ``base`` is ``dimmed(full)``
    when the caller draws many heatmaps of one render. Only the footprint's bounding box
    is blended: most units change a small part of the canvas."""
    out = (dimmed(full) if base is None else base).copy()
    rows = np.flatnonzero(footprint.any(axis=1))
    if not len(rows):
        return out
    cols = np.flatnonzero(footprint.any(axis=0))
    box = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
    fp = footprint[box]
    norm = fp / float(fp.max())
    heat = INFERNO[np.clip((norm * 256).astype(np.int32), 0, 255)].astype(np.float32)
    alpha = np.clip(norm * 1.5, 0, 1)[..., None]
    # blend from the unrounded dimmed render, as a whole-canvas blend would
    under = full[box].astype(np.float32) * 0.35 + 255 * 0.65
    out[box] = (under * (1 - alpha) + heat * alpha).astype(np.uint8)
    return out


class FootprintImages(list):
    """The paths write_footprints wrote, and a sentence saying what the sheet shows."""

    sheet_note: str = ""


def write_footprints(run, out_dir: str | Path, progress=None) -> FootprintImages:
    """One PNG per unit (``unit-0007.png``) plus ``contact-sheet.png``; ``progress(done,
    total)`` is called after each image (the sheet counts as one)."""
    from PIL import Image

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = FootprintImages()
    rows = run.result["units"]
    total = len(rows) + 1
    base = dimmed(run.loo.full)
    for row in rows:
        i = row["index"]
        path = out / f"unit-{i:04d}.png"
        # fastest zlib level: these are previews, size matters less than time
        Image.fromarray(heatmap_rgb(run.loo.full, run.footprint(i), base)).save(
            path, compress_level=1)
        written.append(path)
        if progress:
            progress(len(written), total)
    sheet = out / "contact-sheet.png"
    written.sheet_note = contact_sheet(run, sheet)
    written.append(sheet)
    if progress:
        progress(total, total)
    return written


def sheet_order(rows: list[dict]) -> list[dict]:
    """What a reviewer looks at first: harmful units (worst first), then units with
    findings (specks, mostly hidden), then the rest by how much they matter (|delta|,
    then footprint size)."""
    def key(row):
        if row["verdict"] == "harmful":
            return (0, row["delta"], 0)
        if row.get("findings"):
            return (1, -abs(row["delta"]), 0)
        return (2, -abs(row["delta"]), -row["footprint_pixels"])

    return sorted(rows, key=key)


def sheet_tiles(rows: list[dict], max_units: int = 120) -> tuple[list, int]:
    """The tiles after the full render, in sheet_order: a unit row each, except that every
    unit with no visible effect shares one tile (a list of rows) where the first of them
    would be. Returns (tiles, units shown), at most ``max_units`` units in their own tiles."""
    tiles: list = []
    hidden: list[dict] = []
    shown = 0
    for row in sheet_order(rows):
        if not row.get("visible", True):
            if not hidden:
                tiles.append(hidden)
            hidden.append(row)
        elif shown < max_units:
            tiles.append(row)
            shown += 1
    return tiles, shown + len(hidden)


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: the fixed bitmap font
        return ImageFont.load_default()


def _fit(draw, text: str, font, width: int) -> str:
    """``text`` cut with an ellipsis to fit ``width`` pixels."""
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "\u2026", font=font) > width:
        text = text[:-1]
    return text + "\u2026"


def _position(row: dict) -> str:
    start = (row.get("range") or {}).get("start")
    return f"line {start['line'] + 1}:{start['character'] + 1}" if start else f"unit {row['index']}"


def tile_lines(row: dict) -> list[str]:
    """A tile's label: the name the CLI table uses, delta and verdict, where it is and its
    findings."""
    flags = ", ".join(f.get("kind", "?").replace("_", " ") for f in row.get("findings") or [])
    return [describe_unit(row), f"{row['delta']:+.4f} {row['verdict']}",
            _position(row) + (f", {flags}" if flags else "")]


def _is_speck(row: dict) -> bool:
    return any(f.get("kind") == "speck" for f in row.get("findings") or [])


def mark_speck(tile, heat: np.ndarray, footprint: np.ndarray):
    """The tile (a TILE x TILE PIL image of ``heat``, the unit's full-size heatmap) with
    the footprint circled and magnified: a ring of SPECK_MARK around the footprint's box
    (at least SPECK_RING_MIN px across, so a one-pixel speck is still seen), and the box's
    neighbourhood (at least 12 px of the render) blown up, pixel for pixel, into a
    SPECK_INSET square in the corner farthest from the speck."""
    from PIL import Image, ImageDraw

    rows = np.flatnonzero(footprint.any(axis=1))
    if not len(rows):
        return tile
    cols = np.flatnonzero(footprint.any(axis=0))
    size = footprint.shape[0]
    scale = TILE / size
    cy = (rows[0] + rows[-1] + 1) / 2 * scale
    cx = (cols[0] + cols[-1] + 1) / 2 * scale
    radius = max(SPECK_RING_MIN, (max(rows[-1] - rows[0], cols[-1] - cols[0]) + 1) * scale / 2 + 3)
    out = tile.copy()
    draw = ImageDraw.Draw(out)
    draw.ellipse([cx - radius, cy - radius, cx + radius, cy + radius], outline=SPECK_MARK,
                 width=2)
    # the neighbourhood, square, at least 12 px of the render, clipped to the canvas
    side = max(12, rows[-1] - rows[0] + 7, cols[-1] - cols[0] + 7)
    top = int(min(max(0, (rows[0] + rows[-1]) // 2 - side // 2), max(0, size - side)))
    left = int(min(max(0, (cols[0] + cols[-1]) // 2 - side // 2), max(0, footprint.shape[1] - side)))
    crop = Image.fromarray(heat[top:top + side, left:left + side])
    inset = crop.resize((SPECK_INSET, SPECK_INSET), Image.Resampling.NEAREST)
    ix = 1 if cx > TILE / 2 else TILE - SPECK_INSET - 1
    iy = 1 if cy > TILE / 2 else TILE - SPECK_INSET - 1
    out.paste(inset, (ix, iy))
    draw.rectangle([ix - 1, iy - 1, ix + SPECK_INSET, iy + SPECK_INSET], outline=SPECK_MARK)
    return out


def _legend(draw, x: int, y: int, font, specks: bool = False) -> None:
    """Label colours by verdict, then the heat scale."""
    for verdict in ("harmful", "helpful", "neutral"):
        draw.rectangle([x, y + 2, x + 10, y + 12], fill=VERDICT_COLORS[verdict])
        draw.text((x + 14, y), verdict, fill=VERDICT_COLORS[verdict], font=font)
        x += 24 + int(draw.textlength(verdict, font=font))
    x += 12
    draw.text((x, y), "footprint: no change", fill=(60, 60, 60), font=font)
    x += 6 + int(draw.textlength("footprint: no change", font=font))
    for k in range(120):
        draw.line([x + k, y + 2, x + k, y + 12], fill=tuple(int(c) for c in INFERNO[k * 256 // 120]))
    draw.text((x + 126, y), "the unit's strongest change (each tile scaled to its own peak)",
              fill=(60, 60, 60), font=font)
    if not specks:
        return
    x += 126 + int(draw.textlength("the unit's strongest change (each tile scaled to its own "
                                   "peak)", font=font)) + 16
    draw.ellipse([x, y + 1, x + 11, y + 12], outline=SPECK_MARK, width=2)
    draw.text((x + 16, y), "speck (magnified in a corner)", fill=SPECK_MARK, font=font)


def contact_sheet(run, path: str | Path, max_units: int = 120) -> str:
    """The full render and up to ``max_units`` footprints in sheet_order (units with no
    visible effect collapsed into one tile), under a title band with a legend; returns a
    note saying what the sheet shows (and what it leaves out)."""
    from PIL import Image, ImageDraw

    units = run.result["units"]
    tiles, shown = sheet_tiles(units, max_units)
    n = len(tiles) + 1
    cols = min(8, n)
    grid_rows = math.ceil(n / cols)
    font, title_font = _font(11), _font(14)
    line_h = 14
    cell_w, cell_h = TILE + PAD, TILE + 4 + LABEL_LINES * line_h + PAD

    name = Path(run.result["file"]).name
    title = [f"{name}: footprints ({run.result['backbone']} backbone), harmful and flagged "
             "first; label colour = verdict"]
    visible_units = sum(1 for u in units if u.get("visible", True))
    if shown < len(units):
        title.append(f"showing {shown} of {len(units)} units; every unit has its own "
                     "unit-NNNN.png")
    header_h = PAD + 20 * len(title) + 22 + PAD
    specks = any(isinstance(t, dict) and _is_speck(t) for t in tiles)
    # the legend's speck entry needs room of its own
    width = max(cols * cell_w + PAD, 980 if specks else 720)
    sheet = Image.new("RGB", (width, header_h + grid_rows * cell_h + PAD), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    y = PAD
    for line in title:
        draw.text((PAD, y), _fit(draw, line, title_font, width - 2 * PAD), fill=(0, 0, 0),
                  font=title_font)
        y += 20
    _legend(draw, PAD, y + 2, font, specks)

    full = run.loo.full
    base = dimmed(full)
    small = Image.fromarray(full).resize((TILE, TILE), Image.Resampling.BILINEAR)

    def place(k: int):
        return PAD + (k % cols) * cell_w, header_h + (k // cols) * cell_h

    x, y = place(0)
    sheet.paste(small, (x, y))
    draw.text((x, y + TILE + 4), "full render", fill=(0, 0, 0), font=font)
    for k, tile in enumerate(tiles, start=1):
        x, y = place(k)
        if isinstance(tile, list):      # every unit with no visible effect
            draw.rectangle([x, y, x + TILE - 1, y + TILE - 1], outline=(170, 170, 170))
            names = [describe_unit(r) for r in tile]
            body = names[:9] if len(names) <= 9 else names[:8] + [f"+{len(names) - 8} more"]
            for j, text in enumerate(body):
                draw.text((x + 6, y + 6 + j * line_h), _fit(draw, text, font, TILE - 12),
                          fill=(90, 90, 90), font=font)
            lines = [f"{len(tile)} unit{'s' if len(tile) != 1 else ''} with no",
                     "visible effect (no pixel", "changes by more than 12/255)"]
            color: tuple[int, int, int] | str = (90, 90, 90)
        else:
            fp = run.footprint(tile["index"])
            heat = heatmap_rgb(full, fp, base)
            img = Image.fromarray(heat).resize((TILE, TILE), Image.Resampling.BILINEAR)
            if _is_speck(tile):
                img = mark_speck(img, heat, fp)
            sheet.paste(img, (x, y))
            color = VERDICT_COLORS[tile["verdict"]]
            draw.rectangle([x - 1, y - 1, x + TILE, y + TILE], outline=color)
            lines = tile_lines(tile)
        for j, text in enumerate(lines):
            draw.text((x, y + TILE + 4 + j * line_h), _fit(draw, text, font, TILE),
                      fill=color, font=font)
    sheet.save(path, compress_level=1)
    invisible = len(units) - visible_units
    collapsed = (f"; {invisible} with no visible effect share one tile" if invisible else "")
    if shown < len(units):
        return (f"the contact sheet shows {shown} of {len(units)} units (harmful and "
                f"flagged first, then by |delta|){collapsed}; every unit has its own "
                "unit-NNNN.png")
    return f"the contact sheet shows all {len(units)} units, harmful and flagged first{collapsed}"
