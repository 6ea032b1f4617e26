"""Renders at a suite's own protocol, through the engine's safe renderer.

Each suite declares the CairoSVG call its original code makes (size, dpi, background);
``RenderProtocol`` carries those values and ``render`` applies them with the engine's
fetcher (nothing is fetched), the document limits (<use> bombs, element counts) and, when a
pool is given, in a render worker with its memory, CPU and wall-clock limits.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .engine import DEFAULT_LIMITS, Limits, RenderPool, check_document, parse_document, \
    render_rgba


@dataclass(frozen=True)
class RenderProtocol:
    """One original render call: ``cairosvg.svg2png(bytestring, output_width=size,
    output_height=size, dpi=dpi, background_color=background)`` read back as RGB."""

    size: int
    dpi: float = 96
    background: str | None = "white"
    call: str = ""   # the original call, verbatim, for the output's config block

    def to_json(self) -> dict:
        return asdict(self)


def job_render_rgb(text: str, protocol: RenderProtocol, limits: Limits, name: str) -> np.ndarray:
    """Worker job: RGB uint8 (size, size, 3) at the protocol. Module level so that render
    workers can import it."""
    rgba = render_rgba(text, protocol.size, limits, name, dpi=protocol.dpi,
                       background=protocol.background)
    if protocol.background is None:  # keep straight alpha out of it: composite on white
        rgb = rgba[..., :3]
        return np.minimum(rgb, rgba[..., 3:4]) + (255 - rgba[..., 3:4])
    return np.ascontiguousarray(rgba[..., :3])


def render_with_warnings(text: str, protocol: RenderProtocol, name: str = "<prediction>",
                         limits: Limits = DEFAULT_LIMITS,
                         pool: RenderPool | None = None) -> tuple[np.ndarray, list[str]]:
    """Parse with the engine's safe parser, check the limits, render at ``protocol``.
    Returns the RGB render and the engine's warnings (external references it refused;
    the original code would have fetched them). Raises the engine's InputError /
    LimitError / RenderError."""
    doc = parse_document(text, name, limits)
    warnings = check_document(doc, limits)
    if pool is None:
        return job_render_rgb(doc.text, protocol, limits, name), warnings
    [rgb] = pool.map(job_render_rgb, [(doc.text, protocol, limits, name)], name)
    return rgb, warnings


def render(text: str, protocol: RenderProtocol, name: str = "<prediction>",
           limits: Limits = DEFAULT_LIMITS, pool: RenderPool | None = None) -> np.ndarray:
    """``render_with_warnings`` without the warnings."""
    return render_with_warnings(text, protocol, name, limits, pool)[0]


def to_unit(rgb: np.ndarray) -> np.ndarray:
    """uint8 -> float64 in [0, 1], as the originals' ``/ 255`` or ``ToTensor`` do."""
    return rgb.astype(np.float64) / 255.0
