"""The pixel backbone's SSIM against an independent float64 computation with
scipy.ndimage, which the backbone no longer imports (it blurs in float32 with numpy)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from svgloo.engine.protocols import EarlierScoring, Reference
from svgloo.engine.scoring.score import ScoreSettings, render_document, score_file
from svgloo.engine.reading.document import load_document
from svgloo.plugins import pixel_backbone
from svgloo.plugins.pixel_backbone import C1, C2, SIGMA, TRUNCATE, PixelBackbone

from conftest import CORPUS


def scipy_blur(a: np.ndarray) -> np.ndarray:
    return gaussian_filter(a, sigma=(SIGMA, SIGMA, 0), truncate=TRUNCATE, mode="reflect")


def scipy_ssim(x: np.ndarray, y: np.ndarray) -> float:
    """SSIM (Wang et al. 2004, Gaussian window, mean over the map and the R, G, B
    channels) in float64 with scipy."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    mu_x, mu_y = scipy_blur(x), scipy_blur(y)
    sxx = scipy_blur(x * x) - mu_x * mu_x
    syy = scipy_blur(y * y) - mu_y * mu_y
    sxy = scipy_blur(x * y) - mu_x * mu_y
    num = (2 * mu_x * mu_y + C1) * (2 * sxy + C2)
    den = (mu_x * mu_x + mu_y * mu_y + C1) * (sxx + syy + C2)
    return float((num / den).mean(axis=2).mean())


@pytest.mark.parametrize("shape", [(384, 384, 3), (37, 201, 9), (4, 3, 3), (1, 50, 3)])
def test_blur_is_scipys_gaussian_filter(shape):
    # (4, 3) and (1, 50) are smaller than the kernel radius: "reflect" folds repeatedly there
    rng = np.random.default_rng(sum(shape))
    a = (rng.random(shape) * 255).astype(np.float32)
    planes = np.ascontiguousarray(a.transpose(2, 0, 1))
    got = pixel_backbone._blur_valid(pixel_backbone._pad(planes)).transpose(1, 2, 0)
    assert got.shape == a.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, scipy_blur(a.astype(np.float64)), rtol=0, atol=1e-4)


@pytest.mark.parametrize("shape", [(9, 36, 40), (27, 20, 31), (1, 1, 11), (3, 7, 394),
                                   (2, 0, 30)])
def test_row_pass_over_the_flat_array_is_the_per_row_pass_bit_for_bit(shape):
    """_correlate_valid_rows (the last axis, over the flattened array) against
    _correlate_valid(a, 2) (one loop per row): the same float32 bits, also where the
    kernel just fits (width 2 * RADIUS + 1) and on a non-contiguous input."""
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) * 100).astype(np.float32)
    got = pixel_backbone._correlate_valid_rows(a)
    want = pixel_backbone._correlate_valid(a, 2)
    assert got.shape == want.shape and got.flags.c_contiguous
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    strided = np.repeat(a, 2, axis=1)[:, ::2]
    assert np.array_equal(pixel_backbone._correlate_valid_rows(strided), want)


def test_ssim_of_real_renders_equals_the_float64_computation(render_pool):
    full = render_document(load_document(CORPUS / "logos" / "pypi.svg"), pool=render_pool)
    other = render_document(load_document(CORPUS / "logos" / "safari.svg"), pool=render_pool)
    backbone = PixelBackbone()
    prepared = backbone.prepare(Reference("image", "pypi", image=full))
    damaged = full.copy()
    damaged[100:140, 30:300] = 0
    got = backbone.similarity(np.stack([full, damaged, other]), prepared)
    want = [scipy_ssim(img, full) for img in (full, damaged, other)]
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)
    assert got[0] == pytest.approx(1.0) and got[2] < got[1] < 1.0


def test_leave_one_out_deltas_equal_the_float64_computation(render_pool):
    """Every unit's delta against a shifted reference (deltas of both signs), patched
    float32 scoring vs whole-image float64 SSIM: float32 rounding only, i.e. a small
    fraction of each delta and far below the verdict thresholds."""
    run = score_file(str(CORPUS / "logos" / "pypi.svg"), ScoreSettings(backbone="pixel"),
                     pool=render_pool)
    full = run.loo.full
    reference = np.roll(full, 3, axis=1)
    backbone = PixelBackbone()
    prepared = backbone.prepare(Reference("image", "shifted", image=reference))
    got = (backbone.similarity(full[None], prepared)[0]
           - backbone.similarity_patched(full, run.loo.patches, prepared))
    base = scipy_ssim(full, reference)
    want = np.array([base - scipy_ssim(run.loo.image_without(k), reference)
                     for k in range(len(run.loo.patches))])
    assert (want > 0.0008).any() and (want < -0.0008).any()
    assert np.all(np.abs(got - want) <= 1e-3 * np.maximum(np.abs(want), 1e-3))
    verdict = lambda d: np.sign(np.where(np.abs(d) > 0.0008, d, 0))  # noqa: E731
    assert (verdict(got) == verdict(want)).all()


def test_scoring_with_the_pixel_backbone_does_not_import_scipy():
    code = ("import sys\n"
            "from svgloo.engine.scoring.backbones import get_backbone\n"
            "get_backbone('pixel', None, None, 'fp32')\n"
            "print(any(m == 'scipy' or m.startswith('scipy.') for m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.strip()
    assert out == "False"


def test_self_analysis_needs_no_blur_of_the_full_render(monkeypatch, render_pool):
    """issue 25: with no reference the reference is the full render, whose SSIM map is 1 by
    definition; preparing and scoring the full render blurred both (40-100 ms a file).
    Now neither blurs, a small unit's patch computes the reference's statistics only in
    the tiles around it, and the deltas still equal the float64 computation."""
    run = score_file(str(CORPUS / "feather" / "bold.svg"), ScoreSettings(backbone="pixel"),
                     pool=render_pool)
    full = run.loo.full
    blurs = []
    real_blur = pixel_backbone._blur_valid
    monkeypatch.setattr(pixel_backbone, "_blur_valid",
                        lambda a: blurs.append(a.shape) or real_blur(a))
    backbone = PixelBackbone()
    prepared = backbone.prepare(Reference("self", "self", image=full))
    assert backbone.similarity(full[None], prepared)[0] == 1.0 and blurs == []
    smallest = min((p for p in run.loo.patches if p.box is not None),
                   key=lambda p: (p.box[1] - p.box[0]) * (p.box[3] - p.box[2]))
    got = 1.0 - backbone.similarity_patched(full, [smallest], prepared)[0]
    # the patch's own blur, and the reference's statistics in a part of the image only
    assert 0 < prepared._ready.sum() < prepared._ready.size
    assert sum(np.prod(s) for s in blurs) < 9 * full.size  # less than one whole image's
    want = 1.0 - scipy_ssim(smallest.materialize(full), full)
    assert want > 0 and abs(got - want) <= 1e-3 * want


def test_statistics_computed_tile_by_tile_are_those_of_the_whole_image():
    rng = np.random.default_rng(7)
    image = (rng.random((150, 203, 3)) * 255).astype(np.uint8)
    by_parts = pixel_backbone._Prepared(image)
    for y0, y1, x0, x1 in [(5, 9, 190, 203), (70, 140, 0, 30), (0, 150, 100, 101)]:
        by_parts.ensure(y0, y1, x0, x1)
    by_parts.ensure(0, 150, 0, 203)
    whole = pixel_backbone._Prepared(image)
    whole.ensure(0, 150, 0, 203)
    # independently: one blur of the whole padded reference, as the backbone used to
    y = pixel_backbone._pad(pixel_backbone._planes(image))
    mu_y = pixel_backbone._blur_valid(y)
    sigma_yy = pixel_backbone._blur_valid(y * y) - mu_y * mu_y
    for got in (by_parts, whole):
        assert np.array_equal(got.mu_y, mu_y)
        assert np.array_equal(got.den_y2, sigma_yy + C2)
        assert np.array_equal(got.den_y1, (mu_y + pixel_backbone.OFFSET) ** 2 + C1)


@pytest.mark.parametrize("box", [(40, 52, 90, 130), (0, 3, 0, 203), (140, 150, 195, 203)])
def test_statistics_adopted_outside_a_change_are_those_of_the_new_reference(box):
    """After an edit (self-analysis: the reference is the new full render), tiles far from
    the changed box keep the old preparation's statistics; with the rest computed again
    they are bit for bit a fresh preparation's, and the old preparation is untouched."""
    rng = np.random.default_rng(11)
    old_image = (rng.random((150, 203, 3)) * 255).astype(np.uint8)
    new_image = old_image.copy()
    y0, y1, x0, x1 = box
    new_image[y0:y1, x0:x1] = 255 - new_image[y0:y1, x0:x1]
    old = pixel_backbone._Prepared(old_image)
    old.ensure(0, 150, 0, 203)
    before = old.mu_y.copy()
    adopted = pixel_backbone._Prepared(new_image)
    adopted.adopt_outside(old, box)
    assert adopted._ready.any() and not adopted._ready.all()  # some tiles kept, some not
    adopted.ensure(0, 150, 0, 203)
    fresh = pixel_backbone._Prepared(new_image)
    fresh.ensure(0, 150, 0, 203)
    for name in ("mu_y", "den_y1", "den_y2"):
        assert np.array_equal(getattr(adopted, name), getattr(fresh, name)), name
    assert np.array_equal(old.mu_y, before)


def test_banded_scoring_is_bit_for_bit_one_pass_over_the_whole_image(monkeypatch, render_pool):
    """The blurs and the SSIM arithmetic run band of rows by band of rows (BAND_BYTES) for
    the cache's sake: the same operations per value in the same order, so the scores are
    the very bits of one pass over each whole region, whatever the band height."""
    run = score_file(str(CORPUS / "logos" / "pypi.svg"), ScoreSettings(backbone="pixel"),
                     pool=render_pool)
    full = run.loo.full
    scores = {}
    for band_bytes in (1 << 40, 1):  # one band per region; the smallest bands (8 rows)
        monkeypatch.setattr(pixel_backbone, "BAND_BYTES", band_bytes)
        for name, reference in (("self", full), ("shifted", np.roll(full, 3, axis=1))):
            backbone = PixelBackbone()
            prepared = backbone.prepare(Reference("image", name, image=reference))
            scores[band_bytes, name] = np.concatenate([
                backbone.similarity(full[None], prepared),
                backbone.similarity_patched(full, run.loo.patches, prepared)])
    assert len(list(pixel_backbone._bands(384, 9, 394))) == 384 // 8  # 8-row bands
    for name in ("self", "shifted"):
        assert np.array_equal(scores[1 << 40, name], scores[1, name])
    assert not np.array_equal(scores[1, "self"], scores[1, "shifted"])


def test_tile_sums_of_a_part_of_a_region_are_the_whole_regions_numbers():
    """A patch's map is summed per SUM_TILE tile of the canvas (_tile_grid): computed over
    any rectangle of whole tiles inside the region, a tile's sum is the very number the
    whole region's map gives it - what lets a re-scoring recompute a few tiles only."""
    import random

    rng = np.random.default_rng(3)
    canvas = (rng.random((384, 384)) * 2 - 1).astype(np.float32)
    tile = pixel_backbone.SUM_TILE
    picks = random.Random(5)
    for _ in range(300):
        y0, x0 = picks.randrange(0, 380), picks.randrange(0, 380)
        region = (y0, picks.randrange(y0 + 1, 385), x0, picks.randrange(x0 + 1, 385))
        whole = pixel_backbone._tile_grid(canvas[region[0]:region[1], region[2]:region[3]],
                                          region)
        # independently: each tile's part, its rows summed one by one, in row order
        ty, tx = picks.randrange(whole.shape[0]), picks.randrange(whole.shape[1])
        r0, r1 = max(region[0], (region[0] // tile + ty) * tile), \
            min(region[1], (region[0] // tile + ty + 1) * tile)
        c0, c1 = max(region[2], (region[2] // tile + tx) * tile), \
            min(region[3], (region[2] // tile + tx + 1) * tile)
        part = canvas[r0:r1, c0:c1].astype(np.float64)
        want = 0.0
        for row in part:
            want = want + np.add.reduce(row)
        assert whole[ty, tx] == want
        at = pixel_backbone._snapped((r0, r1, c0, c1), region)
        again = pixel_backbone._tile_grid(canvas[at[0]:at[1], at[2]:at[3]], at)
        assert again[0, 0] == whole[ty, tx]


def test_a_small_change_rescores_a_large_patch_near_it_only(monkeypatch, render_pool):
    """After an edit, a large patch whose image changed in a small box (here the full
    render, self-analysis) has its map computed again only in the tiles within RADIUS of
    that box, and scores the cold scoring's very number."""
    run = score_file(str(CORPUS / "logos" / "safari.svg"), ScoreSettings(backbone="pixel"),
                     pool=render_pool)
    full = run.loo.full
    large = max((p for p in run.loo.patches if p.box is not None),
                key=lambda p: (p.box[1] - p.box[0]) * (p.box[3] - p.box[2]))
    y0, y1, x0, x1 = large.box
    assert (y1 - y0) * (x1 - x0) > full.shape[0] * full.shape[1] / 2
    edited = full.copy()
    cy, cx = (y0 + y1) // 2, x1 + 2 if x1 + 6 < full.shape[1] else x0 - 6
    edited[cy:cy + 4, cx:cx + 4] = 255 - edited[cy:cy + 4, cx:cx + 4]  # beside the patch
    backbone = PixelBackbone()
    before = backbone.prepare(Reference("self", "self", image=full))
    backbone.similarity_patched(full, [large], before)
    areas = []
    real = pixel_backbone._window_inputs
    monkeypatch.setattr(pixel_backbone, "_window_inputs", lambda x, p, prep, at: areas.append(
        (at[1] - at[0]) * (at[3] - at[2])) or real(x, p, prep, at))
    after = backbone.prepare(Reference("self", "self", image=edited))
    again = backbone.similarity_patched(edited, [large], after,
                                        previous=EarlierScoring(full, [large], before))
    assert len(areas) == 1 and areas[0] <= (2 * pixel_backbone.SUM_TILE) ** 2
    cold = backbone.similarity_patched(edited, [large],
                                       backbone.prepare(Reference("self", "s", image=edited)))
    assert np.array_equal(again, cold)
    want = 1.0 - scipy_ssim(large.materialize(edited), edited)
    assert abs((1.0 - again[0]) - want) <= 1e-3 * abs(want)


def test_windows_computed_together_are_the_windows_computed_alone(monkeypatch, render_pool):
    """Small windows of one shape are scored in one pass of numpy calls (_ssim_maps over
    stacked windows): the scores are those of every window computed alone, bit for bit."""
    run = score_file(str(CORPUS / "noto" / "emoji_u1f99a.svg"),
                     ScoreSettings(backbone="pixel"), pool=render_pool)
    full = run.loo.full
    # equal boxes in many places: each patch's pixels moved to a grid of positions
    patch = next(p for p in run.loo.patches if p.box is not None
                 and 8 <= p.box[1] - p.box[0] <= 40 and 8 <= p.box[3] - p.box[2] <= 40)
    hy, wx = patch.box[1] - patch.box[0], patch.box[3] - patch.box[2]
    moved = [type(patch)((y, y + hy, x, x + wx), patch.pixels)
             for y in range(0, 384 - hy, 53) for x in range(0, 384 - wx, 61)]
    backbone = PixelBackbone()
    together, alone = pixel_backbone.BATCH_PIXELS, 0
    stacked = []
    real = pixel_backbone._ssim_maps
    monkeypatch.setattr(pixel_backbone, "_ssim_maps",
                        lambda *a, channels=3: stacked.append(len(a[0]) // channels)
                        or real(*a, channels=channels))
    scores = {}
    for batch in (together, alone):
        monkeypatch.setattr(pixel_backbone, "BATCH_PIXELS", batch)
        prepared = backbone.prepare(Reference("image", "shifted", image=np.roll(full, 3, 1)))
        stacked.clear()
        scores[batch] = backbone.similarity_patched(full, moved, prepared)
        assert max(stacked) > (20 if batch == together else 0) and \
            (batch == together or max(stacked) == 1)
    assert len(moved) > 20 and np.array_equal(scores[alone], scores[together])


@pytest.mark.parametrize("name", ["feather/bold.svg", "fontawesome/cube.svg",
                                  "noto/emoji_u1f99a.svg"])
def test_grey_windows_scored_on_one_channel_are_the_three_channels_bits(
        monkeypatch, render_pool, name):
    """Where x and y have R = G = B (black-and-white icons), a window and the reference's
    statistics are computed on one channel (_grey): the scores are the bits of the three
    channels computed in full, and a coloured file never takes the shortcut."""
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"{name} is not in this corpus")
    run = score_file(str(path), ScoreSettings(backbone="pixel"), pool=render_pool)
    full = run.loo.full
    grey_file = bool((full[..., 0] == full[..., 1]).all() and (full[..., 1] == full[..., 2]).all())
    assert grey_file == (not name.startswith("noto"))
    real_maps, real_grey = pixel_backbone._ssim_maps, pixel_backbone._grey
    channels: list[int] = []
    monkeypatch.setattr(pixel_backbone, "_ssim_maps", lambda *a, channels=3:
                        channels_seen(channels) or real_maps(*a, channels=channels))

    def channels_seen(c):
        channels.append(c)

    scores = {}
    for shortcut in (True, False):
        monkeypatch.setattr(pixel_backbone, "_grey", real_grey if shortcut else lambda p: False)
        for ref_name, reference in (("self", full), ("shifted", np.roll(full, 3, axis=1))):
            channels.clear()
            backbone = PixelBackbone()
            prepared = backbone.prepare(Reference("image", ref_name, image=reference))
            scores[shortcut, ref_name] = backbone.similarity_patched(full, run.loo.patches,
                                                                     prepared)
            assert (1 in channels) == (shortcut and grey_file)
    for ref_name in ("self", "shifted"):
        assert np.array_equal(scores[True, ref_name], scores[False, ref_name])
    # and the numbers are SSIM's: two leave-one-out images against float64 with scipy
    for k in [0, len(run.loo.patches) - 1]:
        image = run.loo.image_without(k)
        assert scores[True, "shifted"][k] == pytest.approx(
            scipy_ssim(image, np.roll(full, 3, axis=1)), abs=2e-5)


def test_grey_means_every_pixel_of_the_three_planes():
    planes = np.zeros((3, 20, 30), np.float32)
    assert pixel_backbone._grey(planes)
    for c in range(3):
        odd = planes.copy()
        odd[c, 19, 29] = 1
        assert not pixel_backbone._grey(odd)
