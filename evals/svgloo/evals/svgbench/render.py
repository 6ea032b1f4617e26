"""The PNG the judge sees.

The original (``render_svg_to_png``) loads the SVG in headless Chrome inside
``body{margin:0;padding:20px;background:white} svg{max-width:100%;height:auto}`` with a
window of (w + 40) × (h + 40), w × h read by regex from width/height, else the viewBox,
else 800 × 600, and screenshots the viewport.

``chromium``: the same page and window in Debian's headless ``chromium`` (no Selenium),
after the engine's safety checks (a document with external references is refused), with
the picture shown as an image in a sandboxed page, never pasted into it: see chromium.py.
``cairosvg`` (default): the engine's safe renderer into a max(w, h) square, on white, with
the 20 px padding. A different engine: scores are comparable within one renderer only.
"""

from __future__ import annotations

import io
import re
import shutil

import numpy as np

from ..engine import DEFAULT_LIMITS, ConfigError, LimitError, WorkerError, check_document, \
    parse_document
from ..render import RenderProtocol, render_with_warnings
from . import chromium

PADDING = 20
DEFAULT_SIZE = (800, 600)
CHROMIUM_TIMEOUT_S = 30


def svg_size(svg_code: str) -> tuple[int, int]:
    """The original's regexes, in its order."""
    width_match = re.search(r'width="(\d+)"', svg_code)
    height_match = re.search(r'height="(\d+)"', svg_code)
    viewbox_match = re.search(r'viewBox="[^"]*?(\d+)\s+(\d+)"', svg_code)
    if width_match and height_match:
        return int(width_match.group(1)), int(height_match.group(1))
    if viewbox_match:
        return int(viewbox_match.group(1)), int(viewbox_match.group(2))
    return DEFAULT_SIZE


def _png(rgb: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(buf, format="PNG")
    return buf.getvalue()


def render_cairosvg(svg_code: str, limits=DEFAULT_LIMITS, pool=None) -> bytes:
    w, h = svg_size(svg_code)
    side = max(1, min(max(w, h), limits.max_render_size))
    rgb, _ = render_with_warnings(svg_code, RenderProtocol(size=side, background="white"),
                                  "<svgbench prediction>", limits, pool)
    padded = np.full((side + 2 * PADDING, side + 2 * PADDING, 3), 255, np.uint8)
    padded[PADDING:PADDING + side, PADDING:PADDING + side] = rgb
    return _png(padded)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render_chromium(svg_code: str, limits=DEFAULT_LIMITS) -> bytes:
    doc = parse_document(svg_code, "<svgbench prediction>", limits)
    refused = check_document(doc, limits)
    if refused:
        # svgloo's safety rule, not the original's: the sample is not scored. The browser
        # would not fetch these (see chromium.py); refusing says so instead of a blank.
        raise LimitError("<svgbench prediction>", "external references are refused with "
                         f"--render chromium ({refused[0]})")
    binary = find_chromium()
    if binary is None:
        raise ConfigError(None, "--render chromium: chromium not found (apt install chromium)")
    w, h = svg_size(svg_code)
    w, h = min(w, limits.max_render_size), min(h, limits.max_render_size)
    try:
        return chromium.screenshot(binary, doc.text, doc.elements[0].namespace is not None,
                                   w + 2 * PADDING, h + 2 * PADDING, CHROMIUM_TIMEOUT_S,
                                   has_viewbox=doc.root.get("viewBox") is not None)
    except TimeoutError:
        raise LimitError("<svgbench prediction>",
                         f"chromium took over {CHROMIUM_TIMEOUT_S} s") from None
    except chromium.ChromiumFailed as exc:
        raise WorkerError("<svgbench prediction>", f"chromium failed: {exc}") from None


def render_png(svg_code: str, mode: str = "cairosvg", limits=DEFAULT_LIMITS, pool=None) -> bytes:
    if mode == "chromium":
        return render_chromium(svg_code, limits)
    return render_cairosvg(svg_code, limits, pool)
