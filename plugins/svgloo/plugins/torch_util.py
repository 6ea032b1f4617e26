"""Small helpers shared by the torch plugins (clip, clipseg, vlm).

Nothing here imports torch at module level: the base install (no torch) must still be able
to import the plugin modules to list their entry points.
"""

from __future__ import annotations

import os
import stat
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
        except Exception:  # noqa: BLE001 - malformed repo id, unreadable cache
            return False
        if not isinstance(hit, str) or not os.path.isfile(hit):
            return False
    return True


def cached_model_folder(model_id: str) -> str | None:
    """The folder ``from_pretrained(model_id)`` will read: the directory itself, or the
    hub cache's snapshot holding its config.json (None when neither is there)."""
    if os.path.isdir(model_id):
        return model_id
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(repo_id=model_id, filename="config.json")
    except Exception:  # noqa: BLE001 - no huggingface_hub, malformed repo id, unreadable cache
        return None
    return os.path.dirname(hit) if isinstance(hit, str) else None


def check_model_folder(model_id: str) -> None:
    """Refuse a model folder holding anything but regular files before a library reads
    it: transformers would block forever on a FIFO named config.json, or read a link to
    /dev/zero until memory runs out. Links are followed (the hub cache's snapshots are
    links into its blobs/); only what they lead to is checked."""
    folder = cached_model_folder(model_id)
    if folder is None:
        return
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            path = os.path.join(root, name)
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue  # a dangling link: the library names the missing file
            if not stat.S_ISREG(mode):
                raise ConfigError(path, "not a regular file (a device, pipe or socket) in a "
                                        "model folder; the model is not loaded")


def model_source(weights: str | os.PathLike | None, model_id: str, what: str) -> str:
    """Where a transformers model loads from: the ``weights`` folder when given (it must
    exist), else the hub id ``model_id``; checked by ``check_model_folder`` either way."""
    source = os.fspath(weights) if weights else model_id
    if weights and not os.path.isdir(source):
        raise ConfigError(None, f"{what} weights directory not found: {source}")
    check_model_folder(source)
    return source


def hf_weight_files_cached(model_id: str) -> bool:
    """True when a local dir / cached repo has a config and at least one weights file."""
    if not hf_weights_available(model_id, ("config.json",)):
        return False
    candidates = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                  "pytorch_model.bin.index.json")
    return any(hf_weights_available(model_id, (c,)) for c in candidates)


# -- downloads (``svgloo models pull``) ---------------------------------------------------
# Files go into the libraries' standard cache (the Hugging Face hub cache, $HF_HOME or
# ~/.cache/huggingface), where the plugins' weights_available checks and from_pretrained /
# open_clip look. ``endpoint`` is the hub or a mirror of it (default: $HF_ENDPOINT, else
# huggingface.co); huggingface_hub draws the progress bars.

# What a transformers checkpoint needs besides its weights: configs, tokenizer and
# processor files. Other frameworks' weights (TF, Flax, ONNX) are left out.
_SUPPORT_PATTERNS = ("*.json", "*.txt", "*.model", "*.jinja", "*.tiktoken")


def _download_error(repo_id: str, endpoint: str | None, exc: Exception) -> ConfigError:
    where = endpoint or os.environ.get("HF_ENDPOINT") or "the Hugging Face hub"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ConfigError(repo_id, f"cannot download from {where}: {first}")


def hf_pull_file(repo_id: str, filenames: tuple[str, ...], endpoint: str | None = None) -> str:
    """Download the first of ``filenames`` that the repo has into the hub cache; returns
    its cached path. Tries the next name only when the hub says a file does not exist."""
    hub = require("huggingface_hub", "clip")
    from huggingface_hub import errors

    # "No such file" from the hub itself; LocalEntryNotFoundError (offline, unreachable)
    # is also an EntryNotFoundError, so it is caught first.
    not_there = getattr(errors, "RemoteEntryNotFoundError", errors.EntryNotFoundError)
    missing = []
    for name in filenames:
        try:
            return hub.hf_hub_download(repo_id=repo_id, filename=name, endpoint=endpoint)
        except errors.LocalEntryNotFoundError as exc:
            raise _download_error(repo_id, endpoint, exc) from None
        except not_there:
            missing.append(name)
        except Exception as exc:  # noqa: BLE001 - network, HTTP and cache errors: one line for the user
            raise _download_error(repo_id, endpoint, exc) from None
    raise ConfigError(repo_id, f"the repository has none of {', '.join(missing)}")


def weight_patterns(files: list[str]) -> list[str]:
    """The files of a transformers repo worth fetching: safetensors weights when there are
    any (else PyTorch .bin), with their index, plus the support files."""
    safe = [f for f in files if f.endswith((".safetensors", ".safetensors.index.json"))]
    weights = safe or [f for f in files if f.endswith((".bin", ".bin.index.json"))]
    return sorted(set(weights)) + list(_SUPPORT_PATTERNS)


def hf_pull_repo(repo_id: str, endpoint: str | None = None) -> str:
    """Download a transformers model repo (weight_patterns) into the hub cache; returns the
    snapshot folder."""
    hub = require("huggingface_hub", "vlm")
    try:
        files = hub.HfApi(endpoint=endpoint).list_repo_files(repo_id)
        patterns = weight_patterns(files)
        if not any(not p.startswith("*") for p in patterns):
            raise ConfigError(repo_id, "the repository has no .safetensors or .bin weights")
        return hub.snapshot_download(repo_id=repo_id, allow_patterns=patterns,
                                     endpoint=endpoint)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - network, HTTP and cache errors: one line for the user
        raise _download_error(repo_id, endpoint, exc) from None


def hf_cache_dir() -> str:
    """Where the hub cache lives (for messages)."""
    try:
        from huggingface_hub import constants
    except ImportError:
        return os.path.join(os.path.expanduser("~"), ".cache", "huggingface", "hub")
    return str(constants.HF_HUB_CACHE)
