"""Warnings about a reference image that cannot be compared fairly with the document.

The document and an image reference are both letterboxed into the square canvas with their
own proportions kept. A reference of other proportions lands in another box, so nothing
lines up and nearly every visible unit comes out harmful; a blank (uniform) reference makes
every unit that draws anything harmful, because removing it brings the render closer to
nothing. Both used to pass silently; these checks put the sizes in the result's
``warnings`` (the CLI prints them as ``warning:`` lines).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

ASPECT_TOLERANCE = 0.05   # relative difference of width/height ratios still called "same"
BLANK_RANGE = 2           # /255: a reference whose channels all vary less is uniform

_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(px)?\s*$")


def document_size(root) -> tuple[float, float] | None:
    """(width, height) of an SVG root: its viewBox, else plain width/height (numbers or
    px); None when neither says (percentages, other units, no size at all)."""
    box = (root.get("viewBox") or "").replace(",", " ").split()
    if len(box) == 4:
        try:
            w, h = float(box[2]), float(box[3])
        except ValueError:
            w = h = 0.0
        if w > 0 and h > 0:
            return w, h
    sizes = [_NUMBER.match(root.get(k) or "") for k in ("width", "height")]
    if all(sizes):
        w, h = (float(m.group(1)) for m in sizes if m is not None)
        if w > 0 and h > 0:
            return w, h
    return None


def reference_size(path: str, limits) -> tuple[float, float] | None:
    """(width, height) of a reference file: an image's header, an SVG's own size."""
    p = Path(path)
    try:
        if p.suffix.lower() in (".svg", ".svgz"):
            from svgloo.engine.reading.document import load_document

            return document_size(load_document(path, limits).root)
        from PIL import Image

        with Image.open(p) as im:   # reads the header only
            return float(im.size[0]), float(im.size[1])
    except Exception:  # noqa: BLE001 - loading it already succeeded; this is advice only
        return None


def _size_text(size: tuple[float, float]) -> str:
    return " x ".join(f"{v:g}" for v in size)


def reference_warnings(doc, spec, image: np.ndarray | None, limits) -> list[str]:
    """Warnings for an image reference (``spec.kind == "image"``): blank, or of other
    proportions than the document. ``image`` is the reference as compared (RGB uint8)."""
    if spec.kind != "image" or image is None:
        return []
    out = []
    name = spec.path or spec.source
    if int(image.max()) - int(image.min()) <= BLANK_RANGE:
        r, g, b = (int(v) for v in image.reshape(-1, 3)[0])
        out.append(f"the reference {name} is blank (every pixel #{r:02x}{g:02x}{b:02x}):"
                   " removing anything that draws brings the render closer to it, so every "
                   "visible unit comes out harmful; give a picture of what the file should "
                   "show")
    ours, theirs = document_size(doc.root), reference_size(spec.path, limits)
    if ours and theirs:
        ours_aspect, theirs_aspect = ours[0] / ours[1], theirs[0] / theirs[1]
        if abs(math.log(ours_aspect / theirs_aspect)) > math.log1p(ASPECT_TOLERANCE):
            out.append(f"the reference {name} is {_size_text(theirs)} (aspect "
                       f"{theirs_aspect:.2f}) but {Path(doc.name).name} is {_size_text(ours)} (aspect "
                       f"{ours_aspect:.2f}): each is fitted into the square canvas with its own "
                       "proportions, so they do not line up and most visible units come out "
                       "harmful; give a reference of the same proportions")
    return out


# Below this full-render similarity (the pixel backbone's SSIM of the file's render against
# an image reference) the reference is most likely not a picture of this drawing: see
# docs/reference-mismatch.md for the corpus measurement it was chosen from. Other backbones
# have no measured threshold, so they get no such warning.
MISMATCH_THRESHOLDS = {"pixel": 0.60}


def mismatch_warning(spec, backbone: str, full_score: float) -> list[str]:
    """A warning when an image reference does not look like the drawing: scored against
    another drawing (another artist's version of the same emoji, a wrong sidecar),
    verdicts come out worse than chance, silently."""
    threshold = MISMATCH_THRESHOLDS.get(backbone)
    if spec.kind != "image" or threshold is None or not full_score < threshold:
        return []
    name = spec.path or spec.source
    return [f"the reference {name} does not look like this drawing: their similarity is "
            f"{full_score:.3f} ({backbone} backbone), under {threshold:.2f}, where a blurred "
            "picture of the drawing itself scores higher; verdicts against another drawing "
            "can be worse than chance, so check that it shows this file"]


__all__ = ["reference_warnings", "document_size", "reference_size", "mismatch_warning",
           "MISMATCH_THRESHOLDS"]
