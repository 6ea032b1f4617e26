"""What the render workers run for leave-one-out and its callers (``RenderPool.map`` jobs).

Top-level functions, so they pickle by name; a worker that unpickles one imports this
module, which needs only the renderer and ``composite.diff_box``, not the methods.
"""

from __future__ import annotations

import hashlib
import threading
import time

import numpy as np

from svgloo.engine.rendering.composite import diff_box
from svgloo.engine.limits import Limits
from svgloo.engine.rendering.raster import Layer
from svgloo.engine.rendering.renderers import PROOF_RENDERERS, get_renderer
from svgloo.engine.rendering.render import (over_white, render_captured_layers, render_layer,
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


# --- the document's own pictures in both renderers (the proof and leave-one-out) -----

def draw_picture(text: str, size: int, limits: Limits, name: str,
                 renderer: str) -> np.ndarray:
    """Premultiplied RGBA render with ``renderer`` (a name in renderers.RENDERERS)."""
    return get_renderer(renderer).draw(text, size, limits, name)


_kept_pictures: dict = {}  # in a worker: (renderer, size, hash of text) -> picture
KEPT_PICTURES = 4          # the most recent few: a proof compares every check with one


def kept_picture(text: str, size: int, limits: Limits, name: str,
                 renderer: str) -> np.ndarray:
    """``draw_picture``, kept in this worker for the next job that asks for the same
    picture (the proof's checks compare with the full picture, once per worker)."""
    key = (renderer, size, hashlib.sha1(text.encode("utf-8")).hexdigest())
    picture = _kept_pictures.get(key)
    if picture is None:
        picture = draw_picture(text, size, limits, name, renderer)
        if len(_kept_pictures) >= KEPT_PICTURES:
            _kept_pictures.pop(next(iter(_kept_pictures)))
        _kept_pictures[key] = picture
    return picture


def job_full_picture(text: str, size: int, limits: Limits, name: str,
                     renderer: str) -> np.ndarray:
    return kept_picture(text, size, limits, name, renderer)


class FullPictures:
    """A document's pictures at one size in CairoSVG and resvg, rendered in the background
    from the moment a scoring starts (one job per renderer, side by side with the
    leave-one-out's layers). The proof compares the two (renderer disagreement), and the
    leave-one-out's full render is CairoSVG's picture over white: one render, not two, and
    after an edit, when the layers come from the cache, the renders no longer wait on one
    another. ``get`` re-raises a render's error where the picture is needed."""

    def __init__(self, text: str, size: int, limits: Limits, pool, name: str,
                 renderers: tuple[str, ...] = PROOF_RENDERERS):
        # ``renderers``: those started now; any other starts when first asked for (a
        # scoring without the removal proof needs only CairoSVG's, and its proof, asked for
        # later, resvg's: the render is then not on the first answer's way).
        self.text, self.size = text, size
        self._out: dict = {}
        self._threads: dict[str, threading.Thread] = {}
        self._job = (text, size, limits, name)
        self._pool = pool
        self._lock = threading.Lock()
        for renderer in renderers:
            self._start(renderer)

    def _start(self, renderer: str) -> None:
        with self._lock:
            if renderer in self._threads:
                return
            job = (*self._job, renderer)
            thread = threading.Thread(target=self._run, args=(self._pool, job, self._job[3]),
                                      daemon=True)
            self._threads[renderer] = thread
            thread.start()

    def _run(self, pool, job, name) -> None:
        try:
            [picture] = pool.map(job_full_picture, [job], name)
            self._out[job[-1]] = (picture, None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller in get()
            self._out[job[-1]] = (None, exc)

    def get(self, renderer: str) -> np.ndarray:
        self._start(renderer)
        self._threads[renderer].join()
        picture, error = self._out[renderer]
        if error is not None:
            raise error
        return picture


__all__ = ["job_render_layers", "job_render_full", "job_render_without",
           "job_capture_layers", "job_subpath_work", "job_full_picture", "draw_picture",
           "kept_picture", "FullPictures"]
