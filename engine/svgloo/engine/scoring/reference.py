"""Which reference a document is scored against, shared by every front end.

Order: an explicit ``--reference FILE`` or ``--prompt TEXT``; else an ``svgloo.toml`` in
the file's folder or a parent that maps the file (by name or glob) to a reference; else a
sidecar ``<stem>.ref.png|.ref.jpg|.ref.svg`` next to the file; else the document's own
``<title>``/``<desc>`` when the backbone reads text; else self-analysis (the reference is
the full render, so every unit's delta is >= 0: only helpful/neutral and "no visible
effect" can come out).

``svgloo.toml``::

    [references]
    "cat.svg" = "refs/cat.png"               # an image or SVG file, relative to this file
    "icons/*.svg" = { prompt = "a flat icon of a bell" }
    "logos/**/*.svg" = { image = "refs/logo.png" }

Files svgloo finds by itself (the ``svgloo.toml``, a sidecar) are read only when they are
regular files that resolve inside the folder they were found in (a link to
``/dev/zero``, a FIFO or a link out of the folder is an error naming the file, never a
hang); every reference image is read bounded (``MAX_REFERENCE_BYTES``) and non-blocking.
"""

from __future__ import annotations

import fnmatch
import io
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from svgloo.engine.protocols import Reference
from svgloo.engine.result_types import Reference as ReferenceJson
from svgloo.engine.result_types import ReferenceKind

from svgloo.engine.reading.document import Document
from svgloo.engine.errors import ConfigError, SvglooError
from svgloo.engine.reading.files import read_regular_file
from svgloo.engine.limits import DEFAULT_LIMITS

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser under its older name
    import tomli as tomllib

CONFIG_NAME = "svgloo.toml"
SIDECAR_SUFFIXES = (".ref.png", ".ref.jpg", ".ref.jpeg", ".ref.svg")
MAX_CONFIG_BYTES = 1024 * 1024
# A 40-megapixel reference (the pixel limit) is below this as PNG or JPEG; the header
# check then bounds what decoding costs.
MAX_REFERENCE_BYTES = 128 * 1024 * 1024


@dataclass(frozen=True)
class ReferenceSpec:
    """A resolved but not yet loaded reference."""

    kind: ReferenceKind  # "image", "text" or "self"
    source: str          # human-readable origin
    path: str | None = None
    text: str | None = None
    within: str | None = None  # found by svgloo in this folder: must resolve inside it

    def to_json(self) -> ReferenceJson:
        return {"kind": self.kind, "source": self.source}


def find_config(start: Path) -> Path | None:
    """The nearest ``svgloo.toml`` in ``start`` or a parent. Anything there but a folder
    counts (a FIFO or a dangling link too), so ``load_config`` can say what is wrong
    with it instead of it being silently skipped."""
    for folder in [start, *start.parents]:
        candidate = folder / CONFIG_NAME
        if os.path.lexists(candidate) and not candidate.is_dir():
            return candidate
    return None


def load_config(path: Path) -> dict:
    path = Path(path)
    try:
        data = read_regular_file(path, MAX_CONFIG_BYTES, within=path.parent)
        return tomllib.loads(data.decode("utf-8"))
    except SvglooError as exc:
        raise ConfigError(str(path), f"cannot read project config: {exc.message}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(str(path), f"cannot read project config: {exc}") from None


def _match_config(svg_path: Path, config_path: Path) -> ReferenceSpec | None:
    config = load_config(config_path)
    table = config.get("references", {})
    if not isinstance(table, dict):
        raise ConfigError(str(config_path), "[references] must be a table of glob = reference")
    base = config_path.parent
    try:
        rel = svg_path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        rel = svg_path.name
    for pattern, value in table.items():
        if not (fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(svg_path.name, pattern)):
            continue
        where = f"{config_path}: {pattern}"
        if isinstance(value, str):
            return ReferenceSpec("image", where, path=str((base / value)))
        if isinstance(value, dict) and "prompt" in value:
            return ReferenceSpec("text", where, text=str(value["prompt"]))
        if isinstance(value, dict) and "image" in value:
            return ReferenceSpec("image", where, path=str(base / value["image"]))
        raise ConfigError(str(config_path), f"reference for {pattern!r} must be a file path, "
                                            "{ prompt = ... } or { image = ... }")
    return None


def title_text(doc: Document) -> str | None:
    """The root's <title> and <desc>, joined; None when both are absent or empty."""
    parts = []
    for child in doc.root:
        if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] in ("title", "desc"):
            text = " ".join("".join(child.itertext()).split())
            if text:
                parts.append(text)
    return ". ".join(parts) or None


def resolve_reference(svg_path: str | None, doc: Document | None, *, takes_text: bool,
                      reference: str | None = None, prompt: str | None = None) -> ReferenceSpec:
    if reference and prompt:
        raise ConfigError(svg_path, "give either a reference file or a prompt, not both")
    if reference:
        return ReferenceSpec("image", f"--reference {reference}", path=reference)
    if prompt:
        return ReferenceSpec("text", "--prompt", text=prompt)
    if svg_path and not svg_path.startswith("<"):
        path = Path(svg_path)
        config = find_config(path.parent if path.parent != Path("") else Path("."))
        if config:
            spec = _match_config(path, config)
            if spec:
                return spec
        stem = path.name[:-len(path.suffix)] if path.suffix else path.name
        for suffix in SIDECAR_SUFFIXES:
            sidecar = path.with_name(stem + suffix)
            if os.path.lexists(sidecar) and not sidecar.is_dir():
                return ReferenceSpec("image", f"sidecar {sidecar.name}", path=str(sidecar),
                                     within=str(sidecar.parent))
    if takes_text and doc is not None:
        text = title_text(doc)
        if text:
            return ReferenceSpec("text", "<title>/<desc>", text=text)
    return ReferenceSpec("self", "self-analysis (no reference found: the full render is the "
                                 "reference, so units can only be helpful or neutral)")


def letterbox(rgb: np.ndarray, size: int) -> np.ndarray:
    """Fit an RGB image into size x size on white, aspect kept, centred (like a render)."""
    from PIL import Image

    h, w = rgb.shape[:2]
    scale = min(size / w, size / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    resized = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.Resampling.LANCZOS))
    canvas = np.full((size, size, 3), 255, np.uint8)
    y0, x0 = (size - nh) // 2, (size - nw) // 2
    canvas[y0:y0 + nh, x0:x0 + nw] = resized
    return canvas


def load_image_reference(path: str, size: int, render_svg,
                         max_pixels: int = DEFAULT_LIMITS.max_reference_pixels,
                         within: str | None = None) -> np.ndarray:
    """RGB uint8 (size, size, 3). ``render_svg(path) -> RGB`` renders SVG references the
    same way as the documents (safely, in the worker pool). ``within``: the folder a
    found reference (a sidecar) must resolve inside.

    The file is read bounded and non-blocking (a FIFO or device is refused unread); the
    image's header is checked before anything is decoded (a 128-byte PNG can claim
    20000 x 20000 pixels), and large images are reduced while decoding where the format
    allows it (JPEG draft mode), so memory stays near ``max_pixels`` x 4 bytes."""
    p = Path(path)
    if not os.path.lexists(p):
        raise ConfigError(path, "reference file not found")
    svg = p.suffix.lower() in (".svg", ".svgz")
    try:  # an SVG is only checked here: the renderer reads it, with the same checks
        data = read_regular_file(p, DEFAULT_LIMITS.max_file_bytes if svg
                                 else MAX_REFERENCE_BYTES, within=within)
    except SvglooError as exc:
        raise ConfigError(path, f"cannot read reference: {exc.message}") from None
    if svg:
        return render_svg(path)
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # the size check below says it better
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data))
        with im:
            w, h = im.size
            if w * h > max_pixels:
                raise ConfigError(path, f"reference image is {w} x {h} pixels; the limit is "
                                        f"{max_pixels} pixels (scale it down)")
            im.draft("RGB", (size, size))  # JPEG: decode at a reduced scale
            im.load()
            if max(im.size) > 4 * size:
                im.thumbnail((4 * size, 4 * size))  # letterbox needs no more than this
            rgba = im.convert("RGBA")
    except Image.DecompressionBombError:  # PIL refuses to even open it
        assert Image.MAX_IMAGE_PIXELS is not None  # PIL raises this only under a limit
        raise ConfigError(path, f"reference image is more than {2 * Image.MAX_IMAGE_PIXELS} "
                                f"pixels; the limit is {max_pixels} pixels (scale it "
                                "down)") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ConfigError(path, f"cannot read reference image: {exc}") from None
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    rgb = np.asarray(Image.alpha_composite(white, rgba).convert("RGB"))
    return letterbox(rgb, size)


def load_reference(spec: ReferenceSpec, size: int, full_render: np.ndarray,
                   render_svg) -> Reference:
    if spec.kind == "text":
        return Reference("text", spec.source, text=spec.text)
    if spec.kind == "self":
        return Reference("self", spec.source, image=full_render)
    assert spec.path is not None  # an image reference is a file
    return Reference("image", spec.source, image=load_image_reference(
        spec.path, size, render_svg, within=spec.within))
