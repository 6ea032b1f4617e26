"""The pixel backbone's SSIM against scipy.ndimage, which it no longer imports."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from svgloo.engine.protocols import Reference
from svgloo.engine.score import render_document
from svgloo.engine.document import load_document
from svgloo.plugins import pixel_backbone
from svgloo.plugins.pixel_backbone import C1, C2, SIGMA, TRUNCATE, PixelBackbone

from conftest import CORPUS


def scipy_blur(a: np.ndarray) -> np.ndarray:
    return gaussian_filter(a, sigma=(SIGMA, SIGMA, 0), truncate=TRUNCATE, mode="reflect")


def scipy_ssim(x: np.ndarray, y: np.ndarray) -> float:
    """SSIM as the backbone computed it while it called scipy (Wang et al. 2004, Gaussian
    window, mean over the map and the R, G, B channels)."""
    x, y = x.astype(np.float32), y.astype(np.float32)
    mu_x, mu_y = scipy_blur(x), scipy_blur(y)
    sxx = scipy_blur(x * x) - mu_x * mu_x
    syy = scipy_blur(y * y) - mu_y * mu_y
    sxy = scipy_blur(x * y) - mu_x * mu_y
    num = (2 * mu_x * mu_y + C1) * (2 * sxy + C2)
    den = (mu_x * mu_x + mu_y * mu_y + C1) * (sxx + syy + C2)
    return float((num / den).mean(axis=2).mean())


@pytest.mark.parametrize("shape", [(384, 384, 3), (37, 201, 9), (4, 3, 3), (1, 50, 3)])
def test_blur_is_scipys_gaussian_filter_bit_for_bit(shape):
    # (4, 3) and (1, 50) are smaller than the kernel radius: "reflect" folds repeatedly there
    rng = np.random.default_rng(sum(shape))
    a = (rng.random(shape) * 255).astype(np.float32)
    got = pixel_backbone._blur(a)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, scipy_blur(a))


def test_ssim_of_real_renders_equals_the_scipy_computation(render_pool):
    full = render_document(load_document(CORPUS / "logos" / "pypi.svg"), pool=render_pool)
    other = render_document(load_document(CORPUS / "logos" / "safari.svg"), pool=render_pool)
    backbone = PixelBackbone()
    prepared = backbone.prepare(Reference("image", "pypi", image=full))
    damaged = full.copy()
    damaged[100:140, 30:300] = 0
    got = backbone.similarity(np.stack([full, damaged, other]), prepared)
    want = [scipy_ssim(img, full) for img in (full, damaged, other)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert got[0] == pytest.approx(1.0) and got[2] < got[1] < 1.0


def test_scoring_with_the_pixel_backbone_does_not_import_scipy():
    code = ("import sys\n"
            "from svgloo.engine.backbones import get_backbone\n"
            "get_backbone('pixel', None, None, 'fp32')\n"
            "print(any(m == 'scipy' or m.startswith('scipy.') for m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.strip()
    assert out == "False"
