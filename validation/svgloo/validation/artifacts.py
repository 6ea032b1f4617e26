"""Artifact injection and detection: the validation harness behind ``svgloo bench artifacts``.

The protocol follows the paper: each file gets K = 3 artifacts, one of each kind, and
detectors flag K units. Injection tries not to give itself away:

- ``shape``: a filled ``<path>`` (polygon, ellipse of four cubic arcs, or rectangle)
  5-25% of the view box, its fill a colour of the file's own palette;
- ``stray``: a thin stroked ``<path>`` (polyline or cubic bezier) in a palette colour;
- ``duplicate``: a copy of an existing leaf element (ids removed), wrapped in
  ``<g transform="translate(dx dy)">`` and inserted among that element's siblings.

Shapes and strays go at a random slot among the children of a random drawn container
(the root or any ``<g>`` outside defs), so at a random depth; their coordinates are
mapped through the container's transforms so they land where intended in the picture.
Each artifact's markup carries ``data-svgloo-artifact="KIND"`` and
``data-svgloo-artifact-id="N"`` (no rendering effect; the syntax prior ignores them); after
parsing, the units inside a marked element are the ground truth.

Detectors rank the units of the injected document (lowest = most suspicious) and flag the
K lowest units of K distinct elements (the subpaths of one path count once):

- ``loo``: the leave-one-out delta against a reference (the engine's score);
- ``isolated``: the unit rendered alone, scored against the reference;
- ``prefix``: S(units before i, plus i) - S(units before i) against the reference;
- ``random``: a seeded random ranking;
- ``last_k``: the last units in z-order (no rendering);
- ``syntax``: a syntax prior (no rendering): a colour used nowhere else in the file,
  markup or path data that occurs twice, a rect/circle/ellipse tag; ties go to later
  units.

References (``SETTINGS``): ``oracle`` = the clean render; ``degraded`` = the clean render
downscaled 4x, blurred and JPEG-compressed (``degrade``); ``cross`` = the render of the
same emoji from the other emoji set in the corpus (``counterpart``), where there is one.
"""

from __future__ import annotations

import io
import math
import random
import re
from dataclasses import dataclass, field

import numpy as np

from svgloo.engine.reading.document import SVG_NS, Document, parse_document
from svgloo.engine.settings import DEFAULT_RENDER_SIZE
from svgloo.engine.reading.units import (LEAF_TAGS, NON_RENDERING, TextEdit, UnitSet, apply_edits,
                                         extract_units)

KINDS = ("shape", "stray", "duplicate")
DETECTORS = ("loo", "isolated", "prefix", "random", "last_k", "syntax")
RENDERING_DETECTORS = ("loo", "isolated", "prefix")
SETTINGS = ("oracle", "degraded", "cross")
ATTR = "data-svgloo-artifact"
ATTR_ID = "data-svgloo-artifact-id"
_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ID_ATTR = re.compile(r"""\s(?:id|xml:id)\s*=\s*(["']).*?\1""", re.S)
_ARTIFACT_ATTRS = re.compile(r"""\sdata-svgloo-artifact(?:-id)?\s*=\s*(["']).*?\1""")
_PAINT = re.compile(r"""(?:fill|stroke|stop-color)\s*(?:=\s*["']|:)\s*"""
                    r"""(#[0-9a-fA-F]{3,8}\b|rgba?\([^)]*\)|[a-zA-Z]+)""")
_NOT_COLOURS = {"none", "transparent", "currentcolor", "inherit", "url", "initial", "unset"}


@dataclass
class Artifact:
    id: int
    kind: str
    markup: str
    offset: int          # where it was inserted in the clean text
    source: int | None = None  # duplicated element index (clean document)
    depth: int = 1       # 1 = a child of the root, 2 = inside one group, ...


@dataclass
class Injection:
    text: str
    artifacts: list[Artifact]
    doc: Document | None = field(repr=False, default=None)
    units: UnitSet | None = field(repr=False, default=None)
    truth: dict[int, set[int]] = field(default_factory=dict)   # artifact id -> unit indices

    def artifact_of_unit(self) -> dict[int, int]:
        return {u: a for a, us in self.truth.items() for u in us}


# --- geometry of the document -----------------------------------------------------------

def _length(value: str | None) -> float | None:
    if not value:
        return None
    m = _NUM.match(value.strip())
    if not m or value.strip().endswith("%"):
        return None
    return float(m.group(0))


def view_box(doc: Document) -> tuple[float, float, float, float]:
    """(x, y, width, height) of the root's user space: the viewBox, else width/height,
    else 100 x 100 (CairoSVG's fallback is similar)."""
    vb = doc.root.get("viewBox")
    if vb:
        nums = [float(n) for n in _NUM.findall(vb)]
        if len(nums) == 4 and nums[2] > 0 and nums[3] > 0:
            return nums[0], nums[1], nums[2], nums[3]
    w, h = _length(doc.root.get("width")), _length(doc.root.get("height"))
    if w and h:
        return 0.0, 0.0, w, h
    return 0.0, 0.0, 100.0, 100.0


def _is_drawn(doc: Document, i: int) -> bool:
    el = doc.elements[i]
    return el.namespace in (SVG_NS, None) and el.tag not in NON_RENDERING


def closing_tag_start(doc: Document, i: int) -> int | None:
    """Offset of ``</tag>`` of element ``i``; None when it is self-closing."""
    el = doc.elements[i]
    if el.start_tag_end >= el.end:
        return None
    return doc.text.rfind("<", el.start_tag_end, el.end)


def _drawn_ancestry(doc: Document, i: int) -> bool:
    node = doc.nodes[i]
    while node is not None:
        j = doc.index_of(node)
        if not _is_drawn(doc, j):
            return False
        node = node.getparent()
    return True


# --- the file's own look ------------------------------------------------------------------

def palette(doc: Document) -> list[str]:
    """The file's paint colours (fill, stroke, stop-color values; first-seen order);
    black when it names none (it then draws with the default black fill)."""
    seen: dict[str, None] = {}
    for m in _PAINT.finditer(_ARTIFACT_ATTRS.sub("", doc.text)):
        value = m.group(1)
        if value.lower() not in _NOT_COLOURS:
            seen.setdefault(value, None)
    return list(seen) or ["#000000"]


def paints_with_style(doc: Document) -> bool:
    """True when the file sets fill/stroke in ``style`` more often than as attributes."""
    text = _ARTIFACT_ATTRS.sub("", doc.text)
    in_style = len(re.findall(r"style\s*=\s*[\"'][^\"']*(?:fill|stroke)\s*:", text))
    as_attr = len(re.findall(r"\s(?:fill|stroke)\s*=", text))
    return in_style > as_attr


def _paint(decls: list[tuple[str, str]], style: bool) -> str:
    if style:
        return 'style="' + ";".join(f"{k}:{v}" for k, v in decls) + '"'
    return " ".join(f'{k}="{v}"' for k, v in decls)


def containers(doc: Document) -> list[int]:
    """Element indices of drawn containers an artifact may go into: the root and every
    ``<g>`` whose ancestors all draw (not inside defs, clipPath, mask...)."""
    out = [0]
    for i, el in enumerate(doc.elements):
        if i and el.tag == "g" and el.namespace in (SVG_NS, None) and _drawn_ancestry(doc, i):
            out.append(i)
    return out


def container_matrix(doc: Document, container: int) -> np.ndarray:
    """Matrix from the container's user space (its children's) to the root's."""
    from svgloo.validation.transforms import parse_transform

    chain = []
    node = doc.nodes[container]
    while node is not None and node is not doc.root:
        chain.append(node.get("transform"))
        node = node.getparent()
    m = np.eye(3)
    for value in reversed(chain):
        m = m @ parse_transform(value)
    return m


def container_slots(doc: Document, container: int) -> list[int]:
    """Offsets before each child element of a container and before its closing tag."""
    close = closing_tag_start(doc, container)
    if close is None:
        return []
    kids = [doc.elements[doc.index_of(c)].start for c in doc.nodes[container]
            if isinstance(c.tag, str)]
    return kids + [close]


def depth(doc: Document, element: int) -> int:
    """0 for the root, 1 for its children, ..."""
    d, node = 0, doc.nodes[element]
    while node.getparent() is not None:
        d, node = d + 1, node.getparent()
    return d


# --- markup generators ----------------------------------------------------------------

def _f(x: float) -> str:
    return f"{x:.4g}"


def _to_local(inverse: np.ndarray, pts) -> list[tuple[float, float]]:
    out = []
    for x, y in pts:
        v = inverse @ np.array([x, y, 1.0])
        out.append((float(v[0]), float(v[1])))
    return out


def _path_d(cmds) -> str:
    """``[("M", [(x, y)]), ("C", [...]), ("L", ...), ("Z", [])]`` as path data."""
    parts = []
    for op, pts in cmds:
        parts.append(op + " ".join(f"{_f(x)} {_f(y)}" for x, y in pts))
    return "".join(parts)


def _scale_of(m: np.ndarray) -> float:
    return math.sqrt(abs(np.linalg.det(m[:2, :2]))) or 1.0


def shape_markup(rng: random.Random, vb, aid: int, colour: str,
                 to_root: np.ndarray | None = None, style: bool = False) -> str:
    """A filled path (polygon, ellipse or rectangle) in root coordinates, written in the
    coordinates of the container whose matrix to the root is ``to_root``."""
    x0, y0, w, h = vb
    m = min(w, h)
    size = rng.uniform(0.05, 0.25) * m
    cx, cy = x0 + rng.uniform(0.1, 0.9) * w, y0 + rng.uniform(0.1, 0.9) * h
    inv = np.linalg.inv(to_root if to_root is not None else np.eye(3))
    form = rng.choice(("polygon", "ellipse", "rect"))
    if form == "polygon":
        n = rng.randint(3, 6)
        start = rng.uniform(0, 2 * math.pi)
        pts = [(cx + size / 2 * rng.uniform(0.6, 1.0) * math.cos(start + 2 * math.pi * k / n),
                cy + size / 2 * rng.uniform(0.6, 1.0) * math.sin(start + 2 * math.pi * k / n))
               for k in range(n)]
        pts = _to_local(inv, pts)
        cmds = [("M", pts[:1]), ("L", pts[1:]), ("Z", [])]
    elif form == "rect":
        rw, rh = size, size * rng.uniform(0.5, 1.5)
        pts = _to_local(inv, [(cx - rw / 2, cy - rh / 2), (cx + rw / 2, cy - rh / 2),
                              (cx + rw / 2, cy + rh / 2), (cx - rw / 2, cy + rh / 2)])
        cmds = [("M", pts[:1]), ("L", pts[1:]), ("Z", [])]
    else:
        rx, ry = size / 2, size / 2 * rng.uniform(0.4, 0.9)
        k = 0.5523   # cubic approximation of a quarter ellipse
        ring = [(cx + rx, cy), (cx + rx, cy + k * ry), (cx + k * rx, cy + ry), (cx, cy + ry),
                (cx - k * rx, cy + ry), (cx - rx, cy + k * ry), (cx - rx, cy),
                (cx - rx, cy - k * ry), (cx - k * rx, cy - ry), (cx, cy - ry),
                (cx + k * rx, cy - ry), (cx + rx, cy - k * ry), (cx + rx, cy)]
        pts = _to_local(inv, ring)
        cmds = [("M", pts[:1])] + [("C", pts[i:i + 3]) for i in range(1, 13, 3)] + [("Z", [])]
    return (f'<path d="{_path_d(cmds)}" {_paint([("fill", colour)], style)} {ATTR}="shape" '
            f'{ATTR_ID}="{aid}"/>')


def stray_markup(rng: random.Random, vb, aid: int, colour: str,
                 to_root: np.ndarray | None = None, style: bool = False) -> str:
    x0, y0, w, h = vb
    m = min(w, h)
    span = rng.uniform(0.15, 0.4) * m
    sx, sy = x0 + rng.uniform(0.1, 0.9) * w, y0 + rng.uniform(0.1, 0.9) * h
    to_root = to_root if to_root is not None else np.eye(3)
    inv = np.linalg.inv(to_root)

    def pt():
        return (sx + rng.uniform(-span, span), sy + rng.uniform(-span, span))

    width = rng.uniform(0.01, 0.02) * m / _scale_of(to_root)
    if rng.random() < 0.5:
        pts = _to_local(inv, [(sx, sy)] + [pt() for _ in range(rng.randint(2, 4))])
        cmds = [("M", pts[:1]), ("L", pts[1:])]
    else:
        pts = _to_local(inv, [(sx, sy), pt(), pt(), pt()])
        cmds = [("M", pts[:1]), ("C", pts[1:])]
    paint = _paint([("fill", "none"), ("stroke", colour), ("stroke-width", _f(width)),
                    ("stroke-linecap", "round")], style)
    return f'<path d="{_path_d(cmds)}" {paint} {ATTR}="stray" {ATTR_ID}="{aid}"/>'



def duplicate_markup(doc: Document, element: int, rng: random.Random, vb, aid: int) -> str:
    x0, y0, w, h = vb
    m = min(w, h)
    dx = rng.choice((-1, 1)) * rng.uniform(0.08, 0.2) * m
    dy = rng.choice((-1, 1)) * rng.uniform(0.08, 0.2) * m
    copy = _ID_ATTR.sub("", doc.span_text(element))
    return (f'<g transform="translate({_f(dx)} {_f(dy)})" {ATTR}="duplicate" '
            f'{ATTR_ID}="{aid}">{copy}</g>')


# --- injection -------------------------------------------------------------------------

def inject_artifacts(text: str, name: str, rng: random.Random, count: int = 3,
                     kinds: tuple[str, ...] = KINDS) -> Injection:
    """Insert ``count`` artifacts: one of each kind in ``kinds`` (in a random order)
    while they last, then random kinds; shapes and strays at a random slot of a random
    drawn container, duplicates among their source's siblings. Parse the result and find
    the units each artifact contributes."""
    doc = parse_document(text, name)
    vb = view_box(doc)
    if closing_tag_start(doc, 0) is None:
        from svgloo.engine.errors import InputError
        raise InputError(name, "the root <svg> is empty: nothing to inject among")
    boxes = [c for c in containers(doc) if container_slots(doc, c)]
    colours = palette(doc)
    style = paints_with_style(doc)
    leaves = [u.element for u in extract_units(doc, False).units
              if doc.elements[u.element].tag in LEAF_TAGS and _drawn_ancestry(doc, u.element)]
    order = list(kinds)
    rng.shuffle(order)
    plan = [order[i] if i < len(order) else rng.choice(kinds) for i in range(count)]
    edits: list[TextEdit] = []
    artifacts: list[Artifact] = []
    for aid, kind in enumerate(plan):
        if kind == "duplicate" and not leaves:
            kind = "shape"
        if kind in ("shape", "stray"):
            box = rng.choice(boxes)
            to_root = container_matrix(doc, box)
            if abs(np.linalg.det(to_root[:2, :2])) < 1e-12:   # a degenerate transform
                box, to_root = 0, np.eye(3)
            make = shape_markup if kind == "shape" else stray_markup
            markup = make(rng, vb, aid, rng.choice(colours), to_root, style)
            at, src, where = rng.choice(container_slots(doc, box)), None, box
        else:
            src = rng.choice(leaves)
            markup = duplicate_markup(doc, src, rng, vb, aid)
            parent = doc.nodes[src].getparent()
            where = doc.index_of(parent)
            slots = [doc.elements[doc.index_of(c)].end for c in parent
                     if isinstance(c.tag, str)]
            # after any sibling from the original on (so the copy is not right under it
            # only), or at the very start of the parent's content
            slots = [doc.elements[where].start_tag_end] + slots
            at = rng.choice(slots)
            if at == doc.elements[0].end:  # never after the root itself
                closing = closing_tag_start(doc, 0)
                assert closing is not None  # the root holds src, so it has a closing tag
                at = closing
        art = Artifact(aid, kind, markup, at, src)
        art.depth = depth(doc, where) + 1
        artifacts.append(art)
        edits.append(TextEdit(at, at, markup))
    injected = apply_edits(text, edits)
    return locate(injected, name, artifacts)


def locate(injected: str, name: str, artifacts: list[Artifact],
           subpaths: bool = True) -> Injection:
    """Parse injected text and map artifact ids to unit indices (engine default units)."""
    doc = parse_document(injected, name)
    us = extract_units(doc, subpaths)
    truth: dict[int, set[int]] = {a.id: set() for a in artifacts}
    for u in us.units:
        node = doc.nodes[u.element]
        while node is not None:
            aid = node.get(ATTR_ID)
            if aid is not None:
                truth.setdefault(int(aid), set()).add(u.index)
                break
            node = node.getparent()
    return Injection(injected, artifacts, doc, us, truth)


# --- detection ---------------------------------------------------------------------------

def flag_lowest(values, units: UnitSet, k: int = 3) -> list[int]:
    """The ``k`` units with the lowest values, at most one per element (ties: z-order)."""
    order = sorted(range(len(values)), key=lambda i: (values[i], i))
    flagged, seen = [], set()
    for i in order:
        el = units.units[i].element
        if el in seen:
            continue
        seen.add(el)
        flagged.append(i)
        if len(flagged) == k:
            break
    return flagged


def prf(tp_flags: int, n_flags: int, hit_artifacts: int, n_artifacts: int) -> dict:
    """Precision over flagged units, recall over artifacts, and their harmonic mean."""
    p = tp_flags / n_flags if n_flags else 0.0
    r = hit_artifacts / n_artifacts if n_artifacts else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f}


def evaluate(flagged: list[int], truth: dict[int, set[int]]) -> dict:
    """Counts for one file: correct flags, artifacts hit (by at least one flag)."""
    owner = {u: a for a, us in truth.items() for u in us}
    correct = sum(1 for u in flagged if u in owner)
    hit = {owner[u] for u in flagged if u in owner}
    return {"flags": len(flagged), "correct": correct, "artifacts": len(truth),
            "hit": len(hit), "hit_ids": sorted(hit)}


def syntax_scores(us: UnitSet) -> list[float]:
    """A syntax prior per unit (higher = more suspicious; no rendering): +1 when one of
    the element's own colours occurs once in the file, +1 when its markup (ids aside) or
    its path data occurs twice or more, +1 for a rect/circle/ellipse tag. The artifact
    marker attributes are ignored."""
    doc = us.doc
    text = _ARTIFACT_ATTRS.sub("", doc.text).lower()
    spans: dict = {}
    counts: dict = {}
    for u in us.units:
        if u.element not in spans:
            body = _ID_ATTR.sub("", _ARTIFACT_ATTRS.sub("", doc.span_text(u.element))).strip()
            spans[u.element] = body
            counts[body] = counts.get(body, 0) + 1
    d_counts: dict[str, int] = {}
    for e in spans:
        d = doc.nodes[e].get("d")
        if d:
            d_counts[d.strip()] = d_counts.get(d.strip(), 0) + 1
    out = []
    for u in us.units:
        el = doc.elements[u.element]
        tag = _ARTIFACT_ATTRS.sub("", doc.text[el.start:el.start_tag_end])
        colours = {m.group(1).lower() for m in _PAINT.finditer(tag)} - _NOT_COLOURS
        score = float(any(text.count(c) == 1 for c in colours))
        d = (doc.nodes[u.element].get("d") or "").strip()
        score += float(counts[spans[u.element]] > 1 or (bool(d) and d_counts.get(d, 0) > 1))
        score += float(el.tag in ("rect", "circle", "ellipse"))
        out.append(score)
    return out


def rank_values(detector: str, us: UnitSet, *, seed: int = 0, index: int = 0) -> list[float]:
    """Values of the detectors that need no reference (lowest = most suspicious)."""
    n = len(us)
    if detector == "random":
        r2 = random.Random(seed * 1_000_003 + index)
        return [r2.random() for _ in range(n)]
    if detector == "last_k":
        return [-float(i) for i in range(n)]
    if detector == "syntax":
        # ties go to later units (-i / n keeps the syntax score first)
        return [-score - i / (n + 1) for i, score in enumerate(syntax_scores(us))]
    raise ValueError(f"{detector!r} needs a reference")


def mean_abs_error(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference per pixel and channel, in [0, 1]: the quality measure
    after removing flags, deliberately not the SSIM the pixel backbone flags with."""
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean() / 255.0)


# --- references that are not the clean render ------------------------------------------------

def degrade(image: np.ndarray, factor: int = 4, blur: float = 1.0,
            jpeg_quality: int = 30) -> np.ndarray:
    """The clean render made imperfect: downscaled ``factor`` x (box filter) and back up
    (bilinear), Gaussian blur of radius ``blur`` px, then JPEG at ``jpeg_quality``."""
    from PIL import Image, ImageFilter

    h, w = image.shape[:2]
    im = Image.fromarray(image).resize((max(1, w // factor), max(1, h // factor)),
                                       Image.Resampling.BOX)
    im = im.resize((w, h), Image.Resampling.BILINEAR)
    im = im.filter(ImageFilter.GaussianBlur(blur))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=jpeg_quality)
    buf.seek(0)
    with Image.open(buf) as out:
        return np.asarray(out.convert("RGB"))


def emoji_key(path: str) -> tuple[str, str] | None:
    """(set, code point sequence) for a Twemoji (``1f46f-200d-2642.svg``) or Noto
    (``emoji_u1f46f_200d_2642.svg``) file name; None for anything else."""
    from pathlib import Path

    p = Path(path)
    stem = p.stem.lower()
    if stem.startswith("emoji_u"):
        return "noto", stem[len("emoji_u"):].replace("_", "-")
    if p.parent.name.lower() == "twemoji" and re.fullmatch(r"[0-9a-f]+(-[0-9a-f]+)*", stem):
        return "twemoji", stem
    return None


def counterpart(path: str, files: list[str]) -> tuple[str, str] | None:
    """The same emoji drawn by the other set: (file, match) with match ``"exact"`` (same
    code point sequence) or ``"base"`` (same first code point: e.g. a gendered or
    skin-toned variant), or None."""
    key = emoji_key(path)
    if key is None:
        return None
    others = [(f, k) for f in files if (k := emoji_key(f)) is not None and k[0] != key[0]]
    for f, k in others:
        if k[1] == key[1]:
            return f, "exact"
    base = key[1].split("-")[0]
    for f, k in sorted(others):
        if k[1].split("-")[0] == base:
            return f, "base"
    return None


# --- the benchmark over files ---------------------------------------------------------------

MIN_VISIBLE_PX = 20   # with ensure_visible, an artifact whose removal changes fewer is re-drawn


def render_many(texts: list[str], size: int, limits, name: str, pool, chunk: int = 16):
    """Yield RGB renders (over white) of ``texts`` in order, a chunk at a time."""
    from svgloo.engine.rendering.render_jobs import job_render_layers

    for start in range(0, len(texts), chunk * max(1, pool.workers)):
        batch = texts[start:start + chunk * max(1, pool.workers)]
        jobs = [(batch[j:j + chunk], size, limits, name) for j in range(0, len(batch), chunk)]
        for result in pool.map(job_render_layers, jobs, name):
            for box, crop in result:
                rgb = np.full((size, size, 3), 255, np.uint8)
                if box is not None:
                    c = crop.astype(np.int32)
                    rgb[box[0]:box[1], box[2]:box[3]] = (c[..., :3] + 255 - c[..., 3:4]) \
                        .clip(0, 255).astype(np.uint8)
                yield rgb


def _similarities(images, backbone, prepared_list, batch: int = 32) -> list[np.ndarray]:
    """Similarity of each image to each prepared reference (one list per reference)."""
    out: list[list] = [[] for _ in prepared_list]
    buf: list = []

    def flush():
        stack = np.stack(buf)
        for j, prepared in enumerate(prepared_list):
            out[j].append(backbone.similarity(stack, prepared))

    for im in images:
        buf.append(im)
        if len(buf) == batch:
            flush()
            buf = []
    if buf:
        flush()
    return [np.concatenate(o) if o else np.zeros(0) for o in out]


def bench_file(path: str, index: int, *, seed: int = 0, backbone: str = "pixel",
               size: int = DEFAULT_RENDER_SIZE, k: int = 3, pool=None, ensure_visible: bool = False,
               tries: int = 6, detectors: tuple[str, ...] = DETECTORS,
               cross: str | None = None, cross_match: str | None = None) -> dict:
    """Inject one artifact of each kind into one file and run every detector under every
    reference setting (oracle, degraded, and cross when ``cross`` names the same emoji
    from the other set). Returns a JSON row."""
    import tempfile
    import time
    from pathlib import Path

    from PIL import Image

    from svgloo.plugins.base import Reference
    from svgloo.engine.scoring.backbones import choose_backbone, get_backbone
    from svgloo.engine.reading.document import load_document
    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.engine.scoring.score import ScoreSettings, render_document, score_text
    from svgloo.engine.reading.units import text_keeping, text_without
    from svgloo.engine.processes.workers import shared_pool

    t0 = time.perf_counter()
    limits = DEFAULT_LIMITS
    pool = pool or shared_pool(limits)
    clean_doc = load_document(path, limits)
    clean = render_document(clean_doc, size, limits, pool)
    references = {"oracle": clean, "degraded": degrade(clean)}
    if cross:
        references["cross"] = render_document(load_document(cross, limits), size, limits, pool)
    choice = choose_backbone(backbone, None)
    bb = get_backbone(choice.name)
    names = list(references)
    prepared = [bb.prepare(Reference("image", name, image=references[name]))
                for name in names]
    rng = random.Random(seed + index)
    layer_cache: dict = {}
    deltas: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="svgloo-bench-") as td:
        ref_paths = {}
        for name, image in references.items():
            ref_paths[name] = str(Path(td) / f"{name}.png")
            Image.fromarray(image).save(ref_paths[name])
        for attempt in range(1, tries + 1):  # noqa: B007 - read after the loop: the attempts made
            inj = inject_artifacts(clean_doc.text, path, rng, k)
            layer_cache.clear()
            # (deltas and footprints only: no removal proof, which nothing here reads)
            settings = ScoreSettings(backbone=choice.name, size=size,
                                     reference=ref_paths["oracle"], limits=limits,
                                     prove=False)
            run = score_text(inj.text, path, settings, pool=pool, backbone=bb,
                             layer_cache=layer_cache)
            rows = run.result["units"]
            visible = {a: max((rows[u]["footprint_pixels"] for u in us), default=0)
                       for a, us in inj.truth.items()}
            if not ensure_visible or min(visible.values()) >= MIN_VISIBLE_PX:
                break
        deltas["oracle"] = [r["delta"] for r in rows]
        for name in names[1:]:
            # the same leave-one-out renders (layer cache), scored against another reference
            other = score_text(inj.text, path, settings.with_(reference=ref_paths[name]),
                               pool=pool, backbone=bb, layer_cache=layer_cache)
            deltas[name] = [r["delta"] for r in other.result["units"]]
    us = inj.units
    assert us is not None  # inject_artifacts gives them
    n = len(us)
    kinds = {a.id: a.kind for a in inj.artifacts}
    values: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for name in names:
        if "loo" in detectors:
            values[name]["loo"] = deltas[name]
    if "isolated" in detectors:
        texts = [text_keeping(us, {i}) for i in range(n)]
        sims = _similarities(render_many(texts, size, limits, path, pool), bb, prepared)
        for name, s in zip(names, sims):
            values[name]["isolated"] = list(s)
    if "prefix" in detectors:
        texts = [text_keeping(us, set(range(i))) for i in range(n + 1)]
        sims = _similarities(render_many(texts, size, limits, path, pool), bb, prepared)
        for name, s in zip(names, sims):
            values[name]["prefix"] = list(s[1:] - s[:-1])
    for det in detectors:
        if det not in RENDERING_DETECTORS:
            v = rank_values(det, us, seed=seed, index=index)
            for name in names:
                values[name][det] = v
    before = mean_abs_error(run.loo.full, clean)
    after_cache: dict[frozenset, float] = {}
    out: dict[str, dict] = {}
    for name in names:
        out[name] = {}
        for det in [d for d in DETECTORS if d in values[name]]:
            flagged = flag_lowest(values[name][det], us, k)
            ev = evaluate(flagged, inj.truth)
            key = frozenset(flagged)
            if key not in after_cache:
                [img] = list(render_many([text_without(us, set(flagged))], size, limits,
                                          path, pool))
                after_cache[key] = mean_abs_error(img, clean)
            ev.update({"flagged": flagged, "hit_kinds": [kinds[a] for a in ev["hit_ids"]],
                       "mae_before": round(before, 6), "mae_after": round(after_cache[key], 6),
                       "mae_change": round(after_cache[key] - before, 6)})
            out[name][det] = ev
    return {
        "file": path, "index": index, "seed": seed, "backbone": choice.name,
        "units": n, "attempts": attempt, "cross": cross, "cross_match": cross_match,
        "artifacts": [{"id": a.id, "kind": a.kind, "depth": a.depth,
                       "units": sorted(inj.truth.get(a.id, ())),
                       "visible_px": visible.get(a.id, 0)} for a in inj.artifacts],
        "all_visible": min(visible.values()) >= MIN_VISIBLE_PX,
        "settings": out,
        # per-unit leave-one-out deltas under each reference (threshold calibration)
        "deltas": {name: [round(float(x), 6) for x in deltas[name]] for name in names},
        "seconds": round(time.perf_counter() - t0, 3),
    }


def aggregate(rows: list[dict], setting: str = "oracle", only_visible: bool = False) -> dict:
    """Micro-averaged precision/recall/F1, mean MAE change and recall per artifact kind,
    per detector, over the rows that have ``setting``."""
    out: dict = {}
    rows = [r for r in rows if setting in r.get("settings", {})
            and (r["all_visible"] or not only_visible)]
    dets = [d for d in DETECTORS if any(d in r["settings"][setting] for r in rows)]
    for d in dets:
        c = f = h = a = 0
        vis_n = vis_hit = 0
        changes = []
        kind_n: dict[str, int] = {}
        kind_hit: dict[str, int] = {}
        for r in rows:
            ev = r["settings"][setting][d]
            c += ev["correct"]
            f += ev["flags"]
            h += ev["hit"]
            a += ev["artifacts"]
            changes.append(ev["mae_change"])
            for art in r["artifacts"]:
                if art["visible_px"] > 0:
                    vis_n += 1
                    vis_hit += art["id"] in ev["hit_ids"]
                kind_n[art["kind"]] = kind_n.get(art["kind"], 0) + 1
                kind_hit[art["kind"]] = kind_hit.get(art["kind"], 0) + \
                    (art["id"] in ev["hit_ids"])
        m = prf(c, f, h, a)
        m["mae_change"] = float(np.mean(changes)) if changes else 0.0
        m["files"] = len(rows)
        m["artifacts"] = a
        m["hidden_artifacts"] = a - vis_n
        # hidden artifacts (no pixel changes when removed) tie at delta 0 and can be
        # "found" by tie order; recall over the visible ones says what a detector sees
        m["recall_visible"] = vis_hit / vis_n if vis_n else 0.0
        m["recall_by_kind"] = {kd: kind_hit[kd] / kind_n[kd] for kd in sorted(kind_n)}
        out[d] = m
    return out


def calibrate_threshold(rows: list[dict], setting: str = "oracle",
                        candidates=None) -> dict:
    """The harmful threshold t (a unit is harmful when its delta < t) that maximises F1
    of "harmful" against "unit of an artifact" over ``rows`` (micro: every unit of every
    file); hidden artifact units (no footprint) are left out, as no threshold can see
    them. Returns t, its precision/recall/F1, and the counts."""
    pairs = labelled_deltas(rows, setting)
    if candidates is None:
        candidates = -np.concatenate([np.geomspace(1e-5, 0.2, 120), [0.0]])
    best = None
    for t in candidates:
        m = harmful_prf(pairs, t)
        if best is None or m["f1"] > best["f1"] + 1e-12:
            best = {"threshold": float(t), **m}
    return {**(best or {}), "units": len(pairs),
            "artifact_units": sum(1 for _, y in pairs if y)}


def labelled_deltas(rows: list[dict], setting: str) -> list[tuple[float, bool]]:
    """(delta, is the unit part of an artifact) for every unit of every row scored in
    ``setting``; hidden artifact units (no footprint) are left out: no threshold sees them."""
    pairs = []
    for r in rows:
        if setting not in r.get("deltas", {}):
            continue
        art_units = {u: a["visible_px"] > 0 for a in r["artifacts"] for u in a["units"]}
        for i, d in enumerate(r["deltas"][setting]):
            if i in art_units and not art_units[i]:
                continue
            pairs.append((d, i in art_units))
    return pairs


def harmful_prf(pairs: list[tuple[float, bool]], threshold: float) -> dict:
    """Precision/recall/F1 of "delta < threshold" on (delta, is artifact) pairs."""
    tp = sum(1 for d, y in pairs if y and d < threshold)
    fp = sum(1 for d, y in pairs if not y and d < threshold)
    fn = sum(1 for d, y in pairs if y and d >= threshold)
    return threshold_prf(tp, fp, fn)


def threshold_prf(tp: int, fp: int, fn: int) -> dict:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "tp": tp, "fp": fp, "fn": fn}


def evaluate_threshold(rows: list[dict], threshold: float, setting: str = "oracle") -> dict:
    """Precision/recall/F1 of "delta < threshold" against artifact units on ``rows``."""
    return harmful_prf(labelled_deltas(rows, setting), threshold)
