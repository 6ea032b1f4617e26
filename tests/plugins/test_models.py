"""``svgloo models list|pull`` against a loopback hub serving tiny models the tests save,
and the reference a file gets once CLIP is present (<title>/<desc>, svgloo.toml prompt)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")
open_clip = pytest.importorskip("open_clip")
pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parent))
from hub_server import MiniHub  # noqa: E402
from tiny_models import tiny_clip_checkpoint, tiny_clipseg_dir, tiny_qwen2vl_dir  # noqa: E402

from svgloo.engine.scoring.score import ScoreSettings, score_file  # noqa: E402
from svgloo.plugins.clip_backbone import ClipBackbone  # noqa: E402

CLIP_REPO = "timm/vit_base_patch32_clip_224.openai"
CLIPSEG_REPO = "CIDAS/clipseg-rd64-refined"
VLM_REPO = "Qwen/Qwen2-VL-2B-Instruct"


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    return tiny_clip_checkpoint(tmp_path_factory.mktemp("clip"))


@pytest.fixture(scope="module")
def hub_repos(tmp_path_factory, tiny_clip):
    """Hub folders: the tiny CLIP state dict under open_clip's PyTorch file name (no
    safetensors, so the pull falls back as open_clip does), and a tiny CLIPSeg."""
    root = tmp_path_factory.mktemp("hub")
    clip = root / "clip"
    clip.mkdir()
    shutil.copy(tiny_clip[1], clip / "open_clip_pytorch_model.bin")
    return {CLIP_REPO: clip, CLIPSEG_REPO: tiny_clipseg_dir(root)}


def svgloo(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "svgloo", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def hub_env(tmp_path: Path, endpoint: str | None = None) -> dict:
    """A private, empty hub cache, and no way out to the real hub."""
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"))
    env.pop("HF_HUB_CACHE", None)
    env.pop("HF_HUB_OFFLINE", None)
    env["HF_ENDPOINT"] = endpoint or "http://127.0.0.1:9"  # discard port: never answers
    return env


def status(env: dict) -> dict:
    proc = svgloo("models", "list", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_list_on_an_empty_cache_says_nothing_is_present(tmp_path):
    env = hub_env(tmp_path)
    s = status(env)
    assert s["cache"] == str(tmp_path / "hf" / "hub")
    assert {name: m["present"] for name, m in s["models"].items()} == \
        {"clip": False, "clipseg": False, "vlm": False}
    assert s["auto"]["backbone"]["name"] == "pixel"
    assert "no CLIP weights" in s["auto"]["backbone"]["reason"]
    table = svgloo("models", "list", env=env)
    assert "not present: svgloo models pull clip" in table.stdout
    assert "score --backbone auto: pixel" in table.stdout


@pytest.mark.slow
def test_pull_clip_and_clipseg_from_a_local_hub(tmp_path, hub_repos):
    with MiniHub(hub_repos) as hub:
        env = hub_env(tmp_path, hub.url)
        proc = svgloo("models", "pull", "clip", env=env)
        assert proc.returncode == 0, proc.stderr
        assert "clip: " in proc.stdout and "downloaded, but" not in proc.stdout
        # The endpoint can be given on the command line as well (a mirror).
        proc = svgloo("models", "pull", "clipseg", "--endpoint", hub.url,
                      env={**env, "HF_ENDPOINT": "http://127.0.0.1:9"})
        assert proc.returncode == 0, proc.stderr
        asked = list(hub.requests)
    # open_clip's order: the safetensors file was asked for first, then the PyTorch one.
    safe = [i for i, r in enumerate(asked) if r.endswith("/open_clip_model.safetensors")]
    torch_file = [i for i, r in enumerate(asked) if r.endswith("/open_clip_pytorch_model.bin")]
    assert safe and torch_file and safe[0] < torch_file[0]
    s = status(env)
    assert s["models"]["clip"]["present"] and s["models"]["clipseg"]["present"]
    assert not s["models"]["vlm"]["present"]
    assert s["auto"]["backbone"] == {"name": "clip",
                                     "reason": "auto: CLIP weights found locally"}
    assert s["auto"]["grounder"].startswith("clipseg")
    # Offline now: the libraries' own loaders find what was pulled, byte for byte.
    offline = {**env, "HF_HUB_OFFLINE": "1"}
    check = (
        "import hashlib, open_clip, sys\n"
        "from svgloo.plugins.clipseg_grounder import ClipSegGrounder\n"
        "path = open_clip.pretrained.download_pretrained(\n"
        "    open_clip.pretrained.get_pretrained_cfg('ViT-B-32', 'openai'))\n"
        "print(hashlib.sha256(open(path, 'rb').read()).hexdigest())\n"
        "g = ClipSegGrounder(device='cpu')\n"
        "print(g.model.config.projection_dim)\n")
    proc = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          env=offline, timeout=300)
    assert proc.returncode == 0, proc.stderr
    served = hashlib.sha256((hub_repos[CLIP_REPO] / "open_clip_pytorch_model.bin")
                            .read_bytes()).hexdigest()
    assert proc.stdout.split() == [served, "32"]  # 32: the tiny CLIPSeg's projection_dim


@pytest.mark.slow
def test_pull_vlm_from_a_local_hub(tmp_path):
    with MiniHub({VLM_REPO: tiny_qwen2vl_dir(tmp_path)}) as hub:
        env = hub_env(tmp_path, hub.url)
        proc = svgloo("models", "pull", "vlm", env=env)
        assert proc.returncode == 0, proc.stderr
    s = status(env)
    assert s["models"]["vlm"]["present"]
    assert s["auto"]["concepts"].endswith("vlm (weights present)")


@pytest.mark.slow
def test_pull_errors_are_one_line(tmp_path, hub_repos):
    # Nothing listening: a clear error naming the repository and the endpoint.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    proc = svgloo("models", "pull", "clipseg", "--endpoint", dead, env=hub_env(tmp_path))
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()[-1:]
    assert line.startswith(f"svgloo: error: {CLIPSEG_REPO}: cannot download from {dead}")
    assert "Traceback" not in proc.stderr
    # A repository with no weights at all, and a hub that does not have the repository.
    no_weights = tmp_path / "no-weights"
    no_weights.mkdir()
    (no_weights / "config.json").write_text("{}")
    with MiniHub({CLIPSEG_REPO: no_weights}) as hub:
        proc = svgloo("models", "pull", "clipseg", env=hub_env(tmp_path, hub.url))
        assert proc.returncode == 2 and "no .safetensors or .bin weights" in proc.stderr
        proc = svgloo("models", "pull", "clip", env=hub_env(tmp_path, hub.url))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"svgloo: error: {CLIP_REPO}:" in proc.stderr
    assert not (tmp_path / "hf" / "hub" / "models--CIDAS--clipseg-rd64-refined").exists()
    # A hub that is down is a download error, not "the repository has no such file".
    with MiniHub(hub_repos, status=403) as hub:
        proc = svgloo("models", "pull", "clip", env=hub_env(tmp_path, hub.url))
    assert proc.returncode == 2, proc.stderr
    assert f"svgloo: error: {CLIP_REPO}: cannot download from {hub.url}" in proc.stderr
    assert "has none of" not in proc.stderr


# --- with CLIP present, the file's own words are the reference --------------------------

TITLED = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
  <title>a red square</title><desc>on white</desc>
  <rect x="8" y="8" width="48" height="48" fill="#d00"/>
  <circle cx="56" cy="56" r="3" fill="#00f"/>
</svg>"""


def clip_score_by_hand(tiny, image: np.ndarray, text: str) -> float:
    """cos(image embedding, text embedding), straight from the open_clip model."""
    from PIL import Image

    cfg, _, model, preprocess = tiny
    tokenizer = open_clip.get_tokenizer(cfg.stem)
    with torch.inference_mode():
        img = model.encode_image(preprocess(Image.fromarray(image)).unsqueeze(0)).float()
        txt = model.encode_text(tokenizer([text])).float()
    img = img / img.norm(dim=-1, keepdim=True)
    txt = txt / txt.norm(dim=-1, keepdim=True)
    return float((img @ txt.T).item())


@pytest.mark.parametrize("where", ["title", "toml"])
def test_clip_reads_the_title_or_the_toml_prompt(tmp_path, tiny_clip, render_pool, where):
    cfg, ckpt, _, _ = tiny_clip
    backbone = ClipBackbone(device="cpu", weights=str(ckpt), model_name=str(cfg))
    svg = tmp_path / "icon.svg"
    svg.write_text(TITLED)
    expected_text = "a red square. on white"
    if where == "toml":
        expected_text = "a blue dot"
        (tmp_path / "svgloo.toml").write_text(
            '[references]\n"*.svg" = { prompt = "a blue dot" }\n')
    run = score_file(str(svg), ScoreSettings(backbone="clip"), pool=render_pool,
                     backbone=backbone)
    ref = run.result["reference"]
    assert ref["kind"] == "text"
    if where == "title":
        assert ref["source"] == "<title>/<desc>"
    else:
        assert "svgloo.toml" in ref["source"]
    assert "self-analysis" not in " ".join(run.result["notes"])
    by_hand = clip_score_by_hand(tiny_clip, run.loo.full, expected_text)
    assert run.result["full_score"] == pytest.approx(by_hand, abs=1e-5)
    # Against text, a unit's delta is the score lost without it: it can be either sign.
    for unit, patch in zip(run.result["units"], run.loo.patches):
        without = clip_score_by_hand(tiny_clip, patch.materialize(run.loo.full),
                                     expected_text)
        assert unit["delta"] == pytest.approx(by_hand - without, abs=1e-5)


def test_weight_patterns_prefer_safetensors():
    from svgloo.plugins.torch_util import weight_patterns

    both = ["config.json", "model.safetensors", "pytorch_model.bin", "tf_model.h5",
            "flax_model.msgpack", "onnx/model.onnx"]
    assert [p for p in weight_patterns(both) if "*" not in p] == ["model.safetensors"]
    sharded = ["model-00001-of-00002.bin", "model-00002-of-00002.bin",
               "pytorch_model.bin.index.json", "tf_model.h5"]
    assert [p for p in weight_patterns(sharded) if "*" not in p] == sorted(sharded[:3])
    assert all("*" in p for p in weight_patterns(["config.json", "tf_model.h5"]))
