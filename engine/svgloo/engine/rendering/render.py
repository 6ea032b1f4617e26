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
import re
import threading
from collections.abc import Mapping
from urllib.parse import unquote_to_bytes

import numpy as np

from svgloo.engine.errors import LimitError, RenderError
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.rendering.over import over_white_u8
from svgloo.engine.rendering.raster import NO_LAYER, Layer
from svgloo.engine.settings import DEFAULT_RENDER_SIZE

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

        def finish(self):  # the hook CairoSVG calls to write the PNG
            self.cairo.flush()

    return ArraySurface


# Channel order of cairo's ARGB32 in memory (native-endian words): B, G, R, A on
# little-endian machines.
_TO_RGBA = [2, 1, 0, 3] if np.little_endian else [1, 2, 3, 0]


def _to_rgba(view: np.ndarray) -> np.ndarray:
    """Cairo's native (h, w, 4) pixels as a new contiguous RGBA array. Four strided
    channel copies: numpy's fancy index on the last axis costs about 6x as much, and
    thousands of layers are converted per batch."""
    rgba = np.empty(view.shape, np.uint8)
    for channel, source in enumerate(_TO_RGBA):
        rgba[..., channel] = view[..., source]
    return rgba


def _alpha_box(view: np.ndarray) -> tuple[int, int, int, int] | None:
    """(y0, y1, x0, x1) of the pixels with alpha > 0 in cairo's native (h, w, 4) view,
    or None. ARGB32 is one native-endian 32-bit word a pixel with alpha in its top byte,
    so a word above 0xFFFFFF is a pixel with alpha: one max over words instead of an
    ``any`` over a strided byte plane (about 4x faster on a 384 px canvas)."""
    words = view.view(np.uint32)[..., 0]
    rows = np.flatnonzero(words.max(axis=1) > 0xFFFFFF)
    if rows.size == 0:
        return None
    y0, y1 = int(rows[0]), int(rows[-1]) + 1
    cols = np.flatnonzero(words[y0:y1].max(axis=0) > 0xFFFFFF)
    return y0, y1, int(cols[0]), int(cols[-1]) + 1


_DECLARED_ENCODING = re.compile(r"""^(\ufeff?\s*<\?xml[^>]*?\bencoding\s*=\s*)(["'])[^"']*\2""")


def _utf8_bytes(svg_text: str) -> bytes:
    """Decoded text as the UTF-8 bytes the renderer's parser reads: an XML declaration
    that names the file's own encoding (a UTF-16 file's) is made to say UTF-8, else the
    parser would decode these bytes as that encoding and fail."""
    return _DECLARED_ENCODING.sub(r"\1\2UTF-8\2", svg_text, count=1).encode("utf-8")


def _draw(svg_text: str | bytes, limits: Limits, name: str, make_surface):
    """Parse untrusted SVG text with the safe fetcher and draw it on ``make_surface(tree)``;
    whatever CairoSVG raises becomes this file's one-line RenderError."""
    import cairosvg.parser

    from svgloo.engine.rendering.normalize import normalize_modern

    data = _utf8_bytes(svg_text) if isinstance(svg_text, str) else svg_text
    data = normalize_modern(data)  # opacity="100%", rgb(0 0 255), calc(): see normalize.py
    try:
        tree = cairosvg.parser.Tree(bytestring=data, url_fetcher=make_fetcher(limits),
                                    unsafe=False)
        surface = make_surface(tree)
        surface.finish()
    except RecursionError:
        raise RenderError(name, "document nests too deeply to render") from None
    except MemoryError:  # in a worker: RLIMIT_AS, a limit of ours, not the document's fault
        raise LimitError(name, f"the renderer ran out of memory ({limits.render_memory_mb} MB "
                               "render memory limit)") from None
    except Exception as exc:  # noqa: BLE001 - CairoSVG raises many kinds; each is this file's problem
        raise RenderError(name, f"renderer failed: {type(exc).__name__}: {exc}") from None
    return surface


def _render_native(svg_text: str | bytes, size: int, limits: Limits, name: str,
                   surface_class=None, dpi: float = 96, background: str | None = None):
    """Render to cairo's native pixel layout: (surface, (size, size, 4) uint8 view). The
    view is valid while the surface lives. ``dpi`` and ``background`` are CairoSVG's own
    (evaluation suites pass the values their original code used)."""
    size = max(1, min(int(size), limits.max_render_size))
    surface = _draw(svg_text, limits, name, lambda tree: (surface_class or _surface_class())(
        tree, None, dpi, output_width=size, output_height=size, background_color=background))
    cs = surface.cairo
    w, h, stride = cs.get_width(), cs.get_height(), cs.get_stride()
    view = np.frombuffer(cs.get_data(), dtype=np.uint8).reshape(h, stride)[:, : w * 4]
    view = view.reshape(h, w, 4)
    if (h, w) != (size, size):  # rounding of odd sizes; keep the canvas exact
        canvas = np.zeros((size, size, 4), np.uint8)
        canvas[: min(h, size), : min(w, size)] = view[:size, :size]
        view = canvas
    return surface, view


def render_rgba(svg_text: str | bytes, size: int = DEFAULT_RENDER_SIZE,
                limits: Limits = DEFAULT_LIMITS,
                name: str = "<input>", *, dpi: float = 96,
                background: str | None = None) -> np.ndarray:
    """Render to a (size, size, 4) uint8 array of premultiplied R, G, B, A. With a
    ``background`` colour CairoSVG paints it first, so alpha is 255 everywhere."""
    surface, view = _render_native(svg_text, size, limits, name, dpi=dpi,
                                   background=background)
    rgba = _to_rgba(view)
    del surface
    return rgba


def render_region_rgba(svg_text: str | bytes, canvas: int, box: tuple,
                       limits: Limits = DEFAULT_LIMITS, name: str = "<input>") -> np.ndarray:
    """The pixels ``box`` = (y0, y1, x0, x1) of a ``canvas`` x ``canvas`` render (premultiplied
    RGBA), drawn without the rest of the canvas: how a viewer shows a zoomed-in part at
    screen resolution. Only the box is allocated, so the canvas may exceed
    ``max_render_size``; the box may not. Same parser, fetcher and placement as render_rgba:
    the box equals the same crop of a full render at that canvas size."""
    import cairosvg.surface

    cairo = cairosvg.surface.cairo  # cairocffi, as CairoSVG uses it
    y0, y1, x0, x1 = (int(v) for v in box)
    h, w = y1 - y0, x1 - x0
    if not (0 < h <= limits.max_render_size and 0 < w <= limits.max_render_size):
        raise RenderError(name, f"region {w}x{h} px is empty or over the "
                                f"{limits.max_render_size} px limit")
    canvas = max(1, min(int(canvas), 32 * limits.max_render_size))

    class RegionSurface(_surface_class()):  # type: ignore[misc]  # CairoSVG is imported late
        def _create_surface(self, width, height):
            surface = cairo.ImageSurface(cairo.FORMAT_ARGB32, w, h)
            surface.set_device_offset(-x0, -y0)  # canvas pixel (x0, y0) lands at (0, 0)
            return surface, int(round(width)), int(round(height))

    surface = _draw(svg_text, limits, name, lambda tree: RegionSurface(
        tree, None, 96, output_width=canvas, output_height=canvas))
    cs = surface.cairo
    stride = cs.get_stride()
    view = np.frombuffer(cs.get_data(), dtype=np.uint8).reshape(h, stride)[:, : w * 4]
    return _to_rgba(view.reshape(h, w, 4))


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


def _crop_group(group) -> Layer:
    """The layer (box, RGBA crop) of a group surface in canvas coordinates."""
    group.flush()
    w, h, stride = group.get_width(), group.get_height(), group.get_stride()
    if w == 0 or h == 0:
        return NO_LAYER
    dx, dy = group.get_device_offset()
    view = np.frombuffer(group.get_data(), dtype=np.uint8).reshape(h, stride)[:, : w * 4]
    view = view.reshape(h, w, 4)
    box = _alpha_box(view)
    if box is None:
        return NO_LAYER
    y0, y1, x0, x1 = box
    oy, ox = int(round(-dy)), int(round(-dx))
    return Layer((oy + y0, oy + y1, ox + x0, ox + x1), _to_rgba(view[y0:y1, x0:x1]))


def render_captured_layers(svg_text: str | bytes, size: int = DEFAULT_RENDER_SIZE,
                           limits: Limits = DEFAULT_LIMITS, name: str = "<input>"
                           ) -> dict[str, Layer]:
    """Render once; return {mark: its layer} for every element marked with
    ``CAPTURE_ATTR`` (see CapturingSurface). Marked elements must not sit under a group
    effect (opacity, mask, filter): the capture happens inside such a group."""
    surface, _ = _render_native(svg_text, size, limits, name, _capturing_surface_class())
    return surface.captured


def warm_up() -> None:
    """Import and build what renders need, so a fresh worker's first job is not slow."""
    render_captured_layers('<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2">'
                           f'<rect {CAPTURE_ATTR}="0" width="1" height="1"/></svg>', 2)


def render_layer(svg_text: str | bytes, size: int = DEFAULT_RENDER_SIZE,
                 limits: Limits = DEFAULT_LIMITS,
                 name: str = "<input>") -> Layer:
    """Render as a transparent layer cropped to where it has pixels (box, RGBA crop), or
    NO_LAYER for an empty one. Only the crop is converted, which matters when thousands
    of small layers are rendered."""
    surface, view = _render_native(svg_text, size, limits, name)
    box = _alpha_box(view)
    if box is None:
        return NO_LAYER
    crop = _to_rgba(view[box[0]:box[1], box[2]:box[3]])
    del surface
    return Layer(box, crop)


def over_white(rgba: np.ndarray) -> np.ndarray:
    """Composite premultiplied RGBA (uint8) over white -> RGB uint8: min(c, a) + 255 - a
    per channel (over.over_white_u8: channel by channel, 5x faster at 384 px than the
    broadcast of alpha over three channels this once was; the same bytes)."""
    return over_white_u8(rgba)


# --- compound paths: one subpath at a time, in a window ----------------------------------

def _nonlocal_reason(surface, node) -> str | None:
    """Why removing one subpath of this path could change pixels far from that subpath
    (as CairoSVG draws it), or None. Read from the node as CairoSVG sees it: styles and
    inherited properties already applied."""
    from cairosvg.helpers import paint
    from cairosvg.defs import update_def_href

    for key in ("marker", "marker-start", "marker-mid", "marker-end"):
        if node.get(key, "none").strip() not in ("none", ""):
            return "markers (they sit on the first, last and every vertex)"
    for key in ("filter", "mask"):
        if node.get(key, "none").strip() not in ("none", ""):
            return f"its own {key}"
    if _dashes(node.get("stroke-dasharray", "")):
        return "a dashed stroke"
    for key, default in (("fill", "black"), ("stroke", None)):
        source, _ = paint(node.get(key, default))
        if source in surface.patterns:
            return f"a pattern {key}"
        if source in surface.gradients:
            update_def_href(surface, source, surface.gradients)
            if surface.gradients[source].get("gradientUnits") != "userSpaceOnUse":
                return f"a {key} gradient in objectBoundingBox units"
    return None


def _dashes(value: str) -> bool:
    """A dash array that dashes (CairoSVG ignores one that sums to zero)."""
    parts = value.replace(",", " ").split()
    try:
        return bool(parts) and sum(abs(float(p.rstrip("px") or 0)) for p in parts) > 0
    except ValueError:
        return bool(parts)


CLIP_SLACK = 4  # device rows


def _crop_to(layer: Layer, window: tuple) -> Layer:
    """A layer cut down to ``window`` (y0, y1, x0, x1)."""
    box, pixels = layer
    if box is None:
        return layer
    y0, y1 = max(box[0], window[0]), min(box[1], window[1])
    x0, x1 = max(box[2], window[2]), min(box[3], window[3])
    if y0 >= y1 or x0 >= x1:
        return NO_LAYER
    return Layer((y0, y1, x0, x1), np.ascontiguousarray(
        pixels[y0 - box[0]:y1 - box[0], x0 - box[2]:x1 - box[2]]))


class _ExtentsProbe:
    """Stands in for the cairo context while CairoSVG draws: fills and strokes record their
    device-space extents instead of painting; everything else goes to the real context."""

    def __init__(self, context, size: int):
        self._context = context
        self._size = size
        self.box: list[float] | None = None
        self.bent_fill = self.bent_stroke = False
        self.pieces: list | None = None    # encoded device paths, measured one by one
        self.results: list = []

    def __getattr__(self, name):
        return getattr(self._context, name)

    def _add(self, x0, y0, x1, y1):
        if x1 <= x0 and y1 <= y0:
            return
        points = [self._context.user_to_device(x, y)
                  for x, y in ((x0, y0), (x1, y0), (x0, y1), (x1, y1))]
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        box = [min(ys), max(ys), min(xs), max(xs)]
        if self.box is None:
            self.box = box
        else:
            self.box = [min(self.box[0], box[0]), max(self.box[1], box[1]),
                        min(self.box[2], box[2]), max(self.box[3], box[3])]

    def _each_piece(self, extents, kind: str):
        """Measure every piece: set it as the current path (device space), restore the
        drawing's matrix (stroke widths are in user space) and ask cairo."""
        context = self._context
        matrix = context.get_matrix()
        assert self.pieces is not None  # the callers measure pieces only when there are some
        for i, encoded in enumerate(self.pieces):
            context.new_path()
            context.identity_matrix()
            _append_encoded(context, encoded)
            context.set_matrix(matrix)
            self.box, self.bent_fill, self.bent_stroke = self.results[i]
            self._add(*extents())
            if kind == "fill":
                self._shape()
            self.results[i] = [self.box, self.bent_fill, self.bent_stroke]
        context.new_path()

    def fill_preserve(self):
        if self.pieces is not None:
            return self._each_piece(self._context.fill_extents, "fill")
        self._add(*self._context.fill_extents())
        self._shape()

    def _shape(self):
        """Whether the path is rectilinear in device space, for fills (open subpaths
        close with a line) and for strokes: cairo draws rectilinear paths with exact box
        coverage, any other with its 15-row sampling - a choice made per whole path."""
        context = self._context
        matrix = context.get_matrix()
        context.identity_matrix()
        path = context.copy_path()
        context.set_matrix(matrix)
        start = last = None
        for kind, points in path:
            if kind == 0:  # move to
                if start is not None and last != start and start[0] != last[0] \
                        and start[1] != last[1]:
                    self.bent_fill = True
                start = last = points
            elif kind == 1:  # line to
                if last is not None and points[0] != last[0] and points[1] != last[1]:
                    self.bent_fill = self.bent_stroke = True
                last = points
            elif kind == 2:  # curve to
                self.bent_fill = self.bent_stroke = True
                last = points[-2:]
            elif kind == 3 and start is not None:  # close path
                if last[0] != start[0] and last[1] != start[1]:
                    self.bent_fill = self.bent_stroke = True
                last = start
        if start is not None and last != start and last[0] != start[0] \
                and last[1] != start[1]:
            self.bent_fill = True

    def fill(self):
        self.fill_preserve()
        self._context.new_path()

    def stroke_preserve(self):
        if self.pieces is not None:
            return self._each_piece(self._context.stroke_extents, "stroke")
        self._add(*self._context.stroke_extents())
        self._shape()

    def stroke(self):
        self.stroke_preserve()
        self._context.new_path()

    def _everything(self, *args, **kwargs):
        self.box = [0.0, float(self._size), 0.0, float(self._size)]

    paint = paint_with_alpha = mask = mask_surface = _everything


@functools.lru_cache(maxsize=1)
def _subpath_surface_class():
    base = _surface_class()

    class SubpathSurface(base):
        """Draws only the elements marked with ``CAPTURE_ATTR`` named in ``self.job``
        (mark -> work), each as CairoSVG would with other path data, and nothing else:
        - ``("boxes", [d, ...])``: the device box (y0, y1, x0, x1, floats) of what each
          path data would fill or stroke with whether it is bent (not rectilinear) for
          fills and for strokes, or None; or the reason the path is not local;
        - ``("windows", (pieces, [((y0, y1, x0, x1), subpaths, arcs, bend), ...]))``:
          the path data made of those ``pieces`` (indices) drawn alone, clipped to its window of
          whole device pixels, with the curve
          tolerance of a path that has an arc when ``arcs``, made non-rectilinear when
          ``bend`` ("fill" or "both", see _bend): (box, RGBA crop) as layers are.
        Marked elements must not sit under a group effect (see render_captured_layers)."""

        job: dict = {}
        canvas: int = 0

        def __init__(self, *args, **kwargs):
            self.results = {}
            super().__init__(*args, **kwargs)

        def draw(self, node):
            mark = node.get(CAPTURE_ATTR)
            if mark is None:
                return super().draw(node)
            if mark not in self.job or mark in self.results:
                return None
            kind, work = self.job[mark]
            original = node.get("d")
            try:
                if kind == "boxes":
                    self.results[mark] = self._boxes(node, work)
                else:
                    pieces, items = work
                    self.results[mark] = self._windows(node, pieces, items)
            finally:
                node["d"] = original
            return None

        def _boxes(self, node, pieces):
            """One draw of the node: the path step builds every piece (CairoSVG's own
            path code), and the fill and stroke steps measure each piece in turn with
            the fill and stroke state CairoSVG set up (see _ExtentsProbe)."""
            import cairosvg.surface as cs

            reason = _nonlocal_reason(self, node)
            if reason is not None:
                return reason
            real = self.context
            real_path = _real_path()
            probe = _ExtentsProbe(real, self.canvas)
            probe.results = [[None, False, False] for _ in pieces]

            def build_all(_surface, _node):
                self.context = real
                try:
                    probe.pieces = [_device_path(self, node, real_path, d) for d in pieces]
                finally:
                    self.context = probe

            self.context = probe
            with _HOOK_LOCK:
                cs.TAGS["path"] = _hook_for(node, build_all, real_path)
                try:
                    super().draw(node)
                finally:
                    self.context = real
                    cs.TAGS["path"] = real_path
            return [None if box is None else (tuple(box), bent_fill, bent_stroke)
                    for box, bent_fill, bent_stroke in probe.results]

        def _windows(self, node, pieces, items):
            """Each window's path is put together from the subpaths' cairo paths, each
            built once (by CairoSVG's own path code) and kept in device space, where
            cairo's fixed-point coordinates copy back exactly."""
            built: dict[int, object] = {}
            real_path = _real_path()

            def build(d):
                return _device_path(self, node, real_path, d)

            def assemble(wanted, extra):
                context = self.context
                for j in wanted:
                    if j not in built:
                        built[j] = build(pieces[j])
                parts = [built[j] for j in wanted]
                if extra:
                    parts.append(build(extra))
                context.new_path()
                matrix = context.get_matrix()
                context.identity_matrix()
                for part in parts:
                    _append_encoded(context, part)
                context.set_matrix(matrix)

            out = []
            with _HOOK_LOCK:
                self._windows_hooked(node, items, assemble, real_path, out)
            return out

        def _windows_hooked(self, node, items, assemble, real_path, out):
            import cairosvg.surface as cs

            try:
                for box, wanted, arcs, bend in items:
                    extra = self._bend(node, box[0] - CLIP_SLACK - 4096, box[2], bend) \
                        if bend else None
                    cs.TAGS["path"] = _hook_for(
                        node, lambda _surface, _node, wanted=wanted, extra=extra:
                        assemble(wanted, extra), real_path)
                    out.append(self._window(node, box, arcs))
            finally:
                cs.TAGS["path"] = real_path

        def _window(self, node, box, arcs):
            y0, y1, x0, x1 = box
            context = self.context
            matrix = context.get_matrix()
            context.save()
            if arcs:
                # CairoSVG sets a fine tolerance on its first arc, and the tolerance in
                # force at fill time flattens every curve of the path: keep it when the
                # path without this subpath still has an arc somewhere.
                context.set_tolerance(0.00001)
            context.identity_matrix()
            # The clip reaches a few rows past the window: cairo's rows at a clip's edge
            # can round differently from the same rows drawn unclipped; only the window's
            # own rows are kept.
            context.rectangle(x0, y0 - CLIP_SLACK, x1 - x0, y1 - y0 + 2 * CLIP_SLACK)
            context.clip()
            context.set_matrix(matrix)
            context.push_group()
            try:
                super().draw(node)
            finally:
                group = context.pop_group()
                context.restore()
            return _crop_to(_crop_group(group.get_surface()), box)

        def _bend(self, node, y, x, kind):
            """Path data far above the window (clipped away) that makes the path
            non-rectilinear like the whole path it stands for: for fills only ("fill":
            an open corner whose closing line is diagonal) or for both ("both")."""
            from cairosvg.helpers import transform

            context = self.context
            context.save()
            transform(self, node.get("transform"),
                      transform_origin=node.get("transform-origin"))
            inverse = context.get_matrix()
            context.restore()
            inverse.invert()
            corner = [(x, y), (x + 8, y), (x + 8, y + 8)] if kind == "fill" else \
                [(x, y), (x + 8, y + 8)]
            points = [inverse.transform_point(px, py) for px, py in corner]
            return "M" + " L".join(f"{px!r} {py!r}" for px, py in points)

    return SubpathSurface


_HOOK_LOCK = threading.Lock()  # one hooked pass at a time in a process


def _real_path():
    from cairosvg.path import path

    return path


def _hook_for(target, hook, real_path):
    """``hook`` in place of CairoSVG's path code for the ``target`` node only. CairoSVG
    looks tags up in a module-wide table, so a hook put there for one pass must not reach
    renders that other threads of this process run meanwhile, nor other paths drawn while
    the target is: a ``clipPath``'s own ``<path>`` children are drawn inside the target's
    draw (the clip would become the target's own outline)."""
    owner = threading.get_ident()

    def path(surface, node):
        if node is target and threading.get_ident() == owner:
            return hook(surface, node)
        return real_path(surface, node)

    return path


def _device_path(surface, node, real_path, d: str):
    """Path data ``d`` of ``node`` built by CairoSVG's own path code, copied in device
    space (cairo's fixed-point values, exactly) and encoded once for cairo."""
    from cairocffi.context import _encode_path

    context = surface.context
    context.new_path()
    node["d"] = d
    real_path(surface, node)
    matrix = context.get_matrix()
    context.identity_matrix()
    items = context.copy_path()
    context.set_matrix(matrix)
    context.new_path()
    return _encode_path(items)


def _append_encoded(context, encoded) -> None:
    """``context.append_path`` for a path encoded once by ``_device_path``: cairocffi
    re-encodes a path in Python on every append, the slowest step of a window."""
    from cairocffi import cairo

    cairo.cairo_append_path(context._pointer, encoded[0])
    context._check_status()


class _InkProbe(_ExtentsProbe):
    """An extents probe for a whole element: a group the element pushed (its opacity, its
    mask) and then paints adds nothing beyond what was drawn into it; any other paint
    (an image, a pattern painted whole) counts as the whole canvas."""

    def __init__(self, context, size: int):
        super().__init__(context, size)
        self._group_source = False

    def pop_group_to_source(self):
        self._context.pop_group_to_source()
        self._group_source = True

    def __getattr__(self, name):
        found = getattr(self._context, name)
        if not name.startswith("set_source"):
            return found

        def set_source(*args, **kwargs):  # any other source: a paint is no group's
            self._group_source = False
            return found(*args, **kwargs)

        return set_source

    def _painted(self, *args, **kwargs):
        if not self._group_source:
            self._everything()

    paint = paint_with_alpha = mask = mask_surface = _painted


@functools.lru_cache(maxsize=1)
def _extents_surface_class():
    base = _surface_class()

    class ExtentsSurface(base):
        """Draws the document, except that each element marked with ``CAPTURE_ATTR`` is
        measured instead of drawn: ``extents[mark]`` is the device box (y0, y1, x0, x1,
        floats) of every fill and stroke it makes (markers included), as cairo reports
        them (a bound of the pixels it inks), or None when it draws nothing."""

        canvas: int = 0

        def __init__(self, *args, **kwargs):
            self.extents = {}
            super().__init__(*args, **kwargs)

        def draw(self, node):
            mark = node.get(CAPTURE_ATTR)
            if mark is None or isinstance(self.context, _ExtentsProbe):
                return super().draw(node)
            real = self.context
            probe = _InkProbe(real, self.canvas)
            self.context = probe
            try:
                super().draw(node)
            finally:
                self.context = real
            self.extents[mark] = None if probe.box is None else tuple(probe.box)
            return None

    return ExtentsSurface


def render_extents(svg_text: str | bytes, size: int, limits: Limits = DEFAULT_LIMITS,
                   name: str = "<input>") -> dict:
    """One pass over ``svg_text`` at ``size`` px: mark -> device box of what each element
    marked with ``CAPTURE_ATTR`` would ink (see ExtentsSurface), nothing of it drawn."""
    surface_class = type("ExtentsJob", (_extents_surface_class(),), {"canvas": size})
    surface, _ = _render_native(svg_text, size, limits, name, surface_class)
    return surface.extents


def render_subpath_work(svg_text: str | bytes, size: int, job: dict,
                        limits: Limits = DEFAULT_LIMITS, name: str = "<input>") -> dict:
    """One render pass over ``svg_text`` doing ``job`` (see SubpathSurface) for each
    marked path; returns mark -> result."""
    surface_class = type("SubpathJob", (_subpath_surface_class(),), {"job": job, "canvas": size})
    surface, _ = _render_native(svg_text, size, limits, name, surface_class)
    return surface.results


# --- the second opinion: resvg, a browser-grade renderer ----------------------------------
#
# resvg (Rust; the ``resvg`` PyPI binding) draws filters, CSS Color 4 values and
# percentages as browsers do. It is only ever called here, inside the render workers, under
# the same memory, CPU and time limits as CairoSVG. Its default image loader reads files
# (relative to the working folder, and absolute paths): every href that would leave the
# document is removed from the copy it draws, so it fetches nothing, as CairoSVG's fetcher.

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_ALLOWED_DATA = ("data:image/png", "data:image/jpeg", "data:image/jpg")


@functools.lru_cache(maxsize=1)
def _resvg_options():
    """resvg options, built once per worker: system fonts loaded, and a default family
    that exists here (resvg's own default, Times New Roman, often does not)."""
    from resvg import usvg

    options = usvg.Options.default()
    options.load_system_fonts()
    fonts = options.list_fonts()
    if fonts and options.font_family not in fonts:
        serif = [f for f in fonts if "serif" in f.lower() and "sans" not in f.lower()]
        options.font_family = (serif or fonts)[0]
    return options


# CSS generic font families. resvg's font database maps them to fixed names (sans-serif to
# Arial, serif to Times New Roman...), often not installed, and the binding does not let
# that map be set; CairoSVG (through cairo) and browsers ask fontconfig. resvg's copy of a
# document names fontconfig's family before each generic one it uses.
_GENERICS = ("sans-serif", "serif", "monospace", "cursive", "fantasy")
_GENERIC_RE = re.compile(r"(?<![\w'\"-])(" + "|".join(_GENERICS) + r")(?![\w'\"-])",
                         re.IGNORECASE)
_ANY_GENERIC = re.compile(rb"serif|monospace|cursive|fantasy", re.IGNORECASE)  # raw text
_FONT_FAMILY_DECL = re.compile(r"(font-family\s*:\s*)([^;}]*)", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def generic_families() -> dict[str, str]:
    """Generic family -> the family fontconfig gives it (``fc-match``), where resvg has
    that family loaded; empty without fontconfig."""
    import shutil
    import subprocess

    if shutil.which("fc-match") is None:
        return {}
    loaded = set(_resvg_options().list_fonts())
    out = {}
    for generic in _GENERICS:
        try:
            family = subprocess.run(["fc-match", "-f", "%{family[0]}", generic],
                                    capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if family in loaded:
            out[generic] = family
    return out


def resolve_generic_families(value: str, families: Mapping[str, str]) -> str:
    """A font-family list with fontconfig's family named before each generic family."""
    def named(m: re.Match) -> str:
        family = families.get(m.group(1).lower())
        return f"'{family}', {m.group(1)}" if family else m.group(1)
    return _GENERIC_RE.sub(named, value)


def _resolve_fonts(node, families: Mapping[str, str]) -> None:
    if node.get("font-family"):
        node.set("font-family", resolve_generic_families(node.get("font-family"), families))
    declared = node.get("style")
    if declared and "font-family" in declared.lower():
        node.set("style", _FONT_FAMILY_DECL.sub(
            lambda m: m.group(1) + resolve_generic_families(m.group(2), families), declared))
    if isinstance(node.tag, str) and node.tag.rsplit("}", 1)[-1] == "style" and node.text:
        node.text = _FONT_FAMILY_DECL.sub(
            lambda m: m.group(1) + resolve_generic_families(m.group(2), families), node.text)


def _inside_only(value: str | None, limits: Limits) -> bool:
    """An href resvg may follow: a fragment of this document, or a small PNG/JPEG."""
    if value is None:
        return True
    value = value.strip()
    if value.startswith("#"):
        return True
    head = value[:40].lower().replace(" ", "")
    return head.startswith(_ALLOWED_DATA) and len(value) <= limits.max_data_image_bytes * 4 // 3 + 64


def resvg_input(svg_text: str | bytes, size: int, limits: Limits, name: str) -> bytes:
    """The copy of a document resvg draws: external hrefs removed, and the root made a
    ``size`` x ``size`` viewport around the document's viewBox (or its own width and
    height), so the picture lands where CairoSVG puts it with ``output_width`` and
    ``output_height`` (fitted by the root's preserveAspectRatio)."""
    from lxml import etree

    from svgloo.engine.rendering.normalize import normalize_modern

    data = _utf8_bytes(svg_text) if isinstance(svg_text, str) else svg_text
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise RenderError(name, f"second renderer could not parse the document: {exc}") from None
    families = generic_families() if _ANY_GENERIC.search(data) else {}
    for node in root.iter():
        if not isinstance(node.tag, str):
            continue
        for key in ("href", _XLINK_HREF):
            if not _inside_only(node.get(key), limits):
                del node.attrib[key]
        if families:
            _resolve_fonts(node, families)
    if root.get("viewBox") is None:
        width, height = root_size(root.get("width")), root_size(root.get("height"))
        if width and height:
            root.set("viewBox", f"0 0 {width!r} {height!r}")
    root.set("width", str(size))
    root.set("height", str(size))
    return normalize_modern(etree.tostring(root))


_UNIT_PX = {"": 1.0, "px": 1.0, "pt": 96 / 72, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54,
            "in": 96.0}


def root_size(value: str | None) -> float | None:
    """A root width/height in px (absolute units only; CairoSVG's 96 dpi), or None."""
    import re

    m = re.fullmatch(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-z]*)\s*",
                     value or "")
    if not m or m.group(2) not in _UNIT_PX:
        return None
    number = float(m.group(1)) * _UNIT_PX[m.group(2)]
    return number if number > 0 else None


def render_rgba_resvg(svg_text: str | bytes, size: int = DEFAULT_RENDER_SIZE, limits: Limits = DEFAULT_LIMITS,
                      name: str = "<input>") -> np.ndarray:
    """Render with resvg to a (size, size, 4) uint8 array of premultiplied R, G, B, A, the
    layout render_rgba returns. The binding hands back a PNG (straight alpha): it is decoded
    and premultiplied here (to within 1/255 of resvg's own premultiplied pixels)."""
    import io

    from PIL import Image
    from resvg import render, usvg

    size = max(1, min(int(size), limits.max_render_size))
    text = resvg_input(svg_text, size, limits, name)
    try:
        tree = usvg.Tree.from_str(text.decode("utf-8"), _resvg_options())
        png = render(tree, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0), bg_size=(size, size))
    except MemoryError:
        raise RenderError(name, "second renderer (resvg) ran out of memory") from None
    except BaseException as exc:  # the binding raises ValueError, or pyo3's PanicException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise RenderError(name, f"second renderer (resvg) failed: {type(exc).__name__}: "
                                f"{exc}") from None
    with Image.open(io.BytesIO(bytes(png))) as image:
        straight = np.asarray(image.convert("RGBA"))
    canvas = np.zeros((size, size, 4), np.uint8)
    h, w = min(size, straight.shape[0]), min(size, straight.shape[1])
    canvas[:h, :w] = straight[:h, :w]
    alpha = canvas[..., 3:4].astype(np.uint16)
    canvas[..., :3] = (canvas[..., :3] * alpha + 127) // 255
    return canvas
