"""Region concepts: the render segmented into its main colour regions (no weights).

1. Background: near-white pixels connected to the canvas border (the render is composited
   on white). Everything else - including white areas enclosed by the drawing - is
   foreground. When the engine passes the ``drawn`` mask (pixels some element visibly
   changes), the foreground is limited to it: a hole showing the white ground is not a
   region.
2. The foreground's colours are quantised to at most 8 (PIL median cut).
3. Each quantised colour's connected components (``scipy.ndimage.label``, 8-connected)
   are regions; regions smaller than 0.2 % of the canvas are dropped; the 8 largest are
   kept, in reading order (top to bottom, left to right).
4. Each is named by its mean colour and the position of its centre ("dark red region,
   top left"); its mask is the heatmap the ``regions`` grounder returns.
"""

from __future__ import annotations

import colorsys
from typing import Any

import numpy as np

from svgloo.engine.protocols import Concept

MAX_REGIONS = 8
MIN_AREA_FRACTION = 0.002
WHITE_TOLERANCE = 12   # /255: a background pixel is at most this far from white


def color_name(rgb) -> str:
    r, g, b = (float(c) / 255.0 for c in rgb)
    h, l, s = colorsys.rgb_to_hls(r, g, b)
    if s < 0.18 or (max(r, g, b) - min(r, g, b)) < 0.08:
        if l > 0.93:
            return "white"
        if l < 0.12:
            return "black"
        return "light gray" if l > 0.66 else ("dark gray" if l < 0.33 else "gray")
    deg = h * 360.0
    if deg < 15 or deg >= 345:
        base = "red"
    elif deg < 40:
        base = "brown" if l < 0.4 else "orange"
    elif deg < 68:
        base = "yellow" if l >= 0.35 else "olive"
    elif deg < 165:
        base = "green"
    elif deg < 195:
        base = "cyan"
    elif deg < 255:
        base = "blue"
    elif deg < 290:
        base = "purple"
    else:
        base = "pink" if l > 0.6 else "magenta"
    if l < 0.3:
        return f"dark {base}"
    if l > 0.75:
        return f"light {base}"
    return base


def position_name(cy: float, cx: float, h: int, w: int) -> str:
    row = ("top", "middle", "bottom")[min(2, int(3 * cy / max(h, 1)))]
    col = ("left", "centre", "right")[min(2, int(3 * cx / max(w, 1)))]
    if row == "middle" and col == "centre":
        return "centre"
    if row == "middle":
        return col
    if col == "centre":
        return row
    return f"{row} {col}"


def background_mask(rgb: np.ndarray) -> np.ndarray:
    from scipy import ndimage

    near_white = (255 - rgb.astype(np.int16)).max(axis=2) <= WHITE_TOLERANCE
    labels, _ = ndimage.label(near_white)
    border = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    border = border[border > 0]
    return np.isin(labels, border)


def segment_regions(rgb: np.ndarray, max_regions: int = MAX_REGIONS,
                    min_area_fraction: float = MIN_AREA_FRACTION, colors: int = 8,
                    drawn: np.ndarray | None = None):
    """[(mask bool (H, W), mean RGB)] of the main colour regions, largest first.
    ``drawn`` (bool (H, W), optional) restricts the foreground to pixels that some
    element draws, so background showing through a shape's hole is not a region."""
    from PIL import Image
    from scipy import ndimage

    rgb = np.ascontiguousarray(rgb[..., :3], dtype=np.uint8)
    h, w = rgb.shape[:2]
    fg = ~background_mask(rgb)
    if drawn is not None and drawn.shape == fg.shape:
        fg &= drawn
    n_fg = int(fg.sum())
    if n_fg == 0:
        return []
    pixels = rgb[fg]
    strip = Image.fromarray(pixels[None, :, :], "RGB")
    quant = np.asarray(strip.quantize(colors=colors, method=Image.Quantize.MEDIANCUT))[0]
    index = np.full((h, w), -1, np.int16)
    index[fg] = quant
    min_area = max(16, int(min_area_fraction * h * w))
    structure = np.ones((3, 3), bool)
    regions = []
    for c in np.unique(quant):
        labels, n = ndimage.label(index == c, structure=structure)
        if n == 0:
            continue
        sizes = np.bincount(labels.ravel())
        for lab in np.flatnonzero(sizes >= min_area):
            if lab == 0:
                continue
            mask = labels == lab
            regions.append((int(sizes[lab]), mask))
    regions.sort(key=lambda t: -t[0])
    out = []
    for _, mask in regions[:max_regions]:
        out.append((mask, rgb[mask].mean(axis=0)))
    return out


class RegionConceptSource:
    name = "regions"

    def __init__(self, **_: Any):
        pass

    def concepts(self, doc: Any, render_rgb: np.ndarray, options: dict | None = None) -> list[Concept]:
        options = options or {}
        regions = segment_regions(render_rgb, int(options.get("max_regions", MAX_REGIONS)),
                                  drawn=options.get("drawn"))
        h, w = render_rgb.shape[:2]
        placed = []
        for mask, color in regions:
            ys, xs = np.nonzero(mask)
            cy, cx = float(ys.mean()), float(xs.mean())
            placed.append((cy, cx, mask, color))
        placed.sort(key=lambda t: (int(3 * t[0] / h), t[1]))
        out, used = [], {}
        for cy, cx, mask, color in placed:
            name = f"{color_name(color)} region, {position_name(cy, cx, h, w)}"
            used[name] = used.get(name, 0) + 1
            if used[name] > 1:
                name = f"{name} ({used[name]})"
            out.append(Concept(name, "regions", (), mask))
        return out
