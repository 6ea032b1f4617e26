"""Chromium as the third judge inside ``svgloo fix --rewrite --browser``.

The engine's rewrite stage (engine fixing/cleanup/rewrite.py) proves each candidate text
with CairoSVG and resvg at 2/255; with ``--browser`` it also asks this judge, which draws
the baseline and the candidate in the one warm Chromium of the run (chromium.py), as an
``<img>`` and as a document (the way an ``<object>`` or inline SVG draws it, masks live;
in a sandboxed frame, since the file is untrusted: ``Chromium.render_sandboxed``), at
each of the proof's own sizes (the analysis size, 64 px and the document's own, at
least 1024 px). It accepts when no channel of any pixel, in any view (``largest_difference``:
premultiplied, over white, over dark), moves by more than ``tolerance`` (4/255, the
browser tolerance of the proof module). The baseline's pictures are drawn once per size
and kept; the smallest size and the ``<img>`` come first, so a refusal usually costs one
screenshot.

A candidate Chromium cannot draw at all is refused; so is every candidate once the browser
has died (nothing is then changed, which is the safe side).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from svgloo.validation.chromium import BrowserError, Chromium, largest_difference

_ENCODING = re.compile(r"""^\s*<\?xml\s[^>]*encoding\s*=\s*["']([^"']+)["']""")
EMBEDDINGS = ("img", "object")


def svg_bytes(text: str) -> bytes:
    """The text as a file would hold it: in the encoding its XML declaration names (the
    rewrite keeps such a declaration), else UTF-8."""
    m = _ENCODING.match(text)
    if m:
        try:
            return text.encode(m.group(1), errors="xmlcharrefreplace")
        except LookupError:
            pass
    return text.encode("utf-8")


class ChromiumJudge:
    """``judge(baseline, candidate, sizes) -> bool`` (rewrite.Judge) on one Chromium."""

    def __init__(self, chromium: Chromium, tolerance: int | None = None):
        from svgloo.engine.proving.pictures import BROWSER_TOLERANCE

        self.chromium = chromium
        self.tolerance = BROWSER_TOLERANCE if tolerance is None else tolerance
        self.calls = 0          # candidates judged
        self.screenshots = 0
        self._pictures: dict[tuple[str, int, str], np.ndarray] = {}

    def close(self) -> None:
        self._pictures.clear()

    def picture(self, data: bytes, size: int, how: str) -> np.ndarray:
        """Chromium's picture of ``data`` at ``size`` px, as an ``<img>`` or in an
        ``<object>``; a baseline's is kept (few, and asked for again and again)."""
        digest = hashlib.sha1(data).hexdigest()
        key = (digest, size, how)
        if key in self._pictures:
            return self._pictures[key]
        self.screenshots += 1
        if how == "img":
            picture = self.chromium.render([data], size)[0]
        else:  # as a document, sandboxed: the file is untrusted (chromium.render_sandboxed)
            picture = self.chromium.render_sandboxed(data, size)
        return picture

    def keep(self, data: bytes, size: int, how: str) -> np.ndarray:
        picture = self.picture(data, size, how)
        if len(self._pictures) > 64:        # a long run: forget the oldest baselines
            self._pictures.pop(next(iter(self._pictures)))
        self._pictures[(hashlib.sha1(data).hexdigest(), size, how)] = picture
        return picture

    def changes(self, before: bytes, after: bytes, sizes: tuple[int, ...],
                stop_over: int | None = None) -> dict[str, int]:
        """The largest change /255 per ``how@size``; with ``stop_over``, stops at the first
        one above it."""
        out: dict[str, int] = {}
        for size in sorted(sizes):
            for how in EMBEDDINGS:
                base = self.keep(before, size, how)
                moved = largest_difference(base, self.picture(after, size, how))[0]
                out[f"{how}@{size}"] = moved
                if stop_over is not None and moved > stop_over:
                    return out
        return out

    def __call__(self, baseline: str, candidate: str, sizes: tuple[int, ...]) -> bool:
        self.calls += 1
        try:
            moved = self.changes(svg_bytes(baseline), svg_bytes(candidate), sizes,
                                 stop_over=self.tolerance)
        except BrowserError:
            return False
        return max(moved.values(), default=0) <= self.tolerance


__all__ = ["ChromiumJudge", "EMBEDDINGS", "svg_bytes"]
