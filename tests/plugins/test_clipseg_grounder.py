"""ClipSegGrounder on a tiny random CLIPSeg saved with save_pretrained and loaded back by
directory through the grounder's ordinary loading path (no network)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parent))
from tiny_models import tiny_clipseg_dir  # noqa: E402

from svgloo.engine.errors import ConfigError  # noqa: E402
from svgloo.engine.protocols import Concept  # noqa: E402
from svgloo.plugins.clipseg_grounder import ClipSegGrounder  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_clipseg_dir(tmp_path_factory.mktemp("clipseg"))


@pytest.fixture(scope="module")
def grounder(model_dir):
    return ClipSegGrounder(device="cpu", model_id=str(model_dir))


@pytest.fixture(scope="module")
def render():
    rgb = np.full((40, 70, 3), 255, np.uint8)
    rgb[5:30, 10:40] = (200, 30, 30)
    rgb[20:38, 45:65] = (20, 20, 180)
    return rgb


CONCEPTS = [Concept("red square", "vlm"), Concept("blue box", "labels", elements=(1,)),
            Concept("a very long concept name that is longer than the tiny context", "author")]


def test_loads_real_classes(grounder):
    assert grounder.name == "clipseg"
    assert isinstance(grounder.model, transformers.CLIPSegForImageSegmentation)
    assert isinstance(grounder.processor, transformers.CLIPSegProcessor)
    assert not grounder.model.training


def test_shapes_range_and_determinism(grounder, render):
    h = grounder.heatmaps(None, render, CONCEPTS, {})
    assert h.shape == (3, 40, 70) and h.dtype == np.float32
    assert np.all(np.isfinite(h)) and h.min() >= 0.0 and h.max() <= 1.0
    assert h.std() > 0  # not a constant map
    np.testing.assert_array_equal(h, grounder.heatmaps(None, render, CONCEPTS, {}))


def test_batched_equals_one_at_a_time(grounder, render):
    h = grounder.heatmaps(None, render, CONCEPTS, {"clipseg_batch_size": 8})
    single = np.concatenate([grounder.heatmaps(None, render, [c], {}) for c in CONCEPTS])
    one = grounder.heatmaps(None, render, CONCEPTS, {"clipseg_batch_size": 1})
    np.testing.assert_allclose(h, single, atol=1e-5)
    np.testing.assert_allclose(h, one, atol=1e-5)


def test_matches_direct_model_call(grounder, render):
    """sigmoid(logits) at model resolution, bilinearly resized to the render size."""
    from PIL import Image

    inputs = grounder.processor(text=["red square"], images=[Image.fromarray(render)],
                                return_tensors="pt", padding=True)
    with torch.inference_mode():
        logits = grounder.model(**inputs).logits.reshape(1, 1, 64, 64)
    want = torch.nn.functional.interpolate(torch.sigmoid(logits), size=(40, 70),
                                           mode="bilinear", align_corners=False)[0, 0].numpy()
    got = grounder.heatmaps(None, render, CONCEPTS[:1], {})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_prompt_template_changes_maps(grounder, render):
    a = grounder.heatmaps(None, render, CONCEPTS[:1], {})
    b = grounder.heatmaps(None, render, CONCEPTS[:1], {"clipseg_prompt": "a photo of {}"})
    assert a.shape == b.shape and not np.allclose(a, b)


def test_no_concepts(grounder, render):
    h = grounder.heatmaps(None, render, [], {})
    assert h.shape == (0, 40, 70) and h.dtype == np.float32


def test_weights_available(model_dir, tmp_path, monkeypatch):
    import huggingface_hub.constants as hc

    assert ClipSegGrounder.weights_available(str(model_dir))
    assert not ClipSegGrounder.weights_available(str(tmp_path))
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert not ClipSegGrounder.weights_available()  # default id, empty cache: no download


def test_missing_weights_dir_is_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        ClipSegGrounder(device="cpu", weights=str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="cannot load CLIPSeg"):
        ClipSegGrounder(device="cpu", model_id=str(tmp_path))  # a dir with no model in it


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_model_folder_with_a_fifo_or_device_is_refused_before_loading(model_dir, tmp_path,
                                                                        kind):
    """transformers would block forever reading a FIFO named config.json (or read
    /dev/zero until memory runs out): the folder is checked before it is handed over."""
    import os
    import shutil
    import threading

    bad = tmp_path / "model"
    shutil.copytree(model_dir, bad)
    (bad / "config.json").unlink()
    if kind == "fifo":
        os.mkfifo(bad / "config.json")
    else:
        (bad / "config.json").symlink_to("/dev/zero")
    out: dict = {}

    def load():
        try:
            ClipSegGrounder(device="cpu", weights=str(bad))
        except ConfigError as exc:
            out["error"] = exc

    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(120)  # hang detector
    assert not t.is_alive(), "loading blocked on the model folder"
    assert str(out["error"]) == (f"{bad / 'config.json'}: not a regular file (a device, "
                                 "pipe or socket) in a model folder; the model is not loaded")
