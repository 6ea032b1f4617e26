"""Attribution matrix and structural metrics, as plain functions on numpy arrays.

Three sets of definitions (see docs/structure.md for the formulas side by side):

- ``paper`` (default): the paper's equations 4-9. Attribution is normalised by the unit's
  footprint mass, so ``A[i, j]`` is the footprint-weighted mean heat of concept j under
  unit i (in [0, 1]); units whose row sum is below 0.01 are inactive; concept groups are
  the active units whose primary concept is j. Locality is the literal equation
  ``1 - sum_i w_i |i - mu_c| / ((N - 1) / 2)``. Compactness over the concept's group is one
  reading of a garbled equation; the other (the whole column, lica's) is reported beside
  it as ``compactness_column``.
- ``packed``: the same, except locality is measured against the best z-order the group's
  units could have (``locality_packed``): 1 for a contiguous group of any size.
- ``lica``: the published lica-bench ``svg_loo`` code (``compute_attribution_matrix`` and
  ``compute_structural_metrics``): raw unnormalised sums, a unit is active when its row
  maximum exceeds 0.005, soft coverage against 0.5 x the median of per-concept maxima,
  compactness/locality over each concept's whole column, locality normalised by
  (N - 1) / 2, crosstalk over hard argmax groups of all units.

Nothing here knows about SVG: the engine passes footprints and heatmaps in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EPS = 1e-8
ACTIVE_THRESHOLD = 0.01          # paper: row sum of the normalised attribution
LICA_ACTIVE_THRESHOLD = 0.005    # lica: row max of the raw attribution
DEFINITIONS = ("paper", "packed", "lica")


# --- attribution ----------------------------------------------------------------------

def attribution_row(footprint: np.ndarray, heatmaps: np.ndarray,
                    normalized: bool = True) -> np.ndarray:
    """One unit's row: ``sum(M * H_j) / (sum(M) + eps)`` for each concept j (paper eq. 4),
    or the raw ``sum(M * H_j)`` when ``normalized`` is False (lica). ``footprint`` (H, W),
    ``heatmaps`` (K, H, W); both may be the same crop of the canvas."""
    m = np.asarray(footprint, np.float64)
    h = np.asarray(heatmaps, np.float64)
    if h.shape[0] == 0:
        return np.zeros(0)
    overlap = np.tensordot(h, m, axes=([1, 2], [0, 1]))
    if normalized:
        overlap = overlap / (m.sum() + EPS)
    return overlap


def attribution_matrix(footprints, heatmaps: np.ndarray, normalized: bool = True) -> np.ndarray:
    """(U, K) attribution of U footprints (an (U, H, W) array or any iterable of (H, W)
    arrays) against K heatmaps (K, H, W)."""
    heatmaps = np.asarray(heatmaps)
    rows = [attribution_row(fp, heatmaps, normalized) for fp in footprints]
    if not rows:
        return np.zeros((0, heatmaps.shape[0]))
    return np.stack(rows).reshape(len(rows), heatmaps.shape[0])


# --- results --------------------------------------------------------------------------

@dataclass
class StructureMetrics:
    definitions: str
    active: np.ndarray                     # (U,) bool
    primary: list                          # per unit: concept index, or None when inactive
    unit_purity: list                      # per unit: purity, or None when inactive
    groups: list                           # per concept: unit indices whose primary it is
    purity: float | None
    coverage: float | None
    compactness: float | None
    locality: float | None
    crosstalk: float | None
    per_concept: list = field(default_factory=list)  # [{"compactness", "locality", "crosstalk"}]
    extra: dict = field(default_factory=dict)       # lica: contiguity, editability

    def metrics_json(self) -> dict:
        return {k: _round(getattr(self, k))
                for k in ("purity", "coverage", "compactness", "locality", "crosstalk")}


def _round(x, nd: int = 6):
    return None if x is None else round(float(x), nd)


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


# --- paper definitions ------------------------------------------------------------------

def unit_purity(row: np.ndarray) -> float:
    """Eq. 5: ``max_j A[i, j] / sum_j A[i, j]`` (1.0 for an all-zero row)."""
    total = float(row.sum())
    return float(row.max() / total) if total > 0 else 1.0


def herfindahl_compactness(weights: np.ndarray) -> float:
    """Eq. 8 for one concept: shares ``s = w / sum(w)`` over the concept's units,
    ``H = sum(s^2)``, normalised ``(H - 1/n) / (1 - 1/n)``; 1.0 with a single unit."""
    w = np.asarray(weights, np.float64)
    n = len(w)
    if n <= 1 or w.sum() <= 0:
        return 1.0
    s = w / w.sum()
    h = float((s ** 2).sum())
    return float(np.clip((h - 1.0 / n) / (1.0 - 1.0 / n), 0.0, 1.0))


def weighted_mad(positions: np.ndarray, weights: np.ndarray) -> float:
    """Weighted mean absolute deviation of positions from their weighted centroid."""
    p = np.asarray(positions, np.float64)
    w = np.asarray(weights, np.float64)
    if w.sum() <= 0:
        return 0.0
    w = w / w.sum()
    c = float((w * p).sum())
    return float((w * np.abs(p - c)).sum())


def paper_locality(positions, weights, n_units: int) -> float:
    """Eq. 9 read literally: ``1 - sum_i w_i |i - mu_c| / ((N - 1) / 2)`` with
    ``w_i = A[i, c] / sum_{i in G_c} A[i, c]`` over the concept's group, ``mu_c = sum w_i i``
    (the weighted centroid of the units' z positions) and N the file's unit count.
    1.0 for a single unit or N = 1. Even a contiguous group scores below 1 (two adjacent
    equal units: ``1 - 1 / (N - 1)``), and the more units a concept has, the lower."""
    w = np.asarray(weights, np.float64)
    if len(w) <= 1 or w.sum() <= 0 or n_units <= 1:
        return 1.0
    return float(1.0 - weighted_mad(positions, w) / ((n_units - 1) / 2.0))


def packed_locality(positions, weights, n_units: int) -> float:
    """Eq. 9 with our normalisation (``--definitions packed``), 1 = contiguous in z-order.

    D = weighted MAD of the units' z positions (their unit indices) from the weighted
    centroid. D_min = the same weighted MAD with the same units packed next to each
    other (positions 0..n-1 in their z-order): the best any reordering of the file could
    do with these units. D_max = (N - 1) / 2, the largest weighted MAD any weights can
    have on positions 0..N-1 (half the weight at each end). Locality =
    1 - (D - D_min) / (D_max - D_min), clipped to [0, 1]; 1.0 for a single unit or when
    D_max <= D_min (the concept's units are all the file's units)."""
    p = np.asarray(positions, np.float64)
    w = np.asarray(weights, np.float64)
    n = len(p)
    if n <= 1 or w.sum() <= 0:
        return 1.0
    order = np.argsort(p, kind="stable")
    p, w = p[order], w[order]
    d = weighted_mad(p, w)
    d_min = weighted_mad(np.arange(n, dtype=np.float64), w)
    d_max = (n_units - 1) / 2.0
    if d_max - d_min <= EPS:
        return 1.0
    return float(np.clip(1.0 - (d - d_min) / (d_max - d_min), 0.0, 1.0))


locality_score = packed_locality   # the name earlier callers and tests use


def column_compactness(column: np.ndarray, active_threshold: float) -> float:
    """Compactness over a concept's whole column (lica's reading of eq. 8): shares
    ``col / sum(col)`` over every unit, ``n_act`` = units above ``active_threshold``,
    ``max(0, (H - 1/n_act) / (1 - 1/n_act))``; 1.0 when the column is empty, the file has
    fewer than 2 units or fewer than 2 are active."""
    col = np.clip(np.asarray(column, np.float64), 0, None)
    total = col.sum()
    n_act = int((col > active_threshold).sum())
    if total <= 0 or len(col) < 2 or n_act < 2:
        return 1.0
    h = float(((col / total) ** 2).sum())
    return max(0.0, (h - 1.0 / n_act) / (1.0 - 1.0 / n_act))


def paper_metrics(A: np.ndarray, active_threshold: float = ACTIVE_THRESHOLD,
                  locality: str = "paper") -> StructureMetrics:
    """The paper's definitions; ``locality="packed"`` makes the packed variant the
    headline locality (both are always in ``per_concept``)."""
    A = np.asarray(A, np.float64)
    n_units, k = A.shape if A.ndim == 2 else (0, 0)
    row_sum = A.sum(axis=1) if n_units else np.zeros(0)
    active = row_sum >= active_threshold
    primary: list = [None] * n_units
    purity: list = [None] * n_units
    groups: list[list[int]] = [[] for _ in range(k)]
    for i in np.flatnonzero(active):
        j = int(np.argmax(A[i]))
        primary[i] = j
        purity[i] = unit_purity(A[i])
        groups[j].append(int(i))
    per_concept = []
    for j in range(k):
        g = groups[j]
        if not g:
            per_concept.append({"compactness": None, "locality": None, "crosstalk": None,
                                "locality_paper": None, "locality_packed": None,
                                "compactness_column": column_compactness(A[:, j],
                                                                         LICA_ACTIVE_THRESHOLD)})
            continue
        w = A[g, j]
        own = float(w.sum())
        if k > 1:
            others = [float(A[g, kk].sum()) / own for kk in range(k) if kk != j]
            cross = float(np.mean(others))
        else:
            cross = 0.0
        lit = paper_locality(g, w, n_units)
        packed = packed_locality(g, w, n_units)
        per_concept.append({"compactness": herfindahl_compactness(w),
                            "locality": packed if locality == "packed" else lit,
                            "crosstalk": cross, "locality_paper": lit,
                            "locality_packed": packed,
                            "compactness_column": column_compactness(A[:, j],
                                                                     LICA_ACTIVE_THRESHOLD)})
    active_purities = [p for p in purity if p is not None]
    mean_purity = float(np.mean(active_purities)) if active_purities else None
    coverage = (sum(1 for g in groups if g) / k) if k else None
    if k and not active_purities:
        coverage = 0.0
    extra = {"locality_paper": _mean(c["locality_paper"] for c in per_concept),
             "locality_packed": _mean(c["locality_packed"] for c in per_concept),
             # lica's reading of eq. 8, over every concept (its column need not have a group)
             "compactness_column": _mean(c["compactness_column"] for c in per_concept)}
    return StructureMetrics(
        "packed" if locality == "packed" else "paper", active, primary, purity, groups,
        mean_purity, coverage,
        _mean(c["compactness"] for c in per_concept),
        _mean(c["locality"] for c in per_concept),
        _mean(c["crosstalk"] for c in per_concept),
        per_concept, extra)


# --- lica definitions -------------------------------------------------------------------

def lica_metrics(M: np.ndarray, active_threshold: float = LICA_ACTIVE_THRESHOLD,
                 coverage_threshold: float = 0.0) -> StructureMetrics:
    """The published code's ``compute_structural_metrics`` on a raw overlap matrix."""
    M = np.asarray(M, np.float64)
    n, k = M.shape if M.ndim == 2 else (0, 0)
    if n == 0 or k == 0:
        return StructureMetrics("lica", np.zeros(n, bool), [None] * n, [None] * n,
                                [[] for _ in range(k)], None, None, None, None, None,
                                [{"compactness": None, "locality": None, "crosstalk": None}
                                 for _ in range(k)])
    # soft coverage
    per_concept_max = M.max(axis=0)
    if coverage_threshold <= 0:
        positive = per_concept_max[per_concept_max > 0]
        coverage_threshold = (max(float(np.median(positive)) * 0.5, 0.005)
                              if len(positive) else 0.01)
    coverage = float(np.mean(np.clip(per_concept_max / coverage_threshold, 0.0, 1.0)))
    # purity over active units (row max above threshold), positive parts only
    active = M.max(axis=1) > active_threshold
    purity: list = [None] * n
    primary: list = [None] * n
    for i in np.flatnonzero(active):
        pos = np.clip(M[i], 0, None)
        purity[i] = float(pos.max() / pos.sum()) if pos.sum() > 0 else 1.0
        primary[i] = int(np.argmax(M[i]))
    ap = [p for p in purity if p is not None]
    mean_purity = float(np.mean(ap)) if ap else 1.0
    # hard argmax groups over every unit (inactive ones too)
    hard: list[list[int]] = [[] for _ in range(k)]
    for unit in range(n):
        hard[int(np.argmax(M[unit]))].append(unit)
    cross = np.zeros((k, k))
    for a in range(k):
        if not hard[a]:
            continue
        own = float(np.clip(M[hard[a], a], 0, None).sum())
        if own <= 0:
            continue
        for b in range(k):
            cross[a, b] = float(np.clip(M[hard[a], b], 0, None).sum()) / own
    off = [cross[a, b] for a in range(k) for b in range(k) if a != b]
    mean_cross = float(np.mean(off)) if off else 0.0
    per_concept = []
    contiguity = []
    for j in range(k):
        col = np.clip(M[:, j], 0, None)
        comp = column_compactness(col, active_threshold)
        idx = np.flatnonzero(col > active_threshold)
        if len(idx) <= 1 or col[idx].sum() <= 0:
            loc = 1.0
        else:
            mad = weighted_mad(idx, col[idx])
            max_mad = (n - 1) / 2.0
            loc = 1.0 if max_mad <= 0 else max(0.0, min(1.0, 1.0 - mad / max_mad))
        g = sorted(hard[j])
        if len(g) <= 1:
            contiguity.append(1.0)
        else:
            gaps = np.diff(g) - 1
            contiguity.append(max(0.0, 1.0 - float(np.mean(gaps)) / max(n - 1, 1)))
        ct = float(np.mean([cross[j, b] for b in range(k) if b != j])) if k > 1 else 0.0
        per_concept.append({"compactness": comp, "locality": loc, "crosstalk": ct})
    return StructureMetrics(
        "lica", active, primary, purity, hard, mean_purity, coverage,
        float(np.mean([c["compactness"] for c in per_concept])),
        float(np.mean([c["locality"] for c in per_concept])),
        mean_cross, per_concept,
        {"contiguity": float(np.mean(contiguity)), "editability": coverage * mean_purity,
         "coverage_threshold": coverage_threshold})


def compute_metrics(A: np.ndarray, definitions: str = "paper") -> StructureMetrics:
    if definitions in ("paper", "packed"):
        return paper_metrics(A, locality=definitions)
    if definitions == "lica":
        return lica_metrics(A)
    raise ValueError(f"unknown definitions {definitions!r} (paper, packed or lica)")


# --- concept merging --------------------------------------------------------------------

def mask_iou(a: np.ndarray, b: np.ndarray, threshold: float = 0.5) -> float:
    ma, mb = a >= threshold, b >= threshold
    union = np.logical_or(ma, mb).sum()
    if union == 0:
        return 0.0
    return float(np.logical_and(ma, mb).sum() / union)


def merge_groups(heatmaps: np.ndarray, iou: float = 0.9, threshold: float = 0.5) -> list[list[int]]:
    """Concept indices grouped so that heatmaps with IoU > ``iou`` (binarised at
    ``threshold``) land in one group (transitively); groups in first-index order."""
    k = len(heatmaps)
    parent = list(range(k))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a in range(k):
        for b in range(a + 1, k):
            if mask_iou(heatmaps[a], heatmaps[b], threshold) > iou:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    out: dict[int, list[int]] = {}
    for i in range(k):
        out.setdefault(find(i), []).append(i)
    return list(out.values())
