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
"""

from __future__ import annotations

import fnmatch
import tomllib
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from svgloo.engine.protocols import Reference

from svgloo.engine.document import Document
from svgloo.engine.errors import ConfigError
from svgloo.engine.limits import DEFAULT_LIMITS

CONFIG_NAME = "svgloo.toml"
SIDECAR_SUFFIXES = (".ref.png", ".ref.jpg", ".ref.jpeg", ".ref.svg")


@dataclass(frozen=True)
class ReferenceSpec:
    """A resolved but not yet loaded reference."""

    kind: str            # "image", "text" or "self"
    source: str          # human-readable origin
    path: str | None = None
    text: str | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "source": self.source}


def find_config(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def load_config(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
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
            if sidecar.is_file():
                return ReferenceSpec("image", f"sidecar {sidecar.name}", path=str(sidecar))
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
                         max_pixels: int = DEFAULT_LIMITS.max_reference_pixels) -> np.ndarray:
    """RGB uint8 (size, size, 3). ``render_svg(path) -> RGB`` renders SVG references the
    same way as the documents (safely, in the worker pool).

    The image's header is checked before anything is decoded (a 128-byte PNG can claim
    20000 x 20000 pixels), and large images are reduced while decoding where the format
    allows it (JPEG draft mode), so memory stays near ``max_pixels`` x 4 bytes."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(path, "reference file not found")
    if p.suffix.lower() in (".svg", ".svgz"):
        return render_svg(path)
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # the size check below says it better
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(p)
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
    return Reference("image", spec.source, image=load_image_reference(spec.path, size,
                                                                      render_svg))
