"""Weight-free grounders: where each concept is in the render, as a (K, H, W) heatmap.

- ``labels``: a label concept's heatmap is the render of its labelled element(s) alone -
  every other scoring unit removed from the source text, everything else (defs, styles,
  transforms) untouched - with the alpha channel as heat, times (1 - alpha) of the other
  concepts' labelled elements drawn on top of it or nested in it (so eyes over a head are
  "eyes" there, not "head"). Renders go through the engine's worker pool
  (``options["pool"]``).
- ``regions``: a region concept's heatmap is its mask.
- ``masks``: one grayscale image per concept in ``options["masks_dir"]``, named by the
  concept's slug (``red-flower-head.png``; the exact name + ``.png`` also works), resized
  to the render size; white = the concept. A ``scores.json`` beside the images
  (``{"red-flower-head": 0.82, ...}``, keyed by file stem or concept name) gives each
  mask its detection score, and then the paper's rule decides (``mask_accepted``): the
  mask is used when its score is > 0.3 and its area fraction is in [0.005, 0.95], else
  the concept is grounded by CLIPSeg (the grounder fills the dict the caller passes as
  ``options["rejected_masks"]``: concept index -> why). A mask without a score is the
  user's own and is always used. The files in the folder are read bounded and
  non-blocking, and only when they resolve inside it (a FIFO, a link to ``/dev/zero`` or
  out of the folder is an error naming the file, never a hang).
"""

from __future__ import annotations

import io
import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from svgloo.engine.errors import ConfigError, SvglooError
from svgloo.engine.reading.files import read_regular_file
from svgloo.engine.protocols import Concept

MASK_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
SCORES_FILE = "scores.json"
# The paper's grounding rule: a detector's mask is trusted above this score and inside
# this range of area fractions (of the render); otherwise CLIPSeg grounds the concept.
MIN_MASK_SCORE = 0.3
MASK_AREA_RANGE = (0.005, 0.95)
MAX_SCORES_BYTES = 1024 * 1024
MAX_MASK_BYTES = 64 * 1024 * 1024


def read_masks_file(masks_dir: Path, path: Path, max_bytes: int) -> bytes:
    """A file of the masks folder: a regular file that resolves inside it, bounded."""
    try:
        return read_regular_file(path, max_bytes, within=masks_dir,
                                 folder_name=f"the masks folder {masks_dir}")
    except SvglooError as exc:
        raise ConfigError(str(path), exc.message) from None


def mask_accepted(score: float | None, area_fraction: float) -> bool:
    """The paper's rule for a mask with a detection score; a mask with no score (the
    user's own) is always accepted."""
    if score is None:
        return True
    lo, hi = MASK_AREA_RANGE
    return score > MIN_MASK_SCORE and lo <= area_fraction <= hi


def mask_names(masks_dir: str | Path) -> list[str]:
    """Concept names from a masks folder: the image files' stems, sorted."""
    folder = Path(masks_dir)
    if not folder.is_dir():
        raise ConfigError(str(folder), "masks directory not found")
    # Everything but folders counts: a FIFO or bad link is then named when it is read,
    # not silently left out.
    return sorted({p.stem for p in folder.iterdir()
                   if not p.is_dir() and p.suffix.lower() in MASK_SUFFIXES})


def mask_scores(masks_dir: str | Path) -> dict[str, float]:
    """``scores.json`` beside the masks ({} when there is none)."""
    import json

    path = Path(masks_dir) / SCORES_FILE
    if not os.path.lexists(path):
        return {}
    raw = read_masks_file(Path(masks_dir), path, MAX_SCORES_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(str(path), f"cannot read mask scores: {exc}") from None
    if not isinstance(data, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values()):
        raise ConfigError(str(path), "mask scores must be a JSON object of numbers "
                                     '({"concept-name": 0.8, ...})')
    return {str(k): float(v) for k, v in data.items()}


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _render_size(render_rgb: np.ndarray) -> tuple[int, int]:
    return int(render_rgb.shape[0]), int(render_rgb.shape[1])


class RegionGrounder:
    name = "regions"

    def __init__(self, **_: Any):
        pass

    def heatmaps(self, doc: Any, render_rgb: np.ndarray, concepts: list[Concept],
                 options: dict | None = None) -> np.ndarray:
        h, w = _render_size(render_rgb)
        out = np.zeros((len(concepts), h, w), np.float32)
        for k, c in enumerate(concepts):
            if c.mask is None:
                raise ConfigError(getattr(doc, "name", None),
                                  f"concept {c.name!r} has no region mask; the regions "
                                  "grounder only grounds region concepts")
            out[k] = np.asarray(c.mask, dtype=np.float32)[:h, :w]
        return out


class LabelGrounder:
    name = "labels"

    def __init__(self, **_: Any):
        pass

    def heatmaps(self, doc: Any, render_rgb: np.ndarray, concepts: list[Concept],
                 options: dict | None = None) -> np.ndarray:
        from svgloo.engine.limits import DEFAULT_LIMITS
        from svgloo.engine.rendering.render_jobs import job_render_layers
        from svgloo.engine.reading.units import extract_units, text_keeping
        from svgloo.engine.processes.workers import shared_pool

        options = options or {}
        limits = options.get("limits") or DEFAULT_LIMITS
        pool = options.get("pool") or shared_pool(limits)
        units = options.get("units") or extract_units(doc, False)
        h, w = _render_size(render_rgb)
        pairs = []   # (concept index, element index): one render per labelled element
        for k, c in enumerate(concepts):
            if not c.elements:
                raise ConfigError(doc.name, f"concept {c.name!r} names no element; the labels "
                                            "grounder only grounds label concepts")
            pairs += [(k, e) for e in dict.fromkeys(c.elements)]
        texts = []
        for _, e in pairs:
            el = doc.elements[e]
            keep = {u.index for u in units.units
                    if el.start <= doc.elements[u.element].start < el.end}
            texts.append(text_keeping(units, keep))
        out = np.zeros((len(concepts), h, w), np.float32)
        if not texts:
            return out
        [layers] = pool.map(job_render_layers, [(texts, h, limits, doc.name)], doc.name)
        alpha = np.zeros((len(pairs), h, w), np.float32)
        for p, (box, crop) in enumerate(layers):
            if box is not None:
                y0, y1, x0, x1 = box
                alpha[p, y0:y1, x0:x1] = crop[..., 3] / 255.0
        if options.get("labels_occlusion", True):
            alpha = occlude(doc, pairs, alpha)
        for p, (k, _) in enumerate(pairs):
            np.maximum(out[k], alpha[p], out=out[k])
        return out


def occlude(doc, pairs: list[tuple[int, int]], alpha: np.ndarray) -> np.ndarray:
    """Where each labelled element is *visible* as its concept: its alpha times
    (1 - alpha) of every other concept's labelled element on top of it - drawn after it
    in the source, or nested inside it (a labelled part of a labelled group is that part,
    not the group). Eyes drawn over a head are "eyes" there, not "head"."""
    out = alpha.copy()
    spans = [(doc.elements[e].start, doc.elements[e].end) for _, e in pairs]
    for p, (kp, _) in enumerate(pairs):
        s0, e0 = spans[p]
        for q, (kq, _) in enumerate(pairs):
            if kq == kp:
                continue
            s1, e1 = spans[q]
            if s1 >= e0 or (s0 < s1 and e1 <= e0):
                out[p] *= 1.0 - alpha[q]
    return out


class MaskGrounder:
    name = "masks"

    def __init__(self, **_: Any):
        pass

    @staticmethod
    def find_mask(masks_dir: Path, name: str) -> Path | None:
        for stem in (slug(name), name):
            for suffix in MASK_SUFFIXES:
                p = masks_dir / f"{stem}{suffix}"
                if os.path.lexists(p) and not p.is_dir():
                    return p
        return None

    def heatmaps(self, doc: Any, render_rgb: np.ndarray, concepts: list[Concept],
                 options: dict | None = None) -> np.ndarray:
        from PIL import Image, UnidentifiedImageError

        from svgloo.engine.limits import DEFAULT_LIMITS

        options = options or {}
        masks_dir = options.get("masks_dir")
        if not masks_dir:
            raise ConfigError(getattr(doc, "name", None), "the masks grounder needs --masks DIR "
                                                          "(one grayscale PNG per concept)")
        masks_dir = Path(masks_dir)
        if not masks_dir.is_dir():
            raise ConfigError(str(masks_dir), "masks directory not found")
        h, w = _render_size(render_rgb)
        out = np.zeros((len(concepts), h, w), np.float32)
        scores = mask_scores(masks_dir)
        # filled for the caller (a dict in options: instances are shared across threads)
        rejected = options.get("rejected_masks")
        rejected = rejected if isinstance(rejected, dict) else {}
        for k, c in enumerate(concepts):
            path = self.find_mask(masks_dir, c.name)
            if path is None:
                raise ConfigError(str(masks_dir), f"no mask for concept {c.name!r} (expected "
                                                  f"{slug(c.name)}.png)")
            data = read_masks_file(masks_dir, path, MAX_MASK_BYTES)
            try:
                with warnings.catch_warnings():  # the pixel check below says it better
                    warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                    im: Image.Image = Image.open(io.BytesIO(data))
                with im:
                    mw, mh = im.size
                    if mw * mh > DEFAULT_LIMITS.max_reference_pixels:
                        raise ConfigError(str(path), f"mask image is {mw} x {mh} pixels; the "
                                                     "limit is "
                                                     f"{DEFAULT_LIMITS.max_reference_pixels}")
                    im.load()
                    if im.mode in ("RGBA", "LA") or "transparency" in im.info:
                        im = im.convert("RGBA")
                        white = Image.new("RGBA", im.size, (0, 0, 0, 255))
                        im = Image.alpha_composite(white, im)
                    gray = im.convert("L").resize((w, h), Image.Resampling.BILINEAR)
            except Image.DecompressionBombError as exc:
                raise ConfigError(str(path), f"mask image is too large: {exc}") from None
            except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
                raise ConfigError(str(path), f"cannot read mask image: {exc}") from None
            out[k] = np.asarray(gray, np.float32) / 255.0
            score = next((scores[key] for key in (path.stem, c.name, slug(c.name))
                          if key in scores), None)
            area = float((out[k] > 0.5).mean())
            if not mask_accepted(score, area):
                rejected[k] = (f"mask {path.name} has score {score:g} and area fraction "
                               f"{area:.4f} (the rule wants score > {MIN_MASK_SCORE} and "
                               f"area in [{MASK_AREA_RANGE[0]}, {MASK_AREA_RANGE[1]}])")
        return out
