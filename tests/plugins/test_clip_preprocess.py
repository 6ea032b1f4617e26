"""CLIP's input made on the device (clip_preprocess.py) against open_clip's own PIL
transform, the host path: on renders of corpus files made with the engine and on
adversarial images, on the CPU with the same code a CUDA user runs (device="cpu").

The tolerance is one 8-bit level of the resized image, the most measured (2026-12-06,
torch 2.14.1, torchvision 0.29.1, Pillow 13.0.0) on 12 corpus renders of 384 px and the
inputs below: torch resamples in float, PIL in fixed point, and a value near a half
rounds the other way (at 224 px at most 0.14% of a render's values with bicubic, 0.81%
with bilinear)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")
open_clip = pytest.importorskip("open_clip")

from open_clip.transform import PreprocessCfg, image_transform_v2  # noqa: E402
from PIL import Image  # noqa: E402

from svgloo.engine.errors import ConfigError  # noqa: E402
from svgloo.engine.protocols import Reference  # noqa: E402
from svgloo.engine.rendering.render import over_white, render_rgba  # noqa: E402
from svgloo.plugins.clip_backbone import ClipBackbone  # noqa: E402
from svgloo.plugins.clip_preprocess import device_steps_of  # noqa: E402

RENDERS = ["noto/emoji_u1f458.svg", "logos/dojo.svg", "twemoji/1f477.svg",
           "fontawesome/truck-field.svg"]
SIDE = 384


def _adversarial() -> dict[str, np.ndarray]:
    yy, xx = np.mgrid[:SIDE, :SIDE]
    checker = np.repeat((((yy + xx) % 2) * 255).astype(np.uint8)[..., None], 3, axis=-1)
    edges = np.zeros((SIDE, SIDE, 3), np.uint8)
    edges[:, SIDE // 2:] = 255
    edges[100] = (255, 0, 0)  # a 1-px red line across a black/white edge
    noise = np.random.default_rng(0).integers(0, 256, (300, 500, 3), dtype=np.uint8)
    return {"1-px checkerboard": checker, "hard edges": edges, "noise 300x500": noise}


@pytest.fixture(scope="module")
def renders(corpus_dir):
    return {name: over_white(render_rgba((corpus_dir / name).read_bytes(), SIDE))
            for name in RENDERS}


def _host(transform, images) -> torch.Tensor:
    return torch.stack([transform(Image.fromarray(im)) for im in images])


def _device(transform, images) -> torch.Tensor:
    steps, why_not = device_steps_of(transform)
    assert steps is not None, why_not
    return steps(torch.from_numpy(np.stack(images)), torch.float32)


def _levels_off(transform, host, device) -> torch.Tensor:
    """|host - device| in 8-bit levels of the resized image (Normalize undone)."""
    std = torch.tensor(transform.transforms[-1].std).view(1, 3, 1, 1)
    return ((host - device).abs() * std * 255).round()


@pytest.mark.parametrize("size, interpolation", [(224, "bicubic"), (32, "bicubic"),
                                                 (224, "bilinear")])
def test_device_input_is_the_pil_input_within_one_level(renders, size, interpolation):
    transform = image_transform_v2(PreprocessCfg(size=(size, size),
                                                 interpolation=interpolation), is_train=False)
    for name, image in {**renders, **_adversarial()}.items():
        host, device = _host(transform, [image]), _device(transform, [image])
        assert device.shape == host.shape == (1, 3, size, size), name
        off = _levels_off(transform, host, device)
        assert off.max() <= 1, (name, float(off.max()))
        if name in renders and size == 224:
            assert float((off > 0).float().mean()) < 0.01, name  # measured <= 0.81%


def test_mean_std_and_crop_are_the_transforms_own():
    """Another model's numbers (mean, std, a non-square crop-needing image) are read from
    its transform: with ViT-B-32's numbers written in, the inputs would differ by far
    more than a level."""
    cfg = PreprocessCfg(size=(48, 48), mean=(0.1, 0.5, 0.9), std=(0.2, 0.3, 0.4))
    transform = image_transform_v2(cfg, is_train=False)
    steps, _ = device_steps_of(transform)
    assert steps is not None and steps.mean == cfg.mean and steps.std == cfg.std
    tall = np.zeros((200, 120, 3), np.uint8)
    tall[:40] = 255      # white top and blue bottom bands: cut away by the centre crop
    tall[-40:] = (0, 0, 255)
    tall[40:-40, :, 1] = np.linspace(0, 255, 120).astype(np.uint8)[None, :]
    host, device = _host(transform, [tall]), _device(transform, [tall])
    assert device.shape == host.shape == (1, 3, 48, 48)
    assert _levels_off(transform, host, device).max() <= 1


def test_transforms_not_reproduced_are_refused_with_the_reason():
    longest = image_transform_v2(PreprocessCfg(size=(32, 32), resize_mode="longest"),
                                 is_train=False)
    steps, why_not = device_steps_of(longest)
    assert steps is None and "ResizeKeepRatio" in why_not
    from torchvision import transforms as T

    nearest = T.Compose([T.Resize(32, T.InterpolationMode.NEAREST), T.CenterCrop(32),
                         T.ToTensor(), T.Normalize((0.5,) * 3, (0.5,) * 3)])
    steps, why_not = device_steps_of(nearest)
    assert steps is None and "nearest" in why_not


@pytest.fixture(scope="module")
def host_and_device(tiny_clip_files):
    cfg, ckpt = tiny_clip_files
    return (ClipBackbone(device="cpu", weights=ckpt, model_name=cfg),
            ClipBackbone(device="cpu", weights=ckpt, model_name=cfg, preprocess="device"))


def test_auto_on_the_cpu_is_the_host_path(host_and_device):
    host, device = host_and_device
    assert host.preprocess_on == "host" and "preprocessing" not in host.description
    assert device.preprocess_on == "device"
    assert device.description.endswith("(cpu, preprocessing on the device)")


def test_backbone_inputs_embeddings_and_cosines_track_the_host_path(host_and_device, renders):
    host, device = host_and_device
    images = np.stack(list(renders.values()))
    levels = _levels_off(host.preprocess, host._pixels(list(images)),
                         device._pixels(list(images)))
    assert levels.max() <= 1
    np.testing.assert_allclose(device.embed_images(images), host.embed_images(images),
                               atol=1e-4)
    ref = host.prepare(Reference("image", "test", image=images[0]))
    np.testing.assert_allclose(device.similarity(images, ref), host.similarity(images, ref),
                               atol=1e-4)
    # images of several sizes in one call: each made at its own size, in its place
    mixed = [images[0], _adversarial()["noise 300x500"], images[1]]
    np.testing.assert_allclose(device.embed_images(mixed), host.embed_images(mixed),
                               atol=1e-4)


def test_a_transform_it_cannot_reproduce_keeps_the_host_path_and_says_so(tiny_clip_files):
    cfg, ckpt = tiny_clip_files
    backbone = ClipBackbone(device="cpu", weights=ckpt, model_name=cfg, preprocess="host")
    backbone.preprocess = image_transform_v2(PreprocessCfg(size=(32, 32),
                                                           resize_mode="longest"),
                                             is_train=False)
    steps, note = backbone._choose_preprocess("device")
    assert steps is None and note.startswith(", preprocessing on the host: ")
    with pytest.raises(ConfigError, match="unknown CLIP preprocessing"):
        ClipBackbone(device="cpu", weights=ckpt, model_name=cfg, preprocess="gpu")
