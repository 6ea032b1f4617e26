"""Structure analysis: which element serves which visual concept, and how editable that is.

document -> units (whole elements by default) -> leave-one-out footprints -> concepts
(a pluggable source) -> heatmaps (a pluggable grounder) -> attribution matrix -> metrics.
Every front end calls ``structure_document`` (or ``structure_file``/``structure_text``)
and reads the ``svgloo.structure/1`` JSON it returns.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from svgloo.engine.protocols import Concept, load_plugin

from svgloo.engine.reading.document import Document, load_document, parse_document
from svgloo.engine.errors import ConfigError, LimitError
from svgloo.engine.limits import DEFAULT_LIMITS, Limits
from svgloo.engine.leave_one_out.loo import LooResult, leave_one_out
from svgloo.structure.metrics import DEFINITIONS, attribution_row, compute_metrics, merge_groups
from svgloo.engine.reading.safety import check_document
from svgloo.engine.reading.units import UnitSet, extract_units
from svgloo.engine.processes.workers import RenderPool, shared_pool
from svgloo.engine.settings import DEFAULT_RENDER_SIZE

SCHEMA = "svgloo.structure/1"
CONCEPT_SOURCES = ("auto", "author", "labels", "regions", "vlm")
GROUNDERS = ("auto", "labels", "regions", "clipseg", "masks")
MERGE_IOU = 0.9

METRIC_HELP = {
    "purity": "mean share of each active unit's attribution that goes to its main concept "
              "(1 = every element draws one concept)",
    "coverage": "fraction of concepts that are the main concept of at least one element "
                "(1 = every concept has its own elements)",
    "compactness": "how concentrated each concept is in few elements (normalised "
                   "Herfindahl; 1 = one element per concept)",
    "locality": "how close together in the source each concept's elements are "
                "(1 = contiguous in z-order)",
    "crosstalk": "attribution a concept's elements give to other concepts, relative to "
                 "their own (0 = editing one concept leaves the others alone)",
}


@dataclass(frozen=True)
class StructureSettings:
    concepts: tuple[str, ...] = ()
    concept_source: str = "auto"
    grounder: str = "auto"
    masks_dir: str | None = None
    definitions: str = "paper"
    subpaths: bool = False
    size: int = DEFAULT_RENDER_SIZE
    method: str = "fast"
    limits: Limits = field(default=DEFAULT_LIMITS)
    device: str | None = None          # for model plugins (vlm, clipseg)

    def key(self) -> dict:
        d = asdict(self)
        d.pop("limits")
        d["concepts"] = list(self.concepts)
        return d

    def with_(self, **changes) -> "StructureSettings":
        return replace(self, **changes)


@dataclass
class StructureRun:
    """A finished structure analysis: the JSON result plus the arrays front ends draw."""

    result: dict
    doc: Document
    units: UnitSet
    loo: LooResult
    concepts: list[Concept]
    heatmaps: np.ndarray        # (K, S, S) float32
    attribution: np.ndarray     # (U, K) float64
    metrics: object = None      # svgloo.structure.metrics.StructureMetrics

    def footprint(self, unit: int) -> np.ndarray:
        return self.loo.patches[unit].footprint(self.loo.full)


# --- plugins ---------------------------------------------------------------------------

_instances: dict = {}
_instances_lock = threading.Lock()


def _plugin(group: str, name: str, device: str | None = None):
    """A cached plugin instance (model plugins stay warm between calls)."""
    key = (group, name, device)
    with _instances_lock:
        if key not in _instances:
            try:
                cls = load_plugin(group, name)
            except KeyError as exc:
                raise ConfigError(None, str(exc.args[0])) from None
            try:
                _instances[key] = cls(device=device)
            except TypeError:
                _instances[key] = cls()
        return _instances[key]


def _weights_available(group: str, name: str) -> bool:
    try:
        cls = load_plugin(group, name)
    except (KeyError, ImportError):
        return False
    check = getattr(cls, "weights_available", None)
    try:
        return bool(check()) if check else False
    except Exception:  # noqa: BLE001 - a broken cache or a missing optional dependency
        return False


def _check_settings(doc: Document, s: StructureSettings) -> None:
    if s.concept_source not in CONCEPT_SOURCES:
        from svgloo.engine.protocols import discover

        if s.concept_source not in discover("svgloo.concepts"):
            raise ConfigError(doc.name, f"unknown concept source {s.concept_source!r} "
                                        f"({', '.join(CONCEPT_SOURCES)})")
    if s.grounder not in GROUNDERS:
        from svgloo.engine.protocols import discover

        if s.grounder not in discover("svgloo.grounders"):
            raise ConfigError(doc.name, f"unknown grounder {s.grounder!r} "
                                        f"({', '.join(GROUNDERS)})")
    if s.definitions not in DEFINITIONS:
        raise ConfigError(doc.name, f"unknown definitions {s.definitions!r} "
                                    "(paper, packed or lica)")
    if s.method not in ("fast", "naive"):
        raise ConfigError(doc.name, f"unknown method {s.method!r} (fast or naive)")


def find_concepts(doc: Document, render: np.ndarray, settings: StructureSettings,
                  options: dict, notes: list) -> tuple[str, list[Concept]]:
    """(source used, concepts) following the ``auto`` order: author, labels (two or
    more), vlm (weights present), regions."""
    src = settings.concept_source
    if src == "auto" and settings.grounder == "masks" and settings.masks_dir \
            and not settings.concepts:
        from svgloo.plugins.grounders import mask_names

        names = mask_names(settings.masks_dir)
        if names:
            notes.append(f"concepts from the mask files in {settings.masks_dir}")
            return "author", _plugin("svgloo.concepts", "author").concepts(
                doc, render, {**options, "concepts": names})
    if src == "auto":
        from svgloo.plugins.concepts_author import config_concepts

        if settings.concepts:
            return "author", _plugin("svgloo.concepts", "author").concepts(doc, render, options)
        names, where = config_concepts(doc.name)
        if names:
            notes.append(f"concepts from {where}")
            return "author", _plugin("svgloo.concepts", "author").concepts(doc, render, options)
        labels = _plugin("svgloo.concepts", "labels").concepts(doc, render, options)
        if len(labels) >= 2:
            return "labels", labels
        if _weights_available("svgloo.concepts", "vlm"):
            return "vlm", _plugin("svgloo.concepts", "vlm", settings.device).concepts(
                doc, render, options)
        return "regions", _plugin("svgloo.concepts", "regions").concepts(doc, render, options)
    if src == "author" and not settings.concepts:
        from svgloo.plugins.concepts_author import config_concepts

        names, where = config_concepts(doc.name)
        if names:
            notes.append(f"concepts from {where}")
    device = settings.device if src == "vlm" else None
    return src, _plugin("svgloo.concepts", src, device).concepts(doc, render, options)


def choose_grounder(doc: Document, source: str, settings: StructureSettings) -> tuple[str, str]:
    """(grounder name, reason)."""
    if settings.grounder != "auto":
        return settings.grounder, "given"
    if source in ("labels", "regions"):
        return source, f"{source} concepts are grounded by their own {source[:-1]}s"
    if settings.masks_dir:
        # the paper's order: supplied masks first, CLIPSeg where a mask fails the rule
        return "masks", "--masks given (supplied masks are preferred over CLIPSeg)"
    if _weights_available("svgloo.grounders", "clipseg"):
        return "clipseg", "CLIPSeg weights are present"
    raise ConfigError(doc.name, f"cannot ground {source} concepts: no CLIPSeg weights in the "
                                "cache and no --masks DIR; install the [vlm] extra and cache "
                                "CIDAS/clipseg-rd64-refined, give --masks DIR with one PNG "
                                "per concept, or use --concepts labels|regions")


def _clipseg_fallback(doc: Document, render: np.ndarray, concepts: list[Concept],
                      heatmaps: np.ndarray, rejected: dict[int, str], options: dict,
                      settings: StructureSettings, notes: list) -> np.ndarray:
    """The paper's rule: a concept whose scored mask fails it is grounded by CLIPSeg."""
    names = ", ".join(repr(concepts[k].name) for k in sorted(rejected))
    if not _weights_available("svgloo.grounders", "clipseg"):
        k = min(rejected)
        raise ConfigError(doc.name, f"concept {concepts[k].name!r}: {rejected[k]}, so it "
                                    "falls back to CLIPSeg, whose weights are not cached "
                                    "(install the [vlm] extra and cache "
                                    "CIDAS/clipseg-rd64-refined, or drop its score)")
    clipseg = _plugin("svgloo.grounders", "clipseg", settings.device)
    idx = sorted(rejected)
    again = np.asarray(clipseg.heatmaps(doc, render, [concepts[k] for k in idx], options),
                       np.float32)
    heatmaps = heatmaps.copy()
    heatmaps[idx] = again
    notes.append(f"grounded by CLIPSeg (their masks failed the score/area rule): {names}")
    return heatmaps


def merge_concepts(concepts: list[Concept], heatmaps: np.ndarray,
                   notes: list) -> tuple[list[Concept], np.ndarray]:
    """Concepts whose heatmaps overlap with IoU > 0.9 (thresholded at 0.5) become one:
    names joined with " / ", heatmap the pixelwise maximum."""
    if len(concepts) < 2:
        return concepts, heatmaps
    groups = merge_groups(heatmaps, MERGE_IOU)
    if len(groups) == len(concepts):
        return concepts, heatmaps
    out_c, out_h = [], []
    for g in groups:
        first = concepts[g[0]]
        if len(g) == 1:
            out_c.append(first)
            out_h.append(heatmaps[g[0]])
            continue
        name = " / ".join(concepts[i].name for i in g)
        elements = tuple(e for i in g for e in concepts[i].elements)
        masks = [m for i in g if (m := concepts[i].mask) is not None]
        mask = np.logical_or.reduce(masks) if masks else None
        out_c.append(Concept(name, first.source, elements, mask))
        out_h.append(heatmaps[g].max(axis=0))
        notes.append(f"merged concepts {name!r}: their heatmaps overlap (IoU > {MERGE_IOU})")
    return out_c, np.stack(out_h).astype(np.float32)


def _drawn_mask(loo: LooResult) -> np.ndarray:
    """Pixels that some unit visibly changes (footprint above the 12/255 threshold)."""
    from svgloo.engine.leave_one_out.loo import CHANGED_THRESHOLD

    drawn = np.zeros(loo.full.shape[:2], bool)
    for patch in loo.patches:
        if patch.box is None:
            continue
        assert patch.pixels is not None  # a patch with a box has its pixels
        y0, y1, x0, x1 = patch.box
        diff = np.abs(loo.full[y0:y1, x0:x1].astype(np.int16) - patch.pixels.astype(np.int16))
        drawn[y0:y1, x0:x1] |= diff.max(axis=2) > CHANGED_THRESHOLD
    return drawn


def compute_attribution(loo: LooResult, heatmaps: np.ndarray, normalized: bool) -> np.ndarray:
    """(U, K) attribution from each unit's footprint (cropped to its patch box)."""
    k = heatmaps.shape[0]
    A = np.zeros((len(loo.patches), k))
    for i, patch in enumerate(loo.patches):
        if patch.box is None or k == 0:
            continue
        assert patch.pixels is not None  # a patch with a box has its pixels
        y0, y1, x0, x1 = patch.box
        diff = np.abs(loo.full[y0:y1, x0:x1].astype(np.int16) - patch.pixels.astype(np.int16))
        fp = diff.max(axis=2).astype(np.float64) / 255.0
        A[i] = attribution_row(fp, heatmaps[:, y0:y1, x0:x1], normalized)
    return A


# --- the entry points ------------------------------------------------------------------

def structure_document(doc: Document, settings: StructureSettings = StructureSettings(), *,
                       pool: RenderPool | None = None, progress=None,
                       layer_cache=None) -> StructureRun:
    """Analyse a parsed document's structure. Raises SvglooError subclasses only."""
    t0 = time.perf_counter()
    _check_settings(doc, settings)
    limits = settings.limits
    pool = pool or shared_pool(limits)
    warnings = check_document(doc, limits)
    units = extract_units(doc, settings.subpaths)
    if len(units) > limits.max_units:
        hint = " (try without --subpaths)" if settings.subpaths else ""
        raise LimitError(doc.name, f"{len(units)} scoring units; the limit is "
                                   f"{limits.max_units}{hint}")
    loo = leave_one_out(units, settings.method, settings.size, limits, pool, progress,
                        layer_cache=layer_cache)
    t_loo = time.perf_counter() - t0
    render = loo.full
    notes: list[str] = []
    whole = units if not settings.subpaths else extract_units(doc, False)
    options = {"concepts": list(settings.concepts), "file": doc.name, "pool": pool,
               "limits": limits, "size": settings.size, "masks_dir": settings.masks_dir,
               "units": whole, "drawn": _drawn_mask(loo)}
    source, concepts = find_concepts(doc, render, settings, options, notes)
    grounder_name = None
    grounder_reason = None
    S = render.shape[0]
    heatmaps = np.zeros((0, S, render.shape[1]), np.float32)
    if concepts:
        grounder_name, grounder_reason = choose_grounder(doc, source, settings)
        device = settings.device if grounder_name == "clipseg" else None
        grounder = _plugin("svgloo.grounders", grounder_name, device)
        rejected: dict[int, str] = {}
        heatmaps = np.asarray(grounder.heatmaps(doc, render, concepts,
                                                {**options, "rejected_masks": rejected}),
                              np.float32)
        if rejected and grounder_name == "masks":
            heatmaps = _clipseg_fallback(doc, render, concepts, heatmaps, rejected,
                                         options, settings, notes)
        if heatmaps.shape != (len(concepts),) + render.shape[:2]:
            raise ConfigError(doc.name, f"grounder {grounder_name!r} returned heatmaps of shape "
                                        f"{heatmaps.shape}, expected "
                                        f"{(len(concepts),) + render.shape[:2]}")
        heatmaps = np.clip(np.nan_to_num(heatmaps), 0.0, 1.0)
        concepts, heatmaps = merge_concepts(concepts, heatmaps, notes)
    else:
        notes.append(f"no concepts found ({source} source): nothing to attribute, metrics "
                     "are null; give --concept NAME or try --concepts regions")
    lica = settings.definitions == "lica"
    A = compute_attribution(loo, heatmaps, normalized=not lica)
    m = compute_metrics(A, settings.definitions)
    if not concepts:
        for key in ("purity", "coverage", "compactness", "locality", "crosstalk"):
            setattr(m, key, None)

    concept_rows = []
    for j, c in enumerate(concepts):
        row = {"name": c.name, "source": c.source,
               "units": [i for i in range(len(units)) if m.primary[i] == j],
               "heat_mass": round(float(heatmaps[j].sum()), 3)}
        if c.source == "regions":
            # a colour region's paint: the low-purity rule counts same-paint regions once
            row["color"] = _median_hex(render, heatmaps[j] > 0.5)
        concept_rows.append(row)
    unit_rows = []
    for u in units.units:
        i = u.index
        (l0, c0) = doc.position(u.start)
        unit_rows.append({"index": i, "tag": u.tag, "id": u.id, "kind": u.kind,
                          "subpath": u.subpath, "line": l0, "character": c0,
                          "offsets": [u.start, u.end],
                          "active": bool(m.active[i]) if concepts else False,
                          "primary": m.primary[i] if concepts else None,
                          "purity": None if not concepts or m.unit_purity[i] is None
                          else round(m.unit_purity[i], 6),
                          "footprint_pixels": loo.patches[i].footprint_pixels(loo.full)})
    per_concept = [{"name": c.name,
                    "compactness": _r(m.per_concept[j]["compactness"]),
                    "locality": _r(m.per_concept[j]["locality"]),
                    "crosstalk": _r(m.per_concept[j]["crosstalk"]),
                    **{k: _r(m.per_concept[j][k]) for k in READINGS
                       if k in m.per_concept[j]}}
                   for j, c in enumerate(concepts)]
    result = {
        "schema": SCHEMA,
        "file": doc.name,
        "definitions": settings.definitions,
        "concept_source": source,
        "grounder": grounder_name,
        "grounder_reason": grounder_reason,
        "unit_kind": "subpath" if settings.subpaths else "element",
        "method": settings.method,
        "render_size": settings.size,
        "concepts": concept_rows,
        "attribution": [[round(float(x), 6) for x in row] for row in A],
        "units": unit_rows,
        "metrics": m.metrics_json(),
        "per_concept": per_concept,
        "warnings": warnings,
        "notes": notes,
        "timings": {"loo_s": round(t_loo, 4), "renders": loo.renders,
                    "total_s": round(time.perf_counter() - t0, 4)},
    }
    if lica and concepts:
        result["lica_extra"] = {k: round(float(v), 6) for k, v in m.extra.items()}
    elif concepts:
        # the other readings of eq. 8 and 9, beside the headline values
        result["readings"] = {k: _r(m.extra.get(k)) for k in READINGS}
    return StructureRun(result, doc, units, loo, list(concepts), heatmaps, A, m)


def _median_hex(render: np.ndarray, mask: np.ndarray) -> str | None:
    """``#rrggbb`` of the per-channel median colour of ``render`` under ``mask``."""
    if render.shape[:2] != mask.shape or not mask.any():
        return None
    r, g, b = (int(round(v)) for v in np.median(render[mask][:, :3].astype(np.float64), axis=0))
    return f"#{r:02x}{g:02x}{b:02x}"


READINGS = ("locality_paper", "locality_packed", "compactness_column")


def _r(x):
    return None if x is None else round(float(x), 6)


def structure_file(path: str, settings: StructureSettings = StructureSettings(),
                   **kw) -> StructureRun:
    return structure_document(load_document(path, settings.limits), settings, **kw)


def structure_text(text: str | bytes, name: str,
                   settings: StructureSettings = StructureSettings(), **kw) -> StructureRun:
    """Analyse a document held in memory (an editor buffer); ``name`` is its path or URI
    (used to find svgloo.toml concepts when it is a real path)."""
    return structure_document(parse_document(text, name, settings.limits), settings, **kw)


__all__ = ["StructureSettings", "StructureRun", "structure_document", "structure_file",
           "structure_text", "SCHEMA", "METRIC_HELP", "CONCEPT_SOURCES", "GROUNDERS"]
