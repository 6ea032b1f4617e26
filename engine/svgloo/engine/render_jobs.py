"""What the render workers run for leave-one-out and its callers (``RenderPool.map`` jobs).

Top-level functions, so they pickle by name; a worker that unpickles one imports this
module, which needs only the renderer and ``composite.diff_box``, not the methods.
"""

from __future__ import annotations

import time

import numpy as np

from svgloo.engine.composite import diff_box
from svgloo.engine.limits import Limits
from svgloo.engine.raster import Layer
from svgloo.engine.render import (over_white, render_captured_layers, render_layer,
                                  render_rgba, render_subpath_work)


def job_render_layers(texts: list[str], size: int, limits: Limits, name: str) -> list[Layer]:
    """Render texts as transparent layers, cropped to their alpha box."""
    return [render_layer(text, size, limits, name) for text in texts]


def job_render_full(text: str, size: int, limits: Limits, name: str):
    """(the document over white as RGB, the seconds the render took)."""
    t = time.perf_counter()
    rgba = render_rgba(text, size, limits, name)
    return over_white(rgba), time.perf_counter() - t


def job_render_without(texts: list[str], size: int, limits: Limits, name: str,
                       full: np.ndarray):
    """Naive leave-one-out renders, returned as patches against ``full``."""
    out = []
    for text in texts:
        rgb = over_white(render_rgba(text, size, limits, name))
        box = diff_box(rgb, full)
        out.append((box, None if box is None else rgb[box[0]:box[1], box[2]:box[3]].copy()))
    return out


def job_capture_layers(text: str, size: int, limits: Limits, name: str) -> dict[str, Layer]:
    return render_captured_layers(text, size, limits, name)


def job_subpath_work(text: str, size: int, job: dict, limits: Limits, name: str) -> dict:
    return render_subpath_work(text, size, job, limits, name)


__all__ = ["job_render_layers", "job_render_full", "job_render_without",
           "job_capture_layers", "job_subpath_work"]
