"""The renderers, behind one Protocol: a third renderer is one class here (or in a module
of its own) and one entry in ``RENDERERS``; nothing else picks a renderer by its name.

CairoSVG is the analysis renderer (leave-one-out, footprints, the suites' numbers);
resvg, browser-grade, is the proof's second opinion. Both hand back the same layout:
a (size, size, 4) uint8 array of premultiplied R, G, B, A, so pictures of either compare
pixel for pixel (proving/pictures.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from svgloo.engine.limits import Limits


@runtime_checkable
class Renderer(Protocol):
    """Draws an SVG text into a square premultiplied RGBA picture. ``draw`` runs in a render
    worker (pickled by name): it raises ``RenderError`` naming ``name`` on failure."""

    name: str    # the key in RENDERERS and in results ("cairosvg")
    label: str   # what messages call it ("CairoSVG")

    def draw(self, text: str | bytes, size: int, limits: Limits, name: str) -> np.ndarray:
        ...


class CairoSvgRenderer:
    name = "cairosvg"
    label = "CairoSVG"

    def draw(self, text: str | bytes, size: int, limits: Limits, name: str) -> np.ndarray:
        from svgloo.engine.rendering.render import render_rgba

        return render_rgba(text, size, limits, name)


class ResvgRenderer:
    name = "resvg"
    label = "resvg"

    def draw(self, text: str | bytes, size: int, limits: Limits, name: str) -> np.ndarray:
        from svgloo.engine.rendering.render import render_rgba_resvg

        return render_rgba_resvg(text, size, limits, name)


RENDERERS: Mapping[str, Renderer] = {r.name: r for r in (CairoSvgRenderer(), ResvgRenderer())}
# The proof's pictures: a removal is proven when every one of these keeps its picture.
PROOF_RENDERERS: tuple[str, ...] = ("cairosvg", "resvg")


def get_renderer(name: str) -> Renderer:
    try:
        return RENDERERS[name]
    except KeyError:
        raise ValueError(f"unknown renderer {name!r} (known: {', '.join(RENDERERS)})") from None


__all__ = ["Renderer", "CairoSvgRenderer", "ResvgRenderer", "RENDERERS", "PROOF_RENDERERS",
           "get_renderer"]
