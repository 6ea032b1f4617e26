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
import functools
import threading
from urllib.parse import unquote_to_bytes

import numpy as np

from svgloo.engine.errors import RenderError
from svgloo.engine.limits import DEFAULT_LIMITS, Limits

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


@functools.lru_cache(maxsize=1)
def _surface_class():
    import cairosvg.surface

    class ArraySurface(cairosvg.surface.PNGSurface):
        """A PNG surface that keeps its pixels instead of writing a PNG."""

        def finish(self):  # noqa: D401 - CairoSVG hook
            self.cairo.flush()

    return ArraySurface


# Channel order of cairo's ARGB32 in memory (native-endian words): B, G, R, A on
# little-endian machines.
_TO_RGBA = [2, 1, 0, 3] if np.little_endian else [1, 2, 3, 0]
_ALPHA = 3 if np.little_endian else 0


def _render_native(svg_text: str | bytes, size: int, limits: Limits, name: str,
                   surface_class=None, dpi: float = 96, background: str | None = None):
    """Render to cairo's native pixel layout: (surface, (size, size, 4) uint8 view). The
    view is valid while the surface lives. ``dpi`` and ``background`` are CairoSVG's own
    (evaluation suites pass the values their original code used)."""
    import cairosvg.parser

    size = max(1, min(int(size), limits.max_render_size))
    data = svg_text.encode("utf-8") if isinstance(svg_text, str) else svg_text
    try:
        tree = cairosvg.parser.Tree(bytestring=data, url_fetcher=make_fetcher(limits),
                                    unsafe=False)
        surface = (surface_class or _surface_class())(tree, None, dpi, output_width=size,
                                                      output_height=size,
                                                      background_color=background)
        surface.finish()
    except RecursionError:
        raise RenderError(name, "document nests too deeply to render") from None
    except MemoryError:
        raise RenderError(name, "renderer ran out of memory") from None
    except Exception as exc:  # CairoSVG raises many kinds; each is this file's problem
        raise RenderError(name, f"renderer failed: {type(exc).__name__}: {exc}") from None
    cs = surface.cairo
    w, h, stride = cs.get_width(), cs.get_height(), cs.get_stride()
    view = np.frombuffer(cs.get_data(), dtype=np.uint8).reshape(h, stride)[:, : w * 4]
    view = view.reshape(h, w, 4)
    if (h, w) != (size, size):  # rounding of odd sizes; keep the canvas exact
        canvas = np.zeros((size, size, 4), np.uint8)
        canvas[: min(h, size), : min(w, size)] = view[:size, :size]
        view = canvas
    return surface, view


def render_rgba(svg_text: str | bytes, size: int = 384, limits: Limits = DEFAULT_LIMITS,
                name: str = "<input>", *, dpi: float = 96,
                background: str | None = None) -> np.ndarray:
    """Render to a (size, size, 4) uint8 array of premultiplied R, G, B, A. With a
    ``background`` colour CairoSVG paints it first, so alpha is 255 everywhere."""
    surface, view = _render_native(svg_text, size, limits, name, dpi=dpi,
                                   background=background)
    rgba = np.ascontiguousarray(view[..., _TO_RGBA])
    del surface
    return rgba


def render_region_rgba(svg_text: str | bytes, canvas: int, box: tuple,
                       limits: Limits = DEFAULT_LIMITS, name: str = "<input>") -> np.ndarray:
    """The pixels ``box`` = (y0, y1, x0, x1) of a ``canvas`` x ``canvas`` render (premultiplied
    RGBA), drawn without the rest of the canvas: how a viewer shows a zoomed-in part at
    screen resolution. Only the box is allocated, so the canvas may exceed
    ``max_render_size``; the box may not. Same parser, fetcher and placement as render_rgba:
    the box equals the same crop of a full render at that canvas size."""
    import cairosvg.parser
    import cairosvg.surface

    cairo = cairosvg.surface.cairo  # cairocffi, as CairoSVG uses it
    y0, y1, x0, x1 = (int(v) for v in box)
    h, w = y1 - y0, x1 - x0
    if not (0 < h <= limits.max_render_size and 0 < w <= limits.max_render_size):
        raise RenderError(name, f"region {w}x{h} px is empty or over the "
                                f"{limits.max_render_size} px limit")
    canvas = max(1, min(int(canvas), 32 * limits.max_render_size))

    class RegionSurface(_surface_class()):
        def _create_surface(self, width, height):
            surface = cairo.ImageSurface(cairo.FORMAT_ARGB32, w, h)
            surface.set_device_offset(-x0, -y0)  # canvas pixel (x0, y0) lands at (0, 0)
            return surface, int(round(width)), int(round(height))

    data = svg_text.encode("utf-8") if isinstance(svg_text, str) else svg_text
    try:
        tree = cairosvg.parser.Tree(bytestring=data, url_fetcher=make_fetcher(limits),
                                    unsafe=False)
        surface = RegionSurface(tree, None, 96, output_width=canvas, output_height=canvas)
        surface.finish()
    except RecursionError:
        raise RenderError(name, "document nests too deeply to render") from None
    except MemoryError:
        raise RenderError(name, "renderer ran out of memory") from None
    except Exception as exc:  # CairoSVG raises many kinds; each is this file's problem
        raise RenderError(name, f"renderer failed: {type(exc).__name__}: {exc}") from None
    cs = surface.cairo
    stride = cs.get_stride()
    view = np.frombuffer(cs.get_data(), dtype=np.uint8).reshape(h, stride)[:, : w * 4]
    return np.ascontiguousarray(view.reshape(h, w, 4)[..., _TO_RGBA])


CAPTURE_ATTR = "data-svgloo-capture"


@functools.lru_cache(maxsize=1)
def _capturing_surface_class():
    base = _surface_class()

    class CapturingSurface(base):
        """Draws the document as usual, except that each element carrying
        ``data-svgloo-capture`` is drawn into a group of its own, with the transform and
        clip in force there, and kept as a layer instead of reaching the canvas. That is
        what rendering the element alone gives, at the cost of one pass for many layers.
        Descendants inherit the attribute (a <text>'s tspans); only the outermost counts."""

        def __init__(self, *args, **kwargs):
            self.captured = {}
            self._capturing = False
            super().__init__(*args, **kwargs)

        def draw(self, node):
            mark = node.get(CAPTURE_ATTR)
            if mark is None or self._capturing:
                return super().draw(node)
            self._capturing = True
            self.context.push_group()
            try:
                super().draw(node)
            finally:
                pattern = self.context.pop_group()
                self._capturing = False
            self.captured[mark] = _crop_group(pattern.get_surface())

    return CapturingSurface


def _crop_group(group) -> tuple:
    """(box, RGBA crop) of a group surface in canvas coordinates, or (None, None)."""
    group.flush()
    w, h, stride = group.get_width(), group.get_height(), group.get_stride()
    if w == 0 or h == 0:
        return None, None
    dx, dy = group.get_device_offset()
    view = np.frombuffer(group.get_data(), dtype=np.uint8).reshape(h, stride)[:, : w * 4]
    view = view.reshape(h, w, 4)
    alpha = view[..., _ALPHA]
    rows = np.flatnonzero(alpha.any(axis=1))
    if rows.size == 0:
        return None, None
    cols = np.flatnonzero(alpha[rows[0]:rows[-1] + 1].any(axis=0))
    oy, ox = int(round(-dy)), int(round(-dx))
    crop = np.ascontiguousarray(view[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1][..., _TO_RGBA])
    return (oy + int(rows[0]), oy + int(rows[-1]) + 1, ox + int(cols[0]),
            ox + int(cols[-1]) + 1), crop


def render_captured_layers(svg_text: str | bytes, size: int = 384,
                           limits: Limits = DEFAULT_LIMITS, name: str = "<input>") -> dict:
    """Render once; return {mark: (box, RGBA crop)} for every element marked with
    ``CAPTURE_ATTR`` (see CapturingSurface). Marked elements must not sit under a group
    effect (opacity, mask, filter): the capture happens inside such a group."""
    surface, _ = _render_native(svg_text, size, limits, name, _capturing_surface_class())
    return surface.captured


def warm_up() -> None:
    """Import and build what renders need, so a fresh worker's first job is not slow."""
    render_captured_layers('<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2">'
                           f'<rect {CAPTURE_ATTR}="0" width="1" height="1"/></svg>', 2)


def render_layer(svg_text: str | bytes, size: int = 384, limits: Limits = DEFAULT_LIMITS,
                 name: str = "<input>"):
    """Render as a transparent layer cropped to where it has pixels: (box, RGBA crop) with
    box = (y0, y1, x0, x1), or (None, None) for an empty layer. Only the crop is
    converted, which matters when thousands of small layers are rendered."""
    surface, view = _render_native(svg_text, size, limits, name)
    alpha = view[..., _ALPHA]
    rows = np.flatnonzero(alpha.any(axis=1))
    if rows.size == 0:
        return None, None
    cols = np.flatnonzero(alpha[rows[0]:rows[-1] + 1].any(axis=0))
    box = (int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1)
    crop = np.ascontiguousarray(view[box[0]:box[1], box[2]:box[3]][..., _TO_RGBA])
    del surface
    return box, crop


def over_white(rgba: np.ndarray) -> np.ndarray:
    """Composite premultiplied RGBA (uint8) over white -> RGB uint8."""
    # Premultiplied colour never exceeds alpha, so c + (255 - a) stays within 0-255;
    # the minimum only guards against malformed input.
    rgb = rgba[..., :3]
    return np.minimum(rgb, rgba[..., 3:4]) + (255 - rgba[..., 3:4])
