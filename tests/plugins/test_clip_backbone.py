"""ClipBackbone on a tiny, randomly initialised open_clip CLIP saved to disk and loaded back
through the same constructor a user would call (no network, no real weights)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")
open_clip = pytest.importorskip("open_clip")

sys.path.insert(0, str(Path(__file__).parent))
from tiny_models import tiny_clip_checkpoint  # noqa: E402

from svgloo.engine.errors import ConfigError  # noqa: E402
from svgloo.engine.protocols import Backbone, Reference  # noqa: E402
from svgloo.plugins.clip_backbone import ClipBackbone  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_clip_checkpoint(tmp_path_factory.mktemp("clip"))


@pytest.fixture(scope="module")
def backbone(tiny):
    cfg, ckpt, _, _ = tiny
    return ClipBackbone(device="cpu", weights=str(ckpt), model_name=str(cfg))


@pytest.fixture(scope="module")
def images():
    rng = np.random.default_rng(0)
    ims = rng.integers(0, 256, size=(5, 40, 56, 3), dtype=np.uint8)
    ims[1] = 255  # a blank white render
    ims[2, :, :28] = (255, 0, 0)
    return ims


def test_protocol_and_description(backbone, tiny):
    assert isinstance(backbone, Backbone)
    assert backbone.name == "clip" and backbone.takes_text is True
    assert backbone.description == "open_clip svgloo-tiny-clip tiny_clip.pt (cpu)"
    assert isinstance(backbone.model, open_clip.model.CLIP)
    assert not backbone.model.training


def test_checkpoint_reproduces_in_memory_model(backbone, tiny, images):
    _, _, model, preprocess = tiny
    from PIL import Image

    x = torch.stack([preprocess(Image.fromarray(im)) for im in images])
    with torch.inference_mode():
        want = model.encode_image(x).double().numpy()
        want_t = model.encode_text(open_clip.get_tokenizer("svgloo-tiny-clip")(["a cat"])).double().numpy()
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    want_t /= np.linalg.norm(want_t, axis=1, keepdims=True)
    np.testing.assert_allclose(backbone.embed_images(images), want, atol=1e-5)
    np.testing.assert_allclose(backbone.embed_texts(["a cat"]), want_t, atol=1e-5)


def test_self_similarity_is_one(backbone, images):
    for kind in ("image", "self"):
        prepared = backbone.prepare(Reference(kind, "test", image=images[2]))
        s = backbone.similarity(images[2:3], prepared)
        assert s.shape == (1,) and s.dtype == np.float64
        assert abs(s[0] - 1.0) < 1e-5


def test_batched_equals_per_image(backbone, images):
    prepared = backbone.prepare(Reference("image", "test", image=images[0]))
    full = backbone.similarity(images, prepared)
    small = backbone.similarity(images, prepared, batch_size=2)
    single = np.array([backbone.similarity(images[i:i + 1], prepared)[0] for i in range(len(images))])
    assert full.shape == (len(images),)
    np.testing.assert_allclose(full, single, atol=1e-5)
    np.testing.assert_allclose(small, single, atol=1e-5)
    assert backbone.similarity(images[:0], prepared).shape == (0,)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_threaded_preprocessing_is_bit_identical_and_keeps_the_order(tiny, precision):
    # The preprocessing of a batch runs on a thread pool; each image goes through the same
    # transform as one after the other in one thread, so the model's input and the
    # embeddings are the same bit for bit, row i from image i.
    from svgloo.plugins.clip_backbone import ClipBackbone as Clip

    cfg, ckpt, _, _ = tiny
    seq = Clip(device="cpu", weights=str(ckpt), model_name=str(cfg), precision=precision,
               preprocess_threads=1)
    par = Clip(device="cpu", weights=str(ckpt), model_name=str(cfg), precision=precision,
               preprocess_threads=3)
    rng = np.random.default_rng(7)
    ims = rng.integers(0, 256, size=(11, 48, 80, 4), dtype=np.uint8)  # RGBA: alpha dropped
    for k in range(len(ims)):  # each image distinct even after the resize to 32 px
        ims[k, : 4 + 4 * k, :, :3] = (20 * k, 255 - 20 * k, 7 * k)
    threads = set()
    transform = par.preprocess

    def spy(image):
        threads.add(threading.current_thread().name)
        return transform(image)

    par.preprocess = spy
    want = seq._pixels(list(ims))
    got = par._pixels(list(ims))
    assert got.dtype == want.dtype == seq._dtype and got.shape == want.shape
    assert torch.equal(got, want)
    assert any(name.startswith("svgloo-clip-preprocess") for name in threads), threads
    assert len(threads) > 1
    # order: each row is its own image's, whichever thread made it
    for k in range(len(ims)):
        assert torch.equal(got[k], seq._pixels([ims[k]])[0])
    order = rng.permutation(len(ims))
    assert torch.equal(par._pixels(list(ims[order])), want[order])
    emb_seq, emb_par = seq.embed_images(ims, batch_size=4), par.embed_images(ims, batch_size=4)
    np.testing.assert_array_equal(emb_par, emb_seq)
    ref = seq.prepare(Reference("image", "test", image=ims[3]))
    np.testing.assert_array_equal(par.similarity(ims, ref), seq.similarity(ims, ref))
    shuffled = par.similarity(ims[order], ref)
    np.testing.assert_array_equal(shuffled, seq.similarity(ims[order], ref))
    # against the unshuffled scores only to the last bit: the model and the float64
    # product may round a row differently at another place in the batch
    np.testing.assert_allclose(shuffled, seq.similarity(ims, ref)[order], rtol=0, atol=1e-6)


def test_preprocessing_error_in_a_thread_reaches_the_caller(tiny):
    cfg, ckpt, _, _ = tiny
    bb = ClipBackbone(device="cpu", weights=str(ckpt), model_name=str(cfg),
                      preprocess_threads=2)
    bad = [np.zeros((8, 8, 3), np.uint8), np.zeros((8, 8, 5), np.uint8)]
    with pytest.raises(ConfigError, match="RGB array"):
        bb.embed_images(bad)


def test_preprocess_threads_default(monkeypatch):
    from svgloo.plugins import clip_backbone

    monkeypatch.setenv(clip_backbone.PREPROCESS_THREADS_ENV, "3")
    assert clip_backbone.default_preprocess_threads() == 3
    monkeypatch.setenv(clip_backbone.PREPROCESS_THREADS_ENV, "0")  # not a count: the default
    cores = len(os.sched_getaffinity(0))
    assert clip_backbone.default_preprocess_threads() == max(1, min(cores, 8))


def test_text_reference(backbone, images):
    prepared = backbone.prepare(Reference("text", "<title>", text="a red square"))
    assert prepared.shape == (32,)
    assert abs(np.linalg.norm(prepared) - 1.0) < 1e-9
    s = backbone.similarity(images, prepared)
    assert s.shape == (5,) and np.all(np.isfinite(s))
    assert np.all(s >= -1.0) and np.all(s <= 1.0)
    other = backbone.similarity(images, backbone.prepare(Reference("text", "t", text="a dog")))
    assert not np.allclose(s, other)


def test_bad_references(backbone):
    with pytest.raises(ConfigError):
        backbone.prepare(Reference("text", "t", text="  "))
    with pytest.raises(ConfigError):
        backbone.prepare(Reference("image", "t"))
    with pytest.raises(ConfigError):
        backbone.prepare(Reference("video", "t"))


def test_registered_name_loads_too(tiny):
    cfg, ckpt, _, _ = tiny  # the fixture registered the config with open_clip.add_model_config
    b = ClipBackbone(device="cpu", weights=ckpt, model_name="svgloo-tiny-clip")
    assert b.model_name == "svgloo-tiny-clip"


def test_config_errors(tmp_path, tiny):
    cfg, ckpt, _, _ = tiny
    with pytest.raises(ConfigError, match="not found"):
        ClipBackbone(device="cpu", weights=str(tmp_path / "missing.pt"), model_name=str(cfg))
    with pytest.raises(ConfigError, match="unknown open_clip model"):
        ClipBackbone(device="cpu", weights=str(ckpt), model_name="No-Such-Model")
    with pytest.raises(ConfigError, match="config file not found"):
        ClipBackbone(device="cpu", weights=str(ckpt), model_name=str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.pt"
    torch.save({"nothing": torch.zeros(1)}, bad)
    with pytest.raises(ConfigError, match="cannot load"):
        ClipBackbone(device="cpu", weights=str(bad), model_name=str(cfg))


def test_weights_available_never_downloads(tmp_path, monkeypatch, tiny):
    import huggingface_hub.constants as hc

    _, ckpt, _, _ = tiny
    assert ClipBackbone.weights_available(weights=str(ckpt))
    assert not ClipBackbone.weights_available(weights=str(tmp_path / "missing.pt"))
    # an empty cache: not available (and nothing is fetched)
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert not ClipBackbone.weights_available()
    assert not ClipBackbone.weights_available(pretrained="no-such-tag")
    assert not (tmp_path / "hub").exists() or not any((tmp_path / "hub").iterdir())
    # fake the HF cache layout for the openai ViT-B-32 tag: now it is available
    cfg = open_clip.pretrained.get_pretrained_cfg("ViT-B-32", "openai")
    repo = cfg["hf_hub"].rstrip("/")
    snap = tmp_path / "hub" / ("models--" + repo.replace("/", "--"))
    (snap / "refs").mkdir(parents=True)
    (snap / "refs" / "main").write_text("abc123")
    (snap / "snapshots" / "abc123").mkdir(parents=True)
    (snap / "snapshots" / "abc123" / "open_clip_model.safetensors").write_bytes(b"x")
    assert ClipBackbone.weights_available()


def test_default_weights_lookup_agrees_with_open_clip_and_does_not_import_it():
    """auto checks the default tag without importing open_clip (seconds of torch import on
    every score); the locations it knows must be open_clip's own."""
    import open_clip.constants
    from svgloo.plugins import clip_backbone as cb

    cfg = open_clip.pretrained.get_pretrained_cfg(*cb._DEFAULT_TAG)
    assert cb._DEFAULT_CFG["hf_hub"] == cfg["hf_hub"]
    assert os.path.basename(cb._DEFAULT_CFG["url"]) == os.path.basename(cfg.get("url", ""))
    assert (cb.HF_WEIGHTS_NAME, cb.HF_SAFE_WEIGHTS_NAME) == (
        open_clip.constants.HF_WEIGHTS_NAME, open_clip.constants.HF_SAFE_WEIGHTS_NAME)
    code = ("import sys; from svgloo.engine.scoring.backbones import choose_backbone; "
            "print(choose_backbone('auto').name); "
            "bad = [m for m in ('torch', 'open_clip') if m in sys.modules]; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"}, timeout=120)
    assert r.returncode == 0, r.stderr


def test_auto_without_cached_weights_does_not_import_huggingface_hub(tmp_path):
    """Where the hub's cache has no folder for the weights, `auto` says so without importing
    huggingface_hub's download module (0.1 s of every score); where it has one, the hub's
    own lookup decides (test_weights_available_never_downloads)."""
    code = ("import sys; from svgloo.engine.scoring.backbones import choose_backbone; "
            "print(choose_backbone('auto').name); "
            "assert 'huggingface_hub.file_download' not in sys.modules")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONWARNINGS": "ignore",
                            "HF_HUB_CACHE": str(tmp_path / "hub"), "HOME": str(tmp_path)},
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "pixel"


def test_module_import_does_not_import_torch():
    code = ("import sys, svgloo.plugins.clip_backbone, svgloo.plugins.clipseg_grounder, "
            "svgloo.plugins.vlm_concepts; "
            "bad = [m for m in ('torch', 'open_clip', 'transformers') if m in sys.modules]; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert r.returncode == 0, r.stderr


def test_entry_points_resolve():
    from svgloo.engine.protocols import discover, load_plugin

    if "clipseg" not in discover("svgloo.grounders"):
        pytest.skip("installed metadata predates the clipseg/vlm entry points (reinstall)")
    assert load_plugin("svgloo.backbones", "clip") is ClipBackbone
    assert load_plugin("svgloo.grounders", "clipseg").name == "clipseg"
    assert load_plugin("svgloo.concepts", "vlm").name == "vlm"


def test_slash_name_and_missing_torch_are_handled():
    from svgloo.plugins.clip_backbone import _resolve_model_name

    assert _resolve_model_name("ViT-B/32") == "ViT-B-32"
    code = ("import sys; sys.modules['torch'] = None; sys.modules['open_clip'] = None\n"
            "from svgloo.engine.errors import ConfigError\n"
            "from svgloo.plugins.clip_backbone import ClipBackbone\n"
            "from svgloo.plugins.clipseg_grounder import ClipSegGrounder\n"
            "from svgloo.plugins.vlm_concepts import VlmConceptSource\n"
            "for cls in (ClipBackbone, ClipSegGrounder, VlmConceptSource):\n"
            "    try:\n"
            "        cls(device='cpu')\n"
            "    except ConfigError as e:\n"
            "        assert 'not installed' in e.message and 'pip install' in e.message, e.message\n"
            "    else:\n"
            "        raise AssertionError(cls)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("precision", ["bf16", "int8"])
def test_lower_precision_tracks_fp32(backbone, tiny, images, precision):
    cfg, ckpt, _, _ = tiny
    low = ClipBackbone(device="cpu", weights=str(ckpt), model_name=str(cfg),
                       precision=precision)
    assert low.description.endswith(f"(cpu, {precision})")
    ref = backbone.prepare(Reference("image", "test", image=images[0]))
    ref_low = low.prepare(Reference("image", "test", image=images[0]))
    full = backbone.similarity(images, ref)
    approx = low.similarity(images, ref_low)
    assert approx.dtype == np.float64 and approx.shape == full.shape
    # the same ordering of images, and close values (bf16 keeps 8 bits of mantissa)
    assert np.abs(approx - full).max() < 0.05
    assert np.corrcoef(approx, full)[0, 1] > 0.95


@pytest.mark.parametrize("precision", ["bf16", "int8"])
def test_lower_precision_scores_against_text_with_the_fp32_text_tower(backbone, tiny, images,
                                                                     precision):
    # A file's <title> or --prompt is a text reference: the text tower runs at fp32 at
    # every precision (int8 once crashed here: open_clip reads the text weights' dtype).
    cfg, ckpt, _, _ = tiny
    low = ClipBackbone(device="cpu", weights=str(ckpt), model_name=str(cfg),
                       precision=precision)
    text = Reference("text", "title", text="a red square")
    np.testing.assert_array_equal(low.prepare(text), backbone.prepare(text))
    approx = low.similarity(images, low.prepare(text))
    assert np.abs(approx - backbone.similarity(images, backbone.prepare(text))).max() < 0.05


def test_unknown_precision_is_a_config_error(tiny):
    cfg, ckpt, _, _ = tiny
    with pytest.raises(ConfigError, match="precision"):
        ClipBackbone(device="cpu", weights=str(ckpt), model_name=str(cfg), precision="fp8")


def test_bench_clip_scores_every_precision_end_to_end(tiny, tmp_path, corpus_dir):
    import json

    from svgloo.validation import bench_clip

    cfg, ckpt, _, _ = tiny
    out = tmp_path / "clip.json"
    assert bench_clip.main([str(corpus_dir), "--weights", str(ckpt), "--model", str(cfg),
                            "--limit", "2", "--min-units", "3", "--max-units", "6",
                            "--precisions", "fp32,bf16", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = {r["precision"]: r for r in result["rows"]}
    assert set(rows) == {"fp32", "bf16"} and len(result["files"]) == 2
    assert rows["fp32"]["units"] == rows["bf16"]["units"] >= 6
    assert rows["fp32"]["delta_correlation"] == 1.0 and rows["fp32"]["max_delta_difference"] == 0
    assert rows["bf16"]["units_per_s"] > 0 and rows["bf16"]["encoder_images_per_s"] > 0
    assert 0 <= rows["bf16"]["verdict_agreement"] <= 1
    # the engine's stage timings, summed over the files: the similarity step is the
    # encoder column's denominator, and no stage takes longer than the scorings' wall time
    for row in rows.values():
        t = row["timings"]
        assert {"render_s", "score_s", "total_s"} <= set(t)
        assert "proof_s" not in t  # it scores as a data set does, without the removal proof
        assert row["encoded"] / t["score_s"] == pytest.approx(row["encoder_images_per_s"],
                                                              rel=1e-3)
        assert 0 < t["score_s"] <= t["total_s"] <= row["wall_s"] * 1.01
        # the similarity step's preprocessing, timed inside it (the host path on the CPU)
        assert row["preprocess_on"] == "host" and 0 < row["preprocess_s"] < t["score_s"]
