"""The PNG the judge sees.

The original (``render_svg_to_png``) loads the SVG in headless Chrome inside
``body{margin:0;padding:20px;background:white} svg{max-width:100%;height:auto}`` with a
window of (w + 40) × (h + 40), w × h read by regex from width/height, else the viewBox,
else 800 × 600, and screenshots the viewport.

``chromium``: the same page and window in Debian's ``chromium --headless --screenshot``
(no Selenium), after the engine's safety checks; a document with external references is
refused (the browser would fetch them) and name resolution is disabled.
``cairosvg`` (default): the engine's safe renderer into a max(w, h) square, on white, with
the 20 px padding. A different engine: scores are comparable within one renderer only.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import tempfile

import numpy as np

from ..engine import DEFAULT_LIMITS, ConfigError, LimitError, WorkerError, check_document, \
    parse_document
from ..render import RenderProtocol, render_with_warnings

PADDING = 20
DEFAULT_SIZE = (800, 600)
CHROMIUM_TIMEOUT_S = 30
HTML = """
        <!DOCTYPE html>
        <html>
        <head>
            <meta charset="utf-8">
            <style>
                body {{ margin: 0; padding: 20px; background: white; }}
                svg {{ max-width: 100%; height: auto; }}
            </style>
        </head>
        <body>
            {svg_code}
        </body>
        </html>
        """


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
        # svgloo's safety rule, not the original's: the sample is not scored
        raise LimitError("<svgbench prediction>", "external references are refused with "
                         f"--render chromium ({refused[0]})")
    binary = find_chromium()
    if binary is None:
        raise ConfigError(None, "--render chromium: chromium not found (apt install chromium)")
    w, h = svg_size(svg_code)
    w, h = min(w, limits.max_render_size), min(h, limits.max_render_size)
    with tempfile.TemporaryDirectory(prefix="svgloo-svgbench-") as tmp:
        page, shot = os.path.join(tmp, "page.html"), os.path.join(tmp, "shot.png")
        with open(page, "w", encoding="utf-8") as fh:
            fh.write(HTML.format(svg_code=svg_code))
        cmd = [binary, "--headless", "--no-sandbox", "--disable-dev-shm-usage",
               "--disable-gpu", f"--window-size={w + 40},{h + 40}",
               "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp}/profile",
               f"--screenshot={shot}", "file://" + page]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.wait(timeout=CHROMIUM_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise LimitError("<svgbench prediction>",
                             f"chromium took over {CHROMIUM_TIMEOUT_S} s") from None
        finally:
            try:   # the browser's helpers share its session: none outlives the render
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not os.path.exists(shot):
            raise WorkerError("<svgbench prediction>", f"chromium wrote no screenshot "
                                                       f"(exit {proc.returncode})")
        with open(shot, "rb") as fh:
            return fh.read()


def render_png(svg_code: str, mode: str = "cairosvg", limits=DEFAULT_LIMITS, pool=None) -> bytes:
    if mode == "chromium":
        return render_chromium(svg_code, limits)
    return render_cairosvg(svg_code, limits, pool)
