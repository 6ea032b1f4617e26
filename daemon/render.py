"""SVG text -> premultiplied RGBA arrays with CairoSVG, straight from the cairo surface.

No PNG encode/decode in the hot path. Documents are untrusted: CairoSVG parses them with
its own parser, so we never pass ``unsafe=True`` and install a URL fetcher that fetches
nothing except small inline ``data:`` PNG/JPEG images.

The canvas is ``size x size``; the picture is fitted inside with its aspect ratio kept
(the document's own preserveAspectRatio decides the placement) on a transparent ground.
``over_white`` composites a render onto the white background used for scoring.
"""

from __future__ import annotations

import base64
import binascii
import threading
from urllib.parse import unquote_to_bytes

import numpy as np

from .errors import RenderError
from .limits import DEFAULT_LIMITS, Limits

_EMPTY_SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>'

_local = threading.local()


def refused_urls() -> list[str]:
    """URLs the fetcher refused during renders in this thread (cleared by take_refused)."""
    return getattr(_local, "refused", [])


def take_refused() -> list[str]:
    out = refused_urls()
    _local.refused = []
    return out


def _refuse(url: str, why: str) -> bytes:
    if not hasattr(_local, "refused"):
        _local.refused = []
    short = url if len(url) < 80 else url[:77] + "..."
    _local.refused.append(f"{short} ({why})")
    return _EMPTY_SVG


def make_fetcher(limits: Limits = DEFAULT_LIMITS):
    """A CairoSVG url_fetcher that never touches the file system or the network."""

    def fetch(url: str, resource_type: str) -> bytes:
        if not url.startswith("data:"):
            return _refuse(url, "external reference refused")
        header, _, payload = url[5:].partition(",")
        mime = header.split(";")[0].strip().lower()
        if mime not in ("image/png", "image/jpeg", "image/jpg"):
            return _refuse(url, f"data: {mime or 'text'} refused; only PNG/JPEG images")
        if len(payload) > limits.max_data_image_bytes * 4 // 3 + 4:
            return _refuse(url, "embedded image too large")
        try:
            if ";base64" in header.lower():
                data = base64.b64decode(payload, validate=False)
            else:
                data = unquote_to_bytes(payload)
        except (binascii.Error, ValueError):
            return _refuse(url, "undecodable data: URL")
        if not (data.startswith(b"\x89PNG") or data.startswith(b"\xff\xd8")):
            return _refuse(url, "data: URL is not a PNG or JPEG image")
        return data

    return fetch


def _surface_class():
    import cairosvg.surface

    class ArraySurface(cairosvg.surface.PNGSurface):
        """A PNG surface that keeps its pixels instead of writing a PNG."""

        def finish(self):  # noqa: D401 - CairoSVG hook
            self.cairo.flush()

    return ArraySurface


def render_rgba(svg_text: str | bytes, size: int = 384, limits: Limits = DEFAULT_LIMITS,
                name: str = "<input>") -> np.ndarray:
    """Render to a (size, size, 4) uint8 array of premultiplied R, G, B, A."""
    import cairosvg.parser

    size = max(1, min(int(size), limits.max_render_size))
    data = svg_text.encode("utf-8") if isinstance(svg_text, str) else svg_text
    try:
        tree = cairosvg.parser.Tree(bytestring=data, url_fetcher=make_fetcher(limits),
                                    unsafe=False)
        surface = _surface_class()(tree, None, 96, output_width=size, output_height=size)
        surface.finish()
    except RecursionError:
        raise RenderError(name, "document nests too deeply to render") from None
    except MemoryError:
        raise RenderError(name, "renderer ran out of memory") from None
    except Exception as exc:  # CairoSVG raises many kinds; each is this file's problem
        raise RenderError(name, f"renderer failed: {type(exc).__name__}: {exc}") from None
    cs = surface.cairo
    w, h, stride = cs.get_width(), cs.get_height(), cs.get_stride()
    buf = np.frombuffer(cs.get_data(), dtype=np.uint8).reshape(h, stride)[:, : w * 4]
    bgra = buf.reshape(h, w, 4)
    # cairo ARGB32 is native-endian: bytes are B, G, R, A on little-endian machines.
    rgba = bgra[..., [2, 1, 0, 3]] if np.little_endian else bgra[..., [1, 2, 3, 0]]
    if (h, w) != (size, size):  # rounding of odd sizes; keep the canvas exact
        canvas = np.zeros((size, size, 4), np.uint8)
        canvas[: min(h, size), : min(w, size)] = rgba[:size, :size]
        rgba = canvas
    return np.ascontiguousarray(rgba)


def over_white(rgba: np.ndarray) -> np.ndarray:
    """Composite premultiplied RGBA (uint8) over white -> RGB uint8."""
    rgb = rgba[..., :3].astype(np.int32)
    a = rgba[..., 3:4].astype(np.int32)
    return (rgb + (255 - a)).clip(0, 255).astype(np.uint8)
