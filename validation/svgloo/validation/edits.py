"""The five concept edits of the paper and their precision (``svgloo bench edits``).

Every edit is a text edit on the source, applied to the *elements* of a concept's units (a
subpath unit edits its whole path):

- ``color``: an inline ``style`` override setting ``fill`` (and ``stroke`` where the element
  is stroked) to one colour; inline style wins over attributes and classes;
- ``delete``: the concept's units removed (the engine's ``text_without``);
- ``move``: each element wrapped in ``<g transform="translate(...)">``, the offset being
  20 render pixels along the diagonal converted to the parent's user units through the
  ancestors' transforms and the view box scale;
- ``scale``: each element wrapped in ``<g transform="translate(c) scale(0.7) translate(-c)">``
  about the concept's centre (render pixels, converted the same way);
- ``regroup``: the concept's elements made contiguous in z-order, keeping their relative
  order: within each parent, the later members move to just after the first one (elements
  never leave their parent, so inherited transforms and styles stay the same).

precision = target / (target + collateral): ``target`` is the summed per-pixel change
(max over channels, in [0, 1]) inside the edited concept's mask, ``collateral`` the change
inside the other concepts' masks and outside the edited concept's mask.

Mask settings (``MASK_SETTINGS``): ``same`` scores an edit with the masks of the very
concepts the structure was computed from (they share the attribution); ``regions>labels``
edits the colour-region concepts and scores with the file's label masks (each edited
region's target is the label mask it overlaps most, by IoU); ``labels>regions`` the
reverse. The cross settings need a labelled file (two or more label concepts).
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import numpy as np

from svgloo.validation.artifacts import view_box
from svgloo.validation.transforms import parse_transform
from svgloo.engine.reading.document import Document
from svgloo.engine.settings import DEFAULT_RENDER_SIZE
from svgloo.engine.reading.units import TextEdit, UnitSet, apply_edits, text_without

EDITS = ("color", "delete", "move", "scale", "regroup")
MASK_SETTINGS = ("same", "regions>labels", "labels>regions")
MOVE_PX = 20.0
SCALE = 0.7
_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_STYLE = re.compile(r"""\sstyle\s*=\s*(["'])(.*?)\1""", re.S)
_TAG = re.compile(r"<[^\s/>]+")


# --- transforms -------------------------------------------------------------------------

def render_matrix(doc: Document, size: int) -> np.ndarray:
    """Root user space -> render pixels (viewBox fitted, centred: xMidYMid meet)."""
    x, y, w, h = view_box(doc)
    s = size / max(w, h)
    m = np.eye(3)
    m[0, 0] = m[1, 1] = s
    m[0, 2] = (size - w * s) / 2 - x * s
    m[1, 2] = (size - h * s) / 2 - y * s
    return m


def parent_ctm(doc: Document, element: int, size: int) -> np.ndarray:
    """Matrix from the user space an element sits in (its parent's) to render pixels."""
    chain = []
    node = doc.nodes[element].getparent()
    while node is not None and node is not doc.root:
        chain.append(node.get("transform"))
        node = node.getparent()
    m = render_matrix(doc, size)
    for value in reversed(chain):
        m = m @ parse_transform(value)
    return m


# --- the edits ------------------------------------------------------------------------------

def concept_elements(us: UnitSet, units) -> list[int]:
    return sorted({us.units[u].element for u in units})


def _inherited(doc: Document, element: int, prop: str) -> str | None:
    node = doc.nodes[element]
    while node is not None:
        style = node.get("style") or ""
        for decl in style.split(";"):
            if ":" in decl:
                k, v = decl.split(":", 1)
                if k.strip() == prop:
                    return v.strip()
        if node.get(prop) is not None:
            return node.get(prop).strip()
        node = node.getparent()
    return None


def _style_edit(doc: Document, element: int, decl: str) -> TextEdit:
    el = doc.elements[element]
    tag = doc.text[el.start:el.start_tag_end]
    m = _STYLE.search(tag)
    if m:
        at = el.start + m.end(2)
        return TextEdit(at, at, ";" + decl)
    start_tag = _TAG.match(tag)
    assert start_tag is not None  # the element's own start tag
    at = el.start + start_tag.end()
    return TextEdit(at, at, f' style="{decl}"')


def _wrap(doc: Document, element: int, transform: str) -> list[TextEdit]:
    el = doc.elements[element]
    return [TextEdit(el.start, el.start, f'<g transform="{transform}">'),
            TextEdit(el.end, el.end, "</g>")]


def color_text(us: UnitSet, units, colour: str) -> str:
    doc = us.doc
    edits = []
    for e in concept_elements(us, units):
        decl = []
        if (_inherited(doc, e, "fill") or "black") != "none":
            decl.append(f"fill:{colour}")
        stroke = _inherited(doc, e, "stroke")
        if stroke not in (None, "none"):
            decl.append(f"stroke:{colour}")
        if decl:
            edits.append(_style_edit(doc, e, ";".join(decl)))
    return apply_edits(doc.text, edits)


def delete_text(us: UnitSet, units) -> str:
    return text_without(us, set(units))


def _local_vector(ctm: np.ndarray, v) -> tuple[float, float]:
    lin = ctm[:2, :2]
    x = np.linalg.solve(lin, np.asarray(v, float))
    return float(x[0]), float(x[1])


def _local_point(ctm: np.ndarray, p) -> tuple[float, float]:
    x = np.linalg.solve(ctm, np.array([p[0], p[1], 1.0]))
    return float(x[0]), float(x[1])


def move_text(us: UnitSet, units, size: int, px: tuple[float, float] | None = None) -> str:
    px = px or (MOVE_PX / math.sqrt(2), MOVE_PX / math.sqrt(2))
    doc = us.doc
    edits = []
    for e in concept_elements(us, units):
        dx, dy = _local_vector(parent_ctm(doc, e, size), px)
        edits += _wrap(doc, e, f"translate({dx:.6g} {dy:.6g})")
    return apply_edits(doc.text, edits)


def scale_text(us: UnitSet, units, size: int, centre: tuple[float, float],
               factor: float = SCALE) -> str:
    """``centre`` in render pixels (x, y)."""
    doc = us.doc
    edits = []
    for e in concept_elements(us, units):
        cx, cy = _local_point(parent_ctm(doc, e, size), centre)
        edits += _wrap(doc, e, f"translate({cx:.6g} {cy:.6g}) scale({factor:g}) "
                               f"translate({-cx:.6g} {-cy:.6g})")
    return apply_edits(doc.text, edits)


def regroup_text(us: UnitSet, units) -> str:
    doc = us.doc
    by_parent: dict = {}
    for e in concept_elements(us, units):
        by_parent.setdefault(doc.nodes[e].getparent(), []).append(e)
    edits = []
    for members in by_parent.values():
        first, rest = members[0], members[1:]
        if not rest:
            continue
        end = doc.elements[first].end
        edits.append(TextEdit(end, end, "".join(doc.span_text(m) for m in rest)))
        for m in rest:
            edits.append(TextEdit(doc.elements[m].start, doc.elements[m].end, ""))
    return apply_edits(doc.text, edits)


def edit_text(us: UnitSet, units, edit: str, *, size: int = DEFAULT_RENDER_SIZE,
              rng: random.Random | None = None, centre=None) -> str:
    """The source text after applying ``edit`` to the concept made of ``units``."""
    rng = rng or random.Random(0)
    if edit == "color":
        return color_text(us, units, "#%02x%02x%02x" % tuple(rng.randrange(256)
                                                            for _ in range(3)))
    if edit == "delete":
        return delete_text(us, units)
    if edit == "move":
        return move_text(us, units, size)
    if edit == "scale":
        if centre is None:
            centre = (size / 2, size / 2)
        return scale_text(us, units, size, centre)
    if edit == "regroup":
        return regroup_text(us, units)
    raise ValueError(f"unknown edit {edit!r}")


# --- precision ----------------------------------------------------------------------------

def change_map(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per-pixel change in [0, 1]: max over channels of |before - after| / 255."""
    return np.abs(before.astype(np.int16) - after.astype(np.int16)).max(axis=2) / 255.0


def edit_precision(before: np.ndarray, after: np.ndarray, target: np.ndarray,
                   others: list[np.ndarray] | np.ndarray) -> dict:
    """target/collateral sums and precision (NaN when nothing changed in either)."""
    diff = change_map(before, after)
    target = np.asarray(target, bool)
    other = np.zeros_like(target)
    for m in others:
        other |= np.asarray(m, bool)
    other &= ~target
    t = float(diff[target].sum())
    c = float(diff[other].sum())
    p = t / (t + c) if t + c > 0 else float("nan")
    return {"target": t, "collateral": c, "precision": p}


def mask_centre(mask: np.ndarray) -> tuple[float, float] | None:
    """Centre (x, y) of a mask's bounding box in pixels; None when empty."""
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        return None
    return (xs.min() + xs.max() + 1) / 2, (ys.min() + ys.max() + 1) / 2


# --- the benchmark ----------------------------------------------------------------------------

def matched_masks(edit_mask: np.ndarray, eval_masks: list[np.ndarray]
                  ) -> tuple[np.ndarray, list[np.ndarray], float] | None:
    """The evaluation mask that overlaps ``edit_mask`` most (IoU) as the target and the
    rest as the others, with that IoU; None when nothing overlaps."""
    best, best_iou = None, 0.0
    for j, m in enumerate(eval_masks):
        union = np.logical_or(edit_mask, m).sum()
        iou = float(np.logical_and(edit_mask, m).sum() / union) if union else 0.0
        if iou > best_iou:
            best, best_iou = j, iou
    if best is None:
        return None
    return eval_masks[best], [m for j, m in enumerate(eval_masks) if j != best], best_iou


def bench_edits_file(path: str, index: int, *, seed: int = 0, size: int = DEFAULT_RENDER_SIZE,
                     pool=None, masks: str = "same", runs: dict | None = None) -> dict | None:
    """Structure-analyse one file, apply each edit to each concept, measure precision.
    ``masks`` picks the mask setting; a cross setting returns None for a file with fewer
    than two label concepts. ``runs`` (a dict the caller keeps per file) shares the two
    structure runs between the cross settings."""
    import time

    from svgloo.engine.limits import DEFAULT_LIMITS
    from svgloo.structure.analysis import StructureSettings, structure_file
    from svgloo.engine.processes.workers import shared_pool

    t0 = time.perf_counter()
    pool = pool or shared_pool(DEFAULT_LIMITS)
    if masks == "same":
        run = structure_file(path, StructureSettings(size=size), pool=pool)
        return edits_on_run(path, index, run.result, run.units, run.loo.full,
                            np.asarray(run.heatmaps), seed=seed, size=size, pool=pool, t0=t0)
    if masks not in MASK_SETTINGS:
        raise ValueError(f"unknown mask setting {masks!r}")
    edit_source, eval_source = masks.split(">")
    runs = {} if runs is None else runs
    cache: dict = {}
    for source in ("labels", "regions"):
        if source not in runs:
            runs[source] = structure_file(path, StructureSettings(size=size,
                                                                  concept_source=source),
                                          pool=pool, layer_cache=cache)
        if source == "labels" and len(runs["labels"].concepts) < 2:
            return None
    if len(runs["labels"].concepts) < 2:
        return None
    edit_run, eval_run = runs[edit_source], runs[eval_source]
    eval_masks = [h > 0.5 for h in np.asarray(eval_run.heatmaps)]
    row = edits_on_run(path, index, edit_run.result, edit_run.units, edit_run.loo.full,
                       np.asarray(edit_run.heatmaps), seed=seed, size=size, pool=pool, t0=t0,
                       eval_masks=eval_masks)
    row["masks"] = masks
    return row


def edits_on_run(path: str, index: int, result: dict, us: UnitSet, full: np.ndarray,
                 heatmaps: np.ndarray, *, seed: int = 0, size: int = DEFAULT_RENDER_SIZE, pool=None,
                 t0: float | None = None, eval_masks: list[np.ndarray] | None = None) -> dict:
    """Apply the five edits to every concept of one structure result and score them,
    with the concepts' own masks or, given ``eval_masks``, with the best-matching
    independent mask as the target (``matched_masks``)."""
    import time

    from svgloo.validation.artifacts import render_many
    from svgloo.engine.limits import DEFAULT_LIMITS

    t0 = t0 or time.perf_counter()
    rng = random.Random(seed + index)
    masks = [h > 0.5 for h in heatmaps]
    concepts = result["concepts"]
    jobs, meta = [], []
    for k, c in enumerate(concepts):
        units = c.get("units") or []
        if not units or k >= len(masks):
            continue
        if eval_masks is not None:
            match = matched_masks(masks[k], eval_masks)
            if match is None:
                continue
            target, others, iou = match
        else:
            target, others, iou = masks[k], [m for j, m in enumerate(masks) if j != k], None
        centre = mask_centre(masks[k]) or (size / 2, size / 2)
        for edit in EDITS:
            jobs.append(edit_text(us, units, edit, size=size, rng=rng, centre=centre))
            meta.append((c["name"], edit, target, others, iou))
    rows = []
    images = render_many(jobs, size, DEFAULT_LIMITS, path, pool) if jobs else []
    for (name, edit, target, others, iou), after in zip(meta, images):
        p = edit_precision(full, after, target, others)
        row = {"concept": name, "edit": edit, **{key: round(v, 6) if v == v else None
                                                 for key, v in p.items()}}
        if iou is not None:
            row["match_iou"] = round(iou, 4)
        rows.append(row)
    vals = [r["precision"] for r in rows if r["precision"] is not None]
    units_rows = result.get("units") or []
    return {"file": path, "index": index, "metrics": result.get("metrics", {}),
            "concepts": len(concepts),
            "concepts_with_units": sum(1 for c in concepts if c.get("units")),
            "active_units": sum(1 for u in units_rows if u.get("active")),
            "edits": rows,
            "mean_precision": float(np.mean(vals)) if vals else None,
            "mean_by_edit": {e: _mean_or_none([r["precision"] for r in rows
                                               if r["edit"] == e]) for e in EDITS},
            "seconds": round(time.perf_counter() - t0, 3)}


def _mean_or_none(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def is_trivial(row: dict) -> bool:
    """One concept with units or at most one active unit: purity and precision are 1 or
    tied by construction, so the file says nothing about their relation."""
    return row.get("concepts_with_units", 2) <= 1 or row.get("active_units", 2) <= 1


def pearson_ci(x, y, level: float = 0.95) -> dict:
    """Pearson r, its p value and a Fisher-z confidence interval; None values when
    n < 4 or either side is constant."""
    from scipy.stats import norm, pearsonr

    n = len(x)
    if n < 4 or len(set(x)) < 2 or len(set(y)) < 2:
        return {"r": None, "p": None, "low": None, "high": None, "n": n}
    res = pearsonr(x, y)
    r = float(res.statistic)
    z = math.atanh(max(-0.999999, min(0.999999, r)))
    half = norm.ppf(0.5 + level / 2) / math.sqrt(n - 3)
    return {"r": r, "p": float(res.pvalue), "low": math.tanh(z - half),
            "high": math.tanh(z + half), "n": n}


def aggregate_edits(rows: list[dict]) -> dict:
    """Mean precision per edit type and overall; the correlation of each structural metric
    with a file's mean precision, per edit type and pooled, over non-trivial files only
    (``is_trivial`` files are counted, not correlated), with 95% intervals."""
    per_edit: dict[str, list[float]] = {e: [] for e in EDITS}
    for r in rows:
        for e in r.get("edits", []):
            if e["precision"] is not None:
                per_edit[e["edit"]].append(e["precision"])
    allv = [v for vs in per_edit.values() for v in vs]
    summary: dict[str, Any] = {"per_edit": {e: {"mean": float(np.mean(v)) if v else None, "n": len(v)}
                            for e, v in per_edit.items()},
               "overall": {"mean": float(np.mean(allv)) if allv else None, "n": len(allv)},
               "correlations": {}, "correlations_by_edit": {}}
    measured = [r for r in rows if r.get("mean_precision") is not None]
    trivial = [r for r in measured if is_trivial(r)]
    ok = [r for r in measured if not is_trivial(r)]
    summary["files"] = {"measured": len(measured), "trivial": len(trivial),
                        "correlated": len(ok)}
    names = sorted({m for r in ok for m in r["metrics"]})

    def pairs_for(metric, value_of):
        out = []
        for r in ok:
            x, y = r["metrics"].get(metric), value_of(r)
            if isinstance(x, (int, float)) and x == x and y is not None:
                out.append((x, y))
        return out

    for m in names:
        pairs = pairs_for(m, lambda r: r["mean_precision"])
        summary["correlations"][m] = pearson_ci([a for a, _ in pairs], [b for _, b in pairs])
        by_edit = {}
        for e in EDITS:
            pe = pairs_for(m, lambda r, e=e: (r.get("mean_by_edit") or {}).get(e))
            by_edit[e] = pearson_ci([a for a, _ in pe], [b for _, b in pe])
        summary["correlations_by_edit"][m] = by_edit
    return summary
