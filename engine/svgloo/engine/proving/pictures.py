"""The proof's pictures: both renderers' renders of a text, what moved between two of
them beyond the tolerance, and ``text_changes``, the check of one edited text against the
full one. The proof (proof.py), its reuse after an edit (proof_reuse.py) and the render
workers (the job functions below, preloaded by processes/worker_preload.py) share these;
nothing here decides what may be removed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.rendering.render_jobs import draw_picture, kept_picture
from svgloo.engine.rendering.renderers import PROOF_RENDERERS, get_renderer
from svgloo.engine.processes.workers import RenderPool, shared_pool

# /255 per channel (alpha included, and over white and black pages). Browsers draw with
# Skia, whose antialiasing where edges meet moves pixels up to 2/255 more than CairoSVG's
# and resvg's (logos/pypi.svg: a frame hidden under cubes moves both by 4/255 and Chromium
# by 6/255): checking 2/255 here keeps a removal within 4/255 in Chromium, which is what
# tests/test_browser_proofs.py referees on every corpus file.
PROOF_TOLERANCE = 2
BROWSER_TOLERANCE = PROOF_TOLERANCE + 2
RENDERERS = PROOF_RENDERERS
RENDERER_NAMES = {name: get_renderer(name).label for name in RENDERERS}


# --- worker jobs (top level so they pickle) -------------------------------------------

def job_render_pictures(texts: list[str], size: int, limits: Limits, name: str,
                        renderer: str) -> list[np.ndarray]:
    """Premultiplied RGBA renders of ``texts`` with one renderer, in a worker."""
    return [draw_picture(text, size, limits, name, renderer) for text in texts]


def job_picture_changes(full_text: str, texts: list[str], size: int, limits: Limits,
                        name: str, renderer: str, full: np.ndarray | None = None
                        ) -> list[tuple[int, int, tuple]]:
    """For each of ``texts``, (pixels that moved by more than PROOF_TOLERANCE, the largest
    change, some of those pixels) against ``full_text``, with one renderer, in a worker.
    Only numbers come back: the full picture is rendered once per worker and kept
    (render_jobs.kept_picture), unless the caller sends it (``full``: the picture of
    ``full_text``, which the scoring has at the analysis size)."""
    if full is None:
        full = kept_picture(full_text, size, limits, name, renderer)
    return [_moved(full, draw_picture(text, size, limits, name, renderer)) for text in texts]


WITNESSES = 64  # moved pixels a failing check keeps, spread over all it moved


def _moved(full: np.ndarray, picture: np.ndarray) -> tuple[int, int, tuple]:
    """(pixels changed by more than PROOF_TOLERANCE, the largest change, up to WITNESSES
    of those pixels as (y, x), evenly spread in row order); only the pixels that differ
    at all are compared (usually few, and 2048 px pictures are 4M pixels)."""
    differ, change = _where_changed(full, picture)
    if differ.size == 0:
        return 0, 0, ()
    moved = differ[change > PROOF_TOLERANCE]
    if moved.size > WITNESSES:
        moved = moved[np.linspace(0, moved.size - 1, WITNESSES).astype(np.int64)]
    width = full.shape[1]
    at = tuple((int(i) // width, int(i) % width) for i in moved)
    return int((change > PROOF_TOLERANCE).sum()), int(change.max()), at


# --- comparing pictures -----------------------------------------------------------------

def picture_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pixel, the largest change between two premultiplied RGBA pictures: of any
    channel, alpha included, and of the picture over a white page (over black it is the
    colour channels themselves). Over a page of any colour the change lies between those."""
    a16, b16 = a.astype(np.int16), b.astype(np.int16)
    diff = a16 - b16
    over_white = diff[..., :3] - diff[..., 3:4]
    return np.maximum(np.abs(diff).max(axis=2), np.abs(over_white).max(axis=2))


def _where_changed(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(flat indices of the pixels where two RGBA pictures differ at all, their
    ``picture_change``): the change worked out only there."""
    flat_a, flat_b = a.reshape(-1, 4), b.reshape(-1, 4)
    if flat_a.flags.c_contiguous and flat_b.flags.c_contiguous:  # RGBA as one word
        differ = np.flatnonzero(flat_a.view(np.uint32)[:, 0] != flat_b.view(np.uint32)[:, 0])
    else:
        differ = np.flatnonzero((flat_a != flat_b).any(axis=1))
    if differ.size == 0:
        return differ, np.zeros(0, np.int16)
    return differ, picture_change(flat_a[differ][None], flat_b[differ][None])[0]


@dataclass(frozen=True)
class Change:
    """How a removal changed one renderer's picture at one size."""

    renderer: str
    size: int
    pixels: int        # pixels that moved by more than PROOF_TOLERANCE
    largest: int       # the largest change, /255
    # some of the moved pixels, (y, x): where a later edit cannot reach them, the same
    # removal still moves them (proof_reuse.CheckReuse.fails)
    at: tuple = field(default=(), compare=False, repr=False)

    def describe(self) -> str:
        return (f"changes {self.renderer}'s picture at {self.size} px "
                f"({self.pixels} px, up to {self.largest}/255)")


def text_changes(full_text: str, text: str, sizes: Iterable[int],
                 limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None,
                 name: str = "<input>", should_stop: Callable[[], bool] | None = None,
                 pictures: Mapping | None = None) -> tuple[list[Change], int]:
    """(the pictures that ``text`` changes against ``full_text`` beyond the tolerance, at
    the first of ``sizes``, in their order, where any changes; the renders asked for).
    The proof of any edited text, not only of removed units (``svgloo fix`` proves its
    whole result).
    ``pictures``: (renderer, size) -> the picture of ``full_text``, where known."""
    pictures = pictures or {}
    pool = pool or shared_pool(limits)
    renders = 0
    for size in sizes:
        if should_stop is not None:
            should_stop()
        jobs = [(full_text, [text], size, limits, name, renderer,
                 pictures.get((renderer, size))) for renderer in RENDERERS]
        results = pool.map(job_picture_changes, jobs, name)
        renders += len(jobs)
        found = [Change(RENDERER_NAMES[renderer], size, moved, largest, at)
                 for renderer, [(moved, largest, at)] in zip(RENDERERS, results) if moved]
        if found:
            return found, renders
    return [], renders
