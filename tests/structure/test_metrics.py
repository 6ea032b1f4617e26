"""Structure metrics on hand-built footprints and heatmaps; every expected value is
worked out by hand in the test, not taken from the code under test."""

from __future__ import annotations

import numpy as np
import pytest

from svgloo.structure.metrics import (attribution_matrix, attribution_row, compute_metrics,
                                      herfindahl_compactness, lica_metrics, locality_score,
                                      merge_groups, paper_locality, paper_metrics)
from svgloo.plugins.concepts_labels import humanize_id, is_generated
from svgloo.plugins.concepts_regions import segment_regions

S = 40


def square(y0, y1, x0, x1, value=1.0):
    a = np.zeros((S, S), np.float32)
    a[y0:y1, x0:x1] = value
    return a


# three disjoint 10x10 concepts
H = np.stack([square(0, 10, 0, 10), square(0, 10, 20, 30), square(25, 35, 5, 15)])


def test_attribution_row_normalised_and_raw():
    # footprint covers concept 0 fully (100 px at 1.0) and 50 px of concept 1 at 0.5
    fp = square(0, 10, 0, 10) + square(0, 5, 20, 30, 0.5)
    mass = 100 * 1.0 + 50 * 0.5
    row = attribution_row(fp, H)
    assert row == pytest.approx([100 / mass, 25 / mass, 0.0], abs=1e-6)
    raw = attribution_row(fp, H, normalized=False)
    assert raw == pytest.approx([100.0, 25.0, 0.0])


def test_one_element_per_concept_is_perfect():
    A = attribution_matrix([H[0], H[1], H[2]], H)
    assert A == pytest.approx(np.eye(3), abs=1e-6)
    m = paper_metrics(A)
    assert m.purity == pytest.approx(1.0)
    assert m.coverage == 1.0
    assert m.compactness == 1.0
    assert m.locality == 1.0
    assert m.crosstalk == pytest.approx(0.0, abs=1e-6)
    assert m.primary == [0, 1, 2]
    assert m.groups == [[0], [1], [2]]


def test_compound_element_over_two_equal_concepts_has_purity_half():
    # unit 0 draws concepts 0 and 1 (equal areas); unit 1 draws concept 2
    A = attribution_matrix([H[0] + H[1], H[2]], H)
    assert A[0] == pytest.approx([0.5, 0.5, 0.0], abs=1e-6)
    m = paper_metrics(A)
    assert m.unit_purity[0] == pytest.approx(0.5, abs=1e-6)
    assert m.unit_purity[1] == pytest.approx(1.0)
    assert m.purity == pytest.approx((0.5 + 1.0) / 2, abs=1e-6)
    # argmax ties go to the first concept: concept 1 has no unit of its own
    assert m.coverage == pytest.approx(2 / 3)
    # concept 0's group is unit 0 alone: it gives 0.5 to concept 1 and 0 to concept 2,
    # relative to its own 0.5 -> (1 + 0) / 2; concept 2's group gives nothing away.
    assert m.per_concept[0]["crosstalk"] == pytest.approx(0.5, abs=1e-6)
    assert m.per_concept[2]["crosstalk"] == pytest.approx(0.0, abs=1e-6)
    assert m.crosstalk == pytest.approx(0.25, abs=1e-6)


def test_inactive_units_are_excluded():
    A = np.array([[1.0, 0.0], [0.004, 0.004], [0.0, 0.9]])  # row 1 sums to 0.008 < 0.01
    m = paper_metrics(A)
    assert list(m.active) == [True, False, True]
    assert m.primary == [0, None, 1]
    assert m.unit_purity[1] is None
    assert m.purity == pytest.approx(1.0)


def test_compactness_by_hand():
    assert herfindahl_compactness([0.7]) == 1.0
    # two equal units: H = 0.5 = 1/n -> 0
    assert herfindahl_compactness([0.4, 0.4]) == pytest.approx(0.0)
    # shares 0.75 / 0.25: H = 0.625 -> (0.625 - 0.5) / 0.5
    assert herfindahl_compactness([0.6, 0.2]) == pytest.approx(0.25)
    # concept split over two units in the matrix
    A = np.array([[0.6, 0.0], [0.2, 0.0], [0.0, 1.0]])
    m = paper_metrics(A)
    assert m.per_concept[0]["compactness"] == pytest.approx(0.25)
    assert m.compactness == pytest.approx((0.25 + 1.0) / 2)


def test_packed_locality_far_apart_versus_adjacent():
    n = 6
    # concept 0 split across z-positions 0 and N-1 with equal weight:
    # D = (N-1)/2 = 2.5 = D_max, D_min (packed at 0, 1) = 0.5 -> locality 0
    A = np.zeros((n, 2))
    A[0, 0] = A[n - 1, 0] = 0.8
    A[1:n - 1, 1] = 0.9
    far = paper_metrics(A, locality="packed")
    assert far.per_concept[0]["locality"] == pytest.approx(0.0, abs=1e-9)
    # adjacent at z 2 and 3: D = 0.5 = D_min -> locality 1
    B = np.zeros((n, 2))
    B[2, 0] = B[3, 0] = 0.8
    B[[0, 1, 4, 5], 1] = 0.9
    near = paper_metrics(B, locality="packed")
    assert near.per_concept[0]["locality"] == pytest.approx(1.0)
    # one step apart (z 1 and 3): D = 1, so 1 - (1 - 0.5) / (2.5 - 0.5) = 0.75
    assert locality_score([1, 3], [0.8, 0.8], n) == pytest.approx(0.75)
    # the other concept at z 1..4 with equal weights is contiguous
    assert far.per_concept[1]["locality"] == pytest.approx(1.0)


def test_paper_locality_is_the_literal_equation():
    # locality(c) = 1 - sum_i w_i |i - mu_c| / ((N-1)/2), w = A[i,c] / sum over the group,
    # mu_c = sum_i w_i i; values worked out by hand.
    n = 6
    A = np.zeros((n, 2))
    A[0, 0] = A[n - 1, 0] = 0.8          # z 0 and 5: mu 2.5, MAD 2.5 -> 0
    A[1:n - 1, 1] = 0.9                  # z 1..4: mu 2.5, MAD (1.5+.5+.5+1.5)/4 = 1 -> 0.6
    m = paper_metrics(A)
    assert m.definitions == "paper"
    assert m.per_concept[0]["locality"] == pytest.approx(0.0, abs=1e-12)
    assert m.per_concept[1]["locality"] == pytest.approx(1 - 1.0 / 2.5)
    assert m.locality == pytest.approx(0.3)
    # adjacent z 2 and 3: MAD 0.5 -> 1 - 0.5 / 2.5 = 0.8 (the packed variant says 1)
    assert paper_locality([2, 3], [0.8, 0.8], n) == pytest.approx(0.8)
    assert locality_score([2, 3], [0.8, 0.8], n) == pytest.approx(1.0)
    # unequal weights, N = 3: group {0, 2}, w = 0.75, 0.25, mu = 0.5,
    # MAD = 0.75 * 0.5 + 0.25 * 1.5 = 0.75, divided by (3 - 1) / 2 = 1 -> 0.25
    B = np.array([[0.6, 0.0], [0.0, 1.0], [0.2, 0.0]])
    mb = compute_metrics(B, "paper")
    assert mb.per_concept[0]["locality"] == pytest.approx(0.25)
    assert mb.per_concept[1]["locality"] == 1.0
    assert mb.locality == pytest.approx(0.625)
    # both readings are kept beside the headline value
    assert mb.extra["locality_paper"] == pytest.approx(0.625)
    packed = compute_metrics(B, "packed")
    # packed: D = 0.75, D_min (at 0, 1) = 0.75*0.25 + 0.25*0.75 = 0.375, D_max = 1
    # -> 1 - (0.75 - 0.375) / (1 - 0.375) = 0.4
    assert packed.per_concept[0]["locality"] == pytest.approx(0.4)
    assert packed.definitions == "packed"
    assert packed.extra["locality_paper"] == pytest.approx(0.625)
    # single-unit file
    assert paper_locality([0], [1.0], 1) == 1.0


def test_compactness_group_and_column_readings():
    # concept 0's group is unit 0 alone (unit 1 is primarily concept 1), but its column
    # also has 0.3 under unit 1.
    A = np.array([[0.6, 0.0], [0.3, 0.7], [0.0, 1.0]])
    m = paper_metrics(A)
    assert m.groups == [[0], [1, 2]]
    assert m.per_concept[0]["compactness"] == 1.0
    # column (0.6, 0.3, 0): shares 2/3, 1/3, H = 5/9, n_act = 2 -> (5/9 - 1/2) / (1/2)
    assert m.per_concept[0]["compactness_column"] == pytest.approx(1 / 9)
    # concept 1: group and column agree: shares 0.7/1.7, 1/1.7 -> 2H - 1
    h = (0.7 ** 2 + 1.0) / 1.7 ** 2
    assert m.per_concept[1]["compactness"] == pytest.approx(2 * h - 1)
    assert m.per_concept[1]["compactness_column"] == pytest.approx(2 * h - 1)
    assert m.extra["compactness_column"] == pytest.approx((1 / 9 + 2 * h - 1) / 2)


def test_no_concepts_or_units():
    m = paper_metrics(np.zeros((3, 0)))
    assert m.purity is None and m.coverage is None and m.compactness is None
    m = paper_metrics(np.zeros((0, 2)))
    assert m.purity is None and m.coverage == 0.0 and m.compactness is None


def test_lica_definitions_by_hand():
    # raw overlaps; unit 3 is all zero (inactive) and still joins concept 0's hard group
    M = np.array([[100.0, 0.0, 0.0],
                  [20.0, 80.0, 0.0],
                  [0.0, 0.0, 10.0],
                  [0.0, 0.0, 0.0]])
    m = lica_metrics(M)
    # soft coverage: per-concept maxima 100, 80, 10; median 80 -> threshold 40
    assert m.extra["coverage_threshold"] == pytest.approx(40.0)
    assert m.coverage == pytest.approx((1 + 1 + 10 / 40) / 3)
    # purity over active units (row max > 0.005): 1, 0.8, 1
    assert m.purity == pytest.approx((1 + 0.8 + 1) / 3)
    assert m.groups == [[0, 3], [1], [2]]
    # crosstalk matrix rows: group 0 own 100 -> [1, 0, 0]; group 1 own 80 -> [20/80, 1, 0];
    # group 2 -> [0, 0, 1]; mean of the 6 off-diagonal entries
    assert m.crosstalk == pytest.approx((0.25) / 6)
    # compactness of concept 0: column (100, 20, 0, 0), 2 active, shares 100/120, 20/120
    h = (100 / 120) ** 2 + (20 / 120) ** 2
    assert m.per_concept[0]["compactness"] == pytest.approx((h - 0.5) / 0.5)
    # locality of concept 0: indices 0, 1 with weights 5/6, 1/6: centroid 1/6,
    # MAD = 5/6 * 1/6 + 1/6 * 5/6 = 10/36; normalised by (N-1)/2 = 1.5
    assert m.per_concept[0]["locality"] == pytest.approx(1 - (10 / 36) / 1.5)
    assert m.per_concept[1]["locality"] == 1.0
    assert m.compactness == pytest.approx((m.per_concept[0]["compactness"] + 2) / 3)
    assert m.extra["editability"] == pytest.approx(m.coverage * m.purity)


def test_lica_locality_far_apart_is_zero_and_adjacent_is_not_one():
    n = 6
    M = np.zeros((n, 1))
    M[0, 0] = M[n - 1, 0] = 50.0
    assert lica_metrics(M).locality == pytest.approx(0.0)
    M = np.zeros((n, 1))
    M[2, 0] = M[3, 0] = 50.0
    # MAD 0.5 over (N-1)/2 = 2.5: the published normalisation never reaches 1 for a split
    assert lica_metrics(M).locality == pytest.approx(1 - 0.5 / 2.5)


def test_merge_groups_iou():
    a = square(0, 10, 0, 10)
    b = square(0, 10, 0, 10, 0.9)      # same mask at 0.5
    c = square(0, 10, 0, 9)            # IoU 0.9 exactly: not merged (> 0.9 needed)
    d = square(20, 30, 20, 30)
    assert merge_groups(np.stack([a, b, c, d])) == [[0, 1], [2], [3]]


def test_generated_ids():
    for s in ["path123", "g45", "Layer_1", "svg_3", "XMLID_12_", "Capa_1", "a3f9c2d1e0",
              "123e4567-e89b-12d3-a456-426614174000", "rect-4-2", "12", "x", "layer 1"]:
        assert is_generated(s), s
    for s in ["flower", "red-flower-head", "stemLeft", "sun", "roof_tiles", "eye2"]:
        assert not is_generated(s), s
    assert humanize_id("redFlower_head") == "red flower head"
    assert humanize_id("hair_3_") == "hair"
    assert humanize_id("arm_x5F_left_3_") == "arm left"


def test_regions_segment_two_squares():
    rgb = np.full((60, 60, 3), 255, np.uint8)
    rgb[2:20, 2:20] = (200, 20, 20)      # red, top left
    rgb[40:58, 40:58] = (20, 20, 200)    # blue, bottom right
    rgb[30, 30] = (0, 200, 0)            # a speck: dropped as too small
    regions = segment_regions(rgb)
    assert len(regions) == 2
    masks = sorted(regions, key=lambda r: r[0].nonzero()[0].mean())
    assert masks[0][0].sum() == 18 * 18 and masks[0][0][10, 10]
    assert masks[1][0][50, 50]
