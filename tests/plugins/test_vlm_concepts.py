"""VlmConceptSource: the answer parser on handwritten outputs, and the whole path on a tiny
random Qwen2-VL saved with save_pretrained and loaded back by directory (no network)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from svgloo.engine.protocols import Concept
from svgloo.plugins.vlm_concepts import parse_concepts

pytestmark = pytest.mark.torch


@pytest.mark.parametrize("text, want", [
    ('["red roof", "window", "tree"]', ["red roof", "window", "tree"]),
    ('Sure! Here they are:\n```json\n["Sun", "sky", "sun", " grass "]\n```\nHope it helps [1].',
     ["Sun", "sky", "grass"]),
    ('[{"name": "cat"}, {"name": "hat"}, 3, null, ""]', ["cat", "hat"]),
    ("cat, hat, dog.", ["cat", "hat", "dog"]),
    ("Parts of the image:\n- a red car\n- 2 wheels\n* road\n1. sky\n2) cloud",
     ["a red car", "2 wheels", "road", "sky", "cloud"]),
    ('["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]', list("abcdefgh")),
    ('[ "broken json", ', ["broken json"]),  # no valid array: falls back to splitting
    ("", []),
    ("   \n ,, \n", []),
    ("\x0f\ufffd\x08 ...", []),
    ("[]", []),
    ('"' + "x" * 200 + '"', []),  # not a short phrase
])
def test_parse_concepts(text, want):
    assert parse_concepts(text) == want


def test_parse_concepts_cap():
    assert parse_concepts("a, b, c", max_concepts=2) == ["a", "b"]
    assert parse_concepts("a, b, c", max_concepts=50) == ["a", "b", "c"]
    assert parse_concepts(", ".join(f"part {i}" for i in range(20)), max_concepts=50) == \
        [f"part {i}" for i in range(8)]
    assert parse_concepts(None) == []


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    sys.path.insert(0, str(Path(__file__).parent))
    from tiny_models import tiny_qwen2vl_dir

    return tiny_qwen2vl_dir(tmp_path_factory.mktemp("vlm"))


@pytest.fixture(scope="module")
def source(model_dir):
    from svgloo.plugins.vlm_concepts import VlmConceptSource

    return VlmConceptSource(device="cpu", model_id=str(model_dir), max_new_tokens=12)


@pytest.fixture(scope="module")
def render():
    rgb = np.full((48, 80, 3), 255, np.uint8)
    rgb[8:40, 10:50] = (200, 30, 30)
    return rgb


def test_loads_real_classes(source):
    import transformers

    assert source.name == "vlm"
    assert isinstance(source.model, transformers.Qwen2VLForConditionalGeneration)
    assert isinstance(source.processor, transformers.Qwen2VLProcessor)


def test_concepts_from_tiny_model(source, render):
    raw = source.ask(render, {})
    assert isinstance(raw, str)
    got = source.concepts(None, render, {})
    assert isinstance(got, list) and len(got) <= 8
    assert all(isinstance(c, Concept) and c.source == "vlm" and isinstance(c.name, str)
               and c.name.strip() == c.name and c.name for c in got)
    assert [c.name for c in got] == parse_concepts(raw)  # greedy decoding: deterministic


def test_concepts_use_parser_and_options(source, render, monkeypatch):
    seen = {}

    def fake_generate_answer(rgb, options):
        seen.update(options)
        return 'Parts: ["roof", "door", "Roof", "window"]'

    monkeypatch.setattr(source, "ask", fake_generate_answer)
    got = source.concepts(None, render, {"vlm_max_concepts": 2})
    assert got == [Concept("roof", "vlm"), Concept("door", "vlm")]
    assert source.concepts(None, render, {"vlm_max_concepts": 0}) == []


def test_large_render_is_downscaled(source):
    big = np.zeros((900, 1800, 3), np.uint8)
    img = source._image(big, 448)
    assert max(img.size) == 448 and img.size == (448, 224)
    assert source.ask(big, {"vlm_max_new_tokens": 2, "vlm_max_side": 64}) is not None


def test_weights_available_and_errors(model_dir, tmp_path, monkeypatch):
    import huggingface_hub.constants as hc

    from svgloo.engine.errors import ConfigError
    from svgloo.plugins.vlm_concepts import VlmConceptSource

    assert VlmConceptSource.weights_available(str(model_dir))
    assert not VlmConceptSource.weights_available(str(tmp_path))
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert not VlmConceptSource.weights_available()
    with pytest.raises(ConfigError, match="not found"):
        VlmConceptSource(device="cpu", weights=str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="cannot load"):
        VlmConceptSource(device="cpu", model_id=str(tmp_path))
