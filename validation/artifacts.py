"""Artifact injection and detection: the validation harness behind ``svgloo bench artifacts``.

Injection (pure text edits on the source): each artifact's markup is inserted before a
top-level drawn child's span or before ``</svg>``, and carries
``data-svgloo-artifact="KIND"`` and ``data-svgloo-artifact-id="N"``. After parsing the
injected text, the units that belong to an artifact are found by those attributes (the
ground truth). Kinds:

- ``shape``: a rect, circle or ellipse with a random colour, 5-25% of the view box;
- ``stray``: a thin random polyline or cubic bezier stroke;
- ``duplicate``: a copy of an existing leaf element (ids removed), wrapped in
  ``<g transform="translate(dx dy)">`` and inserted among that element's siblings (so it
  keeps its ancestors' transforms and styles).

Detectors rank the units of the injected document (lowest = most suspicious) and flag the
K lowest units of K distinct elements (the subpaths of one path count once):

- ``loo``: the leave-one-out delta against the clean render (the engine's score);
- ``isolated``: the unit rendered alone, scored against the clean render;
- ``prefix``: S(units before i, plus i) - S(units before i) against the clean render;
- ``random``: a seeded random ranking.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import numpy as np

from svgloo.engine.document import SVG_NS, Document, parse_document
from svgloo.engine.units import LEAF_TAGS, NON_RENDERING, TextEdit, UnitSet, apply_edits, extract_units

KINDS = ("shape", "stray", "duplicate")
DETECTORS = ("loo", "isolated", "prefix", "random")
ATTR = "data-svgloo-artifact"
ATTR_ID = "data-svgloo-artifact-id"
_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ID_ATTR = re.compile(r"""\s(?:id|xml:id)\s*=\s*(["']).*?\1""", re.S)


@dataclass
class Artifact:
    id: int
    kind: str
    markup: str
    offset: int          # where it was inserted in the clean text
    source: int | None = None  # duplicated element index (clean document)


@dataclass
class Injection:
    text: str
    artifacts: list[Artifact]
    doc: Document = field(repr=False, default=None)
    units: UnitSet = field(repr=False, default=None)
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


def top_level_children(doc: Document) -> list[int]:
    """Element indices of the root's drawn children."""
    out = []
    for child in doc.root:
        if not isinstance(child.tag, str):
            continue
        i = doc.index_of(child)
        if _is_drawn(doc, i):
            out.append(i)
    return out


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


# --- markup generators ----------------------------------------------------------------

def _colour(rng: random.Random) -> str:
    return "#%02x%02x%02x" % (rng.randrange(256), rng.randrange(256), rng.randrange(256))


def _f(x: float) -> str:
    return f"{x:.4g}"


def shape_markup(rng: random.Random, vb, aid: int) -> str:
    x0, y0, w, h = vb
    m = min(w, h)
    size = rng.uniform(0.05, 0.25) * m
    cx, cy = x0 + rng.uniform(0.1, 0.9) * w, y0 + rng.uniform(0.1, 0.9) * h
    tag = rng.choice(("rect", "circle", "ellipse"))
    common = f'fill="{_colour(rng)}" stroke="none" {ATTR}="shape" {ATTR_ID}="{aid}"'
    if tag == "rect":
        rw, rh = size, size * rng.uniform(0.5, 1.5)
        return (f'<rect x="{_f(cx - rw / 2)}" y="{_f(cy - rh / 2)}" width="{_f(rw)}" '
                f'height="{_f(rh)}" {common}/>')
    if tag == "circle":
        return f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(size / 2)}" {common}/>'
    return (f'<ellipse cx="{_f(cx)}" cy="{_f(cy)}" rx="{_f(size / 2)}" '
            f'ry="{_f(size / 2 * rng.uniform(0.4, 0.9))}" {common}/>')


def stray_markup(rng: random.Random, vb, aid: int) -> str:
    x0, y0, w, h = vb
    m = min(w, h)
    span = rng.uniform(0.15, 0.4) * m
    sx, sy = x0 + rng.uniform(0.1, 0.9) * w, y0 + rng.uniform(0.1, 0.9) * h

    def pt():
        return (sx + rng.uniform(-span, span), sy + rng.uniform(-span, span))

    width = rng.uniform(0.01, 0.02) * m
    if rng.random() < 0.5:
        pts = [(sx, sy)] + [pt() for _ in range(rng.randint(2, 4))]
        d = "M" + " L".join(f"{_f(x)} {_f(y)}" for x, y in pts)
    else:
        (c1x, c1y), (c2x, c2y), (ex, ey) = pt(), pt(), pt()
        d = (f"M{_f(sx)} {_f(sy)} C{_f(c1x)} {_f(c1y)} {_f(c2x)} {_f(c2y)} "
             f"{_f(ex)} {_f(ey)}")
    return (f'<path d="{d}" fill="none" stroke="{_colour(rng)}" stroke-width="{_f(width)}" '
            f'stroke-linecap="round" {ATTR}="stray" {ATTR_ID}="{aid}"/>')


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
    """Insert ``count`` artifacts of random kinds at random z-positions; parse the result
    and find the units each artifact contributes."""
    doc = parse_document(text, name)
    vb = view_box(doc)
    tops = top_level_children(doc)
    root_close = closing_tag_start(doc, 0)
    if root_close is None:
        from svgloo.engine.errors import InputError
        raise InputError(name, "the root <svg> is empty: nothing to inject among")
    top_slots = [doc.elements[i].start for i in tops] + [root_close]
    leaves = [u.element for u in extract_units(doc, False).units
              if doc.elements[u.element].tag in LEAF_TAGS and _drawn_ancestry(doc, u.element)]
    edits: list[TextEdit] = []
    artifacts: list[Artifact] = []
    for aid in range(count):
        kind = rng.choice(kinds)
        if kind == "duplicate" and not leaves:
            kind = "shape"
        if kind == "shape":
            markup = shape_markup(rng, vb, aid)
            at, src = rng.choice(top_slots), None
        elif kind == "stray":
            markup = stray_markup(rng, vb, aid)
            at, src = rng.choice(top_slots), None
        else:
            src = rng.choice(leaves)
            markup = duplicate_markup(doc, src, rng, vb, aid)
            parent = doc.nodes[src].getparent()
            p = doc.index_of(parent)
            slots = [doc.elements[doc.index_of(c)].end for c in parent
                     if isinstance(c.tag, str)]
            # after any sibling from the original on (so the copy is not right under it
            # only), or at the very start of the parent's content
            slots = [doc.elements[p].start_tag_end] + slots
            at = rng.choice(slots)
            if at == doc.elements[0].end:  # never after the root itself
                at = root_close
        artifacts.append(Artifact(aid, kind, markup, at, src))
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


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean SSIM of two RGB uint8 images (the pixel backbone's definition)."""
    from ..plugins.base import Reference
    from ..plugins.pixel_backbone import PixelBackbone

    bb = PixelBackbone()
    return float(bb.similarity(a[None], bb.prepare(Reference("image", "", image=b)))[0])


# --- the benchmark over files ---------------------------------------------------------------

MIN_VISIBLE_PX = 20   # an artifact whose removal changes fewer pixels is re-drawn


def _render_many(texts: list[str], size: int, limits, name: str, pool, chunk: int = 16):
    """Yield RGB renders (over white) of ``texts`` in order, a chunk at a time."""
    from svgloo.engine.loo import job_render_layers

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


def _similarities(images, backbone, prepared, batch: int = 32) -> np.ndarray:
    out, buf = [], []
    for im in images:
        buf.append(im)
        if len(buf) == batch:
            out.append(backbone.similarity(np.stack(buf), prepared))
            buf = []
    if buf:
        out.append(backbone.similarity(np.stack(buf), prepared))
    return np.concatenate(out) if out else np.zeros(0)


def bench_file(path: str, index: int, *, seed: int = 0, backbone: str = "pixel",
               size: int = 384, k: int = 3, pool=None, ensure_visible: bool = True,
               tries: int = 6, detectors: tuple[str, ...] = DETECTORS) -> dict:
    """Inject ``k`` artifacts into one file and run every detector. Returns a JSON row."""
    import tempfile
    import time
    from pathlib import Path

    from PIL import Image

    from ..plugins.base import Reference
    from svgloo.engine.backbones import choose_backbone, get_backbone
    from svgloo.engine.document import load_document
    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.engine.score import ScoreSettings, render_document, score_text
    from svgloo.engine.units import text_keeping, text_without
    from svgloo.engine.workers import shared_pool

    t0 = time.perf_counter()
    limits = DEFAULT_LIMITS
    pool = pool or shared_pool(limits)
    clean_doc = load_document(path, limits)
    clean = render_document(clean_doc, size, limits, pool)
    choice = choose_backbone(backbone, None)
    bb = get_backbone(choice.name)
    prepared = bb.prepare(Reference("image", "clean render", image=clean))
    pixel_ssim = lambda im: ssim(im, clean)  # noqa: E731
    rng = random.Random(seed + index)
    with tempfile.TemporaryDirectory(prefix="svgloo-bench-") as td:
        ref = str(Path(td) / "clean.png")
        Image.fromarray(clean).save(ref)
        settings = ScoreSettings(backbone=choice.name, size=size, reference=ref,
                                 limits=limits)
        for attempt in range(1, tries + 1):
            inj = inject_artifacts(clean_doc.text, path, rng, k)
            run = score_text(inj.text, path, settings, pool=pool, backbone=bb)
            rows = run.result["units"]
            visible = {a: max((rows[u]["footprint_pixels"] for u in us), default=0)
                       for a, us in inj.truth.items()}
            if not ensure_visible or min(visible.values()) >= MIN_VISIBLE_PX:
                break
    us = inj.units
    n = len(us)
    name = path
    kinds = {a.id: a.kind for a in inj.artifacts}
    ranks: dict[str, list[float]] = {}
    if "loo" in detectors:
        ranks["loo"] = [r["delta"] for r in rows]
    if "isolated" in detectors:
        texts = [text_keeping(us, {i}) for i in range(n)]
        ranks["isolated"] = list(_similarities(_render_many(texts, size, limits, name, pool),
                                               bb, prepared))
    if "prefix" in detectors:
        texts = [text_keeping(us, set(range(i))) for i in range(n + 1)]
        s = _similarities(_render_many(texts, size, limits, name, pool), bb, prepared)
        ranks["prefix"] = list(s[1:] - s[:-1])
    if "random" in detectors:
        r2 = random.Random(seed * 1_000_003 + index)
        ranks["random"] = [r2.random() for _ in range(n)]
    before = pixel_ssim(run.loo.full)
    out_det = {}
    for det, values in ranks.items():
        flagged = flag_lowest(values, us, k)
        ev = evaluate(flagged, inj.truth)
        [after_img] = list(_render_many([text_without(us, set(flagged))], size, limits,
                                        name, pool))
        after = pixel_ssim(after_img)
        ev.update({"flagged": flagged, "hit_kinds": [kinds[a] for a in ev["hit_ids"]],
                   "ssim_before": round(before, 6), "ssim_after": round(after, 6),
                   "ssim_change": round(after - before, 6)})
        out_det[det] = ev
    return {
        "file": path, "index": index, "seed": seed, "backbone": choice.name,
        "units": n, "attempts": attempt,
        "artifacts": [{"id": a.id, "kind": a.kind, "units": sorted(inj.truth.get(a.id, ())),
                       "visible_px": visible.get(a.id, 0)} for a in inj.artifacts],
        "all_visible": min(visible.values()) >= MIN_VISIBLE_PX,
        "detectors": out_det, "seconds": round(time.perf_counter() - t0, 3),
    }


def aggregate(rows: list[dict], only_visible: bool = False) -> dict:
    """Micro-averaged precision/recall/F1 and mean SSIM change per detector, and recall
    per detector and artifact kind."""
    out: dict = {}
    rows = [r for r in rows if "detectors" in r and (r["all_visible"] or not only_visible)]
    dets = sorted({d for r in rows for d in r["detectors"]}, key=lambda d: (
        DETECTORS.index(d) if d in DETECTORS else 99, d))
    for d in dets:
        c = f = h = a = 0
        changes = []
        kind_n: dict[str, int] = {}
        kind_hit: dict[str, int] = {}
        for r in rows:
            ev = r["detectors"][d]
            c += ev["correct"]
            f += ev["flags"]
            h += ev["hit"]
            a += ev["artifacts"]
            changes.append(ev["ssim_change"])
            for art in r["artifacts"]:
                kind_n[art["kind"]] = kind_n.get(art["kind"], 0) + 1
                kind_hit[art["kind"]] = kind_hit.get(art["kind"], 0) + \
                    (art["id"] in ev["hit_ids"])
        m = prf(c, f, h, a)
        m["ssim_change"] = float(np.mean(changes)) if changes else 0.0
        m["files"] = len(rows)
        m["recall_by_kind"] = {kd: kind_hit[kd] / kind_n[kd] for kd in sorted(kind_n)}
        out[d] = m
    return out
