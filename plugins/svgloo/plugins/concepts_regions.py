"""Region concepts: the render segmented into its main colour regions (no weights).

1. Background: near-white pixels connected to the canvas border (the render is composited
   on white). Everything else - including white areas enclosed by the drawing - is
   foreground. When the engine passes the ``drawn`` mask (pixels some element visibly
   changes), the foreground is limited to it: a hole showing the white ground is not a
   region.
2. The foreground's colours are quantised to at most 8: exact flat fills first, median
   cut for gradients (``quantize``).
3. Each quantised colour's connected components (``scipy.ndimage.label``, 8-connected)
   are regions; regions smaller than 0.2 % of the canvas are dropped; the 8 largest are
   kept, in reading order (top to bottom, left to right).
4. Each is named by its most frequent colour (``color_name``: the nearest of a table of
   named colours in OKLab) and the position of its centre ("brown region, top left"); its mask is
   the heatmap the ``regions`` grounder returns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from svgloo.engine.protocols import Concept

MAX_REGIONS = 8
MIN_AREA_FRACTION = 0.002
WHITE_TOLERANCE = 12   # /255: a background pixel is at most this far from white


# Named reference colours (sRGB). A colour gets the name of the nearest one in OKLab,
# a space where equal distances look about equally different, so "brown" is not
# decided by a hue cut-off that calls dark orange brown and light brown orange.
# Tested against the CSS colours they are named after in tests/plugins/test_concepts_regions.py.
NAMED_COLORS = {
    "black": (0, 0, 0), "dark grey": (64, 64, 64), "grey": (128, 128, 128),
    "light grey": (192, 192, 192), "white": (255, 255, 255),
    "red": (220, 20, 30), "dark red": (140, 20, 20), "maroon": (128, 0, 0),
    "pink": (255, 182, 193), "mauve": (165, 90, 130), "hot pink": (255, 105, 180), "magenta": (255, 0, 255),
    "purple": (128, 0, 128), "violet": (210, 120, 230), "lavender": (210, 200, 240),
    "orange": (255, 140, 0), "peach": (255, 200, 160), "brown": (139, 69, 19),
    "dark brown": (92, 60, 40), "light brown": (205, 140, 80), "tan": (210, 180, 140),
    "beige": (245, 240, 215), "gold": (255, 200, 0), "yellow": (255, 255, 0),
    "olive": (128, 128, 0), "green": (0, 160, 0), "dark green": (0, 90, 0),
    "light green": (144, 238, 144), "teal": (0, 128, 128), "cyan": (0, 255, 255),
    "sky blue": (135, 206, 235), "steel blue": (70, 130, 180), "blue": (30, 90, 220),
    "dark blue": (20, 40, 120), "navy": (0, 0, 110),
}


def oklab(rgb) -> np.ndarray:
    """sRGB (0-255, shape (..., 3)) -> OKLab (Bjoern Ottosson's matrices)."""
    c = np.asarray(rgb, np.float64) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    lms = np.cbrt(linear @ np.array([[0.4122214708, 0.5363325363, 0.0514459929],
                                     [0.2119034982, 0.6806995451, 0.1073969566],
                                     [0.0883024619, 0.2817188376, 0.6299787005]]).T)
    return lms @ np.array([[0.2104542553, 0.7936177850, -0.0040720468],
                           [1.9779984951, -2.4285922050, 0.4505937099],
                           [0.0259040371, 0.7827717662, -0.8086757660]]).T


_NAMES = list(NAMED_COLORS)
_NAMED_LAB = oklab(np.array(list(NAMED_COLORS.values())))


def color_name(rgb) -> str:
    """The name of the nearest reference colour in OKLab."""
    d = ((_NAMED_LAB - oklab(np.asarray(rgb, np.float64)[:3])) ** 2).sum(axis=1)
    return _NAMES[int(np.argmin(d))]


def dominant_color(pixels: np.ndarray) -> np.ndarray:
    """The most frequent exact colour of (N, 3) uint8 pixels: a region's fill, not the
    mean of its fill and its anti-aliased edges."""
    packed = (pixels[:, 0].astype(np.int32) << 16) | (pixels[:, 1].astype(np.int32) << 8) \
        | pixels[:, 2].astype(np.int32)
    values, counts = np.unique(packed, return_counts=True)
    v = int(values[np.argmax(counts)])
    return np.array([(v >> 16) & 255, (v >> 8) & 255, v & 255], np.float64)


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
    min_area = max(16, int(min_area_fraction * h * w))
    quant = quantize(pixels, colors, min_area)
    index = np.full((h, w), -1, np.int16)
    index[fg] = quant
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
    return [(mask, dominant_color(rgb[mask])) for _, mask in regions[:max_regions]]


def _pack(pixels: np.ndarray) -> np.ndarray:
    p = pixels.astype(np.int32)
    return (p[:, 0] << 16) | (p[:, 1] << 8) | p[:, 2]


def quantize(pixels: np.ndarray, colors: int, min_count: int) -> np.ndarray:
    """Palette index per (N, 3) uint8 pixel, at most ``2 * colors`` entries.

    Flat fills first: every exact colour covering at least ``min_count`` pixels is an
    entry (most frequent first). Median cut alone merges distinct fills that sit in one
    box of its cut (a brown rail with grey sleepers) and paints the region with their
    average. The pixels not within ``NEAR`` of a flat fill (gradients) get up to
    ``colors`` more entries by median cut. Every pixel takes its nearest entry, so
    anti-aliased edges join the fill they are closest to."""
    from PIL import Image

    values, counts = np.unique(_pack(pixels), return_counts=True)
    order = np.argsort(-counts, kind="stable")[:colors]
    flat = [int(values[i]) for i in order if counts[i] >= min_count]
    palette = np.array([[(v >> 16) & 255, (v >> 8) & 255, v & 255] for v in flat],
                       np.float64).reshape(-1, 3)
    rest = pixels
    if len(palette):
        rest = pixels[_nearest(pixels, palette)[1] > NEAR]
    if len(rest) >= min_count:
        strip = Image.fromarray(np.ascontiguousarray(rest[None, :, :]), "RGB")
        cut = strip.quantize(colors=colors, method=Image.Quantize.MEDIANCUT)
        used = np.unique(np.asarray(cut)[0])
        quantized = cut.getpalette()
        assert quantized is not None  # a quantized image has a palette
        extra = np.array(quantized[:3 * (int(used.max()) + 1)], np.float64)
        palette = np.concatenate([palette, extra.reshape(-1, 3)[used]])
    if not len(palette):
        return np.zeros(len(pixels), np.int16)
    return _nearest(pixels, palette)[0].astype(np.int16)


NEAR = 40.0   # RGB distance within which a pixel belongs to a flat fill (anti-aliasing)


def _nearest(pixels: np.ndarray, palette: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the nearest palette entry, its RGB distance) per pixel, in chunks."""
    index = np.empty(len(pixels), np.int64)
    dist = np.empty(len(pixels), np.float64)
    for s in range(0, len(pixels), 65536):
        d = ((pixels[s:s + 65536, None, :].astype(np.float64) - palette[None]) ** 2).sum(2)
        index[s:s + 65536] = d.argmin(1)
        dist[s:s + 65536] = np.sqrt(d.min(1))
    return index, dist


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
        out: list = []
        used: dict = {}
        for cy, cx, mask, color in placed:
            name = f"{color_name(color)} region, {position_name(cy, cx, h, w)}"
            used[name] = used.get(name, 0) + 1
            if used[name] > 1:
                name = f"{name} ({used[name]})"
            out.append(Concept(name, "regions", (), mask))
        return out
