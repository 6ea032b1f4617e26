"""The embedded, weight-free backbone: SSIM between the render and a reference image.

Structural similarity (Wang et al. 2004) with an 11x11-ish Gaussian window (sigma 1.5),
averaged over the R, G and B channels. Deterministic and cheap. It cannot read text, so a
text reference is refused; with no reference image the caller falls back to
self-analysis (reference = the full render).

Leave-one-out images differ from the full render only inside a box, and SSIM is local,
so ``similarity_patched`` recomputes the SSIM map only around each box: the mean over the
image is the full map's sum with that neighbourhood swapped out. Same numbers as scoring
whole images (tested), at a fraction of the cost.

The blur is numpy, in float32 (importing scipy.ndimage took longer than scoring a small
file, and scipy's float64 blur is 2x slower here): SSIM values agree with a float64
computation to about 1e-5, deltas to 0.1% of their size (tests/plugins/test_pixel_backbone.py).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from svgloo.engine.rendering.composite import diff_box, patched_crop
from svgloo.engine.protocols import EarlierScoring, Reference

SIGMA = 1.5
TRUNCATE = 3.5
RADIUS = int(TRUNCATE * SIGMA + 0.5)  # scipy.ndimage's kernel radius for these settings
C1 = (0.01 * 255) ** 2
C2 = (0.03 * 255) ** 2
# Verdict thresholds on SSIM deltas (CLIP's are +/-0.005). HARMFUL is calibrated by
# `svgloo bench artifacts` with the degraded reference on 31 corpus files and checked on
# 31 others: held-out F1 0.818 for "delta < t" vs 0.631 at -0.005 (docs/validation.md,
# "Threshold calibration"). HELPFUL is its mirror image, not calibrated.
HARMFUL_THRESHOLD = -0.0008
HELPFUL_THRESHOLD = 0.0008


def _gaussian_weights() -> np.ndarray:
    x = np.arange(-RADIUS, RADIUS + 1, dtype=np.float64)
    w = np.exp(-0.5 / (SIGMA * SIGMA) * x * x)
    return (w / w.sum()).astype(np.float32)


_WEIGHTS = _gaussian_weights()


def _correlate_valid(a: np.ndarray, axis: int) -> np.ndarray:
    """scipy.ndimage.gaussian_filter's kernel along ``axis`` where it fits (the output is
    2 * RADIUS shorter), summed in float32 as centre + pairs. The array is sliced along
    ``axis`` in place (no axis moved to the front): every pass reads and writes memory in
    order, and the result is contiguous."""
    n = a.shape[axis] - 2 * RADIUS
    head = (slice(None),) * (axis % a.ndim)

    def shifted(lo: int) -> np.ndarray:
        return a[head + (slice(lo, lo + n),)]

    return _weighted_taps(shifted)


def _weighted_taps(shifted: Callable[[int], np.ndarray],
                   out: np.ndarray | None = None) -> np.ndarray:
    """The kernel's sum over ``shifted(lo)`` (the input's view starting at tap ``lo``), in
    float32 as centre + pairs, into ``out`` when given."""
    acc = np.multiply(shifted(RADIUS), _WEIGHTS[RADIUS], out=out)
    pair = np.empty_like(acc)
    for j in range(1, RADIUS + 1):
        np.add(shifted(RADIUS + j), shifted(RADIUS - j), out=pair)
        pair *= _WEIGHTS[RADIUS + j]
        acc += pair
    return acc


# Blurs and the SSIM arithmetic run band of rows by band of rows, each band's planes
# about this many bytes: a band's dozen passes then stay in the CPU's cache instead of
# streaming whole images through memory (1.7x faster at 384 px). Every value is computed
# by the same operations in the same order as over the whole image: the same bits.
# 512 KiB (was 256): a 9-plane band of a 384 px window is then 36 rows, not 18, and each
# band's 2 * RADIUS rows read twice and its ~70 numpy calls are spread over twice the
# pixels: the whole-image blur 10.1 -> 7.9 ms, the scoring of 41 tuning files' images
# 2.06 -> 1.89 s (median of 3; docs/batch.md). Still within a 512 KiB-1 MiB L2 cache.
BAND_BYTES = 1 << 19


def _bands(rows: int, planes: int, width: int):
    """(first, end) row ranges of bands covering ``rows`` output rows."""
    step = max(8, BAND_BYTES // (4 * planes * max(1, width)))
    for r0 in range(0, rows, step):
        yield r0, min(rows, r0 + step)


def _correlate_valid_rows(a: np.ndarray) -> np.ndarray:
    """``_correlate_valid(a, 2)`` of a C-contiguous array, over the array flattened: each
    pass is then one long loop instead of one loop per row of a few dozen values (1.4-2.1x
    faster). The 2 * RADIUS values of a row whose taps reach into the next row are computed
    and dropped; every kept value is the same operations on the same inputs: the same
    bits (tests/plugins/test_pixel_backbone.py)."""
    width = a.shape[-1]
    if a.size == 0:
        return np.empty(a.shape[:-1] + (width - 2 * RADIUS,), np.float32)
    flat = a.reshape(-1)
    m = flat.size - 2 * RADIUS  # outputs whose taps all lie inside the flat array

    def shifted(lo: int) -> np.ndarray:
        return flat[lo:lo + m]

    out = np.empty(flat.size, np.float32)
    _weighted_taps(shifted, out=out[:m])
    # row r's valid outputs start at r * width (its first tap is its own first value)
    return np.ascontiguousarray(out.reshape(a.shape)[..., :width - 2 * RADIUS])


def _blur_band(a: np.ndarray) -> np.ndarray:
    return _correlate_valid_rows(_correlate_valid(a, 1))


def _blur_valid(a: np.ndarray) -> np.ndarray:
    """Blur of the two spatial axes of a (C, H, W) array (channels stay separate),
    2 * RADIUS smaller in each."""
    a = a.astype(np.float32, copy=False)
    c, h, w = a.shape
    out = np.empty((c, h - 2 * RADIUS, w - 2 * RADIUS), np.float32)
    for r0, r1 in _bands(h - 2 * RADIUS, c, w):
        out[:, r0:r1] = _blur_band(a[:, r0:r1 + 2 * RADIUS])
    return out


def _pad(a: np.ndarray, top: int = RADIUS, bottom: int = RADIUS, left: int = RADIUS,
         right: int = RADIUS) -> np.ndarray:
    # scipy's mode "reflect" (d c b a | a b c d | d c b a) is numpy's "symmetric"
    return np.pad(a, ((0, 0), (top, bottom), (left, right)), mode="symmetric")


OFFSET = 128.0  # values are stored centred on 0 (see _planes)


def _planes(image: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(H, W, 3) uint8 -> (3, H, W) float32 minus OFFSET, into ``out`` when given (a view
    of a window's planes: a patch's pixels written in place). Channel planes keep every
    operation below on contiguous memory; centring keeps the variances' float32 sums
    accurate (E[x^2] - E[x]^2 of values near 255 loses 4x more bits than near 128)."""
    if out is None:
        out = np.empty((image.shape[2],) + image.shape[:2], np.float32)
    return np.subtract(image.transpose(2, 0, 1), OFFSET, out=out, dtype=np.float32)


TILE = 64  # the reference's local statistics are computed in tiles of this many pixels


class _Prepared:
    """The reference, and its local statistics (means, variances), computed tile by tile
    only where an image or patch is scored: a small unit's patch needs a few tiles, not the
    whole image's blur. Each pixel's statistics depend only on the reference within RADIUS
    of it, computed by the same operations in the same order whichever tile asks, so the
    values are bit for bit those of one blur of the whole image."""

    def __init__(self, image: np.ndarray):
        self.image = image  # RGB uint8: an image equal to it has an SSIM map of 1
        self.y_padded = _pad(_planes(image))  # planes (see _planes) padded by RADIUS
        h, w = image.shape[:2]
        self.mu_y = np.empty((3, h, w), np.float32)    # local means, centred like planes
        self.den_y1 = np.empty((3, h, w), np.float32)  # mu_y^2 + C1 (not centred)
        self.den_y2 = np.empty((3, h, w), np.float32)  # sigma_yy + C2
        self._ready = np.zeros((-(-h // TILE), -(-w // TILE)), bool)
        # The SSIM map of the last whole image scored (other than the reference): the
        # engine scores the full render and then its patches, which start from that map.
        self.last_map: tuple[bytes, np.ndarray] | None = None
        # Per patch scored by similarity_patched: (patch, sum of the full render's map
        # and of the patched map around it), for a later scoring of an edited document.
        self.patch_sums: list[_TileSums | None] = []

    def adopt(self, other: "_Prepared") -> None:
        """Take the statistics another preparation of an equal reference computed."""
        self.y_padded, self.mu_y, self.den_y1, self.den_y2 = (
            other.y_padded, other.mu_y, other.den_y1, other.den_y2)
        self._ready = other._ready
        self.last_map = other.last_map

    def adopt_outside(self, other: "_Prepared", box: tuple) -> None:
        """Take the statistics another preparation computed, for a reference that differs
        from this one only inside ``box`` (y0, y1, x0, x1): those of the tiles farther than
        RADIUS from it, which read only equal pixels (a tile's numbers do not depend on
        which tile asked, see the class doc). Copies: the other keeps its own."""
        if self._ready.any():
            return  # started already: its own tiles are not to be mixed with the other's
        h, w = self.mu_y.shape[1:]
        y0, y1 = max(0, box[0] - RADIUS), min(h, box[1] + RADIUS)
        x0, x1 = max(0, box[2] - RADIUS), min(w, box[3] + RADIUS)
        ready = other._ready.copy()
        ready[y0 // TILE:-(-y1 // TILE), x0 // TILE:-(-x1 // TILE)] = False
        if not ready.any():
            return
        for mine, theirs in ((self.mu_y, other.mu_y), (self.den_y1, other.den_y1),
                             (self.den_y2, other.den_y2)):
            np.copyto(mine, theirs)
        self._ready = ready

    def ensure(self, y0: int, y1: int, x0: int, x1: int) -> None:
        """Compute the statistics of every tile meeting rows y0:y1, columns x0:x1 that is
        not computed yet (as one rectangle of tiles: one blur)."""
        ty0, ty1, tx0, tx1 = y0 // TILE, -(-y1 // TILE), x0 // TILE, -(-x1 // TILE)
        missing = ~self._ready[ty0:ty1, tx0:tx1]
        if not missing.any():
            return
        rows, cols = np.flatnonzero(missing.any(axis=1)), np.flatnonzero(missing.any(axis=0))
        ty0, ty1, tx0, tx1 = ty0 + rows[0], ty0 + rows[-1] + 1, tx0 + cols[0], tx0 + cols[-1] + 1
        h, w = self.mu_y.shape[1:]
        ry0, ry1, rx0, rx1 = ty0 * TILE, min(h, ty1 * TILE), tx0 * TILE, min(w, tx1 * TILE)
        width = rx1 - rx0 + 2 * RADIUS
        for r0, r1 in _bands(ry1 - ry0, 6, width):
            y = self.y_padded[:, ry0 + r0:ry0 + r1 + 2 * RADIUS, rx0:rx1 + 2 * RADIUS]
            if _grey(y):
                y = y[:1]  # R = G = B: each channel's statistics are the same numbers
            n = len(y)
            planes = np.empty((2 * n,) + y.shape[1:], np.float32)  # y and y * y at once
            planes[:n] = y
            np.multiply(y, y, out=planes[n:])
            b = _blur_band(planes)
            mu_y, yy = b[:n], b[n:]
            band = slice(ry0 + r0, ry0 + r1)
            self.mu_y[:, band, rx0:rx1] = mu_y
            self.den_y1[:, band, rx0:rx1] = (mu_y + OFFSET) ** 2 + C1
            self.den_y2[:, band, rx0:rx1] = yy - mu_y * mu_y + C2
        self._ready[ty0:ty1, tx0:tx1] = True

    def is_reference(self, image: np.ndarray) -> bool:
        return image is self.image or (image.shape == self.image.shape
                                       and np.array_equal(image, self.image))

    def map_of(self, image: np.ndarray) -> np.ndarray:
        if self.is_reference(image):
            # SSIM of an image with itself is 1 everywhere, by definition (self-analysis
            # scores the full render against itself): no blur needed.
            return np.ones(image.shape[:2], np.float32)
        key = hashlib.blake2b(image.tobytes(), digest_size=16).digest()
        key += repr(image.shape).encode()
        if self.last_map is None or self.last_map[0] != key:
            self.ensure(0, image.shape[0], 0, image.shape[1])
            ssim = _ssim_map(_pad(_planes(image)), self.y_padded, self,
                             (slice(None), slice(None)))
            self.last_map = (key, ssim)
        return self.last_map[1]


def _ssim_map(x_padded: np.ndarray, y_padded: np.ndarray, prepared: _Prepared,
              region: tuple[slice, slice]) -> np.ndarray:
    """Per-pixel SSIM (mean over R, G, B) inside ``region`` of the image, given x and y
    padded by RADIUS around it (reflected where the region meets the image border)."""
    index = (slice(None), *region)
    return _ssim_maps(x_padded, y_padded, prepared.mu_y[index], prepared.den_y1[index],
                      prepared.den_y2[index])[0]


def _grey(planes: np.ndarray) -> bool:
    """Whether the (3, H, W) planes are one image three times (R = G = B everywhere)."""
    return bool(np.array_equal(planes[0], planes[1]) and np.array_equal(planes[1], planes[2]))


def _ssim_maps(x_padded: np.ndarray, y_padded: np.ndarray, mu_y_all: np.ndarray,
               den_y1_all: np.ndarray, den_y2_all: np.ndarray, channels: int = 3) -> np.ndarray:
    """SSIM maps of k windows at once: x and y (3k, H + 2 RADIUS, W + 2 RADIUS), the
    reference's statistics (3k, H, W), R, G, B of each window in turn -> (k, H, W). Every
    value is computed by the same operations in the same order as for one window alone:
    the blurs work plane by plane, the rest element by element, and each window's mean
    over its three channels is its own.

    ``channels`` 1: windows whose x and y have R = G = B (``_grey``), given as one plane
    each (k planes, not 3k). Every channel's SSIM map is then the same numbers, computed
    once, and their mean is formed as numpy's mean over the channel axis forms it (the
    three added in turn, then divided by 3): the same bits as three channels, a third of
    the work (black-and-white icons: feather, fontawesome, most of simple-icons)."""
    k = x_padded.shape[0] // channels
    c = channels * k
    out = np.empty((k,) + mu_y_all.shape[1:], np.float32)
    for r0, r1 in _bands(out.shape[1], 3 * c, x_padded.shape[2]):
        x = x_padded[:, r0:r1 + 2 * RADIUS]
        planes = np.empty((3 * c,) + x.shape[1:], np.float32)  # x, x*x, x*y blurred at once
        planes[:c] = x
        np.multiply(x, x, out=planes[c:2 * c])
        np.multiply(x, y_padded[:, r0:r1 + 2 * RADIUS], out=planes[2 * c:])
        b = _blur_band(planes)
        mu_x, xx, xy = b[:c], b[c:2 * c], b[2 * c:]  # centred
        mu_y = mu_y_all[:, r0:r1]
        num = mu_x * mu_y
        np.subtract(xy, num, out=num)
        num *= 2
        num += C2                           # 2 sigma_xy + C2
        den = mu_x * mu_x
        np.subtract(xx, den, out=den)
        den += den_y2_all[:, r0:r1]         # sigma_xx + sigma_yy + C2
        mu_x += OFFSET                      # the means themselves, not centred
        lum = mu_x * (mu_y + OFFSET)
        lum *= 2
        lum += C1
        num *= lum                          # times 2 mu_x mu_y + C1
        np.square(mu_x, out=mu_x)
        mu_x += den_y1_all[:, r0:r1]        # mu_x^2 + mu_y^2 + C1
        den *= mu_x
        num /= den
        if channels == 3:
            out[:, r0:r1] = num.reshape((k, 3) + num.shape[1:]).mean(axis=1)
        else:
            mean = num + num
            mean += num
            mean /= 3
            out[:, r0:r1] = mean
    return out


class PixelBackbone:
    name = "pixel"
    description = "pixel SSIM (embedded, no weights)"
    takes_text = False
    helpful_threshold = HELPFUL_THRESHOLD
    harmful_threshold = HARMFUL_THRESHOLD

    def __init__(self, device: str | None = None, weights: str | None = None):
        self.device = "cpu"

    def prepare(self, reference: Reference) -> _Prepared:
        if reference.image is None:
            raise ValueError("the pixel backbone needs a reference image (it cannot read text)")
        return _Prepared(reference.image)

    def similarity(self, images: np.ndarray, prepared: _Prepared) -> np.ndarray:
        out = np.empty(len(images), np.float64)
        for i, image in enumerate(images):
            out[i] = float(prepared.map_of(image).mean())
        return out

    def similarity_patched(self, full: np.ndarray, patches, prepared: _Prepared,
                           on_done: Callable[[int], object] | None = None,
                           previous: EarlierScoring | None = None) -> np.ndarray:
        """Similarity of each leave-one-out image given as a patch on ``full`` (objects with
        ``box`` = (y0, y1, x0, x1) or None, and ``pixels``); ``on_done(1)`` after each.

        A patch's image differs from the full render only inside its box, so its SSIM map
        differs from the full render's only within RADIUS of the box (region d): the mean is
        the full map's sum with d's sum swapped for the patched map's. The patched map's sum
        over d is kept per SUM_TILE tile of the canvas (``_TileSums``).

        ``previous``: an earlier scoring of the same document (protocols.EarlierScoring).
        The patched map at a pixel reads the leave-one-out image and the reference within
        RADIUS of it; where neither changed within RADIUS of a tile, the tile's sum is the
        same number, and only the other tiles are computed again (``_reusable_sums``)."""
        old = _reusable_sums(full, patches, prepared, previous)
        x_full = _planes(full)
        full_map = prepared.map_of(full)
        total = float(full_map.sum(dtype=np.float64))
        h, w = full_map.shape
        npix = h * w
        out = np.empty(len(patches), np.float64)
        sums: list[_TileSums | None] = [None] * len(patches)
        for chunk in range(0, len(patches), BATCH_PATCHES):
            todo = {}  # patch -> (its region, kept sums, the rectangle to compute)
            for i in range(chunk, min(len(patches), chunk + BATCH_PATCHES)):
                if patches[i].box is None:
                    out[i] = total / npix
                    continue
                region = _grown(patches[i].box, RADIUS, h, w)
                kept, stale = old[i] if old[i] is not None else (None, region)
                todo[i] = (region, kept, stale)
            maps = _patched_maps(x_full, patches, prepared,
                                 {i: at for i, (_, _, at) in todo.items() if at is not None})
            for i, (region, kept, stale) in todo.items():
                grid = None if kept is None else kept.grid
                if stale is not None:
                    grid = _tile_grid(maps[i], stale) if grid is None else \
                        _replaced(grid, region, _tile_grid(maps[i], stale), stale)
                assert grid is not None  # kept's, or computed: stale is the region without it
                dy0, dy1, dx0, dx1 = region
                was = float(full_map[dy0:dy1, dx0:dx1].sum(dtype=np.float64))
                sums[i] = _TileSums(patches[i], region, grid)
                out[i] = (total - was + math.fsum(grid.ravel().tolist())) / npix
            if on_done is not None:
                on_done(min(len(patches), chunk + BATCH_PATCHES) - chunk)
        prepared.patch_sums = sums
        return out


BATCH_PATCHES = 64      # patches scored per step (progress is reported per step)
BATCH_PIXELS = 96 * 96  # windows up to this size are computed together when alike


SUM_TILE = 32  # px: a patched map's sum is kept per tile of the canvas this size


@dataclass
class _TileSums:
    """A patch's SSIM map summed over its region d (box grown by RADIUS), per tile of the
    canvas: ``grid[r, c]`` is the sum over tile (region[0] // SUM_TILE + r,
    region[2] // SUM_TILE + c)'s part of d (``_tile_grid``). The region's sum is their
    ``math.fsum``: correctly rounded, so the same whichever tiles were computed when - a
    re-scoring gives a cold scoring's very number."""

    patch: object
    region: tuple
    grid: np.ndarray


def _grown(box: tuple, by: int, h: int, w: int) -> tuple:
    y0, y1, x0, x1 = box
    return max(0, y0 - by), min(h, y1 + by), max(0, x0 - by), min(w, x1 + by)


def _snapped(rect: tuple, region: tuple) -> tuple:
    """``rect`` grown out to the tile grid, inside ``region``."""
    y0, y1, x0, x1 = rect
    t = SUM_TILE
    return (max(region[0], y0 // t * t), min(region[1], -(-y1 // t) * t),
            max(region[2], x0 // t * t), min(region[3], -(-x1 // t) * t))


def _tile_grid(local: np.ndarray, at: tuple) -> np.ndarray:
    """The sums of ``local`` (the map over the rectangle ``at``) over each tile's part of
    it, in float64: each row's part summed (one segment of a contiguous row), then those
    row sums added in row order. The same part's values give the same number wherever
    the rectangle lies (tests/plugins/test_pixel_backbone.py)."""
    y0, y1, x0, x1 = at
    first_row, first_col = -(-(y0 + 1) // SUM_TILE) * SUM_TILE, -(-(x0 + 1) // SUM_TILE) * SUM_TILE
    row_starts = [0] + [r - y0 for r in range(first_row, y1, SUM_TILE)]
    col_starts = [0] + [c - x0 for c in range(first_col, x1, SUM_TILE)]
    rows = np.add.reduceat(local.astype(np.float64), col_starts, axis=1)
    return np.add.reduceat(rows, row_starts, axis=0)


def _replaced(grid: np.ndarray, region: tuple, part: np.ndarray, at: tuple) -> np.ndarray:
    """A copy of ``grid`` (the tiles of ``region``) with the tiles of ``at`` (snapped to
    the tile grid inside the region) from ``part``."""
    out = grid.copy()
    r, c = at[0] // SUM_TILE - region[0] // SUM_TILE, at[2] // SUM_TILE - region[2] // SUM_TILE
    out[r:r + part.shape[0], c:c + part.shape[1]] = part
    return out


def _patched_maps(x_full: np.ndarray, patches, prepared: _Prepared, wanted: dict) -> dict:
    """patch index -> the SSIM map of its leave-one-out image (the full render's planes
    with the patch pasted) over the rectangle ``wanted[i]`` of the canvas. Small windows
    of one shape are computed together (``_ssim_maps``: one pass of numpy calls for many
    windows of a few thousand pixels, whose cost is the calls, not the pixels); each value
    is computed from the input within RADIUS of it (reflected past the image's border
    exactly as the whole image is), by the same operations whatever window asks: the
    same bits."""
    groups: dict = {}
    for i, (y0, y1, x0, x1) in wanted.items():
        shape = (y1 - y0, x1 - x0)
        key = shape if shape[0] * shape[1] <= BATCH_PIXELS else ("alone", i)
        groups.setdefault(key, []).append(i)
    out: dict = {}
    for members in groups.values():
        inputs = [_window_inputs(x_full, patches[i], prepared, wanted[i]) for i in members]
        grey = [_grey(x) and _grey(y) for x, y, *_ in inputs]
        for channels in (1, 3):  # windows with R = G = B in x and y: one plane each
            some = [j for j in range(len(members)) if grey[j] == (channels == 1)]
            if not some:
                continue
            parts = [tuple(part[:channels] for part in inputs[j]) for j in some]
            x, y, mu_y, den_y1, den_y2 = (np.concatenate(part) if len(parts) > 1 else part[0]
                                          for part in zip(*parts))
            maps = _ssim_maps(x, y, mu_y, den_y1, den_y2, channels=channels)
            out.update(zip((members[j] for j in some), maps))
    return out


def _window_inputs(x_full: np.ndarray, patch, prepared: _Prepared, at: tuple) -> tuple:
    """(x and y padded by RADIUS around the rectangle ``at``, the reference's mu_y, den_y1
    and den_y2 there): what _ssim_maps reads for one window."""
    h, w = x_full.shape[1:]
    dy0, dy1, dx0, dx1 = at
    ey0, ey1, ex0, ex1 = _grown(at, RADIUS, h, w)
    crop = x_full[:, ey0:ey1, ex0:ex1].copy()
    y0, y1, x0, x1 = patch.box
    iy0, iy1, ix0, ix1 = max(y0, ey0), min(y1, ey1), max(x0, ex0), min(x1, ex1)
    if iy0 < iy1 and ix0 < ix1:  # the patch's planes, made in place
        _planes(patch.pixels[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0],
                out=crop[:, iy0 - ey0:iy1 - ey0, ix0 - ex0:ix1 - ex0])
    widths = (ey0 - (dy0 - RADIUS), dy1 + RADIUS - ey1,
              ex0 - (dx0 - RADIUS), dx1 + RADIUS - ex1)
    if any(widths):  # only where the rectangle meets the image's border
        crop = _pad(crop, *widths)
    prepared.ensure(dy0, dy1, dx0, dx1)
    # y_padded is shifted by RADIUS: image row r is its row r + RADIUS
    window = (slice(None), slice(dy0, dy1), slice(dx0, dx1))
    return (crop, prepared.y_padded[:, dy0:dy1 + 2 * RADIUS, dx0:dx1 + 2 * RADIUS],
            prepared.mu_y[window], prepared.den_y1[window], prepared.den_y2[window])


def _image_change(old_full: np.ndarray, old_patch, full: np.ndarray, patch,
                  full_changed: tuple | None) -> list:
    """Boxes holding every pixel where the leave-one-out image of ``patch`` on ``full``
    differs from that of ``old_patch`` on ``old_full`` (``full_changed``: where the full
    renders differ). Outside both patches' boxes the images are the full renders."""
    boxes = [full_changed] if full_changed is not None else []
    if old_patch is patch:
        return boxes  # inside its box both images are its pixels
    y0, y1 = min(old_patch.box[0], patch.box[0]), max(old_patch.box[1], patch.box[1])
    x0, x1 = min(old_patch.box[2], patch.box[2]), max(old_patch.box[3], patch.box[3])
    a = patched_crop(old_full, old_patch.box, old_patch.pixels, (y0, y1, x0, x1))
    b = patched_crop(full, patch.box, patch.pixels, (y0, y1, x0, x1))
    inside = diff_box(a, b)
    if inside is not None:
        boxes.append((y0 + inside[0], y0 + inside[1], x0 + inside[2], x0 + inside[3]))
    return boxes


def _reusable_sums(full: np.ndarray, patches, prepared: _Prepared,
                   previous: EarlierScoring | None) -> list:
    """Per patch, (its _TileSums from ``previous``, the rectangle of tiles to compute again
    or None) where the earlier sums can serve, else None; adopts the earlier preparation's
    statistics when the reference is the same image (or, in self-analysis, outside where
    it changed).

    A tile's sum holds when neither the leave-one-out image nor the reference changed
    within RADIUS of it (and the patch's region, hence each tile's part of it, is the
    same)."""
    none = [None] * len(patches)
    if previous is None:
        return none
    old_full, old_prepared = previous.full, previous.prepared
    if (not isinstance(old_prepared, _Prepared) or old_full.shape != full.shape
            or old_prepared.image.shape != prepared.image.shape
            or len(old_prepared.patch_sums) != len(patches)):
        return none
    full_changed = diff_box(old_full, full)
    if prepared.image is full and old_prepared.image is old_full:
        reference_changed = full_changed  # self-analysis: the reference is the render
        if full_changed is not None and old_prepared is not prepared:
            prepared.adopt_outside(old_prepared, full_changed)
    elif np.array_equal(old_prepared.image, prepared.image):
        reference_changed = None
        if old_prepared is not prepared:
            prepared.adopt(old_prepared)
    else:
        reference_changed = diff_box(old_prepared.image, prepared.image)
    h, w = full.shape[:2]
    out: list[tuple | None] = list(none)
    for i, (patch, kept) in enumerate(zip(patches, old_prepared.patch_sums)):
        if kept is None or patch.box is None:
            continue
        region = _grown(patch.box, RADIUS, h, w)
        if region != kept.region:
            continue  # the tiles' parts of the region differ: computed again, all of them
        changes = _image_change(old_full, kept.patch, full, patch, full_changed)
        if reference_changed is not None:
            changes.append(reference_changed)
        stale = None
        for box in changes:
            y0, y1, x0, x1 = _grown(box, RADIUS, h, w)
            y0, y1 = max(y0, region[0]), min(y1, region[1])
            x0, x1 = max(x0, region[2]), min(x1, region[3])
            if y0 < y1 and x0 < x1:
                stale = (y0, y1, x0, x1) if stale is None else (
                    min(stale[0], y0), max(stale[1], y1), min(stale[2], x0), max(stale[3], x1))
        out[i] = (kept, None if stale is None else _snapped(stale, region))
    return out
