"""Small helpers shared by the torch plugins (clip, clipseg, vlm).

Nothing here imports torch at module level: the base install (no torch) must still be able
to import the plugin modules to list their entry points.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from svgloo.engine.errors import ConfigError


def require(module: str, extra: str) -> Any:
    """Import ``module`` or raise a ConfigError naming the pip extra that provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(None, f"{module} is not installed ({e}); install it with "
                                f"`pip install \".[{extra}]\"` in your svgloo checkout") from None


def pick_device(device: str | None = None, extra: str = "clip") -> str:
    """``device`` if given, else "cuda" when torch sees a GPU, else "cpu"."""
    torch = require("torch", extra)
    if device:
        dev = str(device)
        if dev.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(None, f"device {dev!r} requested but torch sees no CUDA GPU")
        return dev
    return "cuda" if torch.cuda.is_available() else "cpu"


def as_rgb_uint8(image: Any, what: str = "image") -> np.ndarray:
    """An (H, W, 3) uint8 array from RGB/RGBA/grey arrays (alpha is dropped)."""
    a = np.asarray(image)
    if a.ndim == 2:
        a = np.stack([a] * 3, axis=-1)
    if a.ndim != 3 or a.shape[2] not in (3, 4) or a.shape[0] == 0 or a.shape[1] == 0:
        raise ConfigError(None, f"{what} must be an (H, W, 3) RGB array, got shape {a.shape}")
    a = a[..., :3]
    if a.dtype != np.uint8:
        if np.issubdtype(a.dtype, np.floating) and a.size and float(np.nanmax(a)) <= 1.0:
            a = a * 255.0
        a = np.clip(np.nan_to_num(a), 0, 255).round().astype(np.uint8)
    return np.ascontiguousarray(a)


def hf_weights_available(model_id: str, filenames: tuple[str, ...] = ("config.json",)) -> bool:
    """True when ``model_id`` is a local directory holding ``filenames``, or the Hugging Face
    cache already holds them. Never downloads."""
    if not model_id:
        return False
    if os.path.isdir(model_id):
        return all(os.path.isfile(os.path.join(model_id, f)) for f in filenames)
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    for f in filenames:
        try:
            hit = try_to_load_from_cache(repo_id=model_id, filename=f)
        except Exception:  # malformed repo id, unreadable cache
            return False
        if not isinstance(hit, str) or not os.path.isfile(hit):
            return False
    return True


def hf_weight_files_cached(model_id: str) -> bool:
    """True when a local dir / cached repo has a config and at least one weights file."""
    if not hf_weights_available(model_id, ("config.json",)):
        return False
    candidates = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                  "pytorch_model.bin.index.json")
    return any(hf_weights_available(model_id, (c,)) for c in candidates)
